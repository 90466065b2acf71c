"""Prefect's log records about a failure the command reports itself, kept off the terminal.

When the work dir fills mid-build, Prefect fails to write a task's result record and logs
"An error was encountered while committing transaction ..." at ERROR with the traceback,
once per task run it was committing (seven blocks on the sample), before the build's own
one line (`error: .../work/ground: disk full ...`). Those records say nothing the line does
not: a disk-full (or read-only) error is reported by the command that meets it, and a
record Prefect could not write is detected and rebuilt on the next run
(flows/caching.drop_unreadable_record). `--verbose` shows them all again.
"""
from __future__ import annotations

import logging

from common.errors import is_disk_full


def _errors(exc: BaseException | None):
    """The exception, its causes and contexts (a library may wrap the OSError)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def reported_by_the_command(record: logging.LogRecord) -> bool:
    """A record whose exception is a full or read-only disk: the command's own line says it."""
    exc = record.exc_info[1] if record.exc_info else None
    return any(is_disk_full(e) for e in _errors(exc))


class DropReportedFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not reported_by_the_command(record)


FILTER = DropReportedFailures()


def quiet_reported_failures() -> None:
    """Install the filter on every handler of Prefect's loggers (its console handler and the
    one sending logs to its API), so no such traceback reaches the terminal."""
    names = ["prefect"] + [n for n in logging.Logger.manager.loggerDict if n.startswith("prefect.")]
    handlers = {h for n in names for h in logging.getLogger(n).handlers} | set(logging.getLogger().handlers)
    for handler in handlers:
        if FILTER not in handler.filters:
            handler.addFilter(FILTER)
