"""Tests that kill mutants: each pins one contract of a core pure module that a one-token
change (`>=` -> `>`, a dropped `sorted`, `> 0` -> `>= 0`, ...) would break, on inputs
small enough to run in well under a second. benchmarks/mutation.py measures how many
mutants the suite kills (docs/testing.md); the contracts here are the ones the fast
suite used to let through, plus those the measurement found unguarded.

Sections: near-duplicates (tasks/dedup), the RRF reader (umls/rrf.py), confusion sets
(tasks/allocation/confusion.py), the allocator (tasks/allocation/allocator.py), the
audit's checks on small crafted releases (tasks/audit/checks.py).
"""
from __future__ import annotations

import errno
import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.errors import InputError
from common.text import char_shingles, jaccard



# ============================================================================ near-duplicates

from tasks.dedup.minhash import MinHasher  # noqa: E402
from tasks.dedup.near_duplicates import Duplicate, NearDuplicateIndex, find_duplicates, signature  # noqa: E402

A, B = "abcdefgh", "abcdefgi"  # 1-character shingles: Jaccard exactly 7/9


def test_a_candidate_at_exactly_the_threshold_is_a_near_duplicate():
    """`j >= threshold`: the threshold itself counts (the config says "Jaccard threshold")."""
    threshold = jaccard(char_shingles(A, 1), char_shingles(B, 1))
    assert threshold == 7 / 9
    index = NearDuplicateIndex(threshold, 128, 1)
    index.add("kept", "ns", A, 1)
    assert index.find("new", "ns", B, 1) == Duplicate("new", "kept", "ns", threshold)


def test_a_candidate_below_the_threshold_is_not_a_near_duplicate():
    """LSH proposes this pair (7/9 < 0.8); the exact Jaccard must refuse it."""
    index = NearDuplicateIndex(0.8, 128, 0)
    index.add("kept", "ns", A, 1)
    assert index._lsh["ns"].query(signature(char_shingles(B, 1), 128, 0)) == ["kept"]  # the precondition
    assert index.find("new", "ns", B, 1) is None


def test_equally_similar_candidates_resolve_to_the_smallest_id():
    """Candidates are examined in sorted order and only a strictly better one replaces the
    best: whatever order LSH returns them in, the answer is the same."""
    query = "abcdefghij"
    kept = ["abcdefghiX", "abcdefghYj", "abcdefgZij", "abcdefWhij", "abcdeVghij", "abcdUfghij"]
    index = NearDuplicateIndex(0.7, 128, 1)
    for item_id, text in zip("fedcba", kept):
        index.add(item_id, "ns", text, 1)
    assert len({jaccard(char_shingles(query, 1), char_shingles(t, 1)) for t in kept}) == 1
    assert index.find("q", "ns", query, 1).kept_id == "a"


def test_the_most_similar_candidate_wins():
    index = NearDuplicateIndex(0.6, 128, 1)
    index.add("a", "ns", "abcdefghXY", 1)  # 8/12 with the query
    index.add("b", "ns", "abcdefghiX", 1)  # 9/11 with the query
    dup = index.find("q", "ns", "abcdefghij", 1)
    assert (dup.kept_id, dup.jaccard) == ("b", 9 / 11)


def test_exact_duplicates_and_an_item_never_duplicates_itself():
    index = NearDuplicateIndex(0.7, 128, 1)
    assert index.find("x", "ns", A, 1) is None  # empty index
    index.add("a", "ns", A, 1)
    assert index.find("b", "ns", A, 1) == Duplicate("b", "a", "ns", 1.0)
    assert index.find("a", "ns", A, 1) is None  # the exact entry is its own
    assert index.find("a", "ns", B, 1) is None  # LSH proposes it; it is skipped
    assert index.find("b", "other", A, 1) is None  # namespaces are apart
    assert index.find("b", "ns", "", 1) is None  # no shingles, nothing to compare


def test_adding_twice_or_adding_nothing_is_harmless():
    index = NearDuplicateIndex(0.7, 128, 1)
    index.add("a", "ns", A, 1)
    index.add("a", "ns", A, 1)  # datasketch would refuse a second insert of the key
    index.add("e", "ns", "  ", 1)  # nothing to index
    assert index.find("b", "ns", A, 1).kept_id == "a"
    assert index.find("e2", "ns", "  ", 1) is None


def test_duplicates_are_values():
    d = Duplicate("b", "a", "pivot", 0.75)
    assert {d: 1}[Duplicate("b", "a", "pivot", 0.75)] == 1  # frozen: hashable, compared by value
    assert d.reason == "near-duplicate of a (pivot, jaccard=0.75)"


def test_find_duplicates_keeps_the_first_and_skips_what_it_dropped():
    out = find_duplicates([("a", "ns", A, 1), ("b", "ns", A, 1), ("b", "ns", B, 1), ("c", "ns", "xyz", 1)], 0.7, 128, 1)
    assert out == [Duplicate("b", "a", "ns", 1.0)]


def test_reference_signature_matches_the_fast_one():
    sh = char_shingles("myocardial infarction", 3)
    assert list(signature(sh, 64, 7).hashvalues) == list(MinHasher(64, 7).signatures([sh])[0])


import numpy as np  # noqa: E402

from tasks.dedup import minhash as mh  # noqa: E402


def test_minhasher_defaults_are_datasketchs_and_num_perm_must_be_positive():
    from datasketch import MinHash

    m = mh.MinHasher()
    assert (m.num_perm, m.seed) == (128, 1) and m.scheme == MinHash(num_perm=1).scheme
    assert mh.MinHasher(num_perm=1).signatures([{"ab"}]).shape == (1, 1)
    with pytest.raises(ValueError, match="positive"):
        mh.MinHasher(num_perm=0)
    assert m.lean(m.signatures([{"ab"}])[0]) == mh.to_lean(m.signatures([{"ab"}])[0], 1)


def test_nothing_in_gives_no_rows_and_leans_carry_the_default_scheme():
    m = mh.MinHasher(16, 3)
    assert m.text_signatures([], 5).shape == (0, 16) and m.signatures([]).shape == (0, 16)
    lean = mh.to_lean(m.signatures([{"ab"}])[0], 3)
    assert lean.scheme == mh.default_scheme() and lean.seed == 3


def test_a_batch_larger_than_the_whole_cache_is_hashed_outside_it():
    texts = ["one two three four five six seven eight", "nine ten eleven twelve"]
    tiny = mh.MinHasher(16, 1, cache_bytes=2 * 16 * 4)  # room for one piece
    assert np.array_equal(tiny.text_signatures(texts, 5), mh.MinHasher(16, 1).signatures([char_shingles(t, 5) for t in texts]))


def test_lsh_insert_many_names_the_lengths_it_expected():
    from datasketch import MinHashLSH

    sigs = mh.signatures([{"abcde"}], 128, 1)
    with pytest.raises(ValueError, match="^Expecting minhash with length 64, got 128$"):
        mh.lsh_insert_many(MinHashLSH(threshold=0.5, num_perm=64), ["a"], sigs, 1)


def test_the_row_cache_computes_each_key_once_and_knows_its_capacity():
    calls: list[list[str]] = []

    def compute(keys):
        calls.append(list(keys))
        return np.array([[ord(k[0])] * 4 for k in keys], dtype=np.uint32)

    empty = (1 << 32) - 1
    cache = mh._RowCache(4, np.dtype(np.uint32), empty, max_rows=6)  # row 0 (empty) + 5 keys
    assert cache.ids(["a", "b", "a"], compute).tolist() == [1, 2, 1] and calls == [["a", "b"]]
    assert cache.ids(["b", "a"], compute).tolist() == [2, 1] and len(calls) == 1  # all cached: nothing computed
    assert cache.ids(["c", "a", "d"], compute).tolist() == [3, 1, 4] and calls[-1] == ["c", "d"]
    assert cache.ids(["e"], compute).tolist() == [5]  # the last row
    assert cache.table[0].tolist() == [empty] * 4 and cache.table[5].tolist() == [ord("e")] * 4
    before = (dict(cache.rows), cache.used, len(calls))
    assert cache.ids(["f", "a"], compute) is None and (dict(cache.rows), cache.used, len(calls)) == before  # full
    table, ids = cache.local(["x", "y", "x"], compute)
    assert ids.tolist() == [1, 2, 1] and table[0].tolist() == [empty] * 4 and table[2].tolist() == [ord("y")] * 4
    tiny = mh._RowCache(4, np.dtype(np.uint32), empty, max_rows=0)  # at least room for one key
    assert tiny.ids(["a"], compute).tolist() == [1] and tiny.ids(["b"], compute) is None


# ============================================================================ RRF reader

import umls.rrf as rrf  # noqa: E402

ROW = "C0000005|ENG|P|L0000005|PF|S0007492|Y|A26634265||M0019694|D012711|MSH|PEP|D012711|Albumin|0|N|256|"


def _rrf(tmp_path: Path, lines: list[str], name: str = "MRCONSO.RRF", end: str = "\n") -> Path:
    """`end` after every line (the last one too); "" leaves the last line without a newline."""
    path = tmp_path / name
    path.write_bytes("".join(line + (end or "\n") for line in lines)[: None if end or not lines else -1].encode("utf-8"))
    return path


def _error(path: Path, columns=("CUI", "LAT", "ISPREF", "SRL"), **kw) -> InputError:
    with pytest.raises(InputError) as exc:
        rrf.read_rrf_table(path, list(columns), **kw) if not kw else list(rrf.read_rrf(path, list(columns), **kw))
    return exc.value


