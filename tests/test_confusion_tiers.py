"""Confusion-set tiers (tasks/allocation/confusion.py): structural and lexical properties of each tier."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from common.text import lexical_similarity
from tasks.allocation.allocator import seeded_order
from tasks.allocation.confusion import (
    EASY_DEPTH,
    HARD_MIN_SIMILARITY,
    MEDIUM_DEPTH,
    ConceptInfo,
    Hierarchy,
    build_candidates,
)
from umls.vocabulary import build_vocabulary

K = 3
SAMPLE_RRF = Path(__file__).resolve().parent.parent / "umls" / "sample"
DISORDER, DRUG = "T047", "T121"

# A four-level disorder tree: root -> area -> branch -> leaves. Leaves in different
# areas share only the root (3 steps up), so they are not near within MEDIUM_DEPTH.
DISORDER_TREE = {
    "endocrine disorder": {
        "thyroid disease": ["hyperthyroidism", "hypothyroidism", "thyroiditis", "thyroid nodule", "thyrotoxicosis"],
        "adrenal disease": ["hyperadrenalism", "hypoadrenalism", "adrenalitis", "adrenal adenoma"],
        "pituitary disease": ["hyperpituitarism", "hypopituitarism", "pituitary adenoma", "hypophysitis"],
    },
    "visceral disorder": {
        "kidney disease": ["nephritis", "nephrosis", "nephrolithiasis", "nephropathy", "nephrocalcinosis"],
        "liver disease": ["hepatitis", "hepatoma", "hepatomegaly", "hepatosis", "hepatic fibrosis"],
        "heart disease": ["carditis", "cardiomegaly", "cardiomyopathy", "cardiac arrest"],
    },
    "musculoskeletal disorder": {
        "joint disease": ["arthritis", "arthrosis", "arthropathy", "arthralgia"],
        "bone disease": ["osteitis", "osteoporosis", "osteomalacia", "osteopenia"],
    },
}
# Another semantic type, in a tree of its own.
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


@pytest.fixture(scope="module")
def synthetic():
    concepts, hierarchy = synthetic_vocabulary()
    targets = sorted(concepts)
    return concepts, hierarchy, targets, build_candidates(concepts, hierarchy, K, 11, targets)


def tier_mean(concepts: dict[str, ConceptInfo], sets) -> float:
    vals = [lexical_similarity(concepts[s.target_cui].name, concepts[d].name) for s in sets for d in s.distractor_cuis]
    assert vals, "a tier with no sets has no mean"
    return sum(vals) / len(vals)


# ---------------------------------------------------------------------------- synthetic hierarchy
def test_hierarchy_helpers_behave_as_documented():
    concepts, h = synthetic_vocabulary()
    by_name = {c.name: c.cui for c in concepts.values()}
    hyper, hypo = by_name["hyperthyroidism"], by_name["hypothyroidism"]
    assert hypo in h.siblings(hyper) and hyper not in h.siblings(hyper)
    # same branch: share a parent at 1 step; different branches of one area: 2 steps; other areas: 3 steps
    assert h.near(hyper, hypo, 1)
    assert not h.near(hyper, by_name["hyperadrenalism"], 1) and h.near(hyper, by_name["hyperadrenalism"], 2)
    assert not h.near(hyper, by_name["nephritis"], 2) and h.near(hyper, by_name["nephritis"], 3)
    assert not h.near(hyper, by_name["levothyroxine"], 10)
    assert h.ancestors_within(hyper, 50) == {hyper: 0, by_name["thyroid disease"]: 1, by_name["endocrine disorder"]: 2,
                                             by_name["disorder"]: 3}


def test_every_tier_is_populated(synthetic):
    _, _, _, tiers = synthetic
    assert set(tiers) == {"easy", "medium", "hard"}
    for tier, sets in tiers.items():
        assert len(sets) >= 10, f"{tier}: only {len(sets)} sets"


def test_each_set_has_exactly_k_distinct_distractors_excluding_target(synthetic):
    concepts, _, targets, tiers = synthetic
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


def test_hard_distractors_are_siblings_or_lexically_close_never_target_or_ancestor(synthetic):
    concepts, h, _, tiers = synthetic
    for s in tiers["hard"]:
        t = concepts[s.target_cui]
        ancestors = set(h.ancestors_within(s.target_cui, 50))
        sib = h.siblings(s.target_cui)
        for d in s.distractor_cuis:
            assert d not in ancestors  # includes the target itself (depth 0)
            sim = lexical_similarity(t.name, concepts[d].name)
            if d not in sib:
                assert concepts[d].tui == t.tui
                assert sim >= HARD_MIN_SIMILARITY, (t.name, concepts[d].name, sim)
                assert not h.near(s.target_cui, d, 1)


def test_hard_prefers_the_lexically_closest_siblings(synthetic):
    concepts, h, _, tiers = synthetic
    for s in tiers["hard"]:
        t = concepts[s.target_cui]
        sib = sorted(h.siblings(s.target_cui), key=lambda x: (-lexical_similarity(t.name, concepts[x].name), x))
        if len(sib) >= K:
            assert list(s.distractor_cuis) == sib[:K]


def test_hard_set_for_hyperthyroidism_is_its_thyroid_siblings(synthetic):
    concepts, _, _, tiers = synthetic
    by_name = {c.name: c.cui for c in concepts.values()}
    s = next(s for s in tiers["hard"] if s.target_cui == by_name["hyperthyroidism"])
    names = [concepts[d].name for d in s.distractor_cuis]
    assert names[0] == "hypothyroidism"  # the lexically closest sibling comes first
    assert set(names) <= {"hypothyroidism", "thyroiditis", "thyroid nodule", "thyrotoxicosis"}


def test_medium_distractors_share_tui_and_are_far(synthetic):
    concepts, h, _, tiers = synthetic
    for s in tiers["medium"]:
        t = concepts[s.target_cui]
        hard = next((x for x in tiers["hard"] if x.target_cui == s.target_cui), None)
        for d in s.distractor_cuis:
            assert concepts[d].tui == t.tui
            assert not h.near(s.target_cui, d, MEDIUM_DEPTH)
            assert d not in h.ancestors_within(s.target_cui, 50)
            if hard is not None:
                # below every hard distractor of the same target
                ceiling = min(lexical_similarity(t.name, concepts[x].name) for x in hard.distractor_cuis)
                assert lexical_similarity(t.name, concepts[d].name) < ceiling


def test_easy_distractors_have_another_tui_and_are_far(synthetic):
    concepts, h, _, tiers = synthetic
    for s in tiers["easy"]:
        t = concepts[s.target_cui]
        for d in s.distractor_cuis:
            assert concepts[d].tui != t.tui
            assert not h.near(s.target_cui, d, EASY_DEPTH)


def test_tier_mean_similarity_is_ordered_on_synthetic_hierarchy(synthetic):
    concepts, _, _, tiers = synthetic
    easy, medium, hard = (tier_mean(concepts, tiers[t]) for t in ("easy", "medium", "hard"))
    assert easy < medium < hard, (easy, medium, hard)


def test_build_candidates_is_deterministic_for_a_seed():
    concepts, h = synthetic_vocabulary()
    targets = sorted(concepts)
    a = build_candidates(concepts, h, K, 5, targets)
    b = build_candidates(concepts, h, K, 5, list(targets))
    assert a == b
    # a fresh hierarchy object (set iteration order) changes nothing either
    concepts2, h2 = synthetic_vocabulary()
    assert build_candidates(concepts2, h2, K, 5, targets) == a


def test_tier_lists_are_in_seeded_order():
    concepts, h = synthetic_vocabulary()
    targets = sorted(concepts)
    for seed in (0, 1):
        tiers = build_candidates(concepts, h, K, seed, targets)
        for tier, sets in tiers.items():
            keys = [seeded_order(seed, f"{tier}:{s.target_cui}") for s in sets]
            assert keys == sorted(keys)
    # hard sets do not depend on the seed while a type has fewer than POOL concepts
    h0 = {(s.target_cui, s.distractor_cuis) for s in build_candidates(concepts, h, K, 0, targets)["hard"]}
    h1 = {(s.target_cui, s.distractor_cuis) for s in build_candidates(concepts, h, K, 1, targets)["hard"]}
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
    pt = pq.read_table(paths["parents"])
    hierarchy = Hierarchy(list(zip(pt["cui"].to_pylist(), pt["parent"].to_pylist())))
    return concepts, hierarchy


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_sample_vocabulary_tier_means_strictly_ordered(sample_vocab, seed):
    concepts, hierarchy = sample_vocab
    assert len(concepts) > 500
    targets = sorted(concepts, key=lambda c: seeded_order(seed, f"cd-target:{c}"))[:60]
    tiers = build_candidates(concepts, hierarchy, K, seed, targets)
    for tier, sets in tiers.items():
        assert len(sets) >= 30, f"{tier}: only {len(sets)} of 60 targets got a set"
        for s in sets:
            assert len(s.distractor_cuis) == K and s.target_cui not in s.distractor_cuis
    easy, medium, hard = (tier_mean(concepts, tiers[t]) for t in ("easy", "medium", "hard"))
    assert easy < medium < hard, (easy, medium, hard)


def test_sample_vocabulary_tier_structure(sample_vocab):
    concepts, h = sample_vocab
    targets = sorted(concepts, key=lambda c: seeded_order(3, f"cd-target:{c}"))[:60]
    tiers = build_candidates(concepts, h, K, 3, targets)
    for s in tiers["hard"]:
        related = set(h.ancestors_within(s.target_cui, 50))
        sib = h.siblings(s.target_cui)
        for d in s.distractor_cuis:
            assert d not in related
            assert d in sib or lexical_similarity(s.target_name, concepts[d].name) >= HARD_MIN_SIMILARITY
    for s in tiers["medium"]:
        for d in s.distractor_cuis:
            assert concepts[d].tui == concepts[s.target_cui].tui
            assert not h.near(s.target_cui, d, MEDIUM_DEPTH)
    for s in tiers["easy"]:
        for d in s.distractor_cuis:
            assert not h.near(s.target_cui, d, EASY_DEPTH)
            # the sample is nearly all one semantic group, so "other" means another type
            assert concepts[d].tui != concepts[s.target_cui].tui
    assert build_candidates(concepts, h, K, 3, targets) == tiers
