"""The lexicon: morpheme and phrase tables (data/*.tsv) and how names are composed from them.

Concept names are composed from these lists (prefix + root + suffix -> 'hypernephritis';
organ adjective + lesion -> 'renal cyst'; drug stems -> 'lorvastatin'; modifiers down the
hierarchy -> 'severe chronic autoimmune nephritis'), rendered in English, French, Spanish,
German, Russian (Cyrillic), Japanese (kanji/kana) and Chinese (Han), with gender agreement
where the language has it.
"""
from __future__ import annotations

from dataclasses import dataclass

from .data import table, toml

ORGANS = table("organs")
PREFIXES = table("disorder_prefixes")
DISO_SUFFIXES = table("disorder_suffixes")
LESIONS = table("lesions")
ETIOLOGY = table("etiology")
COURSE = table("course")
SEVERITY = table("severity")
DISO_POST = table("disorder_qualifiers")
PROC_SUFFIXES = table("procedure_suffixes")
PROC_NOUNS = table("procedure_nouns")
PROC_PREFIXES = table("procedure_prefixes")
APPROACH = table("approach")
EXTENT = table("extent")
SETTING = table("setting")
STRUCTURES = table("structures")
SIDE = table("side")
POSITION = table("position")
DEPTH = table("depth")
SYLLABLES = table("syllables")
EPONYM_ENDINGS = table("eponym_endings")
EPONYM_KINDS = table("eponym_kinds")
DRUG_STEMS = table("drug_stems")
SALTS = table("salts")
DOSE_FORMS = table("dose_forms")
FUNCTIONS = table("functions")
DEVICES = table("devices")
DEVICE_MODS = table("device_modifiers")
GROUP_ROOTS = {row[0]: row[1:] for row in table("group_roots")}
SEMANTIC_TYPES = {tui: (stn, sty) for tui, stn, sty in table("semantic_types")}  # the UMLS Semantic Network
_WORDS = toml("words")
STRENGTHS = _WORDS["strengths"]
GENUS_SUFFIXES = _WORDS["genus_suffixes"]
EPITHETS = _WORDS["epithets"]
FEATURES = _WORDS["features"]
KIND_EN = _WORDS["disorder_kinds"]

# Share of disorder trees whose head is an eponym ("Crohn disease", "maladie de Crohn"): the
# surname is the one word a French, Spanish or German name shares with the English entry, as
# in real vocabularies, where eponyms (with drug names and loanwords) are most of what a
# translated disorder name has in common with its English entry.
EPONYM_SHARE = 0.12


def noun_gender(cell: str) -> tuple[str, str]:
    """'rein m' -> ('rein', 'm'): a noun and its gender."""
    word, g = cell.rsplit(" ", 1)
    return word, g


# ---------------------------------------------------------------------------- morphology
GI = {"m": 0, "f": 1, "n": 2}


def fr_forms(cell: str) -> tuple[str, str]:
    if "/" in cell:
        m, f = cell.split("/")
        return m, f
    m = cell
    if m.endswith("e"):
        f = m
    elif m.endswith("aigu"):
        f = m + "ë"
    elif m.endswith("ien"):
        f = m + "ne"
    elif m.endswith("eux"):
        f = m[:-1] + "se"
    elif m.endswith("if"):
        f = m[:-1] + "ve"
    elif m.endswith("el"):
        f = m + "le"
    else:
        f = m + "e"
    return m, f


def es_forms(cell: str) -> tuple[str, str]:
    if "/" in cell:
        m, f = cell.split("/")
        return m, f
    first, _, rest = cell.partition(" ")
    f = first[:-1] + "a" if first.endswith("o") else first
    return cell, (f + (" " + rest if rest else ""))


def de_forms(stem: str) -> tuple[str, str, str]:
    if stem.endswith("e"):
        return stem + "r", stem, stem + "s"
    return stem + "er", stem + "e", stem + "es"


def ru_forms(m: str) -> tuple[str, str, str]:
    if m.endswith(("ый", "ой")):
        s = m[:-2]
        return m, s + "ая", s + "ое"
    if m.endswith("ий"):
        s = m[:-2]
        if s[-1] in "гкх":
            return m, s + "ая", s + "ое"
        if s[-1] in "жшчщ":
            return m, s + "ая", s + "ее"
        return m, s + "яя", s + "ее"
    return m, m, m


_UNACCENT = str.maketrans("áéíóúàèìòùâêîôûäëïöü", "aeiouaeiouaeiouaeiou")


