"""SharedGrounders: one grounder per key per process, built once, used by one thread at a time."""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from tasks.grounding.grounders import SharedGrounders


class FakeGrounder:
    def __init__(self):
        self.active = 0
        self.max_active = 0

    def ground(self, text):
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        time.sleep(0.001)  # give another thread the chance to enter
        self.active -= 1
        return text


def test_built_once_and_never_used_by_two_threads_at_once():
    shared = SharedGrounders()
    builds = []
    lock = threading.Lock()

    def build(key):
        with lock:
            builds.append(key)
        time.sleep(0.05)  # slow construction: concurrent callers must wait, not build again
        return FakeGrounder()

    def work(i):
        key = ("en",) if i % 2 else ("zh",)
        for _ in range(20):
            with shared.use(key, lambda: build(key)) as g:
                g.ground("x")
        return key

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(work, range(12)))
    assert sorted(builds) == [("en",), ("zh",)]
    assert len(shared) == 2
    for key in (("en",), ("zh",)):
        with shared.use(key, lambda: None) as g:
            assert g.max_active == 1


def test_clear_frees_and_rebuilds_on_next_use():
    shared = SharedGrounders()
    with shared.use(("en",), FakeGrounder) as first:
        pass
    shared.clear()
    assert len(shared) == 0
    with shared.use(("en",), FakeGrounder) as second:
        assert second is not first
