"""A build killed (SIGKILL) while grounding, while allocating and while writing the release:
the rerun publishes byte-identical output, leaves no `.tmp-*` folder, and never trusts a
partial cache file (a half-written parquet is detected and recomputed).

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

import pytest

from tests.conftest import ROOT, SAMPLE_CONFIG

pytestmark = pytest.mark.slow


def cli(*args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    """`mmedbench` in its own session (so a kill takes Prefect's server with it)."""
    return subprocess.Popen([sys.executable, "-m", "mmedbench.cli", *args], cwd=ROOT, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **kw)


def build(release_dir: Path, work_dir: Path, env: dict | None = None) -> subprocess.Popen:
    return cli("build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(release_dir), "--work-dir", str(work_dir), env=env)


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=900)
    return proc.returncode, out, err


def kill_at(point: str, release_dir: Path, work_dir: Path, tmp_path: Path) -> None:
    held = tmp_path / f"held-{point.replace(':', '-')}"
    proc = build(release_dir, work_dir, env={"MMEDBENCH_HOLD": point, "MMEDBENCH_HOLD_FILE": str(held)})
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


def rerun_matches(reference: Path, release_dir: Path, work_dir: Path) -> str:
    rc, out, err = finish(build(release_dir, work_dir))
    assert rc == 0, out + err
    assert "Traceback" not in out + err
    assert sorted(p.name for p in release_dir.iterdir()) == ["0.1.0"]  # no .tmp-* folder, no lock left
    published = tree(release_dir / "0.1.0")
    expected = tree(reference)
    assert published.keys() == expected.keys()
    assert [k for k in expected if published[k] != expected[k]] == []
    return out


def test_killed_while_grounding(sample_build, tmp_path):
    releases, work = tmp_path / "releases", tmp_path / "work"
    kill_at("ground:written", releases, work, tmp_path)
    assert not (releases / "0.1.0").exists()
    # the killed stage's parquet is complete but unmarked; cut it in half, as a kill in the
    # middle of writing it (or a crash before the disk had it) would leave it
    (grounded,) = list((work / "ground").glob("*/*.parquet"))
    assert not (grounded.parent / "_complete.json").exists()
    grounded.write_bytes(grounded.read_bytes()[: grounded.stat().st_size // 2])
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


def test_killed_while_allocating(sample_build, tmp_path):
    releases, work = tmp_path / "releases", tmp_path / "work"
    kill_at("allocate:written", releases, work, tmp_path)
    assert not (releases / "0.1.0").exists()
    rerun_matches(sample_build["release"], releases, work)


def test_killed_while_writing_the_release(sample_build, tmp_path):
    releases, work = tmp_path / "releases", tmp_path / "work"
    kill_at("release:written", releases, work, tmp_path)
    assert not (releases / "0.1.0").exists()
    assert [p.name for p in releases.glob(".tmp-0.1.0-*")]  # the killed run's build folder is left behind ...
    rerun_matches(sample_build["release"], releases, work)  # ... and removed by the rerun
