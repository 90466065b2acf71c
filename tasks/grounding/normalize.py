"""Text folding with offsets (Latin and Cyrillic), acronym tests, CJK folding."""
from __future__ import annotations

from functools import lru_cache
import re
import unicodedata


NORM_VERSION = "2"  # part of the QuickUMLS index key: bump when fold() changes


_DASHES = set("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212/\\_")


_APOSTROPHES = set("'\u2019\u02bc`\u00b4\u2018")


_GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "κ": "kappa",
          "λ": "lambda", "μ": "mu", "τ": "tau", "ω": "omega"}


_LIGATURES = {"œ": "oe", "æ": "ae", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"}


@lru_cache(maxsize=65536)
def _fold_char(ch: str, latin: bool) -> str:
    if ch in _DASHES or ch in _APOSTROPHES:
        return " "
    s = unicodedata.normalize("NFKC", ch).casefold()
    if latin:
        if s in _GREEK:
            return " " + _GREEK[s] + " "
        s = "".join(c for c in unicodedata.normalize("NFD", s) if not unicodedata.combining(c))
        s = "".join(_LIGATURES.get(c, c) for c in s)
    else:
        s = s.replace("ё", "е")
    return " " if s.isspace() else s


def fold(text: str, latin: bool = True) -> tuple[str, list[int]]:
    """Normalise for matching and keep, for every output character, the index of the
    original character it came from. NFKC + casefold; for Latin scripts accents and
    ligatures folded and Greek letters spelled out; dashes, slashes and apostrophes become
    spaces; a possessive 's is dropped; whitespace runs collapse to one space."""
    out: list[str] = []
    origin: list[int] = []
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if (ch in _APOSTROPHES and 0 < i and text[i - 1].isalnum() and i + 1 < n and text[i + 1] in "sS"
                and (i + 2 == n or not text[i + 2].isalnum())):
            i += 2  # possessive: "Crohn's disease" = "Crohn disease"
            continue
        for c in _fold_char(ch, latin):
            if c.isspace():
                if not out or out[-1] == " ":
                    continue
                c = " "
            out.append(c)
            origin.append(i)
        i += 1
    while out and out[-1] == " ":
        out.pop()
        origin.pop()
    return "".join(out), origin


class _FoldTable(dict):
    """`str.translate` table of `_fold_char`: code point -> folded string, filled on first
    sight of a character (str.translate looks a character up once per call in C; a missing
    one lands in __missing__)."""

    def __init__(self, latin: bool):
        super().__init__()
        self.latin = latin

    def __missing__(self, code: int) -> str:
        folded = self[code] = _fold_char(chr(code), self.latin)
        return folded


_FOLD_TABLES = {True: _FoldTable(True), False: _FoldTable(False)}


_HAS_APOSTROPHE = re.compile("[" + re.escape("".join(sorted(_APOSTROPHES))) + "]")


def fold_term(text: str, latin: bool = True) -> str:
    """`fold(text, latin)[0]`, without the offsets: the grounders fold every vocabulary string
    (1.1M English atoms), and fold()'s character loop cost 32 us a string. Without an
    apostrophe (no possessive to drop) fold() is the concatenation of every character's
    `_fold_char` with whitespace runs collapsed and the ends stripped, which is what
    translate + split + join compute (str.split() splits where str.isspace() holds, as
    fold() tests). Texts with an apostrophe take fold() itself.
    tests/tasks/grounding/test_fold_term.py checks this against fold() (hypothesis)."""
    if _HAS_APOSTROPHE.search(text):
        return fold(text, latin)[0]
    return " ".join(text.translate(_FOLD_TABLES[latin]).split())


_ACRONYM = re.compile(r"[A-Z][A-Z0-9]*(?:-?[A-Z0-9]+)*")


def acronym_fits(short: str, long: str) -> bool:
    """Schwartz-Hearst's test: the short form's letters and digits occur in the long form in
    order, the first one at the start of a word. "COPD" fits "chronic obstructive pulmonary
    disease"; a gene symbol listed as a disease synonym ("WT1" for Wilms tumor) does not."""
    sf = [c for c in short.lower() if c.isalnum()]
    lf = long.lower()
    if not sf:
        return False
    j = len(lf) - 1
    for k in range(len(sf) - 1, -1, -1):
        c = sf[k]
        while j >= 0 and (lf[j] != c or (k == 0 and j > 0 and lf[j - 1].isalnum())):
            j -= 1
        if j < 0:
            return False
        j -= 1
    return True


def is_acronym(s: str) -> bool:
    """An all-capitals short form such as COPD, WT1 or HNPCC (2-8 characters)."""
    s = s.strip()
    return 2 <= len(s) <= 8 and bool(_ACRONYM.fullmatch(s)) and sum(c.isalpha() for c in s) >= 2


# A vocabulary acronym that the text uses as a gene or protein symbol (WT1 gene, ATM protein,
# the HPRT locus) is a gene there, not the disease the vocabulary names with it.
GENE_CONTEXT = re.compile(
    r"\W{0,3}(gene|genes|protein|proteins|locus|loci|mutation|mutations|mutant|mutants|allele|alleles|mrna|cdna|"
    r"transcripts?|promoter|exons?|kinase|dependent|deficient|knockout|"
    r"g[eè]ne|g[eè]nes|prot[eé]ine|prot[eé]ines|gen|genes|prote[ií]na|prote[ií]nas)\b", re.IGNORECASE)


# "(XX)" right after a mention: a short form the text may be defining
PAREN_SHORT = re.compile(r"\s*\(\s*([A-Za-z0-9][A-Za-z0-9\-]{0,9})\s*\)")


# a name going on into another one's ("von Willebrand factor", "Reed-Sternberg cells")
NAME_CONTINUES = re.compile(r"\W{0,2}(factor|antigen|receptor|cells?|facteur|factor)\b", re.IGNORECASE)


# Bare head nouns that name no particular condition: a match consisting of one of these alone
# is dropped ("the disease", "this syndrome"); compared after fold().
GENERIC_TERMS: dict[str, set[str]] = {
    "en": {"disease", "diseases", "disorder", "disorders", "syndrome", "syndromes", "condition", "conditions",
           "illness", "illnesses", "abnormality", "abnormalities", "anomaly", "anomalies"},
    "fr": {"maladie", "maladies", "syndrome", "syndromes", "trouble", "troubles", "affection", "affections",
           "anomalie", "anomalies"},
    "es": {"enfermedad", "enfermedades", "sindrome", "sindromes", "trastorno", "trastornos", "afeccion",
           "afecciones", "anomalia", "anomalias"},
    "ru": {"болезнь", "болезни", "заболевание", "заболевания", "синдром", "синдромы", "расстройство"},
    "zh": {"疾病", "病", "综合征", "症候群", "病症"},
    "ja": {"疾患", "病気", "症候群", "疾病", "病"},
}


# Words that make a term name a condition of something: a vocabulary term that adds one of
# these (or a GENERIC_TERMS word) to a long form names something else than the long form.
HEAD_WORDS: dict[str, set[str]] = {
    "en": {"deficiency", "cancer", "tumor", "tumour", "carcinoma", "neoplasm", "disease", "syndrome", "disorder",
           "abnormality", "defect", "failure", "injury", "infection", "excess", "insufficiency"},
    "fr": {"deficit", "deficience", "cancer", "tumeur", "carcinome", "maladie", "syndrome", "insuffisance", "anomalie"},
    "es": {"deficit", "deficiencia", "cancer", "tumor", "carcinoma", "enfermedad", "sindrome", "insuficiencia"},
}
