"""The fork pool: a shard's texts grounded all at once (`ground_texts`), each distinct
(language, text) once, on `ground_workers()` processes forked after this process has built
the grounders, so that the workers share the matcher structures copy-on-write instead of
holding a copy each. Results come back in request order, so the output bytes do not depend
on the worker count.
"""
from __future__ import annotations

import threading
from contextlib import ExitStack
from pathlib import Path

from common.workers import fork_pool, forked_child
from tasks.grounding.grounder import Grounder
from tasks.grounding.grounders import GROUNDERS, GrounderSpec
from tasks.grounding.isolated import CHUNK, WORKERS_ENV, pool_workers
from tasks.grounding.prebuild import prebuild_indexes, stop_helper
from tasks.grounding.quickumls_index import index_dir, wait_for_index


POOL_LOCK = threading.Lock()  # one pool at a time per process: each already uses every core
_FORKED: list = []  # the grounders a forked worker uses, by index (set just before the fork)


def _worker_init() -> None:
    """In a forked worker: nothing the parent's other threads held at the fork may block here,
    and no file handle is shared with the parent (unqlite reads with lseek + read, and two
    processes moving one file offset would read each other's pages)."""
    forked_child()  # the tokenizer and analyzer locks are renewed by tasks.grounding.runtime's own fork hook
    for grounder in _FORKED:
        for matcher in grounder.matchers:
            matcher.after_fork()


def _ground_chunk(chunk: list[tuple[int, str]]) -> tuple[list[list[dict]], dict[tuple[int, int], object]]:
    """In a forked worker: ground texts with the grounders inherited from the parent; with
    the results, what its matchers learnt on the way (QuickUMLS: its simstring answers), by
    (grounder, matcher)."""
    results = [[m.as_dict() for m in _FORKED[g].ground(text)] for g, text in chunk]
    fresh = {}
    for g in sorted({g for g, _t in chunk}):
        for k, matcher in enumerate(_FORKED[g].matchers):
            found = matcher.take_found()
            if found is not None:
                fresh[(g, k)] = found
    return results, fresh


def _pool_ground(grounders: list[Grounder], chunks: list[list[tuple[int, str]]], workers: int) -> list[list[dict]]:
    """Fork `workers` processes that share the built grounders copy-on-write, and ground the
    chunks on them; results in chunk order, whatever the worker count."""
    global _FORKED
    _FORKED = grounders
    try:
        # the matcher structures, shared; only the youngest generation collected first: with the
        # build's collector schedule (common.gcpolicy) the next one holds up to millions of
        # objects, and collecting it cost 0.62 of a paper build's 34 grounding CPU s (7 pools)
        pool = fork_pool(workers, _worker_init, collect=0, what="grounding", env=WORKERS_ENV)
    finally:
        _FORKED = []
    try:
        results = pool.map(_ground_chunk, chunks)
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    pool.close()  # workers exit on their own once the queue is drained: no signal needed
    pool.join()
    # A pool lives for one call (one shard), and its workers' n-gram caches with it: the
    # parent keeps their simstring answers, so the next call's workers inherit them instead
    # of searching again (339,756 searches for the paper build's shards on 2 workers, 252,800
    # with answers carried)
    for _results, fresh in results:
        for (g, k), found in fresh.items():
            grounders[g].matchers[k].absorb(found)
    return [r for chunk, _fresh in results for r in chunk]


def ground_texts(requests: list[tuple[str, str]], vocab: dict, languages: dict[str, dict], threshold: float, window: int,
                 cache_root: str, workers: int | None = None) -> dict[tuple[str, str], list[dict]]:
    """Mentions of every distinct (language code, text) in `requests` (grounding is a pure
    function of the two, so a text asked for twice is grounded once), on `workers`
    processes (default `ground_workers()`) forked once this process holds the grounders."""
    unique = list(dict.fromkeys(requests))
    codes = sorted({c for c, _t in unique})
    keys = {c: GrounderSpec.of(vocab, languages, c, cache_root, threshold, window) for c in codes}
    n = pool_workers(len(unique), workers)  # where it runs: tasks/grounding/isolated.py
    if n <= 1:
        out: dict[tuple[str, str], list[dict]] = {}
        for code in codes:
            with GROUNDERS.use(keys[code], keys[code].build) as grounder:
                for c, text in unique:
                    if c == code:
                        out[(c, text)] = [m.as_dict() for m in grounder.ground(text)]
        return {r: out[r] for r in unique}
    with POOL_LOCK, ExitStack() as held:
        helper, prebuilt = prebuild_indexes(keys, n)
        if helper is not None:
            held.push(lambda failed, *_: stop_helper(helper, failed is not None))
        # hold every grounder this pool uses, so that no other thread is inside one at the fork;
        # those whose index the helper builds last, in its order, each once its index is
        # published (not beside the helper's build of it: both at once were the peak)
        build_order = [c for c in codes if c not in prebuilt] + [c for c in prebuilt if c in codes]

        def build(code: str) -> Grounder:
            spec = keys[code]
            if code in prebuilt:
                wait_for_index(index_dir(Path(spec.atoms_path), spec.language(), Path(spec.cache_root)))
            return spec.build()

        built = {c: held.enter_context(GROUNDERS.use(keys[c], lambda c=c: build(c))) for c in build_order}
        grounders = [built[c] for c in codes]
        for code, grounder in zip(codes, grounders):
            if grounder.abbrev is not None and any(c == code and "(" in t for c, t in unique):
                grounder.linker  # built here, once, rather than in every worker (abbreviations need "(")
        index = {c: i for i, c in enumerate(codes)}
        flat = [(index[c], t) for c, t in unique]
        chunks = [flat[i:i + CHUNK] for i in range(0, len(flat), CHUNK)]
        mentions = _pool_ground(grounders, chunks, n)
    return dict(zip(unique, mentions))
