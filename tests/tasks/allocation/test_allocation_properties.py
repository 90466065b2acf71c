"""Property tests of the allocator (tasks/allocation/allocator.py): zero overlap, quotas, reasons, determinism."""
from __future__ import annotations

import functools
import random
from collections import Counter, defaultdict

import datasketch.lsh
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.text import normalize
from tasks.allocation.allocator import Allocator, Candidate, Realization
from tasks.allocation.tiers import ConfusionCandidate

LANGS = ["en", "zh", "ja", "fr", "ru", "es"]
TASKS = ["xqa", "evidence"]
SHINGLE_N = {"en": 5, "fr": 5, "es": 5, "ru": 5, "zh": 2, "ja": 2}
THRESHOLD, NUM_PERM = 0.7, 64
CUI_POOL = [f"C{i:07d}" for i in range(1, 31)]

_LATIN = "abcdefghijklmnopqrstuvwxyz"
_CYRILLIC = "абвгдежзийклмнопрстуфхцчшщыэюя"
_HAN = [chr(c) for c in range(0x4E00, 0x4E00 + 2000)]
_KANA = [chr(c) for c in range(0x30A1, 0x30F6)]


def random_text(rng: random.Random, lang: str) -> str:
    """Random words in the language's script: two such texts are never near-duplicates."""
    if lang == "zh":
        return "".join(rng.choice(_HAN) for _ in range(24))
    if lang == "ja":
        return "".join(rng.choice(_HAN + _KANA) for _ in range(24))
    alphabet = _CYRILLIC if lang == "ru" else _LATIN
    return " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(4, 9))) for _ in range(8))


@st.composite
def candidate_lists(draw, allow_empty_cuis: bool = True, allow_copies: bool = True):
    n = draw(st.integers(0, 24))
    cands: list[Candidate] = []
    for i in range(n):
        cid = f"q{i:03d}"
        rng = random.Random(f"{cid}:{draw(st.integers(0, 2**32 - 1))}")  # distinct per id
        task = draw(st.sampled_from(TASKS))
        native = draw(st.sampled_from(LANGS))
        if allow_empty_cuis and draw(st.integers(0, 7)) == 0:
            cuis: tuple[str, ...] = ()  # grounding found no key concept
        else:
            cuis = tuple(draw(st.lists(st.sampled_from(CUI_POOL), min_size=1, max_size=3, unique=True)))
        langs = draw(st.sets(st.sampled_from(LANGS)))
        if draw(st.booleans()):
            langs = langs | {native}
        pivot = random_text(rng, "en")
        if allow_copies and cands and draw(st.integers(0, 9)) == 0:
            pivot = cands[draw(st.integers(0, len(cands) - 1))].pivot  # an exact duplicate question
        native_text = pivot if native == "en" else random_text(rng, native)
        reals = {}
        for l in sorted(langs):
            text = native_text if l == native else (pivot if l == "en" else random_text(rng, l))
            reals[l] = Realization(text, "native" if l == native else "machine-translated")
        cands.append(Candidate(cid, task, native, native_text, pivot, cuis, reals))
    return cands


quota_maps = st.fixed_dictionaries({(t, l): st.integers(0, 4) for t in TASKS for l in LANGS})
seeds = st.integers(0, 2**16)


def run(cands: list[Candidate], quotas: dict, seed: int) -> Allocator:
    alloc = Allocator(dict(quotas), list(LANGS), dict(SHINGLE_N), THRESHOLD, NUM_PERM, seed)
    alloc.allocate_items(list(cands))
    return alloc


PROPS = settings(max_examples=60, deadline=None)


