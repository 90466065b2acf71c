"""'rumeddanet': RuMedDaNet (RuMedBench), Russian yes/no questions about a context passage.

JSONL, one {pairID, context, question, answer: "да" | "нет"} per line. The context is the
question's evidence passage; identical contexts are one passage (id from its content).
No English text exists: items are yielded with pivot=None. See docs/sources.md.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from common.jsonio import read_jsonl
from schemas.records import SourceItem
from tasks.sources.adapters._common import ITEM_TASKS, Record, UniqueIds, adapter, check_choice, check_lang, content_passage, make_item, source_files

ANSWERS = ("да", "нет")


@adapter
def read_rumeddanet(path: Path, languages: set[str], *, task: str = "evidence", answers: list[str] | None = None) -> Iterator[SourceItem]:
    """RuMedDaNet -> Russian SourceItems (id `rumeddanet-<pairID>`, passage `rumeddanet-ctx-<hash>`).

    `path`: the RuMedDaNet folder (every *.jsonl in it: train_v1, dev_v1, test_v1) or one file.
    Options: task ("evidence" | "xqa"); answers (keep only items with these answers, e.g.
    ["да"]; default both). `answer` is optional per record, but when present it must be да or нет.
    """
    check_choice(path, "task", task, ITEM_TASKS)
    keep = set(ANSWERS) if answers is None else set(answers) if isinstance(answers, list) else None
    if not keep or not keep <= set(ANSWERS):
        check_choice(path, "answers", answers, [list(ANSWERS), ["да"], ["нет"]])
    check_lang(path, "ru", languages)
    ids = UniqueIds()
    for file in source_files(path, "*.jsonl", "RuMedDaNet files (train_v1.jsonl, dev_v1.jsonl, test_v1.jsonl)"):
        for line_no, obj in read_jsonl(file):
            rec = Record(file, line_no, obj)
            pair_id = rec.ident("pairID")
            question = rec.text("question")
            context = rec.text("context")
            answer = rec.text("answer", required=False)
            if answer is not None and answer.lower() not in ANSWERS:
                raise rec.fail("answer", f"expected 'да' or 'нет', got {answer!r}")
            item_id = f"rumeddanet-{pair_id}"
            ids.claim(item_id, file, line_no, "pairID")
            if answer is not None and answer.lower() not in keep:
                continue
            yield make_item(rec, file, line_no, id=item_id, task=task, lang="ru", text=question, pivot=None,
                            passages=[content_passage("rumeddanet-ctx", context)])
