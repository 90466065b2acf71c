"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009) of runs already made.

    rrf_run([run_a, run_b], depth)          fused top `depth` of each query
    rrf_within([scores_a, scores_b])        one confusion set's members, fused

A document's fused score is the sum over the component runs of 1 / (K + rank), rank being
its position in that run as trec_eval reads it (score descending, a tie by doc-id
descending: the rank column of our run files); a run that does not list the document adds
nothing. Components are the run files as printed, so the fused run is a function of files
anyone can read, and fusing never runs a retriever again.
"""
from __future__ import annotations

from tasks.evaluation.runs import printed, trec_order

K = 60  # the constant of Cormack et al., also ranx's and Elasticsearch's default


def rrf_scores(runs: list[dict[str, float]]) -> dict[str, float]:
    """One query: doc -> sum over runs of 1 / (K + rank in that run). Added in the runs'
    order, so the same runs give the same floats."""
    fused: dict[str, float] = {}
    for run in runs:
        for rank, (doc, _score) in enumerate(trec_order(run), start=1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (K + rank)
    return fused


def rrf_run(runs: list[dict[str, dict[str, float]]], depth: int) -> dict[str, dict[str, float]]:
    """query -> {doc: printed fused score}, the top `depth` in trec_eval's order; a query is
    fused from the components that retrieved anything for it."""
    out: dict[str, dict[str, float]] = {}
    for qid in sorted(set().union(*runs) if runs else ()):
        fused = printed(sorted(rrf_scores([r.get(qid, {}) for r in runs]).items()))
        if fused:
            out[qid] = dict(trec_order(fused)[:depth])
    return out


def competition_ranks(scores: dict[str, float]) -> dict[str, int]:
    """1 + the number of members scoring strictly higher: tied members share a rank, so a
    tie in every component stays a tie after fusion (no order by identifier)."""
    values = sorted(scores.values(), reverse=True)
    first = {}
    for i, v in enumerate(values, start=1):
        first.setdefault(v, i)
    return {d: first[s] for d, s in scores.items()}


def rrf_within(components: list[dict[str, float]]) -> dict[str, float]:
    """A confusion set's members fused from each component's scores of the same members."""
    fused: dict[str, float] = {}
    for scores in components:
        for doc, rank in competition_ranks(scores).items():
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (K + rank)
    return fused
