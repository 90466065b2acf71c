"""tasks.allocation.allocator: where each item goes (cells, languages, near-duplicates, owned
concepts) and how confusion sets share out a cd quota, on small hand-built candidates."""
from __future__ import annotations

import hashlib

import pytest

from tasks.allocation.allocator import Allocator, Assignment, Candidate, Realization, seeded_order
from tasks.allocation.tiers import ConfusionCandidate

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


def test_a_clashing_language_is_looked_up_once_and_not_offered_again():
    """After French clashes, the candidate is offered its other languages only: each of its
    texts is looked up for near-duplicates once (a language offered again would be looked up
    for ever)."""
    alloc = _alloc({("xqa", "en"): 1, ("xqa", "fr"): 10, ("xqa", "es"): 2})
    alloc.allocate_items([_cand("k", "fr", WORDS["a"], WORDS["b"], ["C0000001"], {"fr": (WORDS["a"], "native")})])
    alloc.filled[("xqa", "es")] = 1  # es 1/2 is fuller than fr 1/10: French is offered first
    asked, find = [], alloc.dedup.find

    def looked_up(item_id, namespace, text, n):
        asked.append((item_id, namespace))
        assert len(asked) <= 10, asked[-3:]
        return find(item_id, namespace, text, n)

    alloc.dedup.find = looked_up
    alloc.allocate_items([_cand("t", "en", WORDS["c"], WORDS["c"], ["C0000002"],
                                {"fr": (WORDS["a"], "human-translated"), "es": (WORDS["d"], "human-translated")})])
    assert asked == [("t", "pivot"), ("t", "text:en"), ("t", "text:fr"), ("t", "text:es")]
    assert [(x.id, x.lang) for x in alloc.assignments] == [("k", "fr"), ("t", "es")]


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
    # tier by tier: en's easy, fr's easy, en's medium, ...
    assert [(a.lang, c.tier) for a, c in chosen] == [("en", "easy")] * 2 + [("fr", "easy")] * 2 + [("en", "medium")] * 2 + [
        ("fr", "medium"), ("en", "hard"), ("fr", "hard")]
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


class _RecordingTier:
    """A tier list read the lazy way (`read(passed_over)`, as confusion.LazyTier is): it
    skips the targets the allocator says it would pass over, and records what it was told."""

    def __init__(self, sets: list[ConfusionCandidate]):
        self.sets, self.asked = sets, []

    def read(self, passed_over):
        for s in self.sets:
            skip = passed_over(s.target_cui)
            self.asked.append((s.target_cui, skip))
            if not skip:
                yield s


def test_a_lazy_tier_is_told_which_targets_a_language_passes_over():
    """Owned targets (by another cell, or by a set placed already) and targets the language
    cannot name are passed over, the others not; a full cell reads no further."""
    pool = _sets(4, "easy")
    c0, c1, c2, c3 = (s.target_cui for s in pool)
    alloc = _alloc({("cd", "en"): 1, ("cd", "fr"): 1}, languages=("en", "fr"))
    alloc.owner[c0] = ("xqa", "en")
    tier = _RecordingTier(pool)
    chosen = alloc.allocate_confusion_sets(
        {"easy": tier}, lambda cui, lang: None if (cui, lang) == (c1, "en") else Realization(_name(lang + cui), "terminology"), ["easy"])
    assert [(a.lang, c.target_cui) for a, c in chosen] == [("en", c2), ("fr", c1)]
    # en: c0 owned, c1 not nameable in English, c2 taken; fr, in turn: c0 owned, c1 taken;
    # then both cells are full and read no further (c3 is never asked)
    assert tier.asked == [(c0, True), (c1, True), (c2, False), (c0, True), (c1, False)]


def test_a_stratum_that_runs_out_is_made_up_set_by_set_from_the_other():
    """quota 8 over easy (every set in the True stratum) and hard (none): the probe sees 8 and
    8, share 1/2, so each tier wants 2 of its 4 from each stratum and takes the other 2 from
    its own stratum, one at a time: the cell is full with 4 + 4."""
    pools = {"easy": _sets(10, "easy"), "hard": _sets(10, "hard")}
    alloc = _alloc({("cd", "en"): 8}, languages=("en",))
    chosen = alloc.allocate_confusion_sets(pools, lambda cui, lang: Realization(_name(lang + cui), "terminology"), ["easy", "hard"],
                                           stratum=lambda cand, real: cand.tier == "easy")
    assert [c.target_cui for _, c in chosen] == [s.target_cui for s in pools["easy"][:4] + pools["hard"][:4]]
    assert alloc.filled[("cd", "en")] == 8


