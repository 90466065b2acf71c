"""Stage: evaluate a release with retrievers: run files, metrics, results.json/md, pictures.

    evaluate_release(release_dir, ["bm25", "dense:MODEL_DIR"], out_dir)

For every retriever and cell: the top DEPTH documents of each query of the evaluated
splits, written as a TREC run (runs/<retriever>/<task>-<lang>.trec) beside TREC qrels
(qrels/<task>-<lang>.<split>.qrels), and scored by pytrec_eval from the printed run, so
trec_eval on those files gives the same numbers. Concept discrimination is also scored
within each confusion set, per tier. Macro averages per task and per language cover the
filled cells only; an empty cell (no query in the split) gets no number anywhere.
Nothing depends on time, paths or thread timing: the same release and retrievers give
byte-identical results.json and run files.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common.errors import InputError
from common.jsonio import atomic_write
from schemas.config import Language, load_registry
from schemas.records import TASKS, TIERS
from schemas.results import CellResult, EvaluationResults, Gap, MacroAverage, Metrics, Retriever, TierResult
from tasks.audit.verify import verify_release
from tasks.evaluation.cells import Cell, load_cells, read_manifest
from tasks.evaluation.outdir import prepare_out
from tasks.evaluation.metrics import MEASURES, mean, mean_metrics, per_query, within_set
from tasks.evaluation.retrievers import RetrieverSpec, make_retriever, parse_retrievers
from tasks.evaluation.runs import format_score, printed, write_qrels, write_run

DEPTH = 100
PROJECT_REGISTRY = Path(__file__).resolve().parents[2] / "configs" / "languages.toml"
OWNED = ("results.json", "results.md", "runs", "qrels", "figures")


@dataclass
class ReleaseInfo:
    version: str
    build_id: str
    languages: list[str]  # the build's order, English first
    cells: list[str]  # task/lang
    registry: dict[str, Language]


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


def release_info(root: Path) -> ReleaseInfo:
    m = read_manifest(root)
    try:
        return ReleaseInfo(version=m["version"], build_id=m["build_id"], languages=list(m["config"]["languages"]),
                           cells=sorted(m["cells"]), registry=_registry(m["languages"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(Path(root) / "manifest.json", f"unreadable manifest ({exc})") from None


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def _metrics(d: dict[str, float]) -> Metrics:
    return Metrics(**{k: _r(v) for k, v in d.items()})


def _prepare_out(out_dir: Path) -> None:
    """A user's files are never deleted (tasks/evaluation/outdir.py)."""
    prepare_out(out_dir)


def _tiers(retriever: str, cell: Cell, split: str, searcher, confusion: dict, per_q: dict) -> list[TierResult]:
    by_tier: dict[str, list[tuple[float, float, bool, str]]] = {t: [] for t in TIERS}
    position = {q["_id"]: i for i, q in enumerate(cell.queries)}
    for qid in sorted(cell.qrels[split]):
        s = confusion.get(qid)
        if s is None:
            raise InputError("cd/confusion_sets.jsonl", f"no confusion set for the cd query {qid!r}")
        members = [s["target_cui"]] + list(s["distractor_cuis"])
        scores = {d: float(format_score(v)) for d, v in searcher.within(position[qid], members).items()}
        by_tier[s["tier"]].append((*within_set(s["target_cui"], scores), qid))
    out = []
    for tier in TIERS:
        rows = by_tier[tier]
        qids = [q for *_x, q in rows]
        filled = bool(rows)
        out.append(TierResult(
            retriever=retriever, lang=cell.lang, split=split, tier=tier, count=len(rows), ties=sum(1 for r in rows if r[2]),
            accuracy_at_1=_r(mean([r[0] for r in rows])) if filled else None,
            mrr=_r(mean([r[1] for r in rows])) if filled else None,
            retrieval_ndcg_at_10=_r(mean([per_q[q]["ndcg_at_10"] for q in qids], "ndcg_cut_10")) if filled else None,
            retrieval_mrr_at_10=_r(mean([per_q[q]["mrr_at_10"] for q in qids])) if filled else None))
    return out


Raw = dict[tuple[str, str, str, str], dict[str, float]]  # (retriever, task, lang, split) -> unrounded metrics


def _macro(raw: Raw, retriever: str, split: str, over: str, keys: list[str]) -> list[MacroAverage]:
    out = []
    for key in keys:
        filled = [((t, l), v) for (r, t, l, s), v in raw.items()  # in evaluation order: tasks, then languages
                  if r == retriever and s == split and (t if over == "task" else l) == key]
        if filled:
            vals = {m: _r(mean([v[m] for _c, v in filled])) for m in Metrics.model_fields}
            out.append(MacroAverage(retriever=retriever, split=split, over=over, key=key,
                                    cells=[f"{t}/{l}" for (t, l), _v in filled], metrics=Metrics(**vals)))
    return out


