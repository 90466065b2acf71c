"""Pydantic v2 records for every artefact the builder reads or writes.

Strict by design (extra="forbid", Literal vocabularies, validated string types) so
that a release that drifts from its contract fails the audit loudly.
"""
from __future__ import annotations

from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Literal, Union, get_args, get_origin

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from common.errors import InputError
from common.jsonio import read_json_object

Cui = Annotated[str, StringConstraints(pattern=r"^C\d{7}$")]
LangCode = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")]
TaskName = Literal["xqa", "cd", "evidence"]
TASKS: tuple[TaskName, ...] = get_args(TaskName)
SourceTask = Literal["xqa", "evidence"]  # the tasks a source's items feed (cd's queries are vocabulary names)
Tier = Literal["easy", "medium", "hard"]
TIERS: tuple[Tier, ...] = get_args(Tier)
Split = Literal["test", "dev"]
SPLITS: tuple[Split, ...] = get_args(Split)  # test first: every cell has it
TranslationStatus = Literal["human-translated", "machine-translated", "machine-translated and verified"]
Provenance = Literal["native", "terminology", TranslationStatus]  # where a query's text comes from
# where a pivot query's English text comes from: the item's own English source text (`native`),
# a vocabulary's English name (`terminology`, cd) or the source's own English translation of
# its non-English item (`human-translated`, e.g. IgakuQA's *_translate.jsonl)
PivotProvenance = Literal["native", "terminology", "human-translated"]
NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=False)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Passage(Strict):
    id: NonEmpty
    title: str = ""
    text: NonEmpty


class Option(Strict):
    """One choice of a multiple-choice question, in the question's language (`text`) and,
    where the source has one, in English (`pivot`)."""

    text: NonEmpty
    pivot: str | None = None
    correct: bool = False


class SourceTranslation(Strict):
    """The source's own translation of an item's text into another language (CasiMedicos' French)."""

    lang: LangCode
    text: NonEmpty
    status: TranslationStatus = "human-translated"


class SourceItem(Strict):
    """A question from a source dataset, before grounding.

    Its gold passages are `passages`, or, for a multiple-choice question whose source has no
    answer-bearing text (`options` given, `passages` empty), the English concept entries of
    the concepts its correct options name: grounding resolves them, and the other options'
    concepts are the hard negatives."""

    id: NonEmpty
    task: SourceTask
    lang: LangCode
    text: NonEmpty
    pivot: str | None = None  # English text of a non-English question
    passages: list[Passage] = []
    options: list[Option] = []
    # the source's own translations of `text` (realized before the translation memory)
    translations: list[SourceTranslation] = []

    @model_validator(mode="after")
    def _has_gold(self) -> "SourceItem":
        if not self.passages and not any(o.correct for o in self.options):
            raise ValueError("expected at least one passage, or options with a correct one")
        return self


class Mention(Strict):
    start: int
    end: int
    text: str
    cui: Cui
    score: float


class Concept(Strict):
    cui: Cui
    tui: str
    sty: str
    group: str
    name_en: str
    definition: str = ""


class ConfusionSet(Strict):
    set_id: NonEmpty
    lang: LangCode
    tier: Tier
    target_cui: Cui
    distractor_cuis: list[Cui] = Field(min_length=1)


class Document(Strict):
    """BEIR corpus.jsonl row."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    id: NonEmpty = Field(alias="_id")
    title: str
    text: NonEmpty


class Query(Strict):
    """BEIR queries.jsonl row, plus the fields the zero-overlap audit needs."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    id: NonEmpty = Field(alias="_id")
    text: NonEmpty
    lang: LangCode
    cuis: list[Cui] = Field(min_length=1)
    pivot_text: NonEmpty | None  # the English text; null for a source without one
    provenance: Provenance
    split: Split


class PivotQuery(Query):
    """pivot-queries.jsonl row: a non-English cell's query asked again in English (its
    `pivot_text`), under the same `_id`, so the cell's qrels apply unchanged. `provenance` says
    where the English text comes from (PIVOT_PROVENANCE)."""

    pivot_text: None = None
    provenance: PivotProvenance


class Qrel(Strict):
    """A relevance judgement; its parquet columns are named as BEIR's qrels header names them."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    query_id: NonEmpty = Field(alias="query-id")
    corpus_id: NonEmpty = Field(alias="corpus-id")
    score: int = Field(ge=0)


class TopRanked(Strict):
    """top_ranked/<split>.parquet row of a cd cell: the documents a query is ranked among (MTEB's
    reranking layout): its confusion set's target and distractors."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    query_id: NonEmpty = Field(alias="query-id")
    corpus_ids: list[NonEmpty] = Field(alias="corpus-ids", min_length=1)


