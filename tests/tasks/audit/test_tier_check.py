"""The audit's tier check reads tiers through retrieval (tasks/audit/tier_readings.py): BM25 on
each cd cell's English pivots must fall from easy to hard beyond noise in every cell (the tiers
themselves), and the cell's own queries are read through the systems above chance there (BM25,
and the build's own evaluation when the release holds it): one of them must see the fall and
none a rise. A cell no system reads above chance is labelled, not failed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.text import char_shingles, jaccard
from schemas.config import load_registry
from tasks.audit import checks as audit
from tasks.audit import tier_readings
from tasks.audit.checks import TIER_MIN_SETS, Release, check_tiers

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = load_registry(ROOT / "configs" / "languages.toml")


def _write_cell(root: Path, sets: list[tuple], lang: str = "en", results: dict | None = None) -> None:
    """sets: (tier, query, target text, distractor texts[, English pivot]); every concept gets
    its own entry. A non-English cell's query has the pivot (default: its query) as pivot_text.
    `results`: an evaluation/results.json the manifest lists, of this build."""
    d = root / "cd" / lang
    (d / "qrels").mkdir(parents=True)
    corpus, queries, qrels, confusion = [], [], [], []
    for i, (tier, query, target, distractors, *pivot) in enumerate(sets):
        t = f"C{i:03d}0000"
        ds = [f"C{i:03d}{j:04d}" for j in range(1, len(distractors) + 1)]
        corpus += [{"_id": t, "title": target, "text": target}] + [{"_id": c, "title": x, "text": x} for c, x in zip(ds, distractors)]
        sid = f"cd-{lang}-{t}"
        queries.append({"_id": sid, "text": query, "lang": lang, "cuis": [t],
                        "pivot_text": None if lang == "en" else (pivot[0] if pivot else query)})
        qrels.append(f"{sid}\t{t}\t1")
        confusion.append({"set_id": sid, "lang": lang, "tier": tier, "target_cui": t, "distractor_cuis": ds})
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        (d / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(qrels) + "\n")
    (root / "cd" / "confusion_sets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in confusion))
    manifest = {"cells": {f"cd/{lang}": {}}, "build_id": "ab" * 32, "files": {}}
    if results is not None:
        (root / "evaluation").mkdir()
        (root / "evaluation" / "results.json").write_text(json.dumps(results))
        manifest["files"]["evaluation/results.json"] = {}
    (root / "manifest.json").write_text(json.dumps(manifest))


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


def _in(lang_query, sets: list) -> list:
    """The same sets asked in another language: `lang_query(i, english query, target)` is the
    cell's query of set i, its English query the pivot."""
    return [(t, lang_query(i, q, target), target, ds, q) for i, (t, q, target, ds) in enumerate(sets)]


def _ladder(stats: dict, cell: str, reader: str) -> dict:
    r = next(r for r in stats["readings"] if r.cell == cell and r.reader == reader)
    return {t: (r.tiers[t].n, r.tiers[t].accuracy) for t in r.tiers}


def test_ordered_tiers_pass_with_their_accuracies(tmp_path):
    _write_cell(tmp_path, _sets(TIER_MIN_SETS, ordered=True))
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    want = {"easy": (30, 1.0), "medium": (30, 0.5), "hard": (30, 0.0)}
    # English: its own queries are its pivots
    assert _ladder(stats, "cd/en", "bm25 (English pivots)") == _ladder(stats, "cd/en", "bm25") == want
    assert (check.passed, check.failures) == (True, [])


def test_flat_tiers_fail_beyond_noise(tmp_path):
    _write_cell(tmp_path, _sets(TIER_MIN_SETS, ordered=False))
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    assert not check.passed
    assert check.failures[1:] == [
        "cd/en: bm25 (English pivots): the nearest distractor does not come closer from easy to hard beyond noise: "
        "closeness 0.0 -> 0.0 (z 0.00 <= 2.0)",
        "cd/en: no system above chance sees within-set accuracy@1 fall from easy to hard beyond noise: bm25 1.0 -> 1.0 "
        "(z 0.00 <= 2.0)"]


