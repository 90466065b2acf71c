"""Stage: ground each item's native text, English pivot and gold passages to CUIs.

Key concepts = grounded CUIs in the allowed semantic groups at or above the score
threshold, from the native text or the pivot. Items whose gold passages share none of
their key concepts are marked unanswerable (the allocation drops them with a reason).

Items with options (multiple-choice questions whose source has no answer-bearing text)
get their gold passages here: each option is grounded (its English text first, else its
own), the concepts the correct options name as a whole are the answers (their English
concept entries are the gold passages, and key concepts of the item), the other options'
concepts are the hard negatives; an item without such an answer gets the reason.

Passes (`[grounding] passes`): the string pass (`Grounder`: exact, stemmed, QuickUMLS,
abbreviations) grounds every text; the dense pass, when listed, then reads what it left
(`dense_targets`: texts of evidence items without a key concept, options of exam items whose
answer string matching names not) with the nearest vocabulary name in use-m's space, after
the string pool and in this process (tasks/grounding/dense_pass.py).

A shard's texts are grounded all at once (`ground_texts`): each distinct (language, text)
once, on `ground_workers()` processes forked after this process has built the grounders,
so that the workers share the matcher structures copy-on-write instead of holding a copy
each. Results come back in request order, so the output bytes do not depend on the worker
count.
"""
from __future__ import annotations

import functools
import gc
import json
import multiprocessing
import os
import re
import sys
import threading
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import nltk  # noqa: F401  (see below)
import pyarrow as pa
import quickumls  # noqa: F401
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.config import Language
from schemas.drops import DropCode
from common.text import normalize
from tasks.grounding.grounder import Grounder
from tasks.grounding.normalize import fold_term
from tasks.grounding.params import params_for
from tasks.grounding.stopwords import language_stopwords
from tasks.grounding.quickumls_index import (index_built, index_dir, lock_ahead, quickumls_index,
                                             wait_for_index)
from common.parquet import pylist, rows as table_rows, write_parquet
from common.workers import fork_pool, forked_child, reset_signals
from tasks.grounding.isolated import CHUNK, WORKERS_ENV, ground_workers, pool_workers  # noqa: F401  (ground_workers: tests)

# nltk and quickumls are imported here, up front, in the importing thread: nltk's lazy
# submodule imports are not thread-safe ("partially initialized module 'nltk'") and
# shards are grounded on a thread pool.

GROUNDED_SCHEMA = pa.schema([
    ("id", pa.string()), ("mentions", pa.string()), ("key_cuis", pa.list_(pa.string())),
    ("answerable", pa.bool_()),
    # items with options: the concepts their correct options name (gold passages: the concepts'
    # entries), the other options' concepts (hard negatives), or why the item has no gold passage (a drop code)
    ("answer_cuis", pa.list_(pa.string())), ("negative_cuis", pa.list_(pa.string())), ("no_passage", pa.string()),
])


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
        _concept_facts.cache_clear()
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


def confident(mention: dict, min_score: float) -> bool:
    """Pure: does a mention count? A string match at or above `min_score`; a dense link always
    (it passed the dense pass's own calibrated gates: a cosine is not a string score)."""
    return mention.get("pass", "string") != "string" or mention["score"] >= min_score


def key_concepts(mentions: list[dict], group_of: dict[str, str], key_groups: set[str], min_score: float) -> list[str]:
    """Pure: the CUIs that count for overlap (allowed group, confident match)."""
    return sorted({m["cui"] for m in mentions if confident(m, min_score) and group_of.get(m["cui"]) in key_groups})


_PUNCT = re.compile(r"[^\w]+")


def _words(text: str) -> str:
    return f" {_PUNCT.sub(' ', normalize(text)).strip()} "


