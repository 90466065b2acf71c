"""tasks.dedup.near_duplicates: MinHash LSH near-duplicate index (candidates confirmed by exact Jaccard)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from common.text import char_shingles, jaccard
from tasks.dedup.near_duplicates import Duplicate, NearDuplicateIndex, find_duplicates

ROOT = Path(__file__).resolve().parents[1]
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
from tests.test_dedup import RECORDS, dups
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
