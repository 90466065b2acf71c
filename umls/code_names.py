"""Concept names keyed by a code system (a national ICD-10 edition), as atoms of the open vocabulary.

    add_code_names(concepts, id_to_cui, data_dir, sources, languages) -> report

A code-keyed list names codes, not concepts. Its codes reach CUIs through Disease Ontology's
cross-references to the same code system (`allXREFinDO.tsv`: `ICD10CM:J45` on DOID:2841, whose
concept in the vocabulary is its lowest `UMLS_CUI`). Each source is configured, not coded
(`[[vocabulary.code_names]]`, schemas.config.CodeNamesConfig): file, delimiter, the code and
name columns, the language of its names, the SAB its atoms carry, which rows are current, and
language-specific patterns that drop residual categories or strip qualifiers from a name.

A row's name becomes an atom of its concept only when the code names exactly that concept.
Every other row is dropped, counted by reason (the report goes to the build report):

  inactive                    the row's active column is not one of active_values (a withdrawn code)
  empty                       no code or no name
  duplicate_code              a code already read from an earlier row (the first row wins)
  name_pattern                the name, once strip_from_names has cut its qualifiers, matches
                              drop_names_matching ("Other ...", "... of other veins": a residual
                              category names no single concept)
  no_xref                     no DO term cross-references the code (chapters, blocks, most 4-character
                              codes)
  no_concept                  the DO terms that do have no concept in this vocabulary (no CUI, or
                              outside `roots`)
  code_narrower_than_do_term  the DO term cross-references an ancestor of the code too (J45 and J45.0):
                              DO's concept is the ancestor's; the row's specific name would name the
                              broad concept
  do_term_spans_codes         the DO term cross-references several codes none of which contains the
                              others (A01.1, A01.2, A01.3 -> "paratyphoid fever"): it is broader than
                              each of them
  ambiguous_code              after the rules above the code still names two or more concepts

A DO term's own code is the one of its cross-referenced codes (in the source's code system)
that contains all its others: the code itself when it has one, the ancestor when it lists an
ancestor and its descendants (J45, J45.909). Codes are compared with dots, spaces and the
dagger/asterisk marks removed, upper-cased ("A01.1" = "A011"), so a list that writes codes
without dots needs no option.
"""
from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from pathlib import Path

from pydantic import ValidationError

from common.errors import InputError
from schemas.config import CodeNamesConfig

DO_XREF = Path("disease-ontology/allXREFinDO.tsv")

DROP_REASONS = ("inactive", "empty", "duplicate_code", "name_pattern", "no_xref", "no_concept",
                "code_narrower_than_do_term", "do_term_spans_codes", "ambiguous_code")


def normalize_code(code: str) -> str:
    """"a01.1" -> "A011": dots, spaces and dagger/asterisk marks removed, upper case."""
    return re.sub(r"[\s.+*\u2020]", "", code).upper()


def own_code(codes: set[str]) -> str | None:
    """The one code that contains all the others (itself or as their prefix); None when none does."""
    tops = [c for c in codes if all(o.startswith(c) for o in codes)]
    return tops[0] if len(tops) == 1 else None


def clean_name(name: str, strip: list[re.Pattern]) -> str:
    """The name with the `strip` patterns removed and spaces collapsed; a heading written in
    capitals ("КИШЕЧНЫЕ ИНФЕКЦИИ", a block's title) in sentence case, as the codes' names are."""
    for rx in strip:
        name = rx.sub("", name)
    name = " ".join(name.split()).strip(" ,;")
    if name.isupper() and " " in name:
        name = name[0] + name[1:].lower()
    return name


def read_code_rows(src: CodeNamesConfig, path: Path, drops: Counter) -> list[tuple[str, str, str]]:
    """(normalised code, code as written, cleaned name) of the rows kept, in file order."""
    if not path.is_file():
        raise InputError(path, "file not found (a code-keyed name list, vocabulary.code_names)", field="vocabulary.code_names.path")
    drop = [re.compile(rx) for rx in src.drop_names_matching]
    strip = [re.compile(rx) for rx in src.strip_from_names]
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    try:
        with path.open(encoding=src.encoding, newline="") as fh:
            reader = csv.reader(fh, delimiter=src.delimiter, quotechar='"')
            header = next(reader, None)
            if header is None:
                raise InputError(path, "empty file (expected a header row)", line=1)
            cols = {}
            for field in ("code_column", "name_column", "active_column"):
                name = getattr(src, field)
                if name is None:
                    continue
                if name not in header:
                    raise InputError(path, f"no column {name!r} in the header (it has: {', '.join(header)})", line=1,
                                     field=f"vocabulary.code_names.{field}")
                cols[field] = header.index(name)
            for row in reader:
                if not any(c.strip() for c in row):
                    continue
                if len(row) != len(header):
                    raise InputError(path, f"expected {len(header)} {src.delimiter!r}-separated columns, found {len(row)}",
                                     line=reader.line_num)
                if "active_column" in cols and row[cols["active_column"]].strip() not in src.active_values:
                    drops["inactive"] += 1
                    continue
                code, name = row[cols["code_column"]].strip(), row[cols["name_column"]].strip()
                norm = normalize_code(code)
                if not norm or not name:
                    drops["empty"] += 1
                    continue
                if norm in seen:
                    drops["duplicate_code"] += 1
                    continue
                seen.add(norm)
                # patterns see the name with its qualifiers cut: "других" left in it is a
                # residual category, not the "classified elsewhere" (NEC) phrase
                name = clean_name(name, strip)
                if not name:
                    drops["empty"] += 1
                    continue
                if any(rx.search(name) for rx in drop):
                    drops["name_pattern"] += 1
                    continue
                out.append((norm, code, name))
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not {src.encoding} text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise InputError(path, f"malformed delimited text ({exc})") from None
    return out


