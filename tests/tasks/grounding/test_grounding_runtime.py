"""The grounders' shared tokenizer and analyzer locks are renewed in a forked child: a lock
another thread of the parent held at the fork would never be released there."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

FORK_WHILE_HELD = textwrap.dedent("""
    import os, sys, threading
    sys.path.insert(0, sys.argv[1])
    from tasks.grounding import runtime
    held, release = threading.Event(), threading.Event()
    def hold():
        with getattr(runtime, sys.argv[2]):
            held.set()
            release.wait()
    threading.Thread(target=hold, daemon=True).start()
    held.wait()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if getattr(runtime, sys.argv[2]).acquire(timeout=2) else 3)
    _, status = os.waitpid(pid, 0)
    release.set()
    print(os.waitstatus_to_exitcode(status))
""")


@pytest.mark.parametrize("lock", ["_SUDACHI_LOCK", "_MORPH_LOCK"])
def test_a_child_forked_while_a_lock_is_held_can_take_it(lock):
    done = subprocess.run([sys.executable, "-c", FORK_WHILE_HELD, str(ROOT), lock], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout == "0\n", done.stderr[-2000:]


def test_a_plain_lock_held_at_the_fork_stays_held_in_the_child():
    """The hazard the renewal prevents is real: the same script on a lock nobody renews."""
    script = FORK_WHILE_HELD.replace("from tasks.grounding import runtime",
                                     "from tasks.grounding import runtime\nruntime._PLAIN = threading.Lock()")
    done = subprocess.run([sys.executable, "-c", script, str(ROOT), "_PLAIN"], capture_output=True, text=True, timeout=120)
    assert done.stdout == "3\n", done.stderr[-2000:]
