"""tasks.allocation.lexicon: the words of names and entries, their IDF weights, coverage and
look-alikes, on hand-built entries with hand-derived answers."""
from __future__ import annotations

import pytest

from tasks.allocation.lexicon import LanguageNames, Lexicon


def lexicon_of_texts(entries: dict[str, str], names: dict[str, str] | None = None) -> Lexicon:
    return Lexicon({c: [t] for c, t in entries.items()}, {c: [t] for c, t in (names or entries).items()})


def test_coverage_weighs_name_words_by_idf_log_1_plus_n_over_df():
    import math

    lex = lexicon_of_texts({"A": "heart attack", "B": "heart", "C": "attack rash", "D": "attack pain"})
    assert lex.idf == {"heart": math.log(1 + 4 / 2), "attack": math.log(1 + 4 / 3), "rash": math.log(5), "pain": math.log(5)}
    assert lex.coverage("A", "B") == pytest.approx(math.log(3) / (math.log(3) + math.log(7 / 3)))
    assert lex.coverage("A", "C") == pytest.approx(math.log(7 / 3) / (math.log(3) + math.log(7 / 3)))


def test_stop_words_and_numbers_are_never_words():
    lex = Lexicon({"A": ["disease of the 2 hearts"]}, {"A": ["disease of 3 hearts"]}, frozenset({"of", "the"}))
    assert lex.entry_words("A") == frozenset({"disease", "hearts"}) == lex.name_words("A")
    assert lex.words_of("The 12 hearts of stone") == frozenset({"hearts", "stone"})
    assert lex.entry_words("nobody") == frozenset() and lex.coverage("nobody", "A") == 0.0


def test_look_alikes_take_the_rarest_name_words_and_skip_common_ones():
    entries = {f"C{i:07d}": f"common word{i}" for i in range(60)}  # 'common' in 60 entries > cap 50
    entries.update({"T": "common rare1 rare2 rare3 rare4", "A": "rare1", "B": "rare2 rare2", "C": "rare3", "D": "rare4 x", "E": "x"})
    lex = lexicon_of_texts(entries)
    assert lex.look_alikes("T") == ["A", "B", "C"]  # rare4 (in 2 entries) is the least rare of the four
    assert lex.look_alikes("T", limit=4) == ["A", "B", "C", "D"]
    assert "C0000001" not in lex.look_alikes("T", limit=5)


def test_look_alikes_skip_words_in_more_entries_than_the_cap():
    """cap = max(50, entries // 50): a word in exactly cap entries still finds look-alikes, one
    in cap + 1 entries says nothing."""
    entries = {"T": "t", **{f"A{i:02d}": f"alpha a{i}" for i in range(50)}, **{f"B{i:02d}": f"beta b{i}" for i in range(51)}}
    lex = lexicon_of_texts(entries, {"T": "alpha beta"})
    assert lex.look_alikes("T") == [f"A{i:02d}" for i in range(50)]
    big = {"T": "t", **{f"F{i:04d}": f"filler f{i}" for i in range(2547)}, **{f"G{i:02d}": f"gamma g{i}" for i in range(52)}}
    assert len(big) == 2600  # cap 52
    assert lexicon_of_texts(big, {"T": "gamma"}).look_alikes("T") == [f"G{i:02d}" for i in range(52)]


def test_a_lexicon_of_one_entry_weighs_each_word_log_2():
    """IDF is log(1 + n / df) with n the number of entries: one entry gives log 2 to each of
    its words (n is at least 1 only so that an empty lexicon divides by nothing)."""
    import math

    assert lexicon_of_texts({"A": "heart attack"}).idf == {"heart": math.log(2), "attack": math.log(2)}


def test_save_makes_the_folders_it_needs_and_a_rerun_writes_over_its_own_files(tmp_path):
    lex = lexicon_of_texts({"A": "heart attack", "B": "heart", "C": "rash"})
    folder = tmp_path / "index" / "lexicon"  # neither folder exists yet
    paths = lex.save(folder)
    assert lex.save(folder) == paths  # the index_entries stage run again: same folder, same files
    loaded = Lexicon.load(paths, lex.names)
    assert (loaded.cuis, loaded.idf, loaded.coverage("A", "B")) == (lex.cuis, lex.idf, lex.coverage("A", "B"))


