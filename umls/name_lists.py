"""Concept names beyond the ontologies, by configuration: CUI-keyed name lists and glossaries.

    add_name_lists(concepts, id_to_cui, name_lists, glossaries, languages, morphology) -> report

`[[vocabulary.name_lists]]` (schemas.config.NameListConfig) are names keyed by CUI: a corpus's
mentions with their CUIs (QUAERO's brat notes, NEREL-BIO's tsv, RuCCoN's BioSyn file), a
terminology table (wikidata-medical's csv), or Disease Ontology's translation tables (keyed by
DOID: a DOID reaches its concept through the open vocabulary's own term map, DO's xrefs).
`[[vocabulary.glossaries]]` (GlossaryConfig) are term translations without ids (MeSpEn, MEDUTX):
a term reaches a concept only through an exact English name of exactly one concept.

Rules, in order (every row read is counted, every row dropped is counted by its reason):

1. Name lists, in config order. A row needs one well-formed CUI (`no_cui`: none or
   "CUILESS"; `malformed_cui`: not C+7 digits; `several_cuis`: a mention linked to two concepts
   names neither for sure), a name with a letter in it (`no_name`), and, for a concept the
   ontologies do not have, a label its config maps to a semantic type (`unmapped_label`: RuCCoN's
   Severity, QUAERO's GEOG when not mapped). A DOID without a concept is `no_concept`, a
   translation of another predicate or status `other_predicate` / `other_status`.
2. Mentions (`text = "mentions"`: names as running text has them) are normalised before they
   are compared: case folded, and in a language whose registry morphology is pymorphy3 every
   word reduced to its dictionary lemma (as the grounder's word matcher reduces them), so that
   "сахарным диабетом" and "сахарный диабет" are one name. A name's written form is the
   variant whose words are most often their own lemma (the nominative), then the most frequent,
   then the lower-case one; sentence-initial capitals are lowered unless the name has another
   capital ("Traitement" -> "traitement", "maladie de Crohn" kept); with pymorphy3 the chosen
   form's head is put in the nominative ("аспирина" -> "аспирин"), the grounder compares lemmas
   anyway, but a confusion-set query in Russian is the name as written.
3. A normalised name that one source links to two or more concepts stays only with a concept
   that has at least `majority` of its rows (default 1.0: never; mentions in running text are
   annotated by people, and 213 of 216 "кровь" are blood), the other rows `minority_cui`;
   otherwise it is dropped for all of them (`ambiguous_name`), not guessed. Repeats of a
   (concept, name) are `duplicate`.
4. A new concept (a CUI the ontologies lack) is kept only when some source gives it an English
   name: the release states every concept by its English entry. Its names in other languages are
   otherwise dropped (`no_english_name`). Its semantic type is its first source's mapping of its
   label; it has no parents (ARCHITECTURE.md, "Open vocabulary beyond DO and HPO": why confusion
   sets keep to concepts with a hierarchy).
5. A description (`description_column`) becomes the definition of a concept that has none,
   under the source's SAB (concepts.parquet's `definition_source` says so).
6. Glossaries, after every name list: the English side, normalised (case, spacing), must be a
   name of exactly one concept (`no_english_match`, `ambiguous_english`); a term equal to its
   English side is `untranslated`; a term that reaches several concepts through different
   English names is dropped for all (`ambiguous_term`); repeats are `duplicate`.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import ValidationError

from common.errors import InputError
from schemas.config import GlossaryConfig, NameListConfig, names_held_out_split
from umls import derive_sample as ds
from umls.name_readers import (NameRow, PairRow, file_lines, read_biosyn, read_brat, read_delimited, read_glossary, read_utx,
                               table_rows, zip_member_lines)

CUI = re.compile(r"C\d{7}")
NO_CUI = {"", "CUILESS", "CUI-LESS", "NIL", "NONE"}
LIST_DROPS = ("no_cui", "malformed_cui", "several_cuis", "no_name", "other_predicate", "other_status", "no_concept",
              "unmapped_label", "minority_cui", "ambiguous_name", "duplicate", "no_english_name")
GLOSSARY_DROPS = ("no_name", "untranslated", "no_english_match", "ambiguous_english", "ambiguous_term", "duplicate")
_LETTER = re.compile(r"[^\W\d_]")


# ------------------------------------------------------------------------------ normalising


class Morphology:
    """A language's word reduction under the registry's morphology. "pymorphy3" (Russian):
    `lemma` is a folded word's dictionary lemma (the grounder's rule, tasks/grounding/
    stemming.lemma, "ё" folded to "е"), and `nominative` puts a phrase's head into the
    nominative; otherwise both leave words as they are."""

    def __init__(self, morphology: str | None, lang: str):
        self.analyzer = None
        if morphology == "pymorphy3":
            import pymorphy3

            try:
                self.analyzer = pymorphy3.MorphAnalyzer(lang=lang)
            except (ValueError, ImportError) as exc:
                raise InputError("languages.toml", f"morphology 'pymorphy3' for {lang!r}: {exc}",
                                 field=f"languages.{lang}.morphology") from None
        self.memo: dict[str, str] = {}

    def lemma(self, word: str) -> str:
        if self.analyzer is None:
            return word
        got = self.memo.get(word)
        if got is None:
            parses = self.analyzer.parse(word)
            got = self.memo[word] = parses[0].normal_form.replace("ё", "е") if parses else word
        return got

    def nominative(self, phrase: str) -> str:
        """The phrase with its words up to and including the first noun (the head of a Russian
        noun phrase, after its adjectives) in the nominative, agreement kept; the words after it
        (genitive modifiers: "рака молочной железы") as they are: "острой почечной
        недостаточности" -> "острой" .. -> "острая почечная недостаточность"."""
        if self.analyzer is None:
            return phrase
        words = phrase.split(" ")
        out = []
        for i, word in enumerate(words):
            parses = self.analyzer.parse(word) if word.isalpha() else []
            tag = parses[0].tag if parses else None
            if tag is None or tag.case is None or tag.case == "nomn":
                out.append(word)
            else:
                inflected = parses[0].inflect({"nomn"})
                word_out = inflected.word if inflected else word
                if "ё" not in word.casefold():  # pymorphy3 writes "тяжёлая"; the text wrote е
                    word_out = word_out.replace("ё", "е")
                out.append(_same_case(word, word_out))
            if tag is not None and "NOUN" in tag:
                return " ".join(out + words[i + 1:])
        return phrase  # no noun: leave an adjective or a fragment as it was written


