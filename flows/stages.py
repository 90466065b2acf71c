"""The stages that run as Prefect tasks (flows/prefect_tasks.py), as the flow calls them:
`stage(run, params, upstream)` submits the stage's task runs and returns their futures
(`Gathered`); a later stage collects them with `run.value`, so that independent stages
(vocabulary and sources; ground and realize) run side by side on the task runner.

Each reads its own parameters model (schemas/parameters.py) and the results of the stages
before it (`upstream`, by stage name); nothing of the config.
"""
from __future__ import annotations

from flows import prefect_tasks as pt
from schemas.parameters import (AllocationParameters, GroundingParameters, LexiconParameters, MemoryParameters,
                                RealizationParameters, SourcesParameters, VocabularyParameters)


class Gathered:
    """Task runs submitted by one stage; `after(failed)` runs once they are all collected
    (or one failed). `single`: the stage's result is its one task run's value, not a list."""

    def __init__(self, futures: list, after=None, single: bool = False):
        self.futures, self.after, self.single = futures, after, single
        self.done = False
        self.collected = None


def load_vocabulary(run, p: VocabularyParameters, upstream: dict) -> Gathered:
    return Gathered([run.submit(pt.load_vocabulary, params=p)], single=True)


def load_sources(run, p: SourcesParameters, upstream: dict) -> Gathered:
    return Gathered([run.submit(pt.load_sources, params=p)], single=True)


def split_memory(run, p: MemoryParameters, upstream: dict) -> Gathered:
    return Gathered([run.submit(pt.split_memory, params=p)], single=True)


def _needed(native: list[str]) -> list[str]:
    """A shard's languages and English: each task sees only these, so that its cache key
    survives adding a language to the build."""
    return sorted(set(native) | {"en"})


def ground(run, p: GroundingParameters, upstream: dict) -> Gathered:
    """One task per shard. Once all are collected the grounders (GBs at full scale) go, and
    the process that held them (tasks/grounding/isolated.py)."""
    from tasks.grounding.isolated import release_grounders

    vocab, src = run.value(upstream["vocabulary"]), run.value(upstream["sources"])  # progress lines in stage order
    futures = []
    for shard, native in zip(src["shards"], src["shard_langs"]):
        needed = _needed(native)
        futures.append(run.submit(
            pt.ground_shard, shard=shard, corpus=src["corpora"], params=p.for_languages(needed),
            vocab={"concepts": vocab["concepts"], "atoms_by_lang": {c: vocab["atoms_by_lang"][c] for c in needed}}))
    return Gathered(futures, after=release_grounders)


def realize(run, p: RealizationParameters, upstream: dict) -> Gathered:
    """One task per shard and target language."""
    src, memory = run.value(upstream["sources"]), run.value(upstream["memory"])
    futures = []
    for shard, native in zip(src["shards"], src["shard_langs"]):
        for target in p.targets:
            langs = p.for_languages(sorted(set(_needed(native)) | {target})).languages
            futures.append(run.submit(
                pt.realize_shard, shard=shard, target=target, memory=[memory[target]], langid_backend=p.langid_backend,
                languages={c: l.model_dump(mode="json") for c, l in langs.items()}))
    return Gathered(futures)


def index_entries(run, p: LexiconParameters, upstream: dict) -> Gathered:
    """The English entries' lexicon, made once grounding's process and its memory are gone
    (beside it, the build's peak rose by 0.5 GB at paper scale): it depends on the
    vocabulary alone (a build that adds a language or changes quotas takes it from the cache)."""
    run.value(upstream["ground"])
    vocab = run.value(upstream["vocabulary"])
    en_vocab = {"concepts": vocab["concepts"], "atoms_by_lang": {"en": vocab["atoms_by_lang"]["en"]}}
    return Gathered([run.submit(pt.index_entries, vocab=en_vocab)], single=True)


def allocate(run, p: AllocationParameters, upstream: dict) -> Gathered:
    src, realized = run.value(upstream["sources"]), run.value(upstream["realize"])
    future = run.submit(pt.allocate, params=p, item_shards=src["shards"], grounded=run.value(upstream["ground"]),
                        realized=realized, vocab=run.value(upstream["vocabulary"]), lexicon_files=run.value(upstream["lexicon"]))
    return Gathered([future], single=True)
