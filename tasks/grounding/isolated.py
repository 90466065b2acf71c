"""Where grounding runs, decided here and nowhere else: in the build's process, in a
process of its own (`GROUNDING_PROCESS`), and on how many forked workers (`pool_workers`).

tasks/grounding/stage.py (with keys, reads, grounders, pool and prebuild beside it) holds
what grounding computes; this module only places it. It imports nothing heavy itself, so
that the build's process can name its entry points (a spawned child imports a function by
its module) without importing spaCy, QuickUMLS and nltk, and so that a build whose every
shard is cached never imports them.
"""
from __future__ import annotations

import sys
import threading

from common.workers import GROUND_WORKERS_ENV, IsolatedProcess, explicit_workers, worker_count

WORKERS_ENV = GROUND_WORKERS_ENV

# Vocabularies of this many atoms (the shard's languages and English together) are grounded
# in a process of its own (GROUNDING_PROCESS), one for every shard of the build: its
# grounders (GBs of matcher structures at scale) and what building them leaves behind go
# back to the system when it exits instead of staying with the build's process, and its
# Python work no longer takes turns with the realize tasks for this process's GIL (paper
# scale: grounding done at 2:19 instead of 3:13, PSS 4.4 instead of 4.8 GB). Smaller ones
# (the sample, tests) stay in-process: a process costs seconds of imports.
ISOLATE_GROUNDING_ATOMS = 200_000
GROUNDING_PROCESS = IsolatedProcess()

# by default a second worker only pays off past a few hundred texts (forking and reopening
# the index cost about a second); an explicit worker count is obeyed
MIN_TEXTS_PER_WORKER = 256
CHUNK = 16  # texts per message to a worker: small enough to balance 2 workers on a shard's tail


def ground_workers() -> int:
    """Worker processes for grounding: $MMEDBENCH_GROUND_WORKERS, else $MMEDBENCH_WORKERS,
    else the CPUs this process may run on. 1 (in-process) inside a daemonic process or a
    Dask worker (`common.workers.worker_count`)."""
    return worker_count(WORKERS_ENV)


def pool_workers(texts: int, workers: int | None = None) -> int:
    """How many forked workers ground `texts` distinct texts (1: this process, no pool).
    `workers`: the caller's explicit count, else `ground_workers()` bounded by the texts."""
    n = ground_workers() if workers is None else workers
    if workers is None and not explicit_workers(WORKERS_ENV):
        n = min(n, texts // MIN_TEXTS_PER_WORKER)
    return min(n, texts // CHUNK)


def isolate_grounding(atoms_paths) -> bool:
    """Ground in GROUNDING_PROCESS? Only where grounding forks workers anyway (2+ of them):
    with one, the build is small or the user asked for one process."""
    import pyarrow.parquet as pq

    if ground_workers() < 2:
        return False
    return sum(pq.ParquetFile(p).metadata.num_rows for p in atoms_paths) >= ISOLATE_GROUNDING_ATOMS


def grounding_process() -> IsolatedProcess:
    """GROUNDING_PROCESS, looked up when called: a task function shipped to a Dask worker
    by value (cloudpickle) must not carry the process handle (and its lock) with it."""
    return GROUNDING_PROCESS


_GROUNDING_IMPORT = threading.Lock()


def grounding_stage():
    """tasks.grounding.stage, imported on first use and by one thread at a time: nltk's lazy
    submodule imports are not thread-safe ("partially initialized module 'nltk'") and shards
    are grounded on a thread pool. Not at flow start: its imports (spaCy, QuickUMLS, nltk)
    are 5 s of a 33 s rebuild at paper scale in which every ground task comes from the cache."""
    with _GROUNDING_IMPORT:
        import tasks.grounding.stage as grounding

    return grounding


def run_shard(*args) -> str:
    """In the process that grounds: `tasks.grounding.stage.ground_shard(*args)`."""
    return grounding_stage().ground_shard(*args)


def ground_shard(shard: str, corpus: dict[str, str], vocab: dict, params, cache_root: str, out_path: str) -> str:
    """Ground one shard (`params`: schemas.parameters.GroundingParameters of the shard's
    languages) here or in GROUNDING_PROCESS; the same bytes either way."""
    args = (shard, corpus, vocab, params, cache_root, out_path)
    if isolate_grounding(sorted(vocab["atoms_by_lang"].values())):
        return grounding_process().call(run_shard, *args)
    return run_shard(*args)


def release_grounders(failed: bool = False) -> None:
    """Every shard is grounded (or the build failed): the grounders go, and their process
    with them (killed if the build failed: a shard may still be running there)."""
    if failed:
        GROUNDING_PROCESS.kill()
    else:
        GROUNDING_PROCESS.close()
    # imported here only when a shard was grounded here; a failed build may get here while a
    # shard's thread is still importing it (no drop_grounders yet, and no grounder either)
    drop = getattr(sys.modules.get("tasks.grounding.grounders"), "drop_grounders", None)
    if drop is not None:
        drop()