def answerable(key_cuis: list[str], passage: str, names: dict[str, set[str]]) -> bool:
    """Pure: does the passage name one of the question's key concepts?

    A vocabulary name of a key concept must occur in the passage as whole words (after
    NFKC + casefold; CJK names as substrings). Cheaper than grounding every gold passage
    with QuickUMLS, which dominated the build at paper scale, and stricter."""
    words = _words(passage)
    flat = normalize(passage)
    for cui in key_cuis:
        for name in names.get(cui, ()):
            if name.isascii() or " " in name:
                if f" {name} " in words:
                    return True
            elif name in flat and len(name) >= 2:
                return True
    return False


_READ_BATCH = 1 << 17  # rows decoded at a time


def read_rows(path: str, key: str, values: list[str], columns: list[str]) -> pa.Table:
    """The rows of a parquet table whose `key` is one of `values`, in file order, read a
    batch at a time (never the whole table: atoms and concepts are millions of rows, and
    shard tasks run side by side). A row group's key column is read first, and its other
    columns only if it holds a wanted key: a shard of exam questions names no evidence
    passage, and the passages' text was most of a paper build's grounding I/O."""
    wanted = pa.array(values, pa.string())
    f = pq.ParquetFile(path)
    parts = []
    for group in range(f.metadata.num_row_groups):
        keep = pc.is_in(f.read_row_group(group, columns=[key]).column(0), value_set=wanted).combine_chunks()
        if not pc.any(keep).as_py():
            continue
        start = 0
        for b in f.iter_batches(batch_size=_READ_BATCH, row_groups=[group], columns=columns):
            parts.append(pa.Table.from_batches([b]).filter(keep.slice(start, b.num_rows)))
            start += b.num_rows
    return pa.concat_tables(parts) if parts else f.schema_arrow.empty_table().select(columns)


@functools.lru_cache(maxsize=2)
def _concept_facts(path: str, stamp: tuple[int, int]) -> pa.Table:
    """Every concept's CUI, semantic group and whether it has a definition, read once per
    process (`stamp`: the file's size and mtime, so a rewritten file is read again): each
    shard decoded every definition to learn which of its concepts have one (0.45 of a paper
    build's 35 grounding CPU s). Without the definitions' text this is about 20 bytes a
    concept."""
    f = pq.ParquetFile(path)
    parts = [pa.table({"cui": b["cui"], "group": b["group"],
                       "defined": pa.array([bool(d and d.strip()) for d in pylist(b["definition"])], pa.bool_())})
             for b in f.iter_batches(batch_size=_READ_BATCH, columns=["cui", "group", "definition"])]
    return pa.concat_tables(parts) if parts else pa.table({"cui": pa.array([], pa.string()), "group": pa.array([], pa.string()),
                                                           "defined": pa.array([], pa.bool_())})


def concept_facts(path: str, cuis: list[str]) -> tuple[dict[str, str], set[str]]:
    """(semantic group by CUI, the CUIs with a definition) of these concepts."""
    st = os.stat(path)
    facts = _concept_facts(path, (st.st_size, st.st_mtime_ns))
    t = facts.filter(pc.is_in(facts["cui"], value_set=pa.array(cuis, pa.string())))
    cui = pylist(t["cui"])
    return dict(zip(cui, pylist(t["group"]))), {c for c, d in zip(cui, pylist(t["defined"])) if d}


def names_of(atoms_paths: list[str], cuis: set[str]) -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    wanted = sorted(cuis)
    for path in atoms_paths:
        t = read_rows(path, "cui", wanted, ["cui", "str"])
        for cui, text in zip(pylist(t["cui"]), pylist(t["str"])):
            name = _words(text).strip()
            if len(name) >= 3 or (name and not name.isascii()):
                names.setdefault(cui, set()).add(name)
    return names


# why an item with options has no gold passage: drop codes (schemas/drops.py words them)
NO_ANSWER_CONCEPT: DropCode = "no-answer-concept"
ANSWER_NOT_KEY: DropCode = "answer-not-key"
NO_DEFINITION: DropCode = "no-definition"
AMBIGUOUS: DropCode = "ambiguous-answer"
NAMES_ANSWER: DropCode = "names-answer"
_WORDS = re.compile(r"\w+")


