"""The generator's tables, read from data/: TSV with a header row, and TOML.

A TSV is tab-separated, one row a line, no quoting; its header must name exactly the columns
its reader expects (TABLE_COLUMNS), and every row must have that many cells. A TOML file
holds exactly the keys of TOML_KEYS. A file that does not is a DataError naming the file,
the line (or the entry) and what was expected.
"""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"

ADJECTIVE = ("en", "fr", "es", "de", "ru", "ja", "zh")  # fr, es: masculine or 'm/f'; de: a stem
NOUN = ("en", "fr_g", "es_g", "de_g", "ru_g", "ja", "zh")  # *_g: 'noun g', g the gender (m, f, n)
SCRIPTS = ("latin", "ru", "ja", "zh")  # one syllable or ending in four scripts
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "organs": ("en_root", "en_adj", "en_noun", "fr_root", "fr_adj", "fr_noun_g", "es_root", "es_adj", "es_noun_g",
               "de_root", "de_stem", "de_noun_g", "ru_root", "ru_adj", "ru_noun_g", "ja_root", "ja_noun", "zh_root",
               "zh_noun", "la"),
    "disorder_prefixes": ADJECTIVE,
    "disorder_suffixes": NOUN + ("tui", "gloss_en"),
    "lesions": NOUN + ("tui",),
    "etiology": ADJECTIVE,
    "course": ADJECTIVE,
    "severity": ADJECTIVE,
    "disorder_qualifiers": ADJECTIVE,
    "procedure_suffixes": NOUN + ("tui",),
    "procedure_nouns": NOUN + ("tui",),
    "procedure_prefixes": ADJECTIVE,
    "approach": ADJECTIVE,
    "extent": ADJECTIVE,
    "setting": ADJECTIVE,
    "structures": NOUN,
    "side": ADJECTIVE,
    "position": ADJECTIVE,
    "depth": ADJECTIVE,
    "syllables": SCRIPTS,
    "eponym_endings": SCRIPTS,
    "eponym_kinds": NOUN + ("tui",),
    "drug_stems": ADJECTIVE + ("class_en", "class_fr_g", "class_es_g", "class_de_g", "class_ru_g", "class_ja", "class_zh"),
    "salts": ADJECTIVE,
    "dose_forms": ADJECTIVE,
    "functions": NOUN,
    "devices": NOUN,
    "device_modifiers": ADJECTIVE,
    "group_roots": ("group",) + NOUN + ("tui",),
    "semantic_types": ("tui", "stn", "sty"),
    "source_vocabularies": ("sab", "lat", "srl", "son", "preferred_tty", "synonym_tty", "style", "code_kind"),
}
TOML_KEYS: dict[str, tuple[str, ...]] = {
    "words": ("strengths", "genus_suffixes", "epithets", "features", "disorder_kinds"),
    "source_mix": ("english_sources", "english_open", "other_sources", "open_source", "coverage", "lat", "fn_tag"),
    "questions": ("population", "lead_in", "template", "ru_kind"),
    "passages": ("openers", "body", "mentions", "closers", "titles", "ev_background", "ev_design", "ev_who",
                 "ev_method", "ev_result", "ev_conclusion", "ev_title", "ev_design_names", "kind", "with_phrase"),
}


class DataError(ValueError):
    """A data file that is not what its reader expects (the message names the file and line)."""


def parse_tsv(path: Path, columns: tuple[str, ...]) -> list[list[str]]:
    """The rows of a TSV whose header is `columns`; a DataError at the first row that is not."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t") if lines else []
    if tuple(header) != columns:
        raise DataError(f"{path}:1: header {header} is not the expected columns {list(columns)}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != len(columns):
            raise DataError(f"{path}:{number}: {len(cells)} cells, expected {len(columns)} "
                            f"({', '.join(columns)}), tab-separated")
        rows.append(cells)
    return rows


@cache
def table(name: str) -> list[list[str]]:
    """data/<name>.tsv, checked against TABLE_COLUMNS[name]."""
    return parse_tsv(DATA / f"{name}.tsv", TABLE_COLUMNS[name])


def parse_toml(path: Path, keys: tuple[str, ...]) -> dict:
    """A TOML file whose top-level keys are exactly `keys`."""
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path}: {exc}") from None
    if sorted(doc) != sorted(keys):
        raise DataError(f"{path}: keys {sorted(doc)} are not the expected {sorted(keys)}")
    return doc


@cache
def toml(name: str) -> dict:
    """data/<name>.toml, checked against TOML_KEYS[name]."""
    return parse_toml(DATA / f"{name}.toml", TOML_KEYS[name])


def entries(name: str, key: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> list[dict]:
    """The [[key]] entries of data/<name>.toml, checked by check_entries."""
    return check_entries(DATA / f"{name}.toml", key, toml(name)[key], required, optional)


def check_entries(path: Path, key: str, found: list[dict], required: tuple[str, ...],
                  optional: tuple[str, ...] = ()) -> list[dict]:
    """`found`, the [[key]] entries of `path`, if each has every `required` field and no field
    beyond `required` and `optional`."""
    for number, entry in enumerate(found, start=1):
        missing = [f for f in required if f not in entry]
        extra = sorted(set(entry) - set(required) - set(optional))
        if missing or extra:
            raise DataError(f"{path}: [[{key}]] number {number}: "
                            + (f"missing {missing}" if missing else f"unexpected {extra}")
                            + f" (expected {list(required)}" + (f", optionally {list(optional)})" if optional else ")"))
    return found
