"""Ctrl-C and SIGTERM for the commands that run long: build, add-language, evaluate.

The first SIGINT or SIGTERM ends the command within seconds, whatever its threads are
doing: every process it started (Prefect's temporary server, grounding's fork pool, a
spawned reader, multiprocessing's resource tracker) is stopped, the folders it was writing
and had not published are removed, one line is printed, and it exits 130 (SIGINT) or 143
(SIGTERM), the codes a shell gives a process the signal ended.

Why not KeyboardInterrupt: it reaches the main thread only. Prefect's task threads and the
worker processes they wait on carried on (a build hung in grounding, its Ctrl-C lost), an
import cut half-way broke the thread importing the same module, and SIGTERM skipped the
exit calls that stop Prefect's server. Here the handler itself stops everything and leaves
with os._exit. Caches need nothing: a stage's folder is trusted only with its completion
record (flows/caching.py), so the next run recomputes what was cut short and reuses the
rest; a lock (flock) dies with the process.
"""
from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SIGNALS = (signal.SIGINT, signal.SIGTERM)
GRACE_SECONDS = 2.0  # a child's time to end on SIGTERM (Prefect's server closes its database) before SIGKILL

_state: dict = {"outcome": None}  # set while `handled` is active in this process
_cleanup: dict[int, Path] = {}  # paths to remove when interrupted, by registration


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def handled(outcome: str) -> Iterator[None]:
    """For the duration of a command: the first SIGINT or SIGTERM stops it as the module
    says. `outcome` is what the line tells the user after `interrupted (SIGINT): `. The
    previous handlers come back afterwards (a command run in-process by a test leaves the
    test's own Ctrl-C as it was). Outside the main thread signals cannot be handled: no-op."""
    if not _main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    _state["outcome"] = outcome
    take_signals_back()
    try:
        yield
    finally:
        _state["outcome"] = None
        for s, h in previous.items():
            signal.signal(s, h)


def take_signals_back() -> None:
    """Install this module's handler again where a library replaced it (a Prefect flow run
    installs its own SIGTERM handler, which raises in the main thread only). No-op unless a
    command is `handled`, or outside the main thread."""
    if _state["outcome"] is None or not _main_thread():
        return
    for s in SIGNALS:
        signal.signal(s, _stop)


@contextmanager
def removed_if_interrupted(path: Path) -> Iterator[None]:
    """`path` (a folder or file being written, not yet published) is removed if the command
    is interrupted while this is active."""
    token = object()
    _cleanup[id(token)] = Path(path)
    try:
        yield
    finally:
        _cleanup.pop(id(token), None)


def descendants() -> list:
    """Every live process below this one (psutil.Process objects)."""
    import psutil

    try:
        return psutil.Process().children(recursive=True)
    except psutil.Error:
        return []


def stop_descendants(grace: float = GRACE_SECONDS) -> None:
    """SIGTERM to every process below this one, SIGKILL to any still there after `grace`
    seconds; twice, for a child started while the first round ran (a pool forking)."""
    import psutil

    for _round in range(2):
        procs = descendants()
        if not procs:
            return
        for p in procs:
            try:
                p.terminate()
            except psutil.Error:
                pass
        _gone, alive = psutil.wait_procs(procs, timeout=grace)
        for p in alive:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(alive, timeout=grace)


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _stop(signum: int, _frame) -> None:
    for s in SIGNALS:  # a second Ctrl-C while stopping changes nothing
        signal.signal(s, signal.SIG_IGN)
    outcome = _state["outcome"] or "stopped"
    try:
        # the user's terminal gets our one line only: what other threads would print while
        # they are being stopped (a progress line, a task's failure as its workers go) is not news
        out = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    except OSError:
        out = 2
    try:
        stop_descendants()
        for path in list(_cleanup.values()):
            _remove(path)
        name = signal.Signals(signum).name
        os.write(out, f"interrupted ({name}): {outcome}\n".encode())
    finally:
        os._exit(128 + signum)
