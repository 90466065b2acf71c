"""Stage: evaluate a release with retrievers: run files, metrics, results.json/md, pictures.

    evaluate_release(release_dir, ["bm25", "dense:MODEL_DIR"], out_dir, runs=[RunSpec(...)])

For every system and cell: the top DEPTH documents of each query of the evaluated splits,
written as a TREC run (runs/<system>/<task>-<lang>.trec, and <task>-<lang>-pivot.trec for
the cell's pivot control) beside TREC qrels (qrels/<task>-<lang>[-pivot].<split>.qrels),
and scored by pytrec_eval from the printed run, so trec_eval on those files gives the same
numbers. A system is a retriever the project runs (bm25, dense) or a folder of another
system's run files (`--run NAME=DIR`, copied as they are).

The language gap of a cell is read on the same items: pivot (its queries asked in English)
minus native, paired per query. Every cell score, macro mean and gap carries a 95%
bootstrap interval over queries (tasks/evaluation/stats.py); two systems are compared on
each cell with a paired randomization test, Holm-adjusted over the cells. Concept
discrimination is also scored within each confusion set, per tier, and each step of the
tier ladder is tested for being beyond noise (tasks/evaluation/tier_steps.py). Macro averages cover
the filled cells only; an empty cell (no query in the split) gets no number anywhere.
Nothing depends on time, paths or thread timing: the same release and runs give
byte-identical results.json and run files.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import InputError
from common.jsonio import atomic_write
from schemas.config import Language, load_registry
from schemas.parameters import EvaluationParameters
from schemas.records import SPLITS, TASKS, TIERS
from schemas.results import (METRICS, CellResult, Comparison, EvaluationResults, FamilyContrast, GapMean, Interval,
                             MacroAverage, Metrics, PivotGap, Retriever, Separation, Statistics, TierResult, TierSteps)
from tasks.audit.verify import verify_release
from tasks.evaluation import stats
from tasks.evaluation.cells import Cell, load_cells, read_manifest
from tasks.evaluation import fusion, separation
from tasks.evaluation.external import ExternalRuns, RunFileReport, RunFilesError, RunSpec, read_runs, run_file_name, strict_problems
from tasks.evaluation.outdir import prepare_out
from tasks.evaluation.report_progress import EvaluationProgress, as_progress
from tasks.evaluation.metrics import MEASURES, all_tied, mean, mean_metrics, per_query, within_set
from tasks.evaluation.retrievers import RetrieverSpec, make_retriever, parse_retrievers
from tasks.evaluation.runs import format_score, printed, write_qrels, write_run
from tasks.evaluation.tier_steps import MIN_SETS, tier_steps

DEPTH = 100
DIFFICULTY_FLOOR = 0.30  # a pivot nDCG@10 below this for every system: the items are hard even in English
PROJECT_REGISTRY = Path(__file__).resolve().parents[2] / "configs" / "languages.toml"
OWNED = ("results.json", "results.md", "runs", "qrels", "figures")


@dataclass
class ReleaseInfo:
    version: str
    build_id: str
    languages: list[str]  # the build's order, English first
    cells: list[str]  # task/lang
    registry: dict[str, Language]
    pivot_notes: dict[str, str] = field(default_factory=dict)  # cell -> why it has no pivot control (manifest)


def available_cores() -> int:
    """The cores this process may run on: `--threads`' default."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _registry(entries: dict[str, dict]) -> dict[str, Language]:
    """The manifest's language entries; one written before the `segmenter` field existed
    takes its segmenter from the project's registry (else words)."""
    project = {}
    if any("segmenter" not in e for e in entries.values()) and PROJECT_REGISTRY.exists():
        project = load_registry(PROJECT_REGISTRY)
    out = {}
    for code, e in entries.items():
        if "segmenter" not in e and code in project:
            e = e | {"segmenter": project[code].segmenter}
        out[code] = Language.model_validate(e)
    return out


