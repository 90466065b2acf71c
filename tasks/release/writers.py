"""Stage: write a release folder (BEIR cells, confusion sets, parquet copies, card, manifest).

Everything is written into a temporary folder beside the final one and renamed into
place only after the audit passes: a release is never half-written or overwritten.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from common.errors import InputError
from common.jsonio import atomic_write, dumps, file_digest
from schemas.drops import drop_counts, drops_from_rows
from schemas.gates import UNREALIZED_TEXT
from schemas.records import CONFUSION_SET_ARROW, DOCUMENT_ARROW, QUERY_ARROW, TASKS
from tasks.allocation.concept_entries import AnswerEntries, concept_entry, entry_parts
from umls.hpo import read_phenotypes
from tasks.release.hub import PIVOT_QUERIES  # a non-English cell's queries asked in English (BEIR query file)
from common.parquet import rows as table_rows, write_parquet

UNHASHED = {"manifest.json", "audit_report.json", "audit_report.md"}
PIVOT_QRELS = "pivot-qrels"  # their qrels per split: BEIR's GenericDataLoader(cell, prefix="pivot")


def split_of(item_id: str, dev_fraction: float) -> str:
    """Stable across versions: depends on the id alone (not on the seed or the data)."""
    if dev_fraction <= 0:
        return "test"
    h = int(hashlib.sha256(f"split:{item_id}".encode()).hexdigest()[:15], 16) / 16**15
    return "dev" if h < dev_fraction else "test"


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with atomic_write(path) as fh:
        for r in rows:
            fh.write(dumps(r) + "\n")


def _write_qrels(path: Path, rows: list[tuple[str, str, int]]) -> None:
    with atomic_write(path) as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q, d, s in rows:
            fh.write(f"{q}\t{d}\t{s}\n")


def write_cells(assignments: str, corpora: dict[str, str], vocab: dict[str, str], languages: list[str],
                dev_fraction: float, out_dir: Path, item_langs: dict[str, str] | None = None) -> dict[str, dict]:
    """Write every cell; return per-cell counts. `item_langs`: each source item's language
    (`item_languages`), which says where a translated query's English pivot comes from."""
    rows = table_rows(pq.read_table(assignments))
    by_cell: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        by_cell[(r["task"], r["lang"])].append(r)
    entries = entry_parts(pq.read_table(vocab["concepts"]), pq.read_table(vocab["atoms"], columns=["cui", "lang", "str"]))
    corpus_rows = {task: table_rows(pq.read_table(p)) for task, p in corpora.items()}
    answers = AnswerEntries(entries, pq.read_table(vocab["parents"]), read_phenotypes(vocab.get("phenotypes")))
    item_docs = {task: _item_documents(task, rows, corpus_rows.get(task, []), answers) for task in corpora}
    counts: dict[str, dict] = {}
    confusion = []
    for task in TASKS:
        for lang in languages:
            cell = by_cell.get((task, lang), [])
            d = out_dir / task / lang
            queries = [{"_id": r["id"], "text": r["text"], "lang": lang, "cuis": r["cuis"], "pivot_text": r["pivot"],
                        "provenance": r["provenance"], "split": split_of(r["id"], dev_fraction)} for r in cell]
            if task == "cd":
                cuis = sorted({c for r in cell for c in r["cuis"] + r["distractor_cuis"]})
                # a target's entry withholds the cell's query for it (a synonym or the
                # definition used as the query): no query is found by string matching
                query_of = {r["cuis"][0]: r["text"] for r in cell}
                docs = [concept_entry(entries[c], withheld=query_of.get(c)) for c in cuis]
                qrels = sorted((r["id"], r["cuis"][0], 1) for r in cell)
                confusion += [{"set_id": r["id"], "lang": lang, "tier": r["tier"], "target_cui": r["cuis"][0],
                               "distractor_cuis": sorted(r["distractor_cuis"])} for r in cell]
            else:
                docs = list(item_docs[task])
                qrels = sorted((r["id"], pid, 1) for r in cell for pid in r["passage_ids"])
            queries.sort(key=lambda q: q["_id"])
            docs.sort(key=lambda x: x["_id"])
            split = {q["_id"]: q["split"] for q in queries}
            _write_jsonl(d / "corpus.jsonl", docs)
            _write_jsonl(d / "queries.jsonl", queries)
            _write_qrels(d / "qrels" / "test.tsv", [q for q in qrels if split[q[0]] == "test"])
            if dev_fraction > 0:
                _write_qrels(d / "qrels" / "dev.tsv", [q for q in qrels if split[q[0]] == "dev"])
            write_parquet(pa.Table.from_pylist(docs, schema=DOCUMENT_ARROW), d / "corpus.parquet")
            write_parquet(pa.Table.from_pylist(queries, schema=QUERY_ARROW), d / "queries.parquet")
            write_parquet(pa.table({"query-id": [q[0] for q in qrels], "corpus-id": [q[1] for q in qrels],
                                    "score": pa.array([q[2] for q in qrels], pa.int32()),
                                    "split": [split[q[0]] for q in qrels]}), d / "qrels.parquet")
            write_pivot_files(d, task, lang, item_langs or {})
            counts[f"{task}/{lang}"] = {
                "queries": len(queries), "documents": len(docs), "qrels": len(qrels),
                "dev_queries": sum(1 for q in queries if q["split"] == "dev"),
                "provenance": dict(sorted(Counter(q["provenance"] for q in queries).items())),
            }
    write_confusion_sets(confusion, out_dir / "cd")
    return counts