VALUES = st.one_of(
    st.sampled_from(["C0000005", "C1234567", "ENG", "FRE", "Y", "N", "0", "9", "EN1", "ÉNG", "C000000٣", "CA123456",
                     "C00000005", "c0000005", "C000000", "", "Y ", "YN", "١", "E", "ENGL", "eng", "T116"]),
    st.text(alphabet="C0123456789ENGYNÉ٣é ", max_size=9),
)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(VALUES, min_size=1, max_size=40), column=st.sampled_from(["CUI", "LAT", "SRL", "ISPREF"]))
def test_the_fast_pre_check_agrees_with_the_pattern(values, column):
    """`_cheap_ok` is exact: never accepts what the pattern refuses (LAT 'EN1' or 'ÉNG', a
    CUI with a non-ASCII digit), and accepts every valid value (else the slow regex runs)."""
    import re

    pattern = rrf.PATTERNS["MRCONSO.RRF"][column]
    cheap = rrf._cheap_ok(pa.array(values, pa.string()), column)
    assert cheap is not None
    assert cheap.to_pylist() == [bool(re.fullmatch(pattern, v, re.ASCII)) for v in values], column


@pytest.mark.parametrize("field,bad", [("LAT", "EN1"), ("LAT", "ÉNG"), ("CUI", "C000000٣"), ("CUI", "CA123456"), ("SRL", "١")])
def test_values_the_pattern_forbids_are_refused_with_line_and_field(tmp_path, field, bad):
    fields = ROW.split("|")
    fields[rrf.COLUMNS["MRCONSO.RRF"].index(field)] = bad
    path = _rrf(tmp_path, [ROW, ROW, "|".join(fields), ROW])
    err = _error(path)
    assert (err.line, err.field) == (3, field) and repr(bad) in str(err)


