"""The results of `mmedbench evaluate` (results.json): strict, so a drifting file fails loudly.

Every number is computed from the release's own files (and, for `--run`, the run files
given); a cell with no query in a split has `metrics: null` (never a number). Floats are
rounded to 6 decimals. Every cell score, macro mean and language gap carries its 95%
bootstrap interval over the cell's queries (`statistics` says how it was drawn).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, ClassVar, Literal, get_args

from pydantic import StringConstraints, ValidationError

from common.errors import InputError

from schemas.records import LangCode, Sha256, Split, Strict, TaskName, Tier

MetricName = Literal["ndcg_at_10", "recall_at_100", "mrr_at_10"]
METRICS: tuple[MetricName, ...] = get_args(MetricName)
RetrieverName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
FORMAT = "mmedbench-evaluation/2"
QuerySet = Literal["native", "pivot"]


class Metrics(Strict):
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float


class Interval(Strict):
    """A 95% percentile bootstrap interval."""

    low: float
    high: float


Family = Literal["lexical", "english-dense", "multilingual-dense", "hybrid", "user"]


class Retriever(Strict):
    name: RetrieverName  # the folder of its run files: runs/<name>/
    # run: TREC files made by another system (--run NAME=DIR); hybrid: fused from others' runs
    kind: Literal["bm25", "dense", "run", "hybrid"]
    # bm25: k1, b, method, tokenizers; dense: the model's sha256, dimension, max_seq_length;
    # run: the number of run files read (their sha256 are in run_inputs); hybrid: k, components
    parameters: dict[str, str | int | float]
    # what the system is (tasks/evaluation/systems.py); None in a file written before families
    family: Family | None = None
    coverage: Literal["english", "multilingual"] | None = None  # the languages its model was trained for
    package: str | None = None  # the PyPI distribution that ran it
    package_version: str | None = None
    weights_sha256: Sha256 | None = None  # its weight files as shipped
    quantization: str | None = None
    dimension: int | None = None


class CellResult(Strict):
    retriever: RetrieverName
    task: TaskName
    lang: LangCode
    split: Split
    # native: the cell's own queries; pivot: the same items asked in English (its pivot control)
    query_set: QuerySet = "native"
    queries: int  # queries of this split; 0 = empty cell, and then no metrics
    documents: int
    metrics: Metrics | None = None
    intervals: dict[MetricName, Interval] | None = None
    missing_queries: int = 0  # queries of the split without a line in the run (each scored 0)
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
    all_tied: int = 0  # sets whose members all scored the same: the retriever told none apart
    accuracy_at_1: float | None
    mrr: float | None
    retrieval_ndcg_at_10: float | None
    retrieval_mrr_at_10: float | None


TierStepVerdict = Literal["beyond noise", "within noise", "too few sets"]


class TierStep(Strict):
    """One adjacent step of the tier ladder (easy -> medium or medium -> hard) in a cd cell:
    within-set accuracy@1 of the upper tier minus the lower, and whether that is beyond noise
    by a one-sided permutation test of the tier labels over the two tiers' per-set scores."""

    upper: Tier  # the easier tier, expected to score higher
    lower: Tier
    upper_sets: int
    lower_sets: int
    difference: float | None  # upper minus lower accuracy@1 (before rounding); None: a tier has no set
    p_value: float | None  # one-sided, for "upper > lower"; None: a tier has no set
    # too few sets: either tier has fewer than statistics.tier_step_min_sets sets (whatever p is);
    # else beyond noise when p_value < statistics.alpha (p exactly at alpha is within noise)
    verdict: TierStepVerdict


class TierSteps(Strict):
    """The tier ladder of one retriever on one cd cell and split."""

    retriever: RetrieverName
    lang: LangCode
    split: Split
    steps: list[TierStep]  # easy -> medium, then medium -> hard
    strictly_ordered: bool  # accuracy@1 easy > medium > hard (point values); false when a tier has no set
    all_tied: int = 0  # sets of the ladder (all tiers) whose members all scored the same
    # more than half the ladder's sets tie every member: each such set scores 1 / its size in
    # every tier, so the order (strict or not) is set by the few others, not by the tiers
    at_chance: bool = False


class MacroAverage(Strict):
    retriever: RetrieverName
    split: Split
    over: Literal["task", "lang"]
    key: str  # the task or the language
    cells: list[str]  # the filled cells averaged
    metrics: Metrics
    intervals: dict[MetricName, Interval]  # each cell resampled within itself