def test_an_item_of_an_oversupplied_cell_waits_for_the_scarce_cells_items():
    """E1..E3 can only go to evidence/en (3 candidates, room for 2: oversupplied); S can go to
    evidence/es (1 candidate, room for 5: scarce) or evidence/en and shares E1's concept. S is
    placed first whatever the shuffle: it keeps its concept, E1 loses it, and evidence/en still
    fills with E2 and E3."""
    e = [_cand(f"E{i}", "en", WORDS[k], WORDS[k], [f"C000000{i}"], {"en": (WORDS[k], "native")}, task="evidence")
         for i, k in ((1, "a"), (2, "b"), (3, "c"))]
    s = _cand("S", "es", WORDS["d"], WORDS["e"], ["C0000001"], {"es": (WORDS["d"], "native"), "en": (WORDS["e"], "native")},
              task="evidence")
    quotas = {("evidence", "en"): 2, ("evidence", "es"): 5}
    for seed in range(8):  # every shuffle: S has two realizations, E1 one, so before this rule E1 always went first
        alloc = _alloc(quotas, languages=("en", "es"), seed=seed)
        alloc.allocate_items(e + [s])
        assert sorted((a.id, a.lang) for a in alloc.assignments) == [("E2", "en"), ("E3", "en"), ("S", "es")]
        assert alloc.dropped == [("E1", "key concept in cell evidence/es, where the item has no realization")]


def test_oversupplied_cells_count_candidates_with_a_key_concept():
    from tasks.allocation.allocator import can_wait, oversupplied_cells
    a = _cand("a", "en", WORDS["a"], WORDS["a"], ["C0000001"], {"en": (WORDS["a"], "native"), "fr": (WORDS["b"], "human-translated")})
    b = _cand("b", "en", WORDS["c"], WORDS["c"], ["C0000002"], {"en": (WORDS["c"], "native")})
    no_key = _cand("n", "en", WORDS["d"], WORDS["d"], [], {"en": (WORDS["d"], "native"), "fr": (WORDS["e"], "human-translated")})
    quotas = {("xqa", "en"): 1, ("xqa", "fr"): 1}
    assert oversupplied_cells([a, b, no_key], quotas) == {("xqa", "en")}  # en 2 > 1; fr 1 = 1 (n has no key concept)
    assert oversupplied_cells([a, b], {("xqa", "en"): 2, ("xqa", "fr"): 1}) == set()  # exactly full is not over
    over = {("xqa", "en")}
    assert can_wait(b, over) and not can_wait(a, over)  # a can also go to fr, which is not oversupplied
    assert oversupplied_cells([a, b], {}) == {("xqa", "en"), ("xqa", "fr")}  # no quota: no room at all


def test_a_question_offered_to_both_tasks_waits_only_if_both_copies_can():
    """Q's evidence copy can only go to evidence/en (oversupplied: Q and R, room for 1); its
    xqa copy to xqa/en (scarce). The copies are decided together, evidence first: Q is asked
    as evidence, and its xqa copy is the near-duplicate. Were the evidence copy left to wait
    alone, the xqa copy would come first and take the question."""
    q_e = _cand("Q-e", "en", WORDS["a"], WORDS["a"], ["C0000001"], {"en": (WORDS["a"], "native")}, task="evidence")
    q_x = _cand("Q-x", "en", WORDS["a"], WORDS["a"], ["C0000001"], {"en": (WORDS["a"], "native")}, task="xqa")
    r_e = _cand("R-e", "en", WORDS["b"], WORDS["b"], ["C0000002"], {"en": (WORDS["b"], "native")}, task="evidence")
    seed = next(s for s in range(1000) if seeded_order(s, "Q-e") < seeded_order(s, "R-e"))
    alloc = _alloc({("evidence", "en"): 1, ("xqa", "en"): 5}, languages=("en",), seed=seed)
    alloc.allocate_items([q_x, r_e, q_e])
    assert [(a.id, a.task) for a in alloc.assignments] == [("Q-e", "evidence")]
    assert dict(alloc.dropped) == {"Q-x": "near-duplicate of Q-e (pivot, jaccard=1.00)",
                                   "R-e": "every cell it can be realized in is full"}
