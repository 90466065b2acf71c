"""build_release_flow: sources + UMLS + config -> an audited, immutable release folder.

The DAG is `BUILD_STAGES`, in order: one line per stage, naming its function and its
parameters model (schemas/parameters.py). The flow derives every stage's parameters from
the config once, then calls the stages in turn, each with its parameters and the results
of the stages before it (by name). Stages that run as Prefect tasks (`task=True`,
flows/stages.py) submit their task runs and return at once; the others run in the flow's
own thread, on the results of all before them, each reported as one progress line.
Adding a stage is its package, one line here and its parameters model.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path

from prefect import flow, get_run_logger

from common.errors import InputError
from common.interrupts import take_signals_back
from common.jsonio import load_digests, save_digests
from flows import progress
from flows import stages as ts
from flows.inputs import input_files
from flows.stages import Gathered
from schemas.config import LoadedConfig, load_config
from schemas.parameters import (AllocationParameters, AuditParameters, BuildRequest, CardParameters, EvaluationParameters,
                                GroundingParameters, LexiconParameters, MemoryParameters, Parameters, PublishParameters,
                                RealizationParameters, SourcesParameters, VocabularyParameters, WriteParameters)
from tasks.audit.stage import audit_draft
from tasks.evaluation.stage import evaluate_draft
from tasks.release.stage import (evaluation_retrievers, publish_release, refuse_a_different_release, write_card_stage,
                                 write_release)

DIGESTS_FILE = "file-digests.json"  # in the work dir


@dataclass(frozen=True)
class Stage:
    name: str  # its result's name for the stages after it, and its progress line's
    run: Callable  # task stages: (run, params, upstream); the others: (params, upstream)
    parameters: type[Parameters]
    task: bool = False
    before: Callable | None = None  # (params): checked before any stage runs, to fail fast
    counts: bool = False  # a stage in the flow's thread that reports its own counts: (params, upstream, counter)


BUILD_STAGES: tuple[Stage, ...] = (
    Stage("vocabulary", ts.load_vocabulary, VocabularyParameters, task=True),
    Stage("sources", ts.load_sources, SourcesParameters, task=True),
    Stage("memory", ts.split_memory, MemoryParameters, task=True),
    Stage("ground", ts.ground, GroundingParameters, task=True),
    Stage("realize", ts.realize, RealizationParameters, task=True),
    Stage("lexicon", ts.index_entries, LexiconParameters, task=True),
    Stage("allocate", ts.allocate, AllocationParameters, task=True),
    Stage("write", write_release, WriteParameters, before=refuse_a_different_release),
    Stage("evaluate", evaluate_draft, EvaluationParameters, counts=True),
    Stage("card", write_card_stage, CardParameters),
    Stage("audit", audit_draft, AuditParameters),
    Stage("publish", publish_release, PublishParameters),
)


class Run:
    """One run of the stages: submits task runs, collects them (counting those Prefect took
    from its cache), and raises a stage's InputError where its result is collected."""

    def __init__(self, work: Path):
        self.work = work
        self.runs = 0
        self.cached = 0

    def submit(self, task, **params):
        return task.submit(work_dir=str(self.work), **params)

    def value(self, result):
        """A stage's result, its task runs collected (once: the collected value replaces them)."""
        if not isinstance(result, Gathered):
            return result
        if not result.done:
            try:
                values = [self._collect(f) for f in result.futures]
            except BaseException:
                result.done = True  # released once, here
                if result.after:
                    result.after(failed=True)
                raise
            if result.after:
                result.after()
            result.collected, result.done = (values[0] if result.single else values), True
        return result.collected

    def _collect(self, future):
        progress.current().waiting(future.task_run_id)
        future.wait()
        value = self.result(future.state)
        progress.current().finished(future.task_run_id)
        return value

    def result(self, state):
        self.runs += 1
        if state.name == "Cached":
            self.cached += 1
        value = state.result()
        if isinstance(value, InputError):  # the stage's own error (flows/prefect_tasks.py)
            raise value
        for path in _paths(value):
            if not Path(path).exists():
                # results live in the work dir (PREFECT_LOCAL_STORAGE_PATH); a cache record
                # that outlived its files must not be trusted
                raise InputError(path, "cached result points to a missing file; remove the work dir and rebuild")
        return value


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


