"""Pure comparison of two releases' contents (no file access: `stage.py` reads the folders)."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from schemas.diff import FileChange, IdDiff, QrelDiff, QrelRow, RecordChange, ValueChange


def text_hash(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def diff_records(old: Mapping[str, dict], new: Mapping[str, dict], text_field: str | None = "text") -> IdDiff:
    """Rows keyed by id: ids added, removed, and kept with different content (which fields)."""
    changed = []
    for rid in sorted(old.keys() & new.keys()):
        a, b = old[rid], new[rid]
        fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        if fields:
            hashes = {}
            if text_field is not None:
                hashes = {"old_text_sha256": text_hash(a.get(text_field)), "new_text_sha256": text_hash(b.get(text_field))}
            changed.append(RecordChange(id=rid, fields=fields, **hashes))
    return IdDiff(added=sorted(new.keys() - old.keys()), removed=sorted(old.keys() - new.keys()), changed=changed)


def diff_qrels(old: Iterable[tuple[str, str, int, str]], new: Iterable[tuple[str, str, int, str]]) -> QrelDiff:
    """Qrel rows (query, document, score, split) as sets: a changed score is one removed and one added row."""
    a, b = set(old), set(new)

    def rows(s):
        return [QrelRow(query_id=q, corpus_id=d, score=sc, split=sp) for q, d, sc, sp in sorted(s)]

    return QrelDiff(added=rows(b - a), removed=rows(a - b))


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested dict as dotted keys; lists stay values (a language list is one setting)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k in sorted(value):
            out.update(flatten(value[k], f"{prefix}.{k}" if prefix else str(k)))
        return out if out or not prefix else {prefix: {}}
    return {prefix: value}


def diff_values(old: Mapping[str, Any], new: Mapping[str, Any], flat: bool = True) -> list[ValueChange]:
    a, b = (flatten(old), flatten(new)) if flat else (dict(old), dict(new))
    out = []
    for key in sorted(a.keys() | b.keys()):
        if key not in b:
            out.append(ValueChange(key=key, kind="removed", old=a[key]))
        elif key not in a:
            out.append(ValueChange(key=key, kind="added", new=b[key]))
        elif a[key] != b[key]:
            out.append(ValueChange(key=key, kind="changed", old=a[key], new=b[key]))
    return out


def diff_hashes(old: Mapping[str, str], new: Mapping[str, str], moves: bool = False) -> list[FileChange]:
    """Path -> sha256 maps (a manifest's inputs or files). With `moves`, a path that is gone and a
    new path with the same bytes are one "moved" entry (an input named from another config folder)."""
    removed = sorted(p for p in old.keys() - new.keys())
    added = sorted(p for p in new.keys() - old.keys())
    out = [FileChange(path=p, kind="changed", old_sha256=old[p], new_sha256=new[p])
           for p in sorted(old.keys() & new.keys()) if old[p] != new[p]]
    if moves:
        gone_by_hash: dict[str, list[str]] = {}
        for p in removed:
            gone_by_hash.setdefault(old[p], []).append(p)
        still_added = []
        for p in added:
            candidates = gone_by_hash.get(new[p])
            if candidates:
                src = candidates.pop(0)
                removed.remove(src)
                out.append(FileChange(path=p, kind="moved", old_path=src, old_sha256=old[src], new_sha256=new[p]))
            else:
                still_added.append(p)
        added = still_added
    out += [FileChange(path=p, kind="removed", old_sha256=old[p]) for p in removed]
    out += [FileChange(path=p, kind="added", new_sha256=new[p]) for p in added]
    return sorted(out, key=lambda f: (f.path, f.kind))
