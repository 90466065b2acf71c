"""The audit's tier check measures retrieval difficulty: BM25 within-set accuracy@1 must
fall from easy to medium to hard beyond noise in every same-script cd cell it can measure."""
from __future__ import annotations

import json
from pathlib import Path

from common.text import char_shingles, jaccard
from schemas.config import load_registry
from tasks.audit import checks as audit
from tasks.audit.checks import TIER_MIN_SETS, Release, check_tiers

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = load_registry(ROOT / "configs" / "languages.toml")


def _write_cell(root: Path, sets: list[tuple[str, str, str, list[str]]]) -> None:
    """sets: (tier, query, target text, distractor texts); every concept gets its own entry."""
    d = root / "cd" / "en"
    (d / "qrels").mkdir(parents=True)
    corpus, queries, qrels, confusion = [], [], [], []
    for i, (tier, query, target, distractors) in enumerate(sets):
        t = f"C{i:03d}0000"
        ds = [f"C{i:03d}{j:04d}" for j in range(1, len(distractors) + 1)]
        corpus += [{"_id": t, "title": target, "text": target}] + [{"_id": c, "title": x, "text": x} for c, x in zip(ds, distractors)]
        sid = f"cd-en-{t}"
        queries.append({"_id": sid, "text": query, "lang": "en", "cuis": [t]})
        qrels.append(f"{sid}\t{t}\t1")
        confusion.append({"set_id": sid, "lang": "en", "tier": tier, "target_cui": t, "distractor_cuis": ds})
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        (d / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n")
    (root / "cd" / "confusion_sets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in confusion))
    (root / "manifest.json").write_text(json.dumps({"cells": {"cd/en": {}}}))


def _sets(n: int, ordered: bool) -> list:
    out = []
    for i in range(n):
        w = f"word{i}"
        # easy: nothing else shares the query's words; hard: a distractor matches them
        # better than the target does; medium alternates between the two
        easy = ("easy", f"{w} alpha", f"{w} alpha target", ["zulu yankee", "xray victor", "uniform tango"])
        hard = ("hard", f"{w} alpha", f"{w} target", [f"{w} alpha {w} alpha", "xray victor", "uniform tango"])
        medium = ("medium", f"{w} alpha", f"{w} alpha target", [f"{w} other", "xray victor", "uniform tango"]) if i % 2 \
            else ("medium", f"{w} alpha", f"{w} target", [f"{w} alpha {w} alpha", "xray victor", "uniform tango"])
        out += [easy, medium, hard] if ordered else [easy, ("medium", *easy[1:]), ("hard", *easy[1:])]
    return out


def test_ordered_tiers_pass_with_their_accuracies(tmp_path):
    _write_cell(tmp_path, _sets(TIER_MIN_SETS, ordered=True))
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    per = stats["bm25_within_set"]["cd/en"]
    assert {t: (per[t]["n"], per[t]["accuracy"]) for t in per} == {"easy": (30, 1.0), "medium": (30, 0.5), "hard": (30, 0.0)}
    assert [f for f in check.failures if "BM25" in f] == []


def test_flat_tiers_fail_beyond_noise(tmp_path):
    _write_cell(tmp_path, _sets(TIER_MIN_SETS, ordered=False))
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    assert not check.passed
    bm25 = [f for f in check.failures if "BM25" in f]
    assert len(bm25) == 1 and bm25[0].startswith("cd/en: BM25 within-set accuracy@1 does not fall from easy to hard beyond noise: 1.0 -> 1.0")


def test_a_harder_tier_that_is_easier_beyond_noise_fails(tmp_path):
    sets = _sets(TIER_MIN_SETS, ordered=True)
    # medium made as easy as easy and hard as hard: the ladder still falls; then swap the
    # roles of easy and medium so that easy (0.5) sits below medium (1.0)
    swapped = [({"easy": "medium", "medium": "easy"}.get(t, t), *rest) for t, *rest in sets]
    _write_cell(tmp_path, swapped)
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    bm25 = [f for f in check.failures if "BM25" in f]
    assert bm25 == ["cd/en: BM25 within-set accuracy@1 rises from easy to medium beyond noise: 0.5 -> 1.0 (z 5.48 > 2.0)"]


def test_too_few_sets_are_reported_not_judged(tmp_path):
    _write_cell(tmp_path, _sets(TIER_MIN_SETS - 1, ordered=False))
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    assert stats["bm25_within_set"]["cd/en"]["easy"]["n"] == TIER_MIN_SETS - 1
    assert [f for f in check.failures if "BM25" in f] == []


def _failures(check) -> list[str]:
    return check.failures if not check.passed else []


def _mean_similarity(sets: list, tier: str) -> float:
    """The tier's mean character-trigram Jaccard of each target's text with each of its
    distractors' (the entries' titles), to 4 places: what the check reports, from its definition."""
    sims = [jaccard(char_shingles(target, 3), char_shingles(d, 3)) for t, _, target, ds in sets if t == tier for d in ds]
    return round(sum(sims) / len(sims), 4)


def _tier_check(root: Path, sets: list) -> tuple:
    _write_cell(root, sets)
    return audit.check_tiers(audit.Release(root), REGISTRY)


def test_the_tier_check_reports_every_tier_and_the_cells_it_measured(tmp_path):
    sets = _sets(audit.TIER_MIN_SETS, ordered=True)
    check, _ = _tier_check(tmp_path / "a", sets)
    assert (check.passed, check.failures) == (True, [])
    sims = [_mean_similarity(sets, t) for t in ("easy", "medium", "hard")]
    assert sims[0] < sims[1] < sims[2]  # the crafted tiers are ordered, as the check then finds
    assert check.detail == (f"easy: sets=30 sim={sims[0]}; medium: sets=30 sim={sims[1]}; hard: sets=30 sim={sims[2]}; "
                            "BM25 within-set accuracy@1 easy/medium/hard: cd/en 1.0/0.5/0.0 "
                            "(ordering checked in cd/en: cells with >= 30 sets per tier)")
    check, _ = _tier_check(tmp_path / "b", _sets(2, ordered=True))
    assert check.detail.endswith("cd/en 1.0/0.5/0.0 (ordering checked in no cell: cells with >= 30 sets per tier)")


def test_flat_tiers_fail_on_similarity_and_on_bm25(tmp_path):
    sets = _sets(audit.TIER_MIN_SETS, ordered=False)  # every tier holds the easy sets
    check, _ = _tier_check(tmp_path, sets)
    flat = _mean_similarity(sets, "easy")
    assert check.failures == [
        f"mean target-distractor similarity not increasing easy<medium<hard: {[flat] * 3}",
        "cd/en: BM25 within-set accuracy@1 does not fall from easy to hard beyond noise: 1.0 -> 1.0 (z 0.00 <= 2.0)"]
    assert check.detail == "2 failure(s)"


def test_a_tier_without_sets_is_named_with_the_counts(tmp_path):
    check, stats = _tier_check(tmp_path, [s for s in _sets(3, ordered=True) if s[0] != "medium"])
    assert check.failures == ["a tier has no confusion set: easy=3, medium=0, hard=3"]
    assert stats["tiers"]["medium"] == {"sets": 0, "mean_similarity": None}
    assert stats["bm25_within_set"]["cd/en"]["medium"] == {"n": 0, "accuracy": None}


def test_confusion_sets_must_match_their_queries(tmp_path):
    _write_cell(tmp_path, _sets(1, ordered=True))
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
    _write_cell(tmp_path / "a", [("easy", "word0 alpha", "word0 alpha target", ["x y"]),
                                    ("hard", "fever", "word1 target", ["fever fever"])])  # found only in a distractor
    rel = audit.Release(tmp_path / "a")
    check = audit.check_trivial_match(rel)
    assert check.failures == ["cd/en/queries.jsonl:1: query 'word0 alpha' is found in its entry C0000000"]
    rel.cells["cd/en"]["qrels"] = [(p, n, [q, d, "0"]) for p, n, (q, d, _) in rel.cells["cd/en"]["qrels"]]  # judged not relevant
    assert audit.check_trivial_match(rel).passed
    _write_cell(tmp_path / "b", [("easy", "fever", "word1 target", ["fever fever"])])
    rel = audit.Release(tmp_path / "b")
    ok = audit.check_trivial_match(rel)
    assert (ok.passed, ok.detail) == (True, "1 cd queries, none found in its relevant entry by string matching")
    rel.cells["cd/en"]["corpus"] = [(1, {"_id": "elsewhere", "title": "fever", "text": "fever"})]  # the qrel's entry is missing
    assert audit.check_trivial_match(rel).passed
