"""Build configuration and the language registry: TOML in, validated pydantic models out."""
from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator, model_validator

from common import paths
from common.errors import InputError
from common.jsonio import decode_text, open_input
from schemas.records import LangCode, SourceTask, Split

Engine = Literal["google", "deepl", "microsoft", "mymemory", "libre"]
ENGINES: tuple[Engine, ...] = get_args(Engine)
# language identification behind the langid gate (tasks/translation/langid.py), in the order
# `installed_backends` lists them
LangidBackend = Literal["langdetect", "lingua", "lingua-subset"]


class _Model(BaseModel):
    # strict: a TOML `true` is not the number 1 and "6" is not 6; a value of the wrong type
    # is the user's mistake, named by its field, never silently converted
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Language(_Model):
    code: LangCode
    name: str
    scripts: list[Literal["Latin", "Cyrillic", "Han", "Hiragana", "Katakana", "Hangul", "Greek", "Arabic", "Devanagari", "Hebrew", "Thai"]] = Field(min_length=1)
    min_script_share: float = Field(0.8, gt=0, le=1)
    detector_codes: list[str] = Field(min_length=1)
    umls_lat: str = Field(pattern=r"^[A-Z]{3}$")
    preferred_sources: list[str] = []
    engine_codes: dict[str, str] = {}
    shingle_n: int = Field(5, ge=1, le=10)
    grounder: Literal["quickumls", "dictionary"]
    # how retrieval evaluation tokenizes this language's texts (tasks/evaluation/lexical.py)
    segmenter: Literal["words", "jieba", "sudachi"] = "words"
    spacy_lang: str = "xx"
    stopwords: str = ""
    all_han_ok: bool = False
    forbid_scripts: list[str] = []
    # how the word matcher reduces inflected words before comparing them with vocabulary names:
    # unset keeps the grounder's default (NLTK Snowball where NLTK has one); "pymorphy3" (Russian,
    # Ukrainian: dictionary lemmas), "snowball", or "none" (exact word forms only). docs/grounding.md
    morphology: Literal["pymorphy3", "snowball", "none"] | None = None
    # optional grounding overrides; unset means the grounder's tuned default for the language
    quickumls_threshold: float | None = Field(None, gt=0, le=1)
    quickumls_window: int | None = Field(None, ge=1, le=12)
    quickumls_similarity: Literal["jaccard", "cosine", "dice", "overlap"] | None = None
    ground_abbreviations: bool | None = None
    ground_negation: bool | None = None


class CodeNamesConfig(_Model):
    """A list of concept names keyed by a code system (a national ICD-10 edition), reaching CUIs
    through Disease Ontology's xrefs to that code system (umls/code_names.py; README, "Adding a
    language")."""

    path: str  # the delimited text file, relative to the config
    lang: LangCode  # registry code of its names
    code_system: Literal["ICD10CM", "ICD9CM"]  # the DO xref prefix its codes map through
    sab: str = Field(pattern=r"^[A-Z][A-Z0-9_]{1,19}$")  # the SAB its atoms carry
    srl: int = Field(0, ge=0, le=9)  # its source restriction level (manifest, max_srl)
    licence: LicenceId  # as the Hub names it (the dataset card's licence table)
    delimiter: str = Field(",", min_length=1, max_length=1)
    encoding: Literal["utf-8", "utf-8-sig", "cp1251", "latin-1"] = "utf-8"
    code_column: str = Field(min_length=1)
    name_column: str = Field(min_length=1)
    # rows whose `active_column` holds none of `active_values` are not read (withdrawn codes)
    active_column: str | None = None
    active_values: list[str] = ["1"]
    # regular expressions removed from a name ("..., unspecified": the rest names the concept)
    strip_from_names: list[str] = []
    # regular expressions on a name with those cut: a matching row is dropped (residual
    # categories: "Other ...", "... of other veins")
    drop_names_matching: list[str] = []

    @model_validator(mode="after")
    def _patterns_compile(self):
        for field in ("drop_names_matching", "strip_from_names"):
            for i, rx in enumerate(getattr(self, field)):
                try:
                    re.compile(rx)
                except re.error as exc:
                    raise ValueError(f"{field}[{i}]: not a regular expression ({exc})") from None
        return self


# a held-out split: grounding is measured on it, so its names never enter the vocabulary
HELD_OUT_SPLITS = frozenset({"test", "dev", "devel", "valid", "validation", "heldout"})


