"""A full disk and a read-only folder, made real (issue 41): a tmpfs the test mounts (root
only; skipped with the reason elsewhere), filled at different points of a build. Each run
ends in one line, exit 2, nothing half-written that the next run trusts; once there is room
the same command completes the build, byte-identical to a clean one. And each cache entry a
full disk can cut short (a QuickUMLS index, a Prefect result record) is detected and rebuilt.
"""
from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from common.errors import EXIT_INPUT, InputError
from tests.conftest import ROOT, SAMPLE_CONFIG
from tests.small_fs import _run, remount_read_only, small_fs


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- the QuickUMLS index
@pytest.fixture(scope="module")
def fr_atoms(tmp_path_factory):
    """The sample's vocabulary as the build makes it: (French atoms, the French language)."""
    from schemas.config import load_config
    from umls.configured import build_configured_vocabulary

    out = tmp_path_factory.mktemp("index-vocab")
    loaded = load_config(SAMPLE_CONFIG)
    cfg = loaded.config
    vocab = build_configured_vocabulary(cfg.vocabulary.format, loaded.resolve(cfg.vocabulary.path), out / "vocab",
                                        {l.umls_lat: l.code for l in loaded.languages}, cfg.vocabulary.max_srl,
                                        loaded.registry["en"].preferred_sources, cfg.vocabulary.roots)
    return Path(vocab["atoms_by_lang"]["fr"]), loaded.registry["fr"]


@pytest.mark.parametrize("cut", ["master", "cdb", "unqlite", "record"])
def test_an_index_cut_short_is_detected_and_built_again(fr_atoms, tmp_path, cut):
    """A copy of the work dir made while the disk was full (or a file cut short since):
    its index fails its check, is removed and built again, the same bytes as before."""
    from tasks.grounding import quickumls_index as qi

    atoms, lang = fr_atoms
    dest = qi.quickumls_index(atoms, lang, tmp_path)
    clean = _tree(dest)
    assert qi.index_problem(dest) is None
    victim = {"master": dest / qi.SIMSTRING / qi.MASTER,
              "cdb": sorted((dest / qi.SIMSTRING).glob("*.cdb"), key=lambda p: p.stat().st_size)[-1],
              "unqlite": next((dest / "cui-semtypes.db").rglob("cui*")),
              "record": dest / qi.RECORD}[cut]
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    problem = qi.index_problem(dest)
    assert problem is not None and problem.startswith(victim.relative_to(dest).as_posix()), problem
    assert not qi.index_built(atoms, lang, tmp_path)
    assert qi.quickumls_index(atoms, lang, tmp_path) == dest
    assert qi.index_problem(dest) is None
    # unqlite's files differ from build to build (the grounder's answers do not); simstring's are the same bytes
    assert {n: h for n, h in _tree(dest).items() if "unqlite" not in n} == {n: h for n, h in clean.items() if "unqlite" not in n}


def test_an_index_from_before_the_record_is_checked_whole_once(fr_atoms, tmp_path):
    """The issue's work dir: an index main published while the disk was full, its concepts'
    unqlite database empty (the transaction never committed). Without `files.json` it is
    read whole; a sound one gets its record, a broken one is built again."""
    from tasks.grounding import quickumls_index as qi

    atoms, lang = fr_atoms
    dest = qi.quickumls_index(atoms, lang, tmp_path)
    (dest / qi.RECORD).unlink()
    assert qi.index_problem(dest) is None and (dest / qi.RECORD).is_file()  # sound: recorded now
    (dest / qi.RECORD).unlink()
    (dest / qi.CUISTY / "semtypes.unqlite").write_bytes(b"")
    assert qi.index_problem(dest).startswith("cui-semtypes.db/semtypes.unqlite: holds no key, ")
    qi.quickumls_index(atoms, lang, tmp_path)
    assert qi.index_problem(dest) is None and (dest / qi.RECORD).is_file()
    (dest / qi.RECORD).unlink()
    (dest / qi.CUISTY / "semtypes.unqlite_unqlite_journal").write_bytes(b"\0" * 512)  # what the index held
    assert qi.index_problem(dest) == "cui-semtypes.db/semtypes.unqlite_unqlite_journal: a write that never completed"