class Translation(Strict):
    """One translation-memory entry, with provenance."""

    source_lang: LangCode
    target_lang: LangCode
    source: NonEmpty
    target: NonEmpty
    origin: Literal["human", "machine"] = "machine"
    engine: str = "human"
    status: TranslationStatus = "human-translated"


class FileEntry(Strict):
    sha256: Sha256
    rows: int | None = None
    bytes: int


class PivotCount(Strict):
    """A non-English cell's pivot control: `queries` of the cell's `of` queries have an English
    pivot (pivot-queries.jsonl), `dev_queries` of them in the dev split; `provenance` counts where
    their English comes from; `reason` says why the others have none (None when every query has one)."""

    queries: int = Field(ge=0)
    of: int = Field(ge=0)
    dev_queries: int = Field(default=0, ge=0)
    provenance: dict[PivotProvenance, int] = {}
    reason: str | None = None


class CellCount(Strict):
    queries: int
    documents: int
    qrels: int
    dev_queries: int = 0
    provenance: dict[str, int] = {}
    realization: str = ""
    pivots: PivotCount | None = None  # non-English cells (absent: an English cell, or a release from before pivots)


class ReleaseChanges(Strict):
    base_version: NonEmpty
    base_build_id: Sha256
    added_languages: list[LangCode]
    added_cells: list[str]
    unchanged_cells: list[str]


class ReleaseManifest(Strict):
    version: NonEmpty
    build_id: Sha256
    code_version: NonEmpty
    config: dict
    inputs: dict[str, Sha256]
    languages: dict[str, dict]  # registry entries of the build's languages (the audit needs them)
    sources_srl: dict[str, int]  # vocabulary sources behind the release's strings, with their SRL
    cells: dict[str, CellCount]
    files: dict[str, FileEntry]
    dropped: dict[str, int]
    changes: ReleaseChanges | None = None  # set when the release adds languages to a base release


class AuditCheck(Strict):
    name: NonEmpty
    passed: bool
    detail: str
    failures: list[str] = []


class AuditReport(Strict):
    release: NonEmpty
    version: NonEmpty
    passed: bool
    checks: list[AuditCheck]


def _arrow_type(annotation) -> pa.DataType:
    """The arrow type of a field's annotation: strings (constrained or a Literal of strings),
    ints, floats, booleans, lists of those; optional (`X | None`) as X (arrow columns are nullable)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _arrow_type(get_args(annotation)[0])
    if origin in (Union, UnionType):
        kinds = [a for a in get_args(annotation) if a is not NoneType]
        if len(kinds) == 1:
            return _arrow_type(kinds[0])
    elif origin is Literal and all(isinstance(v, str) for v in get_args(annotation)):
        return pa.string()
    elif origin is list:
        return pa.list_(_arrow_type(get_args(annotation)[0]))
    elif annotation in _ARROW_SCALARS:
        return _ARROW_SCALARS[annotation]
    raise TypeError(f"no arrow type for {annotation!r}")


_ARROW_SCALARS = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def arrow_schema(model: type[BaseModel]) -> pa.Schema:
    """The parquet columns of a record: its fields in order, under the names they are written
    with (the alias: `_id`, `query-id`), every column nullable."""
    return pa.schema([(f.alias or name, _arrow_type(f.annotation)) for name, f in model.model_fields.items()])


# The release's parquet files, one schema per record (a pivot query's file has a query's columns).
DOCUMENT_ARROW = arrow_schema(Document)
QUERY_ARROW = arrow_schema(Query)
QREL_ARROW = arrow_schema(Qrel)
TOP_RANKED_ARROW = arrow_schema(TopRanked)
CONFUSION_SET_ARROW = arrow_schema(ConfusionSet)


def load_manifest(path: Path | str) -> dict:
    """A release's manifest.json, checked against `ReleaseManifest`; anything malformed is one
    InputError naming the file, the line (when it is not JSON) or the field."""
    path = Path(path)
    raw = read_json_object(path, "a release manifest")
    try:
        ReleaseManifest.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(path, err["msg"], field=".".join(str(p) for p in err["loc"]) or None) from None
    languages = raw["config"].get("languages")
    if not isinstance(languages, list) or not all(isinstance(l, str) for l in languages):
        raise InputError(path, "expected the build's language codes", field="config.languages")
    return raw
