"""How a cd cell's sets are shared between tiers and languages (tasks/allocation/allocator.py),
and the per-language name words the tier rules read (tasks/allocation/lexicon.py,
confusion.py): a tier whose pool runs out leaves its share to the others; the language
that can name the fewest concepts chooses first; a set's lexical closeness is read from
its language's names (without that language's stop-words) and the English ones."""
from __future__ import annotations

import hashlib
import multiprocessing

from tasks.allocation.allocator import Allocator, Realization, short_of_targets
from tasks.allocation.confusion import ByLanguage, LazyTier, computed_on, lazy_candidates
from tasks.allocation.lexicon import LanguageNames, Lexicon, stop_words
from tasks.allocation.tiers import ConfusionCandidate, TierPools


def _name(key: str) -> str:
    """Six random hex words: two such names share no 5-gram (no near-duplicate)."""
    h = hashlib.sha256(key.encode()).hexdigest()
    return " ".join(h[j: j + 6] for j in range(0, 36, 6))


def _sets(n: int, tier: str, tag: str = "") -> list[ConfusionCandidate]:
    return [ConfusionCandidate(f"C{tag}{tier[0].upper()}{i:05d}", _name(f"{tag}{tier}{i}"), tier, (f"D{tag}{tier[0].upper()}{i:05d}",))
            for i in range(n)]


def _realize(cui: str, lang: str) -> Realization:
    return Realization(_name(lang + cui), "terminology")


def _per_tier(chosen, lang: str) -> dict[str, int]:
    out = {"easy": 0, "medium": 0, "hard": 0}
    for a, c in chosen:
        if a.lang == lang:
            out[c.tier] += 1
    return out


def test_a_short_tier_leaves_its_share_to_the_tiers_with_candidates_left():
    alloc = Allocator({("cd", "ru"): 9}, ["ru"], {"ru": 5, "en": 5}, 0.7, 128, 5)
    pools = {"easy": _sets(8, "easy"), "medium": _sets(2, "medium"), "hard": _sets(1, "hard")}
    chosen = alloc.allocate_confusion_sets(pools, _realize, ["easy", "medium", "hard"])
    # equal shares are 3 each; medium and hard hold 3 sets between them, easy takes the other 6
    assert _per_tier(chosen, "ru") == {"easy": 6, "medium": 2, "hard": 1}
    assert alloc.filled[("cd", "ru")] == 9
    # the extra easy sets continue the easy list in its order
    assert [c.target_cui for _, c in chosen if c.tier == "easy"] == [s.target_cui for s in pools["easy"][:6]]


def test_the_shortfall_goes_to_the_first_tier_with_candidates_then_the_next():
    alloc = Allocator({("cd", "en"): 9}, ["en"], {"en": 5}, 0.7, 128, 5)
    pools = {"easy": _sets(4, "easy"), "medium": _sets(9, "medium"), "hard": _sets(0, "hard")}
    chosen = alloc.allocate_confusion_sets(pools, _realize, ["easy", "medium", "hard"])
    # hard is empty (its 3 go elsewhere): easy can add 1, medium the last 2
    assert _per_tier(chosen, "en") == {"easy": 4, "medium": 5, "hard": 0}


def test_the_shortfall_keeps_the_tier_stratum_share():
    # a stratum (does the query share a word with its entry?) shared out evenly: half True here
    pools = {"easy": _sets(12, "easy"), "hard": _sets(1, "hard")}
    true_side = {c.target_cui for i, c in enumerate(pools["easy"]) if i % 2 == 0}
    alloc = Allocator({("cd", "en"): 8}, ["en"], {"en": 5}, 0.7, 128, 5)
    chosen = alloc.allocate_confusion_sets(pools, _realize, ["easy", "hard"], stratum=lambda c, r: c.target_cui in true_side)
    easy = [c.target_cui for _, c in chosen if c.tier == "easy"]
    # the probe saw 4 True of 9 (8 easy, 1 hard): easy's first 4 hold round(4 * 4/9) = 2 True,
    # its 7 after the shortfall round(7 * 4/9) = 3 (the 7th easy, True, is passed over for the 8th)
    assert easy == [s.target_cui for s in pools["easy"][:6]] + [pools["easy"][7].target_cui]
    assert sum(c in true_side for c in easy) == 3