def _same_case(original: str, word: str) -> str:
    if original.isupper():
        return word.upper()
    return word[0].upper() + word[1:] if original[:1].isupper() else word


def lemmatizer(morphology: str | None, lang: str) -> Callable[[str], str]:
    """`Morphology(morphology, lang).lemma`."""
    return Morphology(morphology, lang).lemma


_WORD = re.compile(r"\w+|[^\w\s]")


def fold(text: str) -> str:
    """NFKC, case folded, spacing collapsed (common.text.normalize's rule)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def mention_key(text: str, lemma: Callable[[str], str]) -> str:
    """The normalised form two mentions of one name share: folded, each word its lemma."""
    return " ".join(lemma(w) if w[0].isalnum() else w for w in _WORD.findall(fold(text).replace("ё", "е")))


def written_form(text: str) -> str:
    """A mention with a sentence-initial capital lowered, unless another capital says the case
    matters (an acronym, a proper name)."""
    text = " ".join(text.split())
    if text[:1].isupper() and not any(c.isupper() for c in text[1:]):
        return text[0].lower() + text[1:]
    return text


def best_form(forms: Counter, lemma: Callable[[str], str]) -> str:
    """The written form of a group of variants: most words in their lemma form, then most
    frequent, then lower case, then the first in code-point order."""
    def rank(form: str):
        words = [w for w in _WORD.findall(fold(form)) if w[0].isalnum()]
        return (-sum(lemma(w) == w for w in words), -forms[form], form != form.lower(), form)

    return min(forms, key=rank)


# ------------------------------------------------------------------------------ files


def list_files(src: NameListConfig | GlossaryConfig) -> list[Path]:
    """The files a block reads, sorted: its file, or its folder's `include` matches. A file
    whose path below the block's names a held-out split is refused."""
    path = Path(src.path)
    if path.is_dir():
        include = getattr(src, "include", []) or ["*"]
        files = sorted({f for pattern in include for f in path.glob(pattern) if f.is_file()})
        for f in files:
            if names_held_out_split(f.relative_to(path).as_posix()):
                raise InputError(f, "names a held-out split (test/dev): grounding is measured on it, so only train files may "
                                    "feed the vocabulary", field="vocabulary.name_lists.include")
        if not files:
            raise InputError(path, f"no file matches {include} (vocabulary name list)", field="vocabulary.name_lists.include")
        return files
    if not path.is_file():
        raise InputError(path, "file not found (a vocabulary name list or glossary)", field="vocabulary.name_lists.path")
    return [path]


