"""A build killed (SIGKILL) while grounding, while allocating and while writing the release:
the rerun publishes byte-identical output, leaves no `.tmp-*` folder, and never trusts a
partial cache file (a half-written parquet is detected and recomputed).

Ctrl-C (SIGINT to the process group, as a terminal sends it) and SIGTERM (to the command's
process, as `kill` sends it) of build, add-language and evaluate: exit 130 / 143 within
seconds, one line on stderr, no process of the command's session left (Prefect's server,
grounding's workers), no build folder, and the rerun gives the same bytes
(common/interrupts.py).

The real CLI runs in a subprocess on the sample config. `MMEDBENCH_HOLD=<point>`
(common/testhooks.py) makes it announce the point and wait there to be killed: after a
stage wrote its outputs but before they were marked complete, and after the release's
cells were written but before anything was published. Nothing else changes.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT, SAMPLE_CONFIG, warm_env
from tests.prefect_server import without_run_server

pytestmark = pytest.mark.slow


def cli(*args: str, env: dict | None = None, umask: int | None = None, own_server: bool = False, **kw) -> subprocess.Popen:
    """`mmedbench` in its own session (so a kill takes Prefect's server with it); with
    `own_server`, it starts Prefect's server itself rather than use the test run's."""
    base = without_run_server(dict(os.environ)) if own_server else os.environ
    return subprocess.Popen([sys.executable, "-m", "mmedbench.cli", *args], cwd=ROOT, text=True,
                            env={**base, "PYTHONPATH": str(ROOT), **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=None if umask is None else (lambda: os.umask(umask)), **kw)


def build(release_dir: Path, work_dir: Path, env: dict | None = None, umask: int | None = None) -> subprocess.Popen:
    return cli("build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(release_dir), "--work-dir", str(work_dir),
               env=env, umask=umask)


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out, err


def kill_at(point: str, release_dir: Path, work_dir: Path, tmp_path: Path, env: dict | None = None) -> None:
    held = tmp_path / f"held-{point.replace(':', '-')}"
    proc = build(release_dir, work_dir, env={**(env or {}), "MMEDBENCH_HOLD": point, "MMEDBENCH_HOLD_FILE": str(held)})
    deadline = time.monotonic() + 900
    while not held.exists():
        if proc.poll() is not None:
            out, err = proc.communicate(timeout=60)
            pytest.fail(f"the build ended before {point} (exit {proc.returncode}): {out[-2000:]} {err[-2000:]}")
        assert time.monotonic() < deadline, f"never reached {point}"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)  # the whole group is gone: its pipes close


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def rerun_matches(reference: Path, release_dir: Path, work_dir: Path, umask: int | None = None, env: dict | None = None) -> str:
    rc, out, err = finish(build(release_dir, work_dir, env=env, umask=umask))
    assert rc == 0, out + err
    assert "Traceback" not in out + err
    assert sorted(p.name for p in release_dir.iterdir()) == ["0.1.0"]  # no .tmp-* folder, no lock left
    published = tree(release_dir / "0.1.0")
    expected = tree(reference)
    assert published.keys() == expected.keys()
    assert [k for k in expected if published[k] != expected[k]] == []
    return out


def test_killed_while_grounding_then_while_allocating(sample_build, tmp_path):
    """Two kills in one work dir, as a user's run killed twice: the run after the first kill
    recomputes the grounding it left (cut in half) and is killed in its turn while
    allocating; the next run publishes the clean build's bytes (a grounding trusted half-cut,
    or an allocation trusted unmarked, would not give them)."""
    releases, work = tmp_path / "releases", tmp_path / "work"
    kill_at("ground:written", releases, work, tmp_path)
    assert not (releases / "0.1.0").exists()
    # the killed stage's parquet is complete but unmarked; cut it in half, as a kill in the
    # middle of writing it (or a crash before the disk had it) would leave it
    (grounded,) = list((work / "ground").glob("*/*.parquet"))
    assert not (grounded.parent / "_complete.json").exists()
    grounded.write_bytes(grounded.read_bytes()[: grounded.stat().st_size // 2])
    kill_at("allocate:written", releases, work, tmp_path)
    assert not (releases / "0.1.0").exists()
    assert (grounded.parent / "_complete.json").exists()  # the second run did ground again, and completed it
    (allocated,) = [p for p in (work / "allocate").iterdir() if p.is_dir()]
    assert not (allocated / "_complete.json").exists()
    out = rerun_matches(sample_build["release"], releases, work)
    assert "written" in out.splitlines()[0]

    # a completed cache whose parquet is then cut short (a disk or a person did it) is
    # detected by its completion record and recomputed, never read
    (items,) = list((work / "load_sources").glob("*/items-00000.parquet"))
    items.write_bytes(items.read_bytes()[:100])
    out = rerun_matches(sample_build["release"], tmp_path / "again", work)
    first = out.splitlines()[0]
    runs, cached = (int(x) for x in first.split("task runs ")[1].split(", cached "))
    assert cached < runs, first


def test_killed_while_writing_the_release(sample_build, tmp_path):
    """Every stage from the session's warm work dir (a kill after the stages touches none of
    it): only the release is written, killed, and written again."""
    releases, work = tmp_path / "releases", sample_build["base"] / "work"
    kill_at("release:written", releases, work, tmp_path, env=warm_env())
    assert not (releases / "0.1.0").exists()
    assert [p.name for p in releases.glob(".tmp-0.1.0-*")]  # the killed run's build folder is left behind ...
    out = rerun_matches(sample_build["release"], releases, work, env=warm_env())  # ... and removed by the rerun
    first = out.splitlines()[0]
    runs, cached = (int(x) for x in first.split("task runs ")[1].split(", cached "))
    assert cached == runs > 0, first  # the stages came from the cache: the release alone was rebuilt


# --- Ctrl-C and SIGTERM ---------------------------------------------------------------------

STOP_SECONDS = 10  # the bound: a user waits no longer than this
BUILD_LINE = "nothing was published; the same command resumes from the cache"


def session_left(sid: int) -> list[str]:
    """The processes still in the command's session (it was started with start_new_session:
    every process it started is in it, whoever its parent is now), zombies aside."""
    left = []
    for p in psutil.process_iter(["cmdline", "name", "status"]):
        try:
            if os.getsid(p.pid) == sid and p.info["status"] != psutil.STATUS_ZOMBIE:
                left.append(" ".join(p.info["cmdline"] or [p.info["name"] or "?"])[:200])
        except (OSError, psutil.Error):
            pass
    return left


def wait_until_held(proc: subprocess.Popen, held: Path, point: str) -> None:
    deadline = time.monotonic() + 900
    while not held.exists():
        if proc.poll() is not None:
            out, err = proc.communicate(timeout=60)
            pytest.fail(f"ended before {point} (exit {proc.returncode}): {out[-2000:]} {err[-2000:]}")
        assert time.monotonic() < deadline, f"never reached {point}"
        time.sleep(0.2)


def stop(proc: subprocess.Popen, sig: int, group: bool) -> tuple[int, str, str]:
    """Send `sig` (to the process group, as a terminal's Ctrl-C; or to the process, as
    `kill`), and check what every interrupted command must do: end within the bound,
    leave no process behind."""
    started = time.monotonic()
    (os.killpg if group else os.kill)(proc.pid, sig)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"still running 60 s after {signal.Signals(sig).name}")
    elapsed = time.monotonic() - started
    assert elapsed < STOP_SECONDS, f"{elapsed:.1f} s after {signal.Signals(sig).name}"
    deadline = time.monotonic() + 5
    while session_left(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert session_left(proc.pid) == []
    return proc.returncode, out, err


def held_cli(point: str, tmp_path: Path, *args: str, env: dict | None = None, own_server: bool = False) -> subprocess.Popen:
    held = tmp_path / f"held-{point.replace(':', '-')}"
    held.unlink(missing_ok=True)
    proc = cli(*args, env={**(env or {}), "MMEDBENCH_HOLD": point, "MMEDBENCH_HOLD_FILE": str(held)}, own_server=own_server)
    wait_until_held(proc, held, point)
    return proc


def test_ctrl_c_while_grounding_and_sigterm_while_writing_stop_the_build(sample_build, tmp_path):
    releases, work = tmp_path / "releases", tmp_path / "work"
    args = ("build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(releases), "--work-dir", str(work), "--quiet")

    # Ctrl-C while a Prefect task thread holds the build (it used to print "ground 0/1 shards
    # (running)" for ever)
    rc, out, err = stop(held_cli("ground:written", tmp_path, *args), signal.SIGINT, group=True)
    assert (rc, out, err.splitlines()) == (130, "", [f"interrupted (SIGINT): {BUILD_LINE}"])
    assert not releases.exists() or list(releases.iterdir()) == []

    # SIGTERM to the build's process with the release half-written in its build folder (it
    # used to leave Prefect's server running)
    # (the command's own server, as a user's: this kill once left it running)
    rc, out, err = stop(held_cli("release:written", tmp_path, *args, own_server=True), signal.SIGTERM, group=False)
    assert (rc, out, err.splitlines()) == (143, "", [f"interrupted (SIGTERM): {BUILD_LINE}"])
    assert list(releases.iterdir()) == []  # no .tmp-0.1.0-<pid>, no .0.1.0.lock

    # the rerun, under a umask that makes every new file and folder private, publishes the
    # same bytes, every file and folder readable by everyone (mkstemp's files were 0600)
    rerun_matches(sample_build["release"], releases, work, umask=0o077)
    release = releases / "0.1.0"
    modes = {p.relative_to(release).as_posix(): oct(p.stat().st_mode & 0o777) for p in [release, *release.rglob("*")]}
    assert {m for m in modes.values()} == {"0o644", "0o755"}
    assert [n for n, m in modes.items() if m != ("0o755" if (release / n).is_dir() else "0o644")] == []


def test_ctrl_c_while_prefect_starts(tmp_path):
    """No hold: a few seconds in, while Prefect's server starts and the flow is imported
    (Ctrl-C then reached one thread in the middle of an import)."""
    proc = cli("build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(tmp_path / "r"),
               "--work-dir", str(tmp_path / "w"), "--quiet", own_server=True)
    time.sleep(4)
    assert proc.poll() is None
    rc, out, err = stop(proc, signal.SIGINT, group=True)
    assert (rc, out, err.splitlines()) == (130, "", [f"interrupted (SIGINT): {BUILD_LINE}"])
    assert not (tmp_path / "r").exists() or list((tmp_path / "r").iterdir()) == []