def test_an_index_without_room_is_a_full_disk_before_the_writer_runs(fr_atoms, tmp_path):
    """simstring's C++ writer aborts the process (exit 134) when the disk fills under it: the
    room is checked first, and the error is the full disk's, nothing left behind."""
    from tasks.grounding import quickumls_index as qi

    atoms, lang = fr_atoms
    with small_fs(tmp_path / "small", "1m"):
        with pytest.raises(OSError) as exc:
            qi.quickumls_index(atoms, lang, tmp_path / "small")
        assert exc.value.errno == errno.ENOSPC and "the index needs about" in exc.value.strerror
        left = [p.name for p in (tmp_path / "small" / "quickumls").iterdir()]
        assert [n for n in left if not n.endswith(".lock")] == []  # no half-written index


def test_a_written_index_whose_headers_disagree_is_refused(fr_atoms, tmp_path, monkeypatch):
    """The C++ writer does not say when a write failed: the headers are read back before the
    index is recorded (a full disk: ENOSPC; otherwise a bug, never a cache entry)."""
    from tasks.grounding import quickumls_index as qi

    atoms, lang = fr_atoms
    real = qi.write_index

    def cut_short(entries, simstring_dir, cuisty_dir):
        real(entries, simstring_dir, cuisty_dir)
        master = simstring_dir / qi.MASTER
        master.write_bytes(master.read_bytes()[:-100])

    monkeypatch.setattr(qi, "write_index", cut_short)
    with pytest.raises(RuntimeError, match="umls-terms.simstring: cut short"):
        qi.quickumls_index(atoms, lang, tmp_path)
    monkeypatch.setattr(qi, "_room_for", lambda *_a: None)  # room when checked ...
    monkeypatch.setattr(qi.shutil, "disk_usage", lambda _p: type("Usage", (), {"free": 0})())  # ... none after the write
    with pytest.raises(OSError) as exc:
        qi.quickumls_index(atoms, lang, tmp_path)
    assert exc.value.errno == errno.ENOSPC and "the index was cut short" in exc.value.strerror
    assert [p.name for p in (tmp_path / "quickumls").iterdir() if not p.name.endswith(".lock")] == []


def test_a_written_index_missing_unqlite_keys_is_refused(fr_atoms, tmp_path, monkeypatch):
    """unqlite does not say when its transaction failed: the keys are counted back."""
    from tasks.grounding import quickumls_index as qi

    atoms, lang = fr_atoms
    real = qi.write_index
    monkeypatch.setattr(qi, "write_index", lambda *a: {k: n + 1 for k, n in real(*a).items()})
    with pytest.raises(RuntimeError, match=r"cui-semtypes.db: holds \d+ term and \d+ concept keys, written"):
        qi.quickumls_index(atoms, lang, tmp_path)
    assert not qi.index_built(atoms, lang, tmp_path)