def names_held_out_split(path: str, steps: int | None = None) -> bool:
    """Whether a path (its last `steps` steps; None: all) names a held-out split: a folder
    called so ("corpus/test/x.ann", "test/0.concept"), or a file name with it as a word
    ("bionnel_ru_dev.tsv"; not "medical_device.csv", nor a folder "test_reader" a test runs in)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    parts = parts[-steps:] if steps else parts
    if not parts:
        return False
    *folders, last = parts
    words = re.split(r"[_.\-\s]+", last.lower())
    return any(f.lower() in HELD_OUT_SPLITS for f in folders) or any(w in HELD_OUT_SPLITS for w in words)
TUI = Annotated[str, StringConstraints(pattern=r"^T\d{3}$")]


class NameListConfig(_Model):
    """Concept names keyed by CUI (umls/name_lists.py; README, "Vocabulary"): a corpus's
    mentions with their CUIs (QUAERO, NEREL-BIO, RuCCoN), a terminology table (wikidata-medical)
    or Disease Ontology's translation tables (DOIDs, reaching CUIs through DO's own xrefs)."""

    path: str  # a file, or a folder whose `include` patterns select the files
    include: list[str] = []  # glob patterns under a folder `path` ("**/*.ann")
    format: Literal["brat", "biosyn", "delimited", "do-translations"]
    lang: LangCode  # registry code of the names
    sab: str = Field(pattern=r"^[A-Z][A-Z0-9_]{1,19}$")  # the SAB its atoms carry
    srl: int = Field(0, ge=0, le=9)
    licence: LicenceId
    # running text ("mentions"): names as they occur (case, inflection) are normalised and
    # deduplicated; "terms": names as a terminology writes them
    text: Literal["mentions", "terms"] = "terms"
    # delimited: the columns; `delimiter` "\t" for tsv
    delimiter: str = Field(",", min_length=1, max_length=1)
    name_column: str | None = None
    cui_column: str | None = None
    # the source's own type label; several names: the first the file's header has (one
    # extraction's files say `category_en`, an older one's `category`)
    label_column: str | list[str] | None = None
    description_column: str | None = None  # a short English description: a definition where none is better
    # the source's labels -> the UMLS semantic type its new concepts get (its group follows,
    # umls/semgroups.py); a row whose label is not here is dropped ("unmapped_label"). Empty:
    # the source names existing concepts only (DO's translations)
    types: dict[str, TUI] = {}
    # a name the source links to several concepts stays with one that has at least this share
    # of its rows (1.0: a name linked to two concepts is always dropped)
    majority: float = Field(1.0, gt=0.5, le=1)
    # do-translations: the predicates whose translations are names, and the statuses kept
    predicates: list[str] = ["rdfs:label", "oboInOwl:hasExactSynonym"]
    statuses: list[str] = []  # empty: every status

    @model_validator(mode="after")
    def _shape(self):
        if self.format == "delimited" and (self.name_column is None or self.cui_column is None):
            raise ValueError("format 'delimited' needs name_column and cui_column")
        if self.label_column is not None and not self.types:
            raise ValueError("label_column needs `types` (each label's semantic type)")
        # the path's last two steps (where a dataset names its splits: "corpus/test",
        # "test/0.concept", "ru/bionnel_ru_dev.tsv"), not the folders the data happens to sit in
        for part, steps in [(self.path, 2), *((i, None) for i in self.include)]:
            if names_held_out_split(part, steps):
                raise ValueError(f"{part!r} names a held-out split (test/dev): grounding is measured on it, "
                                 "so only train files may feed the vocabulary")
        return self


class GlossaryConfig(_Model):
    """Human term translations without concept ids (MeSpEn, MEDUTX): a term reaches a concept
    only through an exact English name of exactly one concept (umls/name_lists.py)."""

    path: str
    member: str | None = None  # the text file inside a zip archive (MEDUTX's .utx)
    format: Literal["glossary", "utx"]
    lang: LangCode  # the language of the non-English side
    english: Literal["source", "target"] = "source"  # which side is English
    sab: str = Field(pattern=r"^[A-Z][A-Z0-9_]{1,19}$")
    srl: int = Field(0, ge=0, le=9)
    licence: LicenceId

    @model_validator(mode="after")
    def _not_english(self):
        if self.lang == "en":
            raise ValueError("a glossary adds names in another language than English (lang = 'en')")
        return self


class VocabularyConfig(_Model):
    format: Literal["rrf", "obo"] = "rrf"
    path: str  # a UMLS release folder (rrf), or a folder with disease-ontology/ and hpo/ (obo)
    max_srl: int = Field(0, ge=0, le=9)
    roots: str = "all"  # obo only: "all", "sample", or comma-separated DOID:/HP: roots
    code_names: list[CodeNamesConfig] = []  # obo only: names keyed by a code system
    name_lists: list[NameListConfig] = []  # obo only: names keyed by CUI (or DOID)
    glossaries: list[GlossaryConfig] = []  # obo only: translations reaching a CUI through an English name

    @model_validator(mode="after")
    def _code_names_need_do(self):
        if self.code_names and self.format != "obo":
            raise ValueError("code_names map codes through Disease Ontology's xrefs: they need format = \"obo\"")
        if (self.name_lists or self.glossaries) and self.format != "obo":
            raise ValueError("name_lists and glossaries extend the open vocabulary: they need format = \"obo\"")
        sabs = [c.sab for c in self.code_names] + [c.sab for c in self.name_lists] + [c.sab for c in self.glossaries]
        _listed_once(sabs, "vocabulary source's SAB")
        return self


SourceFormat = Literal["sample-jsonl", "mmedbench-jsonl", "pubmedqa", "igakuqa", "frenchmedmcqa", "rumeddanet", "cnmleqa", "beir",
                       "casimedicos"]


KeyConcepts = Literal["text", "answer"]


# A licence as the Hugging Face Hub names it (https://hf.co/docs/hub/repositories-licenses):
# "apache-2.0", "cc-by-4.0", "mit", "other", ... Stated in the config for sources whose format
# does not fix their origin (sample-jsonl, mmedbench-jsonl, beir, memories); the dataset card shows it.
LicenceId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9.+-]*$")]


class SourceConfig(_Model):
    format: SourceFormat
    path: str
    options: dict[str, Any] = {}  # adapter options, docs/sources.md
    licence: LicenceId | None = None  # None: the format's known licence (tasks/release/licences.py), else unknown
    # what an item's key concepts (its zero-overlap ownership and answerability) are: "text", every
    # concept its text names; "answer", the concepts its correct options name (a clinical case asks
    # about its answer, not every finding of its history; docs/sources.md, "Key concepts")
    key_concepts: KeyConcepts = "text"
    # prefixed to every item id of this source ("<id_prefix>-<id>"): two sources of one format
    # (a second folder of clinical cases) would otherwise give the same ids
    id_prefix: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+$")] | None = None


class BackgroundConfig(_Model):
    task: SourceTask
    path: str
    licence: LicenceId | None = None


class TranslationConfig(_Model):
    memory: list[str] = []
    licence: LicenceId | None = None  # of the memory files' translations
    engine: Engine | None = None
    url: str | None = None


# UMLS semantic groups (McCray et al.; umls/semgroups.py maps semantic types to them)
SemanticGroup = Literal["ACTI", "ANAT", "CHEM", "CONC", "DEVI", "DISO", "GENE", "GEOG", "LIVB", "OBJC", "OCCU", "ORGA",
                        "PHEN", "PHYS", "PROC"]


def _listed_once(values: list, what: str) -> list:
    seen: dict = {}
    for i, v in enumerate(values):
        if v in seen:
            raise ValueError(f"{v!r} is listed twice (at {seen[v]} and {i}); list each {what} once")
        seen[v] = i
    return values


GroundingPass = Literal["string", "dense"]
# the dense pass's gates as calibrated on dev gold (docs/grounding.md, "Dense pass")
DENSE_SPAN_THRESHOLD, DENSE_SPAN_MARGIN = 0.96, 0.15
DENSE_OPTION_THRESHOLD, DENSE_OPTION_MARGIN = 0.98, 0.15


class GroundingConfig(_Model):
    # the groups whose concepts are key concepts (overlap is counted on them): a closed list,
    # since a misspelt group would silently make no concept key
    key_groups: list[SemanticGroup] = Field(["DISO", "CHEM", "PROC", "ANAT", "GENE"], min_length=1)
    min_score: float = Field(0.8, ge=0, le=1)
    # None: each language's tuned default (tasks/grounding/params.py, docs/grounding.md)
    quickumls_threshold: float | None = Field(None, gt=0, le=1)
    quickumls_window: int | None = Field(None, ge=1, le=12)
    # the grounding passes, in order: "string" (vocabulary names matched as strings: exact,
    # stemmed, QuickUMLS), "dense" (where string matching found no key concept, the nearest
    # vocabulary name in the built-in multilingual encoder's space, use-m: tasks/grounding/dense.py)
    passes: list[GroundingPass] = Field(["string"], min_length=1)
    # the dense pass links a span, or an option read as a whole, when its cosine with the
    # nearest concept's name is at least the threshold and beats the runner-up concept's by the
    # margin; calibrated on dev gold (benchmarks/grounding_eval.py, docs/grounding.md, "Dense pass")
    dense_span_threshold: float = Field(DENSE_SPAN_THRESHOLD, ge=0, le=1)
    dense_span_margin: float = Field(DENSE_SPAN_MARGIN, ge=0, le=1)
    dense_option_threshold: float = Field(DENSE_OPTION_THRESHOLD, ge=0, le=1)
    dense_option_margin: float = Field(DENSE_OPTION_MARGIN, ge=0, le=1)

    @field_validator("passes")
    @classmethod
    def _passes_once(cls, v: list[str]) -> list[str]:
        v = _listed_once(v, "pass")
        if v[0] != "string" and "string" in v:
            raise ValueError("'string' must come first: the dense pass links what string matching left")
        return v

    @field_validator("key_groups")
    @classmethod
    def _groups_once(cls, v: list[str]) -> list[str]:
        return _listed_once(v, "group")


class DedupConfig(_Model):
    num_perm: int = Field(128, ge=16, le=1024)
    threshold: float = Field(0.7, gt=0, le=1)


class TaskQuota(_Model):
    quota: int = Field(ge=1)
    distractors: int = Field(3, ge=1, le=20)


class TasksConfig(_Model):
    xqa: TaskQuota
    evidence: TaskQuota
    cd: TaskQuota


class SplitsConfig(_Model):
    dev_fraction: float = Field(0.0, ge=0, lt=1)


class OverlapConfig(_Model):
    # "key": each query's key concepts (a cd set's target) belong to one cell; "all": every
    # concept in any role (key concept, set target, distractor) belongs to one cell
    # (ARCHITECTURE.md, "overlap scope", for the measured choice of the default)
    scope: Literal["key", "all"] = "all"


class EvaluationConfig(_Model):
    # retrievers a build scores its release with (`mmedbench build --evaluate` adds to them):
    # "bm25", "dense:MODEL_DIR" or "dense:NAME=MODEL_DIR" (a local model folder, relative to
    # this file). Results go into the release's evaluation/ and its card (docs/evaluation.md).
    retrievers: list[Annotated[str, StringConstraints(pattern=r"^(bm25|minilm|use-m|me5-small|hybrid:.+|dense:.+)$")]] = []
    splits: list[Split] = Field(["test"], min_length=1)


class BuildSettings(_Model):
    shard_size: int = Field(2000, ge=1)


VERSION_PATTERN = r"^\d+\.\d+\.\d+([.-][0-9A-Za-z.]+)?$"  # also a folder name: no "/" or ".."


def check_version_option(version: str | None) -> None:
    """`--version` names the release folder as the config's `version` does: the same rule."""
    if version is not None and not re.match(VERSION_PATTERN, version):
        raise InputError("--version", f"expected a version like 0.2.0 (digits.digits.digits, then optionally -suffix), got {version!r}")