class PivotGap(Strict):
    """The language gap of one cell on identical items (nDCG@10): its queries asked in the
    cell's language (native) and in English (pivot), against the same corpus and qrels.
    gap = pivot - native, the mean of per-query differences over the items with a pivot."""

    retriever: RetrieverName
    split: Split
    task: TaskName
    lang: LangCode
    queries: int  # items with a pivot (the paired queries)
    cell_queries: int  # every query of the cell in the split
    native: float
    native_interval: Interval
    pivot: float
    pivot_interval: Interval
    gap: float
    gap_interval: Interval
    # every retriever's pivot score is below the floor: the cell measures item difficulty
    # more than language (asked in English, its items are still mostly not found)
    item_difficulty: bool


class GapMean(Strict):
    """Unweighted mean of the pivot gaps of several cells (each resampled within itself)."""

    retriever: RetrieverName
    split: Split
    over: Literal["task", "lang", "all"]
    key: str  # the task, the language, or "all"
    cells: list[str]
    gap: float
    interval: Interval


class FamilyContrast(Strict):
    """An English-only and a multilingual system on one cell's paired items: how much more
    the English-only one loses when the items are asked natively instead of in English."""

    english_only: RetrieverName
    multilingual: RetrieverName
    queries: int
    english_only_gap: float  # its pivot minus native nDCG@10
    multilingual_gap: float
    difference: float  # english_only_gap - multilingual_gap, paired per query
    interval: Interval


class Separation(Strict):
    """Whether a cell tells multilingual from English-only systems (tasks/evaluation/separation.py):
    some multilingual system's gap is below every English-only system's gap beyond noise."""

    split: Split
    task: TaskName
    lang: LangCode
    latin_script: bool  # the language is written in Latin script (shared words are expected)
    contrasts: list[FamilyContrast]
    separates: bool
    reading: str


class Comparison(Strict):
    """Two retrievers on one cell's native queries (nDCG@10): a paired randomization test,
    Holm-adjusted over the cells the two were compared on."""

    retriever_a: RetrieverName
    retriever_b: RetrieverName
    split: Split
    task: TaskName
    lang: LangCode
    queries: int
    a: float
    b: float
    difference: float  # a - b
    p_value: float
    p_adjusted: float
    significant: bool  # p_adjusted < alpha


class Statistics(Strict):
    confidence: float
    bootstrap_resamples: int
    randomization_permutations: int
    exact_up_to_queries: int  # randomization enumerates every sign pattern up to this many queries
    correction: Literal["holm"]
    alpha: float
    seed: int
    difficulty_floor: float  # a cell is labelled item_difficulty when every pivot score is below it
    # the tier steps' permutation test (None in a file written before tier steps were tested):
    # label patterns enumerated up to this many, else randomization_permutations shuffles
    tier_step_exact_up_to_patterns: int | None = None
    tier_step_min_sets: int | None = None  # a step with a tier below this many sets is "too few sets"


class EvaluationResults(Strict):
    format: Literal["mmedbench-evaluation/2"] = FORMAT
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
    tier_steps: list[TierSteps] = []  # in the order of `tiers`: retriever, then cell, then split
    statistics: Statistics
    pivot_gaps: list[PivotGap]
    gap_means: list[GapMean]
    # non-English cells with queries but no pivot control, with the manifest's reason
    pivotless: dict[str, str]
    comparisons: list[Comparison]
    # every non-English cell with pivots scored by an English-only and a multilingual system
    separations: list[Separation] = []
    inputs: dict[str, Sha256]  # the release files read, with their sha256
    run_inputs: dict[str, Sha256] = {}  # --run files read: "<name>/<file>" -> sha256

    # The file's one reader and one writer (mteb's TaskResult.from_disk / to_disk): evaluate
    # writes through to_disk, the leaderboard reads through from_disk.
    FILE: ClassVar[str] = "results.json"

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"

    def to_disk(self, folder: Path) -> Path:
        from common.jsonio import atomic_write

        path = Path(folder) / self.FILE
        with atomic_write(path) as fh:
            fh.write(self.to_json())
        return path

    @classmethod
    def from_disk(cls, folder: Path) -> "EvaluationResults":
        """The results of an evaluation folder (`evaluate --out`); one InputError line when it
        holds none, or one this version cannot read."""
        path = Path(folder) / cls.FILE
        if not path.is_file():
            raise InputError(folder, f"holds no {cls.FILE}: not a folder `mmedbench evaluate --out` completed")
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise InputError(path, f"is not JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise InputError(path, f"expected {FORMAT}, found {found!r}", field="format")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(path, err["msg"], field=".".join(str(p) for p in err["loc"])) from None
