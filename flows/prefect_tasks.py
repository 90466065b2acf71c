"""Thin Prefect wrappers around the pure stage functions.

Kept apart from the stages so that `mmedbench audit` and `mmedbench ground` never
import Prefect (whose start-up costs seconds). Each wrapper:
  - derives its output folder from a content key (task source + input file contents),
    so a cached result's paths are exactly the files it wrote;
  - returns a user's input error (or a full disk) as its value, the InputError itself,
    which the flow raises where it collects the result (flows/build_release.py): a failed
    task run would print a traceback in the log instead of the one line;
  - marks its folder complete (flows/caching.py) only after the stage returned, so a
    stage killed half-way is never taken for a cached result.
"""
from __future__ import annotations

import functools
import inspect
from pathlib import Path

from prefect import task

from common.errors import InputError, disk_full, is_disk_full
from common.testhooks import hold
from flows.caching import content_key, mark_complete, task_cache_key
from flows.progress import track_submits
from schemas.parameters import (AllocationParameters, GroundingParameters, MemoryParameters, SourcesParameters,
                                VocabularyParameters)


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
                return exc
            except OSError as exc:
                if not is_disk_full(exc):
                    raise
                return disk_full(exc, f"writing the {name} stage's results under {out.parent}", folder=out.parent)
            hold(f"{name}:written")  # tests only: stop here, outputs written but not marked complete
            try:
                mark_complete(out, result)
            except OSError as exc:
                if not is_disk_full(exc):
                    raise
                return disk_full(exc, f"writing the {name} stage's results under {out.parent}", folder=out.parent)
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
def load_vocabulary(out, *, params: VocabularyParameters, work_dir):
    from common.workers import run_isolated
    from umls.configured import build_configured_vocabulary

    p = params
    args = (p.format, Path(p.rrf_dir), out, p.lat_to_lang, p.max_srl, p.preferred_en, p.roots, list(p.code_names),
            list(p.name_lists), list(p.glossaries), dict(p.morphology))
    if _bytes_under(Path(p.rrf_dir)) >= ISOLATE_VOCABULARY_BYTES:
        return run_isolated(build_configured_vocabulary, *args)
    return build_configured_vocabulary(*args)


@stage("load_sources")
def load_sources(out, *, params: SourcesParameters, work_dir):
    from tasks.sources.stage import load_sources as run

    return run(params.sources, params.background, params.languages, params.shard_size, out)


@stage("ground")
def ground_shard(out, *, shard, corpus, vocab, params: GroundingParameters, work_dir):
    """Where it runs (this process or a process of its own) is tasks/grounding/isolated.py's to say."""
    from tasks.grounding import isolated

    return isolated.ground_shard(shard, corpus, vocab, params, str(Path(work_dir) / "indexes"), str(out / Path(shard).name))


@stage("split_memory")
def split_memory(out, *, params: MemoryParameters, work_dir):
    from tasks.translation.stage import split_memory as run

    return run(params.memory, params.targets, str(out))


@stage("realize")
def realize_shard(out, *, shard, target, languages, memory, work_dir, langid_backend=None):
    from tasks.translation.stage import realize_shard as run

    return run(shard, target, languages, memory, str(out / f"{Path(shard).stem}-{target}.parquet"), langid_backend)


@stage("index_entries")
def index_entries(out, *, vocab, work_dir):
    from tasks.allocation.stage import index_entries as run

    return run(vocab, str(out))


@stage("allocate")
def allocate(out, *, params: AllocationParameters, item_shards, grounded, realized, vocab, lexicon_files, work_dir):
    from tasks.allocation.stage import allocate_cells

    return allocate_cells(params, item_shards, grounded, realized, vocab, lexicon_files, str(out))
