"""The results of `mmedbench evaluate` (results.json): strict, so a drifting file fails loudly.

Every number is computed from the release's own files; a cell with no query in a split
has `metrics: null` (never a number). Floats are rounded to 6 decimals.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from schemas.records import LangCode, Sha256, Strict, TaskName, Tier

Split = Literal["test", "dev"]
SPLITS: tuple[Split, ...] = ("test", "dev")
MetricName = Literal["ndcg_at_10", "recall_at_100", "mrr_at_10"]
METRICS: tuple[MetricName, ...] = ("ndcg_at_10", "recall_at_100", "mrr_at_10")
RetrieverName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
FORMAT = "mmedbench-evaluation/1"


class Metrics(Strict):
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float


class Retriever(Strict):
    name: RetrieverName  # the folder of its run files: runs/<name>/
    kind: Literal["bm25", "dense"]
    # bm25: k1, b, method, tokenizers; dense: the model's sha256, dimension, max_seq_length
    parameters: dict[str, str | int | float]


class CellResult(Strict):
    retriever: RetrieverName
    task: TaskName
    lang: LangCode
    split: Split
    queries: int  # queries of this split; 0 = empty cell, and then no metrics
    documents: int
    metrics: Metrics | None = None
    run: str | None = None  # the run file, relative to the results folder


class TierResult(Strict):
    """Concept discrimination per tier: within the set (the target ranked among its own set's
    members; a tie counts as the expectation over the tied members' orders) and over the
    cell's whole corpus."""

    retriever: RetrieverName
    lang: LangCode
    split: Split
    tier: Tier
    count: int
    ties: int  # sets whose target tied with a member
    accuracy_at_1: float | None
    mrr: float | None
    retrieval_ndcg_at_10: float | None
    retrieval_mrr_at_10: float | None


class MacroAverage(Strict):
    retriever: RetrieverName
    split: Split
    over: Literal["task", "lang"]
    key: str  # the task or the language
    cells: list[str]  # the filled cells averaged
    metrics: Metrics


class Gap(Strict):
    """English minus another language on one task (nDCG@10), and their ratio language/English."""

    retriever: RetrieverName
    split: Split
    task: TaskName
    lang: LangCode
    english: float
    other: float
    gap: float
    ratio: float | None  # None when English scores 0


class EvaluationResults(Strict):
    format: Literal["mmedbench-evaluation/1"] = FORMAT
    release: str  # the release's version
    build_id: Sha256
    splits: list[Split]
    depth: int  # documents per query in the run files
    # each metric as trec_eval computes it from runs/ and qrels/ (see results.md)
    measures: dict[MetricName, str]
    retrievers: list[Retriever]
    cells: list[CellResult]
    macro: list[MacroAverage]
    tiers: list[TierResult]
    gaps: list[Gap]
    inputs: dict[str, Sha256]  # the release files read, with their sha256
