"""The grounder cache: one `Grounder` per configuration per process (`GROUNDERS`, keyed by
a `GrounderSpec`), built once and shared by the shards' threads and, copy-on-write, by the
forked workers of the pool (pool.py); `drop_grounders` frees them all.
"""
from __future__ import annotations

import gc
import json
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nltk  # noqa: F401  (see below)
import pyarrow as pa
import quickumls  # noqa: F401

from schemas.config import Language
from tasks.grounding.grounder import Grounder
from tasks.grounding.params import params_for
from tasks.grounding.quickumls_index import quickumls_index
from tasks.grounding.reads import forget_concept_facts

# nltk and quickumls are imported here, up front, in the importing thread: nltk's lazy
# submodule imports are not thread-safe ("partially initialized module 'nltk'") and
# grounders are built on the shards' thread pool.


class SharedGrounders:
    """One grounder per configuration per process, used by one thread at a time.

    Grounders were once per thread (QuickUMLS' simstring reader and spaCy pipelines are
    not documented as thread-safe); at paper scale every pool thread then held its own
    matchers over 2.2M English atoms and the build peaked at 14.3 GB. Grounding is pure
    Python and holds the GIL, so serialising calls on one grounder costs no throughput,
    and the process holds each language's structures once. Construction happens under the
    entry's lock, so concurrent shards never build the same grounder twice. Parallelism
    comes from forked worker processes (`ground_texts`), which share these grounders
    copy-on-write."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict = {}  # key (a GrounderSpec) -> [lock, grounder or None]

    @contextmanager
    def use(self, key, build):
        with self._lock:
            entry = self._entries.setdefault(key, [threading.Lock(), None])
        with entry[0]:
            if entry[1] is None:
                entry[1] = build()
            yield entry[1]

    def __len__(self) -> int:
        return sum(e[1] is not None for e in self._entries.values())

    def built(self, key) -> bool:
        with self._lock:
            entry = self._entries.get(key)
        return entry is not None and entry[1] is not None

    def clear(self) -> None:
        """Free every grounder (the flow calls this once all shards are grounded)."""
        with self._lock:
            self._entries = {}
        forget_concept_facts()
        gc.collect()
        _return_freed_memory()


def _return_freed_memory() -> None:
    """Hand freed heap back to the OS (glibc keeps it in per-thread arenas otherwise, and
    the allocation stage would then grow on top of the grounders' old footprint). At paper
    scale arrow's pool alone held about 0.5 GB here after the grounders were dropped."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass
    pa.default_memory_pool().release_unused()  # and arrow's pool (mimalloc) its cached pages


GROUNDERS = SharedGrounders()


def drop_grounders() -> None:
    GROUNDERS.clear()
    dense = sys.modules.get("tasks.grounding.dense_pass")  # imported only where a dense pass ran
    if dense is not None:
        dense.drop_names()


@dataclass(frozen=True)
class GrounderSpec:
    """Everything a language's grounder is built from (and its key in GROUNDERS): the
    language's atoms table, its registry entry as JSON, the index cache folder and the
    configured QuickUMLS overrides (None: the language's tuned default)."""

    atoms_path: str
    lang_json: str
    cache_root: str
    threshold: float | None
    window: int | None

    @classmethod
    def of(cls, vocab: dict, languages: dict[str, dict], code: str, cache_root: str, threshold: float | None,
           window: int | None) -> "GrounderSpec":
        return cls(vocab["atoms_by_lang"][code], json.dumps(languages[code], sort_keys=True), cache_root, threshold, window)

    def language(self) -> Language:
        return Language.model_validate_json(self.lang_json)

    def uses_quickumls(self) -> bool:
        lang = self.language()
        return lang.grounder != "dictionary" and params_for(lang, self.threshold, self.window).quickumls

    def build(self) -> Grounder:
        return Grounder(Path(self.atoms_path), self.language(), Path(self.cache_root), self.threshold, self.window)


def prepare_grounders(vocab: dict, languages: dict[str, dict], threshold: float, window: int, cache_root: str,
                      indexes_only: bool = False) -> None:
    """Build (once per process) the grounders of these languages; with `indexes_only`, only
    their on-disk QuickUMLS indexes (benchmarks build those outside the timed runs)."""
    for code in sorted(languages):
        spec = GrounderSpec.of(vocab, languages, code, cache_root, threshold, window)
        if indexes_only:
            if spec.uses_quickumls():
                quickumls_index(Path(spec.atoms_path), spec.language(), Path(cache_root))
            continue
        with GROUNDERS.use(spec, spec.build):
            pass