def test_a_harder_tier_that_is_easier_beyond_noise_fails(tmp_path):
    sets = _sets(TIER_MIN_SETS, ordered=True)
    # medium made as easy as easy and hard as hard: the ladder still falls; then swap the
    # roles of easy and medium so that easy (0.5) sits below medium (1.0)
    swapped = [({"easy": "medium", "medium": "easy"}.get(t, t), *rest) for t, *rest in sets]
    _write_cell(tmp_path, swapped)
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    assert check.failures[1:] == [
        "cd/en: bm25 (English pivots): the nearest distractor is farther in medium than in easy beyond noise: "
        "closeness 0.9223 -> 0.0 (z 63.94 > 2.0)",
        "cd/en: bm25 within-set accuracy@1 rises from easy to medium beyond noise: 0.5 -> 1.0 (z 5.48 > 1.96)"]


def test_swapped_tiers_fail_through_the_pivots_where_the_language_reads_at_chance(tmp_path):
    """Easy and hard swapped in a cell whose own queries share no word with the entries: only
    the English pivots can see it, and they do."""
    sets = [({"easy": "hard", "hard": "easy"}.get(t, t), *rest) for t, *rest in _sets(TIER_MIN_SETS, ordered=True)]
    _write_cell(tmp_path, _in(lambda i, q, target: f"mot{i} sans rapport", sets), lang="fr")
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    assert _ladder(stats, "cd/fr", "bm25") == {"easy": (30, 0.0), "medium": (30, 0.0), "hard": (30, 0.0)}
    assert check.failures[1:] == [
        "cd/fr: bm25 (English pivots): the nearest distractor does not come closer from easy to hard beyond noise: "
        "closeness 1.0 -> 0.0 (z -inf <= 2.0)",
        "cd/fr: bm25 (English pivots): the nearest distractor is farther in medium than in easy beyond noise: "
        "closeness 1.0 -> 0.9223 (z 5.39 > 2.0)",
        "cd/fr: bm25 (English pivots): the nearest distractor is farther in hard than in medium beyond noise: "
        "closeness 0.9223 -> 0.0 (z 63.94 > 2.0)"]
    assert stats["verdicts"][0].label() == "at chance for bm25 (the tiers are read through the English pivots only)"


def test_a_language_bm25_reads_below_chance_is_labelled_and_passes(tmp_path):
    """The contributor's case (issue 45): a Latin-script language whose names share few tokens
    with the English entries. Its own queries match a distractor's word more often than the
    target's (BM25 below the 0.25 of a blind guess among four) and its ladder is flat; its
    pivots read the tiers, so the tiers are checked, and the cell is labelled at chance."""
    def query(i, english, target):  # one set in five shares its word with the English
        return (english.split()[0] if i % 5 == 0 else "parola") + " sclerosi"
    _write_cell(tmp_path, _in(query, _sets(TIER_MIN_SETS, ordered=True)), lang="it")
    registry = {**REGISTRY, "it": REGISTRY["fr"].model_copy(update={"code": "it", "name": "Italian"})}
    check, stats = check_tiers(Release(tmp_path), registry)
    native = next(r for r in stats["readings"] if r.reader == "bm25")
    # hits: the easy sets among every fifth (set i is tier i mod 3): i = 0, 15, ..., 75, 6 of 90
    assert _ladder(stats, "cd/it", "bm25") == {"easy": (30, 0.2), "medium": (30, 0.0), "hard": (30, 0.0)}
    assert (native.accuracy(), native.chance(), native.above_chance()) == (0.0667, 0.25, False)
    assert (check.passed, check.failures) == (True, [])
    verdict = stats["verdicts"][0]
    assert verdict.label() == "at chance for bm25 (the tiers are read through the English pivots only)"
    assert check.detail.endswith("| within-set accuracy@1 easy/medium/hard: cd/it pivots 1.0/0.5/0.0, nearest-distractor "
                                 "closeness 0.0/0.9223/1.0; own queries at chance for bm25 (the tiers are read through the "
                                 "English pivots only)")


