"""'casimedicos': CasiMedicos (Antidote CasiMedicos-Arg), Spanish resident-exam (MIR) clinical cases
with five options, the correct answer and the explanation doctors wrote, in the Spanish original
and in translation, one folder per language (`EN/`, `ES/`, `FR/`), each with the same split files
(`train.tsv`, `dev.tsv`, `test.tsv`) holding the same cases in the same order.

A file is one token a line, `TOKEN LABEL [QUALITY ...]` (LABEL `O`, `B-<type>` or `I-<type>`, the
argument annotation), a blank line between sentences. Fields are separated by any run of spaces
or tabs (the English and Spanish files by one space, another language's files by tabs, with a
fourth column, a correction flag, usually empty); columns after LABEL are not read. A BOM, CRLF
or CR line ends change nothing. A case is:

    QUESTION TYPE: <specialty>            the case starts here (English in every language)
    CLINICAL CASE:                        an all-capitals heading ending in ':' (optional)
    <case sentences, then the question>   the query
    1- <option> ... 5- <option>           options numbered from 1 ("2 -", "5-Text" too)
    CORRECT ANSWER: 3                     capitals, ':', the number ("BONNE RÉPONSE : 3")
    <explanation sentences>               until the next case

Texts are rebuilt by joining tokens (and sentences) with single spaces. Cases pair across
languages by position within a split; a case whose languages disagree on the answer or on the
number of options, or that lacks an answer or its options in a language, is dropped (and so is
an evidence case without an English explanation): `read_casimedicos_cases` returns the drops
beside the items, and the sources stage counts them in build_report.json. See docs/sources.md.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.errors import InputError
from schemas.drops import Drop
from schemas.records import Option, SourceItem, SourceTranslation
from tasks.sources.adapters._common import ITEM_TASKS, adapter, check_choice, check_lang, content_passage, load_text, make_item

SPLITS = ("train", "dev", "test")
PASSAGES = ("explanation", "concept")
STATUSES = ("human-translated", "machine-translated", "machine-translated and verified")
DEFAULT_FILES = {"en": "EN", "es": "ES", "fr": "FR"}

LABEL = re.compile(r"^(O|[BI]-[A-Za-z]+)$")
FIELD_SEPARATOR = re.compile(r"[ \t]+")  # what publishers ship: one space, or tabs (and empty columns)
LINE_END = re.compile(r"\r\n|\r|\n")  # universal newlines, as Python's text mode reads them
OPTION = re.compile(r"^([0-9]{1,3})\s*-\s*(.*)$", re.S)
# "CORRECT ANSWER: 3", "CORRECT ANSWER : 3", "BONNE RÉPONSE : 3": a capitalised heading, ':', the number
ANSWER = re.compile(r"^(?P<head>[^\W\d_][^\d:]*?)\s*:\s*(?P<n>[0-9]{1,3})\.?$")
HEADING = re.compile(r"^[^\W\d_][^\d:]*:$")  # "CLINICAL CASE:", "CAS CLINIQUE :"


@dataclass(frozen=True)
class Sentence:
    line: int  # where its first token is
    text: str  # its tokens joined by single spaces


@dataclass
class Case:
    """One case as one language's file has it. `answer` None: no answer line after the options."""

    line: int
    query: str = ""
    options: list[str] = field(default_factory=list)
    answer: int | None = None
    explanation: str = ""


# ------------------------------------------------------------------------------- one file


def token_fields(raw: str) -> list[str]:
    """A token line's fields: split on any run of spaces or tabs, none empty (a line of
    separators only, an empty trailing column: nothing)."""
    return [f for f in FIELD_SEPARATOR.split(raw) if f]


def read_sentences(path: Path, text: str) -> list[Sentence]:
    """Token-per-line text -> sentences. A line of spaces and tabs only ends a sentence; any
    other line is `TOKEN LABEL [...]`, its columns after LABEL not read. A line starting with
    a separator (no token: field 'token'), without a label or whose second field is not one
    (field 'label') is one located InputError."""
    sentences: list[Sentence] = []
    tokens: list[str] = []
    start = 0
    for n, raw in enumerate(LINE_END.split(text), start=1):
        fields = token_fields(raw)
        if not fields:
            if tokens:
                sentences.append(Sentence(start, " ".join(tokens)))
                tokens = []
            continue
        if raw[0] in " \t":  # an empty first column: the label would be read as the token
            raise InputError(path, f"expected the token first, found {raw[0]!r} before {fields[0]!r} (an empty token column)",
                             line=n, field="token")
        if len(fields) == 1:
            raise InputError(path, f"expected a token and its label (O, B-<type> or I-<type>) separated by spaces or a tab, "
                             f"found only {fields[0]!r}", line=n, field="label")
        if not LABEL.match(fields[1]):
            raise InputError(path, f"expected O, B-<type> or I-<type> after the token, got {fields[1]!r}", line=n, field="label")
        if not tokens:
            start = n
        tokens.append(fields[0])
    if tokens:
        sentences.append(Sentence(start, " ".join(tokens)))
    return sentences


