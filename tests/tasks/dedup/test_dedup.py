"""tasks.dedup.near_duplicates: MinHash LSH near-duplicate index (candidates confirmed by exact Jaccard)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from common.text import char_shingles, jaccard
from tasks.dedup.minhash import MinHasher, lsh_query_banded
from tasks.dedup.near_duplicates import Duplicate, NearDuplicateIndex, find_duplicates, signature

ROOT = Path(__file__).resolve().parents[3]
THRESHOLD, NUM_PERM, SEED = 0.7, 128, 20261122

# 20 words
Q1 = ("Which first-line drug is recommended for long term control of blood pressure "
      "in adults with chronic kidney disease and proteinuria?")
Q1_EDIT = Q1.replace("adults", "patients")  # a one-word edit
Q2 = ("What laboratory findings distinguish iron deficiency anaemia from the anaemia "
      "of chronic inflammation in elderly outpatients?")
JA1 = "心筋梗塞の典型的な症状は何ですか？高齢者の場合について教えてください。"
JA2 = "心筋梗塞の典型的な症状は何ですか？高齢者の場合について教えて下さい。"


def dups(records, threshold=THRESHOLD, seed=SEED):
    return find_duplicates(records, threshold, NUM_PERM, seed)


def test_fixtures_have_the_intended_shape():
    assert len(Q1.split()) == 20
    assert len(set(Q1.split()) ^ set(Q1_EDIT.split())) == 2  # exactly one word swapped


def test_exact_duplicate_after_normalisation():
    out = dups([("a", "pivot", "Heart attack", 5), ("b", "pivot", "  HEART\tattack ", 5),
                ("c", "pivot", "Ｈｅａｒｔ ａｔｔａｃｋ", 5)])
    assert out == [Duplicate("b", "a", "pivot", 1.0), Duplicate("c", "a", "pivot", 1.0)]
    assert out[0].reason == "near-duplicate of a (pivot, jaccard=1.00)"


def test_one_word_edit_is_a_near_duplicate():
    j = jaccard(char_shingles(Q1, 5), char_shingles(Q1_EDIT, 5))
    assert THRESHOLD <= j < 1.0
    out = dups([("q1", "pivot", Q1, 5), ("q2", "pivot", Q1_EDIT, 5)])
    assert len(out) == 1
    d = out[0]
    assert (d.item_id, d.kept_id, d.namespace) == ("q2", "q1", "pivot")
    assert d.jaccard == j  # confirmed by the exact Jaccard, not the MinHash estimate


def test_different_questions_are_not_duplicates():
    assert jaccard(char_shingles(Q1, 5), char_shingles(Q2, 5)) < THRESHOLD
    assert dups([("q1", "pivot", Q1, 5), ("q2", "pivot", Q2, 5)]) == []


def test_earlier_record_is_kept_and_dropped_items_are_not_kept_ids():
    out = dups([("q1", "pivot", Q1, 5), ("q2", "pivot", Q1_EDIT, 5), ("q3", "pivot", Q1, 5), ("q4", "pivot", Q2, 5)])
    assert [(d.item_id, d.kept_id) for d in out] == [("q2", "q1"), ("q3", "q1")]


def test_short_texts_are_compared_not_skipped():
    out = dups([("a", "pivot", "flu", 5), ("b", "pivot", "FLU", 5), ("c", "pivot", "gout", 5),
                ("d", "pivot", "Gout", 5), ("e", "pivot", "goat", 5), ("f", "pivot", "gut", 5)])
    assert [(d.item_id, d.kept_id) for d in out] == [("b", "a"), ("d", "c")]


def test_cjk_near_duplicates_with_bigrams():
    j = jaccard(char_shingles(JA1, 2), char_shingles(JA2, 2))
    assert THRESHOLD <= j < 1.0
    out = dups([("ja1", "text:ja", JA1, 2), ("ja2", "text:ja", JA2, 2),
                ("ja3", "text:ja", "糖尿病性腎症の早期診断に有用な検査は何ですか？", 2)])
    assert [(d.item_id, d.kept_id, d.namespace) for d in out] == [("ja2", "ja1", "text:ja")]
    assert out[0].jaccard == j


def test_short_cjk_terms_and_voicing_marks():
    out = dups([("a", "text:ja", "痛風", 2), ("b", "text:ja", "痛風", 2), ("c", "text:ja", "頭痛", 2),
                ("d", "text:ja", "バス", 2), ("e", "text:ja", "ハス", 2)])
    assert [(d.item_id, d.kept_id) for d in out] == [("b", "a")]


def test_namespaces_isolate():
    out = dups([("p", "pivot", Q1, 5), ("j", "text:ja", Q1, 5), ("f", "text:fr", Q1, 5)])
    assert out == []
    # the same id in two namespaces is two different entries
    out = dups([("x", "pivot", Q1, 5), ("x", "text:ja", JA1, 2), ("y", "text:ja", JA2, 2), ("z", "pivot", Q1_EDIT, 5)])
    assert [(d.item_id, d.kept_id, d.namespace) for d in out] == [("y", "x", "text:ja"), ("z", "x", "pivot")]


def test_index_find_and_add():
    index = NearDuplicateIndex(THRESHOLD, NUM_PERM, SEED)
    assert index.find("q1", "pivot", Q1, 5) is None  # empty index
    index.add("q1", "pivot", Q1, 5)
    assert index.find("q1", "pivot", Q1, 5) is None  # an item is not its own duplicate
    assert index.find("q2", "pivot", Q1_EDIT, 5).kept_id == "q1"
    assert index.find("q2", "text:fr", Q1_EDIT, 5) is None
    index.add("q1", "pivot", Q2, 5)  # re-adding an id is a no-op, not an LSH error
    assert index.find("q9", "pivot", Q2, 5) is None
    assert index.find("blank", "pivot", "   ", 5) is None


def test_best_match_wins():
    near = Q1.replace("adults", "people")
    nearer = Q1.replace("proteinuria", "proteinurias")
    index = NearDuplicateIndex(THRESHOLD, NUM_PERM, SEED)
    index.add("near", "pivot", near, 5)
    index.add("nearer", "pivot", nearer, 5)
    d = index.find("q", "pivot", Q1, 5)
    assert d is not None and d.kept_id == "nearer"
    assert d.jaccard == jaccard(char_shingles(Q1, 5), char_shingles(nearer, 5))


RECORDS = [
    ("q1", "pivot", Q1, 5), ("q2", "pivot", Q1_EDIT, 5), ("q3", "pivot", Q2, 5),
    ("q4", "pivot", Q2.replace("elderly", "older"), 5), ("ja1", "text:ja", JA1, 2), ("ja2", "text:ja", JA2, 2),
    ("s1", "pivot", "flu", 5), ("s2", "pivot", "Flu", 5),
] + [(f"v{i}", "pivot", Q1.replace("chronic", f"stage {i} chronic"), 5) for i in range(10)]


def test_deterministic_for_a_seed():
    first = dups(RECORDS)
    assert first == dups(RECORDS)
    assert first  # non-trivial
    assert first == dups(list(RECORDS))  # fresh index, same answer


_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.tasks.dedup.test_dedup import RECORDS, dups
print(json.dumps([[d.item_id, d.kept_id, d.namespace, d.jaccard] for d in dups(RECORDS)]))
"""


