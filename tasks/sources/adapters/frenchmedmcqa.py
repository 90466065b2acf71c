"""'frenchmedmcqa': FrenchMedMCQA (French pharmacy exam MCQ), {train,dev,test}.json.

Each file is a JSON array of {id, question, answers: {a..e: text}, correct_answers: [letters],
...}. No English text exists: items are yielded with pivot=None. See docs/sources.md.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from schemas.records import SourceItem
from tasks.sources.adapters._common import (
    ITEM_TASKS, MCQ_PASSAGE_STYLES, Record, adapter, check_bool, check_choice, check_lang, iter_json_array, make_item,
    question_with_choices, source_files,
)
from tasks.sources.adapters.mcq import answer_keys, answer_passage, choice_options

ID_CHARS = 16  # the source's ids are 64-hex sha256 digests; 16 are plenty (collisions are checked)


@adapter
def read_frenchmedmcqa(path: Path, languages: set[str], *, task: str = "xqa", passage: str = "answer",
                       with_choices: bool = False) -> Iterator[SourceItem]:
    """FrenchMedMCQA -> French SourceItems (id `frenchmedmcqa-<first 16 of id>`, pivot None).

    `path`: the corpus folder (every *.json in it) or one split file.
    Options: task; passage ("answer": the correct answers' texts, joined by "; ", the default;
    "qa": the question first; "concept": the answers as `options`, the correct ones' concept
    entries are the gold passages, see `SourceItem`); with_choices (append the lettered
    answers to the question).
    A record repeated verbatim (same id, same content: one such pair exists in train.json)
    is read once; the same id with different content is an error.
    """
    check_choice(path, "task", task, ITEM_TASKS)
    check_choice(path, "passage", passage, MCQ_PASSAGE_STYLES)
    check_bool(path, "with_choices", with_choices)
    check_lang(path, "fr", languages)
    seen: dict[str, tuple[str, int, dict]] = {}
    for file in source_files(path, "*.json", "FrenchMedMCQA split files (train.json, dev.json, test.json)"):
        for line_no, index, obj in iter_json_array(file):
            rec = Record(file, line_no, obj, prefix=f"[{index}].")
            source_id = rec.ident("id")
            item_id = f"frenchmedmcqa-{source_id[:ID_CHARS]}"
            if item_id in seen:
                first_file, first_line, first_obj = seen[item_id]
                if first_obj == obj:
                    continue
                raise rec.fail("id", f"id {source_id!r} (as {item_id!r}) already used by a different record at {first_file}:{first_line}")
            seen[item_id] = (file.name, line_no, obj)
            question = rec.text("question")
            answers = rec.text_map("answers")
            keys = answer_keys(rec, "correct_answers", answers)
            text = question_with_choices(question, list(answers.items())) if with_choices else question
            if passage == "concept":
                order = list(answers)
                options = choice_options([answers[k] for k in order], [order.index(k) for k in keys])
                yield make_item(rec, file, line_no, id=item_id, task=task, lang="fr", text=text, pivot=None, options=options)
                continue
            doc = answer_passage("frenchmedmcqa-doc", passage, question, [answers[k] for k in keys])
            yield make_item(rec, file, line_no, id=item_id, task=task, lang="fr", text=text, pivot=None, passages=[doc])