def test_a_language_above_chance_with_flat_tiers_fails_though_its_pivots_pass(tmp_path):
    """Its own queries read well (every target found) in every tier: its tiers are not harder
    for the language, whatever the pivots say."""
    _write_cell(tmp_path, _in(lambda i, q, target: target, _sets(TIER_MIN_SETS, ordered=True)), lang="fr")
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    assert _ladder(stats, "cd/fr", "bm25 (English pivots)") == {"easy": (30, 1.0), "medium": (30, 0.5), "hard": (30, 0.0)}
    assert _ladder(stats, "cd/fr", "bm25") == {"easy": (30, 1.0), "medium": (30, 1.0), "hard": (30, 1.0)}
    assert check.failures == [
        "cd/fr: no system above chance sees within-set accuracy@1 fall from easy to hard beyond noise: bm25 1.0 -> 1.0 "
        "(z 0.00 <= 2.0)"]


def _results(rows: list[tuple[str, str, str, int, float]]) -> dict:
    """An evaluation/results.json of this build holding `tiers` rows (retriever, lang, tier, count, accuracy@1)."""
    return {"build_id": "ab" * 32, "tiers": [
        {"retriever": r, "lang": l, "split": "test", "tier": t, "count": n, "accuracy_at_1": a} for r, l, t, n, a in rows]}


def test_the_builds_own_evaluation_reads_a_cell_bm25_cannot(tmp_path):
    """A dense system scored the cell above chance, its ladder falling: the cell is read by it."""
    sets = _in(lambda i, q, target: f"mot{i} sans rapport", _sets(TIER_MIN_SETS, ordered=True))
    results = _results([("dense-x", "fr", "easy", 30, 0.9), ("dense-x", "fr", "medium", 30, 0.6), ("dense-x", "fr", "hard", 30, 0.4),
                        ("bm25", "fr", "easy", 30, 0.9), ("bm25", "fr", "medium", 30, 0.6), ("bm25", "fr", "hard", 30, 0.4),
                        ("flat-y", "fr", "easy", 30, 0.26), ("flat-y", "fr", "medium", 30, 0.25), ("flat-y", "fr", "hard", 30, 0.24)])
    _write_cell(tmp_path, sets, lang="fr", results=results)
    check, stats = check_tiers(Release(tmp_path), REGISTRY)
    assert (check.passed, check.failures) == (True, [])
    verdict = stats["verdicts"][0]
    assert [r.reader for r in verdict.readers] == ["dense-x"]
    assert sorted(r.reader for r in verdict.at_chance) == ["bm25", "flat-y"]
    assert verdict.label() == "read by dense-x 0.9/0.6/0.4"


def test_an_evaluated_system_whose_harder_tier_is_easier_fails_the_cell(tmp_path):
    sets = _in(lambda i, q, target: f"mot{i} sans rapport", _sets(TIER_MIN_SETS, ordered=True))
    results = _results([("dense-x", "fr", "easy", 30, 0.9), ("dense-x", "fr", "medium", 30, 0.4), ("dense-x", "fr", "hard", 30, 0.8)])
    _write_cell(tmp_path, sets, lang="fr", results=results)
    check, _ = check_tiers(Release(tmp_path), REGISTRY)
    assert check.failures == [
        "cd/fr: no system above chance sees within-set accuracy@1 fall from easy to hard beyond noise: dense-x 0.9 -> 0.8 "
        "(z 1.10 <= 2.0)",
        "cd/fr: dense-x within-set accuracy@1 rises from medium to hard beyond noise: 0.4 -> 0.8 (z 3.46 > 1.96)"]