def read_rows(src: NameListConfig, path: Path) -> Iterable[NameRow]:
    if src.format == "do-translations":
        return _do_rows(src, path)
    lines = file_lines(path, "a vocabulary name list")
    if src.format == "brat":
        return read_brat(lines, path)
    if src.format == "biosyn":
        return read_biosyn(lines, path)
    return read_delimited(lines, path, src.delimiter, src.name_column, src.cui_column, src.label_column, src.description_column)


def _do_rows(src: NameListConfig, path: Path) -> Iterable[NameRow]:
    rows = table_rows(file_lines(path, "a Disease Ontology translation table"), path, "\t", "tab-separated",
                      "tab-separated text")
    _, header = next(rows)
    for col in ("source_id", "predicate", "translation_text", "status"):
        if col not in header:
            raise InputError(path, f"no column {col!r} in the header (it has: {', '.join(header)})", line=1)
    ix = {c: header.index(c) for c in ("source_id", "predicate", "translation_text", "status")}
    for line_no, row in rows:
        yield NameRow(line_no, row[ix["translation_text"]], (row[ix["source_id"]],),
                      f"{row[ix['predicate']]}|{row[ix['status']]}")


def read_pairs(src: GlossaryConfig, path: Path) -> Iterable[PairRow]:
    if src.member is not None:
        lines = zip_member_lines(path, src.member)
    else:
        lines = file_lines(path, "a glossary")
    if src.format == "glossary":
        return read_glossary(lines, path, src.english)
    return read_utx(lines, path, src.english)


# ------------------------------------------------------------------------------ the rules


