"""fold_term's fast path (str.translate + whitespace collapse) against fold(), the reference:
the QuickUMLS index, TermMatcher and the rank dict key vocabulary strings by fold_term while
texts are read through fold(), so the two must agree on every string."""
from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tasks.grounding.normalize import fold, fold_term

# the characters fold() treats specially: dashes, slashes, apostrophes, possessive s, ASCII
# whitespace including \x1c-\x1f (str.isspace), Greek, ligatures, accents, yo, full-width forms
_SPECIAL = "-\u2010\u2013\u2212/\\_'\u2019\u02bc`\u00b4\u2018sS \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\u00a0\u3000" \
           "αβΓμΩœÆøłđðþıéÈçñüÅёЁйЙ\uff21\uff41\u2160\ufb01\u0301"

_ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=40)
_MIXED = st.text(alphabet=st.one_of(st.sampled_from(_SPECIAL), st.characters(min_codepoint=0, max_codepoint=127),
                                    st.characters()), max_size=40)


@settings(max_examples=600)
@given(text=_ASCII, latin=st.booleans())
@example(text="Crohn's disease", latin=True)
@example(text=" \x1cA-b//C_d\\e \x1f", latin=True)
@example(text="x's", latin=False)
def test_fold_term_equals_fold_on_ascii(text, latin):
    assert fold_term(text, latin) == fold(text, latin)[0]


@settings(max_examples=1500)
@given(text=_MIXED, latin=st.booleans())
@example(text="β-Thalassémie d\u2019Œdème", latin=True)
@example(text="Отёк  лёгких\u00a0", latin=False)
@example(text="\uff21\u2019s", latin=True)
def test_fold_term_equals_fold_on_any_text(text, latin):
    assert fold_term(text, latin) == fold(text, latin)[0]