def _gaps(raw: Raw, retriever: str, split: str, languages: list[str]) -> list[Gap]:
    found = {(t, l): v["ndcg_at_10"] for (r, t, l, s), v in raw.items() if r == retriever and s == split}
    out = []
    for task in TASKS:
        en = found.get((task, "en"))
        if en is None:
            continue
        for lang in languages:
            other = found.get((task, lang))
            if lang == "en" or other is None:
                continue
            out.append(Gap(retriever=retriever, split=split, task=task, lang=lang, english=_r(en), other=_r(other),
                           gap=_r(en - other), ratio=_r(other / en) if en > 0 else None))
    return out


def evaluate_release(root: Path, retrievers: list[str] | list[RetrieverSpec], out_dir: Path,
                     splits: list[str] | tuple[str, ...] = ("test",), info: ReleaseInfo | None = None,
                     cache_dir: Path | None = None, progress: Callable[[str], None] | None = None) -> EvaluationResults:
    root, out_dir = Path(root), Path(out_dir)
    verify_release(root)  # a file changed since publishing is not scored (tasks/audit/verify.py)
    info = info or release_info(root)
    splits = list(dict.fromkeys(splits))
    for s in splits:
        if s not in ("test", "dev"):
            raise InputError("--split", f"unknown split {s!r} (expected test or dev)")
    specs = [r if isinstance(r, RetrieverSpec) else None for r in retrievers]
    if None in specs:
        specs = parse_retrievers([str(r) for r in retrievers])
    cells, confusion, inputs = load_cells(root, info.cells, info.languages, splits)
    engines = [make_retriever(spec, info.registry, cache_dir, progress) for spec in specs]  # a bad model fails here
    _prepare_out(out_dir)
    say = progress or (lambda _m: None)

    for cell in cells:
        for s in splits:
            if cell.qrels[s]:
                write_qrels(out_dir / "qrels" / f"{cell.task}-{cell.lang}.{s}.qrels", cell.qrels[s])

    results: list[CellResult] = []
    raw: Raw = {}
    tiers: list[TierResult] = []
    described: list[Retriever] = []
    todo = sum(1 for c in cells if c.queries) * len(specs)
    done = 0
    for spec, retriever in zip(specs, engines):
        for cell in cells:
            if not cell.queries:
                results += [CellResult(retriever=spec.name, task=cell.task, lang=cell.lang, split=s, queries=0,
                                       documents=len(cell.docs)) for s in splits]
                continue
            searcher = retriever.searcher(cell)
            ranked = searcher.top(DEPTH)
            run = {q["_id"]: printed(r) for q, r in zip(cell.queries, ranked)}
            rel = f"runs/{spec.name}/{cell.task}-{cell.lang}.trec"
            write_run(out_dir / rel, run, spec.name)
            run = {q: docs for q, docs in run.items() if docs}
            for s in splits:
                qrels = cell.qrels[s]
                if not qrels:
                    results.append(CellResult(retriever=spec.name, task=cell.task, lang=cell.lang, split=s, queries=0,
                                              documents=len(cell.docs)))
                    continue
                per_q = per_query(qrels, run)
                raw[(spec.name, cell.task, cell.lang, s)] = mean_metrics(per_q, list(qrels))
                results.append(CellResult(retriever=spec.name, task=cell.task, lang=cell.lang, split=s, queries=len(qrels),
                                          documents=len(cell.docs), metrics=_metrics(raw[(spec.name, cell.task, cell.lang, s)]),
                                          run=rel))
                if cell.task == "cd":
                    tiers += _tiers(spec.name, cell, s, searcher, confusion, per_q)
            done += 1
            say(f"[{done}/{todo}] {spec.name} {cell.name}: {len(cell.queries)} queries over {len(cell.docs)} documents")
        described.append(Retriever(name=spec.name, kind=spec.kind, parameters=retriever.parameters(info.languages)))

    macro, gaps = [], []
    for spec in specs:
        for s in splits:
            macro += _macro(raw, spec.name, s, "task", list(TASKS))
            macro += _macro(raw, spec.name, s, "lang", info.languages)
            gaps += _gaps(raw, spec.name, s, info.languages)
    res = EvaluationResults(release=info.version, build_id=info.build_id, splits=splits, depth=DEPTH,
                            measures=MEASURES, retrievers=described, cells=results, macro=macro, tiers=tiers,
                            gaps=gaps, inputs=inputs)
    with atomic_write(out_dir / "results.json") as fh:
        fh.write(json.dumps(res.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n")
    from tasks.evaluation.plots import write_figures
    from tasks.evaluation.report import results_markdown

    figures = write_figures(res, out_dir / "figures")
    with atomic_write(out_dir / "results.md") as fh:
        fh.write(results_markdown(res, figures))
    return res