def item_languages(shards: list[str]) -> dict[str, str]:
    """Source item id -> the language it was written in, from the sources stage's item shards."""
    out: dict[str, str] = {}
    for shard in shards:
        t = pq.read_table(shard, columns=["id", "lang"])
        out.update(zip(t["id"].to_pylist(), t["lang"].to_pylist()))
    return out


def pivot_provenance(task: str, query: dict, cell_lang: str, item_langs: dict[str, str]) -> str | None:
    """Where a non-English query's English pivot comes from.

    cd: the target concept's English name in the vocabulary (`terminology`). xqa, evidence:
    the English text the item came with. An item written in English (PubMedQA) is its own
    pivot (`native`), the cell's query being its translation; a non-English item's English
    text is its source's own translation (IgakuQA's *_translate.jsonl, a sample-jsonl `pivot`,
    mmedbench-jsonl `question_en`, a beir query's `pivot_text`): `human-translated`, as the
    build already labels that text when it places such an item in an English cell. A query
    native to its cell is its item, so its item's language is the cell's."""
    if task == "cd":
        return "terminology"
    item_lang = cell_lang if query["provenance"] == "native" else item_langs.get(query["_id"])
    if item_lang is None:
        return None  # a translated query whose item is not in the build's sources
    return "native" if item_lang == "en" else "human-translated"