def pivot_notes(cells: dict) -> dict[str, str]:
    """The manifest's reason, per cell, that it has no pivot control (where it gives one)."""
    out = {}
    for name, cell in cells.items():
        pivots = cell.get("pivots") if isinstance(cell, dict) else None
        if isinstance(pivots, dict) and pivots.get("reason"):
            out[name] = str(pivots["reason"])
    return out


def release_info(root: Path) -> ReleaseInfo:
    m = read_manifest(root)
    try:
        return ReleaseInfo(version=m["version"], build_id=m["build_id"], languages=list(m["config"]["languages"]),
                           cells=sorted(m["cells"]), registry=_registry(m["languages"]), pivot_notes=pivot_notes(m["cells"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(Path(root) / "manifest.json", f"unreadable manifest ({exc})") from None


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def _metrics(d: dict[str, float]) -> Metrics:
    return Metrics(**{k: _r(v) for k, v in d.items()})


def _interval(bounds: tuple[float, float] | None) -> Interval | None:
    return None if bounds is None else Interval(low=_r(bounds[0]), high=_r(bounds[1]))


def _prepare_out(out_dir: Path) -> None:
    """A user's files are never deleted (tasks/evaluation/outdir.py)."""
    prepare_out(out_dir)


SetScores = dict[str, list[tuple[float, float, bool, bool, float, str]]]  # tier -> (accuracy@1, RR, tied, all tied, blind guess, query id)


def _set_scores(cell: Cell, split: str, searcher, confusion: dict) -> SetScores:
    """Each cd query's target ranked among its own confusion set, by tier."""
    by_tier: SetScores = {t: [] for t in TIERS}
    position = {q["_id"]: i for i, q in enumerate(cell.queries)}
    for qid in sorted(cell.qrels[split]):
        s = confusion.get(qid)
        if s is None:
            raise InputError("cd/confusion_sets.jsonl", f"no confusion set for the cd query {qid!r}")
        members = [s["target_cui"]] + list(s["distractor_cuis"])
        scores = {d: float(format_score(v)) for d, v in searcher.within(position[qid], members).items()}
        by_tier[s["tier"]].append((*within_set(s["target_cui"], scores), all_tied(scores), 1.0 / len(scores), qid))
    return by_tier


def _tiers(retriever: str, cell: Cell, split: str, by_tier: SetScores, per_q: dict) -> list[TierResult]:
    out = []
    for tier in TIERS:
        rows = by_tier[tier]
        qids = [q for *_x, q in rows]
        filled = bool(rows)
        out.append(TierResult(
            retriever=retriever, lang=cell.lang, split=split, tier=tier, count=len(rows), ties=sum(1 for r in rows if r[2]),
            all_tied=sum(1 for r in rows if r[3]),
            accuracy_at_1=_r(mean([r[0] for r in rows])) if filled else None,
            mrr=_r(mean([r[1] for r in rows])) if filled else None,
            retrieval_ndcg_at_10=_r(mean([per_q[q]["ndcg_at_10"] for q in qids], "ndcg_cut_10")) if filled else None,
            retrieval_mrr_at_10=_r(mean([per_q[q]["mrr_at_10"] for q in qids])) if filled else None))
    return out


Key = tuple[str, str, str, str, str]  # (system, task, lang, split, query set)
PerQuery = dict[Key, dict[str, dict[str, float]]]  # -> query id -> metric -> value


def _draw_key(task: str, lang: str, split: str) -> str:
    """Bootstrap draws are keyed by cell and split only: every system, and the native and
    pivot query sets of one cell, resample the same positions (a paired bootstrap)."""
    return f"{task}/{lang}/{split}"


def _values(per_q: dict[str, dict[str, float]], qids: list[str], metric: str) -> list[float]:
    return [per_q[q][metric] for q in qids]


class _Engine:
    """A retriever the project runs (bm25, dense): it ranks a cell's queries itself."""

    def __init__(self, spec: RetrieverSpec, engine):
        self.name, self.kind, self.engine = spec.name, spec.kind, engine
        self.family, self.coverage = spec.family, spec.coverage
        self.made: dict[tuple[str, bool], tuple[dict, object]] = {}  # (cell, pivot) -> run, searcher: for hybrids

    def rank(self, cell: Cell, pivot: bool, out_dir: Path) -> tuple[dict | None, object | None]:
        scope = cell.pivot_cell() if pivot else cell
        searcher = self.engine.searcher(scope)
        run = {q["_id"]: printed(r) for q, r in zip(scope.queries, searcher.top(DEPTH))}
        write_run(out_dir / self.run_path(cell, pivot), run, self.name)
        self.made[(cell.name, pivot)] = (run, searcher)
        return run, searcher

    def run_path(self, cell: Cell, pivot: bool) -> str:
        return f"runs/{self.name}/{run_file_name(cell.task, cell.lang, pivot)}"

    def parameters(self, languages: list[str]) -> dict:
        return self.engine.parameters(languages)

    def describe(self) -> dict:
        return self.engine.describe()


class _Runs:
    """Another system's run files (--run NAME=DIR), copied into runs/NAME/ as they are."""

    kind, family, coverage = "run", "user", None

    def __init__(self, runs: ExternalRuns):
        self.name, self.runs = runs.spec.name, runs
        self.made: dict[tuple[str, bool], tuple[dict, object]] = {}

    def rank(self, cell: Cell, pivot: bool, out_dir: Path) -> tuple[dict | None, None]:
        name = run_file_name(cell.task, cell.lang, pivot)
        if name not in self.runs.runs:
            return None, None
        with atomic_write(out_dir / self.run_path(cell, pivot), "wb") as fh:
            fh.write(self.runs.data[name])
        self.made[(cell.name, pivot)] = (self.runs.runs[name], None)
        return self.runs.runs[name], None

    def run_path(self, cell: Cell, pivot: bool) -> str:
        return f"runs/{self.name}/{run_file_name(cell.task, cell.lang, pivot)}"

    def parameters(self, _languages: list[str]) -> dict:
        return {"source": "TREC run files (--run)", "files": len(self.runs.runs)}

    def describe(self) -> dict:
        return {}


class _HybridSearcher:
    """A confusion set's members ranked by each component, fused (fusion.rrf_within)."""

    def __init__(self, searchers: list):
        self.searchers = searchers

    def within(self, i: int, members: list[str]) -> dict[str, float]:
        return fusion.rrf_within([{d: float(format_score(v)) for d, v in s.within(i, members).items()}
                                  for s in self.searchers])


class _Hybrid:
    """Reciprocal rank fusion of the runs its components already made for the same cell
    (their printed run files: nothing is retrieved again)."""

    kind, family, coverage = "hybrid", "hybrid", None

    def __init__(self, spec: RetrieverSpec, components: list):
        self.name, self.components = spec.name, components
        self.made: dict[tuple[str, bool], tuple[dict, object]] = {}

    def rank(self, cell: Cell, pivot: bool, out_dir: Path) -> tuple[dict | None, object | None]:
        made = [c.made.get((cell.name, pivot)) for c in self.components]
        if any(m is None for m in made):
            return None, None  # a component has no run for this cell (a --run folder without the file)
        run = fusion.rrf_run([m[0] for m in made], DEPTH)
        write_run(out_dir / self.run_path(cell, pivot), run, self.name)
        searchers = [m[1] for m in made]
        searcher = _HybridSearcher(searchers) if all(s is not None for s in searchers) else None
        self.made[(cell.name, pivot)] = (run, searcher)
        return run, searcher

    def run_path(self, cell: Cell, pivot: bool) -> str:
        return f"runs/{self.name}/{run_file_name(cell.task, cell.lang, pivot)}"

    def parameters(self, _languages: list[str]) -> dict:
        return {"fusion": "reciprocal rank fusion", "k": fusion.K, "components": " + ".join(c.name for c in self.components),
                "depth": DEPTH}

    def describe(self) -> dict:
        return {}


def _cell_result(system, cell: Cell, split: str, query_set: str, per_q: dict, run: dict, rel: str) -> CellResult:
    qids = sorted(per_q)
    key = _draw_key(cell.task, cell.lang, split)
    return CellResult(retriever=system.name, task=cell.task, lang=cell.lang, split=split, query_set=query_set,
                      queries=len(qids), documents=len(cell.docs), metrics=_metrics(mean_metrics(per_q, qids)),
                      intervals={m: _interval(stats.interval(_values(per_q, qids, m), key)) for m in METRICS},
                      missing_queries=sum(1 for q in qids if not run.get(q)), run=rel)


def _score_cell(system, cell: Cell, splits: list[str], out_dir: Path, per_query_all: PerQuery,
                confusion: dict) -> tuple[list[CellResult], list[TierResult], list[TierSteps]]:
    """One system on one cell: its native queries, then its pivot control where it has one."""
    results: list[CellResult] = []
    tiers: list[TierResult] = []
    steps: list[TierSteps] = []
    for pivot in (False, True):
        if pivot and not cell.pivot_queries:
            continue
        scope = cell.pivot_cell() if pivot else cell
        run, searcher = system.rank(cell, pivot, out_dir)
        if run is None:
            continue
        run = {q: docs for q, docs in run.items() if docs}
        query_set = "pivot" if pivot else "native"
        for s in splits:
            qrels = scope.qrels[s]
            if not qrels:
                if not pivot:
                    results.append(CellResult(retriever=system.name, task=cell.task, lang=cell.lang, split=s, queries=0,
                                              documents=len(cell.docs)))
                continue
            per_q = per_query(qrels, run)
            per_query_all[(system.name, cell.task, cell.lang, s, query_set)] = per_q
            results.append(_cell_result(system, cell, s, query_set, per_q, run, system.run_path(cell, pivot)))
            if cell.task == "cd" and not pivot and searcher is not None:
                by_tier = _set_scores(cell, s, searcher, confusion)
                tiers += _tiers(system.name, cell, s, by_tier, per_q)
                steps.append(tier_steps(system.name, cell.lang, s, {t: [r[0] for r in rows] for t, rows in by_tier.items()},
                                        all_tied=sum(1 for rows in by_tier.values() for r in rows if r[3]),
                                        guesses=sum(r[4] for rows in by_tier.values() for r in rows)))
    return results, tiers, steps


def _macro(per_q: PerQuery, system: str, split: str, over: str, keys: list[str]) -> list[MacroAverage]:
    out = []
    for key in keys:
        filled = [(t, l, v) for (r, t, l, s, qs), v in per_q.items()  # in evaluation order: tasks, then languages
                  if r == system and s == split and qs == "native" and (t if over == "task" else l) == key]
        if not filled:
            continue
        means = {m: mean([mean_metrics(v, sorted(v))[m] for _t, _l, v in filled]) for m in METRICS}
        intervals = {m: _interval(stats.macro_interval([_values(v, sorted(v), m) for _t, _l, v in filled],
                                                       [_draw_key(t, l, split) for t, l, _v in filled])) for m in METRICS}
        out.append(MacroAverage(retriever=system, split=split, over=over, key=key, cells=[f"{t}/{l}" for t, l, _v in filled],
                                metrics=_metrics(means), intervals=intervals))
    return out


def _paired(per_q: PerQuery, system: str, task: str, lang: str, split: str) -> tuple[list[str], list[float], list[float]] | None:
    """The items of a cell asked both ways: ids, native and pivot nDCG@10."""
    native = per_q.get((system, task, lang, split, "native"))
    pivot = per_q.get((system, task, lang, split, "pivot"))
    if native is None or pivot is None:
        return None
    qids = sorted(pivot)
    return qids, _values(native, qids, "ndcg_at_10"), _values(pivot, qids, "ndcg_at_10")


def _pivot_gaps(per_q: PerQuery, systems: list, cells: list[Cell], split: str) -> list[PivotGap]:
    out = []
    for cell in cells:
        paired = {s.name: _paired(per_q, s.name, cell.task, cell.lang, split) for s in systems}
        scored = {n: p for n, p in paired.items() if p is not None}
        if not scored:
            continue
        hard = all(mean(p[2], "ndcg_cut_10") < DIFFICULTY_FLOOR for p in scored.values())
        key = _draw_key(cell.task, cell.lang, split)
        for name, (qids, native, pivot) in scored.items():
            diff = [p - n for n, p in zip(native, pivot)]
            out.append(PivotGap(
                retriever=name, split=split, task=cell.task, lang=cell.lang, queries=len(qids),
                cell_queries=len(cell.qrels[split]), native=_r(mean(native, "ndcg_cut_10")),
                native_interval=_interval(stats.interval(native, key)), pivot=_r(mean(pivot, "ndcg_cut_10")),
                pivot_interval=_interval(stats.interval(pivot, key)), gap=_r(mean(diff)),
                gap_interval=_interval(stats.interval(diff, key)), item_difficulty=hard))
    return out


def _gap_means(per_q: PerQuery, gaps: list[PivotGap], system: str, split: str) -> list[GapMean]:
    mine = [g for g in gaps if g.retriever == system and g.split == split]
    langs = list(dict.fromkeys(g.lang for g in mine))
    groups = ([("task", t, [g for g in mine if g.task == t]) for t in TASKS]
              + [("lang", l, [g for g in mine if g.lang == l]) for l in langs] + [("all", "all", mine)])
    out = []
    for over, key, group in groups:
        if not group:
            continue
        diffs, keys = [], []
        for g in group:
            _qids, native, pivot = _paired(per_q, system, g.task, g.lang, split)
            diffs.append([p - n for n, p in zip(native, pivot)])
            keys.append(_draw_key(g.task, g.lang, split))
        out.append(GapMean(retriever=system, split=split, over=over, key=key,
                           cells=[f"{g.task}/{g.lang}" for g in group], gap=_r(mean([mean(d) for d in diffs])),
                           interval=_interval(stats.macro_interval(diffs, keys))))
    return out


def _comparisons(per_q: PerQuery, systems: list, split: str) -> list[Comparison]:
    """Every pair of systems on every cell both scored (native queries, nDCG@10); the p-values
    of a pair are Holm-adjusted over its cells."""
    out = []
    for i, a in enumerate(systems):
        for b in systems[i + 1:]:
            rows = []
            for (r, t, l, s, qs), va in per_q.items():
                vb = per_q.get((b.name, t, l, s, qs))
                if r != a.name or s != split or qs != "native" or vb is None:
                    continue
                qids = sorted(va)
                xa, xb = _values(va, qids, "ndcg_at_10"), _values(vb, qids, "ndcg_at_10")
                p = stats.randomization_p(xa, xb, f"{t}/{l}/{split}|{a.name}|{b.name}")
                rows.append((t, l, len(qids), mean(xa, "ndcg_cut_10"), mean(xb, "ndcg_cut_10"), p))
            adjusted = stats.holm([row[5] for row in rows])
            for (t, l, n, ma, mb, p), padj in zip(rows, adjusted):
                out.append(Comparison(retriever_a=a.name, retriever_b=b.name, split=split, task=t, lang=l, queries=n,
                                      a=_r(ma), b=_r(mb), difference=_r(ma - mb), p_value=_r(p), p_adjusted=_r(padj),
                                      significant=padj < stats.ALPHA))
    return out


def _separations(per_q: PerQuery, systems: list, cells: list[Cell], split: str,
                 registry: dict[str, Language]) -> list[Separation]:
    """Every non-English cell with pivots that an English-only and a multilingual system both
    scored: each pair's difference of gaps, paired per query, and the cell's verdict."""
    english = [s for s in systems if s.coverage == "english"]
    multi = [s for s in systems if s.coverage == "multilingual"]
    out = []
    for cell in cells:
        if cell.lang == "en" or not english or not multi:
            continue
        key = _draw_key(cell.task, cell.lang, split)
        contrasts, found = [], []
        for e in english:
            for m in multi:
                pe, pm = _paired(per_q, e.name, cell.task, cell.lang, split), _paired(per_q, m.name, cell.task, cell.lang, split)
                if pe is None or pm is None or pe[0] != pm[0]:
                    continue
                diff = separation.paired_differences(pe[1], pe[2], pm[1], pm[2])
                low, high = stats.interval(diff, key)
                found.append(separation.Contrast(e.name, m.name, mean(diff), low, high))
                contrasts.append(FamilyContrast(
                    english_only=e.name, multilingual=m.name, queries=len(pe[0]),
                    english_only_gap=_r(mean([p - n for n, p in zip(pe[1], pe[2])])),
                    multilingual_gap=_r(mean([p - n for n, p in zip(pm[1], pm[2])])),
                    difference=_r(mean(diff)), interval=_interval((low, high))))
        if contrasts:
            latin = "Latin" in registry[cell.lang].scripts
            separated = separation.separates(found)
            out.append(Separation(split=split, task=cell.task, lang=cell.lang, latin_script=latin, contrasts=contrasts,
                                  separates=separated, reading=separation.reading(separated, latin)))
    return out


def _statistics() -> Statistics:
    return Statistics(confidence=stats.CONFIDENCE, bootstrap_resamples=stats.RESAMPLES,
                      randomization_permutations=stats.PERMUTATIONS, exact_up_to_queries=stats.EXACT_MAX,
                      correction="holm", alpha=stats.ALPHA, seed=stats.SEED, difficulty_floor=DIFFICULTY_FLOOR,
                      tier_step_exact_up_to_patterns=stats.EXACT_MAX_PATTERNS, tier_step_min_sets=MIN_SETS)


def _write_qrels_files(cells: list[Cell], splits: list[str], out_dir: Path) -> None:
    for cell in cells:
        for s in splits:
            if cell.qrels[s]:
                write_qrels(out_dir / "qrels" / f"{cell.task}-{cell.lang}.{s}.qrels", cell.qrels[s])
            if cell.pivot_queries and cell.pivot_cell().qrels[s]:
                write_qrels(out_dir / "qrels" / f"{cell.task}-{cell.lang}-pivot.{s}.qrels", cell.pivot_cell().qrels[s])


def _pivotless(cells: list[Cell], info: ReleaseInfo) -> dict[str, str]:
    return {c.name: info.pivot_notes.get(c.name, "the cell has no pivot-queries.jsonl")
            for c in cells if c.lang != "en" and c.queries and not c.pivot_queries}


def _run_file_cells(cells: list[Cell]) -> dict[str, tuple[str, frozenset, frozenset]]:
    """Run file name -> (the cell it is read for, the ids its queries and documents may take)."""
    out = {}
    for c in cells:
        docs = frozenset(d["_id"] for d in c.docs)
        out[run_file_name(c.task, c.lang)] = (c.name, c.query_ids, docs)
        out[run_file_name(c.task, c.lang, True)] = (f"{c.name} pivot", c.pivot_query_ids, docs)
    return out


def _external_runs(runs: list[RunSpec], cells: list[Cell], strict: bool, report) -> list[ExternalRuns]:
    """Every --run folder's files read and held against the release (external.RunFileReport);
    `report(runs, reports)` is told; with `strict`, a file that does not fit is an error."""
    files = _run_file_cells(cells)
    external = [read_runs(r, list(files)) for r in runs]
    reports = {r.spec.name: r.reports(files) for r in external}
    if report is not None and external:
        report(external, reports)
    if strict:
        errors = [e for r in external if (e := strict_problems(r.spec.name, r.spec.directory, reports[r.spec.name]))]
        if errors:
            raise errors[0] if len(errors) == 1 else RunFilesError([x for e in errors for x in getattr(e, "errors", [e])])
    return external


def _systems(specs: list[RetrieverSpec], runs: list[RunSpec], cells: list[Cell], info: ReleaseInfo,
             cache_dir: Path | None, progress, threads: int, strict: bool = False,
             run_report=None) -> tuple[list, dict[str, str]]:
    """Engines, run folders and hybrids, every run file parsed (and every model loaded) before
    anything is written: a bad file or model leaves no results folder behind. A hybrid comes
    after the systems it fuses."""
    external = _external_runs(runs, cells, strict, run_report)
    names = [s.name for s in specs] + [r.spec.name for r in external]
    for n in names:
        if names.count(n) > 1:
            raise InputError(n, "two systems with the same name (name each --retriever and --run differently)")
    made = {spec.name: _Engine(spec, make_retriever(spec, info.registry, cache_dir, progress, threads))
            for spec in specs if spec.kind != "hybrid"}
    made |= {r.spec.name: _Runs(r) for r in external}
    systems = [made[s.name] for s in specs if s.kind != "hybrid"] + [made[r.spec.name] for r in external]
    for spec in specs:
        if spec.kind == "hybrid":
            missing = [n for n in spec.component_names if n not in made]
            if missing:
                raise InputError(spec.name, f"fuses {', '.join(missing)}, which this evaluation does not run")
            systems.append(_Hybrid(spec, [made[n] for n in spec.component_names]))
    run_inputs = {f"{r.spec.name}/{f}": sha for r in external for f, sha in sorted(r.sha256.items())}
    return systems, dict(sorted(run_inputs.items()))


def evaluate_release(root: Path, retrievers: list[str] | list[RetrieverSpec], out_dir: Path,
                     splits: list[str] | tuple[str, ...] = ("test",), info: ReleaseInfo | None = None,
                     cache_dir: Path | None = None, progress: EvaluationProgress | Callable[[str], None] | None = None,
                     runs: list[RunSpec] = (), threads: int = 1, strict: bool = False,
                     run_report: Callable[[list[ExternalRuns], dict[str, list[RunFileReport]]], None] | None = None
                     ) -> EvaluationResults:
    """`progress`: an EvaluationProgress, or a function that takes `mmedbench evaluate`'s lines.
    `strict`: a --run file that does not fit the release (unknown queries or documents,
    empty) is an error; `run_report(runs, reports)` is told what each run file held."""
    root, out_dir = Path(root), Path(out_dir)
    verify_release(root)  # a file changed since publishing is not scored (tasks/audit/verify.py)
    info = info or release_info(root)
    splits = list(dict.fromkeys(splits))
    for s in splits:
        if s not in SPLITS:
            raise InputError("--split", f"unknown split {s!r} (expected test or dev)")
    specs = [r if isinstance(r, RetrieverSpec) else None for r in retrievers]
    if None in specs:
        specs = parse_retrievers([str(r) for r in retrievers], others=tuple(r.name for r in runs)) if retrievers else []
    if not specs and not runs:
        raise InputError("--retriever", "no retriever and no --run given")
    cells, confusion, inputs = load_cells(root, info.cells, info.languages, splits)
    report = as_progress(progress)
    todo, done = sum(1 for c in cells if c.queries) * (len(specs) + len(runs)), 0  # system-cells to score
    report.start(todo)  # before any model loads: a build's line says what is coming
    systems, run_inputs = _systems(specs, list(runs), cells, info, cache_dir, report.note, threads, strict, run_report)
    _prepare_out(out_dir)
    _write_qrels_files(cells, splits, out_dir)
    per_q: PerQuery = {}
    scored = {x.name: ([], [], []) for x in systems}  # results, tiers, steps: written system by system
    for cell in cells:  # cell by cell, so that a hybrid fuses runs its components just made
        for system in systems:
            results, tiers, steps = scored[system.name]
            if not cell.queries:
                results += [CellResult(retriever=system.name, task=cell.task, lang=cell.lang, split=s, queries=0,
                                       documents=len(cell.docs)) for s in splits]
                continue
            got, got_tiers, got_steps = _score_cell(system, cell, splits, out_dir, per_q, confusion)
            results += got
            tiers += got_tiers
            steps += got_steps
            done += 1
            pivots = f" (+ {len(cell.pivot_queries)} pivot queries)" if cell.pivot_queries else ""
            report.count(done, todo, f"{system.name} {cell.name}: {len(cell.queries)} queries{pivots} over {len(cell.docs)} documents")
        for system in systems:
            system.made.clear()  # a cell's runs are kept only until its hybrids have fused them
    per_q = {k: per_q[k] for x in systems for k in per_q if k[0] == x.name}  # system by system, as before
    results, tiers, steps = ([row for x in systems for row in scored[x.name][i]] for i in range(3))
    res = _results(info, splits, systems, cells, _Scored(results, tiers, steps, per_q, inputs, run_inputs))
    _write_outputs(res, out_dir)
    return res


@dataclass
class _Scored:
    results: list[CellResult]
    tiers: list[TierResult]
    tier_steps: list[TierSteps]
    per_q: PerQuery
    inputs: dict[str, str]  # release files read -> sha256
    run_inputs: dict[str, str]  # run files read -> sha256


def _results(info: ReleaseInfo, splits: list[str], systems: list, cells: list[Cell], scored: _Scored) -> EvaluationResults:
    per_q = scored.per_q
    macro, gaps, means, comparisons, separations = [], [], [], [], []
    for s in splits:
        split_gaps = _pivot_gaps(per_q, systems, cells, s)
        for system in systems:
            macro += _macro(per_q, system.name, s, "task", list(TASKS))
            macro += _macro(per_q, system.name, s, "lang", info.languages)
            means += _gap_means(per_q, split_gaps, system.name, s)
        gaps += sorted(split_gaps, key=lambda g: [x.name for x in systems].index(g.retriever))
        comparisons += _comparisons(per_q, systems, s)
        separations += _separations(per_q, systems, cells, s, info.registry)
    described = [Retriever(name=x.name, kind=x.kind, parameters=x.parameters(info.languages), family=x.family,
                           coverage=x.coverage, **x.describe()) for x in systems]
    return EvaluationResults(release=info.version, build_id=info.build_id, splits=splits, depth=DEPTH, measures=MEASURES,
                             retrievers=described, cells=scored.results, macro=macro, tiers=scored.tiers,
                             tier_steps=scored.tier_steps,
                             statistics=_statistics(), pivot_gaps=gaps, gap_means=means, pivotless=_pivotless(cells, info),
                             comparisons=comparisons, separations=separations, inputs=scored.inputs, run_inputs=scored.run_inputs)


def _write_outputs(res: EvaluationResults, out_dir: Path) -> None:
    res.to_disk(out_dir)  # results.json: the type owns its file
    from tasks.evaluation.plots import write_figures
    from tasks.evaluation.report import results_markdown

    figures = write_figures(res, out_dir / "figures")
    with atomic_write(out_dir / "results.md") as fh:
        fh.write(results_markdown(res, figures))


def evaluate_draft(p: EvaluationParameters, upstream: dict, progress: EvaluationProgress | None = None) -> Path | None:
    """Stage: score the written release (`upstream["write"]`, tasks/release/stage.Draft)
    with the build's retrievers before its card, manifest and audit, so that evaluation/
    is listed, hashed and audited like every file. Without retrievers: nothing.
    `progress`: the build's counter of this stage (cells scored, texts encoded)."""
    draft = upstream["write"]
    if draft.done or not p.retrievers:
        return None
    with draft.on_error():
        info = ReleaseInfo(draft.version, draft.build_id, list(p.languages), sorted(draft.counts), dict(p.registry),
                           pivot_notes(draft.counts))
        evaluate_release(draft.tmp, p.retrievers, draft.tmp / "evaluation", p.splits, info=info, cache_dir=p.cache_dir,
                         progress=progress, threads=available_cores())
    return draft.tmp / "evaluation"
