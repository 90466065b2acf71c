"""Each stage's parameters: one model per stage, derived from the loaded config once.

`flows/build_release.py` lists the stages, each with its parameters model; at the start of a
run it calls every model's `derive(loaded, request)` once (`derive_all`), and a stage reads
nothing of the config but its own model. A model is what its stage's cache key hashes (file
paths in it by content: flows/caching.py), so a model holds only what changes the stage's
output, and a stage that shards its work (ground, realize) narrows it to what each shard uses
(`for_languages`), so that adding a language leaves the other shards' cache keys as they were.

`BuildRequest` is what a run adds to the config: the command's options and what the flow
found before its first stage (the input files, whether the release existed).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from schemas.config import Language, LoadedConfig


class Parameters(BaseModel):
    """A stage's parameters: strict and immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def derive(cls, loaded: LoadedConfig, request: "BuildRequest") -> "Parameters":
        raise NotImplementedError(cls.__name__)


class BuildRequest(BaseModel):
    """What one run asks for beyond its config."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    version: str
    release_root: Path
    work_dir: Path
    targets: list[str]  # the languages whose cells this run builds
    inputs: dict[str, Path]  # flows/inputs.py: every input file, by the name the config gives it
    existed_at_start: bool  # the release folder existed before the first stage ran
    retrievers: list[str] = []  # the config's retrievers, then `--evaluate`'s (the manifest lists them)
    retriever_specs: list[Any] = []  # the same, parsed (tasks.evaluation.retrievers.RetrieverSpec)
    base_release: Path | None = None  # add-language: the release whose cells are carried over


def _languages(loaded: LoadedConfig) -> dict[str, Language]:
    return {l.code: l for l in loaded.languages}


def _quotas(loaded: LoadedConfig) -> dict[str, int]:
    t = loaded.config.tasks
    return {"xqa": t.xqa.quota, "evidence": t.evidence.quota, "cd": t.cd.quota}


class VocabularyParameters(Parameters):
    format: Literal["rrf", "obo"]
    rrf_dir: str
    lat_to_lang: dict[str, str]
    max_srl: int
    preferred_en: list[str]
    roots: str
    code_names: list[dict[str, Any]]
    name_lists: list[dict[str, Any]] = []  # CUI-keyed name lists (umls/name_lists.py), paths absolute
    glossaries: list[dict[str, Any]] = []  # term translations reaching a CUI through an English name
    morphology: dict[str, str | None] = {}  # each build language's registry morphology (mentions are lemmatised by it)

    @classmethod
    def derive(cls, loaded, request):
        v = loaded.config.vocabulary
        return cls(format=v.format, rrf_dir=str(loaded.resolve(v.path)), lat_to_lang={l.umls_lat: l.code for l in loaded.languages},
                   max_srl=v.max_srl, preferred_en=loaded.registry["en"].preferred_sources, roots=v.roots,
                   code_names=[{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in v.code_names],
                   name_lists=[{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in v.name_lists],
                   glossaries=[{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in v.glossaries],
                   morphology={l.code: l.morphology for l in loaded.languages})


class SourcesParameters(Parameters):
    sources: list[dict[str, Any]]  # format, path, options, key_concepts, id_prefix (where set)
    background: list[dict[str, str]]  # task, path
    languages: list[str]
    shard_size: int

    @classmethod
    def derive(cls, loaded, request):
        cfg = loaded.config
        # id_prefix only where set: a config without one keeps its stage's cache key
        return cls(sources=[{"format": s.format, "path": str(loaded.resolve(s.path)), "options": s.options, "key_concepts": s.key_concepts,
                             **({"id_prefix": s.id_prefix} if s.id_prefix else {})} for s in cfg.sources],
                   background=[{"task": b.task, "path": str(loaded.resolve(b.path))} for b in cfg.background],
                   languages=cfg.languages, shard_size=cfg.build.shard_size)


class MemoryParameters(Parameters):
    memory: list[str]
    targets: list[str]

    @classmethod
    def derive(cls, loaded, request):
        return cls(memory=[str(loaded.resolve(m)) for m in loaded.config.translation.memory], targets=request.targets)


def dense_gates(g) -> dict[str, float]:
    """The dense pass's gates of a [grounding] config block."""
    return {"span_threshold": g.dense_span_threshold, "span_margin": g.dense_span_margin,
            "option_threshold": g.dense_option_threshold, "option_margin": g.dense_option_margin}