def read_do_codes(data_dir: Path, code_system: str) -> dict[str, set[str]]:
    """DO term -> the normalised codes it cross-references in `code_system`."""
    from umls.obo_vocabulary import read_do_tsv

    prefix = code_system + ":"
    out: dict[str, set[str]] = defaultdict(set)
    for _line, (doid, _label, xref) in read_do_tsv(Path(data_dir) / DO_XREF, "the current DO's cross-references"):
        if xref.startswith(prefix):
            out[doid].add(normalize_code(xref[len(prefix):]))
    return dict(out)


def map_codes(rows: list[tuple[str, str, str]], do_codes: dict[str, set[str]], id_to_cui: dict[str, str],
              drops: Counter) -> list[tuple[str, str, str]]:
    """(cui, code as written, name) for every row whose code names exactly one concept (see the
    module docstring for the rules), sorted by code; every other row counted in `drops`."""
    by_code: dict[str, list[str]] = defaultdict(list)
    for doid in sorted(do_codes):
        for code in do_codes[doid]:
            by_code[code].append(doid)
    own = {doid: own_code(codes) for doid, codes in do_codes.items()}
    out = []
    for norm, code, name in sorted(rows):
        doids = by_code.get(norm)
        if not doids:
            drops["no_xref"] += 1
            continue
        doids = [d for d in doids if d in id_to_cui]
        if not doids:
            drops["no_concept"] += 1
            continue
        owners = [d for d in doids if own[d] == norm]
        if not owners:
            drops["do_term_spans_codes" if any(own[d] is None for d in doids) else "code_narrower_than_do_term"] += 1
            continue
        cuis = sorted({id_to_cui[d] for d in owners})
        if len(cuis) > 1:
            drops["ambiguous_code"] += 1
            continue
        out.append((cuis[0], code, name))
    return out


def source_config(entry: dict | CodeNamesConfig) -> CodeNamesConfig:
    if isinstance(entry, CodeNamesConfig):
        return entry
    try:
        return CodeNamesConfig(**entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(entry.get("path", "<code_names>"), err["msg"],
                         field="vocabulary.code_names." + ".".join(str(p) for p in err["loc"])) from None


def add_code_names(concepts: dict, id_to_cui: dict[str, str], data_dir: Path, sources: list, languages) -> dict:
    """Add every source's mapped names to `concepts` (names[lang] += (sab, tty, name): the
    first name of a concept in its language PT, later ones SY) for the sources whose language
    is in `languages`; return the report, one entry per source keyed by its SAB."""
    report: dict[str, dict] = {}
    for entry in sources:
        src = source_config(entry)
        if src.lang not in set(languages):
            continue
        if src.sab in report:
            raise InputError(src.path, f"SAB {src.sab!r} is given to two code-keyed sources", field="vocabulary.code_names.sab")
        drops: Counter = Counter()
        rows = read_code_rows(src, Path(src.path), drops)
        mapped = map_codes(rows, read_do_codes(data_dir, src.code_system), id_to_cui, drops)
        added: set[str] = set()
        for cui, _code, name in mapped:
            names = concepts[cui]["names"].setdefault(src.lang, [])
            if any(text.casefold() == name.casefold() for _sab, _tty, text in names):
                continue
            names.append((src.sab, "SY" if names else "PT", name))
            added.add(cui)
        report[src.sab] = {
            "file": Path(src.path).name, "lang": src.lang, "code_system": src.code_system,
            "rows_read": len(rows) + sum(drops[r] for r in ("inactive", "empty", "duplicate_code", "name_pattern")),
            "codes_mapped": len(mapped), "concepts_named": len(added),
            "dropped": {r: drops[r] for r in DROP_REASONS if drops[r]},
        }
    return report
