"""Progress of a long build on stderr: one line as each stage's task (or shard) finishes,

    [ 02:13] ground        5/7 shards

a stage that counts its own work says so as it goes (``[ 03:10] evaluate      4/18 cells
(minilm: encoded 1024/8000 documents of cd corpus)``: cells scored, and between two what
``mmedbench evaluate`` prints, texts encoded and corpora indexed),
and, when nothing has been printed for ``heartbeat`` seconds, a line for the stage the
flow is waiting on (``[ 05:43] allocate      0/1 (running)``; ``[ 00:30] start (running)``
while Prefect starts), so a long single task is never silent. Plain lines only, TTY or not: no carriage-return redraws, so CI logs read
the same as a terminal. Elapsed time goes to this stream only, never into an output.

The flow side is two calls: :meth:`Progress.submitted` when a task is submitted (the
totals are what has been submitted, so a stage's total is known once its shards are
all submitted, before the first is collected) and :meth:`Progress.finished` when its
result is collected; :meth:`Progress.waiting` names what the flow blocks on, for the
heartbeat. The process-wide reporter (:func:`current`) is a silent one unless a command
installs a real one with :func:`reporting`, so flows run from tests or other code print
nothing. Every method takes a lock: tasks run on a thread pool.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

# Prefect task name -> (label in the progress line, unit of its count).
STAGES = {
    "load_vocabulary": ("vocabulary", ""),
    "load_sources": ("sources", ""),
    "split_memory": ("memory", ""),
    "index_entries": ("lexicon", ""),
    "ground": ("ground", "shards"),
    "realize": ("realize", "shards"),
    "allocate": ("allocate", ""),
}  # the stages in the flow's own thread (write, evaluate, ...) are labelled by their names
HEARTBEAT_S = 30.0


def format_clock(elapsed_s: float) -> str:
    """Elapsed seconds as mm:ss (minutes keep growing past 59: 125:07)."""
    minutes, seconds = divmod(max(0, int(elapsed_s)), 60)
    return f"{minutes:02d}:{seconds:02d}"


def format_line(elapsed_s: float, stage: str, done: int | None, total: int | None, unit: str = "",
                note: str = "") -> str:
    """One progress line: ``[ 02:13] ground        5/7 shards``, ``(note)`` appended if
    any; without a count (``done`` None) the stage name is not padded."""
    if done is None:
        return " ".join(x for x in (f"[{format_clock(elapsed_s):>6}]", stage, f"({note})" if note else "") if x)
    line = f"[{format_clock(elapsed_s):>6}] {stage:<13} {done}/{total}"
    if unit:
        line += f" {unit}"
    if note:
        line += f" ({note})"
    return line


class Progress:
    """Counts of submitted and finished task runs per stage, printed as they change."""

    def __init__(self, stream: TextIO | None = None, heartbeat: float = HEARTBEAT_S,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream
        self.heartbeat = heartbeat
        self._clock = clock
        self._lock = threading.Lock()
        self._start = self._last = clock()
        self._counts: dict[str, list[int]] = {}  # stage -> [done, total], in order of first submission
        self._runs: dict[object, str] = {}  # task run id -> stage, until finished
        self._units: dict[str, str] = {}  # a stage that counts its own work (Counter) -> its unit
        self._waiting: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- flow side ---------------------------------------------------------------------

    def submitted(self, stage: str, run_id: object) -> None:
        with self._lock:
            self._counts.setdefault(stage, [0, 0])[1] += 1
            self._runs[run_id] = stage

    def waiting(self, run_id: object) -> None:
        with self._lock:
            self._waiting = self._runs.get(run_id, self._waiting)

    def finished(self, run_id: object) -> None:
        with self._lock:
            stage = self._runs.pop(run_id, None)
            if stage is None:
                return
            if stage in self._units:  # its step ends: its own count said the last word
                if self._waiting == stage:
                    self._waiting = None
                return
            count = self._counts[stage]
            count[0] += 1
            if self._waiting == stage and count[0] == count[1]:
                self._waiting = None
            self._emit(stage)

    @contextlib.contextmanager
    def step(self, stage: str) -> Iterator[None]:
        """A stage that is one call in the flow's own thread (writing the release, ...)."""
        token = object()
        self.submitted(stage, token)
        self.waiting(token)
        yield
        self.finished(token)

    def counted(self, stage: str, done: int, total: int, unit: str, note: str = "") -> None:
        """A line of a stage in the flow's own thread that counts its own work (evaluate:
        ``evaluate      3/18 cells (bm25 cd/fr: ...)``); its step then ends without a
        ``1/1`` line of its own, and the heartbeat repeats its count."""
        with self._lock:
            self._counts[stage] = [done, total]
            self._units[stage] = unit
            self._emit(stage, note)

    def counter(self, stage: str) -> "Counter":
        return Counter(self, stage)

    # -- output --------------------------------------------------------------------------

    def _emit(self, stage: str, note: str = "") -> None:  # holds the lock
        now = self._clock()
        self._last = now
        if self.stream is None:
            return
        label, unit = STAGES.get(stage, (stage, ""))
        unit = self._units.get(stage, unit)
        done, total = self._counts[stage]
        self.stream.write(format_line(now - self._start, label, done, total, unit, note) + "\n")
        self.stream.flush()

    def beat(self) -> None:
        """The heartbeat line, if nothing was printed for ``heartbeat`` seconds: for the
        stage waited on, or ``start`` before any was submitted (Prefect starting up)."""
        with self._lock:
            now = self._clock()
            if now - self._last < self.heartbeat:
                return
            if self._waiting is not None:
                self._emit(self._waiting, "running")
            elif not self._counts and self.stream is not None:
                self._last = now
                self.stream.write(format_line(now - self._start, "start", None, None, note="running") + "\n")
                self.stream.flush()

    def start(self) -> None:
        if self.stream is None or self._thread is not None:
            return

        def run() -> None:
            while not self._stop.wait(min(1.0, self.heartbeat)):
                self.beat()

        self._thread = threading.Thread(target=run, name="progress-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


class Counter:
    """A stage's own counts in the build's lines (tasks/evaluation/report_progress.py's
    EvaluationProgress): ``start`` the total, ``count`` each unit done, ``note`` what it is
    doing between two (a corpus indexed, texts encoded so far), each one line with the count,
    so that the build shows what ``mmedbench evaluate`` shows."""

    UNIT = "cells"

    def __init__(self, progress: Progress, stage: str):
        self.progress, self.stage = progress, stage
        self.done = self.total = 0

    def start(self, total: int) -> None:
        self.done, self.total = 0, total
        self.progress.counted(self.stage, 0, total, self.UNIT)

    def count(self, done: int, total: int, message: str) -> None:
        self.done, self.total = done, total
        self.progress.counted(self.stage, done, total, self.UNIT, message)

    def note(self, message: str) -> None:
        self.progress.counted(self.stage, self.done, self.total, self.UNIT, message)


_SILENT = Progress(stream=None)
_current = _SILENT


def current() -> Progress:
    """The reporter flows report to (a silent one unless :func:`reporting` is active)."""
    return _current


@contextlib.contextmanager
def reporting(progress: Progress) -> Iterator[Progress]:
    """Make ``progress`` the process-wide reporter, heartbeat running, for the block."""
    global _current
    previous, _current = _current, progress
    progress.start()
    try:
        yield progress
    finally:
        progress.stop()
        _current = previous


def for_command(quiet: bool, stream: TextIO | None = None) -> Progress:
    """The reporter of a CLI command: stderr, or silent with ``--quiet``."""
    return Progress(stream=None if quiet else (stream or sys.stderr))


def track_submits(task, stage: str):
    """Make ``task.submit`` report each submitted run to the current reporter."""
    submit = task.submit

    def tracked(*args, **kwargs):
        future = submit(*args, **kwargs)
        current().submitted(stage, future.task_run_id)
        return future

    task.submit = tracked
    return task
