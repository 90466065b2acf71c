"""A submission's metadata, and the leaderboard's tables (leaderboard.json).

A submitted system is a folder of TREC run files (what `mmedbench evaluate --run NAME=DIR`
scores) and this metadata, a small TOML file beside them (submission.toml):

    run = "me5-small-sub"          # the NAME it was evaluated under (--run NAME=DIR)
    name = "multilingual-e5-small (4-bit)"   # shown on the page, as text
    family = "multilingual-dense"
    coverage = "multilingual"      # english-only, multilingual, biomedical or undeclared
    link = "https://huggingface.co/intfloat/multilingual-e5-small"
    licence = "CC-BY-4.0"          # the licence of the run files (an SPDX identifier)
"""
from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import StringConstraints

from schemas.records import Strict
from schemas.results import Interval, RetrieverName

LEADERBOARD_FORMAT = "mmedbench-leaderboard/1"
Coverage = Literal["english-only", "multilingual", "biomedical", "undeclared"]
COVERAGES: tuple[str, ...] = get_args(Coverage)
# the built-in families (tasks/evaluation/systems.py) and the kinds of system people submit
SubmittedFamily = Literal["lexical", "english-dense", "multilingual-dense", "biomedical-dense", "learned-sparse",
                          "late-interaction", "reranker", "hybrid", "other"]
Family = Literal["lexical", "english-dense", "multilingual-dense", "biomedical-dense", "learned-sparse",
                 "late-interaction", "reranker", "hybrid", "other", "user"]
# free text, one line: shown escaped, never as markup
DisplayName = Annotated[str, StringConstraints(min_length=1, max_length=80, pattern=r"^[^\x00-\x1f\x7f]+$")]
# http(s) only (a javascript: link would run on a click), no space, quote or angle bracket
Link = Annotated[str, StringConstraints(max_length=300, pattern=r"^https?://[^\s\"'<>\\`]+$")]
Licence = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+-]{0,63}$")]


class Submission(Strict):
    run: RetrieverName
    name: DisplayName
    family: SubmittedFamily
    coverage: Coverage
    link: Link
    licence: Licence


class RankedScore(Strict):
    system: str
    score: float
    interval: Interval | None
    rank_low: int
    rank_high: int
    rank: str  # "2-4", or "1" when the range is one place


class Gap(Strict):
    gap: float  # pivot minus native nDCG@10
    interval: Interval
    cells: list[str]


class SystemRow(Strict):
    system: str  # the name in the evaluation (runs/<system>/)
    name: str  # shown
    source: Literal["built-in", "submitted", "evaluated"]
    family: Family
    coverage: Coverage
    model: str | None  # what runs (built-ins)
    link: str | None
    licence: str | None
    evaluation: str  # the folder it came from, as given
    macro: RankedScore
    per_task: dict[str, float]  # over the leaderboard's cells of the task
    per_lang: dict[str, float]
    gap_per_lang: dict[str, Gap]  # from the evaluation's results.json (its own cells with pivots)


class PairTest(Strict):
    a: str
    b: str
    difference: float
    p_value: float
    p_adjusted: float
    significant: bool


class CellItemsSummary(Strict):
    queries: int
    differing: int  # queries on which the systems' nDCG@10 are not all equal
    differing_share: float
    all_find: int  # every system has a relevant document in its top 10
    none_find: int  # no system has


class CellTable(Strict):
    task: str
    lang: str
    queries: int
    rows: list[RankedScore]  # best first
    pairs: list[PairTest]
    items: CellItemsSummary


class Leaderboard(Strict):
    format: Literal["mmedbench-leaderboard/1"] = LEADERBOARD_FORMAT
    release: str
    build_id: str
    split: str
    measure: str  # nDCG@10, as trec_eval computes it
    test: str
    correction: str
    alpha: float
    confidence: float
    cells: list[str]  # the cells every system scored: the macro score's
    left_out: dict[str, list[str]]  # cells some system did not score -> the systems that did
    systems: list[SystemRow]  # best macro score first
    pairs: list[PairTest]  # on the macro score
    cell_tables: list[CellTable]
    items_file: str