def option_concept(text: str, mentions: list[dict], min_score: float, stopwords: set[str]) -> str | None:
    """Pure: the concept an option names as a whole, or None.

    A concept's mentions at or above `min_score` must cover the option: whatever they leave
    is punctuation or `stopwords` (folded as `fold_term` folds; CJK: none, so only
    punctuation may be left) ("Fabry disease." -> Fabry disease; "Blood culture" -> None,
    though "Blood" is a concept: the option names a test, not blood). Several mentions of one
    concept may cover it together: a name and its abbreviation, which the grounder gives the
    long form's concept ("Severe combined immunodeficiency (SCID)", "FSH (Follicle-stimulating
    hormone)"). The best such concept wins (its best score, then its longest mention, then CUI)."""
    spans: dict[str, list[dict]] = {}
    for m in mentions:
        if m.get("pass", "string") != "string" or m["score"] < min_score:
            continue  # a dense span link is not an answer: options have their own gates (`DensePass.whole`)
        spans.setdefault(m["cui"], []).append(m)
    best = None
    for cui, ms in spans.items():
        rest = list(text)
        for m in ms:
            rest[m["start"]:m["end"]] = " " * (m["end"] - m["start"])
        if all(fold_term(w) in stopwords for w in _WORDS.findall("".join(rest))):
            key = (-max(m["score"] for m in ms), -max(m["end"] - m["start"] for m in ms), cui)
            if best is None or key < best[0]:
                best = (key, cui)
    return best[1] if best else None


def answer_concepts(options: list[dict], named: list[str | None], question_cuis: set[str], group_of: dict[str, str],
                    key_groups: set[str], defined: set[str]) -> tuple[list[str], list[str], str | None]:
    """Pure: (answer CUIs, hard-negative CUIs, reason there is no gold passage or None).

    `named[i]` is the concept option i names as a whole (`option_concept`). The gold
    passages are the correct options' concept entries: every correct option must name a
    concept in a key group that has a definition (an entry with a name only states the
    answer as an option string does: it explains nothing); the question must not name it."""
    answers, negatives = [], []
    for opt, cui in zip(options, named):
        if opt["correct"]:
            if cui is None:
                return [], [], NO_ANSWER_CONCEPT
            answers.append(cui)
        elif cui is not None:
            negatives.append(cui)
    answers = sorted(set(answers))
    if any(group_of.get(c) not in key_groups for c in answers):
        return [], [], ANSWER_NOT_KEY
    if any(c not in defined for c in answers):
        return [], [], NO_DEFINITION
    if set(negatives) & set(answers):
        return [], [], AMBIGUOUS
    if set(answers) & question_cuis:
        return [], [], NAMES_ANSWER
    return answers, sorted(set(negatives)), None


# what an item's key concepts are (a source's `key_concepts`, carried on its items): "text", every
# concept its text or pivot names; "answer", what it asks about, the concepts its correct options name
KEY_TEXT, KEY_ANSWER = "text", "answer"


def asked_about(item: dict) -> bool:
    """Pure: is the item keyed by its answer while its gold is its passages (a case and its
    explanation, `key_concepts` "answer")? Then its correct options are grounded whole,
    for every concept they mention, and the other options not at all."""
    return item.get("key_concepts") == KEY_ANSWER and bool(item["passage_ids"])


def option_requests(item: dict) -> list[tuple[str, str]]:
    """Pure: the option texts grounded up front. Options that are the gold (no passages): every
    option's English text (its own only when that names nothing, later). A case keyed by its
    answer: its correct options' English and own texts. Else none."""
    if not item["passage_ids"]:
        return [("en", o["pivot"]) for o in item.get("options") or [] if o["pivot"]]
    if not asked_about(item):
        return []
    out = []
    for o in item.get("options") or []:
        if o["correct"]:
            out += ([("en", o["pivot"])] if o["pivot"] else []) + [(item["lang"], o["text"])]
    return out