# ----------------------------------------------------------------------------- Prefect's result records
def test_a_result_record_cut_short_is_removed_before_the_task_looks_it_up(tmp_path):
    from prefect.filesystems import LocalFileSystem
    from prefect.results import ResultStore

    from flows.caching import drop_unreadable_record

    store = ResultStore(result_storage=LocalFileSystem(basepath=str(tmp_path)))
    store.write(key="k", obj={"atoms": "/w/atoms.parquet"})
    assert drop_unreadable_record(store, "k") is False and (tmp_path / "k").is_file()  # readable: kept
    raw = (tmp_path / "k").read_bytes()
    (tmp_path / "k").write_bytes(raw[: len(raw) // 2])
    fresh = ResultStore(result_storage=LocalFileSystem(basepath=str(tmp_path)))
    assert drop_unreadable_record(fresh, "k") is True and not (tmp_path / "k").exists()
    assert drop_unreadable_record(fresh, "k") is False  # nothing there


# ----------------------------------------------------------------------------- a release on a full disk
@pytest.mark.slow
def test_a_release_folder_filling_at_any_point_then_the_same_build_with_room(sample_build, tmp_path):
    """The release folder on a tmpfs too small for it, filled at several points of writing
    (cells, split files, pictures, card, reports, publish): one line, exit 2, nothing in the
    folder; with room, the same build publishes the clean build's bytes."""
    from flows.build_release import build_release_flow

    clean = _tree(sample_build["release"])
    work = str(sample_build["base"] / "work")  # every stage cached: only the release is written
    mnt = tmp_path / "mnt"
    with small_fs(mnt, "64k"):
        for size in ("64k", "600k", "1200k", "1800k"):
            _run("mount", "-o", f"remount,size={size}", str(mnt))
            result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(mnt / "releases"), work_dir=work)
            assert isinstance(result, InputError) and result.exit_code == EXIT_INPUT, (size, result)
            assert "disk full (No space left on device) while writing release 0.1.0 (nothing was published)" in str(result)
            assert "\n" not in str(result)
            assert sorted(p.name for p in (mnt / "releases").iterdir()) == [], size  # no release, no .tmp-*, no lock
            assert str(result).startswith(f"{mnt}/releases"), str(result)  # the folder (pyarrow's errors name no file)
        _run("mount", "-o", "remount,size=64m", str(mnt))
        result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(mnt / "releases"), work_dir=work)
        assert isinstance(result, dict) and result["status"] == "written", result
        assert _tree(mnt / "releases" / "0.1.0") == clean


@pytest.mark.slow
def test_a_read_only_release_folder_mid_build_is_one_line(sample_build, tmp_path):
    """Writable when checked, read-only by the time the release is written (remounted)."""
    from flows.build_release import build_release_flow

    mnt = tmp_path / "mnt"
    with small_fs(mnt, "16m"):
        (mnt / "releases").mkdir()
        remount_read_only(mnt)
        result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(mnt / "releases"),
                                    work_dir=str(sample_build["base"] / "work"))
        assert isinstance(result, InputError) and result.exit_code == EXIT_INPUT, result
        assert str(result) == (f"{mnt}/releases/.0.1.0.lock: read-only file system while writing release 0.1.0 (nothing "
                               "was published); make the folder writable or choose another one, and run the same command again")


# ----------------------------------------------------------------------------- the command, end to end
DRIVER = """
import sys
import common.outputs as o
o.WORK_MIN_FREE = o.RELEASE_MIN_FREE = 0  # the floors would refuse this disk up front; fill it mid-build
from mmedbench.cli import main
sys.argv = ["mmedbench"] + sys.argv[1:]
main()
"""


def _ours(marker: str) -> list:
    """Processes still running whose command line or environment names `marker` (the work dir)."""
    import psutil

    left = []
    for p in psutil.process_iter(["cmdline", "environ"]):
        try:
            if p.pid != os.getpid() and (marker in " ".join(p.info["cmdline"] or []) or
                                         any(marker in v for v in (p.info["environ"] or {}).values())):
                left.append(p)
        except psutil.Error:
            continue
    return left


def _mmedbench(*args: str, driver: bool = False) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", DRIVER] if driver else [sys.executable, "-m", "mmedbench.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return subprocess.run(command + list(args), cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=900)


