"""A full disk while writing: no half release, no temporary file or folder left, one line that
says so, exit 2 (the user's environment, like a bad input: free space, run again).

ENOSPC is simulated in-process: the writer (pyarrow's parquet writer, or fsync) raises
OSError(ENOSPC) after writing part of its file, as a real full disk does.
"""
from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from common.errors import EXIT_INPUT, InputError
from tests.conftest import ROOT, SAMPLE_CONFIG, warm_env


def _full_disk_after(nbytes: int):
    """A pq.write_table that writes `nbytes` of the file, then finds the disk full."""
    def write_table(table, where, **_kw):
        with open(where, "wb") as fh:
            fh.write(b"PAR1" + b"\0" * nbytes)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))

    return write_table


def test_write_parquet_leaves_no_temporary_file(tmp_path, monkeypatch):
    import common.parquet as cp

    monkeypatch.setattr(cp.pq, "write_table", _full_disk_after(64))
    with pytest.raises(OSError) as exc:
        cp.write_parquet(pa.table({"a": [1]}), tmp_path / "t.parquet")
    assert exc.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_leaves_no_temporary_file_when_the_disk_fills(tmp_path, monkeypatch):
    from common import jsonio

    def full(_fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(jsonio.os, "fsync", full)
    with pytest.raises(OSError):
        with jsonio.atomic_write(tmp_path / "m.json") as fh:
            fh.write("{}")
    assert list(tmp_path.iterdir()) == []


def test_a_stage_that_fills_the_disk_reports_one_line(tmp_path, monkeypatch):
    """Any stage: the wrapper turns ENOSPC into the flow's one-line error, not a failed task."""
    import common.parquet as cp
    from flows import prefect_tasks as pt

    monkeypatch.setattr(cp.pq, "write_table", _full_disk_after(10))
    sources = [{"format": "sample-jsonl", "path": str(ROOT / "sources" / "sample" / "xqa.jsonl"), "options": {}}]
    from schemas.parameters import SourcesParameters

    params = SourcesParameters(sources=sources, background=[], languages=["en", "zh", "ja", "fr", "ru", "es"], shard_size=2000)
    result = pt.load_sources.fn(params=params, work_dir=str(tmp_path / "work"))
    assert isinstance(result, InputError) and result.exit_code == EXIT_INPUT
    message = str(result)
    assert "disk full (No space left on device) while writing the load_sources stage's results" in message
    assert "\n" not in message
    assert not list((tmp_path / "work").rglob("*.tmp")) and not list((tmp_path / "work").rglob("_complete.json"))


@pytest.mark.slow
@pytest.mark.parametrize("where", ["parquet", "fsync"])
def test_disk_full_while_writing_a_release(sample_build, tmp_path, monkeypatch, where):
    import common.parquet as cp
    from common import jsonio
    from flows.build_release import build_release_flow

    if where == "parquet":
        monkeypatch.setattr(cp.pq, "write_table", _full_disk_after(4096))
    else:
        def full(_fd):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(jsonio.os, "fsync", full)
    releases = tmp_path / "releases"
    # the sample build's work dir: every stage is cached, only the release is written
    result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(releases), work_dir=str(sample_build["base"] / "work"))
    assert isinstance(result, InputError) and result.exit_code == EXIT_INPUT, result
    assert "disk full (No space left on device) while writing release 0.1.0 (nothing was published)" in str(result)
    assert "\n" not in str(result)
    assert list(releases.iterdir()) == []  # no release, no .tmp-0.1.0-<pid>, no lock


DRIVER = """
import errno, os, sys
import pyarrow.parquet as pq
write_table = pq.write_table
def full(table, where, **kw):
    if "/.tmp-" not in str(where):  # the stages' cache has room; the release does not
        return write_table(table, where, **kw)
    open(where, "wb").write(b"PAR1")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))
pq.write_table = full
from mmedbench.cli import main
sys.argv = ["mmedbench"] + sys.argv[1:]
main()
"""


@pytest.mark.slow
def test_the_cli_says_disk_full_in_one_line(sample_build, tmp_path):
    """The command on the session's warm work dir (its stages cached: the release is what
    the disk cannot hold)."""
    releases = tmp_path / "releases"
    proc = subprocess.run([sys.executable, "-c", DRIVER, "build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(releases),
                           "--work-dir", str(sample_build["base"] / "work")],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **warm_env()}, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    errors = [l for l in proc.stderr.splitlines() if l.startswith("error: ")]
    assert len(errors) == 1 and "disk full (No space left on device) while writing release 0.1.0" in errors[0], proc.stderr
    assert list(releases.iterdir()) == []  # no release, no .tmp-0.1.0-<pid>, no lock