def answer_keys(correct_mentions: list[dict], group_of: dict[str, str], key_groups: set[str],
                min_score: float) -> tuple[list[str], str | None]:
    """Pure: (the key-group concepts the correct options mention, None), or ([], why there are
    none: they mention no concept at `min_score`, or only concepts outside the key groups).
    Mentioned, not named as a whole: the gold is the explanation, not a concept entry, and a
    resident-exam answer is a phrase ("intravenous corticosteroids and plasmapheresis")."""
    sure = [m for m in correct_mentions if confident(m, min_score)]
    if not sure:
        return [], NO_ANSWER_CONCEPT
    keys = key_concepts(sure, group_of, key_groups, min_score)
    return (keys, None) if keys else ([], ANSWER_NOT_KEY)


def item_keys(mode: str, text_keys: list[str], has_passages: bool, options: list[dict], named: list[str | None],
              correct_mentions: list[dict], question_cuis: set[str], group_of: dict[str, str], key_groups: set[str],
              defined: set[str], min_score: float) -> tuple[list[str], list[str], list[str], str | None]:
    """Pure: (key CUIs, answer CUIs, hard-negative CUIs, why no gold passage or None).

    "text": the key concepts are every key-group concept the text or pivot names (`text_keys`),
    with the answers' concepts for an item whose options are its gold. "answer": only what
    its correct options name: a clinical case names every finding of the patient's history
    (pain, fever), but asks about one thing; its history's concepts are not what it is
    about, and owning them would keep every other case naming pain out of the cell. An
    item with gold passages keeps them (answer CUIs empty) and is keyed by the concepts its
    correct options mention (`correct_mentions`, `answer_keys`); an exam item, whose gold is
    its answer's concept entry, by that concept (`answer_concepts`, every reason kept).
    One left without a key concept gets the typed reason."""
    if mode == KEY_ANSWER and has_passages:
        keys, why = answer_keys(correct_mentions, group_of, key_groups, min_score)
        return keys, [], [], why
    if not options or has_passages:
        return text_keys, [], [], None
    answers, negatives, no_passage = answer_concepts(options, named, question_cuis, group_of, key_groups, defined)
    # the answer is what the question is about: with "text", beside what its text names
    keys = answers if mode == KEY_ANSWER else sorted(set(text_keys) | set(answers))
    return keys, answers, negatives, no_passage


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


_POOL_LOCK = threading.Lock()  # one pool at a time per process: each already uses every core
_FORKED: list = []  # the grounders a forked worker uses, by index (set just before the fork)


def _worker_init() -> None:
    """In a forked worker: nothing the parent's other threads held at the fork may block here,
    and no file handle is shared with the parent (unqlite reads with lseek + read, and two
    processes moving one file offset would read each other's pages)."""
    forked_child()  # the tokenizer and analyzer locks are renewed by tasks.grounding.runtime's own fork hook
    for grounder in _FORKED:
        for matcher in grounder.matchers:
            matcher.after_fork()


def _ground_chunk(chunk: list[tuple[int, str]]) -> tuple[list[list[dict]], dict[tuple[int, int], object]]:
    """In a forked worker: ground texts with the grounders inherited from the parent; with
    the results, what its matchers learnt on the way (QuickUMLS: its simstring answers), by
    (grounder, matcher)."""
    results = [[m.as_dict() for m in _FORKED[g].ground(text)] for g, text in chunk]
    fresh = {}
    for g in sorted({g for g, _t in chunk}):
        for k, matcher in enumerate(_FORKED[g].matchers):
            found = matcher.take_found()
            if found is not None:
                fresh[(g, k)] = found
    return results, fresh


