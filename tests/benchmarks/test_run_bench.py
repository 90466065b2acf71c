"""The scale benchmark's own arithmetic: memory of a process tree, and the targets table."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import run_bench  # noqa: E402


def test_tree_memory_reads_pss_only_when_asked_and_pss_never_exceeds_rss():
    me = psutil.Process(os.getpid())
    rss, largest, pss = run_bench.tree_rss(me, pss=True)
    assert 0 < pss <= rss and largest <= rss
    assert run_bench.tree_rss(me)[2] == 0
    assert run_bench._pss(2**22 + 12345) == 0  # no such process: counts nothing


def _bench(cold: dict) -> dict:
    return {"meta": {"preset": "paper"}, "stages": [], "cli": {"cold build (empty cache)": cold}}


def test_targets_use_the_trees_pss_and_say_by_how_much():
    rows = run_bench.target_rows(_bench({"wall_s": 360.0, "cpu_s": 500.0, "peak_rss_mb": 9000, "peak_pss_mb": 4096,
                                         "largest_process_rss_mb": 3000, "exit_code": 0}))
    assert rows[0] == "| cold build <= 5 min | 6.0 min (360 s, CPU 500 s) | **missed** | by 20% |"
    assert rows[1] == ("| peak memory <= 4 GB (process tree PSS) | 4,096 MB (RSS summed over processes 9,000 MB; "
                       "largest process 3,000 MB) | met |  |")


def test_shares_of_cold_are_judged_on_the_measured_times_not_the_rounded_share():
    """40.1 s of 160.1 s is 25.05%: rounded to 0.250 it once read as met."""
    bench = _bench({"wall_s": 160.1, "cpu_s": 194.4, "peak_rss_mb": 7561, "peak_pss_mb": 3834,
                    "largest_process_rss_mb": 3712, "exit_code": 0})
    bench["cli"]["rebuild, nothing changed"] = {"wall_s": 8.0, "exit_code": 0, "share_of_cold": round(8.0 / 160.1, 3)}
    bench["cli"]["add-language de (same cache)"] = {"wall_s": 40.1, "exit_code": 0, "share_of_cold": round(40.1 / 160.1, 3)}
    rows = run_bench.target_rows(bench)
    assert rows[-2] == "| rebuild <= 5% of cold | 5.00% (8.0 s) | met |  |"  # 8.0 / 160.1 = 4.997%
    assert rows[-1] == "| add-language de <= 25% of cold | 25.05% (40.1 s) | **missed** | by 0.05 points |"
    bench["cli"]["add-language de (same cache)"]["wall_s"] = 40.0
    assert run_bench.target_rows(bench)[-1] == "| add-language de <= 25% of cold | 24.98% (40.0 s) | met |  |"
    bench["cli"]["cold build (empty cache)"]["wall_s"] = 160.0  # exactly the limit is within it
    assert run_bench.target_rows(bench)[-1] == "| add-language de <= 25% of cold | 25.00% (40.0 s) | met |  |"


def test_a_build_that_fails_its_audit_still_reports_its_cost_but_never_a_pass():
    summary = "error: r/0.9: the built release fails its audit (tier_ordering: cd/fr: z 1.20 <= 2.0); nothing was published"
    rows = run_bench.target_rows(_bench({"wall_s": 240.0, "cpu_s": 300.0, "peak_rss_mb": 5000, "peak_pss_mb": 3000,
                                         "largest_process_rss_mb": 2000, "exit_code": 1, "summary": summary}))
    assert rows[0].startswith("| cold build publishes (its audit passes) | tier_ordering: cd/fr: z 1.20 <= 2.0 | **missed** |")
    assert rows[1] == "| cold build <= 5 min | 4.0 min (240 s, CPU 300 s) | met |  |"
    other = run_bench.target_rows(_bench({"wall_s": 10.0, "cpu_s": 5.0, "peak_rss_mb": 1, "largest_process_rss_mb": 1,
                                          "exit_code": 2, "summary": "error: bad input"}))
    assert other == ["| cold build | failed (exit 2) | **missed** |  |"]


def test_the_memory_limit_is_on_the_trees_pss_not_on_its_rss_summed_over_forked_workers():
    """Forked workers share their parent's pages: an RSS sum counts them once per worker.
    A limit between the tree's PSS and its RSS sum must not stop it; one under its PSS must."""
    import multiprocessing
    import time

    ballast = bytearray(200 << 20)  # touched pages the children share copy-on-write
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    ctx = multiprocessing.get_context("fork")
    children = [ctx.Process(target=time.sleep, args=(30,)) for _ in range(2)]
    for c in children:
        c.start()
    try:
        me = psutil.Process(os.getpid())
        rss, _largest, pss = run_bench.tree_rss(me, pss=True)
        assert rss > 2 * pss  # the parent's pages, counted three times
        for limit, stopped in (((rss + pss) // 2, False), (pss // 2, True)):
            calls = []
            with run_bench.TreeSampler(me, limit, calls.append, interval=0.01):
                time.sleep(1.0)  # five PSS samples at this interval
            assert bool(calls) is stopped, (limit, rss, pss, calls)
            if stopped:
                assert len(calls) == 1 and calls[0] > limit
    finally:
        for c in children:
            c.terminate()
            c.join()
    del ballast