def test_coverage_sums_idf_in_word_order_not_in_set_order():
    """A frozenset's iteration order follows the words' string hashes (PYTHONHASHSEED), and a
    float sum taken in another order can differ in its last bit: enough to reorder two equally
    covering candidates, or to put one on the other side of a tier's bound. Coverage adds in
    sorted word order: bit for bit the same whatever the hash seed."""
    words = [f"w{i:02d}" for i in range(12)]
    # F{j} holds words j.. : word i is in i + 2 entries (T's and F0..Fi), twelve IDF weights;
    # G{k} holds the words of k's set bits, to give many different common subsets
    entries = {"T": " ".join(words), **{f"F{j:02d}": " ".join(words[j:]) for j in range(12)},
               **{f"G{k:04d}": " ".join(w for i, w in enumerate(words) if k >> i & 1) for k in range(1, 4096, 37)}}
    lex = lexicon_of_texts(entries)
    name = lex.name_words("T")

    def in_order(ws) -> float:
        return sum(lex.idf[w] for w in sorted(ws))

    def in_set_order(ws) -> float:
        return sum(lex.idf[w] for w in ws)

    others = sorted(entries)
    assert [lex.coverage("T", o) for o in others] == [in_order(name & lex.entry_words(o)) / in_order(name) for o in others]
    # the precondition that makes the assertion above bite: for some entry, adding in the
    # sets' own order gives another float
    assert any(in_set_order(name & lex.entry_words(o)) / in_set_order(name) != lex.coverage("T", o) for o in others)


def test_entry_index_is_the_position_in_cuis_and_minus_1_without_an_entry():
    lex = lexicon_of_texts({"B": "heart", "A": "heart attack"})
    assert lex.cuis == ["A", "B"]  # sorted
    assert [lex.entry_index(c) for c in ("A", "B", "nobody")] == [0, 1, -1]


def test_with_names_keeps_entries_and_idf_and_reads_the_new_names_afresh():
    """A French query's name words: its own (without French stop-words) where some entry holds
    any, else the English ones (tests/tasks/allocation/test_tier_shares.py). Everything memoised from the English names (name words, their IDF total, look-alikes) is
    not carried over; the original lexicon keeps its own."""
    import math

    lex = lexicon_of_texts({"A": "heart attack", "M": "infarctus de myocarde", "H": "heart", "X": "attack rate"})
    english = (lex.name_words("A"), lex.coverage("A", "M"), lex.look_alikes("A"))  # memoised first
    assert english == (frozenset({"heart", "attack"}), 0.0, ["H", "X"])
    fr = lex.with_names(LanguageNames("fr", lambda cui, lang: {"A": ["Infarctus de myocarde"]}.get(cui, []), lex.names,
                                      frozenset({"de"})))
    assert fr.name_words("A") == frozenset({"infarctus", "myocarde"})  # "de" is a French stop-word
    assert fr.idf == lex.idf and fr.cuis == lex.cuis and fr.entry_words("M") == frozenset({"infarctus", "de", "myocarde"})
    # the French words alone: M's entry holds all of them, H's and X's none
    assert fr.coverage("A", "M") == 1.0 and fr.coverage("A", "X") == 0.0
    assert fr.look_alikes("A") == ["M"]
    # with no French name, the English words (idf: heart and attack log(1 + 4/2))
    bare = lex.with_names(LanguageNames("fr", lambda cui, lang: [], lex.names, frozenset({"de"})))
    assert bare.name_words("A") == frozenset({"heart", "attack"}) and bare.coverage("A", "X") == pytest.approx(0.5)
    assert math.isclose(bare.coverage("A", "H"), 0.5)
    assert (lex.name_words("A"), lex.coverage("A", "M"), lex.look_alikes("A")) == english
