"""Heads: the stem of each family of concept names, and the spaces they are drawn from.

A head space enumerates every head of a group without repetition, in blocks (most natural
first), each block in a seeded pseudo-random order; the modifiers (MODS) then name a head's
descendants down the hierarchy.
"""
from __future__ import annotations

import random
from functools import partial

from .data import TABLE_COLUMNS
from .lexicon import (APPROACH, COURSE, DEPTH, DEVICE_MODS, DEVICES, DISO_POST, DISO_SUFFIXES, DOSE_FORMS, DRUG_STEMS,
                      EPONYM_ENDINGS, EPONYM_KINDS, ETIOLOGY, EXTENT, FUNCTIONS, GENUS_SUFFIXES, GI, GROUP_ROOTS,
                      LESIONS, ORGANS, POSITION, PREFIXES, PROC_NOUNS, PROC_PREFIXES, PROC_SUFFIXES, SALTS, SETTING,
                      SEVERITY, SIDE, STRENGTHS, STRUCTURES, SYLLABLES, Head, adj_mod, es_forms, form_mod, fr_forms,
                      join_root, noun_gender, post_mod, ru_forms, salt_mod, strength_mod)


class LinearPermutation:
    """i -> (a*i + c) mod n, a bijection of range(n): a random-looking order without a list."""

    def __init__(self, n: int, rng: random.Random):
        self.n = n
        a = rng.randrange(n // 3 + 1, max(n // 3 + 2, n)) if n > 2 else 1
        while _gcd(a, n) != 1:
            a += 1
        self.a, self.c = a, rng.randrange(n) if n else 0

    def __getitem__(self, i: int) -> int:
        return (self.a * i + self.c) % self.n


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


class HeadSpace:
    """The heads of one group, enumerated without repetition in blocks (most natural first),
    each block in a seeded pseudo-random order."""

    def __init__(self, blocks: list[tuple[int, callable]], rng: random.Random):
        self.blocks = [(n, decode, LinearPermutation(n, rng)) for n, decode in blocks if n > 0]
        self.b, self.i = 0, 0

    def next(self):
        while self.b < len(self.blocks):
            n, decode, perm = self.blocks[self.b]
            if self.i < n:
                self.i += 1
                return decode(perm[self.i - 1])
            self.b, self.i = self.b + 1, 0
        return None


ORG = [dict(zip(TABLE_COLUMNS["organs"], o)) for o in ORGANS]  # the organs, by column name


def single_head(prefix: list[str] | None, organs: list[dict], suf: list[str], tui: str, gloss: str, key: str) -> Head:
    """prefix + root(s) + suffix in every language; `suf` = en | fr g | es g | de g | ru g | ja | zh."""
    en_s = suf[0]
    (fr_s, fr_g), (es_s, es_g), (de_s, de_g), (ru_s, ru_g) = (noun_gender(suf[i]) for i in range(1, 5))
    ja_s, zh_s = suf[5], suf[6]

    def roots(field: str, link: str) -> str:
        parts = [o[field] for o in organs]
        out = parts[0]
        for p in parts[1:]:
            out = out + ("" if out.endswith(("o", "о")) else link) + p
        return out

    en_r, fr_r, es_r, ru_r = roots("en_root", "o"), roots("fr_root", "o"), roots("es_root", "o"), roots("ru_root", "о")
    de_r = organs[0]["de_root"] + "".join(("" if organs[0]["de_root"].endswith("o") else "o") + o["de_root"].lower() for o in organs[1:])
    ja_r = "".join(o["ja_root"] for o in organs)
    zh_r = "".join(o["zh_root"] for o in organs)
    p = prefix or ["", "", "", "", "", "", ""]
    de_word = (p[3] + de_r.lower()) if p[3] else de_r
    forms = {
        "en": (p[0] + join_root(en_r, en_s), ""), "fr": (p[1] + join_root(fr_r, fr_s), fr_g),
        "es": (p[2] + join_root(es_r, es_s), es_g), "de": (join_root(de_word, de_s), de_g),
        "ru": (p[4] + join_root(ru_r, ru_s), ru_g), "ja": (p[5] + ja_r + ja_s, ""), "zh": (p[6] + zh_r + zh_s, ""),
    }
    noun = " and ".join(o["en_noun"] for o in organs)
    return Head(key, forms, tui, gloss.format(noun=noun) if gloss and not prefix else "", noun)


def phrase_head(organ: dict, noun: list[str], tui: str, key: str) -> Head:
    """organ adjective + noun: 'renal cyst', 'kyste rénal', 'почечная киста', 'Nierenzyste', '腎嚢胞'."""
    fr_n, fr_g = noun_gender(noun[1])
    es_n, es_g = noun_gender(noun[2])
    de_n, de_g = noun_gender(noun[3])
    ru_n, ru_g = noun_gender(noun[4])
    fr_a = fr_forms(organ["fr_adj"])[GI[fr_g]]
    es_a = es_forms(organ["es_adj"])[GI[es_g]]
    ru_a = ru_forms(organ["ru_adj"])[GI[ru_g]]
    forms = {
        "en": (organ["en_adj"] + " " + noun[0], ""), "fr": (fr_n + " " + fr_a, fr_g), "es": (es_n + " " + es_a, es_g),
        "de": (organ["de_stem"] + de_n, de_g), "ru": (ru_a + " " + ru_n, ru_g),
        "ja": (organ["ja_root"] + noun[5], ""), "zh": (organ["zh_root"] + noun[6], ""),
    }
    return Head(key, forms, tui, "", organ["en_noun"])


def category_head(organ: dict, kind: str, key: str) -> Head:
    """An organ-level grouping concept: 'renal disorder', 'renal procedure'."""
    if kind == "DISO":
        forms = {"en": (organ["en_adj"] + " disorder", ""), "fr": ("trouble " + fr_forms(organ["fr_adj"])[0], "m"),
                 "es": ("trastorno " + es_forms(organ["es_adj"])[0], "m"), "de": (organ["de_stem"] + "erkrankung", "f"),
                 "ru": (ru_forms(organ["ru_adj"])[2] + " заболевание", "n"), "ja": (organ["ja_root"] + "疾患", ""),
                 "zh": (organ["zh_root"] + "疾病", "")}
        return Head(key, forms, "T047", "", organ["en_noun"])
    if kind == "PROC":
        forms = {"en": (organ["en_adj"] + " procedure", ""), "fr": ("intervention " + fr_forms(organ["fr_adj"])[1], "f"),
                 "es": ("procedimiento " + es_forms(organ["es_adj"])[0], "m"), "de": (organ["de_stem"] + "eingriff", "m"),
                 "ru": (ru_forms(organ["ru_adj"])[2] + " вмешательство", "n"), "ja": (organ["ja_root"] + "の処置", ""),
                 "zh": (organ["zh_root"] + "部手术", "")}
        return Head(key, forms, "T061", "", organ["en_noun"])
    # ANAT: the organ itself
    fr_n, fr_g = noun_gender(organ["fr_noun_g"])
    es_n, es_g = noun_gender(organ["es_noun_g"])
    de_n, de_g = noun_gender(organ["de_noun_g"])
    ru_n, ru_g = noun_gender(organ["ru_noun_g"])
    forms = {"en": (organ["en_noun"], ""), "fr": (fr_n, fr_g), "es": (es_n, es_g), "de": (de_n, de_g), "ru": (ru_n, ru_g),
             "ja": (organ["ja_noun"], ""), "zh": (organ["zh_noun"], "")}
    return Head(key, forms, "T023", "", organ["en_noun"])


def root_head(group: str) -> Head:
    en, fr, es, de, ru, ja, zh, tui = GROUP_ROOTS[group]
    forms = {"en": (en, ""), "fr": noun_gender(fr), "es": noun_gender(es), "de": noun_gender(de), "ru": noun_gender(ru), "ja": (ja, ""), "zh": (zh, "")}
    return Head("root:" + group, forms, tui)


def drug_head(sylls: list[list[str]], stem: list[str], key: str) -> Head:
    lat = "".join(s[0] for s in sylls)
    en, fr, es = lat + stem[0], lat + stem[1], lat + stem[2]
    forms = {"en": (en, ""), "fr": (fr, "f" if fr.endswith("ine") else "m"), "es": (es, "f" if es.endswith("a") else "m"),
             "de": ((lat + stem[3]).capitalize(), "n"), "ru": ("".join(s[1] for s in sylls) + stem[4], "m"),
             "ja": ("".join(s[2] for s in sylls) + stem[5], ""), "zh": ("".join(s[3] for s in sylls) + stem[6], "")}
    return Head(key, forms, "T121", "", stem[7])


def drug_class_head(stem: list[str]) -> Head:
    forms = {"en": (stem[7], ""), "fr": noun_gender(stem[8]), "es": noun_gender(stem[9]), "de": noun_gender(stem[10]), "ru": noun_gender(stem[11]),
             "ja": (stem[12], ""), "zh": (stem[13], "")}
    return Head("class:" + stem[0], forms, "T121", "", stem[7])


def gene_family_head(fam: str) -> Head:
    forms = {"en": (fam + " gene family", ""), "fr": ("famille de gènes " + fam, "f"), "es": ("familia de genes " + fam, "f"),
             "de": (fam + "-Genfamilie", "f"), "ru": ("семейство генов " + fam, "n"), "ja": (fam + "遺伝子ファミリー", ""),
             "zh": (fam + "基因家族", "")}
    return Head("fam:" + fam, forms, "T028", "", fam)


def gene_head(sym: str, fam: str) -> Head:
    forms = {"en": (sym + " gene", ""), "fr": ("gène " + sym, "m"), "es": ("gen " + sym, "m"), "de": (sym + "-Gen", "n"),
             "ru": ("ген " + sym, "m"), "ja": (sym + "遺伝子", ""), "zh": (sym + "基因", "")}
    return Head("gene:" + sym, forms, "T028", "", fam)


def eponym_head(sylls: list[list[str]], ending: list[str], kind: list[str], organ: dict, key: str) -> Head:
    """'Kavrell disease', 'maladie de Kavrell', 'болезнь Каврелл': the surname in every
    Latin-script language, transliterated in the others; attached to an organ category."""
    latin = ("".join(s[0] for s in sylls) + ending[0]).capitalize()
    ru = "".join(s[1] for s in sylls) + ending[1]
    ja = "".join(s[2] for s in sylls) + ending[2]
    zh = "".join(s[3] for s in sylls) + ending[3]
    forms = {"en": (kind[0].format(n=latin), "")}
    for lang, col in (("fr", 1), ("es", 2), ("de", 3), ("ru", 4)):
        text, g = noun_gender(kind[col])
        forms[lang] = (text.format(n=ru[:1].upper() + ru[1:] if lang == "ru" else latin), g)
    forms["ja"], forms["zh"] = (kind[5].format(n=ja), ""), (kind[6].format(n=zh), "")
    return Head(key, forms, kind[7], "", organ["en_noun"])


LATIN_ONLY = ("en", "fr", "es", "de", "it", "pt", "nl")


def latin_head(name: str, tui: str, key: str) -> Head:
    forms = {l: (name, "m") for l in ("en", "fr", "es", "de")}
    return Head(key, forms, tui, "", "", LATIN_ONLY)


# Modifier categories per group, in hierarchy order
MODS = {
    "DISO": [[adj_mod(r, 0) for r in ETIOLOGY], [adj_mod(r, 1) for r in COURSE],
             [adj_mod(r, 2) for r in SEVERITY] + [post_mod(r, 2) for r in DISO_POST]],
    "CHEM": [[salt_mod(r, 0) for r in SALTS], [form_mod(r, 1) for r in DOSE_FORMS], [strength_mod(s, 2) for s in STRENGTHS]],
    "PROC": [[adj_mod(r, 0) for r in APPROACH], [adj_mod(r, 1) for r in EXTENT], [adj_mod(r, 2) for r in SETTING]],
    "ANAT": [[adj_mod(r, 0) for r in SIDE], [adj_mod(r, 1) for r in POSITION], [adj_mod(r, 2) for r in DEPTH]],
    "DEVI": [[adj_mod(r, 0) for r in DEVICE_MODS]],
}


# ---------------------------------------------------------------------------- head spaces
NO, NS, NL, NPX = len(ORG), len(DISO_SUFFIXES), len(LESIONS), len(PREFIXES) + 1
NPP, NPS, NPN = len(PROC_PREFIXES) + 1, len(PROC_SUFFIXES), len(PROC_NOUNS)
NSY, NST = len(SYLLABLES), len(DRUG_STEMS)
TUI_BY_STRUCTURE = {"tissue": "T024", "epithelium": "T024", "parenchyma": "T024", "mucosa": "T024", "interstitium": "T024"}
GENE_LETTERS = "ABCDEFGHIKLMNPRSTVWXZ"


def _two_organs(i: int) -> tuple[int, int, int]:
    """i -> (first organ, a different second organ, the rest of i)."""
    o1, rest = i % NO, i // NO
    o2, s = rest % (NO - 1), rest // (NO - 1)
    return o1, (o2 + 1 if o2 >= o1 else o2), s


def _syllables(i: int, k: int) -> list[list[str]]:
    sylls = []
    for _ in range(k):
        sylls.append(SYLLABLES[i % NSY])
        i //= NSY
    return sylls


def diso_simple(i: int) -> tuple[Head, list[int]]:
    if i < NPX * NO * NS:
        p, rest = i % NPX, i // NPX
        o, s = rest % NO, rest // NO
        suf = DISO_SUFFIXES[s]
        h = single_head(PREFIXES[p - 1] if p else None, [ORG[o]], suf, suf[7], suf[8], f"d:{p}:{o}:{s}")
        return h, [o]
    i -= NPX * NO * NS
    o, le = i % NO, i // NO
    return phrase_head(ORG[o], LESIONS[le], LESIONS[le][7], f"l:{o}:{le}"), [o]


def diso_compound(i: int, prefixed: bool = False) -> tuple[Head, list[int]]:
    p = 0
    if prefixed:
        p, i = i % (NPX - 1) + 1, i // (NPX - 1)
    o1, o2, s = _two_organs(i)
    suf = DISO_SUFFIXES[s]
    h = single_head(PREFIXES[p - 1] if p else None, [ORG[o1], ORG[o2]], suf, suf[7], suf[8], f"c:{p}:{o1}:{o2}:{s}")
    return h, [o1, o2]


def proc_simple(i: int) -> tuple[Head, list[int]]:
    if i < NPP * NO * NPS:
        p, rest = i % NPP, i // NPP
        o, s = rest % NO, rest // NO
        suf = PROC_SUFFIXES[s]
        return single_head(PROC_PREFIXES[p - 1] if p else None, [ORG[o]], suf, suf[7], "", f"p:{p}:{o}:{s}"), [o]
    i -= NPP * NO * NPS
    o, k = i % NO, i // NO
    return phrase_head(ORG[o], PROC_NOUNS[k], PROC_NOUNS[k][7], f"pn:{o}:{k}"), [o]


def proc_compound(i: int) -> tuple[Head, list[int]]:
    o1, o2, s = _two_organs(i)
    suf = PROC_SUFFIXES[s]
    return single_head(None, [ORG[o1], ORG[o2]], suf, suf[7], "", f"pc:{o1}:{o2}:{s}"), [o1, o2]


def drug(i: int, k: int) -> tuple[Head, list[int]]:
    st, i = i % NST, i // NST
    sylls = _syllables(i, k)
    return drug_head(sylls, DRUG_STEMS[st], f"rx:{st}:" + "".join(s[0] for s in sylls)), [st]


def anat(i: int) -> tuple[Head, list[int]]:
    o, s = i % NO, i // NO
    st = STRUCTURES[s]
    tui = TUI_BY_STRUCTURE.get(st[0], "T023")
    return phrase_head(ORG[o], st + [tui], tui, f"a:{o}:{s}"), [o]


def gene_family(i: int) -> str:
    a, b, c = i % 21, (i // 21) % 21, (i // 441) % 21
    return GENE_LETTERS[a] + GENE_LETTERS[b] + GENE_LETTERS[c] + ("" if i < 9261 else GENE_LETTERS[(i // 9261) % 21])


def genus(i: int) -> str:
    s1, rest = i % NSY, i // NSY
    s2, g = rest % NSY, rest // NSY
    return (SYLLABLES[s1][0] + SYLLABLES[s2][0] + GENUS_SUFFIXES[g]).capitalize()


def eponym(i: int, k: int) -> tuple[Head, list[int]]:
    kind, i = i % len(EPONYM_KINDS), i // len(EPONYM_KINDS)
    end, i = i % len(EPONYM_ENDINGS), i // len(EPONYM_ENDINGS)
    sylls = _syllables(i, k)
    o = (kind * 7 + end * 5 + sum(SYLLABLES.index(s) for s in sylls)) % NO
    key = f"e:{kind}:{o}:{end}:" + "".join(s[0] for s in sylls)
    return eponym_head(sylls, EPONYM_ENDINGS[end], EPONYM_KINDS[kind], ORG[o], key), [o]


def phys(i: int) -> tuple[Head, list[int]]:
    o, k = i % NO, i // NO
    return phrase_head(ORG[o], FUNCTIONS[k] + ["T042"], "T042", f"f:{o}:{k}"), [o]


def devi(i: int) -> tuple[Head, list[int]]:
    o, k = i % NO, i // NO
    return phrase_head(ORG[o], DEVICES[k] + ["T074"], "T074", f"v:{o}:{k}"), [o]


def head_spaces(rng: random.Random) -> dict[str, HeadSpace]:
    """Every group's head space; each draws its block orders from `rng`, in this order."""
    eponyms = len(EPONYM_ENDINGS) * len(EPONYM_KINDS)
    return {
        "DISO": HeadSpace([(NPX * NO * NS + NO * NL, diso_simple), (NO * (NO - 1) * NS, diso_compound),
                           ((NPX - 1) * NO * (NO - 1) * NS, partial(diso_compound, prefixed=True))], rng),
        "PROC": HeadSpace([(NPP * NO * NPS + NO * NPN, proc_simple), (NO * (NO - 1) * NPS, proc_compound)], rng),
        "CHEM": HeadSpace([(NSY ** 2 * NST, partial(drug, k=2)), (NSY ** 3 * NST, partial(drug, k=3))], rng),
        "ANAT": HeadSpace([(NO * len(STRUCTURES), anat)], rng),
        "GENE": HeadSpace([(21 ** 4, gene_family)], rng),
        "LIVB": HeadSpace([(NSY * NSY * len(GENUS_SUFFIXES), genus)], rng),
        "PHYS": HeadSpace([(NO * len(FUNCTIONS), phys)], rng),
        "DEVI": HeadSpace([(NO * len(DEVICES), devi)], rng),
        # last, so that the draws of the spaces above are those of a generator without it
        "DISO_EPONYM": HeadSpace([(NSY ** 2 * eponyms, partial(eponym, k=2)), (NSY ** 3 * eponyms, partial(eponym, k=3))],
                                 rng),
    }
