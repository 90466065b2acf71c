"""common.workers.run_isolated: a stage in a fresh process, with the same result, the
user's errors raised as themselves, and no child left behind when the build is stopped."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from common.errors import InputError
from common.workers import run_isolated

ROOT = Path(__file__).resolve().parents[2]


def _pid_and_sum(a: int, b: int = 0) -> tuple[int, int]:
    return os.getpid(), a + b


def _bad_line(path: str) -> None:
    raise InputError(path, "expected 18 fields, got 3", line=7, field="CUI")


def _broken() -> None:
    raise ValueError("not a user's mistake")


def _sleep_forever(marker: str) -> None:
    Path(marker).write_text(str(os.getpid()))
    while True:
        time.sleep(0.1)


def test_the_function_runs_in_another_process_and_its_result_comes_back():
    pid, total = run_isolated(_pid_and_sum, 2, b=3)
    assert total == 5 and pid != os.getpid()


def test_an_input_error_is_raised_as_itself():
    with pytest.raises(InputError) as info:
        run_isolated(_bad_line, "umls/MRCONSO.RRF")
    exc = info.value
    assert type(exc) is InputError
    assert str(exc) == "umls/MRCONSO.RRF:7: field 'CUI': expected 18 fields, got 3"
    assert (exc.file, exc.line, exc.field, exc.exit_code) == ("umls/MRCONSO.RRF", 7, "CUI", 2)


def test_another_exception_keeps_its_type():
    with pytest.raises(ValueError, match="not a user's mistake"):
        run_isolated(_broken)


def test_stopping_the_parent_stops_the_child(tmp_path):
    marker = tmp_path / "child.pid"

    def interrupt(signum, frame):
        if marker.exists():
            raise KeyboardInterrupt
    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5, 0.2)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_isolated(_sleep_forever, str(marker))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    child = int(marker.read_text())
    for _ in range(50):  # killed, then reaped by the pool's shutdown
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"child {child} still running")


def test_the_sample_vocabulary_read_in_a_process_of_its_own_is_byte_identical(tmp_path):
    from umls.configured import build_configured_vocabulary

    args = ("rrf", ROOT / "umls" / "sample", {"ENG": "en", "FRE": "fr", "SPA": "es"}, 0, ["MSH"])
    here = build_configured_vocabulary(args[0], args[1], tmp_path / "here", *args[2:])
    there = run_isolated(build_configured_vocabulary, args[0], args[1], tmp_path / "there", *args[2:])
    assert sorted(here) == sorted(there) and here
    files = sorted(p.name for p in (tmp_path / "here").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "there").iterdir()) and "concepts.parquet" in files
    for name in files:
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes(), name


class _Unpicklable(Exception):
    def __init__(self, a, b):  # pickles its args (one message), so it cannot be rebuilt
        super().__init__(f"{a} and {b}")


def _raise_unpicklable() -> None:
    raise _Unpicklable("x", "y")


def test_an_exception_that_cannot_travel_back_is_reported_not_waited_for():
    with pytest.raises(RuntimeError, match="_Unpicklable: x and y"):
        run_isolated(_raise_unpicklable)
