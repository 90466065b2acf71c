"""Mutation testing for the core pure modules: a small AST mutator and a fork-per-mutant runner.

    python benchmarks/mutation.py                       # every module in MODULES, with its tests
    python benchmarks/mutation.py --module tasks/dedup/near_duplicates.py
    python benchmarks/mutation.py --module umls/rrf.py --tests "tests/umls/test_rrf.py -k pattern"
    python benchmarks/mutation.py --module umls/rrf.py --list      # the mutants, nothing run
    python benchmarks/mutation.py --json benchmarks/out/mutation.json --jobs 2

Each mutant changes one thing in one module (the operators below) and runs that module's
test subset (MODULES, or --tests) under pytest with `-x -m "not slow"`. A mutant is
*killed* when a test fails (or the run exceeds its time limit: three times the clean run
plus 10 s), *survived* when every test passes. Score = killed / (killed + survived);
mutants listed in EQUIVALENT (a reason each: they cannot change behaviour) are reported
apart and left out of the score. docs/testing.md has the latest scores and survivors.

Operators:
    comparison   >  <-> >=,  <  <-> <=,  == <-> !=,  in <-> not in,  is <-> is not
    arithmetic   + <-> -,  * -> /,  / -> *,  // -> *,  += <-> -=
    boolean      and <-> or,  not x -> x,  True <-> False
    constant     an int or float constant n -> n + 1
    sorted       sorted(x, ...) -> x
    return       return <expr> -> return None

Not mutated: strings, f-strings (messages), annotations, docstrings.

Speed: the runner imports the heavy third-party packages (pyarrow, numpy, pydantic,
datasketch, hypothesis, pytest) once, then forks a child per mutant; the child installs
the mutated module with an import hook (the project's own modules are imported fresh in
each child) and runs pytest in-process. Needs PYTHONHASHSEED=0 (set by re-executing).
"""
from __future__ import annotations

import argparse
import ast
import importlib.abc
import importlib.util
import json
import os
import shlex
import signal
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The modules measured and the test subset each uses (fast, targeted; all "not slow"): the
# module's own test files under tests/ (which mirrors the packages), and the neighbours that
# pin what the module computes for them.
_DEDUP = ["tests/tasks/dedup/test_dedup.py",
          "--deselect", "tests/tasks/dedup/test_dedup.py::test_deterministic_across_processes_and_hash_seeds"]
_ALLOCATION = "tests/tasks/allocation/"
MODULES: dict[str, list[str]] = {
    "tasks/dedup/near_duplicates.py": _DEDUP,
    "tasks/dedup/minhash.py": ["tests/tasks/dedup/test_minhash.py", *_DEDUP],
    "umls/rrf.py": ["tests/umls/test_rrf.py", "tests/test_fuzz_readers.py::test_rrf_reader_fuzz"],
    # the confusion sets: the tier rules, and the lexicon, hierarchy and name similarity they
    # read; confusion.py itself is the runtime (lazy, memoised, forked workers)
    "tasks/allocation/tiers.py": [_ALLOCATION + "test_tier_rules.py", _ALLOCATION + "test_confusion_tiers.py",
                                  _ALLOCATION + "test_lexicon.py", "-k", "not sample_vocabulary"],
    "tasks/allocation/lexicon.py": [_ALLOCATION + "test_lexicon.py", _ALLOCATION + "test_confusion_tiers.py",
                                    _ALLOCATION + "test_tier_rules.py", _ALLOCATION + "test_allocation_columnar.py",
                                    _ALLOCATION + "test_index_entries.py", _ALLOCATION + "test_tier_shares.py",
                                    "-k", "not sample_vocabulary"],
    "tasks/allocation/hierarchy.py": [_ALLOCATION + "test_confusion_tiers.py", _ALLOCATION + "test_allocation_columnar.py",
                                      "-k", "not sample_vocabulary"],
    "tasks/allocation/similarity.py": [_ALLOCATION + "test_name_similarities.py", _ALLOCATION + "test_confusion_tiers.py",
                                       "-k", "not sample_vocabulary"],
    "tasks/allocation/confusion.py": [_ALLOCATION + "test_confusion_pool.py", _ALLOCATION + "test_allocation_columnar.py",
                                      _ALLOCATION + "test_confusion_tiers.py", _ALLOCATION + "test_tier_shares.py",
                                      "-k", "not sample_vocabulary"],
    # (test_allocation_properties.py: hypothesis over whole allocations, 4 minutes per run on a
    # loaded machine; its contracts are pinned exactly in test_allocator.py)
    "tasks/allocation/allocator.py": [_ALLOCATION + "test_allocator.py", _ALLOCATION + "test_cd_targets.py",
                                      _ALLOCATION + "test_tier_shares.py"],
    "tasks/allocation/concept_entries.py": [_ALLOCATION + "test_concept_entries.py"],
    "tasks/audit/checks.py": ["tests/tasks/audit/test_checks.py", "tests/tasks/audit/test_tier_check.py"],
    "tasks/evaluation/tier_steps.py": ["tests/tasks/evaluation/test_tier_steps.py"],
}