@pytest.mark.slow
def test_a_work_dir_filling_mid_build_then_the_same_command_with_room(sample_build, tmp_path):
    """The issue's probe: the work dir on a small tmpfs. One `error:` line naming the folder,
    exit 2, no traceback, no process left (Prefect's server included); then the same command,
    with room, completes from what was left, byte-identical to a clean build."""
    mnt = tmp_path / "mnt"
    releases = tmp_path / "releases"
    args = ("build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(releases), "--work-dir", str(mnt / "work"), "-q")
    with small_fs(mnt, "5m"):
        r = _mmedbench(*args, driver=True)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr + r.stdout
        errors = [l for l in r.stderr.splitlines() if l.startswith("error: ")]
        assert len(errors) == 1 and f"error: {mnt}/work/" in errors[0] and "disk full (No space left on device)" in errors[0], r.stderr
        assert _ours(str(mnt)) == []
        assert not releases.exists() or list(releases.iterdir()) == []
        _run("mount", "-o", "remount,size=64m", str(mnt))
        r = _mmedbench(*args)
        assert r.returncode == 0, r.stdout + r.stderr
        assert _tree(releases / "0.1.0") == _tree(sample_build["release"])
        assert _ours(str(mnt)) == []


def test_the_command_refuses_a_small_or_read_only_work_dir_before_prefect_starts(tmp_path):
    mnt = tmp_path / "mnt"
    args = ("build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(tmp_path / "releases"), "--work-dir", str(mnt / "w"))
    with small_fs(mnt, "5m"):
        r = _mmedbench(*args)
        assert (r.returncode, r.stderr.strip()) == (2, f"error: {mnt}/w: field '--work-dir': disk full: 5.0 MB free on its file "
                                                       "system, at least 32.0 MB needed; free some space or choose another folder")
        remount_read_only(mnt)
        r = _mmedbench(*args)
        assert (r.returncode, r.stderr.strip()) == (2, f"error: {mnt}/w: field '--work-dir': cannot be written ({mnt}, where it "
                                                       "would be made): Read-only file system")
        assert _ours(str(mnt)) == []


def test_the_prefect_server_dies_with_a_command_killed_outright(tmp_path):
    """A C++ abort (simstring's writer on a full disk: exit 134) or SIGKILL runs no exit call:
    the server the command started goes with it all the same (PR_SET_PDEATHSIG)."""
    import time

    import psutil

    proc = subprocess.Popen([sys.executable, "-m", "mmedbench.cli", "build", "--config", str(SAMPLE_CONFIG), "--release-dir",
                             str(tmp_path / "releases"), "--work-dir", str(tmp_path / "work"), "-q"], cwd=ROOT,
                            env={**{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    server = []
    while not server and time.monotonic() < deadline and proc.poll() is None:
        server = [c for c in psutil.Process(proc.pid).children() if "uvicorn" in " ".join(c.cmdline())]
        time.sleep(0.2)
    assert server, "the command started no server"
    proc.kill()
    proc.wait(30)
    _gone, alive = psutil.wait_procs(server, timeout=10)
    for p in alive:
        p.kill()
    assert alive == []


@pytest.mark.slow
def test_evaluate_on_a_full_disk_names_its_results_folder(release_copy, tmp_path):
    from typer.testing import CliRunner

    from mmedbench.cli import app

    mnt = tmp_path / "mnt"
    with small_fs(mnt, "300k"):
        r = CliRunner().invoke(app, ["evaluate", str(release_copy), "-r", "bm25", "--out", str(mnt / "out"), "-q"])
        assert r.exit_code == 2, r.output
        assert [l for l in r.output.splitlines() if l.startswith("error: ")] == [
            f"error: {mnt}/out: disk full (No space left on device) while writing results (nothing in {mnt}/out changed); "
            "free some space and run the same command again"]
        assert list(mnt.iterdir()) == []  # no build folder, no lock
        _run("mount", "-o", "remount,size=16m", str(mnt))
        r = CliRunner().invoke(app, ["evaluate", str(release_copy), "-r", "bm25", "--out", str(mnt / "out"), "-q"])
        assert r.exit_code == 0 and (mnt / "out" / "results.json").is_file(), r.output