def _pool_ground(grounders: list[Grounder], chunks: list[list[tuple[int, str]]], workers: int) -> list[list[dict]]:
    """Fork `workers` processes that share the built grounders copy-on-write, and ground the
    chunks on them; results in chunk order, whatever the worker count."""
    global _FORKED
    _FORKED = grounders
    try:
        # the matcher structures, shared; only the youngest generation collected first: with the
        # build's collector schedule (common.gcpolicy) the next one holds up to millions of
        # objects, and collecting it cost 0.62 of a paper build's 34 grounding CPU s (7 pools)
        pool = fork_pool(workers, _worker_init, collect=0, what="grounding", env=WORKERS_ENV)
    finally:
        _FORKED = []
    try:
        results = pool.map(_ground_chunk, chunks)
    except BaseException:
        pool.terminate()
        pool.join()
        raise
    pool.close()  # workers exit on their own once the queue is drained: no signal needed
    pool.join()
    # A pool lives for one call (one shard), and its workers' n-gram caches with it: the
    # parent keeps their simstring answers, so the next call's workers inherit them instead
    # of searching again (339,756 searches for the paper build's shards on 2 workers, 252,800
    # with answers carried)
    for _results, fresh in results:
        for (g, k), found in fresh.items():
            grounders[g].matchers[k].absorb(found)
    return [r for chunk, _fresh in results for r in chunk]


# an index of fewer atoms builds in seconds: not worth a process (about two seconds of imports)
PREBUILD_MIN_ATOMS = 200_000


def _build_indexes(jobs: list[tuple[str, str, str]], ready) -> None:
    """In a helper process: take the builder lock of every index in `jobs`, say so
    (`ready`), then build them in turn, each lock released once its index is published. A
    failure is left to the parent, which builds (and reports on) an index it finds missing:
    exiting releases the locks."""
    reset_signals()  # and it dies with the parent
    try:
        langs = [(Path(atoms), Language.model_validate_json(lang_json), Path(root)) for atoms, lang_json, root in jobs]
        for atoms, lang, root in langs:
            lock_ahead(index_dir(atoms, lang, root))
        ready.set()
        for atoms, lang, root in langs:
            quickumls_index(atoms, lang, root)
    except BaseException:  # noqa: BLE001
        os._exit(1)


def prebuild_indexes(keys: dict[str, GrounderSpec], workers: int, min_atoms: int | None = None):
    """Start a process that builds every missing QuickUMLS index of these languages with at
    least `min_atoms` atoms (PREBUILD_MIN_ATOMS), largest first: the English index is the
    largest single piece of grounder setup (a minute of CPU at paper scale, seven at full),
    and an index build leaves its transient memory (GBs at full scale) with the process that
    built it, which for the build's process would last through grounding and allocation.
    The helper has locked them all when this returns, so this process, building the other
    grounders and then these in the helper's order, waits for each index instead of building
    it. Returns the process and the codes it builds, in order; (None, ()) with one worker
    or nothing worth a process."""
    if workers < 2:
        return None, ()
    todo = []
    for code, spec in sorted(keys.items()):
        if not spec.uses_quickumls() or GROUNDERS.built(spec):
            continue
        rows = pq.ParquetFile(spec.atoms_path).metadata.num_rows
        if (rows >= (PREBUILD_MIN_ATOMS if min_atoms is None else min_atoms)
                and not index_built(Path(spec.atoms_path), spec.language(), Path(spec.cache_root))):
            todo.append((-rows, code, (spec.atoms_path, spec.lang_json, spec.cache_root)))
    if not todo:
        return None, ()
    todo.sort()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_build_indexes, args=([job for _, _, job in todo], ready), daemon=True)
    proc.start()
    while not ready.wait(0.1) and proc.is_alive():  # until it holds every lock (or failed)
        pass
    return proc, tuple(code for _, code, _ in todo)


