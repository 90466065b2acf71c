"""The confusion sets' name similarity (similarity.name_similarities, trigrams as integers in
numpy) is the character-trigram Jaccard of the names, float for float: the tiers' order
must not move."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from common.text import char_shingles, jaccard, lexical_similarity
from tasks.allocation.similarity import SMALL_BATCH, mean_similarity, numpy_similarities, name_similarities

# ASCII and not; whitespace of several kinds (ASCII file separators and U+3000 are
# whitespace to str.split); NFKC-changing (ﬁ, fullwidth, superscript) and casefold-changing
# (ß, Σ) characters; a combining accent; a lone surrogate (encoded as itself)
ALPHABET = list("abcAB -1\t\x1c") + ["é", "\u0301", "ß", "Σ", "ﬁ", "Ａ", "²", "\u3000", "\u00a0", "Д", "Ж", "糖", "尿", "\ud800"]
names = st.text(alphabet=st.sampled_from(ALPHABET), max_size=14)


@settings(max_examples=400, deadline=None)
@given(names, st.lists(names, max_size=2 * SMALL_BATCH))
def test_name_similarities_are_the_trigram_jaccard_of_the_names(target, others):
    expected = [lexical_similarity(target, n) for n in others]
    assert name_similarities(target, others) == expected
    assert numpy_similarities(target, others) == expected  # the path of larger batches, on every batch


def test_name_similarities_exact_values():
    for similarities in (name_similarities, numpy_similarities):
        assert similarities("Diabetes mellitus", ["Diabetes insipidus", "diabetes  MELLITUS", ""]) == [7 / 24, 1.0, 0.0]
        assert similarities("", ["", "a"]) == [1.0, 0.0]  # two empty names: as lexical_similarity
        # a name of 1 to 3 characters is one shingle, itself: "ab" shares nothing with "abc"
        assert similarities("ab", ["ab", "abc", "b", "xab"]) == [1.0, 0.0, 0.0, 0.0]
        assert similarities("ab", ["ab c"]) == [0.0]  # "ab" is not the trigram "ab " (the pad is no character)
        assert similarities("abc", ["abc", "abcd", "aaa"]) == [1.0, 0.5, 0.0]
        assert similarities("aaaa", ["aaa", "aaaaaaa"]) == [1.0, 1.0]  # repeated trigrams count once
        assert similarities("x", []) == []
    many = ["Diabetes insipidus"] * SMALL_BATCH + ["ab c"]
    assert name_similarities("Diabetes mellitus", many) == [7 / 24] * SMALL_BATCH + [0.0]


def test_short_names_padded_above_every_code_point_never_collide():
    """One-character names are one padded trigram each: "b" and "c" differ in their last bit,
    which a pad must not reach (the pad's high bit sits one field up)."""
    assert name_similarities("c", ["b"] * SMALL_BATCH) == [0.0] * SMALL_BATCH
    assert name_similarities("c", ["c"] * SMALL_BATCH) == [1.0] * SMALL_BATCH


def test_mean_similarity_is_the_mean_trigram_jaccard():
    pairs = [("cardiac arrest", ["cardiac arrests", "renal failure"]), ("fever", ["fevers"])]
    vals = [jaccard(char_shingles(t, 3), char_shingles(d, 3)) for t, ds in pairs for d in ds]
    assert mean_similarity(pairs) == pytest.approx(sum(vals) / 3) and 0 < mean_similarity(pairs) < 1
    assert mean_similarity([]) == 0.0
