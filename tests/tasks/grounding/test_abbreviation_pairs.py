"""AbbreviationExpander.pairs: scispacy's detector, skipped for a text without "(" (it can
find nothing there, and tokenising for it was 7% of grounding's CPU at paper scale)."""
from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings, strategies as st

from tasks.grounding.abbreviations import AbbreviationExpander


@pytest.fixture(scope="module")
def expander() -> AbbreviationExpander:
    return AbbreviationExpander()


def test_a_definition_and_its_later_use_are_found(expander):
    text = "Chronic obstructive pulmonary disease (COPD) is common; COPD worsens in winter."
    assert expander.pairs(text) == [(39, 43, 0, 37), (56, 60, 0, 37)]


def test_a_text_without_an_opening_bracket_is_not_tokenised(expander, monkeypatch):
    def refuse(text):
        raise AssertionError(f"tokenised {text!r}")

    monkeypatch.setattr(expander, "nlp", refuse)
    assert expander.pairs("Patients with COPD) and [asthma] or COPD.") == []
    assert expander.pairs("") == []
    with pytest.raises(AssertionError, match="tokenised"):
        expander.pairs("Asthma (A) in children.")


_CHARS = st.sampled_from(list("abcdeCOPDXYZ -)[]{}.,;:/'0123456789") + ["\u00e9", "\uff08", "\uff09", "\n"])
_WORDS = st.sampled_from(["COPD", "chronic", "obstructive", "pulmonary", "disease", "asthma", "AS", "A-T", ")", "[AS]"])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(_CHARS, max_size=80), st.lists(_WORDS, max_size=14).map(" ".join)))
def test_the_detector_itself_finds_nothing_without_an_opening_bracket(expander, text):
    """The premise of the shortcut, against the library: for texts without "(" (full-width
    brackets, closing brackets and square brackets included), scispacy's detector, run on
    every one of them, finds no abbreviation."""
    assert "(" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = expander.nlp(text)
    assert list(doc._.abbreviations) == []
    assert expander.pairs(text) == []
