"""Forked worker pools (common.workers.fork_pool) do not leave the parent waiting for ever:
not on a child stuck on a standard stream whose lock another thread held at the fork, and
not on a worker that died (the out-of-memory killer's SIGKILL)."""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from common import workers
from common.workers import WorkerDied, fresh_std_streams
from tests.conftest import ROOT

# A process whose stderr is buffered (as it is without PYTHONUNBUFFERED, in CI and for a user
# whose stderr is a pipe or a file) and which another thread writes to all the time (progress
# and log lines do, in a build); then pools are forked from it, as the build forks its stages'.
STREAM_RACE = textwrap.dedent("""
    import os, subprocess, sys, threading
    sys.path.insert(0, sys.argv[1])
    from common import workers
    drain = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    os.dup2(drain.stdin.fileno(), 2)
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # a TextIOWrapper over a BufferedWriter

    def chatter():
        while True:
            sys.stderr.write("a progress line\\n" * 8)

    threading.Thread(target=chatter, daemon=True).start()
    for _ in range(5):
        pool = workers.fork_pool(2)  # its default initializer
        assert pool.map(abs, range(-8, 0)) == list(range(8, 0, -1))
        pool.close()
        pool.join()  # each worker flushes its standard streams as it exits
    print("joined", flush=True)
    os._exit(0)
""")


