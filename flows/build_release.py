"""build_release_flow: sources + UMLS + config -> an audited, immutable release folder.

The flow only composes tasks (flows/prefect_tasks.py); all logic lives in the stages.
"""
from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from schemas.config import LoadedConfig, load_config
from common.errors import InputError, error_result
from common.interrupts import take_signals_back
from common.jsonio import load_digests, save_digests
from flows import prefect_tasks as pt
from flows import progress
from flows.inputs import input_files as _input_files
from tasks.release.stage import assemble_release

assemble_release = progress.stepped("release", assemble_release)  # a progress line when written


DIGESTS_FILE = "file-digests.json"  # in the work dir


class Counter:
    """Counts task runs and how many came from Prefect's cache."""

    def __init__(self):
        self.runs = 0
        self.cached = 0

    def future(self, fut):
        progress.current().waiting(fut.task_run_id)
        fut.wait()
        value = self.result(fut.state)
        progress.current().finished(fut.task_run_id)
        return value

    def result(self, state):
        self.runs += 1
        if state.name == "Cached":
            self.cached += 1
        value = state.result()
        if isinstance(value, dict) and pt.INPUT_ERROR in value:
            raise _StageInputError(value[pt.INPUT_ERROR])
        for path in _paths(value):
            if not Path(path).exists():
                # results live in the work dir (PREFECT_LOCAL_STORAGE_PATH); a cache record
                # that outlived its files must not be trusted
                raise _StageInputError(f"{path}: cached result points to a missing file; remove the work dir and rebuild")
        return value


class _StageInputError(Exception):
    pass


def _paths(value) -> list[str]:
    if isinstance(value, str):
        return [value] if value.endswith(".parquet") else []
    if isinstance(value, dict):
        return [p for v in value.values() for p in _paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in _paths(v)]
    return []


def with_runner(runner: str = "local", address: str | None = None):
    """The flow with the requested task runner: local threads, or a Dask cluster by address."""
    if runner == "local":
        return build_release_flow
    if runner == "dask":
        from prefect_dask import DaskTaskRunner

        if not address:
            raise InputError("--address", "the dask runner needs the scheduler's address, e.g. tcp://127.0.0.1:8786")
        return build_release_flow.with_options(task_runner=DaskTaskRunner(address=address))
    raise InputError("--runner", f"unknown runner {runner!r} (expected 'local' or 'dask')")


