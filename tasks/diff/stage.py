"""Stage: compare two release folders, using nothing but the folders.

    diff_releases(old_dir, new_dir) -> ReleaseDiff

Files are compared by their sha256 as they are on disk (not as the manifests say: a release
edited after publishing shows its edits; `mmedbench audit` says whether it still matches its
manifest). A cell whose files are byte-identical is unchanged without parsing it; otherwise its
queries, documents and qrels are read and compared by id.
"""
from __future__ import annotations

import json
from pathlib import Path

from common.errors import InputError
from common.jsonio import file_digest, read_jsonl
from schemas.diff import CellCounts, CellDiff, IdDiff, ReleaseDiff, ValueChange
from tasks.diff.compare import diff_hashes, diff_qrels, diff_records, diff_values
from tasks.release.writers import UNHASHED


def read_manifest(root: Path) -> dict:
    from common.paths import release_folder

    path = release_folder(root) / "manifest.json"  # a loop, a FIFO, a file: one line naming it
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(path, f"unreadable manifest ({exc})") from None
    for key in ("version", "build_id", "cells", "files"):
        if key not in manifest:
            raise InputError(path, f"not a release manifest (no {key!r})")
    return manifest


def _rows(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    out = {}
    for _line, row in read_jsonl(path):
        out[str(row.get("_id", row.get("set_id")))] = row
    return out


def _qrels(folder: Path) -> list[tuple[str, str, int, str]]:
    rows = []
    for path in sorted(folder.glob("*.tsv")):
        lines = path.read_text(encoding="utf-8").splitlines()[1:]
        for n, line in enumerate(lines, start=2):
            fields = line.split("\t")
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                raise InputError(path, "expected 'query-id<TAB>corpus-id<TAB>integer score'", line=n)
            rows.append((fields[0], fields[1], int(fields[2]), path.stem))
    return rows


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file of a release but the manifest and the audit reports (as the manifest lists them)."""
    return {p.relative_to(root).as_posix(): file_digest(p) for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).as_posix() not in UNHASHED}


def _cell_files(hashes: dict[str, str], cell: str) -> dict[str, str]:
    prefix = cell + "/"
    return {k: v for k, v in hashes.items() if k.startswith(prefix)}


def _counts(c: dict) -> CellCounts:
    return CellCounts(queries=c["queries"], documents=c["documents"], qrels=c["qrels"], dev_queries=c.get("dev_queries", 0))


def _cell(old_root: Path, new_root: Path, old_m: dict, new_m: dict, old_h: dict, new_h: dict, cell: str) -> CellDiff:
    in_old, in_new = cell in old_m["cells"], cell in new_m["cells"]
    old_c = _counts(old_m["cells"][cell]) if in_old else None
    new_c = _counts(new_m["cells"][cell]) if in_new else None
    if not (in_old and in_new):
        return CellDiff(cell=cell, status="added" if in_new else "removed", old=old_c, new=new_c)
    if _cell_files(old_h, cell) == _cell_files(new_h, cell):
        return CellDiff(cell=cell, status="unchanged", old=old_c, new=new_c)
    a, b = old_root / cell, new_root / cell
    queries = diff_records(_rows(a / "queries.jsonl"), _rows(b / "queries.jsonl"))
    documents = diff_records(_rows(a / "corpus.jsonl"), _rows(b / "corpus.jsonl"))
    qrels = diff_qrels(_qrels(a / "qrels"), _qrels(b / "qrels"))
    # a cell whose rows are equal but whose files differ (a parquet copy, a new per-split file)
    # is still "changed": the file list below names them
    return CellDiff(cell=cell, status="changed", old=old_c, new=new_c, queries=queries, documents=documents, qrels=qrels)


def diff_releases(old_root: Path, new_root: Path) -> ReleaseDiff:
    old_root, new_root = Path(old_root), Path(new_root)
    old_m, new_m = read_manifest(old_root), read_manifest(new_root)
    old_h, new_h = file_hashes(old_root), file_hashes(new_root)
    cells = [_cell(old_root, new_root, old_m, new_m, old_h, new_h, c) for c in sorted(old_m["cells"].keys() | new_m["cells"].keys())]
    by_status = {s: [c.cell for c in cells if c.status == s] for s in ("added", "removed", "changed", "unchanged")}
    sets_path = "cd/confusion_sets.jsonl"
    same_sets = old_h.get(sets_path) == new_h.get(sets_path)
    sets = IdDiff() if same_sets else diff_records(_rows(old_root / sets_path), _rows(new_root / sets_path), text_field=None)
    files = diff_hashes(old_h, new_h)
    code = None
    if old_m.get("code_version") != new_m.get("code_version"):
        code = ValueChange(key="code_version", kind="changed", old=old_m.get("code_version"), new=new_m.get("code_version"))
    return ReleaseDiff(
        old_release=str(old_root), new_release=str(new_root),
        old_version=str(old_m["version"]), new_version=str(new_m["version"]),
        old_build_id=old_m["build_id"], new_build_id=new_m["build_id"],
        identical=old_m["build_id"] == new_m["build_id"] and not files,
        cells_added=by_status["added"], cells_removed=by_status["removed"],
        cells_changed=by_status["changed"], cells_unchanged=by_status["unchanged"],
        cells=cells, confusion_sets=sets,
        config=diff_values(old_m.get("config", {}), new_m.get("config", {})),
        inputs=diff_hashes(old_m.get("inputs", {}), new_m.get("inputs", {}), moves=True),
        vocabulary_sources=diff_values(old_m.get("sources_srl", {}), new_m.get("sources_srl", {}), flat=False),
        code_version=code, files=files,
    )
