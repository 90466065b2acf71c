"""Pydantic v2 records for every artefact the builder reads or writes.

Strict by design (extra="forbid", Literal vocabularies, validated string types) so
that a release that drifts from its contract fails the audit loudly.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from common.errors import InputError
from common.jsonio import read_json_object

Cui = Annotated[str, StringConstraints(pattern=r"^C\d{7}$")]
LangCode = Annotated[str, StringConstraints(pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")]
TaskName = Literal["xqa", "cd", "evidence"]
Tier = Literal["easy", "medium", "hard"]
TIERS: tuple[Tier, ...] = ("easy", "medium", "hard")
TASKS: tuple[TaskName, ...] = ("xqa", "cd", "evidence")
Provenance = Literal[
    "native",
    "terminology",
    "human-translated",
    "machine-translated",
    "machine-translated and verified",
]
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


class SourceItem(Strict):
    """A question from a source dataset, before grounding.

    Its gold passages are `passages`, or, for a multiple-choice question whose source has no
    answer-bearing text (`options` given, `passages` empty), the English concept entries of
    the concepts its correct options name: grounding resolves them, and the other options'
    concepts are the hard negatives."""

    id: NonEmpty
    task: Literal["xqa", "evidence"]
    lang: LangCode
    text: NonEmpty
    pivot: str | None = None  # English text of a non-English question
    passages: list[Passage] = []
    options: list[Option] = []

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
    split: Literal["test", "dev"]


class PivotQuery(Query):
    """pivot-queries.jsonl row: a non-English cell's query asked again in English (its
    `pivot_text`), under the same `_id`, so the cell's qrels apply unchanged. `provenance` says
    where the English text comes from (PIVOT_PROVENANCE)."""

    pivot_text: None = None
    provenance: PivotProvenance


class Qrel(Strict):
    query_id: NonEmpty
    corpus_id: NonEmpty
    score: int = Field(ge=0)


class Translation(Strict):
    """One translation-memory entry, with provenance."""

    source_lang: LangCode
    target_lang: LangCode
    source: NonEmpty
    target: NonEmpty
    origin: Literal["human", "machine"] = "machine"
    engine: str = "human"
    status: Literal["human-translated", "machine-translated", "machine-translated and verified"] = (
        "human-translated"
    )


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
