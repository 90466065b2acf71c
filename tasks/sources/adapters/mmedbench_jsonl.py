"""'mmedbench-jsonl': MMedBench-style multiple-choice JSONL (one question per line).

Per line: question, options ({"A": ..., ...} or a list, lettered A, B, ...), the answer
(`answer_idx`: "B", "A,C" or ["A", "C"]; else `answer`: an option key or the answer's own
text), rationale (optional), language (optional), id (optional), question_en (optional).
See docs/sources.md.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from common.errors import InputError
from common.jsonio import read_jsonl
from schemas.records import SourceItem
from tasks.sources.adapters._common import (
    ITEM_TASKS, MCQ_PASSAGE_STYLES, Record, UniqueIds, adapter, check_bool, check_choice, check_lang, make_item, question_with_choices,
)
from tasks.sources.adapters.mcq import answer_keys, answer_passage, choice_options, option_key

# MMedBench names its files by language (English.jsonl, Chinese.jsonl, ...) and some
# derived files carry the English name in a field: both map to the registry's codes.
LANGUAGE_NAMES = {
    "english": "en", "chinese": "zh", "japanese": "ja", "french": "fr", "russian": "ru", "spanish": "es",
}


def _lang_code(value: str) -> str | None:
    v = value.strip().casefold()
    if v in LANGUAGE_NAMES:
        return LANGUAGE_NAMES[v]
    return v if re.fullmatch(r"[a-z]{2,3}(-[a-z0-9]{2,8})?", v) else None


def _options(rec: Record) -> dict[str, str]:
    value = rec.obj.get("options")
    if isinstance(value, list):
        if not value:
            raise rec.fail("options", "expected at least one option")
        out = {}
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise rec.fail(f"options.{i}", f"expected a string, found {type(v).__name__}")
            out[chr(ord("A") + i)] = v.strip()
        return out
    return rec.text_map("options")


def _answers(rec: Record, options: dict[str, str]) -> list[str]:
    if rec.has("answer_idx"):
        return [options[k] for k in answer_keys(rec, "answer_idx", options)]
    value = rec.obj.get("answer")
    if isinstance(value, str) and value.strip():
        key = option_key(options, value)
        if key is not None:
            return [options[key]]
        if re.fullmatch(r"[A-Za-z]", value.strip()):
            raise rec.fail("answer", f"{value.strip()!r} is not one of the options ({', '.join(options)})")
        try:  # "A,C": several keys
            return [options[k] for k in answer_keys(rec, "answer", options)]
        except InputError:
            return [value.strip()]  # the answer's own text
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return [options[option_key(options, v)] if option_key(options, v) else v.strip() for v in value]
    if value is None:
        raise rec.fail("answer", "missing (expected the answer: its text or option key, or an 'answer_idx')")
    raise rec.fail("answer", "expected a non-empty string (the answer's text or option key) or a list of them")


@adapter
def read_mmedbench_jsonl(path: Path, languages: set[str], *, task: str = "xqa", lang: str | None = None,
                         require_pivot: bool = True, with_choices: bool = False, passage: str = "answer") -> Iterator[SourceItem]:
    """MMedBench-style JSONL -> SourceItems.

    Options: task ("xqa" | "evidence"); lang (the language of records without a `language`
    field; default: from the file name, e.g. Japanese.jsonl -> ja); require_pivot (default
    true: a non-English record must carry `question_en`, else it is an error; false: such
    records are yielded with pivot=None); with_choices (append the lettered options to the
    question); passage ("answer": the answer text(s) and rationale; "qa": the question first;
    "concept": the options as `options`, the correct ones' concept entries are the gold
    passages, see `SourceItem`).
    """
    check_choice(path, "task", task, ITEM_TASKS)
    check_choice(path, "passage", passage, MCQ_PASSAGE_STYLES)
    check_bool(path, "require_pivot", require_pivot)
    check_bool(path, "with_choices", with_choices)
    default_lang = None
    if lang is not None:
        default_lang = _lang_code(str(lang))
        if default_lang is None:
            raise InputError(path, f"expected a language code or English language name, got {lang!r}", field="options.lang")
    else:
        default_lang = LANGUAGE_NAMES.get(path.stem.casefold())
    ids = UniqueIds()
    for line_no, obj in read_jsonl(path):
        rec = Record(path, line_no, obj)
        question = rec.text("question")
        options = _options(rec)
        answers = _answers(rec, options)
        rationale = rec.text("rationale", required=False) or ""
        if rec.has("language"):
            raw = rec.text("language")
            code = _lang_code(raw)
            if code is None:
                raise rec.fail("language", f"expected a language code or English language name, got {raw!r}")
        elif default_lang is not None:
            code = default_lang
        else:
            raise rec.fail("language", "missing (no 'language' field, no 'lang' option, and the file name is not a language name)")
        check_lang(path, code, languages, line=line_no, field="language")
        pivot = None
        if code != "en":
            pivot = rec.text("question_en", required=False) or None
            if pivot is None and require_pivot:
                raise rec.fail("question_en", "a non-English question needs its English text (or set the source option require_pivot = false)")
        key = rec.ident("id") if rec.has("id") else str(line_no)
        item_id = f"mmedbench-{code}-{key}"
        ids.claim(item_id, path, line_no, "id")
        text = question_with_choices(question, list(options.items())) if with_choices else question
        if passage == "concept":
            texts = list(options.values()) + [a for a in answers if a not in options.values()]
            choices = choice_options(texts, [i for i, t in enumerate(texts) if t in answers])
            yield make_item(rec, path, line_no, id=item_id, task=task, lang=code, text=text, pivot=pivot, options=choices)
            continue
        yield make_item(rec, path, line_no, id=item_id, task=task, lang=code, text=text, pivot=pivot,
                        passages=[answer_passage("mmedbench-doc", passage, question, answers, rationale)])
