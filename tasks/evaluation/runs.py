"""TREC run and qrels files: what trec_eval reads, so anyone can re-score a run.

A run line is `query-id Q0 doc-id rank score tag`, the score printed with 6 decimals.
trec_eval ignores the rank column: it orders a query's documents by score, a tie by
doc-id descending. The lines are written in that very order, so the rank column is the
rank trec_eval uses, and the metrics are computed from the printed scores (what trec_eval
reads), never from unrounded ones.
"""
from __future__ import annotations

from pathlib import Path

from common.errors import InputError
from common.jsonio import atomic_write

DECIMALS = 6


def format_score(score: float) -> str:
    s = f"{score:.{DECIMALS}f}"
    return "0.000000" if s == "-0.000000" else s


def trec_order(docs: dict[str, float]) -> list[tuple[str, float]]:
    """trec_eval's order of one query's documents: score descending, then doc-id descending."""
    return sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)


def printed(ranked: list[tuple[str, float]]) -> dict[str, float]:
    """A ranking as trec_eval will read it back: each score at the printed precision."""
    return {d: float(format_score(s)) for d, s in ranked}


def write_run(path: Path, run: dict[str, dict[str, float]], tag: str) -> None:
    """`run`: query-id -> {doc-id: printed score}; queries in sorted order."""
    with atomic_write(path) as fh:
        for qid in sorted(run):
            for rank, (doc, score) in enumerate(trec_order(run[qid]), start=1):
                fh.write(f"{qid} Q0 {doc} {rank} {format_score(score)} {tag}\n")


def read_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            f = line.split()
            if len(f) != 6:
                raise InputError(path, "expected 'query-id Q0 doc-id rank score tag'", n)
            run.setdefault(f[0], {})[f[2]] = float(f[4])
    return run


def write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    """TREC qrels (`query-id 0 doc-id relevance`), the format trec_eval reads."""
    with atomic_write(path) as fh:
        for qid in sorted(qrels):
            for doc in sorted(qrels[qid]):
                fh.write(f"{qid} 0 {doc} {qrels[qid][doc]}\n")


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(r)
    return qrels