def test_deterministic_across_processes_and_hash_seeds():
    outs = []
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        res = subprocess.run([sys.executable, "-c", _SCRIPT, str(ROOT)], capture_output=True, text=True,
                             env=env, cwd=ROOT, timeout=60, check=True)
        outs.append(json.loads(res.stdout))
    assert outs[0] == outs[1]
    assert outs[0] == [[d.item_id, d.kept_id, d.namespace, d.jaccard] for d in dups(RECORDS)]


# ------------------------------------------------------------------ batches: speed only, same answers
def _answers(index: NearDuplicateIndex, probes) -> list:
    return [index.find(i, ns, t, n) for i, ns, t, n in probes]


PROBES = [("p1", "pivot", Q1, 5), ("p2", "pivot", Q1.replace("adults", "people"), 5), ("p3", "pivot", Q2, 5),
          ("pj", "text:ja", JA2, 2), ("q1", "pivot", Q1, 5), ("ps", "pivot", "FLU", 5), ("px", "pivot", "gout", 5)]


def test_add_many_is_add_one_after_another():
    one = NearDuplicateIndex(THRESHOLD, NUM_PERM, SEED)
    for rec in RECORDS + RECORDS[:3]:  # re-added ids are no-ops either way
        one.add(*rec)
    many = NearDuplicateIndex(THRESHOLD, NUM_PERM, SEED)
    many.add_many(RECORDS + RECORDS[:3])
    expected = _answers(one, PROBES)
    assert [d and (d.item_id, d.kept_id, round(d.jaccard, 3)) for d in expected] == [
        ("p1", "q1", 1.0), ("p2", "q2", 0.855), ("p3", "q3", 1.0), ("pj", "ja2", 1.0), ("q1", "v0", 0.899),
        ("ps", "s1", 1.0), None]
    assert _answers(many, PROBES) == expected
    assert many._shingles == one._shingles and many._exact == one._exact
    for ns in ("pivot", "text:ja"):  # the same LSH buckets
        assert [t._dict for t in many._lsh[ns].hashtables] == [t._dict for t in one._lsh[ns].hashtables]