def test_languages_short_of_targets_choose_first():
    langs = ["en", "zh", "ja", "fr", "ru", "es"]
    quotas = {l: 10 for l in langs}  # enough: 12 x 10 = 120 nameable targets
    nameable = {"en": 900, "zh": 500, "ja": 119, "fr": 600, "ru": 14, "es": 120}
    # the short ones (ru, then ja: es names exactly 12 x 10), fewest first
    assert short_of_targets(langs, nameable, quotas) == ["ru", "ja"]
    assert short_of_targets(["en", "fr"], {}, {}) == []  # no quota: nobody is short
    assert short_of_targets(["en", "fr"], {"en": 1}, {"en": 1, "fr": 1}) == ["fr", "en"]  # uncounted: names nothing
    assert short_of_targets(["en", "fr", "ru"], {"en": 1, "fr": 1}, {"en": 1, "fr": 1, "ru": 1}) == ["ru", "en", "fr"]
    assert short_of_targets(["en", "fr"], {"en": 50, "fr": 5}, {"en": 1}) == []  # no cd quota: never short
    # one pool of 3 sets, quota 3 in two languages: Russian, short of targets, fills its cell
    # first and takes them all; not short, it comes after English and gets none
    for nameable, ru_sets in ((None, 0), ({"en": 40, "ru": 3}, 3), ({"en": 40, "ru": 40}, 0)):
        alloc = Allocator({("cd", "en"): 3, ("cd", "ru"): 3}, ["en", "ru"], {"en": 5, "ru": 5}, 0.7, 128, 5)
        chosen = alloc.allocate_confusion_sets({"easy": _sets(3, "easy")}, _realize, ["easy"], nameable=nameable)
        assert sum(1 for a, _ in chosen if a.lang == "ru") == ru_sets


def test_stop_words_are_folded_and_empty_for_a_language_without_a_list():
    fr = stop_words("fr")
    assert {"de", "la", "a", "etre", "etait"} <= fr and "être" not in fr and "syndrome" not in fr  # "être" folded
    assert stop_words("xx") == frozenset()


class _English:
    def __init__(self, names):
        self.names = names

    def get(self, cui, default=()):
        return self.names.get(cui, list(default))


def test_language_names_drop_the_languages_stop_words_and_add_the_english_names():
    english = _English({"C1": ["Marfan syndrome"]})
    fr = LanguageNames("fr", lambda cui, lang: {"C1": ["Syndrome de Marfan", "Maladie de Marfan"]}[cui], english, stop_words("fr"))
    assert fr.get("C1") == ["syndrome marfan", "maladie marfan", "Marfan syndrome"]
    # English sets read the English names only (as without languages)
    assert LanguageNames("en", lambda cui, lang: ["never asked"], english, frozenset()).get("C1") == ["Marfan syndrome"]



def test_a_shortfall_of_one_set_is_filled():
    # quota 7: shares 3 / 2 / 2; hard holds 1, so the cell is one set short after the shares
    alloc = Allocator({("cd", "en"): 7}, ["en"], {"en": 5}, 0.7, 128, 5)
    pools = {"easy": _sets(9, "easy"), "medium": _sets(2, "medium"), "hard": _sets(1, "hard")}
    chosen = alloc.allocate_confusion_sets(pools, _realize, ["easy", "medium", "hard"])
    assert _per_tier(chosen, "en") == {"easy": 4, "medium": 2, "hard": 1}


def test_a_tier_whose_stratum_runs_out_fills_from_the_other():
    # easy's sets all share a word with their entry, hard's none: the probe sees half and half,
    # so easy wants 1 of its 2 in the True stratum; having no False set, it takes a second True one
    alloc = Allocator({("cd", "en"): 4}, ["en"], {"en": 5}, 0.7, 128, 5)
    pools = {"easy": _sets(4, "easy"), "hard": _sets(4, "hard")}
    chosen = alloc.allocate_confusion_sets(pools, _realize, ["easy", "hard"], stratum=lambda c, r: c.tier == "easy")
    assert [c.target_cui for _, c in chosen] == [s.target_cui for s in pools["easy"][:2] + pools["hard"][:2]]


def _french_names(concepts):
    """A "French" name per concept: the English name of the next concept (sorted), so that the
    French name words, and with them the lexical tiers, differ from the English ones."""
    cuis = sorted(concepts)
    other = {c: concepts[cuis[(i + 1) % len(cuis)]].name for i, c in enumerate(cuis)}
    return lambda cui, lang: [other[cui]] if lang == "fr" else []