def is_case_start(s: Sentence) -> bool:
    return re.match(r"^QUESTION TYPE\s?:", s.text) is not None


def split_cases(path: Path, sentences: list[Sentence]) -> list[Case]:
    """Sentences -> cases (`Case`); text before the first `QUESTION TYPE:` is an error."""
    if sentences and not is_case_start(sentences[0]):
        raise InputError(path, f"expected a case to start with 'QUESTION TYPE:', found {sentences[0].text[:40]!r}",
                         line=sentences[0].line, field="QUESTION TYPE")
    cases, block = [], []
    for s in sentences:
        if is_case_start(s) and block:
            cases.append(parse_case(block))
            block = []
        block.append(s)
    if block:
        cases.append(parse_case(block))
    return cases


def parse_case(block: list[Sentence]) -> Case:
    """One case's sentences (the first is its `QUESTION TYPE:` line) -> its parts."""
    case = Case(line=block[0].line)
    rest = block[1:]
    if rest and HEADING.match(rest[0].text) and rest[0].text == rest[0].text.upper():
        rest = rest[1:]  # "CLINICAL CASE:"
    first = next((i for i, s in enumerate(rest) if (m := OPTION.match(s.text)) and m.group(1) == "1"), None)
    if first is None:
        case.query = " ".join(s.text for s in rest)
        return case
    case.query = " ".join(s.text for s in rest[:first])
    i = first
    while i < len(rest):
        text = rest[i].text
        m = OPTION.match(text)
        a = ANSWER.match(text)
        if m and int(m.group(1)) == len(case.options) + 1:
            case.options.append(m.group(2).strip())
        elif a and a.group("head") == a.group("head").upper():
            case.answer = int(a.group("n"))
            case.explanation = " ".join(s.text for s in rest[i + 1:])
            break
        else:  # an option running over more than one sentence
            case.options[-1] = f"{case.options[-1]} {text}".strip()
        i += 1
    return case


def read_case_file(path: Path) -> list[Case]:
    return split_cases(path, read_sentences(path, load_text(path)))


# ------------------------------------------------------------------------------- pairing


def disagreement(cases: dict[str, Case], *, need_explanation: str | None) -> tuple[str, str] | None:
    """(drop code, detail) when one case's languages cannot be paired, else None. Pure.
    `need_explanation`: the language whose explanation is the gold passage (evidence), if any."""
    langs = sorted(cases)

    def listing(value) -> str:
        return ", ".join(f"{l} {value(cases[l])}" for l in langs)

    if len({len(c.options) for c in cases.values()}) > 1 or any(not c.options for c in cases.values()):
        return "options-disagree", listing(lambda c: len(c.options))
    if len({c.answer for c in cases.values()}) > 1 or any(c.answer is None for c in cases.values()):
        return "answer-disagrees", listing(lambda c: "none" if c.answer is None else c.answer)
    if not 1 <= cases[langs[0]].answer <= len(cases[langs[0]].options):
        return "answer-not-an-option", f"{cases[langs[0]].answer} of {len(cases[langs[0]].options)} options"
    if any(not c.query for c in cases.values()):
        return "missing-text", "no case text in " + ", ".join(l for l in langs if not cases[l].query)
    if need_explanation and not cases[need_explanation].explanation:
        return "missing-text", f"no explanation in {need_explanation}"
    return None


@dataclass
class CasiMedicosRead:
    items: list[SourceItem]
    drops: list[Drop]


def _check_options(path: Path, files: Any, native: str, status: Any) -> tuple[dict[str, str], dict[str, str]]:
    if not isinstance(files, dict) or not files or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in files.items()):
        raise InputError(path, f"expected a table of language code = folder, e.g. {{ en = \"EN\", es = \"ES\" }}, got {files!r}", field="options.files")
    for need in ("en", native):
        if need not in files:
            raise InputError(path, f"no folder for {need!r} ({'the pivot and the explanations' if need == 'en' else 'the native language'})", field="options.files")
    if not isinstance(status, dict):
        raise InputError(path, f"expected a table of language code = translation status, got {status!r}", field="options.status")
    for lang, st in status.items():
        if lang not in files or lang in ("en", native):
            raise InputError(path, f"{lang!r} is not a translation this source reads (translations: "
                             f"{', '.join(sorted(set(files) - {'en', native})) or 'none'})", field=f"options.status.{lang}")
        check_choice(path, f"status.{lang}", st, STATUSES)
    return files, status


