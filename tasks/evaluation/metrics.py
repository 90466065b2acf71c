"""Retrieval metrics from pytrec_eval (trec_eval's own code), and the within-set ranks of
concept discrimination.

    nDCG@10     trec_eval -c -m ndcg_cut.10
    Recall@100  trec_eval -c -m recall.100
    MRR@10      trec_eval -c -M 10 -m recip_rank   (the run cut at 10 documents per query)

`-c`: every query of the qrels counts, a query the run does not retrieve anything for
scores 0 (BM25 retrieves nothing for a query sharing no term with the corpus).
"""
from __future__ import annotations

import pytrec_eval

from tasks.evaluation.runs import trec_order

MEASURES = {
    "ndcg_at_10": "trec_eval -c -m ndcg_cut.10",
    "recall_at_100": "trec_eval -c -m recall.100",
    "mrr_at_10": "trec_eval -c -M 10 -m recip_rank",
}
_KEYS = {"ndcg_at_10": "ndcg_cut_10", "recall_at_100": "recall_100"}


def per_query(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Each metric of each query of `qrels` (0 where the run has nothing for it)."""
    full = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
    cut = {q: dict(trec_order(docs)[:10]) for q, docs in run.items() if q in qrels}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
    out = {}
    for q in sorted(qrels):
        vals = {m: full.get(q, {}).get(k, 0.0) for m, k in _KEYS.items()}
        vals["mrr_at_10"] = rr.get(q, {}).get("recip_rank", 0.0)
        out[q] = vals
    return out


def mean(values: list[float], measure: str = "recip_rank") -> float:
    """trec_eval's average of a measure over queries (pytrec_eval's aggregation)."""
    return float(pytrec_eval.compute_aggregated_measure(measure, values)) if values else 0.0


def mean_metrics(per_q: dict[str, dict[str, float]], qids: list[str]) -> dict[str, float]:
    return {m: mean([per_q[q][m] for q in sorted(qids)], k) for m, k in
            (("ndcg_at_10", "ndcg_cut_10"), ("recall_at_100", "recall_100"), ("mrr_at_10", "recip_rank"))}


def within_set(target: str, scores: dict[str, float]) -> tuple[float, float, bool]:
    """(accuracy@1, reciprocal rank, tied) of `target` among its set's members `scores`.
    Members tied with the target are ordered at random in expectation: no tie-break by
    identifier, which would decide a set of equal scores by the order of its CUIs."""
    t = scores[target]
    above = sum(1 for d, s in scores.items() if d != target and s > t)
    tied = sum(1 for d, s in scores.items() if d != target and s == t)
    ranks = range(above + 1, above + tied + 2)
    acc = 1.0 / (tied + 1) if above == 0 else 0.0
    rr = sum(1.0 / r for r in ranks) / len(ranks)
    return acc, rr, tied > 0


def all_tied(scores: dict[str, float]) -> bool:
    """Every member of the set scored the same: the retriever told none of them apart (a
    Cyrillic query against English entries under BM25 shares no token with any of them)."""
    return len(set(scores.values())) <= 1