def test_undecodable_byte_names_line_and_column(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes(((ROW + "\n") * 2).encode() + ROW.encode().replace(b"Albumin", b"Alb\xffumin") + b"\n")
    err = _error(path, columns=("CUI", "STR"))
    assert (err.line, err.field) == (3, "STR") and f"byte 0xff at column {ROW.index('Albumin') + 4}" in str(err), str(err)
    assert rrf.read_rrf_table(path, ["CUI"]).num_rows == 3  # a column not read is not decoded (as pyarrow skips it)


def test_the_last_line_without_a_newline_is_checked_too(tmp_path):
    path = _rrf(tmp_path, [ROW, ROW.replace("C0000005", "X0000005", 1)], end="")
    err = _error(path)
    assert (err.line, err.field) == (2, "CUI")


def test_line_numbers_follow_every_line_break_pyarrow_knows(tmp_path):
    path = tmp_path / "MRCONSO.RRF"
    path.write_bytes((ROW + "\r\n" + ROW + "\r" + ROW + "\n" + ROW[:-1] + "\n" + ROW + "\n").encode())
    err = _error(path)
    assert err.line == 4 and "found 17" in str(err)


def test_a_blank_line_is_malformed(tmp_path):
    err = _error(_rrf(tmp_path, [ROW, ROW, "", ROW]))
    assert err.line == 3 and "found 0" in str(err)


def test_missing_trailing_bar_and_text_after_it(tmp_path):
    assert _error(_rrf(tmp_path, [ROW, ROW + "x"])).line == 2
    err = _error(_rrf(tmp_path, [ROW, ROW, ROW + "x"]), columns=("STR",))
    assert err.line == 3 and "end with '|'" in str(err)


def test_a_line_longer_than_a_block_is_an_input_error_not_a_crash(tmp_path):
    path = _rrf(tmp_path, [ROW] * 3)
    err = _error(path, block_size=64)
    assert "unreadable RRF" in str(err)


def test_a_folder_and_an_unreadable_file_are_input_errors(tmp_path, monkeypatch):
    (tmp_path / "MRCONSO.RRF").mkdir()
    assert "found a folder" in str(_error(tmp_path / "MRCONSO.RRF"))

    def fail(*_a):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(rrf, "_first_problem", fail)
    assert "cannot be read (Input/output error)" in str(rrf._located(tmp_path / "MRCONSO.RRF", "MRCONSO.RRF", [], {}, InputError("x", "y")))


def test_a_problem_only_pyarrow_sees_keeps_its_message(tmp_path, monkeypatch):
    monkeypatch.setattr(rrf, "_first_problem", lambda *_a: None)
    fallback = InputError("x", "y")
    assert rrf._located(tmp_path, "MRCONSO.RRF", [], {}, fallback) is fallback


def test_valid_rows_stream_in_order_with_empty_fields_as_empty_strings(tmp_path):
    rows = [ROW, ROW.replace("C0000005", "C0000006", 1).replace("||M0019694", "|X|M0019694")]
    table = rrf.read_rrf_table(_rrf(tmp_path, rows), ["CUI", "SAUI", "ISPREF"])
    assert table.to_pylist() == [{"CUI": "C0000005", "SAUI": "", "ISPREF": "Y"}, {"CUI": "C0000006", "SAUI": "X", "ISPREF": "Y"}]
    assert rrf.read_rrf_table(_rrf(tmp_path, []), ["CUI"]).num_rows == 0


# ============================================================================ confusion sets
# Contracts of tasks/allocation/confusion.py: inputs -> the exact sets (other helpers may
# rewrite its internals for speed; the outputs must stay byte-identical).

from tasks.allocation.confusion import build_candidates  # noqa: E402
from tasks.allocation.hierarchy import Hierarchy  # noqa: E402
from tasks.allocation.lexicon import Lexicon  # noqa: E402
from tasks.allocation.similarity import mean_similarity  # noqa: E402
from tasks.allocation.tiers import HARD_MIN_COVERAGE, MEDIUM_MAX_COVERAGE, ConceptInfo, ConfusionCandidate  # noqa: E402
from tests.tasks.allocation.test_confusion_tiers import lexicon_of, synthetic_vocabulary  # noqa: E402

STEMS = ["cardi", "nephr", "hepat", "neur", "oste", "derm", "gastr", "pulmon", "thyr", "arthr", "myel", "angi"]
SUFFIXES = ["itis", "osis", "oma", "algia", "opathy", "ectomy", "plasia", "emia"]
QUALIFIERS = ["acute", "chronic", "primary", "secondary", "familial", "juvenile", "toxic", "benign"]


def big_vocabulary() -> tuple[dict[str, ConceptInfo], Hierarchy, Lexicon]:
    """587 disorders (12 areas x 8 lesions x 3..7 qualified leaves: more of one type than a
    target's POOL window) and 60 drugs. A leaf's entry also names the same lesion of an organ
    five areas away, so every tier has candidates: siblings (hard), far look-alikes (medium),
    drugs (easy)."""
    concepts: dict[str, ConceptInfo] = {}
    parents: list[tuple[str, str]] = []

    def add(name: str, tui: str, parent: str | None) -> str:
        cui = f"C{len(concepts) + 1:07d}"
        concepts[cui] = ConceptInfo(cui, tui, "DISO" if tui == "T047" else "CHEM", name)
        if parent:
            parents.append((cui, parent))
        return cui

    root = add("disease", "T047", None)
    for i, stem in enumerate(STEMS):
        area = add(f"{stem} disease", "T047", root)
        for j, suffix in enumerate(SUFFIXES):
            branch = add(f"{stem}{suffix}", "T047", area)
            for q in QUALIFIERS[: 3 + (i + j) % 5]:
                add(f"{q} {stem}{suffix}", "T047", branch)
    drug = add("drug", "T121", None)
    for i in range(60):
        add(f"compound {chr(97 + i % 26)}{chr(97 + (i * 7) % 26)}{i}", "T121", drug)

    def entry(name: str) -> str:
        word = name.split()[-1]
        for s, stem in enumerate(STEMS):
            if word.startswith(stem) and " " in name:
                return f"{name}; see also {STEMS[(s + 5) % len(STEMS)]}{word[len(stem):]} disorder"
        return name

    lexicon = Lexicon({c: [entry(i.name)] for c, i in concepts.items()}, {c: [i.name] for c, i in concepts.items()},
                      frozenset({"disorder"}))
    return concepts, Hierarchy(parents), lexicon


def _dump(got: dict[str, list[ConfusionCandidate]]) -> dict[str, list]:
    return {t: [[s.target_cui, list(s.distractor_cuis)] for s in sets] for t, sets in got.items()}


def _digest(got) -> str:
    return hashlib.sha256(json.dumps(_dump(got)).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def big():
    return big_vocabulary()


def test_mean_similarity_is_the_mean_trigram_jaccard():
    pairs = [("cardiac arrest", ["cardiac arrests", "renal failure"]), ("fever", ["fevers"])]
    vals = [jaccard(char_shingles(t, 3), char_shingles(d, 3)) for t, ds in pairs for d in ds]
    assert mean_similarity(pairs) == pytest.approx(sum(vals) / 3) and 0 < mean_similarity(pairs) < 1
    assert mean_similarity([]) == 0.0


@pytest.mark.parametrize("k,seed,one_tier,counts,first,digest", [
    (3, 1, False, (93, 83, 83),
     {"easy": ["C0000372", ["C0000602", "C0000617", "C0000646"]], "medium": ["C0000428", ["C0000183", "C0000475", "C0000479"]],
      "hard": ["C0000155", ["C0000151", "C0000152", "C0000153"]]}, "c532cac2ab464245"),
    (2, 9, True, (37, 28, 28),
     {"easy": ["C0000379", ["C0000592", "C0000616"]], "medium": ["C0000344", ["C0000099", "C0000202"]],
      "hard": ["C0000204", ["C0000203", "C0000201"]]}, "281b8dcd66db6c9d"),
    (3, 2, True, (37, 28, 28), None, "4d66cc6332a40423"),
])
def test_candidates_of_a_large_vocabulary_are_pinned(big, k, seed, one_tier, counts, first, digest):
    """Every tier's sets, in order, for every 7th concept as a target (windows wrap around a
    type larger than POOL; ancestors are left out of them). The digest pins all of it."""
    concepts, h, lexicon = big
    got = build_candidates(concepts, h, k, seed, sorted(concepts)[::7], lexicon, one_tier_per_target=one_tier)
    assert tuple(len(got[t]) for t in ("easy", "medium", "hard")) == counts
    if first:
        assert {t: _dump(got)[t][0] for t in got} == first
    assert _digest(got) == digest


def test_one_tier_per_target_rotates_from_tier_i_mod_3_and_falls_through(big):
    """Target i takes the first feasible of easy, medium, hard starting at i mod 3, and the
    set it gets is the one it would get without the rotation."""
    for concepts, h, lexicon, seed in ((*synthetic_vocabulary(), None, 11), (*big, 4)):
        lexicon = lexicon or lexicon_of(concepts)
        targets = sorted(concepts)[::3]
        every = build_candidates(concepts, h, 3, seed, targets, lexicon)
        by_tier = {t: {s.target_cui: s for s in sets} for t, sets in every.items()}
        got = build_candidates(concepts, h, 3, seed, targets, lexicon, one_tier_per_target=True)
        tier_of = {s.target_cui: t for t, sets in got.items() for s in sets}
        names = ("easy", "medium", "hard")
        expected = {}
        for i, cui in enumerate(targets):
            feasible = [names[(i + j) % 3] for j in range(3) if cui in by_tier[names[(i + j) % 3]]]
            if feasible:
                expected[cui] = feasible[0]
        assert tier_of == expected
        assert len(set(expected.values())) == 3 and any(  # some target fell through to a later tier
            expected[c] != names[i % 3] for i, c in enumerate(targets) if c in expected)
        assert all(s == by_tier[t][s.target_cui] for t, sets in got.items() for s in sets)


def _lexicon(entries: dict[str, str], names: dict[str, str] | None = None) -> Lexicon:
    return Lexicon({c: [t] for c, t in entries.items()}, {c: [t] for c, t in (names or entries).items()})


def test_coverage_boundaries_decide_the_tier():
    """T's name words alpha and beta weigh the same (3 entries each). Siblings covering exactly
    HARD_MIN_COVERAGE (one of the two words) make a hard set; a far concept covering exactly
    MEDIUM_MAX_COVERAGE is not 'unalike' for medium; easy needs coverage 0."""
    assert (HARD_MIN_COVERAGE, MEDIUM_MAX_COVERAGE) == (0.5, 0.2)
    entries = {"C0000001": "alpha beta", "C0000002": "alpha one", "C0000003": "beta two", "C0000004": "alpha three",
               "C0000005": "beta four", "C0000006": "gamma five"}
    concepts = {c: ConceptInfo(c, "T047", "DISO", t) for c, t in entries.items()}
    h = Hierarchy([(c, "P") for c in ("C0000001", "C0000002", "C0000003", "C0000004")])
    lex = _lexicon(entries)
    assert [lex.coverage("C0000001", c) for c in ("C0000002", "C0000003", "C0000004", "C0000006")] == [0.5, 0.5, 0.5, 0.0]
    got = build_candidates(concepts, h, 3, 1, ["C0000001"], lex)
    assert _dump(got)["hard"] == [["C0000001", ["C0000002", "C0000004", "C0000003"]]]  # coverage tie: similarity, then id
    assert got["medium"] == [] and got["easy"] == []  # no far concept of the type covers it; nothing of another type


def test_medium_takes_one_far_look_alike_and_unalike_others():
    entries = {"C0000001": "alpha beta", "C0000002": "alpha beta gamma", "C0000003": "delta one", "C0000004": "delta two",
               "C0000005": "alpha delta three"}
    concepts = {c: ConceptInfo(c, "T047", "DISO", t) for c, t in entries.items()}
    lex = _lexicon(entries)
    assert lex.coverage("C0000001", "C0000002") == 1.0 and lex.coverage("C0000001", "C0000003") == 0.0
    assert 0.2 < lex.coverage("C0000001", "C0000005") < 0.5  # neither a confuser nor unalike
    got = build_candidates(concepts, Hierarchy([]), 3, 1, ["C0000001"], lex)
    assert _dump(got)["medium"] == [["C0000001", ["C0000002", "C0000003", "C0000004"]]]
    assert got["hard"] == []  # no sibling; the covering concept is no hierarchy relative either, but hard needs k
    # a hierarchy neighbour within MEDIUM_DEPTH is never medium
    near = Hierarchy([("C0000001", "P"), ("C0000002", "Q"), ("Q", "P")])
    assert build_candidates(concepts, near, 3, 1, ["C0000001"], lex)["medium"] == []


def test_the_hard_top_up_admits_exactly_the_minimum_coverage():
    """No siblings: the hard set is topped up from same-type concepts whose entries cover at
    least HARD_MIN_COVERAGE (here exactly 0.5) of the target's name words."""
    entries = {"C0000001": "alpha beta", "C0000002": "alpha one", "C0000003": "beta two", "C0000004": "alpha three",
               "C0000005": "beta four"}
    concepts = {c: ConceptInfo(c, "T047", "DISO", t) for c, t in entries.items()}
    got = build_candidates(concepts, Hierarchy([]), 3, 1, ["C0000001"], _lexicon(entries))
    assert _dump(got)["hard"] == [["C0000001", ["C0000002", "C0000004", "C0000003"]]]


# medium: T's five name words weigh the same (2 entries each, 9 entries: IDF log 5.5), so
# E's and F's entries cover exactly 1/5 = MEDIUM_MAX_COVERAGE of them; their names look
# most like T's, which would put them first among the unalike others if they counted
MEDIUM_ENTRIES = {"T": "a b c d e", "C": "a b c x", "D1": "q1", "D2": "q2", "E": "e z", "F": "d", "P1": "p1", "P2": "p2", "P3": "p3"}
MEDIUM_NAMES = {"T": "apple banana", "C": "cherry", "D1": "zzzz", "D2": "yyyy", "E": "apple banana z", "F": "apple bananas"}


def test_medium_others_cover_strictly_less_than_the_maximum():
    concepts = {c: ConceptInfo(c, "T047", "DISO", n) for c, n in MEDIUM_NAMES.items()}
    lex = Lexicon({c: [t] for c, t in MEDIUM_ENTRIES.items()}, {"T": ["a b c d e"]})
    assert (lex.coverage("T", "E"), lex.coverage("T", "F"), lex.coverage("T", "C")) == (0.2, 0.2, 0.6)
    assert _dump(build_candidates(concepts, Hierarchy([]), 3, 1, ["T"], lex))["medium"] == [["T", ["C", "D1", "D2"]]]


def test_a_medium_set_of_one_needs_no_look_alike():
    """k = 1: min(MEDIUM_CONFUSERS, k - 1) = 0 confusers, one unalike concept."""
    concepts = {c: ConceptInfo(c, "T047", "DISO", n) for c, n in MEDIUM_NAMES.items() if c != "C"}
    lex = Lexicon({c: [t] for c, t in MEDIUM_ENTRIES.items() if c != "C"}, {"T": ["a b c d e"]})
    assert lex.look_alikes("T") == []  # no confuser: the rarest name words are in no other entry
    assert lex.coverage("T", "F") < 0.2  # without C, d is a commoner word than a, b, c
    assert _dump(build_candidates(concepts, Hierarchy([]), 1, 1, ["T"], lex))["medium"] == [["T", ["F"]]]  # the likest name


def test_easy_needs_another_type_no_shared_word_and_distance():
    entries = {"C0000001": "alpha beta", "C0000002": "one", "C0000003": "two", "C0000004": "three", "C0000005": "alpha four",
               "C0000006": "five"}
    tuis = {"C0000001": "T047", "C0000002": "T121", "C0000003": "T121", "C0000004": "T121", "C0000005": "T121", "C0000006": "T047"}
    concepts = {c: ConceptInfo(c, tuis[c], "X", t) for c, t in entries.items()}
    got = build_candidates(concepts, Hierarchy([]), 3, 1, ["C0000001"], _lexicon(entries))
    assert _dump(got)["easy"] == [["C0000001", ["C0000002", "C0000003", "C0000004"]]]
    near = Hierarchy([("C0000001", "A"), ("A", "B"), ("C0000004", "C"), ("C", "B")])  # a common ancestor 2 steps up
    assert build_candidates(concepts, near, 3, 1, ["C0000001"], _lexicon(entries))["easy"] == []
    far = Hierarchy([("C0000001", "A"), ("A", "B"), ("B", "R"), ("R", "S"), ("C0000004", "C"), ("C", "D"), ("D", "E"), ("E", "S")])
    assert _dump(build_candidates(concepts, far, 3, 1, ["C0000001"], _lexicon(entries)))["easy"] == [
        ["C0000001", ["C0000002", "C0000003", "C0000004"]]]  # EASY_DEPTH 3: 4 steps up is far


def test_excluded_concepts_and_ancestors_are_never_distractors(big):
    concepts, h, lexicon = big
    targets = sorted(concepts)[::11]
    full = build_candidates(concepts, h, 3, 1, targets, lexicon)
    used = sorted({d for sets in full.values() for s in sets for d in s.distractor_cuis})
    excluded = frozenset(used[::2])
    got = build_candidates(concepts, h, 3, 1, targets, lexicon, excluded=excluded)
    assert not {d for sets in got.values() for s in sets for d in s.distractor_cuis} & excluded
    assert _digest(got) == "b1db5ea168da3c35"
    for sets in got.values():
        for s in sets:
            assert not set(s.distractor_cuis) & set(h.ancestors_within(s.target_cui, 50))


def test_coverage_weighs_name_words_by_idf_log_1_plus_n_over_df():
    import math

    lex = _lexicon({"A": "heart attack", "B": "heart", "C": "attack rash", "D": "attack pain"})
    assert lex.idf == {"heart": math.log(1 + 4 / 2), "attack": math.log(1 + 4 / 3), "rash": math.log(5), "pain": math.log(5)}
    assert lex.coverage("A", "B") == pytest.approx(math.log(3) / (math.log(3) + math.log(7 / 3)))
    assert lex.coverage("A", "C") == pytest.approx(math.log(7 / 3) / (math.log(3) + math.log(7 / 3)))


def test_stop_words_and_numbers_are_never_words():
    lex = Lexicon({"A": ["disease of the 2 hearts"]}, {"A": ["disease of 3 hearts"]}, frozenset({"of", "the"}))
    assert lex.entry_words("A") == frozenset({"disease", "hearts"}) == lex.name_words("A")
    assert lex.words_of("The 12 hearts of stone") == frozenset({"hearts", "stone"})
    assert lex.entry_words("nobody") == frozenset() and lex.coverage("nobody", "A") == 0.0


def test_look_alikes_take_the_rarest_name_words_and_skip_common_ones():
    entries = {f"C{i:07d}": f"common word{i}" for i in range(60)}  # 'common' in 60 entries > cap 50
    entries.update({"T": "common rare1 rare2 rare3 rare4", "A": "rare1", "B": "rare2 rare2", "C": "rare3", "D": "rare4 x", "E": "x"})
    lex = _lexicon(entries)
    assert lex.look_alikes("T") == ["A", "B", "C"]  # rare4 (in 2 entries) is the least rare of the four
    assert lex.look_alikes("T", limit=4) == ["A", "B", "C", "D"]
    assert "C0000001" not in lex.look_alikes("T", limit=5)


def test_look_alikes_skip_words_in_more_entries_than_the_cap():
    """cap = max(50, entries // 50): a word in exactly cap entries still finds look-alikes, one
    in cap + 1 entries says nothing."""
    entries = {"T": "t", **{f"A{i:02d}": f"alpha a{i}" for i in range(50)}, **{f"B{i:02d}": f"beta b{i}" for i in range(51)}}
    lex = _lexicon(entries, {"T": "alpha beta"})
    assert lex.look_alikes("T") == [f"A{i:02d}" for i in range(50)]
    big = {"T": "t", **{f"F{i:04d}": f"filler f{i}" for i in range(2547)}, **{f"G{i:02d}": f"gamma g{i}" for i in range(52)}}
    assert len(big) == 2600  # cap 52
    assert _lexicon(big, {"T": "gamma"}).look_alikes("T") == [f"G{i:02d}" for i in range(52)]


def test_confusion_records_are_values():
    c = ConceptInfo("C0000001", "T047", "DISO", "fever")
    s = ConfusionCandidate("C0000001", "fever", "hard", ("C0000002",))
    assert {c: 1}[ConceptInfo("C0000001", "T047", "DISO", "fever")] == 1
    assert {s: 1}[ConfusionCandidate("C0000001", "fever", "hard", ("C0000002",))] == 1


# ============================================================================ allocator

from tasks.allocation.allocator import Allocator, Assignment, Candidate, Realization, seeded_order  # noqa: E402
from tasks.allocation.tiers import ConfusionCandidate  # noqa: E402

SHINGLES = {"en": 5, "fr": 5, "es": 5, "de": 5}
WORDS = {  # texts that share no 5-gram with each other
    "a": "alpha bravo charlie delta echo foxtrot golf", "b": "hotel india juliett kilo lima mike november",
    "c": "oscar papa quebec romeo sierra tango uniform", "d": "victor whiskey xray yankee zulu zero one",
    "e": "two three four five six seven eight nine", "f": "red orange yellow green blue indigo violet",
    "g": "north south east west up down left right", "h": "january february march april may june july",
}


def _alloc(quotas: dict, languages=("en", "fr", "es"), seed: int = 5) -> Allocator:
    return Allocator(dict(quotas), list(languages), dict(SHINGLES), 0.7, 128, seed)


def _cand(cid, native, text, pivot, cuis, reals, task="xqa"):
    return Candidate(cid, task, native, text, pivot, tuple(cuis), {l: Realization(t, p) for l, (t, p) in reals.items()})


def test_a_translated_querys_text_is_indexed_for_near_duplicates():
    """A is English, placed in French as a translation; B is a French question with the same
    French text. B must be dropped as A's near-duplicate on text:fr."""
    fr_text = "quelle est la dose initiale recommandée de lévothyroxine chez l'adulte"
    a = _cand("A", "en", WORDS["a"], WORDS["a"], ["C0000001"], {"fr": (fr_text, "human-translated")})
    b = _cand("B", "fr", fr_text, WORDS["b"], ["C0000002"], {"fr": (fr_text, "native"), "en": (WORDS["b"], "native")})
    alloc = _alloc({("xqa", "fr"): 5, ("xqa", "en"): 5})
    alloc.allocate_items([b, a])  # A has fewer realizations: placed first
    assert [(x.id, x.lang, x.provenance) for x in alloc.assignments] == [("A", "fr", "human-translated")]
    assert alloc.dropped == [("B", "near-duplicate of A (text:fr, jaccard=1.00)")]


def test_allocation_does_not_depend_on_input_order():
    cands = [_cand(k, "en", WORDS[k], WORDS[k], [f"C000000{i}"], {"en": (WORDS[k], "native"), "fr": (f"{WORDS[k]} fr", "human-translated")})
             for i, k in enumerate("abcdef")]
    runs = []
    for order in (cands, cands[::-1], cands[2:] + cands[:2]):
        alloc = _alloc({("xqa", "en"): 2, ("xqa", "fr"): 3})
        alloc.allocate_items(list(order))
        runs.append(([(x.id, x.lang) for x in alloc.assignments], alloc.dropped))
    assert runs[0] == runs[1] == runs[2]
    expected = sorted(cands, key=lambda c: seeded_order(5, c.id))  # same number of realizations: the seeded shuffle
    assert [i for i, _ in runs[0][0]] == [c.id for c in expected][:5]


def test_a_question_offered_to_both_tasks_is_shuffled_by_its_evidence_copys_id():
    """Copies of one question share the shuffle key of the first copy in (task order, id),
    whatever order the sources list them in: here Q's evidence copy sorts before R, its xqa
    copy after; with room for one, Q is placed."""
    seed = next(s for s in range(1000) if seeded_order(s, "Q-e") < seeded_order(s, "R-e") < seeded_order(s, "Q-x"))
    q_x = _cand("Q-x", "en", WORDS["a"], WORDS["a"], ["C0000001"], {"en": (WORDS["a"], "native")}, task="xqa")
    q_e = _cand("Q-e", "en", WORDS["a"], WORDS["a"], ["C0000001"], {"en": (WORDS["a"], "native")}, task="evidence")
    r_e = _cand("R-e", "en", WORDS["b"], WORDS["b"], ["C0000002"], {"en": (WORDS["b"], "native")}, task="evidence")
    for order in ([q_x, q_e, r_e], [r_e, q_e, q_x]):
        alloc = _alloc({("evidence", "en"): 1}, languages=("en",), seed=seed)
        alloc.allocate_items(order)
        assert [a.id for a in alloc.assignments] == ["Q-e"]


def test_the_least_filled_cell_then_registry_order():
    alloc = _alloc({("xqa", "en"): 2, ("xqa", "fr"): 4, ("xqa", "es"): 4})
    reals = {l: (f"{WORDS[k]} {l}", "human-translated") for l, k in (("en", "a"), ("fr", "b"), ("es", "c"))}
    first = _cand("x1", "en", WORDS["d"], WORDS["d"], ["C0000001"], reals)
    assert alloc.choose_language(first) == ("en", "")  # all empty: registry order
    alloc.filled[("xqa", "en")] = 1  # 1/2 full, fr 0/4
    assert alloc.choose_language(first) == ("fr", "")
    alloc.filled[("xqa", "fr")] = 1  # fr 1/4 = es? no: es 0/4 is emptier
    assert alloc.choose_language(first) == ("es", "")
    alloc.filled[("xqa", "es")] = 2  # en 1/2 = es 2/4 > fr 1/4
    assert alloc.choose_language(first) == ("fr", "")


def test_a_native_question_stays_in_its_language_while_there_is_room():
    alloc = _alloc({("xqa", "en"): 1, ("xqa", "fr"): 1})
    c = _cand("n", "fr", WORDS["a"], WORDS["b"], ["C0000001"], {"fr": (WORDS["a"], "native"), "en": (WORDS["b"], "native")})
    assert alloc.choose_language(c) == ("fr", "")
    alloc.filled[("xqa", "fr")] = 1
    assert alloc.choose_language(c) == ("en", "")
    alloc.filled[("xqa", "en")] = 1
    assert alloc.choose_language(c) == (None, "every cell it can be realized in is full")
    assert alloc.choose_language(_cand("z", "fr", "x", None, ["C1"], {})) == (None, "no realization in any build language")


def test_owned_key_concepts_decide_the_cell():
    alloc = _alloc({("xqa", "en"): 1, ("xqa", "fr"): 2, ("evidence", "en"): 1})
    alloc.owner.update({"C0000001": ("xqa", "fr"), "C0000002": ("evidence", "en"), "C0000003": ("xqa", "es")})
    reals = {"en": (WORDS["a"], "native"), "fr": (WORDS["b"], "human-translated")}
    assert alloc.choose_language(_cand("1", "en", WORDS["a"], WORDS["a"], ["C0000001", "C0000009"], reals)) == ("fr", "")
    assert alloc.choose_language(_cand("2", "en", WORDS["a"], WORDS["a"], ["C0000001", "C0000002"], reals)) == (
        None, "key concepts already in cells evidence/en and xqa/fr")
    assert alloc.choose_language(_cand("3", "en", WORDS["a"], WORDS["a"], ["C0000002"], reals)) == (None, "key concept already in cell evidence/en")
    assert alloc.choose_language(_cand("4", "en", WORDS["a"], WORDS["a"], ["C0000003"], reals)) == (
        None, "key concept in cell xqa/es, where the item has no realization")
    alloc.filled[("xqa", "fr")] = 2
    assert alloc.choose_language(_cand("5", "en", WORDS["a"], WORDS["a"], ["C0000001"], reals)) == (None, "key concept in cell xqa/fr, which is full")


def test_placing_items_records_owners_counts_and_reasons():
    alloc = _alloc({("xqa", "en"): 1, ("xqa", "fr"): 1})
    items = [
        _cand("a", "en", WORDS["a"], WORDS["a"], ["C0000002", "C0000001"], {"en": (WORDS["a"], "native")}),
        _cand("b", "en", WORDS["b"], WORDS["b"], [], {"en": (WORDS["b"], "native")}),
        _cand("c", "en", WORDS["c"], WORDS["a"], ["C0000003"], {"en": (WORDS["c"], "native"), "fr": (WORDS["d"], "human-translated")}),
        _cand("d", "fr", WORDS["e"], WORDS["f"], ["C0000004"], {"fr": (WORDS["e"], "native"), "en": (WORDS["f"], "native")}),
    ]
    alloc.allocate_items(items)
    placed = {x.id: x for x in alloc.assignments}
    assert placed["a"] == Assignment("a", "xqa", "en", WORDS["a"], "native", WORDS["a"], ("C0000001", "C0000002"))
    assert alloc.filled == {("xqa", "en"): 1, ("xqa", "fr"): 1} and set(placed) == {"a", "d"}
    assert alloc.owner["C0000001"] == ("xqa", "en") and alloc.owner["C0000004"] == ("xqa", "fr")
    assert dict(alloc.dropped) == {"b": "no key concept grounded", "c": "near-duplicate of a (pivot, jaccard=1.00)"}


def test_a_realization_clash_tries_the_next_language_and_reports_the_clash():
    alloc = _alloc({("xqa", "en"): 1, ("xqa", "fr"): 2, ("xqa", "es"): 2})
    alloc.allocate_items([_cand("k", "fr", WORDS["a"], WORDS["b"], ["C0000001"], {"fr": (WORDS["a"], "native")})])
    # its French text equals k's: French clashes, Spanish is next
    two = _cand("t", "en", WORDS["c"], WORDS["c"], ["C0000002"], {"fr": (WORDS["a"], "human-translated"), "es": (WORDS["d"], "human-translated")})
    alloc.allocate_items([two])
    assert [(x.id, x.lang) for x in alloc.assignments] == [("k", "fr"), ("t", "es")]
    three = _cand("u", "en", WORDS["e"], WORDS["e"], ["C0000003"], {"fr": (WORDS["a"], "human-translated")})
    alloc.allocate_items([three])
    assert alloc.dropped == [("u", "near-duplicate of k (text:fr, jaccard=1.00)")]


def _name(key: str) -> str:
    """Six random hex words: two such names share no 5-gram."""
    h = hashlib.sha256(key.encode()).hexdigest()
    return " ".join(h[j : j + 6] for j in range(0, 36, 6))


def _sets(n: int, tier: str) -> list[ConfusionCandidate]:
    """n sets of one tier; each set's one distractor is its own (overlap scope 'all' lets a
    distractor serve one cell only)."""
    return [ConfusionCandidate(f"C{tier[0].upper()}{i:06d}", _name(f"{tier}{i}"), tier, (f"D{tier[0].upper()}{i:06d}",))
            for i in range(n)]


def test_confusion_sets_split_the_quota_across_tiers_and_languages():
    alloc = _alloc({("cd", "en"): 5, ("cd", "fr"): 4}, languages=("en", "fr"))
    pools = {t: _sets(4, t) for t in ("easy", "medium", "hard")}
    names = {s.target_cui: s.target_name for p in pools.values() for s in p}
    chosen = alloc.allocate_confusion_sets(pools, lambda cui, lang: Realization(f"{lang} {names[cui]}", "terminology"),
                                           ["easy", "medium", "hard"])
    per = {(a.lang, c.tier): 0 for a, c in chosen}
    for a, c in chosen:
        per[(a.lang, c.tier)] += 1
    assert per == {("en", "easy"): 2, ("en", "medium"): 2, ("en", "hard"): 1, ("fr", "easy"): 2, ("fr", "medium"): 1, ("fr", "hard"): 1}
    targets = [c.target_cui for _, c in chosen]
    assert len(targets) == len(set(targets)) == 9  # a target is used once
    # each language walks every pool from its start, skipping what is taken
    assert [c.target_cui for a, c in chosen if a.lang == "fr" and c.tier == "easy"] == [s.target_cui for s in pools["easy"][2:4]]
    a, c = chosen[0]
    assert a == Assignment(f"cd-en-{c.target_cui}", "cd", "en", f"en {c.target_name}", "terminology", c.target_name, (c.target_cui,))
    assert alloc.filled[("cd", "en")] == 5 and alloc.owner[c.target_cui] == ("cd", "en")


def test_confusion_sets_skip_owned_unnameable_and_duplicate_targets():
    alloc = _alloc({("cd", "en"): 3}, languages=("en",))
    pool = _sets(6, "easy")
    alloc.owner[pool[0].target_cui] = ("xqa", "en")  # owned by another cell
    dup = ConfusionCandidate("CX000001", pool[2].target_name, "easy", ("C9",))  # same name as pool[2]
    chosen = alloc.allocate_confusion_sets({"easy": [pool[0], pool[1], pool[2], dup, pool[3], pool[4], pool[5]]},
                                           lambda cui, lang: None if cui == pool[1].target_cui else Realization(cui, "terminology"),
                                           ["easy"])
    assert [c.target_cui for _, c in chosen] == [pool[2].target_cui, pool[3].target_cui, pool[4].target_cui]


def test_allocation_records_are_immutable_values():
    r = Realization("fièvre", "terminology")
    c1 = _cand("a", "en", "fever", "fever", ["C0000001"], {"fr": ("fièvre", "terminology")})
    c2 = _cand("a", "en", "fever", "fever", ["C0000001"], {"es": ("fiebre", "terminology")})
    a = Assignment("a", "xqa", "fr", "fièvre", "terminology", "fever", ("C0000001",))
    assert {r, Realization("fièvre", "terminology")} == {r}
    assert c1 == c2 and hash(c1) == hash(c2)  # realizations are not part of a candidate's identity
    assert {a: 1}[Assignment("a", "xqa", "fr", "fièvre", "terminology", "fever", ("C0000001",))] == 1
    with pytest.raises(AttributeError):
        a.lang = "es"


def test_a_cell_without_a_quota_gets_nothing():
    alloc = _alloc({("xqa", "en"): 1})  # no quota at all for fr
    c = _cand("n", "fr", WORDS["a"], WORDS["b"], ["C0000001"], {"fr": (WORDS["a"], "native")})
    assert alloc.choose_language(c) == (None, "every cell it can be realized in is full")


def test_confusion_sets_for_a_language_without_a_quota_or_with_too_few_candidates():
    def realize(cui, lang):
        return Realization(_name(lang + cui), "terminology")

    alloc = _alloc({("cd", "en"): 6}, languages=("en",))
    chosen = alloc.allocate_confusion_sets({"easy": _sets(1, "easy"), "hard": _sets(2, "hard")}, realize, ["easy", "hard"])
    assert [(a.lang, c.tier) for a, c in chosen] == [("en", "easy"), ("en", "hard"), ("en", "hard")]  # pools ran out
    alloc = _alloc({("cd", "en"): 2}, languages=("en", "fr"))  # fr has no cd quota: nothing, with candidates to spare
    chosen = alloc.allocate_confusion_sets({"easy": _sets(3, "easy"), "hard": _sets(3, "hard")}, realize, ["easy", "hard"])
    assert [(a.lang, c.tier) for a, c in chosen] == [("en", "easy"), ("en", "hard")]


def test_overlap_scope_all_gives_distractors_one_cell_and_key_does_not():
    pool = _sets(2, "easy")
    distractor = pool[0].distractor_cuis[0]
    for scope, placed, owns in (("all", [pool[1].target_cui], True), ("key", [pool[0].target_cui, pool[1].target_cui], False)):
        alloc = Allocator({("cd", "en"): 2}, ["en"], dict(SHINGLES), 0.7, 128, 5, overlap_scope=scope)
        alloc.owner[distractor] = ("xqa", "en")  # pool[0]'s distractor is another cell's key concept
        chosen = alloc.allocate_confusion_sets({"easy": pool}, lambda cui, lang: Realization(_name(lang + cui), "terminology"), ["easy"])
        assert [c.target_cui for _, c in chosen] == placed, scope
        assert (alloc.owner.get(pool[1].distractor_cuis[0]) == ("cd", "en")) is owns, scope


def test_strata_are_shared_out_from_a_probe_of_twice_the_tier_share():
    """quota 2, one tier: the probe looks at the first 4 viable sets (F T T T): share 3/4,
    round(2 * 0.75) = 2 sets from the True stratum, so c1 and c2; c0 waits and is not needed."""
    pool = _sets(6, "easy")
    true = {pool[i].target_cui for i in (1, 2, 3, 5)}
    alloc = _alloc({("cd", "en"): 2}, languages=("en",))
    chosen = alloc.allocate_confusion_sets({"easy": pool}, lambda cui, lang: Realization(_name(lang + cui), "terminology"), ["easy"],
                                           stratum=lambda cand, real: cand.target_cui in true)
    assert [c.target_cui for _, c in chosen] == [pool[1].target_cui, pool[2].target_cui]
    # T F F F F F: share 1/4, round(2 * 0.25) = 0 from True: c1 and c2
    alloc = _alloc({("cd", "en"): 2}, languages=("en",))
    chosen = alloc.allocate_confusion_sets({"easy": pool}, lambda cui, lang: Realization(_name(lang + cui), "terminology"), ["easy"],
                                           stratum=lambda cand, real: cand.target_cui == pool[0].target_cui)
    assert [c.target_cui for _, c in chosen] == [pool[1].target_cui, pool[2].target_cui]


def test_each_language_walks_the_pools_from_their_start():
    """A candidate the first language could not name stays available to the next one."""
    alloc = _alloc({("cd", "en"): 1, ("cd", "fr"): 1}, languages=("en", "fr"))
    pool = _sets(3, "easy")
    chosen = alloc.allocate_confusion_sets(
        {"easy": pool}, lambda cui, lang: None if (cui, lang) == (pool[0].target_cui, "en") else Realization(_name(lang + cui), "terminology"),
        ["easy"])
    assert [(a.lang, c.target_cui) for a, c in chosen] == [("en", pool[1].target_cui), ("fr", pool[0].target_cui)]


# ============================================================================ audit checks

from tasks.audit import checks as audit  # noqa: E402
from tasks.release.writers import file_entries  # noqa: E402

EN = {"code": "en", "name": "English", "scripts": ["Latin"], "detector_codes": ["en"], "umls_lat": "ENG",
      "grounder": "quickumls", "shingle_n": 5}


def _q(qid: str, text: str, cuis: list[str], lang: str = "en", pivot: str | None = None) -> dict:
    return {"_id": qid, "text": text, "lang": lang, "cuis": cuis, "pivot_text": pivot if pivot is not None else text,
            "provenance": "native", "split": "test"}


def _write_release(root: Path, cells: dict[str, dict], sets: list[dict] | None = None, srl: dict | None = None,
                   counts: dict | None = None, config: dict | None = None) -> Path:
    """A small release folder in the published format: cells {"task/lang": {"corpus": [...],
    "queries": [...], "qrels": [(q, d, score), ...]}}, confusion sets, a manifest that lists
    every file with its hash and every cell with its counts (or `counts` to override)."""
    def jsonl(path: Path, rows: list[dict]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")

    for cell, c in cells.items():
        d = root / cell
        jsonl(d / "corpus.jsonl", c["corpus"])
        jsonl(d / "queries.jsonl", c["queries"])
        (d / "qrels").mkdir(parents=True, exist_ok=True)
        (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{doc}\t{s}\n" for q, doc, s in c["qrels"]))
    jsonl(root / "cd" / "confusion_sets.jsonl", sets or [])
    manifest = {
        "version": "0.0.1", "build_id": "0" * 64, "code_version": "test", "inputs": {}, "dropped": {},
        "config": {"languages": ["en"], "seed": 1, "dedup": {"threshold": 0.7, "num_perm": 128}, "vocabulary": {"max_srl": 0},
                   **(config or {})},
        "languages": {"en": EN}, "sources_srl": {"DO": 0} if srl is None else srl,
        "cells": counts or {cell: {"queries": len(c["queries"]), "documents": len(c["corpus"]), "qrels": len(c["qrels"])}
                            for cell, c in cells.items()},
        "files": file_entries(root),
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")  # keys in the order given
    return root


def _cell(n: int = 2, prefix: str = "x", scores=None) -> dict:
    queries = [_q(f"{prefix}q{i}", _name(f"{prefix}q{i}"), [f"C00000{i:02d}"]) for i in range(n)]
    corpus = [{"_id": f"{prefix}d{i}", "title": "", "text": _name(f"{prefix}d{i}")} for i in range(n)]
    qrels = [(f"{prefix}q{i}", f"{prefix}d{i}", (scores or [1] * n)[i]) for i in range(n)]
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


def _failures(check) -> list[str]:
    return check.failures if not check.passed else []


def test_a_crafted_release_passes_the_structural_checks(tmp_path):
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell()}))
    for check in (audit.check_hashes, audit.check_schemas, audit.check_concept_overlap, audit.check_qrels,
                  audit.check_counts, audit.check_licence, audit.check_confusion_consistency):
        assert check(rel).passed, (check.__name__, check(rel).failures)
    assert audit.check_query_overlap(rel, {"en": audit.Language.model_validate(EN)}, {"threshold": 0.7, "num_perm": 128}, 1).passed


def test_a_query_whose_only_qrel_scores_zero_has_no_relevant_document(tmp_path):
    """qrels `score > 0`: a 0 is a judged non-relevant document, not an answer."""
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell(3, scores=[1, 0, 2])}))
    assert _failures(audit.check_qrels(rel)) == ["xqa/en: query 'xq1' has no relevant document"]


