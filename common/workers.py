"""How many worker processes a stage may fork, and what a forked worker does first.

Stages that fork (grounding, confusion sets) share one rule: the stage's own variable
(e.g. MMEDBENCH_GROUND_WORKERS), else MMEDBENCH_WORKERS, else the CPUs this process may
run on; always 1 inside a daemonic process or a Dask worker (daemonic processes may not
have children, and on Dask the parallelism is Dask's own workers)."""
from __future__ import annotations

import gc
import io
import multiprocessing
import os
import pickle
import signal
import sys
import threading

from common.errors import InputError
from common.gcpolicy import use_batch_schedule

WORKERS_ENV = "MMEDBENCH_WORKERS"
GROUND_WORKERS_ENV = "MMEDBENCH_GROUND_WORKERS"  # grounding's own (tasks.grounding.stage)


def explicit_workers(env: str | None = None) -> bool:
    """Did the user set a worker count (the stage's variable or MMEDBENCH_WORKERS)?"""
    return any(os.environ.get(e, "").strip() for e in (env, WORKERS_ENV) if e)


def worker_count(env: str | None = None) -> int:
    for name in (env, WORKERS_ENV):
        raw = os.environ.get(name, "").strip() if name else ""
        if raw:
            if not raw.isdigit() or int(raw) < 1:
                raise InputError(name, f"expected a whole number of worker processes >= 1, got {raw!r}")
            n = int(raw)
            break
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n > 1 and (multiprocessing.current_process().daemon or in_dask_worker()):
        return 1
    return n


def in_dask_worker() -> bool:
    if "distributed" not in sys.modules:
        return False
    try:
        from distributed import get_worker

        get_worker()
        return True
    except (ImportError, ValueError):
        return False


def reset_signals() -> None:
    """In a worker process: the parent's SIGTERM handler (Prefect's raises TerminationSignal)
    must not run in a worker, where the pool's own shutdown would print its traceback;
    Ctrl-C is the parent's to handle; and a worker goes when its parent does (a SIGKILLed
    build must not leave workers behind: PR_SET_PDEATHSIG, Linux only)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux / glibc
        pass
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def fresh_std_streams() -> None:
    """In a forked child: its own sys.stdout and sys.stderr, unbuffered, on the same file
    descriptors. A buffered stream's lock is copied by the fork as it was: if another thread
    of the parent was writing (a progress line, a log line) at that moment, the lock is held
    for ever in the child, and the child's first write, or the flush every multiprocessing
    worker makes on exit, never returns (the parent's pool.join() then waits for ever). The
    data the parent had buffered is not the child's to write either."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(getattr(stream, "buffer", None), io.BufferedWriter):
            continue  # not a buffered stream: nothing holds a lock (pytest's capture, say)
        try:
            fd = stream.fileno()
        except (OSError, ValueError):
            continue
        setattr(sys, name, io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding=stream.encoding,
                                            errors=stream.errors, line_buffering=stream.line_buffering,
                                            write_through=True))


def forked_child() -> None:
    """What every forked worker does first (the default pool initializer)."""
    fresh_std_streams()
    reset_signals()


def _spawned_child() -> None:
    """A spawned child starts with CPython's collector schedule, not the parent's."""
    reset_signals()
    use_batch_schedule()


def fork_pool(workers: int, initializer=forked_child, collect: int = 2):
    """A fork pool whose workers share this process's objects copy-on-write. Frozen objects
    are never traversed by a worker's cyclic GC, which would otherwise write to (and so
    copy) every page of them. Generations up to `collect` are collected first, so that no
    garbage is frozen; a pool forked again and again from a process whose heap is all
    long-lived (the grounding process) passes 1, since a full collection traverses every
    object it holds (0.68 s of CPU per grounding pool at paper scale) and frees nothing."""
    ctx = multiprocessing.get_context("fork")
    gc.collect(collect)
    gc.freeze()
    try:
        return ctx.Pool(workers, initializer=initializer)
    finally:
        gc.unfreeze()


def _isolated_call(fn, args: tuple, kwargs: dict):
    try:
        return "ok", fn(*args, **kwargs)
    except InputError as exc:  # rebuilt as itself in the parent (its __init__ takes other arguments than its args)
        return "input", type(exc), exc.args, dict(exc.__dict__)
    except Exception as exc:
        try:  # an exception the parent could not unpickle would leave it waiting forever
            pickle.loads(pickle.dumps(exc))
        except Exception:
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from None
        raise


class IsolatedProcess:
    """A spawned process that runs calls for this one (one at a time, in submission order,
    from any number of threads), for work whose transient memory would otherwise stay with
    the build's process (freed Python and arrow memory is mostly not given back to the
    system): the child's goes back when :meth:`close` lets it exit. It starts on the first
    call. A call's InputError is raised in the caller as itself, any other exception as
    concurrent.futures transports it. Ctrl-C or SIGTERM in a caller stops the child (it also
    dies with this process: ``reset_signals``). In a daemonic process or a Dask worker (no
    children allowed) calls run in-process."""

    def __init__(self):
        self._lock = threading.Lock()
        self._executor = None

    def call(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` in the child; ``fn`` must be importable and its arguments
        and result picklable."""
        # asked at each call, not at construction: a module-level instance may be made
        # before (or shipped into) the process that calls it
        if multiprocessing.current_process().daemon or in_dask_worker():
            return fn(*args, **kwargs)
        with self._lock:
            if self._executor is None:
                from concurrent.futures import ProcessPoolExecutor

                self._executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                     initializer=_spawned_child)
            ex = self._executor
        try:
            out = ex.submit(_isolated_call, fn, args, kwargs).result()
        except BaseException:
            self.kill()
            raise
        if out[0] == "input":
            _, cls, exc_args, state = out
            exc = cls.__new__(cls)
            exc.args = exc_args
            exc.__dict__.update(state)
            raise exc
        return out[1]

    def pid(self) -> int | None:
        """The child's process id, once started."""
        procs = list((getattr(self._executor, "_processes", None) or {}).values())
        return procs[0].pid if procs else None

    def kill(self) -> None:
        with self._lock:
            ex, self._executor = self._executor, None
        if ex is not None:
            for p in list((getattr(ex, "_processes", None) or {}).values()):
                p.kill()
            ex.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Let the child exit (its memory goes back to the system) once its calls are done."""
        with self._lock:
            ex, self._executor = self._executor, None
        if ex is not None:
            ex.shutdown(wait=True)


def run_isolated(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a fresh spawned process (:class:`IsolatedProcess`), which
    exits once it returned."""
    proc = IsolatedProcess()
    try:
        return proc.call(fn, *args, **kwargs)
    finally:
        proc.close()
