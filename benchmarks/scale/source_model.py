"""Source vocabularies (SAB): which name a concept, in which languages, with which codes.

The sources and their mix are data (data/source_vocabularies.tsv, data/source_mix.toml);
here are the rules that turn them into atoms: string styles, British spellings, lexical
(LUI) keys, scattered identifiers and per-source codes.
"""
from __future__ import annotations

import re

from .data import table, toml

# SAB -> (LAT, SRL, SON, preferred TTY, synonym TTY, string style, code kind)
SAB_INFO = {sab: (lat, int(srl), son, pt, sy, style_, kind)
            for sab, lat, srl, son, pt, sy, style_, kind in table("source_vocabularies")}
_MIX = toml("source_mix")
ENG_SOURCES = _MIX["english_sources"]  # group -> [[SAB, probability of naming a concept], ...]
ENG_OPEN = _MIX["english_open"]
OTHER_SOURCES = _MIX["other_sources"]  # lang -> [[SAB, groups, probability], ...]
# A native question in a language names its concept with an open (SRL 0) atom of that language
OPEN_SOURCE = _MIX["open_source"]
COVERAGE = _MIX["coverage"]  # group -> lang -> probability that a concept has atoms in that language
LAT_OF = _MIX["lat"]
FN_TAG = _MIX["fn_tag"]
KEY_GROUPS = ("DISO", "CHEM", "PROC", "ANAT", "GENE")
SMALL_WORDS = {"of", "the", "with", "and", "in", "for", "to", "by"}
_BRITISH = [(re.compile(r"hemorrh"), "haemorrh"), (re.compile(r"\bedema"), "oedema"), (re.compile(r"esophag"), "oesophag"),
            (re.compile(r"(?<=[a-z])emia\b"), "aemia"), (re.compile(r"\btumor\b"), "tumour"), (re.compile(r"orrhea\b"), "orrhoea"),
            (re.compile(r"ischemic"), "ischaemic"), (re.compile(r"ization\b"), "isation")]


def style(text: str, how: str) -> str:
    if how == "cap":
        return text[:1].upper() + text[1:] if text[:1].islower() else text
    if how == "title":
        return " ".join(w if w in SMALL_WORDS or not w[:1].islower() else w[:1].upper() + w[1:] for w in text.split(" "))
    if how == "upper":
        return text.upper()
    return text


def british(text: str) -> str:
    for rx, rep in _BRITISH:
        text = rx.sub(rep, text)
    return text


_WORD = re.compile(r"\w+")


def lui_key(text: str) -> str:
    return " ".join(sorted(_WORD.findall(text.lower())))


class Permuted:
    """Unique, scattered identifiers: prefix + fixed-width digits of a bijection of a counter."""

    def __init__(self, prefix: str, width: int, mult: int, offset: int):
        self.prefix, self.mod, self.mult, self.offset, self.n = prefix, 10 ** width, mult, offset, 0
        self.fmt = "%s%0" + str(width) + "d"

    def __call__(self) -> str:
        self.n += 1
        return self.fmt % (self.prefix, (self.n * self.mult + self.offset) % self.mod)


def code_for(kind: str, num: int) -> tuple[str, str, str, str]:
    """(SAUI, SCUI, SDUI, CODE) of a concept (CUI number `num`) in a source family."""
    h = (num * 2654435761 + _KIND_SALT[kind]) & 0xFFFFFFFF
    if kind == "msh":
        d = "D%06d" % (h % 1_000_000)
        return "", "M%07d" % (h % 10_000_000), d, d
    if kind == "sct":
        c = str(100000 + h % 900_000_000)
        return str(1_000_000 + h % 3_000_000_000), c, "", c
    if kind == "nci":
        c = "C%d" % (1000 + h % 190_000)
        return "", c, "", c
    if kind == "mdr":
        return "", "", "", "10%06d" % (h % 1_000_000)
    if kind == "hpo":
        c = "HP:%07d" % (h % 5_000_000)
        return "", c, "", c
    if kind == "do":
        c = "DOID:%d" % (h % 120_000)
        return "", c, "", c
    if kind == "icd":
        c = "%s%02d.%d" % ("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[h % 26], (h >> 5) % 100, (h >> 12) % 10)
        return "", "", "", c
    if kind == "spl":
        c = "".join("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"[(h >> (3 * i)) % 34] for i in range(10))
        return "", c, "", c
    if kind == "hgnc":
        c = "HGNC:%d" % (h % 60_000)
        return "", c, "", c
    if kind == "go":
        c = "GO:%07d" % (h % 10_000_000)
        return "", c, "", c
    if kind == "mmb":
        c = "MMB%06d" % (h % 1_000_000)
        return "", c, "", c
    c = str(h % 10_000_000)
    return "", c, "", c


_KIND_SALT = {k: sum((i + 1) * ord(c) for i, c in enumerate(k)) * 7919 for k in {v[6] for v in SAB_INFO.values()}}