def derive(lang: str, text: str) -> str:
    """Italian and Portuguese from the Spanish name, Dutch from the German one: crude,
    but in the right script and recognisably of those languages."""
    if lang == "it":
        t = text.translate(_UNACCENT)
        for a, b in (("ción", "zione"), ("cion", "zione"), ("itis", "ite"), ("osis", "osi"), (" con ", " con "),
                     (" de ", " di "), ("quiste", "cisti"), ("ñ", "gn")):
            t = t.replace(a, b)
        return t
    if lang == "pt":
        t = text
        for a, b in (("ción", "ção"), ("itis", "ite"), ("osis", "ose"), ("ía", "ia"), (" con ", " com "),
                     ("ñ", "nh"), (" del ", " do ")):
            t = t.replace(a, b)
        return t
    if lang == "nl":
        t = text
        for a, b in (("ph", "f"), ("ä", "e"), ("ö", "eu"), ("ü", "u"), ("ß", "ss"), (" mit ", " met "), ("z", "z")):
            t = t.replace(a, b)
        return t[:1].lower() + t[1:] if t[:2] != t[:2].upper() else t
    raise ValueError(lang)


def join_root(root: str, suffix: str) -> str:
    """'cardi' + 'itis' -> 'carditis'; 'карди' + 'ит' -> 'кардит'."""
    if root and suffix and root[-1] in "iи" and suffix[0] in "iи":
        return root[:-1] + suffix
    return root + suffix


# ---------------------------------------------------------------------------- names
class Mod:
    """A modifier: per language a placement and a form (or forms by gender)."""

    __slots__ = ("key", "cat", "spec", "en")

    def __init__(self, key: str, cat: int, spec: dict):
        self.key, self.cat, self.spec = key, cat, spec
        self.en = spec["en"][1]


def adj_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {
        "en": ("pre", en), "fr": ("post", fr_forms(fr)), "es": ("post", es_forms(es)), "de": ("pre", de_forms(de)),
        "ru": ("pre", ru_forms(ru)), "ja": ("prejoin", ja), "zh": ("prejoin", zh)})


def post_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {"en": ("post", en), "fr": ("post", fr), "es": ("post", es), "de": ("post", de),
                         "ru": ("post", ru), "ja": ("prejoin", ja), "zh": ("prejoin", zh)})


def salt_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {"en": ("post", en), "fr": ("post", fr), "es": ("post", es_forms(es)), "de": ("hyphen", de),
                         "ru": ("post", ru), "ja": ("join", ja), "zh": ("join", zh)})


def form_mod(row: list[str], cat: int) -> Mod:
    en, fr, es, de, ru, ja, zh = row
    return Mod(en, cat, {"en": ("post", en), "fr": ("post", fr), "es": ("post", es), "de": ("post", de),
                         "ru": ("comma", ru), "ja": ("join", ja), "zh": ("join", zh)})


def strength_mod(n: str, cat: int) -> Mod:
    return Mod(n + " mg", cat, {"en": ("post", n + " mg"), "fr": ("post", n + " mg"), "es": ("post", n + " mg"),
                                "de": ("post", n + " mg"), "ru": ("post", n + " мг"), "ja": ("join", n + "mg"),
                                "zh": ("join", n + "毫克")})


@dataclass(frozen=True)
class Head:
    """The stem of a family of names: per language (text, gender); `langs` it can be said in."""

    key: str
    forms: dict  # lang -> (text, gender)
    tui: str
    gloss: str = ""  # an English descriptive synonym ('inflammation of the kidney'), or ''
    organ: str = ""  # English organ noun, for definitions
    langs: tuple = ("en", "fr", "es", "de", "ru", "ja", "zh", "it", "pt", "nl")


def render(head: Head, mods: tuple, lang: str) -> str:
    if lang in ("it", "pt"):
        return derive(lang, render(head, mods, "es"))
    if lang == "nl":
        return derive(lang, render(head, mods, "de"))
    text, g = head.forms[lang]
    gi = GI.get(g, 0)
    for m in mods:
        place, form = m.spec[lang]
        if isinstance(form, tuple):
            form = form[gi] if gi < len(form) else form[0]
        if place == "pre":
            text = form + " " + text
        elif place == "post":
            text = text + " " + form
        elif place == "prejoin":
            text = form + text
        elif place == "join":
            text = text + form
        elif place == "hyphen":
            text = text + "-" + form
        else:  # comma
            text = text + ", " + form
    return text