def test_prepared_texts_give_the_same_answers_and_are_signed_once(monkeypatch):
    calls = []
    real = NearDuplicateIndex._bands
    monkeypatch.setattr(NearDuplicateIndex, "_bands", lambda self, sets: calls.append(len(sets)) or real(self, sets))
    plain = NearDuplicateIndex(THRESHOLD, NUM_PERM, SEED)
    prepared = NearDuplicateIndex(THRESHOLD, NUM_PERM, SEED)
    prepared.prepare((t, n) for _, _, t, n in RECORDS + PROBES)
    assert calls == [len({(n, t) for _, _, t, n in RECORDS + PROBES})]  # one batch
    out = {}
    for name, index in (("plain", plain), ("prepared", prepared)):
        calls.clear()
        found = []
        for rec in RECORDS + PROBES:  # find, then add: what the audit and the allocator do
            found.append(index.find(*rec))
            index.add(*rec)
        out[name] = (found, sum(calls))
    assert out["prepared"][0] == out["plain"][0]
    assert out["prepared"][1] == 0  # every signature came from the batch
    assert out["plain"][1] > 0
    # without a batch, the signature find made is the one the next add of that text uses
    calls.clear()
    assert plain.find("new", "pivot", Q2.replace("laboratory", "imaging"), 5) is not None
    plain.add("new", "pivot", Q2.replace("laboratory", "imaging"), 5)
    assert calls == [1]


def test_the_lsh_tables_are_datasketchs_own():
    """Filled through its in-memory tables, each namespace's MinHashLSH holds what
    datasketch's insert puts there with datasketch's own MinHash, and the candidates of a
    probe are what datasketch's query returns."""
    from datasketch import MinHashLSH

    from tasks.dedup.near_duplicates import signature

    index = NearDuplicateIndex(THRESHOLD, NUM_PERM, SEED)
    index.add_many(RECORDS[:6])
    for rec in RECORDS[6:]:
        index.add(*rec)
    for ns in ("pivot", "text:ja"):
        ref = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
        for item_id, namespace, text, n in RECORDS:
            if namespace == ns:  # ids are unique in RECORDS
                ref.insert(item_id, signature(char_shingles(text, n), NUM_PERM, SEED))
        ours = index._lsh[ns]
        assert (ours.b, ours.r, ours.hashranges) == (ref.b, ref.r, ref.hashranges)
        assert [dict(t._dict) for t in ours.hashtables] == [dict(t._dict) for t in ref.hashtables]
        assert dict(ours.keys._dict) == dict(ref.keys._dict)
        found = []
        for _, _, text, n in PROBES:
            sh = char_shingles(text, n)
            found.append(lsh_query_banded(ours, index._bands([sh])[0]))
            assert set(ref.query(signature(sh, NUM_PERM, SEED))) == found[-1]
        assert any(found) and not all(found)
        # band by band (a probe that shares a single band finds its candidates there)
        sh = char_shingles(Q1, 5)
        hs = index._bands([sh])[0]
        for b in range(ours.b):
            only = tuple(h if i == b else b"-" for i, h in enumerate(hs))
            assert lsh_query_banded(ours, only) == set(ref.hashtables[b].get(hs[b])), b


# --- contracts a one-token change would break (benchmarks/mutation.py) ---------------------------

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