def test_a_pool_forked_while_another_thread_writes_to_stderr_exits():
    """The lock of a buffered stream is copied by fork as it was; the workers' own streams
    (fresh_std_streams) are the only ones they touch. Without them the first pool hung here
    in 3 runs of 3 on a quiet machine (a race: less often on a loaded one, hence the test
    below, which needs none)."""
    done = subprocess.run([sys.executable, "-c", STREAM_RACE, str(ROOT)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONUNBUFFERED": ""})
    assert done.stdout == "joined\n", done.stderr[-2000:]


# The hazard itself, without the race: a thread is stuck writing to stderr (a pipe nobody
# reads), so it holds the stream's lock for good; a child forked now runs an initializer,
# then flushes its streams as a multiprocessing worker does on exit.
HELD_LOCK = textwrap.dedent("""
    import fcntl, multiprocessing.util, os, sys, termios, threading, time
    sys.path.insert(0, sys.argv[1])
    from common import workers
    r, w = os.pipe()
    sys.stderr = open(w, "w", buffering=1, closefd=False)
    threading.Thread(target=lambda: sys.stderr.write("x" * (1 << 20)), daemon=True).start()
    buf = bytearray(4)
    while fcntl.ioctl(r, termios.FIONREAD, buf) is not None and int.from_bytes(buf, "little") < 65536:
        time.sleep(0.01)  # until the pipe is full: the writer is blocked, holding the lock
    pid = os.fork()  # no flush first, unlike multiprocessing's fork: the lock stays held
    if pid == 0:
        getattr(workers, sys.argv[2])()
        multiprocessing.util._flush_std_streams()
        os._exit(0)
    for _ in range(int(float(sys.argv[3]) / 0.05)):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print("child exited", status, flush=True)
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        print("child stuck", flush=True)
    os._exit(0)
""")


def _held(initializer: str, wait: float) -> str:
    return subprocess.run([sys.executable, "-c", HELD_LOCK, str(ROOT), initializer, str(wait)], capture_output=True,
                          text=True, timeout=120).stdout


def test_a_child_forked_while_stderrs_lock_is_held_still_exits():
    assert _held("forked_child", 60) == "child exited 0\n"


def test_without_fresh_streams_that_child_waits_for_ever():
    """The hazard is real here, so the tests above can fail: the signal reset alone (the
    initializer before fresh_std_streams) leaves the child waiting for the parent's lock."""
    assert _held("reset_signals", 3) == "child stuck\n"


def test_fresh_streams_replace_buffered_ones_and_write_to_the_same_descriptor(tmp_path):
    code = textwrap.dedent("""
        import io, os, sys
        sys.path.insert(0, sys.argv[1])
        from common.workers import fresh_std_streams
        out = open(sys.argv[2], "w")
        sys.stdout = out
        sys.stderr = io.StringIO()  # not a buffered stream on a descriptor: left as it is
        before = sys.stderr
        fresh_std_streams()
        assert sys.stderr is before
        assert sys.stdout is not out and type(sys.stdout.buffer) is io.FileIO and sys.stdout.write_through
        assert sys.stdout.fileno() == out.fileno() and sys.stdout.line_buffering == out.line_buffering
        out.write("buffered, never flushed\\n")
        sys.stdout.write("from the fresh stream\\n")
        os._exit(0)
    """)
    target = tmp_path / "out.txt"
    subprocess.run([sys.executable, "-c", code, str(ROOT), str(target)], check=True, timeout=60)
    # the old stream's buffer is not written: in a forked child it is the parent's data
    assert target.read_text() == "from the fresh stream\n"


def test_fresh_std_streams_leaves_pytests_capture_alone():
    before = sys.stdout, sys.stderr
    fresh_std_streams()
    assert (sys.stdout, sys.stderr) == before  # an unbuffered capture: no lock to inherit


def _dies_on(n: int) -> int:
    """In a worker: -k ends this process with signal k, as the kernel or a user would."""
    if n < 0:
        os.kill(os.getpid(), -n)
    if n == 0:
        raise ValueError("zero")
    return n * 10


def _within(seconds: float, fn):
    """fn() on a thread, which must finish within `seconds` (multiprocessing.Pool's map
    waits for ever on a worker killed mid-call: the test fails instead of hanging)."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "still waiting on a dead worker"
    return out


OOM_LINE = ("grounding: a worker process died (killed by SIGKILL, which is what the kernel's out-of-memory killer "
            "sends); free some memory or use fewer workers (or MMEDBENCH_GROUND_WORKERS=1) and run the same command again")


def test_a_worker_killed_mid_map_fails_the_map_with_one_line():
    pool = workers.fork_pool(2, what="grounding", env="MMEDBENCH_GROUND_WORKERS")
    try:
        got = _within(60, lambda: pool.map(_dies_on, [1, 2, -signal.SIGKILL, 4, 5, 6]))
    finally:
        pool.terminate()
        pool.join()
    assert "value" not in got
    assert type(got["error"]) is WorkerDied and str(got["error"]) == OOM_LINE
    assert got["error"].exit_code == 2
    assert [p.exitcode for p in pool._procs].count(-signal.SIGKILL) == 1
    assert not [p for p in multiprocessing.active_children() if p in pool._procs]  # every worker reaped


@pytest.mark.parametrize("how", ["apply_async", "map"])
def test_another_signal_is_named_and_a_workers_own_exception_is_itself(how):
    pool = workers.fork_pool(1, what="confusion sets")
    call = (lambda n: pool.apply_async(_dies_on, (n,)).get()) if how == "apply_async" else (lambda n: pool.map(_dies_on, [n])[0])
    try:
        assert call(3) == 30
        with pytest.raises(ValueError, match="^zero$"):
            call(0)
        assert call(4) == 40  # an exception is an answer: the pool goes on
        got = _within(60, lambda: call(-signal.SIGUSR1))
    finally:
        pool.terminate()
        pool.join()
    assert str(got["error"]) == ("confusion sets: a worker process died (killed by SIGUSR1); free some memory or use "
                                 "fewer workers and run the same command again")


def test_a_pool_closed_lets_its_workers_exit_and_a_terminated_one_stops_them():
    pool = workers.fork_pool(2)
    assert pool.map(_dies_on, [1, 2, 3]) == [10, 20, 30]
    pool.close()
    pool.join()
    assert sorted(p.exitcode for p in pool._procs) == [0, 0]
    pool = workers.fork_pool(2)
    pool.apply_async(time_sleep, (60,))
    got = _within(30, lambda: (pool.terminate(), pool.join()))  # not after the minute the call takes
    assert "error" not in got
    assert sorted(p.exitcode for p in pool._procs) == [-signal.SIGTERM, -signal.SIGTERM]


def test_workers_end_cleanly_though_the_parent_registered_exit_calls_that_fail_in_them():
    """Prefect registers a call for the end of the process (threading._register_atexit)
    that fails in a forked child: a worker that ran it ended with status 1."""
    def failing():
        raise AssertionError("the parent's service is not in this process")

    threading._register_atexit(failing)
    try:
        pool = workers.fork_pool(2)
        assert pool.map(_dies_on, [1, 2]) == [10, 20]
        pool.close()
        pool.join()
    finally:  # registered as a functools.partial
        threading._threading_atexits[:] = [c for c in threading._threading_atexits if getattr(c, "func", c) is not failing]
    assert [p.exitcode for p in pool._procs] == [0, 0]


def time_sleep(seconds: float) -> None:
    import time

    time.sleep(seconds)


def test_the_line_crosses_a_process_of_its_own_as_itself():
    """The grounding process (IsolatedProcess) hands the build the same error, exit code included."""
    proc = workers.IsolatedProcess()
    try:
        with pytest.raises(WorkerDied) as err:
            proc.call(_raise_died)
    finally:
        proc.close()
    assert str(err.value) == OOM_LINE and err.value.exit_code == 2


def _raise_died():
    raise WorkerDied("grounding", "a worker process died (killed by SIGKILL, which is what the kernel's out-of-memory "
                                  "killer sends); free some memory or use fewer workers (or MMEDBENCH_GROUND_WORKERS=1) "
                                  "and run the same command again")


def _numba_compiler_lock_free(_) -> bool:
    """In a forked worker: can numba's compiler lock (the parent's object, inherited) be taken,
    as a kernel's compile or cache load takes it?"""
    from numba.core.compiler_lock import global_compiler_lock as inherited

    got = inherited._lock.acquire(timeout=3)
    if got:
        inherited.release()
    return got


def test_a_fork_waits_for_a_numba_compile_another_thread_is_in():
    # a grounding shard's thread compiles a kernel while another shard's thread forks its
    # pool: without the fork hook the workers inherit the held lock and wait for ever
    from numba.core.compiler_lock import global_compiler_lock

    holding, release = threading.Event(), threading.Event()

    def compiling():
        with global_compiler_lock:
            holding.set()
            release.wait(5)

    t = threading.Thread(target=compiling)
    t.start()
    holding.wait(5)
    threading.Timer(0.5, release.set).start()  # the compile ends while the fork waits for it
    pool = workers.fork_pool(2, what="kernel pool")
    try:
        assert pool.map(_numba_compiler_lock_free, [None, None]) == [True, True]
    finally:
        pool.close()
        pool.join()
        t.join()
    assert release.is_set() and global_compiler_lock._lock.acquire(blocking=False)  # the parent holds nothing
    global_compiler_lock.release()