class BuildConfig(_Model):
    version: str = Field(pattern=VERSION_PATTERN)
    seed: int = Field(ge=0, le=2**32 - 1)  # numpy's and MinHash's seeds are unsigned 32-bit
    languages: list[LangCode] = Field(min_length=1)
    registry: str = "languages.toml"
    release_dir: str = "releases"
    work_dir: str = ".mmedbench-cache"
    vocabulary: VocabularyConfig
    sources: list[SourceConfig] = Field(min_length=1)
    background: list[BackgroundConfig] = []
    translation: TranslationConfig = TranslationConfig()
    grounding: GroundingConfig = GroundingConfig()
    dedup: DedupConfig = DedupConfig()
    overlap: OverlapConfig = OverlapConfig()
    tasks: TasksConfig
    splits: SplitsConfig = SplitsConfig()
    build: BuildSettings = BuildSettings()
    evaluation: EvaluationConfig = EvaluationConfig()
    # Real data offline: a cell with neither a native source nor a translation stays empty,
    # and the manifest and card say so. The sample (and the default) demands every cell.
    allow_empty_cells: bool = False
    # language identification behind the langid gate (docs/langid.md); the audit reuses it
    langid_backend: LangidBackend = "lingua-subset"

    @field_validator("languages")
    @classmethod
    def _english_and_once(cls, v: list[str]) -> list[str]:
        _listed_once(v, "language")
        if "en" not in v:
            raise ValueError("must include 'en' (the pivot language)")
        return v


