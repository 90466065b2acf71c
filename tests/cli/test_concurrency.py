"""Runs that race for one version, or share one work dir: exactly one publishes; the other
says `unchanged` (exit 0) when it built the same bytes, or one line naming the conflict
(exit 3); never a traceback.

The first tests check the publishing primitives in-process (fast); the slow ones race real
`mmedbench build` and `mmedbench add-language` processes on the sample.
"""
from __future__ import annotations

import multiprocessing
import os
import re
import time
from pathlib import Path

import pytest

from tasks.release.stage import _remove_stale, _version_lock
from tests.conftest import ROOT, SAMPLE_CONFIG
from tests.cli.test_interrupts import cli, finish, tree


def _hold_lock(root: str, version: str, ready, seconds: float) -> None:
    with _version_lock(Path(root), version):
        ready.set()
        time.sleep(seconds)
        (Path(root) / "first-done").write_text(str(time.monotonic()))


def test_the_version_lock_makes_runs_take_turns(tmp_path):
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    other = ctx.Process(target=_hold_lock, args=(str(tmp_path), "0.1.0", ready, 1.0))
    other.start()
    assert ready.wait(30)
    with _version_lock(tmp_path, "0.1.0") as locked:
        got = time.monotonic()
        assert locked and (tmp_path / "first-done").exists()  # we got in only after the other was done
        assert float((tmp_path / "first-done").read_text()) <= got
    other.join(30)
    assert not (tmp_path / ".0.1.0.lock").exists()  # removed by its last holder
    with _version_lock(tmp_path, "0.2.0"):  # other versions are not held up
        pass


def _die_holding(root: str) -> None:
    with _version_lock(Path(root), "0.1.0"):
        os._exit(9)  # killed while holding it: no cleanup runs


def test_a_lock_left_by_a_killed_run_does_not_block(tmp_path):
    proc = multiprocessing.get_context("fork").Process(target=_die_holding, args=(str(tmp_path),))
    proc.start()
    proc.join(30)
    assert proc.exitcode == 9 and (tmp_path / ".0.1.0.lock").exists()
    with _version_lock(tmp_path, "0.1.0") as locked:
        assert locked
    assert not (tmp_path / ".0.1.0.lock").exists()


