"""'pubmedqa': PubMedQA's ori_pqal.json (also ori_pqaa / ori_pqau): {pmid: {QUESTION, CONTEXTS, ...}}.

Each question's abstract sections (CONTEXTS) are its gold evidence passages, ids
`pubmed-<pmid>-<i>`. English only. See docs/sources.md.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from common.errors import InputError
from schemas.records import Passage, SourceItem
from tasks.sources.adapters._common import ITEM_TASKS, Record, adapter, check_bool, check_choice, check_lang, iter_json_object, make_item


PASSAGES = ("contexts", "conclusion")


@adapter
def read_pubmedqa(path: Path, languages: set[str], *, task: str = "evidence", long_answer: bool = False,
                  passage: str = "contexts") -> Iterator[SourceItem]:
    """PubMedQA JSON -> English SourceItems (id `pubmedqa-<pmid>`; task xqa: `pubmedqa-xqa-<pmid>`,
    so that one file can feed both tasks; pivot None).

    Options: task ("evidence" | "xqa"); passage ("contexts": each abstract section, the
    default; "conclusion": only LONG_ANSWER, the abstract's conclusion, which states the
    answer, as passage `pubmed-<pmid>-long`); long_answer (with "contexts": also add
    LONG_ANSWER as passage `pubmed-<pmid>-long`). LONG_ANSWER is required when used.
    """
    check_choice(path, "task", task, ITEM_TASKS)
    check_bool(path, "long_answer", long_answer)
    check_choice(path, "passage", passage, PASSAGES)
    check_lang(path, "en", languages)
    prefix = "pubmedqa-" if task == "evidence" else f"pubmedqa-{task}-"
    for line_no, pmid, obj in iter_json_object(path):
        if not re.fullmatch(r"[0-9A-Za-z_.-]+", pmid):
            raise InputError(path, f"expected a PubMed id as the key, got {pmid!r}", line=line_no, field=pmid)
        rec = Record(path, line_no, obj, prefix=f"{pmid}.")
        question = rec.text("QUESTION")
        contexts = rec.text_list("CONTEXTS")
        passages = [Passage(id=f"pubmed-{pmid}-{i}", title="", text=text) for i, text in enumerate(contexts)]
        if passage == "conclusion":
            passages = []
        if long_answer or passage == "conclusion":
            passages.append(Passage(id=f"pubmed-{pmid}-long", title="", text=rec.text("LONG_ANSWER")))
        yield make_item(rec, path, line_no, id=f"{prefix}{pmid}", task=task, lang="en", text=question, pivot=None, passages=passages)
