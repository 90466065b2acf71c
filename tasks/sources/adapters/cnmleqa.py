"""'cnmleqa': CNMLEQA, Chinese national medical licensing exam questions with concept tags.

CNMLEQA-3k.json is a JSON array of {id, question, opa..ope, answer: "opX", year,
question_type, source, and five tag fields}. The tags (disease or diagnosis, symptom or
sign, medication, laboratory examination, surgery; "无" = none) are not part of the item:
`cnmleqa_tags` exposes them for grounding evaluation. No English text exists: items are
yielded with pivot=None. See docs/sources.md.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from schemas.records import SourceItem
from tasks.sources.adapters._common import (
    ITEM_TASKS, MCQ_PASSAGE_STYLES, Record, UniqueIds, adapter, check_bool, check_choice, check_lang, is_nan,
    iter_json_array, make_item, question_with_choices, require_file,
)
from tasks.sources.adapters.mcq import answer_passage, choice_options

TAG_FIELDS = ("disease or diagnosis", "symptom or sign", "medication", "laboratory examination", "surgery")
NO_TAG = "无"
# Tags are listed with ASCII or full-width commas, enumeration commas or semicolons. Not '/':
# it belongs inside values ("90次/分").
TAG_SEPARATORS = re.compile(r"[,，、;；]")
OPTION_KEY = re.compile(r"^op[a-z]$")


def _options(rec: Record) -> dict[str, str]:
    opts = {}
    for key, value in rec.obj.items():
        if OPTION_KEY.match(key):
            if not isinstance(value, str):
                raise rec.fail(key, f"expected a string, found {type(value).__name__}")
            opts[key] = value.strip()
    if not opts:
        raise rec.fail("opa", "missing (expected options opa, opb, ...)")
    return dict(sorted(opts.items()))


def _answer(rec: Record, opts: dict[str, str]) -> str:
    key = rec.text("answer")
    if key not in opts:
        raise rec.fail("answer", f"expected one of the option keys ({', '.join(opts)}), got {key!r}")
    if not opts[key]:
        raise rec.fail(key, "the correct option's text is empty")
    return opts[key]


def _records(path: Path) -> Iterator[tuple[Record, str]]:
    require_file(path, "CNMLEQA's JSON array, e.g. CNMLEQA-3k.json")
    ids = UniqueIds()
    for line_no, index, obj in iter_json_array(path):
        rec = Record(path, line_no, obj, prefix=f"[{index}].")
        item_id = f"cnmleqa-{rec.ident('id')}"
        ids.claim(item_id, path, line_no, f"[{index}].id")
        yield rec, item_id


def _tags(rec: Record) -> list[str]:
    tags: list[str] = []
    for name in TAG_FIELDS:
        value = rec.obj.get(name)
        if value is None or is_nan(value):  # the 3k file has a few NaN (no tag) values
            continue
        if not isinstance(value, str):
            raise rec.fail(name, f"expected a string of tags, found {type(value).__name__}")
        for tag in TAG_SEPARATORS.split(value):
            tag = tag.strip()
            if tag and tag != NO_TAG and tag not in tags:
                tags.append(tag)
    return tags


def cnmleqa_tags(path: Path) -> dict[str, list[str]]:
    """Item id (as the adapter makes it) -> its concept tags, in field order, split and de-duplicated.

    Fields read in order: disease or diagnosis, symptom or sign, medication, laboratory
    examination, surgery. "无" (none), empty values and NaN are skipped.
    """
    return {item_id: _tags(rec) for rec, item_id in _records(Path(path))}


@adapter
def read_cnmleqa(path: Path, languages: set[str], *, task: str = "xqa", passage: str = "answer",
                 with_choices: bool = False) -> Iterator[SourceItem]:
    """CNMLEQA -> Chinese SourceItems (id `cnmleqa-<id>`, pivot None).

    Options: task; passage ("answer": the correct option's text, then the record's
    `explanation` when it has one, the default; "qa": the question first; "concept": the
    options as `options`, the correct one's concept entry is the gold passage, see
    `SourceItem`); with_choices (append the lettered options to the question).
    """
    check_choice(path, "task", task, ITEM_TASKS)
    check_choice(path, "passage", passage, MCQ_PASSAGE_STYLES)
    check_bool(path, "with_choices", with_choices)
    check_lang(path, "zh", languages)
    for rec, item_id in _records(path):
        question = rec.text("question")
        opts = _options(rec)
        answer = _answer(rec, opts)
        explanation = rec.text("explanation", required=False) or ""
        _tags(rec)  # malformed tags are malformed records too
        text = question_with_choices(question, [(k[2:].upper(), v) for k, v in opts.items()]) if with_choices else question
        if passage == "concept":
            keys = list(opts)
            options = choice_options([opts[k] for k in keys], [keys.index(rec.text("answer"))])
            yield make_item(rec, path, rec.line, id=item_id, task=task, lang="zh", text=text, pivot=None, options=options)
            continue
        doc = answer_passage("cnmleqa-doc", passage, question, [answer], explanation)
        yield make_item(rec, path, rec.line, id=item_id, task=task, lang="zh", text=text, pivot=None, passages=[doc])
