"""Per-language grounding parameters and the Match record."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from schemas.config import Language


# how a word is reduced before words are compared (tasks/grounding/stemming.py)
Stemmer = Literal["snowball", "light", "pymorphy3"]


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    text: str
    cui: str
    score: float
    found_by: str = "string"  # the grounding pass that found it: "string" or "dense"

    def as_dict(self) -> dict:
        return {"start": self.start, "end": self.end, "text": self.text, "cui": self.cui, "score": round(self.score, 4),
                "pass": self.found_by}


@dataclass(frozen=True)
class GroundingParams:
    """How one language is grounded. Registry fields of the same name override these
    (see `params_for`); explicit Grounder arguments override both."""

    threshold: float = 0.8  # QuickUMLS similarity threshold
    window: int = 6  # QuickUMLS maximum tokens per candidate
    similarity: str = "jaccard"  # QuickUMLS similarity: jaccard, cosine, dice, overlap
    quickumls: bool = True  # use QuickUMLS (approximate matching) at all
    stem: bool = True  # TermMatcher: stemmed token sequences
    stemmer: Stemmer = "snowball"  # "snowball" (NLTK, -itis protected), "light" (plural rules only) or "pymorphy3" (lemmas)
    bag: bool = True  # TermMatcher: same stemmed content words in another order
    acronyms: bool = True  # all-caps vocabulary atoms, matched case-sensitively
    abbreviations: bool = False  # scispacy AbbreviationDetector
    negation: bool = False  # drop negated mentions
    generic: bool = True  # drop bare generic head nouns
    segment: bool = True  # CJK: matches must align with segmenter word boundaries
    head_final: bool = True  # noun phrases end with their head (en, ru, de); False: fr, es
    eponyms: bool = True  # "Lesch-Nyhan" = "Lesch-Nyhan syndrome", "Crohn" = "maladie de Crohn"
    link_long_forms: float = 0.8  # an abbreviation's long form no term covers is linked to its nearest


LANGUAGE_DEFAULTS: dict[str, GroundingParams] = {
    "en": GroundingParams(threshold=0.85, window=6, abbreviations=True, negation=False),
    "fr": GroundingParams(threshold=0.8, window=6, abbreviations=True, negation=False, head_final=False),
    "es": GroundingParams(threshold=0.8, window=6, abbreviations=True, negation=False, head_final=False),
    "ru": GroundingParams(threshold=0.8, window=6, negation=False),
    "zh": GroundingParams(negation=True),
    "ja": GroundingParams(negation=True),
}


# Registry fields a language entry may carry (schemas.config.Language's optional fields):
# where one is set it overrides the language's default above.
REGISTRY_FIELDS = {"quickumls_threshold": "threshold", "quickumls_window": "window",
                   "quickumls_similarity": "similarity", "ground_abbreviations": "abbreviations",
                   "ground_negation": "negation"}


# The registry's `morphology` (how inflected words are reduced before they are compared):
# dictionary lemmas (pymorphy3: "шизофренией" -> "шизофрения"), a Snowball stem, or the word
# as written. Unset: the language's default above.
MORPHOLOGY = {"pymorphy3": {"stem": True, "stemmer": "pymorphy3"}, "snowball": {"stem": True, "stemmer": "snowball"},
              "none": {"stem": False}}


def params_for(lang: Language, threshold: float | None = None, window: int | None = None) -> GroundingParams:
    p = LANGUAGE_DEFAULTS.get(lang.code, GroundingParams())
    if lang.morphology is not None:
        p = replace(p, **MORPHOLOGY[lang.morphology])
    for reg_field, param in REGISTRY_FIELDS.items():
        value = getattr(lang, reg_field)  # a field Language lacks is an AttributeError, not a silent default
        if value is not None:
            p = replace(p, **{param: value})
    if threshold is not None:
        p = replace(p, threshold=float(threshold))
    if window is not None:
        p = replace(p, window=int(window))
    return p


QUICKUMLS_LANG = {"en": ("ENG", "english"), "fr": ("FRE", "french"), "es": ("SPA", "spanish"), "ru": ("RUS", "russian"),
                  "de": ("GER", "german"), "it": ("ITA", "italian"), "pt": ("POR", "portuguese"), "nl": ("DUT", "dutch")}


def quickumls_language(code: str) -> tuple[str, str]:
    """(QuickUMLS language, NLTK language name) of a registry code; English's for a language
    QuickUMLS does not know (its index and stop-words are then English-keyed)."""
    return QUICKUMLS_LANG.get(code, QUICKUMLS_LANG["en"])
