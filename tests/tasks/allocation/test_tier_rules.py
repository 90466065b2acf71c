"""The tier rules (tasks/allocation/tiers.py) on small hand-built vocabularies, with
hand-derived answers: the pools they read, the hard tier's siblings, the order a target
tries the tiers in, and the sorting helper."""
from __future__ import annotations

from tasks.allocation.hierarchy import Hierarchy
from tasks.allocation.lexicon import Lexicon
from tasks.allocation.tiers import ConceptInfo, ConfusionCandidate, TierPools, first_sorted, hard_set, tier_order, tier_set


def _pools(concepts: dict[str, ConceptInfo], parents=(), k: int = 3) -> TierPools:
    lexicon = Lexicon({c: [i.name] for c, i in concepts.items()}, {c: [i.name] for c, i in concepts.items()})
    return TierPools.build(concepts, Hierarchy(list(parents)), lexicon, k, seed=1)


def _groups(sizes: dict[str, int]) -> dict[str, ConceptInfo]:
    out, n = {}, 0
    for group, size in sizes.items():
        for _ in range(size):
            cui = f"C{n:07d}"
            out[cui] = ConceptInfo(cui, f"T{group}", group, f"name {n}")
            n += 1
    return out


def test_easy_means_another_group_only_where_two_groups_are_large():
    """A group counts when it holds at least max(50, concepts // 20) concepts, and "another
    group" applies when two or more groups count."""
    assert _pools(_groups({"DISO": 50, "CHEM": 50})).by_group  # both exactly at 50
    assert not _pools(_groups({"DISO": 51, "CHEM": 49})).by_group  # one group short by one
    # 1,100 concepts: the bar is 1100 // 20 = 55, and a group of 54 is below it
    assert not _pools(_groups({"DISO": 1046, "CHEM": 54})).by_group
    assert _pools(_groups({"DISO": 1045, "CHEM": 55})).by_group
    assert not _pools(_groups({"DISO": 100})).by_group  # one group: "another type" instead


def test_every_covering_sibling_is_a_hard_distractor_the_first_entry_too():
    """Three siblings whose entries hold all of the target's name words; the smallest CUI is
    the lexicon's entry 0 and must count like the others."""
    names = {"C0000000": "thyroid hormone excess type a", "C0000001": "thyroid hormone excess type b",
             "C0000002": "thyroid hormone excess type c", "C0000005": "thyroid hormone excess",
             "C0000009": "endocrine gland disorder"}
    concepts = {c: ConceptInfo(c, "T047", "DISO", n) for c, n in names.items()}
    pools = _pools(concepts, [(c, "C0000009") for c in ("C0000000", "C0000001", "C0000002", "C0000005")])
    assert pools.lexicon.entry_index("C0000000") == 0
    assert hard_set(pools, "C0000005", {"C0000005", "C0000009"}) == ("C0000000", "C0000001", "C0000002")
    got = tier_set(pools, "C0000005", "hard")
    assert (got.target_cui, got.target_name, got.tier, got.distractor_cuis) == (
        "C0000005", "thyroid hormone excess", "hard", ("C0000000", "C0000001", "C0000002"))
    # two siblings are not a set of three: a sibling is too near to top it up from the type
    fewer = {c: i for c, i in concepts.items() if c != "C0000002"}
    pools = _pools(fewer, [(c, "C0000009") for c in ("C0000000", "C0000001", "C0000005")])
    assert hard_set(pools, "C0000005", {"C0000005", "C0000009"}) is None


def test_a_target_tries_the_tiers_from_its_index_on():
    assert tier_order(0, True) == ["easy", "medium", "hard"]
    assert tier_order(1, True) == ["medium", "hard", "easy"]
    assert tier_order(5, True) == ["hard", "easy", "medium"]
    assert tier_order(4, False) == ["hard", "medium", "easy"]


def test_first_sorted_is_the_head_of_the_full_sort():
    items, keys = ["a", "b", "c", "d"], [2, 1, 2, 0]
    rank = {"a": "2", "b": "9", "c": "1", "d": "5"}.__getitem__
    assert first_sorted(items, keys, rank, 3) == ["d", "b", "c"]  # 0, 1, then the tie at 2 by rank: c before a
    assert first_sorted(items, keys, rank, 9) == ["d", "b", "c", "a"]
    assert first_sorted(items, keys, rank, 0) == []
    assert first_sorted([], [], rank, 0) == [] and first_sorted([], [], rank, 2) == []


def test_confusion_records_are_values():
    c = ConceptInfo("C0000001", "T047", "DISO", "fever")
    s = ConfusionCandidate("C0000001", "fever", "hard", ("C0000002",))
    assert {c: 1}[ConceptInfo("C0000001", "T047", "DISO", "fever")] == 1
    assert {s: 1}[ConfusionCandidate("C0000001", "fever", "hard", ("C0000002",))] == 1
