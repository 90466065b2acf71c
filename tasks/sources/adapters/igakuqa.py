"""'igakuqa': IgakuQA, the Japanese national medical licensing exam (data/<year>/<exam>-<block>.jsonl).

Each question file `112-A.jsonl` has a parallel English translation `112-A_translate.jsonl`
(same problem_ids); `*_metadata.jsonl` files are ignored. The English question is the
item's pivot; the passage is built in English from the translated question and the
translated correct choice(s). See docs/sources.md.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

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


@adapter
def read_igakuqa(path: Path, languages: set[str], *, task: str = "xqa", passage: str = "qa",
                 with_choices: bool = False, text_only: bool = False) -> Iterator[SourceItem]:
    """IgakuQA -> Japanese SourceItems with English pivots (id `igakuqa-<year>-<block>-<n>`).

    `path`: IgakuQA's data folder (every year below it), one year's folder, or one question file.
    Options: task ("xqa" | "evidence"); passage ("qa": English question + "Answer: " +
    correct choice(s), the default; "answer": the English correct choice(s) only; "concept":
    no passage text, the choices as options (Japanese, with their English as pivots), the
    correct ones' concept entries become the gold passages at grounding);
    with_choices (append the lettered choices to the question and, in English, to the pivot);
    text_only (skip questions that need a figure, i.e. text_only is false).
    """
    check_choice(path, "task", task, ITEM_TASKS)
    check_choice(path, "passage", passage, MCQ_PASSAGE_STYLES)
    check_bool(path, "with_choices", with_choices)
    check_bool(path, "text_only", text_only)
    check_lang(path, "ja", languages)
    if path.is_file() and not _is_question_file(path):
        raise InputError(path, "expected an IgakuQA question file (<exam>-<block>.jsonl), not its translation or metadata")
    ids = UniqueIds()
    for qfile in source_files(path, "*.jsonl", "IgakuQA question files (<exam>-<block>.jsonl)", exclude=lambda p: not _is_question_file(p), recursive=True):
        tfile = qfile.with_name(f"{qfile.stem}_translate.jsonl")
        english = _translations(tfile)
        for line_no, obj in read_jsonl(qfile):
            rec = Record(qfile, line_no, obj)
            pid = rec.text("problem_id")
            m = PROBLEM_ID.match(pid)
            if not m:
                raise rec.fail("problem_id", f"expected <exam><block><number> such as '112A1', got {pid!r}")
            only_text = obj.get("text_only", True)
            if not isinstance(only_text, bool):
                raise rec.fail("text_only", f"expected true or false, got {only_text!r}")
            question = rec.text("problem_text")
            choices = rec.text_list("choices", required=False, allow_empty_items=True)
            if pid not in english:
                raise rec.fail("problem_id", f"no English translation of {pid!r} in {tfile.name}")
            tline, question_en, choices_en = english[pid]
            if len(choices_en) != len(choices):
                raise InputError(tfile, f"{len(choices_en)} English choices for {len(choices)} in {qfile.name}", line=tline, field="choices_en")
            ja_answers, en_answers, correct = _correct(rec, choices, choices_en)
            if text_only and not only_text:
                continue
            item_id = f"igakuqa-{int(m.group(1)) + EXAM_YEAR_OFFSET}-{m.group(2)}-{int(m.group(3))}"
            ids.claim(item_id, qfile, line_no, "problem_id")
            text, pivot = question, question_en
            if with_choices and choices:
                letters = [chr(ord("a") + i) for i in range(len(choices))]
                text = question_with_choices(question, list(zip(letters, choices)))
                pivot = question_with_choices(question_en, list(zip(letters, choices_en)))
            if passage == "concept":
                # an answer without choices (a calculated value) is its own option; it names no
                # concept, so grounding drops the item with that reason
                # a choice that is a bare letter, or empty (the options are laid out in a table
                # of the question), is that letter in both languages
                letters = [c if len(unicodedata.normalize("NFKC", c).strip()) > 1 else unicodedata.normalize("NFKC", c).strip() or chr(ord("a") + i)
                           for i, c in enumerate(choices)]
                choices_pivot = [e if len(j) > 1 else j for j, e in zip(letters, choices_en)]
                options = (choice_options(letters, correct, choices_pivot) if choices
                           else [Option(text=a, pivot=a, correct=True) for a in ja_answers])
                yield make_item(rec, qfile, line_no, id=item_id, task=task, lang="ja", text=text, pivot=pivot, options=options)
                continue
            if passage == "answer" and not any(a.strip() for a in en_answers):
                continue  # the answer is a bare letter (choices in a table): no answer text to retrieve
            doc = answer_passage("igakuqa-doc", passage, question_en, en_answers, label="Answer: ")
            yield make_item(rec, qfile, line_no, id=item_id, task=task, lang="ja", text=text, pivot=pivot, passages=[doc])
