"""Confusion-set tiers (tasks/allocation/confusion.py): structural and lexical properties of each tier."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from common.text import lexical_similarity
from tasks.allocation.allocator import seeded_order
from tasks.allocation.confusion import build_candidates
from tasks.allocation.hierarchy import Hierarchy
from tasks.allocation.lexicon import Lexicon
from tasks.allocation.tiers import (EASY_DEPTH, HARD_MIN_COVERAGE, MEDIUM_CONFUSERS, MEDIUM_DEPTH, MEDIUM_MAX_COVERAGE, ConceptInfo,
                                    ConfusionCandidate, TierPools, tier_order, tier_set)
from tests.tasks.allocation.test_lexicon import lexicon_of_texts
from umls.vocabulary import build_vocabulary

K = 3
SAMPLE_RRF = Path(__file__).resolve().parents[3] / "umls" / "sample"
DISORDER, DRUG = "T047", "T121"

# A four-level disorder tree: root -> area -> branch -> leaves. Leaves in different areas
# share only the root (3 steps up), so they are not near within MEDIUM_DEPTH. Leaf names
# repeat words within a branch (siblings look alike) and across areas ("pituitary hormone
# excess" looks like "thyroid hormone excess" from another area: a medium confuser).
DISORDER_TREE = {
    "endocrine disorder": {
        "thyroid disease": ["thyroid hormone excess", "thyroid hormone deficiency", "thyroid gland inflammation",
                            "thyroid gland nodule", "thyroid gland cyst"],
        "adrenal disease": ["adrenal hormone excess", "adrenal hormone deficiency", "adrenal gland inflammation",
                            "adrenal gland nodule"],
    },
    "neurological disorder": {
        "pituitary disease": ["pituitary hormone excess", "pituitary hormone deficiency", "pituitary gland inflammation",
                              "pituitary gland nodule"],
        "nerve disease": ["nerve inflammation", "nerve pain", "nerve damage", "nerve compression"],
    },
    "visceral disorder": {
        "kidney disease": ["kidney stone", "kidney failure", "kidney inflammation", "kidney cyst"],
        "liver disease": ["liver failure", "liver inflammation", "liver cyst", "liver fibrosis"],
    },
    "musculoskeletal disorder": {
        "joint disease": ["joint inflammation", "joint pain", "joint stiffness", "joint swelling"],
        "bone disease": ["bone loss", "bone pain", "bone fracture", "bone cyst"],
    },
}
# Another semantic type, in a tree of its own: no word in common with any disorder.
DRUG_TREE = {
    "thyroid agent": ["levothyroxine", "liothyronine", "methimazole", "propylthiouracil"],
    "diuretic": ["furosemide", "torsemide", "spironolactone", "hydrochlorothiazide"],
    "analgesic": ["paracetamol", "ibuprofen", "naproxen", "diclofenac"],
}


def synthetic_vocabulary() -> tuple[dict[str, ConceptInfo], Hierarchy]:
    concepts: dict[str, ConceptInfo] = {}
    parents: list[tuple[str, str]] = []
    counter = iter(range(1, 10_000))

    def add(name: str, tui: str, parent: str | None) -> str:
        cui = f"C{next(counter):07d}"
        concepts[cui] = ConceptInfo(cui, tui, "DISO" if tui == DISORDER else "CHEM", name)
        if parent is not None:
            parents.append((cui, parent))
        return cui

    root = add("disorder", DISORDER, None)
    for area, branches in DISORDER_TREE.items():
        a = add(area, DISORDER, root)
        for branch, leaves in branches.items():
            b = add(branch, DISORDER, a)
            for leaf in leaves:
                add(leaf, DISORDER, b)
    droot = add("pharmacologic substance", DRUG, None)
    for cls, drugs in DRUG_TREE.items():
        c = add(cls, DRUG, droot)
        for d in drugs:
            add(d, DRUG, c)
    return concepts, Hierarchy(parents)


def lexicon_of(concepts: dict[str, ConceptInfo]) -> Lexicon:
    return Lexicon({c: [i.name] for c, i in concepts.items()}, {c: [i.name] for c, i in concepts.items()})


def rule_counts(concepts, hierarchy, lexicon, k: int, seed: int, targets: list[str], one_tier_per_target=False) -> dict:
    """How many sets each tier holds, by the tier rules (tiers.py) applied to each target on
    its own: every feasible tier, or with one tier per target, the first feasible one from
    tier i mod 3 on for target i."""
    pools = TierPools.build(concepts, hierarchy, lexicon, k, seed)
    counts = dict.fromkeys(("easy", "medium", "hard"), 0)
    for i, cui in enumerate(targets):
        feasible = [t for t in tier_order(i, one_tier_per_target) if tier_set(pools, cui, t) is not None]
        for t in feasible[:1] if one_tier_per_target else feasible:
            counts[t] += 1
    return counts


def candidates(concepts, hierarchy, seed, targets, **kw):
    return build_candidates(concepts, hierarchy, K, seed, targets, lexicon_of(concepts), **kw)


@pytest.fixture(scope="module")
def synthetic():
    concepts, hierarchy = synthetic_vocabulary()
    targets = sorted(concepts)
    return concepts, hierarchy, targets, candidates(concepts, hierarchy, 11, targets), lexicon_of(concepts)


def tier_mean(concepts: dict[str, ConceptInfo], sets) -> float:
    vals = [lexical_similarity(concepts[s.target_cui].name, concepts[d].name) for s in sets for d in s.distractor_cuis]
    assert vals, "a tier with no sets has no mean"
    return sum(vals) / len(vals)


# ---------------------------------------------------------------------------- lexicon
def test_coverage_is_the_idf_weighted_share_of_name_words_in_the_other_entry():
    lex = Lexicon({"A": ["thyroid hormone excess"], "B": ["pituitary hormone excess"], "C": ["bone pain"],
                   "D": ["thyroid gland"]},
                  {"A": ["thyroid hormone excess"], "B": ["pituitary hormone excess"], "C": ["bone pain"],
                   "D": ["thyroid gland"]})
    # idf = log(1 + 4 / df): thyroid 2 entries, hormone 2, excess 2 -> equal weights
    assert lex.coverage("A", "B") == pytest.approx(2 / 3)
    assert lex.coverage("A", "D") == pytest.approx(1 / 3)
    assert lex.coverage("A", "C") == 0.0
    assert lex.look_alikes("A") == ["B", "D"]


def test_name_words_only_count_words_some_entry_holds():
    lex = Lexicon({"A": ["Marfan syndrome"], "B": ["syndrome X"]}, {"A": ["Marfan syndrome", "syndrome de Marfan", "马凡综合征"]})
    assert lex.name_words("A") == frozenset({"marfan", "syndrome"})


# ---------------------------------------------------------------------------- synthetic hierarchy
def test_hierarchy_helpers_behave_as_documented():
    concepts, h = synthetic_vocabulary()
    by_name = {c.name: c.cui for c in concepts.values()}
    excess, deficiency = by_name["thyroid hormone excess"], by_name["thyroid hormone deficiency"]
    assert deficiency in h.siblings(excess) and excess not in h.siblings(excess)
    # same branch: share a parent at 1 step; different branches of one area: 2 steps; other areas: 3 steps
    assert h.near(excess, deficiency, 1)
    assert not h.near(excess, by_name["adrenal hormone excess"], 1) and h.near(excess, by_name["adrenal hormone excess"], 2)
    assert not h.near(excess, by_name["pituitary hormone excess"], 2) and h.near(excess, by_name["pituitary hormone excess"], 3)
    assert not h.near(excess, by_name["levothyroxine"], 10)
    assert h.ancestors_within(excess, 50) == {excess: 0, by_name["thyroid disease"]: 1, by_name["endocrine disorder"]: 2,
                                              by_name["disorder"]: 3}


def test_every_tier_holds_exactly_the_targets_its_rule_accepts(synthetic):
    """The lazy, memoised lists (confusion.py) are the tier rules (tiers.py) applied to every
    target: one set per target whose rule is feasible, in the tier's seeded order; and the
    synthetic vocabulary gives every tier a real population."""
    concepts, h, targets, tiers, lex = synthetic
    pools = TierPools.build(concepts, h, lex, K, 11)
    for tier, sets in tiers.items():
        feasible = {t: tier_set(pools, t, tier) for t in targets}
        assert {s.target_cui: s for s in sets} == {t: c for t, c in feasible.items() if c is not None}
        assert len(sets) >= 10, tier


def test_each_set_has_exactly_k_distinct_distractors_excluding_target(synthetic):
    concepts, _, targets, tiers, _ = synthetic
    for tier, sets in tiers.items():
        assert len({s.target_cui for s in sets}) == len(sets), f"{tier}: a target twice"
        for s in sets:
            assert s.tier == tier
            assert s.target_cui in targets
            assert s.target_name == concepts[s.target_cui].name
            assert len(s.distractor_cuis) == K
            assert len(set(s.distractor_cuis)) == K
            assert s.target_cui not in s.distractor_cuis
            assert all(d in concepts for d in s.distractor_cuis)


def test_hard_distractors_cover_the_target_names_and_are_never_target_or_ancestor(synthetic):
    concepts, h, _, tiers, lex = synthetic
    for s in tiers["hard"]:
        t = concepts[s.target_cui]
        ancestors = set(h.ancestors_within(s.target_cui, 50))
        sib = h.siblings(s.target_cui)
        for d in s.distractor_cuis:
            assert d not in ancestors  # includes the target itself (depth 0)
            assert lex.coverage(s.target_cui, d) >= HARD_MIN_COVERAGE, (t.name, concepts[d].name)
            if d not in sib:
                assert concepts[d].tui == t.tui
                assert not h.near(s.target_cui, d, 1)


def test_hard_set_for_thyroid_hormone_excess_starts_with_its_closest_sibling(synthetic):
    concepts, _, _, tiers, _ = synthetic
    by_name = {c.name: c.cui for c in concepts.values()}
    s = next(s for s in tiers["hard"] if s.target_cui == by_name["thyroid hormone excess"])
    names = [concepts[d].name for d in s.distractor_cuis]
    # the one covering sibling first, then the most covering look-alikes of the same type
    assert names == ["thyroid hormone deficiency", "adrenal hormone excess", "pituitary hormone excess"]


def test_medium_sets_have_one_look_alike_from_far_away_and_the_rest_unalike(synthetic):
    concepts, h, _, tiers, lex = synthetic
    for s in tiers["medium"]:
        t = concepts[s.target_cui]
        covering = [d for d in s.distractor_cuis if lex.coverage(s.target_cui, d) >= HARD_MIN_COVERAGE]
        assert len(covering) == MEDIUM_CONFUSERS, (t.name, [concepts[d].name for d in s.distractor_cuis])
        for d in s.distractor_cuis:
            assert concepts[d].tui == t.tui
            assert not h.near(s.target_cui, d, MEDIUM_DEPTH)
            assert d in covering or lex.coverage(s.target_cui, d) < MEDIUM_MAX_COVERAGE


def test_easy_distractors_have_another_tui_are_far_and_share_no_word(synthetic):
    concepts, h, _, tiers, lex = synthetic
    for s in tiers["easy"]:
        t = concepts[s.target_cui]
        for d in s.distractor_cuis:
            assert concepts[d].tui != t.tui
            assert not h.near(s.target_cui, d, EASY_DEPTH)
            assert lex.coverage(s.target_cui, d) == 0


def test_tier_mean_similarity_is_ordered_on_synthetic_hierarchy(synthetic):
    concepts, _, _, tiers, _ = synthetic
    easy, medium, hard = (tier_mean(concepts, tiers[t]) for t in ("easy", "medium", "hard"))
    assert easy < medium < hard, (easy, medium, hard)


def test_excluded_concepts_are_never_distractors(synthetic):
    concepts, h, targets, tiers, _ = synthetic
    used = {d for sets in tiers.values() for s in sets for d in s.distractor_cuis}
    excluded = frozenset(sorted(used)[::2])
    again = candidates(concepts, h, 11, targets, excluded=excluded)
    assert not {d for sets in again.values() for s in sets for d in s.distractor_cuis} & excluded
    assert sum(len(v) for v in again.values()) > 0


def test_build_candidates_is_deterministic_for_a_seed():
    concepts, h = synthetic_vocabulary()
    targets = sorted(concepts)
    a = candidates(concepts, h, 5, targets)
    b = candidates(concepts, h, 5, list(targets))
    assert a == b
    # a fresh hierarchy object (set iteration order) changes nothing either
    concepts2, h2 = synthetic_vocabulary()
    assert candidates(concepts2, h2, 5, targets) == a


def test_tier_lists_are_in_seeded_order():
    concepts, h = synthetic_vocabulary()
    targets = sorted(concepts)
    for seed in (0, 1):
        tiers = candidates(concepts, h, seed, targets)
        for tier, sets in tiers.items():
            keys = [seeded_order(seed, f"{tier}:{s.target_cui}") for s in sets]
            assert keys == sorted(keys)
    # hard sets do not depend on the seed while a type has fewer than POOL concepts
    h0 = {(s.target_cui, s.distractor_cuis) for s in candidates(concepts, h, 0, targets)["hard"]}
    h1 = {(s.target_cui, s.distractor_cuis) for s in candidates(concepts, h, 1, targets)["hard"]}
    assert h0 == h1


# ---------------------------------------------------------------------------- committed sample vocabulary
@pytest.fixture(scope="module")
def sample_vocab(tmp_path_factory):
    out = tmp_path_factory.mktemp("vocab")
    paths = build_vocabulary(SAMPLE_RRF, out, {"ENG": "en"}, 0, ["DO", "HPO"])
    ct = pq.read_table(paths["concepts"])
    concepts = {
        c: ConceptInfo(c, tui, grp, name)
        for c, tui, grp, name in zip(*(ct[k].to_pylist() for k in ("cui", "tui", "group", "name_en")))
        if name
    }
    defs = dict(zip(ct["cui"].to_pylist(), ct["definition"].to_pylist()))
    at = pq.read_table(paths["atoms"], columns=["cui", "lang", "str"])
    names: dict[str, list[str]] = {}
    for c, lang, text in zip(*(at[k].to_pylist() for k in ("cui", "lang", "str"))):
        if lang == "en":
            names.setdefault(c, []).append(text)
    lexicon = Lexicon({c: [*names.get(c, [i.name]), defs.get(c) or ""] for c, i in concepts.items()},
                      {c: names.get(c, [i.name]) for c, i in concepts.items()})
    pt = pq.read_table(paths["parents"])
    hierarchy = Hierarchy(list(zip(pt["cui"].to_pylist(), pt["parent"].to_pylist())))
    return concepts, hierarchy, lexicon


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_sample_vocabulary_tier_means_strictly_ordered(sample_vocab, seed):
    concepts, hierarchy, lexicon = sample_vocab
    assert len(concepts) > 500
    targets = sorted(concepts, key=lambda c: seeded_order(seed, f"cd-target:{c}"))[:60]
    tiers = build_candidates(concepts, hierarchy, K, seed, targets, lexicon)
    for tier, sets in tiers.items():
        assert len(sets) >= 10, f"{tier}: only {len(sets)} of 60 targets got a set"
        for s in sets:
            assert len(s.distractor_cuis) == K and s.target_cui not in s.distractor_cuis
    easy, medium, hard = (tier_mean(concepts, tiers[t]) for t in ("easy", "medium", "hard"))
    assert easy < medium < hard, (easy, medium, hard)


def test_sample_vocabulary_tier_structure(sample_vocab):
    concepts, h, lex = sample_vocab
    targets = sorted(concepts, key=lambda c: seeded_order(3, f"cd-target:{c}"))[:60]
    tiers = build_candidates(concepts, h, K, 3, targets, lex)
    for s in tiers["hard"]:
        related = set(h.ancestors_within(s.target_cui, 50))
        for d in s.distractor_cuis:
            assert d not in related
            assert lex.coverage(s.target_cui, d) >= HARD_MIN_COVERAGE
    for s in tiers["medium"]:
        for d in s.distractor_cuis:
            assert concepts[d].tui == concepts[s.target_cui].tui
            assert not h.near(s.target_cui, d, MEDIUM_DEPTH)
    for s in tiers["easy"]:
        for d in s.distractor_cuis:
            assert not h.near(s.target_cui, d, EASY_DEPTH)
            assert lex.coverage(s.target_cui, d) == 0
            # the sample is nearly all one semantic group, so "other" means another type
            assert concepts[d].tui != concepts[s.target_cui].tui
    assert build_candidates(concepts, h, K, 3, targets, lex) == tiers


# Contracts of tasks/allocation/confusion.py: inputs -> the exact sets (other helpers may
# rewrite its internals for speed; the outputs must stay byte-identical).

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


# `first` and the digests are pinned on purpose: they hold the exact sets, in order, so that a
# rewrite of confusion.py for speed cannot move a byte of the release; the counts are derived.
@pytest.mark.parametrize("k,seed,one_tier,first,digest", [
    (3, 1, False,
     {"easy": ["C0000372", ["C0000602", "C0000617", "C0000646"]], "medium": ["C0000428", ["C0000183", "C0000475", "C0000479"]],
      "hard": ["C0000155", ["C0000151", "C0000152", "C0000153"]]}, "c532cac2ab464245"),
    (2, 9, True,
     {"easy": ["C0000379", ["C0000592", "C0000616"]], "medium": ["C0000344", ["C0000099", "C0000202"]],
      "hard": ["C0000204", ["C0000203", "C0000201"]]}, "281b8dcd66db6c9d"),
    (3, 2, True, None, "4d66cc6332a40423"),
])
def test_candidates_of_a_large_vocabulary_are_pinned(big, k, seed, one_tier, first, digest):
    """Every tier's sets, in order, for every 7th concept as a target (windows wrap around a
    type larger than POOL; ancestors are left out of them). The digest pins all of it."""
    concepts, h, lexicon = big
    targets = sorted(concepts)[::7]
    got = build_candidates(concepts, h, k, seed, targets, lexicon, one_tier_per_target=one_tier)
    counts = {t: len(got[t]) for t in ("easy", "medium", "hard")}
    assert counts == rule_counts(concepts, h, lexicon, k, seed, targets, one_tier)
    # every tier is populated, and one tier per target gives each target at most one set
    assert min(counts.values()) > 0 and (sum(counts.values()) <= len(targets)) is one_tier
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


def test_coverage_boundaries_decide_the_tier():
    """T's name words alpha and beta weigh the same (3 entries each). Siblings covering exactly
    HARD_MIN_COVERAGE (one of the two words) make a hard set; a far concept covering exactly
    MEDIUM_MAX_COVERAGE is not 'unalike' for medium; easy needs coverage 0."""
    assert (HARD_MIN_COVERAGE, MEDIUM_MAX_COVERAGE) == (0.5, 0.2)
    entries = {"C0000001": "alpha beta", "C0000002": "alpha one", "C0000003": "beta two", "C0000004": "alpha three",
               "C0000005": "beta four", "C0000006": "gamma five"}
    concepts = {c: ConceptInfo(c, "T047", "DISO", t) for c, t in entries.items()}
    h = Hierarchy([(c, "P") for c in ("C0000001", "C0000002", "C0000003", "C0000004")])
    lex = lexicon_of_texts(entries)
    assert [lex.coverage("C0000001", c) for c in ("C0000002", "C0000003", "C0000004", "C0000006")] == [0.5, 0.5, 0.5, 0.0]
    got = build_candidates(concepts, h, 3, 1, ["C0000001"], lex)
    assert _dump(got)["hard"] == [["C0000001", ["C0000002", "C0000004", "C0000003"]]]  # coverage tie: similarity, then id
    assert got["medium"] == [] and got["easy"] == []  # no far concept of the type covers it; nothing of another type


def test_medium_takes_one_far_look_alike_and_unalike_others():
    entries = {"C0000001": "alpha beta", "C0000002": "alpha beta gamma", "C0000003": "delta one", "C0000004": "delta two",
               "C0000005": "alpha delta three"}
    concepts = {c: ConceptInfo(c, "T047", "DISO", t) for c, t in entries.items()}
    lex = lexicon_of_texts(entries)
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
    got = build_candidates(concepts, Hierarchy([]), 3, 1, ["C0000001"], lexicon_of_texts(entries))
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
    got = build_candidates(concepts, Hierarchy([]), 3, 1, ["C0000001"], lexicon_of_texts(entries))
    assert _dump(got)["easy"] == [["C0000001", ["C0000002", "C0000003", "C0000004"]]]
    near = Hierarchy([("C0000001", "A"), ("A", "B"), ("C0000004", "C"), ("C", "B")])  # a common ancestor 2 steps up
    assert build_candidates(concepts, near, 3, 1, ["C0000001"], lexicon_of_texts(entries))["easy"] == []
    far = Hierarchy([("C0000001", "A"), ("A", "B"), ("B", "R"), ("R", "S"), ("C0000004", "C"), ("C", "D"), ("D", "E"), ("E", "S")])
    assert _dump(build_candidates(concepts, far, 3, 1, ["C0000001"], lexicon_of_texts(entries)))["easy"] == [
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
