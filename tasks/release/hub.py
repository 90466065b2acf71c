"""The release as Hugging Face `datasets` configs, in the layout MTEB's retrieval loader reads.

For every cell `<task>/<lang>` the card declares

    <task>-<lang>-corpus      corpus.parquet                       (the same corpus for every split)
    <task>-<lang>-queries     queries/<split>.parquet              _id, text, lang, cuis, pivot_text, provenance, split
    <task>-<lang>-qrels       qrels/<split>.parquet                query-id, corpus-id, score
    cd-<lang>-top_ranked      top_ranked/<split>.parquet           query-id, corpus-ids (the set's target + distractors)

and, for a non-English cell with pivots (pivot-queries.jsonl: its queries asked in English, same
ids), the pivot control as a subset of its own, `<task>-<lang>-pivot`:

    <task>-<lang>-pivot-corpus      corpus.parquet                 the cell's corpus
    <task>-<lang>-pivot-queries     pivot-queries/<split>.parquet  the same columns as the queries
    <task>-<lang>-pivot-qrels       pivot-qrels/<split>.parquet    the cell's qrels of the pivot queries
    cd-<lang>-pivot-top_ranked      pivot-top_ranked/<split>.parquet

with splits `test`, and `dev` where the cell has `qrels/dev.tsv`. These per-split files are
derived from the cell's BEIR files (queries.jsonl, qrels/<split>.tsv) and the confusion sets,
so they can be (re)made for any cell folder, including one carried over from an older
release; BEIR's own files are left exactly as they are.

`datasets` cannot load a split without rows ("corresponds to no data"), so a config lists only
the splits whose file has rows, and a config with none is left out: an empty cell (real data
offline, `allow_empty_cells`) has no configs, and the card's cell table says it is empty.
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from common.parquet import write_parquet
from schemas.records import QREL_ARROW, QUERY_ARROW, SPLITS, TOP_RANKED_ARROW

KINDS = ("corpus", "queries", "qrels", "top_ranked")
PIVOT_KINDS = ("pivot-corpus", "pivot-queries", "pivot-qrels", "pivot-top_ranked")
PIVOT_QUERIES = "pivot-queries.jsonl"  # tasks/release/writers.py writes it and pivot-qrels/<split>.tsv


def cell_splits(cell_dir: Path) -> list[str]:
    """The splits a cell has: those with a qrels/<split>.tsv, test first."""
    return [s for s in SPLITS if (Path(cell_dir) / "qrels" / f"{s}.tsv").exists()]


def has_pivots(cell_dir: Path) -> bool:
    return (Path(cell_dir) / PIVOT_QUERIES).exists()


def split_files(task: str, splits: list[str], pivots: bool = False) -> dict[str, dict[str, str]]:
    """kind -> split -> path inside the cell folder (with `pivots`, the pivot subset's too)."""
    out = {"corpus": {s: "corpus.parquet" for s in splits},
           "queries": {s: f"queries/{s}.parquet" for s in splits},
           "qrels": {s: f"qrels/{s}.parquet" for s in splits}}
    if task == "cd":
        out["top_ranked"] = {s: f"top_ranked/{s}.parquet" for s in splits}
    if pivots:
        out["pivot-corpus"] = dict(out["corpus"])
        for kind in ("queries", "qrels", "top_ranked"):
            if kind in out:
                out[f"pivot-{kind}"] = {s: f"pivot-{p}" for s, p in out[kind].items()}
    return out


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_split_files(cell_dir: Path, task: str, confusion_sets: list[dict]) -> list[str]:
    """Write a cell's per-split queries, qrels and (cd) top_ranked files, and those of its pivot
    subset when it has one (pivot-queries.jsonl, pivot-qrels/<split>.tsv); return its splits."""
    cell_dir = Path(cell_dir)
    splits = cell_splits(cell_dir)
    candidates = {s["set_id"]: sorted({s["target_cui"], *s["distractor_cuis"]}) for s in confusion_sets}
    subsets = [("", "queries.jsonl", "qrels")]
    if has_pivots(cell_dir):
        subsets.append(("pivot-", PIVOT_QUERIES, "pivot-qrels"))
    for prefix, query_file, qrels_folder in subsets:
        queries = _jsonl(cell_dir / query_file)
        for split in splits:
            rows = [{k: q.get(k) for k in QUERY_ARROW.names} for q in queries if q["split"] == split]
            write_parquet(pa.Table.from_pylist(rows, schema=QUERY_ARROW), cell_dir / f"{prefix}queries" / f"{split}.parquet")
            lines = (cell_dir / qrels_folder / f"{split}.tsv").read_text(encoding="utf-8").splitlines()[1:]
            qrels = [line.split("\t") for line in lines if line]
            write_parquet(pa.table({"query-id": [q[0] for q in qrels], "corpus-id": [q[1] for q in qrels],
                                    "score": pa.array([int(q[2]) for q in qrels], pa.int64())}, schema=QREL_ARROW),
                          cell_dir / qrels_folder / f"{split}.parquet")
            if task == "cd":
                ranked = [{"query-id": r["_id"], "corpus-ids": candidates[r["_id"]]} for r in rows]
                write_parquet(pa.Table.from_pylist(ranked, schema=TOP_RANKED_ARROW), cell_dir / f"{prefix}top_ranked" / f"{split}.parquet")
    return splits


def loadable_files(cell_dir: Path, task: str) -> dict[str, dict[str, str]]:
    """kind -> split -> path of a cell's per-split files that have rows (what `datasets` can load)."""
    cell_dir = Path(cell_dir)
    out: dict[str, dict[str, str]] = {}
    for kind, by_split in split_files(task, cell_splits(cell_dir), has_pivots(cell_dir)).items():
        rows = {s: p for s, p in by_split.items() if (cell_dir / p).exists() and pq.ParquetFile(cell_dir / p).metadata.num_rows > 0}
        if rows:
            out[kind] = rows
    # the pivot subset loads in the splits where it has queries (its corpus is the cell's)
    asked = out.get("pivot-queries", {})
    for kind in PIVOT_KINDS:
        if kind in out:
            out[kind] = {s: p for s, p in out[kind].items() if s in asked}
            if not out[kind]:
                del out[kind]
    return out


def hub_configs(cells: dict[str, dict[str, dict[str, str]]]) -> list[dict]:
    """The card's `configs:` entries, for cells given as `task/lang` -> kind -> split -> path (sorted by name)."""
    configs = []
    for cell in sorted(cells):
        task, lang = cell.split("/")
        for kind in KINDS + PIVOT_KINDS:
            by_split = cells[cell].get(kind)
            if by_split:
                configs.append({"config_name": f"{task}-{lang}-{kind}",
                                "data_files": [{"split": s, "path": f"{cell}/{p}"} for s, p in by_split.items()]})
    return configs


def configs_yaml(configs: list[dict]) -> list[str]:
    """YAML lines of a `configs:` block (the values are plain names and paths: no quoting needed)."""
    lines = ["configs:"]
    for c in configs:
        lines += [f"- config_name: {c['config_name']}", "  data_files:"]
        for f in c["data_files"]:
            lines += [f"  - split: {f['split']}", f"    path: {f['path']}"]
    return lines