def build_request(loaded: LoadedConfig, work_dir: str | None, version: str | None, release_root: Path,
                  evaluate: list[str] | None = None, **more) -> BuildRequest:
    """What this run asks for beyond the config; `more`: add-language's targets and base."""
    cfg = loaded.config
    version = version or cfg.version
    retrievers, specs = evaluation_retrievers(loaded, evaluate)
    return BuildRequest(**{
        "version": version, "release_root": release_root, "targets": cfg.languages, "inputs": input_files(loaded),
        "work_dir": Path(work_dir).resolve() if work_dir else loaded.resolve(cfg.work_dir),
        # one that appears while we build is another run's
        "existed_at_start": (release_root / version).exists(), "retrievers": retrievers, "retriever_specs": specs, **more})


def run_build(loaded: LoadedConfig, request: BuildRequest, stages: tuple[Stage, ...] | None = None) -> dict:
    """Every stage in order; the last one's result (the published release), with the task
    runs counted. A stage's InputError goes up as it is."""
    stages = BUILD_STAGES if stages is None else stages
    params = {s.name: s.parameters.derive(loaded, request) for s in stages}  # from the config, once
    run = Run(request.work_dir)
    # the digests of the inputs and stage outputs the last run in this work dir hashed (its
    # cache keys are content keys): unchanged files are not hashed again
    digests = request.work_dir / DIGESTS_FILE
    load_digests(digests)
    for s in stages:
        if s.before is not None:
            s.before(params[s.name])
    upstream: dict = {}
    try:
        with ExitStack() as held:
            for s in stages:
                upstream[s.name] = _run_stage(s, run, params[s.name], upstream, held)
            result = dict(upstream[stages[-1].name])
    except BaseException:
        for value in upstream.values():  # task runs left uncollected: their `after` still runs
            if isinstance(value, Gathered) and value.after and not value.done:
                value.after(failed=True)
        raise
    finally:
        _save(digests)
    get_run_logger().info("task runs: %d, cached: %d", run.runs, run.cached)
    result.update(task_runs=run.runs, cached=run.cached)
    return result


def _run_stage(s: Stage, run: Run, params: Parameters, upstream: dict, held: ExitStack):
    if s.task:
        return s.run(run, params, upstream)
    for name in list(upstream):  # a stage in the flow's thread works on collected results
        upstream[name] = run.value(upstream[name])
    reporter = progress.current()
    with reporter.step(s.name):
        value = s.run(params, upstream, reporter.counter(s.name)) if s.counts else s.run(params, upstream)
    # a result that is a context (the release being written) is held until the run ends
    return held.enter_context(value) if isinstance(value, AbstractContextManager) else value


def _save(digests: Path) -> None:
    try:
        save_digests(digests)
    except OSError:  # a cache: a full or read-only disk only means hashing again next time
        pass


@flow(name="build_release", log_prints=False, validate_parameters=False)
def build_release_flow(config_path: str, version: str | None = None, release_dir: str | None = None,
                       work_dir: str | None = None, evaluate: list[str] | None = None) -> dict | InputError:
    """The published release's summary, or the InputError that stopped the build (the CLI
    prints it as its one `error:` line and exits with its code)."""
    take_signals_back()  # Prefect's flow run took SIGTERM; the command's Ctrl-C/SIGTERM handling stops everything
    try:
        loaded = load_config(config_path)
        release_root = Path(release_dir) if release_dir else loaded.resolve(loaded.config.release_dir)
        return run_build(loaded, build_request(loaded, work_dir, version, release_root, evaluate))
    except InputError as exc:
        return exc
