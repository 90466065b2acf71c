"""'igakuqa': IgakuQA, the Japanese national medical licensing exam (data/<year>/<exam>-<block>.jsonl).

Each question file `112-A.jsonl` has a parallel English translation `112-A_translate.jsonl`
(same problem_ids); `*_metadata.jsonl` files are ignored. The English question is the
item's pivot (lang "ja") or the item itself (lang "en": English xqa from the same exam,
other years); the passage is built in English from the translated question and the
translated correct choice(s), or is the correct choices' concept entries. See docs/sources.md.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from common.errors import InputError
from common.jsonio import read_jsonl
from schemas.records import Option, SourceItem
from tasks.sources.adapters._common import (
    ITEM_TASKS, MCQ_PASSAGE_STYLES, Record, UniqueIds, adapter, check_bool, check_choice, check_lang, make_item,
    question_with_choices, require_file, source_files,
)
from tasks.sources.adapters.mcq import answer_passage, choice_options

PROBLEM_ID = re.compile(r"^(\d{3})([A-Z])(\d+)$")
EXAM_YEAR_OFFSET = 1906  # the 112th exam was held in 2018


def _is_question_file(p: Path) -> bool:
    return not p.stem.endswith(("_translate", "_metadata"))


def _translations(path: Path) -> dict[str, tuple[int, str, list[str]]]:
    """problem_id -> (line, English question, English choices)."""
    out: dict[str, tuple[int, str, list[str]]] = {}
    for line_no, obj in read_jsonl(require_file(path, "the English translation IgakuQA ships beside each question file")):
        rec = Record(path, line_no, obj)
        pid = rec.text("problem_id")
        if pid in out:
            raise rec.fail("problem_id", f"duplicate problem_id {pid!r} (first at line {out[pid][0]})")
        out[pid] = (line_no, rec.text("problem_text_en"), rec.text_list("choices_en", required=False, allow_empty_items=True))
    return out


def _correct(rec: Record, choices: list[str], choices_en: list[str]) -> tuple[list[str], list[str], list[int]]:
    """Correct choices as (Japanese, English) texts and their indices.

    `answer` is a list of choice letters ("a".."e", more for long lists; "a or d" when either
    counts); questions without choices (calculations) have the value itself as the answer.
    """
    answer = rec.text_list("answer")
    if not choices:
        return answer, answer, []
    ja, en, idx = [], [], []
    for i, raw in enumerate(answer):
        for letter in re.split(r"\s+or\s+", unicodedata.normalize("NFKC", raw).strip().lower()):
            if not re.fullmatch(r"[a-z]", letter):
                raise rec.fail(f"answer.{i}", f"expected a choice letter (a, b, ...), got {raw!r}")
            k = ord(letter) - ord("a")
            if k >= len(choices):
                raise rec.fail(f"answer.{i}", f"choice {letter!r} does not exist (the question has {len(choices)} choices)")
            jtext = choices[k]
            # a bare letter choice (the options are in a table of the question) has no translation worth the name
            etext = unicodedata.normalize("NFKC", jtext) if len(unicodedata.normalize("NFKC", jtext)) <= 1 else choices_en[k]
            if jtext not in ja:
                ja.append(jtext)
                en.append(etext)
                idx.append(k)
    return ja, en, idx


class Question(NamedTuple):
    """One IgakuQA question with its English translation, checked."""

    rec: Record
    year: int
    block: str
    number: int
    only_text: bool
    text: str
    text_en: str
    choices: list[str]
    choices_en: list[str]
    answers: list[str]  # the correct choices' Japanese texts (or the calculated value)
    answers_en: list[str]
    correct: list[int]


def _question(rec: Record, english: dict[str, tuple[int, str, list[str]]], tfile: Path) -> Question:
    pid = rec.text("problem_id")
    m = PROBLEM_ID.match(pid)
    if not m:
        raise rec.fail("problem_id", f"expected <exam><block><number> such as '112A1', got {pid!r}")
    only_text = rec.obj.get("text_only", True)
    if not isinstance(only_text, bool):
        raise rec.fail("text_only", f"expected true or false, got {only_text!r}")
    question = rec.text("problem_text")
    choices = rec.text_list("choices", required=False, allow_empty_items=True)
    if pid not in english:
        raise rec.fail("problem_id", f"no English translation of {pid!r} in {tfile.name}")
    tline, question_en, choices_en = english[pid]
    if len(choices_en) != len(choices):
        raise InputError(tfile, f"{len(choices_en)} English choices for {len(choices)} in {rec.path.name}", line=tline, field="choices_en")
    ja_answers, en_answers, correct = _correct(rec, choices, choices_en)
    return Question(rec, int(m.group(1)) + EXAM_YEAR_OFFSET, m.group(2), int(m.group(3)), only_text, question, question_en,
                    choices, choices_en, ja_answers, en_answers, correct)


def _item(q: Question, item_id: str, task: str, passage: str, with_choices: bool, lang: str) -> SourceItem | None:
    """The item of a question in `lang` (its English is the pivot of a Japanese item, the text of
    an English one); None when passage "answer" has no answer text (a bare letter)."""
    text, pivot = q.text, q.text_en
    if with_choices and q.choices:
        letters = [chr(ord("a") + i) for i in range(len(q.choices))]
        text = question_with_choices(q.text, list(zip(letters, q.choices)))
        pivot = question_with_choices(q.text_en, list(zip(letters, q.choices_en)))
    if lang == "en":
        text, pivot = pivot, None
    where = (q.rec, q.rec.path, q.rec.line)
    if passage == "concept":
        options = _options(q.choices, q.choices_en, q.correct, q.answers, lang)
        return make_item(*where, id=item_id, task=task, lang=lang, text=text, pivot=pivot, options=options)
    if passage == "answer" and not any(a.strip() for a in q.answers_en):
        return None
    doc = answer_passage("igakuqa-doc", passage, q.text_en, q.answers_en, label="Answer: ")
    return make_item(*where, id=item_id, task=task, lang=lang, text=text, pivot=pivot, passages=[doc])


LANGS = ("ja", "en")


def _years(path: Path, years) -> frozenset[int] | None:
    if years is None:
        return None
    if not isinstance(years, list) or not years or not all(isinstance(y, int) and not isinstance(y, bool) for y in years):
        raise InputError(path, f"expected a non-empty list of exam years (e.g. [2018, 2019]), got {years!r}", field="options.years")
    return frozenset(years)


def _share(path: Path, share) -> tuple[float, float] | None:
    if share is None:
        return None
    ok = (isinstance(share, list) and len(share) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in share)
          and 0 <= share[0] < share[1] <= 1)
    if not ok:
        raise InputError(path, f"expected [from, to] with 0 <= from < to <= 1 (e.g. [0.0, 0.5]), got {share!r}", field="options.share")
    return float(share[0]), float(share[1])


def question_hash(year: int, block: str, number: int) -> float:
    """Where a question falls in [0, 1): sha256 of its key, the same in both languages, so that
    sources taking disjoint `share`s never read one question twice, and each takes a random
    sample of every year and block (the seed is the key: no configuration can move it)."""
    digest = hashlib.sha256(f"igakuqa:{year}-{block}-{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _question_files(path: Path, years: frozenset[int] | None) -> list[Path]:
    """The question files under `path`, in the chosen years (a file's exam number gives its year)."""
    files = source_files(path, "*.jsonl", "IgakuQA question files (<exam>-<block>.jsonl)", exclude=lambda p: not _is_question_file(p), recursive=True)
    if years is None:
        return files
    exam = re.compile(r"^(\d{3})-")
    return [f for f in files if (m := exam.match(f.name)) and int(m.group(1)) + EXAM_YEAR_OFFSET in years]


def _options(choices: list[str], choices_en: list[str], correct: list[int], answers: list[str], lang: str) -> list[Option]:
    """passage "concept": the choices as options (Japanese with their English pivots, or the
    English alone for lang "en"). A choice that is a bare letter, or empty (the options are
    laid out in a table of the question), is that letter in both languages; an answer
    without choices (a calculated value) is its own option, which names no concept."""
    if not choices:
        return [Option(text=a, pivot=a if lang == "ja" else None, correct=True) for a in answers]
    letters = [c if len(unicodedata.normalize("NFKC", c).strip()) > 1 else unicodedata.normalize("NFKC", c).strip() or chr(ord("a") + i)
               for i, c in enumerate(choices)]
    english = [e if len(j) > 1 else j for j, e in zip(letters, choices_en)]
    return choice_options(letters, correct, english) if lang == "ja" else choice_options(english, correct)


@adapter(selection=("years", "share"))
def read_igakuqa(path: Path, languages: set[str], *, task: str = "xqa", passage: str = "qa", with_choices: bool = False,
                 text_only: bool = False, lang: str = "ja", **selection) -> Iterator[SourceItem]:
    """IgakuQA -> Japanese SourceItems with English pivots (id `igakuqa-<year>-<block>-<n>`), or,
    with lang "en", English items from IgakuQA's translations (id `igakuqa-en-<year>-<block>-<n>`).

    `path`: IgakuQA's data folder (every year below it), one year's folder, or one question file.
    Options: task ("xqa" | "evidence"); passage ("qa": English question + "Answer: " +
    correct choice(s), the default; "answer": the English correct choice(s) only; "concept":
    no passage text, the choices as options, the correct ones' concept entries become the gold
    passages at grounding); with_choices (append the lettered choices to the question and, in
    English, to the pivot); text_only (skip questions that need a figure); lang ("ja": the
    Japanese question, its translation as pivot; "en": the translation as the question);
    years (only these exams' years, e.g. [2018, 2019]); share ([from, to]: only the questions
    whose `question_hash` falls in [from, to), e.g. [0.0, 0.5]). Two sources of one IgakuQA
    with disjoint years or shares never ask one question in both languages.
    """
    check_choice(path, "task", task, ITEM_TASKS)
    check_choice(path, "passage", passage, MCQ_PASSAGE_STYLES)
    check_bool(path, "with_choices", with_choices)
    check_bool(path, "text_only", text_only)
    check_choice(path, "lang", lang, LANGS)
    check_lang(path, lang, languages)
    wanted = _years(path, selection.get("years"))
    part = _share(path, selection.get("share"))
    if path.is_file() and not _is_question_file(path):
        raise InputError(path, "expected an IgakuQA question file (<exam>-<block>.jsonl), not its translation or metadata")
    ids = UniqueIds()
    for qfile in _question_files(path, wanted):
        tfile = qfile.with_name(f"{qfile.stem}_translate.jsonl")
        english = _translations(tfile)
        for line_no, obj in read_jsonl(qfile):
            q = _question(Record(qfile, line_no, obj), english, tfile)
            if text_only and not q.only_text:
                continue
            if part and not part[0] <= question_hash(q.year, q.block, q.number) < part[1]:
                continue
            item_id = f"igakuqa-{'en-' if lang == 'en' else ''}{q.year}-{q.block}-{q.number}"
            ids.claim(item_id, qfile, line_no, "problem_id")
            item = _item(q, item_id, task, passage, with_choices, lang)
            if item is not None:
                yield item