class GroundingParameters(Parameters):
    languages: dict[str, Language]
    key_groups: list[str]
    min_score: float
    threshold: float | None
    window: int | None
    passes: list[str] = ["string"]
    # the dense pass's gates: span_threshold, span_margin, option_threshold, option_margin
    dense: dict[str, float] = {}

    @classmethod
    def derive(cls, loaded, request):
        g = loaded.config.grounding
        return cls(languages=_languages(loaded), key_groups=g.key_groups, min_score=g.min_score,
                   threshold=g.quickumls_threshold, window=g.quickumls_window, passes=list(g.passes),
                   dense=dense_gates(g) if "dense" in g.passes else {})

    @classmethod
    def of(cls, languages: dict[str, dict], key_groups: list[str], min_score: float, threshold: float | None = None,
           window: int | None = None, passes: list[str] | None = None, dense: dict[str, float] | None = None) -> "GroundingParameters":
        """From registry entries as JSON dicts (benchmarks and tests ground outside a build)."""
        return cls(languages={c: Language.model_validate(v) for c, v in languages.items()}, key_groups=key_groups,
                   min_score=min_score, threshold=threshold, window=window, passes=passes or ["string"], dense=dense or {})

    def for_languages(self, codes: list[str]) -> "GroundingParameters":
        return self.model_copy(update={"languages": {c: self.languages[c] for c in codes}})


class RealizationParameters(Parameters):
    targets: list[str]
    languages: dict[str, Language]
    langid_backend: str

    @classmethod
    def derive(cls, loaded, request):
        return cls(targets=request.targets, languages=_languages(loaded), langid_backend=loaded.config.langid_backend)

    def for_languages(self, codes: list[str]) -> "RealizationParameters":
        return self.model_copy(update={"languages": {c: self.languages[c] for c in codes}})


class LexiconParameters(Parameters):
    """The English entries' lexicon depends on the vocabulary alone."""

    @classmethod
    def derive(cls, loaded, request):
        return cls()


class AllocationParameters(Parameters):
    languages: dict[str, Language]
    targets: list[str]  # the cells' languages, in the build's order
    memory: list[str]
    quotas: dict[str, int]
    distractors: int
    key_groups: list[str]
    dedup_threshold: float
    dedup_num_perm: int
    seed: int
    langid_backend: str
    overlap_scope: Literal["key", "all"]
    base_release: str | None

    @classmethod
    def derive(cls, loaded, request):
        cfg = loaded.config
        return cls(languages=_languages(loaded), targets=request.targets, memory=[str(loaded.resolve(m)) for m in cfg.translation.memory],
                   quotas=_quotas(loaded), distractors=cfg.tasks.cd.distractors, key_groups=cfg.grounding.key_groups,
                   dedup_threshold=cfg.dedup.threshold, dedup_num_perm=cfg.dedup.num_perm, seed=cfg.seed,
                   langid_backend=cfg.langid_backend, overlap_scope=cfg.overlap.scope,
                   base_release=str(request.base_release) if request.base_release else None)


class WriteParameters(Parameters):
    """The release folder's cells, build report and manifest (tasks/release/stage.py)."""

    version: str
    release_root: Path
    existed_at_start: bool
    base: Path | None
    languages: list[str]  # the cells written from the allocation
    dev_fraction: float
    quotas: dict[str, int]
    allow_empty_cells: bool
    empty_cell_blame: str  # the file an empty cell's error names
    config_dump: dict[str, Any]  # the manifest's `config`
    inputs: dict[str, Path]
    manifest_languages: dict[str, dict[str, Any]]
    vocabulary_dir: Path
    code_name_srl: dict[str, int]

    @classmethod
    def derive(cls, loaded, request):
        cfg = loaded.config
        config_dump = cfg.model_dump(mode="json") | {"version": request.version}
        config_dump["evaluation"]["retrievers"] = list(request.retrievers)
        return cls(version=request.version, release_root=request.release_root, existed_at_start=request.existed_at_start,
                   base=request.base_release, languages=request.targets, dev_fraction=cfg.splits.dev_fraction,
                   quotas=_quotas(loaded), allow_empty_cells=cfg.allow_empty_cells,
                   empty_cell_blame=", ".join(cfg.translation.memory) or str(loaded.path), config_dump=config_dump,
                   inputs=request.inputs, manifest_languages={l.code: l.model_dump(mode="json") for l in loaded.languages},
                   vocabulary_dir=loaded.resolve(cfg.vocabulary.path),
                   code_name_srl={c.sab: c.srl for c in [*cfg.vocabulary.code_names, *cfg.vocabulary.name_lists,
                                                         *cfg.vocabulary.glossaries]})


class EvaluationParameters(Parameters):
    """The retrievers a build scores its release with (none: the stage does nothing)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    retrievers: list[Any]  # tasks.evaluation.retrievers.RetrieverSpec
    splits: list[str]
    languages: list[str]
    registry: dict[str, Language]
    cache_dir: Path

    @classmethod
    def derive(cls, loaded, request):
        return cls(retrievers=list(request.retriever_specs), splits=loaded.config.evaluation.splits,
                   languages=loaded.config.languages, registry=dict(loaded.registry), cache_dir=request.work_dir / "embeddings")


class CardParameters(Parameters):
    """The card and Croissant metadata are made from the manifest alone."""

    @classmethod
    def derive(cls, loaded, request):
        return cls()


class AuditParameters(Parameters):
    """The audit reads the written release alone."""

    @classmethod
    def derive(cls, loaded, request):
        return cls()


class PublishParameters(Parameters):
    """Publishing renames the audited folder into place."""

    @classmethod
    def derive(cls, loaded, request):
        return cls()