def test_each_language_reads_tier_lists_made_with_its_own_name_words():
    from tests.tasks.allocation.test_confusion_tiers import K, lexicon_of, synthetic_vocabulary

    concepts, hierarchy = synthetic_vocabulary()
    targets, lex = sorted(concepts), lexicon_of(concepts)
    names_in = _french_names(concepts)
    english = {t: list(v) for t, v in lazy_candidates(TierPools.build(concepts, hierarchy, lex, K, 11), targets, True).items()}
    french_lex = lex.with_names(LanguageNames("fr", names_in, lex.names, stop_words("fr")))
    french = {t: list(v) for t, v in lazy_candidates(TierPools.build(concepts, hierarchy, french_lex, K, 11), targets, True).items()}
    assert french != english  # the precondition: French name words make other sets
    by_lang = lazy_candidates(TierPools.build(concepts, hierarchy, lex, K, 11), targets, True, names_in=names_in, languages=("en", "fr"))
    assert set(by_lang) == {"easy", "medium", "hard"} and all(isinstance(v, ByLanguage) for v in by_lang.values())
    assert all(isinstance(v.for_language(l), LazyTier) for v in by_lang.values() for l in ("en", "fr"))
    # English reads its English names only (as without languages); French its own and the English
    assert {t: list(v.for_language("en")) for t, v in by_lang.items()} == english
    assert {t: list(v.for_language("fr")) for t, v in by_lang.items()} == french
    # per-language lists are computed in process, whatever the worker count
    with computed_on(by_lang, 2):
        assert multiprocessing.active_children() == []
        assert {t: list(v.for_language("fr")) for t, v in by_lang.items()} == french


def test_every_language_takes_its_share_of_a_tier_before_any_takes_the_next():
    # en's hard sets H0, H1 would take as distractors the concepts es's medium sets M2, M3
    # need. Filled language by language, en took them first and es got no medium set; tier
    # by tier, es's medium sets come first, en's hard sets are H2, H3, and es (owning DM2 and
    # DM3 now) can take H0, H1
    langs = ["en", "es"]
    alloc = Allocator({("cd", l): 6 for l in langs}, langs, {l: 5 for l in langs}, 0.7, 128, 5)
    medium = [ConfusionCandidate(f"CM{i}", _name(f"m{i}"), "medium", (f"DM{i}",)) for i in range(4)]
    hard = [ConfusionCandidate(f"CH{i}", _name(f"h{i}"), "hard", (f"DM{i + 2}",) if i < 2 else (f"DH{i}",)) for i in range(6)]
    pools = {"easy": _sets(4, "easy"), "medium": medium, "hard": hard}
    chosen = alloc.allocate_confusion_sets(pools, _realize, ["easy", "medium", "hard"])
    got = {(a.lang, c.tier): [] for a, c in chosen}
    for a, c in chosen:
        got[(a.lang, c.tier)].append(c.target_cui)
    assert got == {("en", "easy"): ["CE00000", "CE00001"], ("en", "medium"): ["CM0", "CM1"], ("en", "hard"): ["CH2", "CH3"],
                   ("es", "easy"): ["CE00002", "CE00003"], ("es", "medium"): ["CM2", "CM3"], ("es", "hard"): ["CH0", "CH1"]}
    assert alloc.owner["DM2"] == ("cd", "es")


def test_a_languages_own_name_words_decide_where_it_has_any_in_the_entries_else_the_english_ones():
    entries = {"A": ["Marfan syndrome"], "B": ["syndrome X"], "C": ["anisocoria"], "D": ["Marfan family"]}
    english = _English({"A": ["Marfan syndrome"], "C": ["Anisocoria"]})
    french = {"A": ["Maladie de Marfan"], "C": ["Anisocorie"]}
    lex = Lexicon(entries, english)
    fr = lex.with_names(LanguageNames("fr", lambda cui, lang: french[cui], english, stop_words("fr")))
    # "maladie" is in no entry: French "Maladie de Marfan" is matched by "marfan" alone
    assert fr.name_words("A") == frozenset({"marfan"})
    assert fr.coverage("A", "B") == 0.0 and fr.coverage("A", "D") == 1.0
    # a French name with no word in any entry ("anisocorie") reads the English one
    assert fr.name_words("C") == frozenset({"anisocoria"})
    # English reads its own names, as without languages
    en = lex.with_names(LanguageNames("en", lambda cui, lang: ["never asked"], english, frozenset()))
    assert en.name_words("A") == frozenset({"marfan", "syndrome"}) and en.coverage("A", "B") > 0
    assert LanguageNames("fr", lambda cui, lang: french[cui], english, stop_words("fr")).parts("A") == (["maladie marfan"], ["Marfan syndrome"])