def test_qrels_naming_missing_queries_or_documents(tmp_path):
    cell = _cell(2)
    cell["qrels"] = [("xq0", "xd0", 1), ("xq1", "nope", 1), ("ghost", "xd1", 1)]
    fails = _failures(audit.check_qrels(audit.Release(_write_release(tmp_path, {"xqa/en": cell}))))
    assert fails == ["xqa/en/qrels/test.tsv:3: document 'nope' not in corpus.jsonl",
                     "xqa/en/qrels/test.tsv:4: query 'ghost' not in queries.jsonl"]


def test_a_concept_in_two_cells_and_a_query_in_two_cells(tmp_path):
    a, b = _cell(2, "a"), _cell(2, "b")
    b["queries"][1]["cuis"] = ["C0000099", "C0000000"]  # a's first concept
    b["queries"][0]["_id"] = "aq1"  # a's second query id
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": a, "evidence/en": b}))
    assert _failures(audit.check_concept_overlap(rel)) == ["C0000000: in cells evidence/en and xqa/en (key concept)"]
    en = {"en": audit.Language.model_validate(EN)}
    fails = _failures(audit.check_query_overlap(rel, en, {"threshold": 0.7, "num_perm": 128}, 1))
    assert fails == ["aq1: query id in evidence/en and xqa/en"]