def test_evaluation_results_of_another_build_or_not_listed_are_no_evidence(tmp_path):
    sets = _in(lambda i, q, target: f"mot{i} sans rapport", _sets(TIER_MIN_SETS, ordered=True))
    rows = [("dense-x", "fr", "easy", 30, 0.9), ("dense-x", "fr", "medium", 30, 0.4), ("dense-x", "fr", "hard", 30, 0.8)]
    other = {**_results(rows), "build_id": "cd" * 32}
    _write_cell(tmp_path / "a", sets, lang="fr", results=other)
    _, stats = check_tiers(Release(tmp_path / "a"), REGISTRY)
    assert [r.reader for r in stats["readings"]] == ["bm25 (English pivots)", "bm25"]
    _write_cell(tmp_path / "b", sets, lang="fr", results=_results(rows))
    m = json.loads((tmp_path / "b" / "manifest.json").read_text())
    m["files"] = {}
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(m))
    _, stats = check_tiers(Release(tmp_path / "b"), REGISTRY)
    assert [r.reader for r in stats["readings"]] == ["bm25 (English pivots)", "bm25"]


def test_a_set_whose_target_is_also_its_distractor_is_read_with_its_distinct_members(tmp_path):
    """The defect fails `confusion_sets`; the tier reading does not count the target twice (its
    blind guess is 1 / 3, not 1 / 4) and never credits the set for finding itself."""
    sets = _sets(TIER_MIN_SETS, ordered=True)
    _write_cell(tmp_path, sets)
    rel = Release(tmp_path)
    s = rel.confusion[0][1]
    s["distractor_cuis"] = [s["target_cui"]] + s["distractor_cuis"][1:]
    assert audit.check_confusion_consistency(rel).failures == ["cd/confusion_sets.jsonl:1: target is also a distractor"]
    _, stats = check_tiers(rel, REGISTRY)
    pivot = next(r for r in stats["readings"] if r.pivot)
    assert pivot.tiers["easy"].chance == pytest.approx(29 * 0.25 + 1 / 3)
    assert tier_readings.set_members(s, {d: {} for d in [s["target_cui"], *s["distractor_cuis"]]}) == \
        [s["target_cui"], *s["distractor_cuis"][1:]]


def test_too_few_sets_are_reported_not_judged(tmp_path):
    _write_cell(tmp_path / "a", _sets(TIER_MIN_SETS - 1, ordered=False))
    check, stats = check_tiers(Release(tmp_path / "a"), REGISTRY)
    assert _ladder(stats, "cd/en", "bm25")["easy"] == (TIER_MIN_SETS - 1, 1.0)
    assert [f for f in check.failures if "bm25" in f] == []
    _write_cell(tmp_path / "b", _sets(TIER_MIN_SETS - 1, ordered=True))
    check, stats = check_tiers(Release(tmp_path / "b"), REGISTRY)
    # medium: 14 of its 29 sets (the odd words) are found
    assert check.detail.endswith(f"cd/en pivots 1.0/0.4828/0.0, nearest-distractor closeness 0.0/0.9242/1.0; own queries "
                                 f"bm25 1.0/0.4828/0.0, under {TIER_MIN_SETS} sets a tier: not judged")


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
    assert check.detail == (f"easy: sets=30 sim={sims[0]}; medium: sets=30 sim={sims[1]}; hard: sets=30 sim={sims[2]} "
                            "| within-set accuracy@1 easy/medium/hard: cd/en pivots 1.0/0.5/0.0, nearest-distractor "
                            "closeness 0.0/0.9223/1.0; own queries read by bm25 1.0/0.5/0.0")
    check, _ = _tier_check(tmp_path / "b", _sets(2, ordered=True))
    assert check.detail.endswith("; own queries bm25 1.0/0.5/0.0, under 30 sets a tier: not judged")


def test_flat_tiers_fail_on_similarity_and_on_bm25(tmp_path):
    sets = _sets(audit.TIER_MIN_SETS, ordered=False)  # every tier holds the easy sets
    check, _ = _tier_check(tmp_path, sets)
    flat = _mean_similarity(sets, "easy")
    assert check.failures == [
        f"mean target-distractor similarity not increasing easy<medium<hard: {[flat] * 3}",
        "cd/en: bm25 (English pivots): the nearest distractor does not come closer from easy to hard beyond noise: "
        "closeness 0.0 -> 0.0 (z 0.00 <= 2.0)",
        "cd/en: no system above chance sees within-set accuracy@1 fall from easy to hard beyond noise: bm25 1.0 -> 1.0 "
        "(z 0.00 <= 2.0)"]
    assert check.detail == "3 failure(s)"