# (module, source line stripped, mutation[, column, end column[, occurrence]]) -> why the
# mutant cannot change behaviour. Columns (of the mutated node, as --list shows them) only
# where one line has two alike mutants; the occurrence (0, 1, ...) where the same statement
# appears more than once in the module.
_MINHASH_PERF_ONLY = 'performance only: results are identical for every value (tests/tasks/dedup/test_minhash.py::test_tiny_caches_and_chunks_change_nothing)'

EQUIVALENT: dict[tuple, str] = {
    ("tasks/dedup/near_duplicates.py", 'm.update_batch([s.encode("utf-8") for s in sorted(shingles)])', "sorted(x) -> x"):
        "a MinHash keeps per-permutation minima: the order shingles are fed in cannot change them",
    ('tasks/dedup/minhash.py', '_MAX32 = (1 << 32) - 1', '1 -> 2', 10): 'with numpy 1.x (pinned) the 33-bit value wraps to the same uint32 maximum, and astype(uint32) drops bit 32 of the mask',
    ('tasks/dedup/minhash.py', '_MAX32 = (1 << 32) - 1', '32 -> 33'): 'with numpy 1.x (pinned) the 33-bit value wraps to the same uint32 maximum, and astype(uint32) drops bit 32 of the mask',
    ('tasks/dedup/minhash.py', 'return getattr(MinHash(num_perm=1, seed=1), "scheme", _LEGACY)', '1 -> 2'): 'any probe MinHash has the same `scheme` attribute',
    ('tasks/dedup/minhash.py', '@lru_cache(maxsize=1)', '1 -> 2'): 'cache size: speed only',
    ('tasks/dedup/minhash.py', '@lru_cache(maxsize=32)', '32 -> 33'): 'cache size: speed only',
    ('tasks/dedup/minhash.py', '@lru_cache(maxsize=4)', '4 -> 5'): 'cache size: speed only',
    ('tasks/dedup/minhash.py', 'kwargs = {"scheme": scheme} if hasattr(MinHash(num_perm=1), "scheme") else {}', '1 -> 2'): 'any probe MinHash has the same `scheme` attribute',
    ('tasks/dedup/minhash.py', 'if not kwargs and scheme != _LEGACY:', '!= -> =='): 'datasketch 2.x (pinned) has schemes, so `not kwargs` is false either way',
    ('tasks/dedup/minhash.py', 'a.setflags(write=False)', 'False -> True'): 'a read-only guard: nothing writes to the permutations',
    ('tasks/dedup/minhash.py', 'b.setflags(write=False)', 'False -> True'): 'a read-only guard: nothing writes to the permutations',
    ('tasks/dedup/minhash.py', 'nxt[-1] = size + 1', '1 -> 2', 21): "the last piece ends at its text's end either way (np.minimum with text_end)",
    ('tasks/dedup/minhash.py', 'ends = np.minimum(nxt + (n - 1), text_end)', '- -> +'): "pieces two characters longer add only n-grams of the same text that the next piece holds: each text's set is unchanged",
    ('tasks/dedup/minhash.py', 'self.table = np.empty((min(self.max_rows, 4096), self.num_perm), dtype=self.dtype)', '4096 -> 4097'): 'initial table size: the table grows on demand',
    ('tasks/dedup/minhash.py', 'if hi > len(self.table):', '> -> >='): 'grows one row earlier: speed and memory only',
    ('tasks/dedup/minhash.py', 'chunk: int = 2048, group: int = 32, cache_bytes: int = 32 << 20):', '2048 -> 2049'): _MINHASH_PERF_ONLY,
    ('tasks/dedup/minhash.py', 'chunk: int = 2048, group: int = 32, cache_bytes: int = 32 << 20):', '32 -> 33'): _MINHASH_PERF_ONLY,
    ('tasks/dedup/minhash.py', 'chunk: int = 2048, group: int = 32, cache_bytes: int = 32 << 20):', '20 -> 21'): _MINHASH_PERF_ONLY,
    ('tasks/dedup/minhash.py', 'self.chunk, self.group = max(1, chunk), max(1, group)', '1 -> 2'): _MINHASH_PERF_ONLY,
    ('tasks/dedup/minhash.py', 'self._max_rows = max(2, cache_bytes // (num_perm * self._work.itemsize))', '2 -> 3'): _MINHASH_PERF_ONLY,
    ('tasks/dedup/minhash.py', 'self._max_rows = max(2, cache_bytes // (num_perm * self._work.itemsize))', '// -> *'): _MINHASH_PERF_ONLY,
    ('tasks/dedup/minhash.py', 'phv = (hv.astype(np.uint64).reshape(-1, 1) * a + b) % _MERSENNE', '1 -> 2', 49): 'numpy 1.x takes any negative dimension as the unknown one',
    ('tasks/dedup/minhash.py', 'return _fmix(hv.reshape(-1, 1), 64 if self.scheme == _AFFINE64 else 32) * a + b', '1 -> 2', 33): 'numpy 1.x takes any negative dimension as the unknown one',
    ('tasks/dedup/minhash.py', 'norms = list(map(normalize, islice(it, 256)))', '256 -> 257'): _MINHASH_PERF_ONLY,
    ('tasks/dedup/minhash.py', 'long_ix = [i for i, t in enumerate(norms) if len(t) > n]', '> -> >='): 'a text of exactly n characters is one n-gram on either path',
    ('tasks/dedup/minhash.py', 'if len(long_ix) < len(norms):', '< -> <='): 'with no short text the short path fills no row',
    ('tasks/dedup/minhash.py', 'and not getattr(lsh, "prepickle", True)', 'True -> False'): 'the default is read only for an LSH without `prepickle`, which datasketch 2.x (pinned) always has',
    ('tasks/dedup/minhash.py', 'buffer_size: int = 50000) -> None:', '50000 -> 50001'): _MINHASH_PERF_ONLY,
    ("tasks/dedup/minhash.py", "if ids is None:", "is -> is not", 19, 30, 1):
        "clearing a cache the batch fits in costs only time; when it does not fit, the local table is used either way",
    ("tasks/dedup/minhash.py", "scheme = default_scheme() if scheme is None else scheme", "is -> is not", 33, 47, 0):
        "to_leans passes the scheme to to_lean, which resolves None the same way",
    ("umls/rrf.py", "BLOCK_SIZE = 16 << 20", "16 -> 17"): "block size: memory and speed only (line numbers come from the scan)",
    ("umls/rrf.py", "BLOCK_SIZE = 16 << 20", "20 -> 21"): "block size: memory and speed only (line numbers come from the scan)",
    ("umls/rrf.py", "read_options=pacsv.ReadOptions(column_names=names, block_size=block_size, use_threads=True),",
     "True -> False"): "pyarrow's threads: speed only; batches come back in file order either way",
    ("umls/rrf.py", "with ThreadPoolExecutor(1) as pool:", "1 -> 2"):
        "the read-ahead submits one read at a time, so a second worker never has work",
    ("tasks/allocation/tiers.py", "if len(hard) < k:", "< -> <="):
        "with exactly k siblings the top-up adds close[:0], nothing",
    ("tasks/allocation/tiers.py", "if len(window) < size:  # wrap around, never past the start (no repeats)", "< -> <="):
        "a full window would add pool[:min(start, 0)], nothing",
    ("tasks/allocation/tiers.py", 'return [TIERS[(i + j) % 3] for j in range(3)] if one_tier_per_target else ["hard", "medium", "easy"]',
     "3 -> 4", 46, 47): "a fourth try repeats the first tier, which already failed for this target (memoised None)",
    ("tasks/allocation/similarity.py", "_PAD = 0x1FFFFF  # above every code point: pads a name of 1 or 2 characters to its one shingle",
     "2097151 -> 2097152"): "any pad above U+10FFFF and under 2**21 works alike: it only marks a short name's missing characters",
    ("tasks/allocation/similarity.py", "SMALL_BATCH = 8  # fewer names than this: Python sets (numpy's fixed cost per call is more)",
     "8 -> 9"): "both paths give the same floats (tests/tasks/allocation/test_name_similarities.py): which one runs is speed only",
    ("tasks/allocation/similarity.py", "if len(names) < SMALL_BATCH:", "< -> <="):
        "both paths give the same floats (tests/tasks/allocation/test_name_similarities.py): which one runs is speed only",
    ("tasks/allocation/similarity.py", "counts = np.where(lens >= 3, lens - 2, (lens > 0).astype(np.int64))", ">= -> >"):
        "a name of exactly 3 characters has 3 - 2 = 1 trigram either way",
    ("tasks/allocation/similarity.py", "counts = np.where(lens >= 3, lens - 2, (lens > 0).astype(np.int64))", "3 -> 4"):
        "a name of exactly 3 characters has 3 - 2 = 1 trigram either way",
    ("tasks/allocation/similarity.py", "code = (ext[at] << 42) | (ext[at + 1] << 21) | ext[at + 2]", "42 -> 43"):
        "the first code point moves one bit up and still overlaps neither other field: the encoding stays one-to-one",
    ("tasks/allocation/hierarchy.py", "ci = pc.index_in(child, value_set=ids).to_numpy(zero_copy_only=False).astype(np.int64)", "False -> True"):
        "ids is the union of both columns: every index is found, there are no nulls, and a zero-copy view has the same values",
    ("tasks/allocation/hierarchy.py", "pi = pc.index_in(parent, value_set=ids).to_numpy(zero_copy_only=False).astype(np.int64)", "False -> True"):
        "ids is the union of both columns: every index is found, there are no nulls, and a zero-copy view has the same values",
    ("tasks/allocation/hierarchy.py", "pairs = np.unique(ci * max(1, n) + pi)  # distinct links, as the sets were", "1 -> 2"):
        "a link needs a concept, so n >= 1; max(2, n) differs only at n = 1 (a self-link), where any base >= 1 decodes the same",
    ("tasks/allocation/hierarchy.py", "ci, pi = pairs // max(1, n), pairs % max(1, n)", "1 -> 2", 30, 31):
        "a link needs a concept, so n >= 1; max(2, n) differs only at n = 1 (a self-link), where any base >= 1 decodes the same",
    ("tasks/allocation/hierarchy.py", "ci, pi = pairs // max(1, n), pairs % max(1, n)", "1 -> 2", 49, 50):
        "a link needs a concept, so n >= 1; max(2, n) differs only at n = 1 (a self-link), where any base >= 1 decodes the same",
    ("tasks/allocation/hierarchy.py", "ids = np.fromiter(map(self._id.get, others, repeat(-1)), np.int64, len(others))", "1 -> 2"):
        "an unknown concept's id is only tested for being negative",
    ("tasks/allocation/hierarchy.py", "if len(parents) == 1:  # the common case: one parent's children, ascending already", "1 -> 2"):
        "the general path computes the same sorted siblings; the one-parent path is a shortcut",
    # lexicon.py: covering / not_covering / covering_ids first drop candidates by numpy sums
    # (`_approx_coverage`), which differ from `coverage`'s by float rounding only, far under
    # 1e-9; `coverage` then decides every candidate the prefilter lets through
    ("tasks/allocation/lexicon.py", "w = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)", "False -> True"):
        "the tokens have no nulls, so neither have their dictionary indices: a zero-copy view has the same values",
    ("tasks/allocation/lexicon.py", "rows = asc_rows[pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)]", "False -> True"):
        "list_parent_indices has no nulls: a zero-copy view has the same values",
    ("tasks/allocation/lexicon.py", "_, first = np.unique(tok_owner * max(1, len(words_list)) + w, return_index=True)", "+ -> -"):
        "owner * n - w is one-to-one too (0 <= w < n): the same (entry, word) pairs are told apart, and `first` is sorted after",
    ("tasks/allocation/lexicon.py", "_, first = np.unique(tok_owner * max(1, len(words_list)) + w, return_index=True)", "1 -> 2"):
        "differs only with at most one word, where w is always 0 and any base >= 1 tells the entries apart",
    ("tasks/allocation/lexicon.py", "self._ent_off = np.searchsorted(self._ent_c, np.arange(len(cuis) + 1))", "1 -> 2"):
        "one more offset at the end, never read: offsets are read at entry i and i + 1 for i < len(cuis)",
    ("tasks/allocation/lexicon.py", "ids = np.fromiter(map(self._index.get, candidates, repeat(-1)), np.int64, len(candidates))  # get(c, -1), in C",
     "1 -> 2"): "a candidate without an entry is only tested for a negative id (`ids >= 0`)",
    ("tasks/allocation/lexicon.py", "maybe = (self._approx_coverage(target, ids) >= threshold - 1e-9).tolist()", ">= -> >"):
        "a candidate at exactly threshold - 1e-9 by numpy has coverage under the threshold (rounding is far under 1e-9): dropped either way",
    ("tasks/allocation/lexicon.py", "maybe = (self._approx_coverage(target, ids) >= threshold - 1e-9).tolist()", "1e-09 -> 1.000000001"):
        "a wider prefilter lets more candidates through to `coverage`, which decides: speed only",
    ("tasks/allocation/lexicon.py", "maybe = ids[self._approx_coverage(target, ids) >= threshold - 1e-9].tolist()", ">= -> >"):
        "a candidate at exactly threshold - 1e-9 by numpy has coverage under the threshold (rounding is far under 1e-9): dropped either way",
    ("tasks/allocation/lexicon.py", "maybe = ids[self._approx_coverage(target, ids) >= threshold - 1e-9].tolist()", "1e-09 -> 1.000000001"):
        "a wider prefilter lets more candidates through to `coverage`, which decides: speed only",
    ("tasks/allocation/lexicon.py", "sure, unsure = (approx < threshold - 1e-9).tolist(), (approx < threshold + 1e-9).tolist()", "< -> <=", 24, 49):
        "a candidate at exactly threshold - 1e-9 by numpy has coverage under the threshold: kept as not covering either way",
    ("tasks/allocation/lexicon.py", "sure, unsure = (approx < threshold - 1e-9).tolist(), (approx < threshold + 1e-9).tolist()", "1e-09 -> 1.000000001", 45, 49):
        "fewer candidates are sure, the others go to `coverage`, which decides: speed only",
    ("tasks/allocation/lexicon.py", "sure, unsure = (approx < threshold - 1e-9).tolist(), (approx < threshold + 1e-9).tolist()", "< -> <=", 62, 87):
        "a candidate at exactly threshold + 1e-9 by numpy goes to `coverage`, which finds it covering: left out either way",
    ("tasks/allocation/lexicon.py", "sure, unsure = (approx < threshold - 1e-9).tolist(), (approx < threshold + 1e-9).tolist()", "1e-09 -> 1.000000001", 83, 87):
        "more candidates go to `coverage`, which decides: speed only",
    ("tasks/allocation/lexicon.py", "words = sorted(self.name_words(target), key=lambda w: (-self.idf.get(w, 0.0), w))", "0.0 -> 1.0"):
        "name words are kept only when in `idf`: the default is never read",
    ("tasks/allocation/lexicon.py", "return sum(idf.get(w, 0.0) for w in sorted(words))", "0.0 -> 1.0"):
        "every word summed is a name word, and name words are kept only when in `idf`: the default is never read",
    ("tasks/allocation/lexicon.py", "keep = pc.and_(keep, pc.invert(pc.is_in(toks, value_set=pa.array(sorted(stopwords), pa.string()))))", "sorted(x) -> x"):
        "is_in is set membership: the order of the value set changes nothing (the saved stop-words, which a reader sees, are sorted)",
    ("tasks/allocation/confusion.py", "if self._sent <= self._pos:  # nothing sent ahead: send the batch to read now", "<= -> <"):
        "scheduling only: which targets go to the workers when; the lists are the same (tests/tasks/allocation/test_confusion_pool.py)",
    ("tasks/allocation/confusion.py", "SET_BATCH = 64  # targets per batch sent to the workers (two batches ahead of a tier's reader at most)",
     "64 -> 65"): "batch size: scheduling only (tested at 1, 3 and 64)",
    ("tasks/allocation/confusion.py", "_CHUNK = 4  # targets per message to a worker: a few tens of ms of work at paper scale", "4 -> 5"):
        "message size: scheduling only",
    ("tasks/allocation/confusion.py", "sets = tiers[0]._sets", "0 -> 1"): "every tier of one lazy_candidates call shares one _TargetSets",
    ("tasks/allocation/confusion.py", "if hit is not None or i in self._pending:", "or -> and"):
        "a memoised target then goes through the per-tier path, which recomputes the same sets (speed only)",
    ("tasks/allocation/tiers.py", "if m <= 0 or not items:", "<= -> <"):
        "with m = 0 and items the cut takes every item and near[:0] is empty: [] either way",
    ("tasks/allocation/tiers.py", "entry_of = np.array([lexicon.entry_index(c) if c in concepts and c not in excluded else -1 for c in hierarchy.cuis],",
     "1 -> 2"): "entry_of is only ever compared with >= 0: -1 and -2 both mean no entry",
    ("tasks/allocation/tiers.py", "close = lexicon.covering(cui, [c for c in sorted(pool) if c not in hard], HARD_MIN_COVERAGE)", "sorted(x) -> x"):
        "covering keeps its input order, and close is then sorted by (coverage, similarity, CUI), a total order",
    ("tasks/allocation/tiers.py", "return tuple(sorted([*confusers[:n], *others[: k - n]]))", "- -> +"):
        "others holds k - n concepts already (first_sorted cut it): others[:k + n] is others",
    ("tasks/allocation/tiers.py", 'start = int(target_order(pools.seed, cui)("pool")[:12], 16) % max(1, len(pool))', "1 -> 2"):
        "differs only for a type of one concept, the target itself, whose window is empty either way",
    ("tasks/allocation/allocator.py", "return self.filled[cell] / max(1, self.quotas.get(cell, 0))", "1 -> 2"):
        "fill ratios are compared only between cells with room; at quota 1 such a cell holds 0 items: 0/1 = 0/2",
    ("tasks/allocation/allocator.py", "return self.filled[cell] / max(1, self.quotas.get(cell, 0))", "0 -> 1"):
        "fill ratios are compared only between cells with room, and a cell with room has a quota entry",
    ("tasks/allocation/allocator.py", "if got[True] + got[False] >= n:", "+ -> -", 15, 37, 0):
        "without strata got[False] is 0; with them the limits (want_true and n - want_true, neither lower in the "
        "refill) already stop the tier at n sets, so the mutant only walks on deferring every candidate, and the "
        "deferred loop stops at n (a stratum over its limit got there by exhausting the other one's candidates)",
    ("tasks/allocation/allocator.py", "short = [l for l in languages if nameable.get(l, 0) < ENOUGH_TARGETS * quotas.get(l, 0)]",
     "0 -> 1"): "a language that names nothing counted: 0 or 1 nameable is short against any quota of 1 or more "
        "(12 x quota >= 12), and neither is short against no quota",
    ("tasks/allocation/allocator.py", 'quotas = {l: self.quotas.get(("cd", l), 0) for l in self.languages}', "0 -> 1"):
        "only a language without a cd quota moves (it may count as short), and it takes no set wherever it comes: "
        "its n = 0 tier fill stops before looking at a candidate",
    ("tasks/allocation/allocator.py", "while got[True] + got[False] < n:", "+ -> -"):
        "without strata got[False] is 0; with them the limits (want_true and n - want_true) stop each side, so the "
        "mutant only reads on, deferring every further candidate, and the deferred loop stops at n",
    ("tasks/allocation/allocator.py", "if short <= 0:", "<= -> <"):
        "at short 0 the refill asks the tier for have + 0 sets: it holds them already and reads no candidate",
    ("tasks/allocation/allocator.py", "share = sum(sum(v) for v in probe.values()) / seen if seen else 0.0", "0.0 -> 1.0"):
        "seen is 0 only when no set of the pools is viable for the language: the tiers then take nothing either way",
    ("tasks/allocation/allocator.py", "share = 0.0", "0.0 -> 1.0"):
        "the default is read only beside a True-stratum target, and without a stratum (or quota) every tier's "
        "want_true is None, so the refill never multiplies by it",
    ("tasks/allocation/allocator.py", "got[True] += 1", "True -> False"):
        "without strata (and in the deferred fill) only got[True] + got[False] is read: counting the set on the other "
        "side changes nothing",
    ("tasks/audit/checks.py", "for cell, c in sorted(rel.cells.items()):", "sorted(x) -> x"):
        "Release builds `cells` in sorted order already (that sort is itself tested)",
    ("tasks/audit/checks.py", "relevant[q] += 1", "+ -> -"): "only the counter's keys are read",
    ("tasks/audit/checks.py", "relevant[q] += 1", "1 -> 2"): "only the counter's keys are read",
}