def test_concept_overlap_reports_the_declared_scope_and_the_other_one(tmp_path):
    rel = audit.Release(_write_release(tmp_path / "a", {"xqa/en": _cell(2)}))
    assert audit.check_concept_overlap(rel).detail == "scope key: 2 concepts, each in one cell; scope all: 0 of 2 concepts in two or more cells"
    rel = audit.Release(_write_release(tmp_path / "b", {"xqa/en": _cell(2)}, config={"overlap": {"scope": "all"}}))
    assert audit.check_concept_overlap(rel).detail == "scope all: 2 concepts, each in one cell; scope key: 0 of 2 concepts in two or more cells"


def test_exact_and_near_duplicate_queries(tmp_path):
    a = _cell(3, "a")
    a["queries"][1]["text"] = a["queries"][1]["pivot_text"] = "  " + a["queries"][0]["text"].upper()  # same after normalising
    a["queries"][2]["text"] = a["queries"][2]["pivot_text"] = a["queries"][0]["text"][:-1] + "x"  # a one-character edit
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": a}))
    fails = _failures(audit.check_query_overlap(rel, {"en": audit.Language.model_validate(EN)}, {"threshold": 0.7, "num_perm": 128}, 1))
    assert fails[:2] == ["aq1 (xqa/en): same text:en text as aq0", "aq1 (xqa/en): same pivot text as aq0"]
    assert fails[2].startswith("aq2 (xqa/en): near-duplicate of aq0 (text:en, jaccard=0.")
    assert fails[3].startswith("aq2 (xqa/en): near-duplicate of aq0 (pivot, jaccard=0.") and len(fails) == 4


