"""Thin Prefect wrappers around the pure stage functions.

Kept apart from the stages so that `mmedbench audit` and `mmedbench ground` never
import Prefect (whose start-up costs seconds). Each wrapper:
  - derives its output folder from a content key (task source + input file contents),
    so a cached result's paths are exactly the files it wrote;
  - turns a user's input error (or a full disk) into a result the flow reports as one
    line, instead of a failed task run with a traceback in the log;
  - marks its folder complete (flows/caching.py) only after the stage returned, so a
    stage killed half-way is never taken for a cached result.
"""
from __future__ import annotations

import functools
import inspect
from pathlib import Path
import sys
import threading

from prefect import task

from common.errors import InputError, disk_full, is_disk_full
from common.testhooks import hold
from common.workers import GROUND_WORKERS_ENV, IsolatedProcess, worker_count
from flows.caching import content_key, mark_complete, task_cache_key
from flows.progress import track_submits

INPUT_ERROR = "__input_error__"


def _stage_dir(name: str, fn, params: dict) -> Path:
    key = content_key(name, {k: v for k, v in params.items() if k != "work_dir"}, fn)
    return Path(params["work_dir"]) / name / key[:16]


def stage(name: str):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(**params):
            out = _stage_dir(name, fn, params)
            try:
                out.mkdir(parents=True, exist_ok=True)
                result = fn(out, **params)
            except InputError as exc:
                return {INPUT_ERROR: str(exc)}
            except OSError as exc:
                if not is_disk_full(exc):
                    raise
                return {INPUT_ERROR: str(disk_full(exc, f"writing the {name} stage's results under {out.parent}"))}
            hold(f"{name}:written")  # tests only: stop here, outputs written but not marked complete
            try:
                mark_complete(out, result)
            except OSError as exc:
                if not is_disk_full(exc):
                    raise
                return {INPUT_ERROR: str(disk_full(exc, f"writing the {name} stage's results under {out.parent}"))}
            return result

        sig = inspect.signature(fn)
        wrapper.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])
        wrapper.stage_dir = lambda params: _stage_dir(name, fn, params)  # read by task_cache_key
        return track_submits(task(name=name, cache_key_fn=task_cache_key, persist_result=True)(wrapper), name)

    return deco


# A vocabulary this large (a UMLS release's MRCONSO is GBs; the paper preset's 387 MB) is
# read in a process of its own: reading it leaves GBs of freed-but-kept memory behind, which
# would stay with the build's process through grounding and allocation (3.3 GB at full
# scale). Small ones (the sample, the real-data ontologies) are read in-process: a process
# costs a second or two. (Allocation stays in-process: its own growth can reuse what
# grounding freed, which a separate process could not.)
ISOLATE_VOCABULARY_BYTES = 256 << 20


def _bytes_under(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


@stage("load_vocabulary")
def load_vocabulary(out, *, rrf_dir, lat_to_lang, max_srl, preferred_en, work_dir, format="rrf", roots="all", code_names=()):
    from common.workers import run_isolated
    from umls.configured import build_configured_vocabulary

    args = (format, Path(rrf_dir), out, lat_to_lang, max_srl, preferred_en, roots, list(code_names))
    if _bytes_under(Path(rrf_dir)) >= ISOLATE_VOCABULARY_BYTES:
        return run_isolated(build_configured_vocabulary, *args)
    return build_configured_vocabulary(*args)


@stage("load_sources")
def load_sources(out, *, sources, background, languages, shard_size, work_dir):
    from tasks.sources.stage import load_sources as run

    return run(sources, background, languages, shard_size, out)


_GROUNDING_IMPORT = threading.Lock()


def grounding_stage():
    """tasks.grounding.stage, imported on first use and by one thread at a time: nltk's lazy
    submodule imports are not thread-safe ("partially initialized module 'nltk'") and shards
    are grounded on a thread pool. Not at flow start: its imports (spaCy, QuickUMLS, nltk)
    are 5 s of a 33 s rebuild at paper scale in which every ground task comes from the cache."""
    with _GROUNDING_IMPORT:
        import tasks.grounding.stage as grounding

    return grounding


# Vocabularies of this many atoms (the shard's languages and English together) are grounded
# in a process of its own (GROUNDING_PROCESS), one for every shard of the build: its
# grounders (GBs of matcher structures at scale) and what building them leaves behind go
# back to the system when it exits instead of staying with the build's process, and its
# Python work no longer takes turns with the realize tasks for this process's GIL (paper
# scale: grounding done at 2:19 instead of 3:13, PSS 4.4 instead of 4.8 GB). Smaller ones
# (the sample, tests) stay in-process: a process costs seconds of imports.
ISOLATE_GROUNDING_ATOMS = 200_000
GROUNDING_PROCESS = IsolatedProcess()


def grounding_process() -> IsolatedProcess:
    """GROUNDING_PROCESS, looked up when called: a task function shipped to a Dask worker
    by value (cloudpickle) must not carry the process handle (and its lock) with it."""
    return GROUNDING_PROCESS


def isolate_grounding(atoms_paths) -> bool:
    """Ground in GROUNDING_PROCESS? Only where grounding forks workers anyway (2+ of them):
    with one, the build is small or the user asked for one process."""
    import pyarrow.parquet as pq

    if worker_count(GROUND_WORKERS_ENV) < 2:
        return False
    return sum(pq.ParquetFile(p).metadata.num_rows for p in atoms_paths) >= ISOLATE_GROUNDING_ATOMS


def release_grounders(failed: bool = False) -> None:
    """Every shard is grounded (or the build failed): the grounders go, and their process
    with them (killed if the build failed: a shard may still be running there)."""
    if failed:
        GROUNDING_PROCESS.kill()
    else:
        GROUNDING_PROCESS.close()
    if "tasks.grounding.stage" in sys.modules:  # imported here only when a shard was grounded here
        sys.modules["tasks.grounding.stage"].drop_grounders()


@stage("ground")
def ground_shard(out, *, shard, corpus, vocab, languages, key_groups, min_score, threshold, window, work_dir):
    args = (shard, corpus, vocab, languages, key_groups, min_score, threshold, window,
            str(Path(work_dir) / "indexes"), str(out / Path(shard).name))
    if isolate_grounding(sorted(vocab["atoms_by_lang"].values())):
        from tasks.grounding import isolated

        return grounding_process().call(isolated.ground_shard, *args)
    return grounding_stage().ground_shard(*args)


@stage("split_memory")
def split_memory(out, *, memory, targets, work_dir):
    from tasks.translation.stage import split_memory as run

    return run(memory, targets, str(out))


@stage("realize")
def realize_shard(out, *, shard, target, languages, memory, work_dir, langid_backend=None):
    from tasks.translation.stage import realize_shard as run

    return run(shard, target, languages, memory, str(out / f"{Path(shard).stem}-{target}.parquet"), langid_backend)


@stage("index_entries")
def index_entries(out, *, vocab, work_dir):
    from tasks.allocation.stage import index_entries as run

    return run(vocab, str(out))


@stage("allocate")
def allocate(out, *, item_shards, grounded, realized, vocab, lexicon_files, languages, memory, quotas, distractors, key_groups,
             dedup, seed, work_dir, base_release=None, new_languages=None, langid_backend=None, overlap_scope="all"):
    from tasks.allocation.stage import allocate_cells

    return allocate_cells(item_shards, grounded, realized, vocab, lexicon_files, languages, memory, quotas, distractors,
                          key_groups, dedup, seed, str(out), base_release, new_languages, langid_backend, overlap_scope)