# ------------------------------------------------------------------------------- mutants


@dataclass
class Mutant:
    index: int
    line: int
    col: int
    end: int  # end column of the mutated node: with `col`, tells apart nested nodes on one line
    op: str
    source: str  # the line's source, stripped
    occurrence: int = 0  # how many identical (source, op, col, end) mutants come before it in the module
    status: str = ""  # killed | survived | timeout | equivalent
    seconds: float = 0.0


_CMP_SWAP = {ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BIN_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult}
_SYMBOL = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
           ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
           ast.Div: "/", ast.FloorDiv: "//", ast.And: "and", ast.Or: "or"}


def _children(node: ast.AST):
    """Child nodes in source order, skipping what is never mutated (annotations, f-strings)."""
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "type_comment"):
            continue
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            yield value


def _candidates(tree: ast.AST):
    """(node, op name, apply) for every mutation point, in a fixed (depth-first, source) order."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.JoinedStr):
            continue
        yield from _points(node)
        stack.extend(reversed(list(_children(node))))


def _points(node: ast.AST):
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _CMP_SWAP.get(type(op))
            if new is not None:
                yield node, f"{_SYMBOL[type(op)]} -> {_SYMBOL[new]}", lambda n=node, i=i, new=new: n.ops.__setitem__(i, new())
    elif isinstance(node, (ast.BinOp, ast.AugAssign)):
        new = _BIN_SWAP.get(type(node.op))
        if new is not None and (isinstance(node, ast.BinOp) or new in (ast.Add, ast.Sub)):
            yield node, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[new]}", lambda n=node, new=new: setattr(n, "op", new())
    elif isinstance(node, ast.BoolOp):
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield node, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[new]}", lambda n=node, new=new: setattr(n, "op", new())
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield node, "not x -> x", lambda n=node: setattr(n, "op", ast.UAdd())
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield node, f"{node.value} -> {not node.value}", lambda n=node: setattr(n, "value", not n.value)
        elif isinstance(node.value, (int, float)):
            yield node, f"{node.value!r} -> {node.value + 1!r}", lambda n=node: setattr(n, "value", n.value + 1)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sorted" and node.args:
        yield node, "sorted(x) -> x", lambda n=node: _replace_call(n)
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield node, "return x -> return None", lambda n=node: setattr(n, "value", ast.Constant(None))


def _replace_call(call: ast.Call) -> None:
    """sorted(x, ...) -> x: the call becomes `(lambda v: v)(x)`, keeping positions intact."""
    arg = call.args[0]
    call.func = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[ast.arg("v")], kwonlyargs=[], kw_defaults=[],
                                              defaults=[]), body=ast.Name("v", ast.Load()))
    call.args, call.keywords = [arg], []


def _not_x(tree: ast.AST) -> None:
    """`not x` mutated to UAdd would compute +x: make it a plain pass-through instead."""
    def marked(v) -> bool:
        return isinstance(v, ast.UnaryOp) and getattr(v, "_mut", False)

    for node in ast.walk(tree):
        for name, value in ast.iter_fields(node):
            if marked(value):
                setattr(node, name, value.operand)
            elif isinstance(value, list) and any(marked(v) for v in value):
                setattr(node, name, [v.operand if marked(v) else v for v in value])


def list_mutants(path: Path) -> list[Mutant]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source, str(path))
    out, seen = [], Counter()
    for i, (node, op, _) in enumerate(_candidates(tree)):
        m = Mutant(i, node.lineno, node.col_offset, getattr(node, "end_col_offset", -1), op, lines[node.lineno - 1].strip())
        same = (m.source, m.op, m.col, m.end)
        m.occurrence = seen[same]  # the same statement, mutated the same way, elsewhere in the module
        seen[same] += 1
        out.append(m)
    return out


def mutated_code(path: Path, index: int):
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    for i, (node, op, apply) in enumerate(_candidates(tree)):
        if i == index:
            apply()
            if op == "not x -> x":
                node._mut = True
                _not_x(tree)
            break
    else:
        raise IndexError(index)
    ast.fix_missing_locations(tree)
    return compile(tree, str(path), "exec")


# ------------------------------------------------------------------------------- running


class _MutantLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, name: str, path: Path, code):
        self.name, self.path, self.code = name, path, code

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=str(self.path))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__file__ = str(self.path)
        exec(self.code, module.__dict__)


def _module_name(rel: str) -> str:
    return rel[:-3].replace("/", ".")


def _child(rel: str, code, tests: list[str]) -> None:
    """In the forked child: install the mutant, run pytest, exit with its code."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        if code is not None:
            sys.meta_path.insert(0, _MutantLoader(_module_name(rel), ROOT / rel, code))
        from hypothesis import settings

        settings.register_profile("mutation", database=None)
        settings.load_profile("mutation")
        import pytest

        rc = pytest.main([*tests, "-x", "-q", "-m", "not slow", "-p", "no:cacheprovider", "--no-header", "-W", "ignore"])
        os._exit(int(rc))
    except BaseException:  # noqa: BLE001 - a crash of the mutant is a kill
        os._exit(98)