def ground_texts(requests: list[tuple[str, str]], vocab: dict, languages: dict[str, dict], threshold: float, window: int,
                 cache_root: str, workers: int | None = None) -> dict[tuple[str, str], list[dict]]:
    """Mentions of every distinct (language code, text) in `requests` (grounding is a pure
    function of the two, so a text asked for twice is grounded once), on `workers`
    processes (default `ground_workers()`) forked once this process holds the grounders."""
    unique = list(dict.fromkeys(requests))
    codes = sorted({c for c, _t in unique})
    keys = {c: GrounderSpec.of(vocab, languages, c, cache_root, threshold, window) for c in codes}
    n = pool_workers(len(unique), workers)  # where it runs: tasks/grounding/isolated.py
    if n <= 1:
        out: dict[tuple[str, str], list[dict]] = {}
        for code in codes:
            with GROUNDERS.use(keys[code], keys[code].build) as grounder:
                for c, text in unique:
                    if c == code:
                        out[(c, text)] = [m.as_dict() for m in grounder.ground(text)]
        return {r: out[r] for r in unique}
    with _POOL_LOCK, ExitStack() as held:
        helper, prebuilt = prebuild_indexes(keys, n)
        if helper is not None:
            held.push(lambda failed, *_: _stop(helper, failed is not None))
        # hold every grounder this pool uses, so that no other thread is inside one at the fork;
        # those whose index the helper builds last, in its order, each once its index is
        # published (not beside the helper's build of it: both at once were the peak)
        build_order = [c for c in codes if c not in prebuilt] + [c for c in prebuilt if c in codes]

        def build(code: str) -> Grounder:
            spec = keys[code]
            if code in prebuilt:
                wait_for_index(index_dir(Path(spec.atoms_path), spec.language(), Path(spec.cache_root)))
            return spec.build()

        built = {c: held.enter_context(GROUNDERS.use(keys[c], lambda c=c: build(c))) for c in build_order}
        grounders = [built[c] for c in codes]
        for code, grounder in zip(codes, grounders):
            if grounder.abbrev is not None and any(c == code and "(" in t for c, t in unique):
                grounder.linker  # built here, once, rather than in every worker (abbreviations need "(")
        index = {c: i for i, c in enumerate(codes)}
        flat = [(index[c], t) for c, t in unique]
        chunks = [flat[i:i + CHUNK] for i in range(0, len(flat), CHUNK)]
        mentions = _pool_ground(grounders, chunks, n)
    return dict(zip(unique, mentions))


def _stop(proc, failed: bool) -> None:
    """The index helper has published every index it builds by now (each was waited for)
    and is exiting: let it; on an error or interrupt it is stopped instead."""
    if not failed:
        proc.join(60)
    if proc.is_alive():
        proc.terminate()
    proc.join()


def _stopwords_of(vocab: dict, languages: dict[str, dict], code: str, cache_root: str, threshold: float,
                  window: int) -> set[str]:
    """The grounder's folded stop-words (`option_concept` needs them): what Grounder.__init__
    computes for a space-delimited language, none for a dictionary (CJK) one."""
    lang = GrounderSpec.of(vocab, languages, code, cache_root, threshold, window).language()
    if lang.grounder == "dictionary":
        return set()
    latin = "Latin" in lang.scripts
    return {fold_term(w, latin) for w in language_stopwords(lang)}


def _passages(items: list[dict], corpus: dict[str, str]) -> dict[str, str]:
    """The items' gold passages, "title. text" by id."""
    passages: dict[str, str] = {}
    needed = sorted({pid for it in items for pid in it["passage_ids"]})
    for task_corpus in corpus.values():
        t = read_rows(task_corpus, "id", needed, ["id", "title", "text"])
        passages.update({i: f"{ti}. {tx}" for i, ti, tx in zip(pylist(t["id"]), pylist(t["title"]), pylist(t["text"]))})
    return passages


def _requests(items: list[dict]) -> list[tuple[str, str]]:
    """Every text the shard grounds first, in order: each item's text, its English pivot,
    its options' English texts."""
    requests: list[tuple[str, str]] = []
    for it in items:
        requests.append((it["lang"], it["text"]))
        if it["lang"] != "en" and it["pivot"]:
            requests.append(("en", it["pivot"]))
        requests += option_requests(it)
    return requests