def test_a_tier_without_sets_is_named_with_the_counts(tmp_path):
    check, stats = _tier_check(tmp_path, [s for s in _sets(3, ordered=True) if s[0] != "medium"])
    assert check.failures == ["a tier has no confusion set: easy=3, medium=0, hard=3"]
    assert stats["tiers"]["medium"] == {"sets": 0, "mean_similarity": None}
    assert _ladder(stats, "cd/en", "bm25")["medium"] == (0, None)


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


def test_the_card_labels_a_cell_no_system_reads_above_chance(tmp_path):
    """The card's tier table gives the audit's readings of each cd cell, written before the
    manifest is on disk (from the manifest the card is given)."""
    from tasks.release.card import _tier_readings

    def query(i, english, target):
        return "parola sclerosi"  # shares nothing with the English entries
    _write_cell(tmp_path, _in(query, _sets(TIER_MIN_SETS, ordered=True)), lang="fr")
    manifest = {"cells": {"cd/fr": {}}, "build_id": "ab" * 32,
                "languages": {k: REGISTRY[k].model_dump(mode="json") for k in ("en", "fr")}}
    lines = _tier_readings(manifest, tmp_path)
    assert lines[-4:] == ["| cell | English pivots (BM25) | own queries |", "|---|---|---|",
                          "| cd/fr | 1.0 / 0.5 / 0.0 (closeness 0.0 / 0.9223 / 1.0) | at chance for bm25 (the tiers are "
                          "read through the English pivots only) |", ""]
    assert "*at chance*" in lines[0]


def _reading(cell: str, reader: str, ladder: tuple[int, int, int], n: int = 100, members: int = 4) -> tier_readings.Reading:
    """A native reading with `ladder` hits of `n` sets in easy/medium/hard, blind guess 1/members."""
    r = tier_readings.Reading(cell, reader, "evaluation")
    for tier, hits in zip(("easy", "medium", "hard"), ladder):
        r.tiers[tier] = tier_readings.Tally(n=n, hits=float(hits), chance=n / members)
    return r


def test_rise_threshold_is_bonferroni_over_the_steps_a_release_compares():
    assert [tier_readings.rise_z(n) for n in (1, 2, 4, 10, 42)] == [1.64, 1.96, 2.24, 2.58, 3.04]


def test_a_rise_that_is_noise_among_many_readers_passes_and_an_inverted_step_still_fails():
    """The real-data build's cd/ja case: a system near chance on medium (33 of 100) and above it on
    hard (49 of 100): z 2.33, beyond 1.96 alone, not beyond 3.04 among 21 readers (42 steps).
    Tiers swapped (hard read 90 of 100 after medium's 40) fail with any number of readers."""
    noisy = _reading("cd/ja", "sys-0", (70, 33, 49))
    assert round(-noisy.z("medium", "hard"), 2) == 2.33
    fine = [_reading(f"cd/x{i}", f"sys-{i}", (90, 70, 50)) for i in range(20)]
    alone = tier_readings.judge([noisy])
    assert alone[0].failures == ["cd/ja: sys-0 within-set accuracy@1 rises from medium to hard beyond noise: "
                                 "0.33 -> 0.49 (z 2.33 > 1.96)"]
    among = {v.cell: v.failures for v in tier_readings.judge([noisy, *fine])}
    assert among["cd/ja"] == [] and all(f == [] for f in among.values())
    swapped = _reading("cd/ja", "sys-0", (95, 40, 90))
    verdicts = {v.cell: v.failures for v in tier_readings.judge([swapped, *fine])}
    assert verdicts["cd/ja"] == [
        "cd/ja: no system above chance sees within-set accuracy@1 fall from easy to hard beyond noise: sys-0 0.95 -> 0.9 "
        "(z 1.35 <= 2.0)",
        "cd/ja: sys-0 within-set accuracy@1 rises from medium to hard beyond noise: 0.4 -> 0.9 (z 8.70 > 3.04)"]
