"""Evaluation folders (`mmedbench evaluate --out`) read for a leaderboard: results.json through
its own type (EvaluationResults.from_disk), and per-query nDCG@10 recomputed from the
folder's TREC runs and qrels with the project's metrics (pytrec_eval, as trec_eval -c).

Each cell's recomputed mean must be the nDCG@10 results.json records: a folder whose runs
were changed after evaluate wrote them is refused, not ranked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from common.errors import InputError
from schemas.results import EvaluationResults, Retriever
from tasks.evaluation.external import parse_run
from tasks.evaluation.metrics import mean, per_query
from tasks.evaluation.runs import read_qrels
from tasks.leaderboard.items import found


@dataclass
class SystemScores:
    retriever: Retriever
    evaluation: str  # the folder, as given
    results: EvaluationResults
    ndcg: dict[str, dict[str, float]] = field(default_factory=dict)  # cell -> query -> nDCG@10 (native queries)
    finds: dict[str, dict[str, bool]] = field(default_factory=dict)  # cell -> query -> relevant document in top 10


def _qrels(folder: Path, task: str, lang: str, split: str) -> dict[str, dict[str, int]]:
    path = folder / "qrels" / f"{task}-{lang}.{split}.qrels"
    if not path.is_file():
        raise InputError(path, "missing: the evaluation folder is incomplete (run mmedbench evaluate again)")
    return read_qrels(path)


def read_evaluation(folder: Path, split: str) -> list[SystemScores]:
    """Every system of one evaluation folder, with per-query scores of its filled cells."""
    folder = Path(folder)
    res = EvaluationResults.from_disk(folder)
    if split not in res.splits:
        raise InputError(folder / "results.json", f"holds no {split} split (it has {', '.join(res.splits)})", field="splits")
    out = {r.name: SystemScores(r, str(folder), res) for r in res.retrievers}
    for c in res.cells:
        if c.split != split or c.query_set != "native" or c.metrics is None or c.run is None:
            continue
        cell = f"{c.task}/{c.lang}"
        qrels = _qrels(folder, c.task, c.lang, split)
        path = folder / c.run
        try:
            run = parse_run(path.read_bytes(), path)
        except FileNotFoundError:
            raise InputError(path, "missing: the evaluation folder is incomplete (run mmedbench evaluate again)") from None
        run = {q: docs for q, docs in run.items() if docs}
        scores = {q: v["ndcg_at_10"] for q, v in per_query(qrels, run).items()}
        got = round(mean(list(scores.values()), "ndcg_cut_10"), 6)
        if got != c.metrics.ndcg_at_10:
            raise InputError(path, f"gives nDCG@10 {got:.6f} on {cell}, results.json records {c.metrics.ndcg_at_10:.6f}: "
                                   "changed after mmedbench evaluate wrote it (evaluate again)")
        out[c.retriever].ndcg[cell] = scores
        out[c.retriever].finds[cell] = found(qrels, run)
    return [out[r.name] for r in res.retrievers]