def test_build_folders_of_killed_runs_are_removed_under_the_lock(tmp_path):
    for name in (".tmp-0.1.0-123", ".tmp-0.1.0-456", ".tmp-0.1.00-7", ".tmp-0.2.0-123", "0.1.0"):
        (tmp_path / name).mkdir()
    _remove_stale(tmp_path, "0.1.0", locked=False)  # without a lock, only this process' own name
    assert (tmp_path / ".tmp-0.1.0-123").exists()
    (tmp_path / f".tmp-0.1.0-{os.getpid()}").mkdir()
    _remove_stale(tmp_path, "0.1.0", locked=False)
    assert not (tmp_path / f".tmp-0.1.0-{os.getpid()}").exists()
    _remove_stale(tmp_path, "0.1.0", locked=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tmp-0.1.00-7", ".tmp-0.2.0-123", "0.1.0"]


# ------------------------------------------------------------------------------------ real runs


def _race(*commands: tuple[str, ...]) -> list[tuple[int, str, str]]:
    procs = []
    for args in commands:
        procs.append(cli(*args))
        time.sleep(0.5)
    return [finish(p) for p in procs]


def _status(out: str) -> str:
    """'written' or 'unchanged', from the summary line `release <path> <status>...`."""
    return re.match(r"release \S+ (written|unchanged)\b", out).group(1)


def _clean(results) -> None:
    for rc, out, err in results:
        assert "Traceback" not in out + err, err[-3000:]
        if rc != 0:
            errors = [l for l in err.splitlines() if l.startswith("error: ")]
            assert len(errors) == 1, err


@pytest.fixture(scope="module")
def raced(tmp_path_factory):
    """Two builds of the sample's 0.1.0 at once, one release dir, one work dir."""
    root = tmp_path_factory.mktemp("race")
    args = ("build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(root / "releases"), "--work-dir", str(root / "work"))
    return root, _race(args, args)


@pytest.mark.slow
def test_two_builds_of_one_version_publish_once(raced, sample_build):
    root, results = raced
    _clean(results)
    assert [rc for rc, _, _ in results] == [0, 0]
    assert sorted(_status(out) for _, out, _ in results) == ["unchanged", "written"]
    assert sorted(p.name for p in (root / "releases").iterdir()) == ["0.1.0"]
    assert tree(root / "releases" / "0.1.0") == tree(sample_build["release"])


@pytest.mark.slow
def test_a_different_build_of_the_same_version_is_a_conflict(raced, tmp_path):
    root, _ = raced
    text = SAMPLE_CONFIG.read_text().replace('"../', f'"{ROOT}/').replace('registry = "languages.toml"', f'registry = "{ROOT}/configs/languages.toml"')
    other = tmp_path / "other-seed.toml"
    other.write_text(text.replace("seed = 20261122", "seed = 7"))
    common = ("--version", "0.9.0", "--release-dir", str(tmp_path / "releases"), "--work-dir", str(root / "work"))
    results = _race(("build", "--config", str(SAMPLE_CONFIG), *common), ("build", "--config", str(other), *common))
    _clean(results)
    codes = sorted(rc for rc, _, _ in results)
    assert codes == [0, 3], results
    loser = next(err for rc, _, err in results if rc == 3)
    # the sample's build is cached and may publish before the other run has started: the loser
    # then refuses up front instead of at publishing; a conflict either way, never two releases
    release = tmp_path / "releases" / "0.9.0"
    assert loser.splitlines()[-1] in (
        f"error: {release}: another run published a different release with this version while this one was building; "
        "nothing was overwritten (use --version)",
        f"error: {release}: a different release with this version exists; releases are never overwritten (use --version)"), loser
    assert sorted(p.name for p in (tmp_path / "releases").iterdir()) == ["0.9.0"]


@pytest.mark.slow
def test_two_add_language_runs_of_one_version_publish_once(raced, tmp_path):
    from tests.flows.test_add_language import german_config

    root, _ = raced
    cfg = german_config(tmp_path)
    args = ("add-language", str(root / "releases" / "0.1.0"), "--config", str(cfg), "--release-dir", str(tmp_path / "releases"),
            "--work-dir", str(root / "work"))
    results = _race(args, args)
    _clean(results)
    assert [rc for rc, _, _ in results] == [0, 0]
    assert sorted(_status(out) for _, out, _ in results) == ["unchanged", "written"]
    assert sorted(p.name for p in (tmp_path / "releases").iterdir()) == ["0.2.0"]


def _full_build_of(cfg: Path, version: str, releases: Path, work: Path) -> tuple[str, ...]:
    return ("build", "--config", str(cfg), "--version", version, "--release-dir", str(releases), "--work-dir", str(work))


@pytest.mark.slow
def test_an_add_language_and_a_full_build_of_its_version_are_a_conflict_in_either_order(raced, tmp_path):
    """Issue 41: the same config adding German to 0.1.0, or building all seven languages
    from scratch, gives other bytes (other cells, a `changes` block): whichever publishes
    0.2.0 second is the conflict, exit 3, never "unchanged"; sequentially, refused before
    any stage runs."""
    from tests.flows.test_add_language import german_config

    root, _ = raced
    cfg = german_config(tmp_path)
    add = ("add-language", str(root / "releases" / "0.1.0"), "--config", str(cfg), "--release-dir", str(tmp_path / "releases"),
           "--work-dir", str(root / "work"))
    full = _full_build_of(cfg, "0.2.0", tmp_path / "releases", root / "work")
    results = _race(add, full)
    _clean(results)
    assert sorted(rc for rc, _, _ in results) == [0, 3], results
    loser = next(err for rc, _, err in results if rc == 3)
    assert ("another run published a different release with this version" in loser
            or "a different release with this version exists" in loser), loser
    published = tree(tmp_path / "releases" / "0.2.0")
    # sequentially, after either: the published one's command finds it "unchanged", the
    # other's is refused (exit 3) before any stage runs; the release is untouched
    again = [finish(cli(*args)) for args in (add, full)]
    _clean(again)
    assert sorted(rc for rc, _, _ in again) == [0, 3], again
    assert [_status(out) for rc, out, _ in again if rc == 0] == ["unchanged"]
    assert [l for rc, _, err in again if rc == 3 for l in err.splitlines()] == [
        f"error: {tmp_path}/releases/0.2.0: a different release with this version exists; releases are never "
        "overwritten (use --version)"]
    assert tree(tmp_path / "releases" / "0.2.0") == published
