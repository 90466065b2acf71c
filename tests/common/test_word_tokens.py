"""common.text's shortcuts (ASCII text; text without combining marks) in `normalize` and
`word_tokens` give what the full Unicode path gives: shingles and phrase keys decide
near-duplicates, which synonyms a concept's entry shows and which queries give their
answer away, so they must not move."""
from __future__ import annotations

import unicodedata

from hypothesis import given, settings, strategies as st

from common.text import _WORD, _fold_latin_marks, normalize, phrase_key, script_of, word_tokens


def _reference_fold(text: str) -> str:
    """The fold as it was, one character at a time."""
    out = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch) and out and script_of(out[-1]) == "Latin":
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _reference_tokens(text: str) -> list[str]:
    return _WORD.findall(_reference_fold(unicodedata.normalize("NFKC", text).casefold()))


MIXED = st.sampled_from(list("aZ9 -_\t\x1c") + ["é", "e\u0301", "\u0301", "ß", "İ", "й", "ё", "が", "か\u3099", "糖", "\u2126", "Å", "ﬁ",
                                          "Ａ", "²", "\u00a0", "Ǆ", "ự", "\U0001d400"])


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=20), st.lists(MIXED, max_size=10).map("".join)))
def test_word_tokens_equal_the_per_character_fold(text):
    assert _fold_latin_marks(text) == _reference_fold(text)
    assert word_tokens(text) == _reference_tokens(text)
    assert normalize(text) == " ".join(unicodedata.normalize("NFKC", text).casefold().split())  # its ASCII shortcut


def test_word_tokens_exact_values():
    assert word_tokens("Café-au-lait SPOTS") == ["cafe", "au", "lait", "spots"]
    assert word_tokens("Straße") == ["strasse"]  # casefold
    assert word_tokens("Синдром Марфана й") == ["синдром", "марфана", "й"]  # Cyrillic marks stay
    assert word_tokens("がん") == ["がん"]  # kana voicing stays
    assert phrase_key("  Marfan   syndrome! ") == "marfan syndrome"
    assert _fold_latin_marks("plain ascii") == "plain ascii"
    assert _fold_latin_marks("\u2126") == "\u03a9"  # OHM SIGN: no mark, but NFD and NFC still change it