def _item_concepts(it: dict, mentions: dict, named, linked, group_of: dict[str, str], defined: set[str], params) -> tuple:
    """(native mentions, pivot mentions, key CUIs, answers, negatives, why no gold passage)."""
    key_groups = set(params.key_groups)
    native = mentions[(it["lang"], it["text"])]
    if it["lang"] == "en":
        pivot = native
    else:
        pivot = mentions[("en", it["pivot"])] if it["pivot"] else []
    text_keys = key_concepts(native + pivot, group_of, key_groups, params.min_score)
    options = [] if it["passage_ids"] else it.get("options") or []
    # an option's English text first (the richest vocabulary), else its own; string matches
    # before dense links
    concepts = [(named("en", o["pivot"]) if o["pivot"] else None) or named(it["lang"], o["text"])
                or (linked("en", o["pivot"]) if o["pivot"] else None) or linked(it["lang"], o["text"]) for o in options]
    correct = [m for r in (option_requests(it) if asked_about(it) else []) for m in mentions[r]]
    keys, answers, negatives, no_passage = item_keys(it.get("key_concepts") or KEY_TEXT, text_keys, bool(it["passage_ids"]),
                                                     options, concepts, correct, {m["cui"] for m in native + pivot},
                                                     group_of, key_groups, defined, params.min_score)
    return native, pivot, keys, answers, negatives, no_passage


def ground_shard(shard: str, corpus: dict[str, str], vocab: dict, params, cache_root: str, out_path: str,
                 stats: dict | None = None) -> str:
    """`vocab` needs "concepts" and "atoms_by_lang" for the shard's languages and English
    only, `params` (schemas.parameters.GroundingParameters) those languages: the task's
    cache key then ignores languages the shard does not use. `stats`, when given, counts
    the grounding calls ("texts") and the distinct texts grounded ("unique")."""
    languages = {c: l.model_dump(mode="json") for c, l in params.languages.items()}
    threshold, window = params.threshold, params.window
    items = table_rows(pq.read_table(shard))
    passages = _passages(items, corpus)
    # every text the shard grounds, in order; then all of them at once (in worker processes when
    # there are several), and the items assembled from the results
    requests = _requests(items)
    mentions = ground_texts(requests, vocab, languages, threshold, window, cache_root)
    stopwords: dict[str, set[str]] = {}

    def named(code: str, text: str) -> str | None:
        if code not in stopwords:
            stopwords[code] = _stopwords_of(vocab, languages, code, cache_root, threshold, window)
        return option_concept(text, mentions[(code, text)], params.min_score, stopwords[code])

    # an option's own text is grounded only when its English text names nothing
    second = [(it["lang"], o["text"]) for it in items if not it["passage_ids"] for o in it.get("options") or []
              if not (o["pivot"] and named("en", o["pivot"]))]
    mentions.update(ground_texts([r for r in second if r not in mentions], vocab, languages, threshold, window, cache_root))
    if stats is not None:
        stats["texts"] = stats.get("texts", 0) + len(requests) + len(second)
        stats["unique"] = stats.get("unique", 0) + len(mentions)
    whole: dict[tuple[str, str], tuple[str, float] | None] = {}
    if "dense" in params.passes:
        whole = _dense_pass(items, mentions, named, vocab, params, cache_root)

    def linked(code: str, text: str) -> str | None:
        found = whole.get((code, text))
        return found[0] if found else None

    # the group and definedness of the concepts the shard's mentions name (every concept
    # below comes from them), from the table's facts read once per process
    group_of, defined = concept_facts(vocab["concepts"], sorted({m["cui"] for ms in mentions.values() for m in ms}
                                                                | {f[0] for f in whole.values() if f}))
    grounded = [(it, *_item_concepts(it, mentions, named, linked, group_of, defined, params)) for it in items]
    names = names_of(sorted(vocab["atoms_by_lang"].values()), {c for g in grounded for c in g[3]})
    rows = [{"id": it["id"], "mentions": json.dumps({"native": native, "pivot": pivot}, ensure_ascii=False, sort_keys=True),
             "key_cuis": keys, "answerable": any(answerable(keys, passages.get(pid, ""), names) for pid in it["passage_ids"]),
             "answer_cuis": answers, "negative_cuis": negatives, "no_passage": no_passage}
            for it, native, pivot, keys, answers, negatives, no_passage in grounded]
    write_parquet(pa.Table.from_pylist(rows, schema=GROUNDED_SCHEMA), Path(out_path))
    return out_path


