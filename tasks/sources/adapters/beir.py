"""'beir': a BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

Each query with at least one qrel of score > 0 becomes an item whose passages are those
documents; queries without one are skipped. Item and passage ids are prefixed
(`beir-<folder name>-<id>` by default) so that two BEIR sources never collide.
See docs/sources.md.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from common.errors import InputError
from common.jsonio import iter_lines, read_jsonl
from schemas.records import Passage, SourceItem
from tasks.sources.adapters._common import ITEM_TASKS, Record, adapter, check_choice, check_lang, make_item, require_file

QRELS_HEADER = ("query-id", "corpus-id", "score")


def _prefix(path: Path, prefix: str | None) -> str:
    if prefix is None:
        return f"beir-{path.resolve().name}"
    if not isinstance(prefix, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", prefix):
        raise InputError(path, f"expected letters, digits, '_', '.', '-', got {prefix!r}", field="options.prefix")
    return prefix


def read_qrels(path: Path) -> list[tuple[int, str, str, int]]:
    """(line, query id, corpus id, score) rows of a BEIR qrels TSV; the header is optional."""
    require_file(path, "BEIR relevance judgements: query-id<TAB>corpus-id<TAB>score")
    rows = []
    for line_no, line in iter_lines(path):
        if not line.strip():
            continue
        cells = line.rstrip("\r\n").split("\t")
        if line_no == 1 and tuple(c.strip().lower() for c in cells) == QRELS_HEADER:
            continue
        if len(cells) != 3:
            raise InputError(path, f"expected 3 tab-separated columns (query-id, corpus-id, score), found {len(cells)}", line=line_no)
        qid, did, score = (c.strip() for c in cells)
        for name, value in (("query-id", qid), ("corpus-id", did)):
            if not value:
                raise InputError(path, "expected a non-empty id", line=line_no, field=name)
        if not re.fullmatch(r"[+-]?[0-9]{1,9}", score):
            raise InputError(path, f"expected an integer, got {score!r}", line=line_no, field="score")
        rows.append((line_no, qid, did, int(score)))
    return rows


def _doc(rec: Record) -> tuple[str, str]:
    title = rec.text("title", required=False) or ""
    text = rec.text("text", required=False) or ""
    if not text and not title:
        raise rec.fail("text", "expected a non-empty string (or a title)")
    return title, text or title


def read_beir_corpus(path: Path, prefix: str | None = None) -> Iterator[Passage]:
    """Every document of a BEIR folder's corpus.jsonl as a Passage (for [[background]] use)."""
    path = Path(path)
    pre = _prefix(path, prefix)
    for line_no, obj in read_jsonl(require_file(path / "corpus.jsonl", "BEIR corpus: {_id, title, text} per line")):
        rec = Record(path / "corpus.jsonl", line_no, obj)
        title, text = _doc(rec)
        yield Passage(id=f"{pre}-{rec.ident('_id')}", title=title, text=text)


@adapter
def read_beir(path: Path, languages: set[str], *, task: str = "evidence", lang: str = "en", split: str = "test",
              prefix: str | None = None) -> Iterator[SourceItem]:
    """BEIR folder -> SourceItems (id `<prefix>-<query id>`, passages `<prefix>-<corpus id>`).

    Options: task ("evidence" | "xqa"); lang (language of queries without a `lang` field,
    default "en"); split (qrels/<split>.tsv, default "test"); prefix (default
    `beir-<folder name>`). A query may carry `lang` and, when not English, its English text
    in `pivot_text` or `pivot` (as in this project's own releases); else pivot is None.
    """
    check_choice(path, "task", task, ITEM_TASKS)
    if not isinstance(split, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", split):
        raise InputError(path, f"expected a split name such as 'test', got {split!r}", field="options.split")
    pre = _prefix(path, prefix)
    if not path.is_dir():
        raise InputError(path, "not found (expected a BEIR folder: corpus.jsonl, queries.jsonl, qrels/)")
    qrels_path = path / "qrels" / f"{split}.tsv"
    queries_path, corpus_path = path / "queries.jsonl", path / "corpus.jsonl"
    relevant: dict[str, list[str]] = {}
    qrel_line: dict[str, int] = {}
    doc_line: dict[str, int] = {}
    for line_no, qid, did, score in read_qrels(qrels_path):
        qrel_line.setdefault(qid, line_no)
        if score > 0:
            docs = relevant.setdefault(qid, [])
            if did not in docs:
                docs.append(did)
                doc_line.setdefault(did, line_no)
    # the relevant documents only: a corpus may hold millions
    docs: dict[str, tuple[str, str]] = {}
    for line_no, obj in read_jsonl(require_file(corpus_path, "BEIR corpus: {_id, title, text} per line")):
        rec = Record(corpus_path, line_no, obj)
        did = rec.ident("_id")
        if did in doc_line and did not in docs:
            docs[did] = _doc(rec)
    for did, line_no in doc_line.items():
        if did not in docs:
            raise InputError(qrels_path, f"document {did!r} is not in corpus.jsonl", line=line_no, field="corpus-id")
    seen: set[str] = set()
    items: list[SourceItem] = []
    for line_no, obj in read_jsonl(require_file(queries_path, "BEIR queries: {_id, text} per line")):
        rec = Record(queries_path, line_no, obj)
        qid = rec.ident("_id")
        if qid in seen:
            raise rec.fail("_id", f"duplicate query id {qid!r}")
        seen.add(qid)
        if qid not in relevant:
            continue
        text = rec.text("text")
        qlang = rec.text("lang") if rec.has("lang") else lang
        check_lang(queries_path, qlang, languages, line=line_no, field="lang" if rec.has("lang") else "options.lang")
        pivot = None
        if qlang != "en":
            pivot = rec.text("pivot_text", required=False) or rec.text("pivot", required=False) or None
        passages = [Passage(id=f"{pre}-{did}", title=docs[did][0], text=docs[did][1]) for did in relevant[qid]]
        items.append(make_item(rec, queries_path, line_no, id=f"{pre}-{qid}", task=task, lang=qlang, text=text, pivot=pivot, passages=passages))
    for qid in relevant:
        if qid not in seen:
            raise InputError(qrels_path, f"query {qid!r} is not in queries.jsonl", line=qrel_line[qid], field="query-id")
    yield from items