def test_counts_hashes_schemas_and_licence_failures(tmp_path):
    cell = _cell(2)
    root = _write_release(tmp_path, {"xqa/en": cell}, srl={"DO": 0, "MSH": 3},
                          counts={"xqa/en": {"queries": 3, "documents": 2, "qrels": 2}})
    rel = audit.Release(root)
    assert _failures(audit.check_counts(rel)) == ["xqa/en: 2 queries, manifest says 3"]
    assert _failures(audit.check_licence(rel)) == ["source MSH has restriction level 3 > 0"]
    (root / "xqa" / "en" / "corpus.jsonl").write_text('{"_id": "xd0", "title": "", "text": ""}\n')  # tampered, one row
    (root / "extra.txt").write_text("x")
    rel = audit.Release(root)
    assert _failures(audit.check_hashes(rel)) == ["extra.txt: not listed in the manifest", "xqa/en/corpus.jsonl: sha256 differs from the manifest"]
    assert _failures(audit.check_schemas(rel)) == ["xqa/en/corpus.jsonl:1: field text: String should have at least 1 character"]
    assert "xqa/en/corpus.jsonl: 1 rows, manifest says 2" in _failures(audit.check_counts(rel))


def test_an_empty_cell_fails_unless_allowed(tmp_path):
    empty = {"corpus": [], "queries": [], "qrels": []}
    assert _failures(audit.check_counts(audit.Release(_write_release(tmp_path / "a", {"xqa/en": empty})))) == ["xqa/en: empty cell"]
    allowed = _write_release(tmp_path / "b", {"xqa/en": empty}, config={"allow_empty_cells": True})
    assert audit.check_counts(audit.Release(allowed)).passed
    assert _failures(audit.check_licence(audit.Release(_write_release(tmp_path / "c", {"xqa/en": _cell()}, srl={})))) == [
        "manifest lists no vocabulary sources (sources_srl)"]