def run_stages(loaded: LoadedConfig, work: str, runs: Counter, targets: list[str],
               base_release: str | None = None) -> tuple[dict, dict, dict]:
    """Submit every stage up to allocation; realize only into `targets`."""
    cfg = loaded.config
    # the digests of the inputs and stage outputs the last run in this work dir hashed (its
    # cache keys are content keys): unchanged files are not hashed again
    digests = Path(work) / DIGESTS_FILE
    load_digests(digests)
    langs = {l.code: l.model_dump(mode="json") for l in loaded.languages}
    # every stage is submitted, so that a Dask task runner runs all of them on its workers
    vocab_f = pt.load_vocabulary.submit(
        rrf_dir=str(loaded.resolve(cfg.vocabulary.path)), lat_to_lang={l.umls_lat: l.code for l in loaded.languages},
        max_srl=cfg.vocabulary.max_srl, preferred_en=loaded.registry["en"].preferred_sources, work_dir=work,
        format=cfg.vocabulary.format, roots=cfg.vocabulary.roots,
        code_names=[{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in cfg.vocabulary.code_names])
    src_f = pt.load_sources.submit(
        sources=[{"format": s.format, "path": str(loaded.resolve(s.path)), "options": s.options} for s in cfg.sources],
        background=[{"task": b.task, "path": str(loaded.resolve(b.path))} for b in cfg.background],
        languages=cfg.languages, shard_size=cfg.build.shard_size, work_dir=work)
    vocab, src = runs.future(vocab_f), runs.future(src_f)
    memory = [str(loaded.resolve(m)) for m in cfg.translation.memory]
    mem_by_lang = runs.future(pt.split_memory.submit(memory=memory, targets=targets, work_dir=work))
    g = cfg.grounding
    ground_futures, realize_futures = [], []
    for shard, native in zip(src["shards"], src["shard_langs"]):
        # each task sees only the languages it uses, so its cache survives adding one
        needed = sorted(set(native) | {"en"})
        ground_futures.append(pt.ground_shard.submit(
            shard=shard, corpus=src["corpora"], languages={c: langs[c] for c in needed},
            vocab={"concepts": vocab["concepts"], "atoms_by_lang": {c: vocab["atoms_by_lang"][c] for c in needed}},
            key_groups=g.key_groups, min_score=g.min_score, threshold=g.quickumls_threshold,
            window=g.quickumls_window, work_dir=work))
        for target in targets:
            realize_futures.append(pt.realize_shard.submit(
                shard=shard, target=target, languages={c: langs[c] for c in sorted(set(needed) | {target})},
                memory=[mem_by_lang[target]], work_dir=work, langid_backend=cfg.langid_backend))
    # the grounders (GBs at full scale) are not needed past this point; with a Dask runner
    # they live in the workers and go with them
    try:
        grounded = [runs.future(f) for f in ground_futures]
    except BaseException:
        pt.release_grounders(failed=True)
        raise
    pt.release_grounders()
    # the English entries' lexicon depends on the vocabulary alone (a build that adds a
    # language or changes quotas takes it from the cache); made once grounding's process
    # and its memory are gone (beside it, the build's peak rose by 0.5 GB at paper scale)
    en_vocab = {"concepts": vocab["concepts"], "atoms_by_lang": {"en": vocab["atoms_by_lang"]["en"]}}  # en: always built
    lexicon_f = pt.index_entries.submit(vocab=en_vocab, work_dir=work)
    realized = [runs.future(f) for f in realize_futures]
    alloc_params = dict(
        item_shards=src["shards"], grounded=grounded, realized=realized, vocab=vocab, lexicon_files=runs.future(lexicon_f),
        languages=langs, memory=memory,
        quotas={"xqa": cfg.tasks.xqa.quota, "evidence": cfg.tasks.evidence.quota, "cd": cfg.tasks.cd.quota},
        distractors=cfg.tasks.cd.distractors, key_groups=g.key_groups, dedup=cfg.dedup.model_dump(), seed=cfg.seed,
        work_dir=work, langid_backend=cfg.langid_backend, overlap_scope=cfg.overlap.scope)
    if base_release:
        alloc_params.update(base_release=base_release, new_languages=targets)
    alloc = runs.future(pt.allocate.submit(**alloc_params))
    try:
        save_digests(digests)
    except OSError:  # a cache: a full or read-only disk only means hashing again next time
        pass
    return vocab, src, alloc


@flow(name="build_release", log_prints=False, validate_parameters=False)
def build_release_flow(config_path: str, version: str | None = None, release_dir: str | None = None,
                       work_dir: str | None = None, evaluate: list[str] | None = None) -> dict:
    take_signals_back()  # Prefect's flow run took SIGTERM; the command's Ctrl-C/SIGTERM handling stops everything
    logger = get_run_logger()
    loaded = load_config(config_path)
    cfg = loaded.config
    inputs = _input_files(loaded)
    work = str(Path(work_dir).resolve() if work_dir else loaded.resolve(cfg.work_dir))
    version = version or cfg.version
    release_root = Path(release_dir) if release_dir else loaded.resolve(cfg.release_dir)
    existed = (release_root / version).exists()  # one that appears while we build is another run's
    runs = Counter()
    try:
        vocab, src, alloc = run_stages(loaded, work, runs, cfg.languages)
    except _StageInputError as exc:
        return {"error": str(exc)}
    logger.info("task runs: %d, cached: %d", runs.runs, runs.cached)
    try:
        result = assemble_release(loaded, inputs, vocab, src, alloc, version, release_root,
                                  evaluate=evaluate, work_dir=work, existed_at_start=existed)
    except InputError as exc:
        return error_result(exc)
    result.update(task_runs=runs.runs, cached=runs.cached)
    return result
