"""Abbreviation detection (scispacy) and long-form expansion of grounded mentions."""
from __future__ import annotations

import warnings

from tasks.grounding.params import Match


# scispacy's AbbreviationDetector builds a global matcher with no patterns; spaCy warns on
# every document without a definition. Harmless, and it drowns real output.
warnings.filterwarnings("ignore", message=r"\[W036\]")


warnings.filterwarnings("ignore", message=r".*\[W036\].*")


class AbbreviationExpander:
    """scispacy AbbreviationDetector on spaCy's blank English pipeline (no model needed)."""

    def __init__(self):
        import spacy
        from scispacy.abbreviation import AbbreviationDetector  # noqa: F401  (registers the factory)

        self.nlp = spacy.blank("en")
        self.nlp.add_pipe("abbreviation_detector")

    def pairs(self, text: str) -> list[tuple[int, int, int, int]]:
        """(short_start, short_end, long_start, long_end) character spans."""
        if "(" not in text:
            # the detector only defines a short form it finds as a "(" token: without one it
            # finds nothing, and tokenising for it was 7% of grounding's CPU at paper scale
            return []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = self.nlp(text)
        return sorted(
            (a.start_char, a.end_char, a._.long_form.start_char, a._.long_form.end_char) for a in doc._.abbreviations
        )


def expand_abbreviations(text: str, matches: list[Match], pairs: list[tuple[int, int, int, int]],
                         min_cover: float = 0.0) -> list[Match]:
    """Give every short form the concept grounded on its long form (pure). With `min_cover`,
    the long form's match must cover at least that share of the long form's characters
    (so "Papillon-Lefevre syndrome (PLS)" does not make PLS a bare "syndrome")."""
    out = list(matches)
    taken = {(m.start, m.end) for m in matches}
    for s0, s1, l0, l1 in pairs:
        inside = [m for m in matches if m.start >= l0 and m.end <= l1]
        if not inside or (s0, s1) in taken:
            continue
        best = max(inside, key=lambda m: (m.end - m.start, m.score, m.cui))
        if (best.end - best.start) < min_cover * (l1 - l0):
            continue
        out = [m for m in out if not (m.start < s1 and s0 < m.end)]
        out.append(Match(s0, s1, text[s0:s1], best.cui, best.score))
    return sorted(out, key=lambda m: (m.start, m.end, m.cui))