# --- the audit's bookkeeping: caps, order, counts, first errors -------------------------------------


def test_a_check_caps_its_failures_and_counts_them_all(tmp_path):
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell(25, scores=[0] * 25)}))
    check = audit.check_qrels(rel)
    assert (check.passed, check.detail, len(check.failures)) == (False, "25 failure(s)", 20)
    assert check.failures == [f"xqa/en: query {q!r} has no relevant document" for q in sorted(f"xq{i}" for i in range(25))][:20]
    ok = audit.check_qrels(audit.Release(_write_release(tmp_path / "ok", {"xqa/en": _cell(2)})))
    assert (ok.passed, ok.detail, ok.failures) == (True, "every qrel resolves; every query has a relevant document", [])


def test_release_reads_cells_in_order_and_survives_missing_files(tmp_path):
    root = _write_release(tmp_path, {"xqa/en": _cell(2, "x"), "evidence/en": _cell(2, "e")})
    manifest = json.loads((root / "manifest.json").read_text())
    cells = manifest["cells"]
    manifest["cells"] = {"xqa/en": cells["xqa/en"], "evidence/en": cells["evidence/en"]}  # not in sorted order
    (root / "manifest.json").write_text(json.dumps(manifest))
    (root / "xqa" / "en" / "queries.jsonl").write_text('{"_id": "xq0", "text": ""}\n')
    (root / "evidence" / "en" / "queries.jsonl").unlink()
    rel = audit.Release(root)
    assert list(rel.cells) == ["evidence/en", "xqa/en"] and rel.cells["evidence/en"]["queries"] == []
    assert rel.errors == ["evidence/en/queries.jsonl: missing"]
    fails = audit.check_schemas(rel).failures
    assert fails[0] == "evidence/en/queries.jsonl: missing" and fails[1].startswith("xqa/en/queries.jsonl:1: field text")


def test_schemas_count_records_report_first_errors_and_malformed_qrels(tmp_path):
    cell = _cell(2)
    cell["qrels"] = [("xq0", "xd0", 1), ("xq1", "xd1", "x"), ("", "xd1", 1), ("xq1", "", 1)]
    root = _write_release(tmp_path, {"xqa/en": cell}, sets=[{"set_id": "s", "lang": "en", "tier": "extreme", "target_cui": "X1",
                                                           "distractor_cuis": []}])
    with (root / "xqa" / "en" / "qrels" / "test.tsv").open("a") as fh:
        fh.write("xq1\txd1\n")
    rel = audit.Release(root)
    valid_set = {"set_id": "s", "lang": "en", "tier": "easy", "target_cui": "C0000001", "distractor_cuis": ["C0000002"]}
    ok = _write_release(tmp_path / "ok", {"xqa/en": _cell(2)}, sets=[valid_set])
    assert audit.check_schemas(audit.Release(ok)).detail == "7 records valid"  # 2 docs, 2 queries, 2 qrels, 1 set
    assert audit.check_schemas(rel).failures == [
        "xqa/en/qrels/test.tsv:3: expected 'query-id<TAB>corpus-id<TAB>integer score'",
        "xqa/en/qrels/test.tsv:4: String should have at least 1 character",
        "xqa/en/qrels/test.tsv:5: String should have at least 1 character",
        "xqa/en/qrels/test.tsv:6: expected 'query-id<TAB>corpus-id<TAB>integer score'",
        "cd/confusion_sets.jsonl:1: field tier: Input should be 'easy', 'medium' or 'hard'",
    ]
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["code_version"], manifest["dropped"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    assert audit.check_schemas(audit.Release(root)).failures[0] == "manifest.json: field code_version: Field required"


def test_failures_are_listed_in_name_order(tmp_path):
    cell = _cell(6, scores=[0] * 6)
    root = _write_release(tmp_path, {"xqa/en": cell}, srl={"ZZ": 4, "AA": 3, "MM": 5})
    for name in ("zeta.txt", "alpha.txt", "mid.txt", "beta.txt"):
        (root / name).write_text("x")
    for name in ("corpus.jsonl", "queries.jsonl"):
        (root / "xqa" / "en" / name).write_text("")
    for name in ("z", "dev", "b"):  # read in name order, whatever order the folder lists them in
        (root / "xqa" / "en" / "qrels" / f"{name}.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = dict(reversed(list(manifest["files"].items())))  # listed in reverse name order
    (root / "manifest.json").write_text(json.dumps(manifest))
    rel = audit.Release(root)
    assert [q[0] for q in rel.cells["xqa/en"]["qrels"]] == [f"xqa/en/qrels/{n}.tsv" for n in ("b", "dev", "test", "test", "test",
                                                                                              "test", "test", "test", "z")]
    assert _failures(audit.check_hashes(rel)) == [
        "alpha.txt: not listed in the manifest", "beta.txt: not listed in the manifest", "mid.txt: not listed in the manifest",
        "xqa/en/qrels/b.tsv: not listed in the manifest", "xqa/en/qrels/dev.tsv: not listed in the manifest",
        "xqa/en/qrels/z.tsv: not listed in the manifest", "zeta.txt: not listed in the manifest",
        "xqa/en/corpus.jsonl: sha256 differs from the manifest", "xqa/en/queries.jsonl: sha256 differs from the manifest"]
    assert _failures(audit.check_counts(rel))[:2] == ["xqa/en/corpus.jsonl: 0 rows, manifest says 6",
                                                      "xqa/en/queries.jsonl: 0 rows, manifest says 6"]
    assert _failures(audit.check_licence(rel)) == ["source AA has restriction level 3 > 0", "source MM has restriction level 5 > 0",
                                                   "source ZZ has restriction level 4 > 0"]


def test_the_licence_level_defaults_to_zero(tmp_path):
    root = _write_release(tmp_path, {"xqa/en": _cell()}, srl={"DO": 0, "X": 1})
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["config"]["vocabulary"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    assert _failures(audit.check_licence(audit.Release(root))) == ["source X has restriction level 1 > 0"]


def test_queries_without_relevant_documents_are_listed_in_order(tmp_path):
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell(5, scores=[0, 1, 0, 0, -1])}))
    assert _failures(audit.check_qrels(rel)) == [f"xqa/en: query 'xq{i}' has no relevant document" for i in (0, 2, 3, 4)]


def test_query_overlap_of_a_language_outside_the_registry_uses_5_grams(tmp_path):
    """'xx' is not in the manifest's registry: its texts are compared on 5-grams. These two
    are near-duplicates on 5-grams (25/35) but not on 6-grams (23/35)."""
    a = "abcdefghijklmnopqrstuvwxyz01234567"
    b = a[:17] + "9" + a[18:]
    assert jaccard(char_shingles(a, 5), char_shingles(b, 5)) >= 0.7 > jaccard(char_shingles(a, 6), char_shingles(b, 6))
    cell = {"corpus": [{"_id": "d", "title": "", "text": "t"}],
            "queries": [_q("q1", a, ["C0000001"], "xx", _name("p1")), _q("q2", b, ["C0000002"], "xx", _name("p2"))], "qrels": []}
    rel = audit.Release(_write_release(tmp_path, {"xqa/xx": cell}))
    # seed 0: LSH proposes the pair (it may miss a pair this close to the threshold)
    fails = _failures(audit.check_query_overlap(rel, {"en": audit.Language.model_validate(EN)}, {"threshold": 0.7, "num_perm": 128}, 0))
    assert len(fails) == 1 and fails[0].startswith("q2 (xqa/xx): near-duplicate of q1 (text:xx")


