"""Retriever specs and their searchers.

    bm25 | minilm | use-m | me5-small      built-in systems (tasks/evaluation/systems.py)
    hybrid:A+B                             reciprocal rank fusion of systems A and B's runs
    dense:MODEL_DIR | dense:NAME=MODEL_DIR a user's local sentence-transformers folder
    dense:MODEL_DIR@multilingual           ... declaring its language coverage (english or
                                           multilingual), so that it takes a side in the
                                           separation check (tasks/evaluation/separation.py)

A searcher answers, for one cell, the top documents of each query and the scores of a
confusion set's members. Indexes and embeddings are shared between cells by corpus
content: the xqa corpus of six languages is indexed (or encoded) once.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from common.errors import InputError
from schemas.config import Language
from tasks.evaluation.cells import Cell
from tasks.evaluation.lexical import B, K1, BM25Index, document_text, tokenizer_for, tokenizer_named
from tasks.evaluation.systems import BUILTINS, missing_package, package_version

Progress = Callable[[str], None]
SPEC_HELP = ("expected bm25, minilm, use-m, me5-small, hybrid:A+B (A and B: systems of this evaluation), "
             "dense:MODEL_DIR or dense:NAME=MODEL_DIR, optionally ending @english or @multilingual")
DECLARABLE = ("english", "multilingual")  # what a user's dense model may declare (systems.Coverage)
_DECLARED = re.compile(r"^(.*)@([a-z][a-z-]*)$")


def split_coverage(rest: str) -> tuple[str, str | None]:
    """`NAME=DIR@multilingual` -> (`NAME=DIR`, "multilingual"). A folder whose own name ends
    in @word stays a folder: only a suffix that is no existing path is read as a declaration."""
    m = _DECLARED.match(rest)
    if m is None or Path(rest.partition("=")[2] or rest).expanduser().exists():
        return rest, None
    if m.group(2) not in DECLARABLE:
        raise InputError(f"dense:{rest}", f"coverage {m.group(2)!r}: expected @english or @multilingual "
                                          "(the languages the model was trained for)")
    return m.group(1), m.group(2)


@dataclass(frozen=True)
class RetrieverSpec:
    name: str
    kind: str  # "bm25" | "dense" | "hybrid"
    model_dir: Path | None = None
    family: str = "user"
    coverage: str | None = None  # "english" | "multilingual": what the separation check reads
    builtin: str | None = None  # the BUILTINS key, for a built-in system
    components: tuple[str, ...] = ()  # hybrid: its systems' specs as given, or names of other systems
    component_names: tuple[str, ...] = ()  # hybrid: the systems fused, by name


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")[:56] or "model"


def _builtin(key: str) -> RetrieverSpec:
    b = BUILTINS[key]
    if key == "bm25":
        return RetrieverSpec(b.name, "bm25", family=b.family, builtin=key)
    model_dir = None
    if key == "minilm":
        from common.encoders import minilm_folder

        model_dir = minilm_folder()
    elif package_version(b.package) is None:
        raise InputError(f"-r {key}", missing_package(key))
    return RetrieverSpec(b.name, "dense", model_dir, b.family, b.coverage, key)


def _hybrid(spec: str, base: Path | None) -> RetrieverSpec:
    parts = spec[len("hybrid:"):].split("+")
    if len(parts) < 2 or not all(parts) or len(set(parts)) != len(parts):
        raise InputError(spec, "a hybrid fuses two or more different systems: hybrid:A+B (e.g. hybrid:bm25+use-m)")
    names = []
    for part in parts:
        if part.startswith("hybrid:"):
            raise InputError(spec, "a hybrid's component cannot itself be a hybrid")
        names.append(parse_retriever(part, base).name if part in BUILTINS or part.startswith("dense:") else _slug(part))
    return RetrieverSpec("rrf-" + "-".join(names)[:60], "hybrid", family="hybrid", components=tuple(parts),
                         component_names=tuple(names))


def parse_retriever(spec: str, base: Path | None = None) -> RetrieverSpec:
    """A retriever from its command-line spec; a built-in's package and a dense model folder
    are checked here, before any work (relative paths resolve against `base`, default the
    current folder)."""
    from tasks.evaluation.dense import check_model_dir

    if spec in BUILTINS:
        return _builtin(spec)
    if spec.startswith("hybrid:"):
        return _hybrid(spec, base)
    if spec.startswith("dense:") and len(spec) > 6:
        rest, coverage = split_coverage(spec[6:])
        name, _, path = rest.partition("=") if "=" in rest else ("", "", rest)
        model_dir = Path(path).expanduser()
        if not model_dir.is_absolute() and base is not None:
            model_dir = base / model_dir
        check_model_dir(model_dir)
        if not name:  # a package's generic "model" folder is named by its package
            folder = Path(os.path.abspath(model_dir))
            name = folder.parent.name if folder.name in ("model", "models") else folder.name
        return RetrieverSpec(f"dense-{_slug(name)}", "dense", model_dir, coverage=coverage)
    raise InputError(spec, f"unknown retriever ({SPEC_HELP})")


def parse_retrievers(specs: list[str], base: Path | None = None, others: tuple[str, ...] = ()) -> list[RetrieverSpec]:
    """Every spec in the order given, a hybrid's components just before it where they are not
    given themselves (a component may also name another system of the evaluation, such as
    a --run NAME, listed in `others`)."""
    given = [parse_retriever(s, base) for s in specs]
    named = {r.name for r in given if r.kind != "hybrid"}
    out: list[RetrieverSpec] = []
    for s, spec in zip(specs, given):
        for part in spec.components:
            if part in BUILTINS or part.startswith("dense:"):
                sub = parse_retriever(part, base)
                if sub.name not in named | set(others) and sub.name not in [r.name for r in out]:
                    out.append(sub)
            elif _slug(part) not in others:
                raise InputError(s, f"the hybrid's component {part!r} is no system of this evaluation ({SPEC_HELP})")
        out.append(spec)
    names = [r.name for r in out]
    for n in names:
        if names.count(n) > 1:
            raise InputError(n, "two retrievers with the same name (name one: dense:NAME=MODEL_DIR)")
    if not out:
        raise InputError("--retriever", "no retriever given")
    return out


class Bm25Searcher:
    def __init__(self, index: BM25Index, queries: list[str]):
        self.index, self.queries = index, queries

    def top(self, k: int) -> list[list[tuple[str, float]]]:
        return self.index.top_many(self.queries, k)

    def within(self, i: int, members: list[str]) -> dict[str, float]:
        return dict(self.index.within(self.queries[i], members))


class Bm25Retriever:
    kind = "bm25"

    def __init__(self, spec: RetrieverSpec, registry: dict[str, Language], progress: Progress | None = None):
        self.name = spec.name
        self.registry = registry
        self.progress = progress
        self._indexes: dict[tuple[str, str], BM25Index] = {}

    def parameters(self, langs: list[str]) -> dict[str, str | int | float]:
        toks = ", ".join(f"{c}={tokenizer_for(self.registry[c]).name}" for c in langs)
        return {"implementation": "bm25s", "method": "lucene", "k1": K1, "b": B, "tokenizers": toks}

    def describe(self) -> dict:
        return {"package": "bm25s", "package_version": package_version("bm25s"), "quantization": None,
                "weights_sha256": None, "dimension": None}

    def searcher(self, cell: Cell) -> Bm25Searcher:
        tok = tokenizer_for(self.registry[cell.lang])
        texts = [document_text(d) for d in cell.docs]
        key = (cell.corpus_sha, tok.key_for(texts))
        if key not in self._indexes:
            if self.progress:
                self.progress(f"{self.name}: indexing {len(texts)} documents ({key[1]} tokens)")
            self._indexes[key] = BM25Index([(d["_id"], t) for d, t in zip(cell.docs, texts)], tokenizer_named(key[1]))
        return Bm25Searcher(self._indexes[key].with_tokenizer(tok), [q["text"] for q in cell.queries])


class DenseSearcher:
    def __init__(self, index, query_emb):
        self.index, self.query_emb = index, query_emb

    def top(self, k: int) -> list[list[tuple[str, float]]]:
        return self.index.top_many(self.query_emb, k)

    def within(self, i: int, members: list[str]) -> dict[str, float]:
        return self.index.within(self.query_emb[i], members)


def make_backend(spec: RetrieverSpec, threads: int):
    from tasks.evaluation.dense import SentenceTransformersBackend

    if spec.builtin == "use-m":
        from common.encoders import UseBackend

        return UseBackend(threads)
    if spec.builtin == "me5-small":
        from common.encoders import E5Backend

        return E5Backend(threads)
    return SentenceTransformersBackend(spec.model_dir, threads)


class DenseRetriever:
    kind = "dense"

    def __init__(self, spec: RetrieverSpec, cache_dir: Path | None, progress: Progress | None = None, threads: int = 1):
        from tasks.evaluation.dense import DenseEncoder

        self.name, self.spec = spec.name, spec
        self.progress = progress
        self.backend = make_backend(spec, threads)
        self.encoder = DenseEncoder(self.backend, cache_dir)
        self._indexes: dict[str, object] = {}

    def parameters(self, langs: list[str]) -> dict[str, str | int | float]:
        return ({"implementation": self.backend.implementation, "model_sha256": self.backend.weights_sha256,
                 "dimension": self.backend.dimension, "normalized": "yes", "search": "exact"} | self.backend.describe())

    def describe(self) -> dict:
        b = BUILTINS.get(self.spec.builtin or "")
        package = b.package if b else "sentence-transformers"
        return {"package": package, "package_version": package_version(package), "weights_sha256": self.backend.weights_sha256,
                "quantization": b.quantization if b else None, "dimension": self.backend.dimension}

    def _report(self, what: str):
        if not self.progress:
            return None
        return lambda done, total: self.progress(f"{self.name}: encoded {done}/{total} {what}")

    def searcher(self, cell: Cell) -> DenseSearcher:
        from tasks.evaluation.dense import DenseIndex

        if cell.corpus_sha not in self._indexes:
            texts = [document_text(d) for d in cell.docs]
            emb = self.encoder.encode(texts, "document", self._report(f"documents of {cell.task} corpus"))
            self._indexes[cell.corpus_sha] = DenseIndex([d["_id"] for d in cell.docs], emb)
        q = self.encoder.encode([q["text"] for q in cell.queries], "query", self._report(f"{cell.name} queries"))
        return DenseSearcher(self._indexes[cell.corpus_sha], q)


def make_retriever(spec: RetrieverSpec, registry: dict[str, Language], cache_dir: Path | None, progress: Progress | None,
                   threads: int = 1):
    if spec.kind == "bm25":
        return Bm25Retriever(spec, registry, progress)
    return DenseRetriever(spec, cache_dir, progress, threads)
