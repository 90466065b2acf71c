"""Read what an evaluation needs from a release folder: cells, split qrels, confusion sets,
and each cell's pivot control (`pivot-queries.jsonl`: the same items asked in English,
with the same ids, so the cell's qrels apply unchanged).

Every file read is hashed, so results.json names exactly the bytes it scored.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import InputError
from common.jsonio import read_jsonl
from schemas.records import TASKS

QRELS_HEADER = "query-id\tcorpus-id\tscore"
PIVOT_QUERIES = "pivot-queries.jsonl"


@dataclass
class Cell:
    task: str
    lang: str
    docs: list[dict]
    corpus_sha: str
    queries: list[dict]  # the queries of the evaluated splits, sorted by id
    qrels: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # split -> query -> doc -> rel
    pivot_queries: list[dict] | None = None  # the pivot control's queries of the evaluated splits, or None
    # every query id of the cell and of its pivot control, in any split: what a run file may name
    query_ids: frozenset[str] = frozenset()
    pivot_query_ids: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return f"{self.task}/{self.lang}"

    def pivot_cell(self) -> "Cell":
        """The pivot control as a cell of its own: English queries (so retrievers tokenize
        them as English), the same corpus, and the qrels of the items that have a pivot."""
        ids = {q["_id"] for q in self.pivot_queries or []}
        qrels = {s: {q: d for q, d in rel.items() if q in ids} for s, rel in self.qrels.items()}
        return Cell(self.task, "en", self.docs, self.corpus_sha, list(self.pivot_queries or []), qrels)


def _sha(path: Path) -> tuple[bytes, str]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found (not a complete release folder)") from None
    return data, hashlib.sha256(data).hexdigest()


def _jsonl(path: Path, inputs: dict[str, str], root: Path, parsed: dict[str, list[dict]] | None = None) -> list[dict]:
    """Rows of a JSON-lines file; with `parsed`, a file whose bytes were read before (the
    corpus six cells share) is parsed once."""
    _data, sha = _sha(path)
    inputs[path.relative_to(root).as_posix()] = sha
    if parsed is not None and sha in parsed:
        return parsed[sha]
    rows = [row for _n, row in read_jsonl(path)]
    if parsed is not None:
        parsed[sha] = rows
    return rows


def _qrels(path: Path, inputs: dict[str, str], root: Path) -> dict[str, dict[str, int]]:
    data, inputs[path.relative_to(root).as_posix()] = _sha(path)
    lines = data.decode("utf-8").splitlines()
    if not lines or lines[0] != QRELS_HEADER:
        raise InputError(path, "expected the BEIR header 'query-id<TAB>corpus-id<TAB>score'", 1)
    out: dict[str, dict[str, int]] = {}
    for n, line in enumerate(lines[1:], start=2):
        f = line.split("\t")
        if len(f) != 3 or not f[2].lstrip("-").isdigit():
            raise InputError(path, "expected 'query-id<TAB>corpus-id<TAB>integer score'", n)
        out.setdefault(f[0], {})[f[1]] = int(f[2])
    return out


def load_cells(root: Path, cells: list[str], languages: list[str], splits: list[str]) -> tuple[list[Cell], dict, dict[str, str]]:
    """The release's cells in task then language order, its confusion sets by set id, and
    the sha256 of every file read."""
    root = Path(root)
    inputs: dict[str, str] = {}
    order = {c: (TASKS.index(c.split("/")[0]), languages.index(c.split("/")[1])) for c in cells}
    present = {s: any((root / c / "qrels" / f"{s}.tsv").exists() for c in cells) for s in splits}
    for s, ok in present.items():
        if not ok:
            raise InputError(root, f"the release has no {s!r} split (no {s}.tsv qrels in any cell)")
    out = []
    corpora: dict[str, list[dict]] = {}
    for name in sorted(cells, key=order.__getitem__):
        task, lang = name.split("/")
        d = root / task / lang
        docs = _jsonl(d / "corpus.jsonl", inputs, root, corpora)
        corpus_sha = inputs[f"{task}/{lang}/corpus.jsonl"]
        queries = _jsonl(d / "queries.jsonl", inputs, root)
        cell = Cell(task, lang, docs, corpus_sha, [], query_ids=frozenset(q["_id"] for q in queries))
        for s in splits:
            path = d / "qrels" / f"{s}.tsv"
            cell.qrels[s] = _qrels(path, inputs, root) if path.exists() else {}
        wanted = {q for s in splits for q in cell.qrels[s]}
        cell.queries = sorted((q for q in queries if q["_id"] in wanted), key=lambda q: q["_id"])
        missing = wanted - {q["_id"] for q in cell.queries}
        if missing:
            raise InputError(d / "queries.jsonl", f"qrels name queries it does not have: {', '.join(sorted(missing)[:3])}")
        if (d / PIVOT_QUERIES).exists():
            native = {q["_id"] for q in queries}
            pivots = _jsonl(d / PIVOT_QUERIES, inputs, root)
            strays = sorted(q["_id"] for q in pivots if q["_id"] not in native)
            if strays:
                raise InputError(d / PIVOT_QUERIES, f"pivot queries that are not queries of the cell: {', '.join(strays[:3])}")
            cell.pivot_queries = sorted((q for q in pivots if q["_id"] in wanted), key=lambda q: q["_id"])
            cell.pivot_query_ids = frozenset(q["_id"] for q in pivots)
        out.append(cell)
    confusion = {}
    if any(c.task == "cd" for c in out):
        confusion = {r["set_id"]: r for r in _jsonl(root / "cd" / "confusion_sets.jsonl", inputs, root)}
    return out, confusion, dict(sorted(inputs.items()))


def read_manifest(root: Path) -> dict:
    from common.paths import release_folder

    path = release_folder(root) / "manifest.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(path, f"unreadable manifest ({exc})") from None