def _start(rel: str, code, tests: list[str]) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(rel, code, tests)
    return pid


def _wait(pid: int, deadline: float) -> tuple[int | None, bool]:
    """(exit code, timed out)."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, True
        time.sleep(0.02)


def _keys(rel: str, m: Mutant) -> list[tuple]:
    return [(rel, m.source, m.op), (rel, m.source, m.op, m.col), (rel, m.source, m.op, m.col, m.end),
            (rel, m.source, m.op, m.col, m.end, m.occurrence)]


def is_equivalent(rel: str, m: Mutant) -> bool:
    return any(k in EQUIVALENT for k in _keys(rel, m))


def equivalent_reason(rel: str, m: Mutant) -> str:
    return next(EQUIVALENT[k] for k in _keys(rel, m) if k in EQUIVALENT)


def run_module(rel: str, tests: list[str], jobs: int, only: list[int] | None, log) -> tuple[list[Mutant], float]:
    path = ROOT / rel
    mutants = list_mutants(path)
    if only is not None:
        mutants = [m for m in mutants if m.index in only]
    start = time.monotonic()
    rc, _ = _wait(_start(rel, None, tests), time.monotonic() + 900)
    clean = time.monotonic() - start
    if rc != 0:
        raise SystemExit(f"{rel}: the tests fail without any mutant (pytest exit {rc}): {' '.join(tests)}")
    limit = 3 * clean + 10
    log(f"{rel}: {len(mutants)} mutants, clean run {clean:.1f} s, limit {limit:.0f} s per mutant")
    pending = list(mutants)
    running: dict[int, tuple[Mutant, float]] = {}
    done_n = 0
    while pending or running:
        while pending and len(running) < jobs:
            m = pending.pop(0)
            if is_equivalent(rel, m):
                m.status = "equivalent"
                continue
            running[_start(rel, mutated_code(path, m.index), tests)] = (m, time.monotonic())
        for pid in list(running):
            m, began = running[pid]
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done and time.monotonic() - began > limit:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                m.status = "timeout"
            elif done:
                m.status = "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
            else:
                continue
            m.seconds = round(time.monotonic() - began, 2)
            del running[pid]
            done_n += 1
            if m.status in ("survived", "timeout"):  # a timeout counts as killed: name it, to check it is no hang of the tests' own
                log(f"  {m.status.upper()} #{m.index} line {m.line}: {m.op}    {m.source}")
            if done_n % 20 == 0:
                log(f"  {done_n} run, {time.monotonic() - start:.0f} s")
        time.sleep(0.02)
    return mutants, clean


def summary(results: dict[str, list[Mutant]]) -> dict:
    out = {}
    for rel, mutants in results.items():
        n = {s: sum(1 for m in mutants if m.status == s) for s in ("killed", "timeout", "survived", "equivalent")}
        scored = n["killed"] + n["timeout"] + n["survived"]
        out[rel] = {**n, "total": len(mutants),
                    "score": round((n["killed"] + n["timeout"]) / scored, 4) if scored else None,
                    "survivors": [asdict(m) for m in mutants if m.status == "survived"],
                    "timeouts": [asdict(m) for m in mutants if m.status == "timeout"]}
    return out


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":  # hash order must match the test suite's
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", action="append", help="module path under the project root (repeatable; default: all of MODULES)")
    ap.add_argument("--tests", help="pytest arguments for the module, one string (default: its MODULES entry)")
    ap.add_argument("--only", type=int, nargs="+", help="run only these mutant indexes")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--markdown", type=Path, help="write the tables docs/testing.md shows here")
    args = ap.parse_args(argv)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no BLAS threads across fork()
    modules = args.module or list(MODULES)
    if args.list:
        for rel in modules:
            for m in list_mutants(ROOT / rel):
                occ = f" occurrence {m.occurrence}" if m.occurrence else ""
                print(f"{rel} #{m.index} line {m.line} col {m.col}-{m.end}{occ}: {m.op}    {m.source}")
        return 0
    # the third-party imports every child would otherwise repeat (seconds each)
    import datasketch  # noqa: F401
    import hypothesis  # noqa: F401
    import numpy  # noqa: F401
    import pyarrow  # noqa: F401
    import pyarrow.compute  # noqa: F401
    import pyarrow.csv  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import pydantic  # noqa: F401
    import pytest  # noqa: F401
    import scipy.sparse  # noqa: F401
    for optional in ("bm25s", "lingua", "pandas"):  # what the audit's and the allocation's imports pull in
        try:
            __import__(optional)
        except ImportError:
            pass

    def log(msg: str) -> None:
        print(msg, flush=True)

    results, started = {}, time.monotonic()
    for rel in modules:
        tests = shlex.split(args.tests) if args.tests else MODULES.get(rel)
        if not tests:
            raise SystemExit(f"{rel}: no test subset known; pass --tests")
        results[rel], _ = run_module(rel, tests, args.jobs, args.only, log)
        r = summary({rel: results[rel]})[rel]
        log(f"{rel}: killed {r['killed']}, timeout {r['timeout']}, survived {r['survived']}, equivalent {r['equivalent']}")
    report = summary(results)
    seconds = time.monotonic() - started
    cpu = os.times()
    text = markdown(report, results, seconds, cpu.children_user + cpu.children_system + cpu.user + cpu.system)
    print()
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(text, encoding="utf-8")
    return 0


def markdown(report: dict, results: dict[str, list[Mutant]], seconds: float, cpu_seconds: float) -> str:
    """The results as docs/testing.md shows them: the score table, the equivalent mutants
    met in this run with their reasons, and the survivors."""
    out = ["| module | mutants | killed | timeout | survived | equivalent | score |", "|---|---|---|---|---|---|---|"]
    for rel, r in report.items():
        score = "n/a" if r["score"] is None else f"{100 * r['score']:.1f}%"
        out.append(f"| `{rel}` | {r['total']} | {r['killed']} | {r['timeout']} | {r['survived']} | {r['equivalent']} | {score} |")
    killed = sum(r["killed"] + r["timeout"] for r in report.values())
    scored = killed + sum(r["survived"] for r in report.values())
    out += ["", f"Overall {killed}/{scored} = {100 * killed / max(1, scored):.1f}%; {seconds:.0f} s wall, "
                f"{cpu_seconds:.0f} s CPU (user+sys, children included).", "", "Equivalent mutants met:", ""]
    for rel, mutants in results.items():
        for m in mutants:
            if m.status == "equivalent":
                out.append(f"- `{rel}` line {m.line} `{m.op}` in `{m.source}`: {equivalent_reason(rel, m)}")
    out += ["", "Killed by the time limit:", ""]
    timeouts = [(rel, m) for rel, ms in results.items() for m in ms if m.status == "timeout"]
    out += [f"- `{rel}` #{m.index} line {m.line} `{m.op}` in `{m.source}`" for rel, m in timeouts] or ["- none"]
    out += ["", "Survivors:", ""]
    survivors = [(rel, m) for rel, ms in results.items() for m in ms if m.status == "survived"]
    out += [f"- `{rel}` #{m.index} line {m.line} `{m.op}` in `{m.source}`" for rel, m in survivors] or ["- none"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
