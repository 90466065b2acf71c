"""A full disk is named wherever it happens (issue 47, class 4): the embedding cache
(`--cache-dir`) says "disk full" with the cache folder (it said "releases/0.1.0: 13824
requested and 11232 written"), and Prefect's "committing transaction" tracebacks about a
full disk stay off the terminal without --verbose. Real full disks: a tmpfs the test mounts
(tests/small_fs.py; root only, skipped with the reason elsewhere)."""
from __future__ import annotations

import errno
import logging
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from common.errors import EXIT_INPUT, InputError
from flows.quiet_logs import FILTER, quiet_reported_failures, reported_by_the_command
from mmedbench.cli import app
from tasks.evaluation.dense import EmbeddingCache
from tests.evaluation_release import make_tiny_model, make_tiny_release
from tests.small_fs import small_fs


def test_the_embedding_cache_on_a_full_disk_names_its_folder(tmp_path):
    mnt = tmp_path / "mnt"
    with small_fs(mnt, "64k"):
        cache = EmbeddingCache(mnt / "cache" / "0123456789abcdef")
        with pytest.raises(InputError) as exc:
            cache.put("k" * 64, np.ones((100, 384), dtype=np.float32))  # 153 KB
        assert exc.value.exit_code == EXIT_INPUT
        assert str(exc.value) == (f"{mnt}/cache/0123456789abcdef: disk full (No space left on device) while writing the "
                                  "embedding cache (--cache-dir); nothing half-written was kept; free some space and run "
                                  "the same command again")
        assert list((mnt / "cache" / "0123456789abcdef").iterdir()) == []
        small = np.ones((4, 8), dtype=np.float32)
        cache.put("s" * 64, small)  # what fits is stored and read back
        assert np.array_equal(cache.get("s" * 64, 4, 8), small)


@pytest.mark.slow
def test_evaluate_with_a_cache_dir_on_a_full_disk_is_one_line(tmp_path):
    """The issue's probe with a tiny model: the cache folder fills while embeddings are written."""
    release = make_tiny_release(tmp_path / "release")
    model = make_tiny_model(tmp_path / "model")
    mnt = tmp_path / "mnt"
    with small_fs(mnt, "8k"):
        r = CliRunner().invoke(app, ["evaluate", str(release), "-r", f"dense:tiny={model}", "--cache-dir", str(mnt / "cache"),
                                     "--out", str(tmp_path / "out"), "-q"])
        errors = [l for l in r.output.splitlines() if l.startswith("error: ")]
        assert r.exit_code == 2 and len(errors) == 1, r.output
        assert errors[0].startswith(f"error: {mnt}/cache/") and "disk full (No space left on device) while writing the " \
                                                                "embedding cache (--cache-dir)" in errors[0], errors[0]
        assert "Traceback" not in r.output
        assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- Prefect's log records
def _record(exc: BaseException | None, name: str = "prefect.task_runs") -> logging.LogRecord:
    info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord(name, logging.ERROR, __file__, 1, "An error was encountered while committing transaction %r",
                             ("k",), info)


def test_a_full_disks_record_is_dropped_and_any_other_kept():
    full = OSError(errno.ENOSPC, "No space left on device")
    assert reported_by_the_command(_record(full))
    assert reported_by_the_command(_record(OSError(errno.EROFS, "Read-only file system")))
    try:  # a library wrapping the OSError
        try:
            raise full
        except OSError as inner:
            raise RuntimeError("could not persist the result") from inner
    except RuntimeError as wrapped:
        assert reported_by_the_command(_record(wrapped))
    assert not reported_by_the_command(_record(OSError(errno.EACCES, "Permission denied")))
    assert not reported_by_the_command(_record(KeyError("x")))
    assert not reported_by_the_command(_record(None))


def test_the_filter_sits_on_prefects_handlers_and_drops_only_those(capsys):
    """Prefect's console handler (on the root logger, as its logging.yml sets it up) stands
    in as a stream handler on Prefect's logger: the command installs the filter on both."""
    logger = logging.getLogger("prefect.task_runs")
    stream = logging.StreamHandler(sys.stderr)
    logging.getLogger("prefect").addHandler(stream)
    quiet_reported_failures()
    assert FILTER in stream.filters and all(FILTER in h.filters for h in logging.getLogger().handlers)
    try:
        logger.error("An error was encountered while committing transaction 'a'",
                     exc_info=(OSError, OSError(errno.ENOSPC, "No space left on device"), None))
        logger.error("something else broke", exc_info=(KeyError, KeyError("b"), None))
    finally:
        logging.getLogger("prefect").removeHandler(stream)
        for h in logging.getLogger().handlers:
            h.removeFilter(FILTER)
    err = capsys.readouterr().err
    assert "committing transaction" not in err and "something else broke" in err
