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
GROUND_WORKERS_ENV = "MMEDBENCH_GROUND_WORKERS"  # grounding's own (tasks.grounding.pool)


# numba's compiler lock across a fork. A grounding shard's thread may be compiling (or
# loading from numba's cache) a kernel while another shard's thread forks its pool: the
# children then inherit the lock held by a thread they do not have, and their first kernel
# call waits forever (seen on a real-data build with a cold numba cache). The fork waits
# for the compile instead. numba is not imported for this: a process without it has no lock.
_HELD_ACROSS_FORK: list = []


def _hold_numba_compiler_lock() -> None:
    module = sys.modules.get("numba.core.compiler_lock")
    if module is not None:
        module.global_compiler_lock.acquire()
        _HELD_ACROSS_FORK.append(module.global_compiler_lock)


def _release_numba_compiler_lock() -> None:
    while _HELD_ACROSS_FORK:
        _HELD_ACROSS_FORK.pop().release()


os.register_at_fork(before=_hold_numba_compiler_lock, after_in_parent=_release_numba_compiler_lock,
                   after_in_child=_release_numba_compiler_lock)


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


def forget_parents_exit_calls() -> None:
    """In a forked child: the exit calls the parent's threads and services registered
    (threading._register_atexit) are the parent's. A worker runs them as it ends, and
    Prefect's, whose service thread is not in the child, failed there (AssertionError), so
    every worker of a pool forked from the build's process ended with exit status 1."""
    calls = getattr(threading, "_threading_atexits", None)
    if isinstance(calls, list):
        calls.clear()


def forked_child() -> None:
    """What every forked worker does first (the default pool initializer)."""
    fresh_std_streams()
    forget_parents_exit_calls()
    reset_signals()


def _spawned_child() -> None:
    """A spawned child starts with CPython's collector schedule, not the parent's."""
    reset_signals()
    use_batch_schedule()


def _ready() -> None:
    """The first call a fork pool makes: it is answered once a worker has started."""


class WorkerDied(InputError):
    """A forked worker process ended without answering: the kernel's out-of-memory killer,
    or a signal from outside. multiprocessing.Pool would start another worker and leave
    the call waiting for ever; the build stops with this one line instead (exit 2: what
    the machine could give, not a bug)."""


def _how_it_ended(exitcode: int) -> str:
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if -exitcode == signal.SIGKILL:
            return f"killed by {name}, which is what the kernel's out-of-memory killer sends"
        return f"killed by {name}"
    return f"exit code {exitcode}"


class ForkPool:
    """Worker processes forked from this process, sharing its objects copy-on-write: the
    part of multiprocessing.Pool's interface the stages use (`map`, `apply_async`,
    `close`, `join`, `terminate`), over concurrent.futures' ProcessPoolExecutor, which
    notices a worker that dies (see WorkerDied). `what` names the pool in that line."""

    def __init__(self, workers: int, initializer, collect: int, what: str, env: str | None):
        self.what, self.env = what, env
        self._closing = False  # close() was called: join() lets the workers finish and exit
        gc.collect(collect)
        gc.freeze()
        try:
            from concurrent.futures import ProcessPoolExecutor

            self._ex = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=initializer)
            started = self._ex.submit(_ready)  # with fork, the first call forks every worker: here, heap frozen
            # the workers, and the executor's thread that reaps them (shutdown() forgets it)
            self._procs = list(self._ex._processes.values())
            self._reaper = self._ex._executor_manager_thread
        finally:
            gc.unfreeze()
        self.result(started)

    def result(self, future):
        """The call's answer; its exception raised as itself; WorkerDied if a worker died."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            return future.result()
        except BrokenProcessPool:
            raise self._died() from None

    def _died(self) -> WorkerDied:
        # the executor stops the other workers (SIGTERM) and reaps every one in its own
        # thread: once that has ended, each worker's exit status is known
        self.terminate()
        ended = [p.exitcode for p in self._procs if p.exitcode not in (None, 0, -signal.SIGTERM)]
        how = _how_it_ended(ended[0]) if ended else "it ended without answering"
        fewer = f" (or {self.env}=1)" if self.env else ""
        return WorkerDied(self.what, f"a worker process died ({how}); free some memory or use fewer workers{fewer} "
                                     "and run the same command again")

    def map(self, fn, items) -> list:
        """`fn` of every item, in order (one call a message)."""
        futures = [self._ex.submit(fn, item) for item in items]
        return [self.result(f) for f in futures]

    def apply_async(self, fn, args: tuple = ()) -> "_Pending":
        return _Pending(self, self._ex.submit(fn, *args))

    def close(self) -> None:
        """No more calls: the workers exit once theirs are answered (see join)."""
        self._closing = True

    def join(self) -> None:
        if self._closing:
            self._ex.shutdown(wait=True)
        self._reaper.join()
        for p in self._procs:
            p.join()

    def terminate(self) -> None:
        """Stop every worker now (SIGTERM, as Pool does: a worker's own status then tells a
        stop from here apart from a death); calls not answered are dropped."""
        self._closing = False
        self._ex.shutdown(wait=False, cancel_futures=True)
        for p in self._procs:
            if p.exitcode is None:
                p.terminate()
        # the executor's thread reaps the workers: joining them before it is done would race
        # it for their exit status (the loser sees none, and the process looks alive)
        self._reaper.join()
        for p in self._procs:
            p.join()


class _Pending:
    """What `ForkPool.apply_async` returns: `get()` waits for the answer."""

    def __init__(self, pool: ForkPool, future):
        self._pool, self._future = pool, future

    def get(self):
        return self._pool.result(self._future)


def fork_pool(workers: int, initializer=forked_child, collect: int = 2, what: str = "worker pool",
              env: str | None = None) -> ForkPool:
    """A fork pool whose workers share this process's objects copy-on-write. Frozen objects
    are never traversed by a worker's cyclic GC, which would otherwise write to (and so
    copy) every page of them. Generations up to `collect` are collected first, so that no
    garbage is frozen. A pool forked again and again from a process whose heap is all
    long-lived (the grounding process) passes 0: there a full collection frees nothing and
    traverses every object (0.68 s of CPU per grounding pool at paper scale), and under the
    build's schedule (common.gcpolicy) the middle generation holds millions of them too.
    A worker that dies fails the calls waiting on it with `WorkerDied` (`what` and `env`,
    the stage and its worker-count variable, go into that line)."""
    return ForkPool(workers, initializer, collect, what, env)


def _isolated_call(fn, args: tuple, kwargs: dict):
    try:
        return fn(*args, **kwargs)
    except InputError:  # pickles as itself (common.errors)
        raise
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
            return ex.submit(_isolated_call, fn, args, kwargs).result()
        except InputError:
            raise
        except BaseException:
            self.kill()
            raise

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