@adapter
def read_casimedicos_cases(path: Path, languages: set[str], *, task: str = "evidence", passage: str = "explanation",
                           files: dict[str, str] | None = None, native: str = "es",
                           status: dict[str, str] | None = None) -> CasiMedicosRead:
    """Every split's cases, paired across languages: the items, and the drops (stage "sources")."""
    check_choice(path, "task", task, ITEM_TASKS)
    check_choice(path, "passage", passage, PASSAGES)
    files, status = _check_options(path, DEFAULT_FILES if files is None else files, native, {} if status is None else status)
    check_lang(path, native, languages, field="options.native")
    check_lang(path, "en", languages)
    if not path.is_dir():
        raise InputError(path, "not found (expected the CasiMedicos folder, with one folder per language)")
    # translations into languages the build does not have are not read
    read = sorted(l for l in files if l in languages)
    folders = {l: path / files[l] for l in read}
    for l, folder in folders.items():
        if not folder.is_dir():
            raise InputError(folder, f"not found (the {l!r} folder named in options.files)")
    splits = [s for s in SPLITS if (folders["en"] / f"{s}.tsv").is_file()]
    if not splits:
        raise InputError(folders["en"], f"no split files ({', '.join(f'{s}.tsv' for s in SPLITS)})")
    prefix = "casimedicos-" if task == "evidence" else f"casimedicos-{task}-"
    items, drops = [], []
    for split in splits:
        by_lang = {l: read_case_file(folders[l] / f"{split}.tsv") for l in read}
        n = len(by_lang["en"])
        for l, cases in by_lang.items():
            if len(cases) != n:
                raise InputError(folders[l] / f"{split}.tsv", f"{len(cases)} cases, but {files['en']}/{split}.tsv has {n}: "
                                 "cases pair by position", field="QUESTION TYPE")
        for i in range(n):
            item_id = f"{prefix}{split}-{i + 1:03d}"
            cases = {l: by_lang[l][i] for l in read}
            why = disagreement(cases, need_explanation="en" if passage == "explanation" else None)
            if why is not None:
                drops.append(Drop(stage="sources", item_id=item_id, code=why[0], detail=why[1]))
                continue
            items.append(_item(item_id, task, passage, native, cases, status, folders[native] / f"{split}.tsv"))
    return CasiMedicosRead(items, drops)


def _item(item_id: str, task: str, passage: str, native: str, cases: dict[str, Case], status: dict[str, str],
          file: Path) -> SourceItem:
    own, en = cases[native], cases["en"]
    fields: dict[str, Any] = {"id": item_id, "task": task, "lang": native, "text": own.query,
                              "pivot": None if native == "en" else en.query,
                              "translations": [SourceTranslation(lang=l, text=c.query, status=status.get(l, "human-translated"))
                                               for l, c in sorted(cases.items()) if l not in ("en", native)]}
    # the options on every item: an exam item's gold (passage "concept"), and what a case asks
    # about (a source's key_concepts = "answer": its correct options' concepts)
    fields["options"] = [Option(text=t, pivot=None if native == "en" else en.options[k], correct=k + 1 == own.answer)
                         for k, t in enumerate(own.options) if t]
    if passage == "explanation":
        fields["passages"] = [content_passage("casimedicos-exp", en.explanation)]
    return make_item(None, file, own.line, **fields)


@adapter
def read_casimedicos(path: Path, languages: set[str], *, task: str = "evidence", passage: str = "explanation",
                     files: dict[str, str] | None = None, native: str = "es",
                     status: dict[str, str] | None = None) -> Iterator[SourceItem]:
    """CasiMedicos -> one SourceItem per case (id `casimedicos-<split>-<nnn>`, task xqa:
    `casimedicos-xqa-<split>-<nnn>`), in the native language (`native`, default "es"), its
    English text the pivot, its other languages' texts the source's translations of it.

    Options: task ("evidence" | "xqa"); passage ("explanation": the English explanation is
    the gold passage, id `casimedicos-exp-<hash>`; "concept": the correct options' concept
    entries). Every item carries its options, native with their English as pivots (what a
    case asks about: the source entry's `key_concepts = "answer"`); files (language code -> folder under `path`; default
    {en = "EN", es = "ES", fr = "FR"}; a language the build lacks is not read); native (the
    language the cases were written in); status (language -> translation status of its
    texts; default "human-translated"). Pairing drops: `read_casimedicos_cases`.
    """
    yield from read_casimedicos_cases(path, languages, task=task, passage=passage, files=files, native=native, status=status).items