class LoadedConfig(_Model):
    """A config plus where it came from: paths resolve against `base`."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
    path: Path
    base: Path
    config: BuildConfig
    registry: dict[str, Language]

    def resolve(self, rel: str, field: str | None = None) -> Path:
        """A path the config names, relative to it, links followed (common/paths.py: a loop
        is one line naming the config and `field`)."""
        return paths.resolve(self.base / rel, field, self.path)

    def input(self, rel: str, field: str, folder: bool | None = False, what: str | None = None) -> Path:
        """An input the config names at `field`, checked as it stands (a dangling link, a
        FIFO, a folder for a file ...: one line naming the config and the field), then
        resolved. `folder`: True a folder, False a file, None either."""
        given = self.base / rel
        if folder is None:
            folder = _is_dir(given)
        check = paths.input_folder if folder else paths.input_file
        check(given, field, self.path, **({"what": what} if what else {}))
        return self.resolve(rel, field)

    @property
    def languages(self) -> list[Language]:
        return [self.registry[c] for c in self.config.languages]


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _first_error(path: Path, exc: ValidationError) -> InputError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    return InputError(path, err["msg"].removeprefix("Value error, "), field=field)


_TOML_AT = re.compile(r"^(.*) \(at line (\d+), column (\d+)\)$")


def read_toml(path: Path) -> dict:
    """A TOML file as a dict; any malformed byte or syntax is one InputError at its line."""
    with open_input(path) as fh:
        try:
            raw = fh.read()
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    text = decode_text(path, raw)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_AT.match(str(exc))
        if m:
            raise InputError(path, f"invalid TOML: {m.group(1)} (column {m.group(3)})", line=int(m.group(2))) from None
        what = str(exc).removesuffix(" (at end of document)")
        if what != str(exc):
            raise InputError(path, f"invalid TOML: {what} (at the end of the file)", line=text.count("\n") + 1) from None
        raise InputError(path, f"invalid TOML: {exc}") from None
    except RecursionError:
        raise InputError(path, "invalid TOML: arrays or tables nested too deeply") from None


def load_registry(path: Path) -> dict[str, Language]:
    raw = read_toml(path).get("languages", {})
    if not isinstance(raw, dict):
        raise InputError(path, "expected a table of languages ([languages.<code>])", field="languages")
    out: dict[str, Language] = {}
    for code, entry in raw.items():
        if not isinstance(entry, dict):
            raise InputError(path, "expected a table (name, scripts, ...)", field=f"languages.{code}")
        try:
            out[code] = Language(**{**entry, "code": code})
        except ValidationError as exc:
            err = _first_error(path, exc)
            raise InputError(path, err.message, field=f"languages.{code}" + (f".{err.field}" if err.field else "")) from None
    return out


def load_config(path: Path | str, extra_registry: Path | None = None) -> LoadedConfig:
    path = Path(path)
    if os.path.lexists(path):  # a missing one: the reader's own "file not found"
        paths.input_file(path, "--config")
    raw = read_toml(path)
    try:
        cfg = BuildConfig(**raw)
    except ValidationError as exc:
        raise _first_error(path, exc) from None
    resolved = paths.resolve(path, "--config")
    base = resolved.parent
    if os.path.lexists(base / cfg.registry):
        paths.input_file(base / cfg.registry, "registry", path)
    registry_path = paths.resolve(base / cfg.registry, "registry", path)
    registry = load_registry(registry_path)
    if extra_registry is not None:
        registry.update(load_registry(extra_registry))
    for i, code in enumerate(cfg.languages):
        if code not in registry:
            known = ", ".join(sorted(registry))
            raise InputError(path, f"unknown language code {code!r} (registry {registry_path.name} has: {known})", field=f"languages.{i}")
    return LoadedConfig(path=resolved, base=base, config=cfg, registry=registry)