@pytest.fixture(autouse=True, scope="module")
def _memoized_lsh_parameters():
    """Speed only: NearDuplicateIndex.add builds a MinHashLSH on every call (dict.setdefault
    evaluates its default eagerly), and each build integrates numerically for the band
    parameters. Those are a pure function of (threshold, num_perm, weights), so memoize them."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(datasketch.lsh, "_optimal_param", functools.lru_cache(maxsize=None)(datasketch.lsh._optimal_param))
        yield


# ---------------------------------------------------------------------------- invariants
@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_every_candidate_assigned_or_dropped_exactly_once(cands, quotas, seed):
    alloc = run(cands, quotas, seed)
    assigned = Counter(a.id for a in alloc.assignments)
    dropped = Counter(i for i, _ in alloc.dropped)
    ids = {c.id for c in cands}
    assert set(assigned) | set(dropped) == ids
    assert not set(assigned) & set(dropped)
    assert all(n == 1 for n in assigned.values())
    assert all(n == 1 for n in dropped.values())
    assert all(isinstance(r, str) and r.strip() for _, r in alloc.dropped)
    assert len(alloc.assignments) + len(alloc.dropped) == len(cands)


@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_no_cui_in_two_cells(cands, quotas, seed):
    alloc = run(cands, quotas, seed)
    cells_of: dict[str, set] = defaultdict(set)
    for a in alloc.assignments:
        for c in a.cuis:
            cells_of[c].add((a.task, a.lang))
    for cui, cells in cells_of.items():
        assert len(cells) == 1, f"{cui} in {sorted(cells)}"
        assert alloc.owner[cui] in cells
    assert set(alloc.owner) == set(cells_of)


@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_cell_counts_within_quota(cands, quotas, seed):
    alloc = run(cands, quotas, seed)
    counts = Counter((a.task, a.lang) for a in alloc.assignments)
    for cell, n in counts.items():
        assert n <= quotas[cell], f"{cell}: {n} > {quotas[cell]}"
    assert counts == +alloc.filled


@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_assigned_to_own_task_and_a_realized_language(cands, quotas, seed):
    alloc = run(cands, quotas, seed)
    by_id = {c.id: c for c in cands}
    for a in alloc.assignments:
        c = by_id[a.id]
        assert a.task == c.task
        assert a.lang in c.realizations
        assert a.text == c.realizations[a.lang].text
        assert a.provenance == c.realizations[a.lang].provenance
        assert a.pivot == c.pivot
        assert a.cuis == tuple(sorted(c.key_cuis))


@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_deterministic_and_independent_of_input_order(cands, quotas, seed):
    a1, a2 = run(cands, quotas, seed), run(cands, quotas, seed)
    assert a1.assignments == a2.assignments
    assert a1.dropped == a2.dropped
    a3 = run(list(reversed(cands)), quotas, seed)
    assert a3.assignments == a1.assignments
    assert a3.dropped == a1.dropped


@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_items_without_key_concepts_dropped_with_reason(cands, quotas, seed):
    alloc = run(cands, quotas, seed)
    reasons = dict(alloc.dropped)
    assigned = {a.id for a in alloc.assignments}
    for c in cands:
        if not c.key_cuis:
            assert c.id not in assigned
            assert "key concept" in reasons[c.id]


@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_native_item_stays_native_when_its_cell_has_room(cands, quotas, seed):
    alloc = run(cands, quotas, seed)
    by_id = {c.id: c for c in cands}
    for pos, a in enumerate(alloc.assignments):
        c = by_id[a.id]
        if c.native_lang == "en" or c.native_lang not in c.realizations or a.lang == c.native_lang:
            continue
        native_cell = (c.task, c.native_lang)
        if alloc.filled[native_cell] >= quotas[native_cell]:
            continue  # full at the end; it may have been full already
        # the only other reason to leave the native language: a key concept was
        # already owned by the cell it went to, by an item placed before it
        earlier = alloc.assignments[:pos]
        assert any(set(b.cuis) & set(a.cuis) and (b.task, b.lang) == (a.task, a.lang) for b in earlier), (
            f"{a.id} native {c.native_lang} with room, placed in {a.lang}")


@PROPS
@given(candidate_lists(allow_empty_cuis=False, allow_copies=False), seeds)
def test_native_items_with_disjoint_concepts_and_room_all_stay_native(cands, seed):
    # give every candidate its own concepts and every cell room for all: no conflicts at all
    cands = [Candidate(c.id, c.task, c.native_lang, c.native_text, c.pivot, (f"C9{i:06d}",), c.realizations)
             for i, c in enumerate(cands)]
    quotas = {(t, l): 100 for t in TASKS for l in LANGS}
    alloc = run(cands, quotas, seed)
    placed = {a.id: a.lang for a in alloc.assignments}
    for c in cands:
        if c.realizations:
            assert c.id in placed, dict(alloc.dropped).get(c.id)
        else:
            assert dict(alloc.dropped)[c.id] == "no realization in any build language"
        if c.native_lang != "en" and c.native_lang in c.realizations:
            assert placed[c.id] == c.native_lang


@PROPS
@given(candidate_lists(), quota_maps, seeds)
def test_identical_pivots_never_both_assigned(cands, quotas, seed):
    alloc = run(cands, quotas, seed)
    pivots = Counter(normalize(a.pivot) for a in alloc.assignments)
    assert all(n == 1 for n in pivots.values())
    # a near-duplicate is always of a query that was kept (never of a dropped one)
    assigned = {a.id for a in alloc.assignments}
    for _, reason in alloc.dropped:
        if reason.startswith("near-duplicate of "):
            assert reason.split()[2] in assigned, reason


# ---------------------------------------------------------------------------- near duplicates
PIVOT = ("The patient presented with severe crushing chest pain radiating to the left arm and jaw "
         "shortly after climbing two flights of stairs")


def test_pivots_differing_by_one_word_are_not_both_assigned():
    variant = PIVOT.replace("severe", "sudden")
    assert variant != PIVOT
    a = Candidate("a", "xqa", "en", PIVOT, PIVOT, ("C0000001",), {"en": Realization(PIVOT, "native")})
    b = Candidate("b", "xqa", "fr", "Le patient a une douleur thoracique", variant, ("C0000002",),
                  {"fr": Realization("Le patient a une douleur thoracique", "native")})
    quotas = {(t, l): 10 for t in TASKS for l in LANGS}
    for seed in range(5):
        alloc = run([a, b], quotas, seed)
        assert len(alloc.assignments) == 1
        assert len(alloc.dropped) == 1
        kept = alloc.assignments[0].id
        lost, reason = alloc.dropped[0]
        assert {kept, lost} == {"a", "b"}
        assert reason.startswith(f"near-duplicate of {kept}")
        assert "pivot" in reason


def test_realization_duplicating_another_query_falls_back_to_another_language():
    # b's French realization copies a's French text: it must go elsewhere, not be dropped
    fr_text = "le patient présente une douleur thoracique intense irradiant vers le bras gauche depuis hier soir"
    a = Candidate("a", "xqa", "fr", fr_text, "chest pain radiating to the left arm since last night in a smoker",
                  ("C0000001",), {"fr": Realization(fr_text, "native")})
    b_pivot = "persistent cough with blood stained sputum and weight loss over three months in an older man"
    b = Candidate("b", "xqa", "en", b_pivot, b_pivot, ("C0000002",),
                  {"fr": Realization(fr_text, "machine-translated"), "es": Realization("tos persistente con esputo", "machine-translated")})
    quotas = {(t, l): 10 for t in TASKS for l in LANGS}
    alloc = run([a, b], quotas, 0)
    placed = {x.id: x.lang for x in alloc.assignments}
    assert placed == {"a": "fr", "b": "es"}
    assert alloc.dropped == []


def test_drop_reason_names_the_near_duplicate_when_the_only_realization_clashes():
    fr_text = "le patient présente une douleur thoracique intense irradiant vers le bras gauche depuis hier soir"
    a = Candidate("a", "xqa", "fr", fr_text, "chest pain radiating to the left arm since last night in a smoker",
                  ("C0000001",), {"fr": Realization(fr_text, "native")})
    b_pivot = "persistent cough with blood stained sputum and weight loss over three months in an older man"
    b = Candidate("b", "xqa", "en", b_pivot, b_pivot, ("C0000002",), {"fr": Realization(fr_text, "machine-translated")})
    alloc = run([a, b], {(t, l): 10 for t in TASKS for l in LANGS}, 0)
    assert [x.id for x in alloc.assignments] == ["a"]
    assert alloc.dropped[0][0] == "b"
    # b did have a realization; it was dropped because that text duplicates a's
    assert alloc.dropped[0][1].startswith("near-duplicate of a"), alloc.dropped[0][1]


# ---------------------------------------------------------------------------- one question, two tasks
QUESTION = "Does the invented compound shorten fever in adults admitted with community acquired pneumonia"


def _twins(with_evidence: bool = True) -> list[Candidate]:
    """One English question offered to evidence and to xqa (a source configured twice), and others."""
    real = {"en": Realization(QUESTION, "native")}
    cands = [Candidate("pubmedqa-xqa-7", "xqa", "en", QUESTION, QUESTION, ("C0000007",), real)]
    if with_evidence:
        cands.append(Candidate("pubmedqa-7", "evidence", "en", QUESTION, QUESTION, ("C0000007",), real))
    for i in range(6):
        text = random_text(random.Random(f"other-{i}"), "en")
        cands.append(Candidate(f"q{i}", "xqa", "en", text, text, (f"C00001{i:02d}",), {"en": Realization(text, "native")}))
    return cands


@pytest.mark.parametrize("seed", range(8))
def test_a_question_offered_to_both_tasks_goes_to_evidence(seed):
    quotas = {(t, l): 10 for t in TASKS for l in LANGS}
    alloc = run(_twins(), quotas, seed)
    placed = {a.id: (a.task, a.lang) for a in alloc.assignments}
    assert placed["pubmedqa-7"] == ("evidence", "en")
    assert "pubmedqa-xqa-7" not in placed
    assert dict(alloc.dropped)["pubmedqa-xqa-7"].startswith("near-duplicate of pubmedqa-7")
    # when evidence cannot take it (not a candidate: unanswerable), xqa does
    alloc = run(_twins(with_evidence=False), quotas, seed)
    assert {a.id: (a.task, a.lang) for a in alloc.assignments}["pubmedqa-xqa-7"] == ("xqa", "en")


@pytest.mark.parametrize("seed", range(4))
def test_distinct_questions_keep_the_seeded_order_of_their_ids(seed):
    # the twin rule only moves copies of one question next to each other: other questions are
    # placed most constrained first, then in the seeded order of their ids, as before it
    from tasks.allocation.allocator import seeded_order

    cands = _twins(with_evidence=False)
    two = [Candidate(f"m{i}", "xqa", "fr", f"question {i} en français {NAMES[i]} pour le test", f"question {i} in English {NAMES[i]} for the test",
                     (f"C00002{i:02d}",), {"fr": Realization(f"question {i} en français {NAMES[i]} pour le test", "native"),
                                            "en": Realization(f"question {i} in English {NAMES[i]} for the test", "human-translated")})
           for i in range(5)]
    alloc = run(cands + two, {(t, l): 20 for t in TASKS for l in LANGS}, seed)
    expected = sorted(cands + two, key=lambda c: (len(c.realizations), seeded_order(seed, c.id)))
    assert [a.id for a in alloc.assignments] == [c.id for c in expected]
    assert {a.lang for a in alloc.assignments if a.id.startswith("m")} == {"fr"}  # native first while it has room


# ---------------------------------------------------------------------------- confusion sets
NAMES = ["aortic", "biliary", "cochlear", "dermal", "enteric", "femoral", "gastric", "hepatic", "iliac", "jugular",
         "karyotype", "lumbar", "macular", "nasal", "ocular", "pelvic", "quadriceps", "renal", "spinal", "tibial",
         "ulnar", "vesical", "whipple", "xiphoid", "yellow", "zygomatic"]


def fake_sets(n_per_tier: int) -> dict[str, list[ConfusionCandidate]]:
    out = {}
    k = 0
    for tier in ("easy", "medium", "hard"):
        out[tier] = []
        for _ in range(n_per_tier):
            cui = f"C8{k:06d}"
            name = random_text(random.Random(f"target-{k}"), "en")  # never near-duplicates of each other
            out[tier].append(ConfusionCandidate(cui, name, tier, (f"D{k}a", f"D{k}b", f"D{k}c")))
            k += 1
    return out


def fake_realize(names: dict[str, str], refuse: set[tuple[str, str]]):
    def realize(cui: str, lang: str):
        if (cui, lang) in refuse:
            return None
        return Realization(f"{names[cui]} [{lang}]", "terminology")
    return realize


def expected_per_tier(quota: int, tiers: list[str]) -> dict[str, int]:
    return {t: quota // len(tiers) + (1 if i < quota % len(tiers) else 0) for i, t in enumerate(tiers)}


def test_confusion_sets_balance_tiers_per_language_and_skip_owned_targets():
    tiers = ["easy", "medium", "hard"]
    sets = fake_sets(12)
    names = {c.target_cui: c.target_name for pool in sets.values() for c in pool}
    cd_quota = {"en": 5, "zh": 4, "ja": 3, "fr": 0, "ru": 1, "es": 2}
    quotas = {("cd", l): q for l, q in cd_quota.items()}
    quotas.update({("xqa", l): 5 for l in LANGS})
    alloc = Allocator(quotas, list(LANGS), dict(SHINGLE_N), THRESHOLD, NUM_PERM, 3)
    # items own some of the would-be targets first (the first of each tier, and more)
    owned = [sets["easy"][0].target_cui, sets["medium"][0].target_cui, sets["hard"][0].target_cui, sets["hard"][2].target_cui]
    items = [Candidate(f"q{i}", "xqa", "en", f"question number {i} about {NAMES[i]} things and more words here",
                       f"question number {i} about {NAMES[i]} things and more words here", (cui,),
                       {"en": Realization(f"question number {i} about {NAMES[i]} things and more words here", "native")})
             for i, cui in enumerate(owned)]
    alloc.allocate_items(items)
    assert set(owned) <= set(alloc.owner)
    refuse = {(sets["medium"][1].target_cui, "en")}  # no name in that language: skipped, kept for later
    chosen = alloc.allocate_confusion_sets(sets, fake_realize(names, refuse), tiers)

    targets = [c.target_cui for _, c in chosen]
    assert len(targets) == len(set(targets)), "a target chosen twice"
    assert not set(targets) & set(owned), "an owned target was chosen"
    per_lang_tier = Counter((a.lang, c.tier) for a, c in chosen)
    for lang, q in cd_quota.items():
        want = expected_per_tier(q, tiers)
        for t in tiers:
            assert per_lang_tier[(lang, t)] == want[t], (lang, t, per_lang_tier[(lang, t)], want[t])
    for a, c in chosen:
        assert a.task == "cd" and a.id == f"cd-{a.lang}-{c.target_cui}"
        assert a.cuis == (c.target_cui,)
        assert a.text == f"{c.target_name} [{a.lang}]"
        assert (c.target_cui, a.lang) not in refuse
        assert alloc.owner[c.target_cui] == ("cd", a.lang)
    # the refused candidate was still available to a later language
    assert sets["medium"][1].target_cui in targets
    # the cd cells respect their quotas
    counts = Counter(a.lang for a, _ in chosen)
    assert all(counts[l] <= q for l, q in cd_quota.items())


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({l: st.integers(0, 7) for l in LANGS}), st.integers(1, 12), seeds,
       st.sets(st.integers(0, 35), max_size=10))
def test_confusion_sets_properties(cd_quota, n_per_tier, seed, owned_idx):
    tiers = ["easy", "medium", "hard"]
    sets = fake_sets(n_per_tier)
    names = {c.target_cui: c.target_name for pool in sets.values() for c in pool}
    all_targets = sorted(names)
    owned = {all_targets[i] for i in owned_idx if i < len(all_targets)}
    quotas = {("cd", l): q for l, q in cd_quota.items()}
    alloc = Allocator(quotas, list(LANGS), dict(SHINGLE_N), THRESHOLD, NUM_PERM, seed)
    for cui in owned:
        alloc.owner[cui] = ("xqa", "en")
    chosen = alloc.allocate_confusion_sets(sets, fake_realize(names, set()), tiers)
    targets = [c.target_cui for _, c in chosen]
    assert len(targets) == len(set(targets))
    assert not set(targets) & owned
    per_lang_tier = Counter((a.lang, c.tier) for a, c in chosen)
    available = {t: sum(1 for c in sets[t] if c.target_cui not in owned) for t in tiers}
    # every language takes its share of a tier before any takes the next: a tier that ran
    # out for one ran out for those after it
    exhausted = {t for t in tiers if sum(per_lang_tier[(l, t)] for l in LANGS) == available[t]}
    for lang in LANGS:
        want = expected_per_tier(cd_quota[lang], tiers)
        got = {t: per_lang_tier[(lang, t)] for t in tiers}
        assert sum(got.values()) <= cd_quota[lang]
        for t in tiers:
            # short of its share only when the tier has run out of unowned targets
            if got[t] < want[t]:
                assert t in exhausted, (lang, t, got[t], want[t])
            # over it only with the share of a tier that ran out
            if got[t] > want[t]:
                assert any(got[u] < want[u] for u in tiers), (lang, t, got, want)
        # a cell short of its quota has read every tier to its end
        if sum(got.values()) < cd_quota[lang]:
            assert exhausted == set(tiers), (lang, got, cd_quota[lang])