def dense_targets(items: list[dict], mentions: dict, named, group_of: dict[str, str], key_groups: set[str],
                  min_score: float) -> tuple[list[tuple[str, str]], list[tuple[tuple[str, str] | None, tuple[str, str]]]]:
    """Pure: what the dense pass reads: (texts whose spans it links, options it reads whole).

    Spans: the text and English pivot of an item keyed by its text whose gold is its passages,
    when string matching found no key concept in either (one that has one is about it already;
    a vignette is hundreds of spans), and the correct options of a case keyed by its answer
    when they mention none. An exam item's text is not read: its key is its answer. Options:
    (English text or None, own text) of every option of an item whose options are its gold
    and one of whose correct options string matching names not: its answer can only come
    from the dense pass, and its other options' links are the hard negatives beside it."""
    spans: list[tuple[str, str]] = []
    options: list[tuple[tuple[str, str] | None, tuple[str, str]]] = []
    for it in items:
        if asked_about(it):
            correct = option_requests(it)
            if not key_concepts([m for r in correct for m in mentions[r]], group_of, key_groups, min_score):
                spans += correct
            continue
        if it["passage_ids"]:
            texts = [(it["lang"], it["text"])] + ([("en", it["pivot"])] if it["lang"] != "en" and it["pivot"] else [])
            if not key_concepts([m for r in texts for m in mentions[r]], group_of, key_groups, min_score):
                spans += texts
            continue
        opts = it.get("options") or []
        if all((o["pivot"] and named("en", o["pivot"])) or named(it["lang"], o["text"]) for o in opts if o["correct"]):
            continue
        options += [(("en", o["pivot"]) if o["pivot"] else None, (it["lang"], o["text"])) for o in opts]
    return list(dict.fromkeys(spans)), list(dict.fromkeys(options))


def _dense_pass(items: list[dict], mentions: dict, named, vocab: dict, params, cache_root: str) -> dict:
    """Run the dense pass on the shard: span mentions added to `mentions` (in place), and the
    concepts options name as a whole returned, by (lang, text): an option's English text
    first, its own text only where that links nothing."""
    from tasks.grounding.dense_pass import DensePass

    key_groups = set(params.key_groups)
    group_of, _defined = concept_facts(vocab["concepts"], sorted({m["cui"] for ms in mentions.values() for m in ms}))
    spans, options = dense_targets(items, mentions, named, group_of, key_groups, params.min_score)
    if not spans and not options:
        return {}
    # under the pool lock: the encoder and the search run on OpenBLAS threads, and a fork while
    # another thread is inside BLAS hangs in OpenBLAS' pre-fork handler (blas_thread_shutdown_
    # joining a busy server thread): seen as a real-data build stuck with every thread asleep
    with _POOL_LOCK:
        dense = DensePass(dict(vocab["atoms_by_lang"]), dict(params.languages), params.dense, cache_root, ground_workers())
        for req, found in dense.span_mentions(spans, mentions).items():
            if found:
                mentions[req] = sorted(mentions[req] + found, key=lambda m: (m["start"], m["end"], m["cui"]))
        whole = dense.whole(list(dict.fromkeys(pivot or own for pivot, own in options)))
        whole.update(dense.whole(list(dict.fromkeys(own for pivot, own in options if pivot and not whole[pivot]))))
    return whole