def _config(entry, model, field: str):
    if isinstance(entry, model):
        return entry
    try:
        return model(**entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(entry.get("path", f"<{field}>"), err["msg"].removeprefix("Value error, "),
                         field=f"vocabulary.{field}." + ".".join(str(p) for p in err["loc"])) from None


class _ListNames:
    """One name list's names: (cui, key) -> written variants, its rows' labels and descriptions."""

    def __init__(self):
        self.forms: dict[tuple[str, str], Counter] = defaultdict(Counter)
        self.first_line: dict[tuple[str, str], tuple] = {}
        self.labels: dict[str, str] = {}
        self.descriptions: dict[str, str] = {}


def _collect_list(src: NameListConfig, concepts: dict, id_to_cui: dict[str, str], lemma, drops: Counter) -> tuple[_ListNames, int]:
    got = _ListNames()
    rows_read = 0
    mentions = src.text == "mentions"
    for path in list_files(src):
        for row in read_rows(src, path):
            rows_read += 1
            if src.format == "do-translations":
                predicate, status = row.label.split("|", 1)
                if predicate not in src.predicates:
                    drops["other_predicate"] += 1
                    continue
                if src.statuses and status not in src.statuses:
                    drops["other_status"] += 1
                    continue
                cui = id_to_cui.get(row.cuis[0]) if row.cuis else None
                if cui is None:
                    drops["no_concept"] += 1
                    continue
            else:
                cuis = [c for c in row.cuis if c.upper() not in NO_CUI]
                if not cuis:
                    drops["no_cui"] += 1
                    continue
                if len(set(cuis)) > 1:
                    drops["several_cuis"] += 1
                    continue
                cui = cuis[0]
                if not CUI.fullmatch(cui):
                    drops["malformed_cui"] += 1
                    continue
            name = " ".join(row.name.split())
            if not _LETTER.search(name):
                drops["no_name"] += 1
                continue
            if cui not in concepts and cui not in got.labels:
                if row.label not in src.types:
                    drops["unmapped_label"] += 1
                    continue
            if row.label in src.types:
                got.labels.setdefault(cui, row.label)
            if row.description.strip():
                got.descriptions.setdefault(cui, " ".join(row.description.split()))
            form = written_form(name) if mentions else name
            key = mention_key(name, lemma) if mentions else fold(name)
            got.forms[(cui, key)][form] += 1
            got.first_line.setdefault((cui, key), (str(path), row.line))
    return got, rows_read


def _resolve_ambiguous(got: _ListNames, majority: float, drops: Counter) -> None:
    """A normalised name one source links to several concepts: it stays with the concept that
    has at least `majority` of its rows ("кровь": blood 213 times, hematologic disease 3), the
    other rows `minority_cui`; without such a concept it names none of them (`ambiguous_name`).
    The rows of a kept (concept, name) beyond its first are `duplicate`."""
    rows_of: dict[str, dict[str, int]] = defaultdict(dict)
    for (cui, key), forms in got.forms.items():
        rows_of[key][cui] = sum(forms.values())
    for key, by_cui in sorted(rows_of.items()):
        if len(by_cui) > 1:
            total = sum(by_cui.values())
            ranked = sorted(by_cui.items(), key=lambda kv: (-kv[1], kv[0]))
            top, top_rows = ranked[0]
            clear = top_rows >= majority * total and top_rows > ranked[1][1]
            for cui, n in ranked:
                if clear and cui == top:
                    continue
                drops["minority_cui" if clear else "ambiguous_name"] += n
                del got.forms[(cui, key)]
        for cui, n in by_cui.items():
            if (cui, key) in got.forms:
                drops["duplicate"] += n - 1


def add_name_lists(concepts: dict, id_to_cui: dict[str, str], name_lists: Iterable, glossaries: Iterable,
                   languages: Iterable[str], morphology: dict[str, str | None] | None = None) -> dict:
    """Add the name lists' and glossaries' names (for the build's `languages`) to `concepts`
    (derive_sample.collect's shape; new concepts created, see the module docstring); return
    the report, one entry per source keyed by its SAB."""
    languages = set(languages)
    morphology = morphology or {}
    report: dict[str, dict] = {}
    pending: list[tuple[NameListConfig, _ListNames, Counter, int, Callable]] = []
    new: dict[str, dict] = {}  # CUI -> concept record for concepts the ontologies lack
    for entry in name_lists:
        src = _config(entry, NameListConfig, "name_lists")
        if src.lang not in languages:
            continue
        drops: Counter = Counter()
        morph = Morphology(morphology.get(src.lang) if src.text == "mentions" else None, src.lang)
        got, rows_read = _collect_list(src, {**concepts, **new}, id_to_cui, morph.lemma, drops)
        _resolve_ambiguous(got, src.majority, drops)
        for cui in sorted({c for c, _ in got.forms}):
            if cui not in concepts and cui not in new:
                c = ds.new_concept()
                c["sty"] = src.types[got.labels[cui]]
                c["src"].add(src.sab)
                new[cui] = c
        pending.append((src, got, drops, rows_read, morph))

    # a new concept without an English name anywhere has no entry to state: dropped
    english = {cui for src, got, *_ in pending if src.lang == "en" for cui, _ in got.forms}
    kept_new = {cui for cui in new if cui in english}
    for src, got, drops, rows_read, morph in pending:
        added: set[str] = set()
        names_added = 0
        defined = 0
        for (cui, key), forms in sorted(got.forms.items()):
            # the group's other rows are counted as duplicates already: this is its one name
            if cui not in concepts and cui not in kept_new:
                drops["no_english_name"] += 1
                continue
            c = concepts.setdefault(cui, new[cui]) if cui not in concepts else concepts[cui]
            # a term list's most frequent spelling, the first read of equals (file order)
            name = morph.nominative(best_form(forms, morph.lemma)) if src.text == "mentions" else max(forms, key=forms.get)
            names = c["names"][src.lang]
            if any(fold(text) == fold(name) for _sab, _tty, text in names):
                drops["duplicate"] += 1
                continue
            names.append((src.sab, "SY" if names else "PT", name))
            names_added += 1
            added.add(cui)
        for cui, text in sorted(got.descriptions.items()):
            if cui in concepts and not concepts[cui]["defs"]:
                concepts[cui]["defs"][src.sab] = text
                defined += 1
        created = sum(1 for cui in added if src.sab in concepts[cui]["src"] and len(concepts[cui]["src"]) == 1)
        report[src.sab] = {
            "files": len(list_files(src)), "lang": src.lang, "kind": "name_list", "format": src.format,
            "rows_read": rows_read, "names_added": names_added, "concepts_named": len(added), "concepts_created": created,
            "definitions_given": defined,
            "dropped": {r: drops[r] for r in LIST_DROPS if drops[r]},
        }
    for entry in glossaries:
        src = _config(entry, GlossaryConfig, "glossaries")
        if src.lang not in languages:
            continue
        report[src.sab] = _add_glossary(src, concepts)
    return report


def english_index(concepts: dict) -> dict[str, set[str]]:
    """Folded English name -> the concepts it names."""
    out: dict[str, set[str]] = defaultdict(set)
    for cui, c in concepts.items():
        for _sab, _tty, text in c["names"].get("en", ()):
            out[fold(text)].add(cui)
    return out


def _add_glossary(src: GlossaryConfig, concepts: dict) -> dict:
    drops: Counter = Counter()
    index = english_index(concepts)
    rows_read = 0
    found: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))  # folded term -> cui -> forms
    for path in list_files(src):
        for row in read_pairs(src, path):
            rows_read += 1
            english, term = " ".join(row.english.split()), " ".join(row.term.split())
            if not _LETTER.search(term) or not english:
                drops["no_name"] += 1
                continue
            if fold(term) == fold(english):
                drops["untranslated"] += 1
                continue
            cuis = index.get(fold(english))
            if not cuis:
                drops["no_english_match"] += 1
                continue
            if len(cuis) > 1:
                drops["ambiguous_english"] += 1
                continue
            found[fold(term)][next(iter(cuis))][term] += 1
    added: set[str] = set()
    names_added = 0
    for key in sorted(found):
        by_cui = found[key]
        if len(by_cui) > 1:
            drops["ambiguous_term"] += sum(sum(f.values()) for f in by_cui.values())
            continue
        cui, forms = next(iter(by_cui.items()))
        name = max(forms, key=forms.get)
        names = concepts[cui]["names"][src.lang]
        if any(fold(text) == key for _sab, _tty, text in names):
            drops["duplicate"] += sum(forms.values())
            continue
        drops["duplicate"] += sum(forms.values()) - 1
        names.append((src.sab, "SY" if names else "PT", name))
        names_added += 1
        added.add(cui)
    return {"files": 1, "lang": src.lang, "kind": "glossary", "format": src.format, "rows_read": rows_read,
            "names_added": names_added, "concepts_named": len(added), "concepts_created": 0, "definitions_given": 0,
            "dropped": {r: drops[r] for r in GLOSSARY_DROPS if drops[r]}}