def test_language_check_counts_queries_and_names_unknown_languages(tmp_path):
    cells = {"xqa/en": {"corpus": [], "queries": [_q("q1", "What is the first-line treatment of acute bronchitis in adults?", ["C1"])],
                        "qrels": []},
             "xqa/xx": {"corpus": [], "queries": [_q("q2", "anything", ["C2"], "xx")], "qrels": []}}
    rel = audit.Release(_write_release(tmp_path, cells))
    en = {"en": audit.Language.model_validate(EN)}
    check = audit.check_language(rel, en, "lingua-subset")
    assert check.failures == ["xqa/xx: language 'xx' not in the manifest's registry"]
    del rel.cells["xqa/xx"]
    check = audit.check_language(rel, en, "lingua-subset")
    assert (check.passed, check.detail) == (True, "1 queries in their cell's language and script")


# ============================================================================ concept entries

from tasks.allocation.concept_entries import (  # noqa: E402
    MAX_DESCRIPTION_WORDS, MAX_SYNONYMS, EntryParts, concept_entry, english_queries, entry_parts, first_fair_query,
)


def test_an_entry_keeps_at_most_max_synonyms_and_drops_the_name_and_the_query():
    syns = tuple(f"syn{i}" for i in range(MAX_SYNONYMS + 1))
    parts = EntryParts("C0000001", "Foo", "", ("foo",) + syns)
    assert MAX_SYNONYMS == 8
    assert concept_entry(parts) == {"_id": "C0000001", "title": "Foo", "text": "Synonyms: " + "; ".join(syns[:8]) + "."}
    assert concept_entry(parts, withheld="SYN0")["text"] == "Synonyms: " + "; ".join(syns[1:9]) + "."
    assert concept_entry(EntryParts("C0000001", "Foo", "  ", ("FOO",))) == {"_id": "C0000001", "title": "Foo", "text": "Foo"}
    assert concept_entry(EntryParts("C0000001", "Foo", "Bar.", ()), withheld=None)["text"] == "Bar."


def test_a_definition_of_max_words_is_a_query_one_more_is_not():
    assert MAX_DESCRIPTION_WORDS == 40
    words = [f"w{i}" for i in range(41)]
    assert english_queries(EntryParts("C1", "Foo", " ".join(words[:40]), ())) == [" ".join(words[:40])]
    assert english_queries(EntryParts("C1", "Foo", " ".join(words), ())) == []
    assert english_queries(EntryParts("C1", "Foo", "", ())) == []


def test_english_queries_rank_by_shared_words_then_length_then_text_and_skip_codes():
    parts = EntryParts("C1", "Big red fever", "", (
        "red fever", "big red fever", "ABCDEFGH", "ABCDEFGHI", "hot skin", "cold skin", "  ", "Red Fever", "fever (finding)",
        "illness NOS", "fever [obs]"))
    # 'ABCDEFGH' (8 characters) is an abbreviation; 'ABCDEFGHI' (9) is not; 'Red Fever' repeats 'red fever'
    assert english_queries(parts) == ["hot skin", "ABCDEFGHI", "cold skin", "red fever"]  # shorter first, then text order


def test_first_fair_query_returns_the_first_candidate_its_entry_does_not_contain():
    parts = EntryParts("C1", "Heart attack", "Sudden heart attack pain.", ("cardiac infarction", "coronary event"))
    assert first_fair_query(["heart attack", "cardiac infarction", "coronary event"], parts) == "cardiac infarction"
    assert first_fair_query([], parts) is None


def test_entry_parts_reads_english_atoms_in_order_and_skips_unnamed_concepts():
    concepts = pa.table({"cui": ["C1", "C2", "C3"], "name_en": ["Fever", None, "Rash"], "definition": [None, "x", "Red skin."]})
    atoms = pa.table({"cui": ["C1", "C1", "C3", "C1"], "lang": ["en", "fr", "en", "en"], "str": ["Pyrexia", "Fièvre", "Eruption", "Hyperthermia"]})
    assert entry_parts(concepts, atoms) == {"C1": EntryParts("C1", "Fever", "", ("Pyrexia", "Hyperthermia")),
                                            "C3": EntryParts("C3", "Rash", "Red skin.", ("Eruption",))}


def test_english_queries_rank_by_the_share_of_words_in_common_not_their_count():
    # 'red' shares 1 of 2 words with the name (0.5), 'red hot dry skin' 1 of 5 (0.2): fewer shared first
    assert english_queries(EntryParts("C1", "red fever", "", ("red", "red hot dry skin"))) == ["red hot dry skin", "red"]
    # 'fever fever' has the name's one word only: 1/1 = 1.0, after 'fever rashes' (1/2), though longer is later anyway
    assert english_queries(EntryParts("C1", "Fever", "", ("fever fever", "fever rashes"))) == ["fever rashes", "fever fever"]


def test_entry_parts_are_values():
    import dataclasses

    parts = EntryParts("C1", "Fever", "", ("Pyrexia",))
    assert {parts: 1}[EntryParts("C1", "Fever", "", ("Pyrexia",))] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        parts.name = "Rash"


# ============================================================================ audit tier check

from tests.tasks.audit.test_tier_check import REGISTRY, _sets as _tier_sets, _write_cell as _write_cd_cell  # noqa: E402


def _tier_check(root: Path, sets: list) -> tuple:
    _write_cd_cell(root, sets)
    return audit.check_tiers(audit.Release(root), REGISTRY)


def test_the_tier_check_reports_every_tier_and_the_cells_it_measured(tmp_path):
    check, _ = _tier_check(tmp_path / "a", _tier_sets(audit.TIER_MIN_SETS, ordered=True))
    assert (check.passed, check.failures) == (True, [])
    assert check.detail == ("easy: sets=30 sim=0.0125; medium: sets=30 sim=0.0917; hard: sets=30 sim=0.0993; "
                            "BM25 within-set accuracy@1 easy/medium/hard: cd/en 1.0/0.5/0.0 "
                            "(ordering checked in cd/en: cells with >= 30 sets per tier)")
    check, _ = _tier_check(tmp_path / "b", _tier_sets(2, ordered=True))
    assert check.detail.endswith("cd/en 1.0/0.5/0.0 (ordering checked in no cell: cells with >= 30 sets per tier)")


def test_flat_tiers_fail_on_similarity_and_on_bm25(tmp_path):
    check, _ = _tier_check(tmp_path, _tier_sets(audit.TIER_MIN_SETS, ordered=False))
    assert check.failures == [
        "mean target-distractor similarity not increasing easy<medium<hard: [0.0125, 0.0125, 0.0125]",
        "cd/en: BM25 within-set accuracy@1 does not fall from easy to hard beyond noise: 1.0 -> 1.0 (z 0.00 <= 2.0)"]
    assert check.detail == "2 failure(s)"


def test_a_tier_without_sets_is_named_with_the_counts(tmp_path):
    check, stats = _tier_check(tmp_path, [s for s in _tier_sets(3, ordered=True) if s[0] != "medium"])
    assert check.failures == ["a tier has no confusion set: easy=3, medium=0, hard=3"]
    assert stats["tiers"]["medium"] == {"sets": 0, "mean_similarity": None}
    assert stats["bm25_within_set"]["cd/en"]["medium"] == {"n": 0, "accuracy": None}


def test_confusion_sets_must_match_their_queries(tmp_path):
    _write_cd_cell(tmp_path, _tier_sets(1, ordered=True))
    rel = audit.Release(tmp_path)
    assert audit.check_confusion_consistency(rel).detail == "3 sets match their queries"
    rel.confusion[0][1]["distractor_cuis"].append(rel.confusion[0][1]["target_cui"])
    rel.confusion[1][1]["lang"] = "fr"
    rel.confusion[2][1]["set_id"] = "nowhere"
    assert _failures(audit.check_confusion_consistency(rel)) == [
        "cd/confusion_sets.jsonl:1: target is also a distractor",
        "cd/confusion_sets.jsonl:2: set 'cd-en-C0010000' disagrees with its query's cuis or lang",
        "cd/confusion_sets.jsonl:3: set 'nowhere' has no query"]



def test_trivial_match_names_each_cd_query_found_in_its_entry(tmp_path):
    _write_cd_cell(tmp_path / "a", [("easy", "word0 alpha", "word0 alpha target", ["x y"]),
                                    ("hard", "fever", "word1 target", ["fever fever"])])  # found only in a distractor
    rel = audit.Release(tmp_path / "a")
    check = audit.check_trivial_match(rel)
    assert check.failures == ["cd/en/queries.jsonl:1: query 'word0 alpha' is found in its entry C0000000"]
    rel.cells["cd/en"]["qrels"] = [(p, n, [q, d, "0"]) for p, n, (q, d, _) in rel.cells["cd/en"]["qrels"]]  # judged not relevant
    assert audit.check_trivial_match(rel).passed
    _write_cd_cell(tmp_path / "b", [("easy", "fever", "word1 target", ["fever fever"])])
    rel = audit.Release(tmp_path / "b")
    ok = audit.check_trivial_match(rel)
    assert (ok.passed, ok.detail) == (True, "1 cd queries, none found in its relevant entry by string matching")
    rel.cells["cd/en"]["corpus"] = [(1, {"_id": "elsewhere", "title": "fever", "text": "fever"})]  # the qrel's entry is missing
    assert audit.check_trivial_match(rel).passed