def pivot_rows(queries: list[dict], task: str, lang: str, item_langs: dict[str, str], where: Path | str = "queries.jsonl") -> list[dict]:
    """A non-English cell's pivot queries: every query with an English pivot, asked in English
    under its own id and split (so the cell's qrels apply unchanged), sorted by id. An English
    cell has none: its queries are English already. `where`: the queries' file, for the error."""
    if lang == "en":
        return []
    rows = []
    for line, q in enumerate(queries, start=1):
        if not q.get("pivot_text"):
            continue
        provenance = pivot_provenance(task, q, lang, item_langs)
        if provenance is None:
            raise InputError(where, f"query {q['_id']!r} is translated, and its item is not in this build's sources: "
                                    f"where its English pivot comes from is unknown", line=line, field="pivot_text")
        rows.append({"_id": q["_id"], "text": q["pivot_text"], "lang": "en", "cuis": q["cuis"], "pivot_text": None,
                     "provenance": provenance, "split": q["split"]})
    return sorted(rows, key=lambda r: r["_id"])


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _read_qrels(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [line.split("\t") for line in lines if line]


def write_pivot_files(cell_dir: Path, task: str, lang: str, item_langs: dict[str, str]) -> int:
    """A cell's pivot control, derived from its BEIR files: pivot-queries.jsonl (+ .parquet) and
    pivot-qrels/<split>.tsv, the cell's qrels of those queries (BEIR's loader wants every qrel's
    query in the query file). Nothing is written for a cell without pivots. Returns the rows."""
    cell_dir = Path(cell_dir)
    rows = pivot_rows(_read_jsonl(cell_dir / "queries.jsonl"), task, lang, item_langs, cell_dir / "queries.jsonl")
    if not rows:
        return 0
    _write_jsonl(cell_dir / PIVOT_QUERIES, rows)
    write_parquet(pa.Table.from_pylist(rows, schema=QUERY_ARROW), cell_dir / PIVOT_QUERIES.replace(".jsonl", ".parquet"))
    ids = {r["_id"] for r in rows}
    for path in sorted((cell_dir / "qrels").glob("*.tsv")):
        _write_qrels(cell_dir / PIVOT_QRELS / path.name, [(q, d, int(s)) for q, d, s in _read_qrels(path) if q in ids])
    return len(rows)


def pivot_count(cell_dir: Path, lang: str) -> dict | None:
    """A cell's manifest `pivots` block, from its files (None for an English cell): how many
    of its queries are asked again in English, where that English comes from, and why the
    others are not."""
    if lang == "en":
        return None
    cell_dir = Path(cell_dir)
    queries = _read_jsonl(cell_dir / "queries.jsonl")
    pivots = _read_jsonl(cell_dir / PIVOT_QUERIES) if (cell_dir / PIVOT_QUERIES).exists() else []
    missing = sorted(q["_id"] for q in queries if not q.get("pivot_text"))
    reason = None
    if not queries:
        reason = "the cell has no query"
    elif missing:
        sources = ", ".join(sorted({f"{i.split('-')[0]}-*" for i in missing}))
        reason = (f"{len(missing)} of {len(queries)} queries have no English text: their source items ({sources}) come "
                  f"without one, and the translation memory translates from English only")
    return {"queries": len(pivots), "of": len(queries), "dev_queries": sum(1 for r in pivots if r["split"] == "dev"),
            "provenance": dict(sorted(Counter(r["provenance"] for r in pivots).items())), "reason": reason}


def _item_documents(task: str, rows: list[dict], passages: list[dict], answers: AnswerEntries) -> list[dict]:
    """The corpus every language's cell of an item task shares: the passages the sources
    loaded for the task, plus the concept entries its placed items point to (gold passages
    of multiple-choice items whose answers are concepts, and their hard negatives: the
    other options' concepts). A concept entry's id is its CUI; its text `answer_entry`'s."""
    docs = {p["id"]: {"_id": p["id"], "title": p["title"], "text": p["text"]} for p in passages}
    cuis = sorted({c for r in rows if r["task"] == task for c in r["passage_ids"] + (r["distractor_cuis"] or []) if c not in docs})
    for c in cuis:
        docs[c] = answers(c)
    return [docs[k] for k in sorted(docs)]


def write_confusion_sets(rows: list[dict], cd_dir: Path) -> None:
    rows = sorted(rows, key=lambda r: r["set_id"])
    _write_jsonl(cd_dir / "confusion_sets.jsonl", rows)
    write_parquet(pa.Table.from_pylist(rows, schema=CONFUSION_SET_ARROW), cd_dir / "confusion_sets.parquet")


def write_build_report(dropped: str, gates: str, unrealized: str, counts: dict, quotas: dict[str, int], out_dir: Path,
                       vocabulary_code_names: dict | None = None, vocabulary_name_lists: dict | None = None) -> dict:
    """`gates`, `unrealized`: the allocation stage's counts of gate rejections and of texts
    never made (UNREALIZED_TABLE: no English pivot, no translation in memory; not gate
    rejections). `vocabulary_code_names`: what each code-keyed name list mapped and dropped,
    by reason (umls/code_names.py); `vocabulary_name_lists`: what each name list and glossary
    read, added and dropped, by reason (umls/name_lists.py); each in the report only when the
    build has such sources."""
    drops = drops_from_rows(table_rows(pq.read_table(dropped)))
    gate_counts = {r["gate"]: r["rejections"] for r in table_rows(pq.read_table(gates))}
    unrealized_counts = {f"{r['lang']}: {UNREALIZED_TEXT[r['unrealized']]}": r["items"]
                         for r in table_rows(pq.read_table(unrealized))}
    short = {}
    for cell, c in counts.items():
        quota = quotas[cell.split("/")[0]]
        if c["queries"] < quota:
            short[cell] = f"{c['queries']}/{quota}: sources, translation memory or concepts ran out (see dropped)"
    report = {
        "dropped": [d.report_row() for d in drops],
        "dropped_by_reason": drop_counts(drops),
        "gate_rejections": gate_counts,
        "unrealized": unrealized_counts,
        "cells_short_of_quota": short,
    }
    if vocabulary_code_names:
        report["vocabulary_code_names"] = vocabulary_code_names
    if vocabulary_name_lists:
        report["vocabulary_name_lists"] = vocabulary_name_lists
    with atomic_write(out_dir / "build_report.json") as fh:
        fh.write(json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    return report


def jsonl_rows(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def file_rows(path: Path) -> int | None:
    """Rows of a data file as the manifest counts them (None: not a table)."""
    if path.suffix == ".jsonl":
        return jsonl_rows(path)
    if path.suffix == ".tsv":
        return jsonl_rows(path) - 1
    if path.suffix == ".parquet":
        return pq.ParquetFile(path).metadata.num_rows
    return None


def release_files(out_dir: Path) -> list[tuple[str, Path]]:
    """(relative name, path) of every file the manifest lists, sorted."""
    out = []
    for p in sorted(out_dir.rglob("*")):
        rel = p.relative_to(out_dir).as_posix()
        if p.is_file() and rel not in UNHASHED:
            out.append((rel, p))
    return out


def file_entries(out_dir: Path) -> dict[str, dict]:
    """The manifest's `files`: sha256, bytes and rows of each file. Digests come from
    `file_digest`, so the audit and the diff that follow in the same process do not hash
    the release again."""
    files = {}
    for rel, p in release_files(out_dir):
        entry = {"sha256": file_digest(p), "bytes": p.stat().st_size}
        rows = file_rows(p)
        if rows is not None:
            entry["rows"] = rows
        files[rel] = entry
    return files
