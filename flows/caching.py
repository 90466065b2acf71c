"""Content-addressed cache keys for Prefect tasks that pass file paths, and the completion
record that makes a cache entry trustworthy.

Prefect's INPUTS policy hashes argument values; a path string does not change when the
file behind it does. These keys hash file *contents* (memoised by size and mtime), plus
the task's source code, so an unchanged stage is skipped and a changed input recomputes.

A result record Prefect cannot read (cut short by a full disk: Prefect writes it in place)
is removed before the task looks it up, so the task runs again and records its result anew.

A stage's output folder gets `_complete.json` (every output file with its size and sha256)
only after the stage returned. A cached result is used only while that record matches the
files: a stage killed half-way, a truncated or deleted parquet, or a file edited by hand
gives another cache key, so the stage runs again and rewrites its folder.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
from pathlib import Path
from typing import Any

from common.jsonio import atomic_write, file_digest
from common.version import __version__, code_fingerprint

COMPLETE = "_complete.json"

def _canonical(value: Any) -> Any:
    if isinstance(value, (str, os.PathLike)):
        p = Path(value)
        if len(str(value)) < 4096 and p.is_absolute() and p.is_file():
            return {"file": file_digest(p)}
        if len(str(value)) < 4096 and p.is_absolute() and p.is_dir():
            return {"dir": {f.relative_to(p).as_posix(): file_digest(f) for f in sorted(p.rglob("*")) if f.is_file()}}
        return str(value)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if hasattr(value, "model_dump"):  # a stage's parameters: the files they name by content too
        return _canonical(value.model_dump(mode="json"))
    return value


def content_key(name: str, params: dict, fn=None) -> str:
    """Key over the task name, code and parameter *contents*. `work_dir` is a location,
    not content: it enters as a plain string."""
    plain = {"work_dir": str(params["work_dir"])} if "work_dir" in params else {}
    rest = {k: v for k, v in params.items() if k != "work_dir"}
    payload = {"name": name, "version": __version__, "code": code_fingerprint(), "params": _canonical(rest), "plain": plain}
    if fn is not None:
        payload["source"] = inspect.getsource(fn)
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def output_files(value: Any, out: Path) -> list[Path]:
    """The files under `out` that a stage's result names (absolute path strings, at any depth)."""
    if isinstance(value, str):
        p = Path(value)
        return [p] if len(value) < 4096 and p.is_absolute() and p.is_relative_to(out) and p.is_file() else []
    if isinstance(value, dict):
        return [f for v in value.values() for f in output_files(v, out)]
    if isinstance(value, (list, tuple)):
        return [f for v in value for f in output_files(v, out)]
    return []


def mark_complete(out: Path, result: Any) -> None:
    """Record, after a stage returned, every output file it names with its size and sha256."""
    files = {f.relative_to(out).as_posix(): {"bytes": f.stat().st_size, "sha256": file_digest(f)}
             for f in sorted(set(output_files(result, out)))}
    with atomic_write(out / COMPLETE) as fh:
        fh.write(json.dumps({"files": files}, sort_keys=True, indent=1) + "\n")


def is_complete(out: Path) -> bool:
    """True when `out` holds a completion record and every file in it is intact."""
    try:
        files = json.loads((out / COMPLETE).read_text(encoding="utf-8"))["files"]
        for rel, entry in files.items():
            f = out / rel
            if f.stat().st_size != entry["bytes"] or file_digest(f) != entry["sha256"]:
                return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


def task_cache_key(context, parameters: dict) -> str:
    """Prefect `cache_key_fn`: task source + contents of any files named in the parameters.

    A stage whose output folder is not complete (no completion record, or a file that no
    longer matches it) never uses a cached result: when one is stored under its key, the
    run gets a one-off key instead, so the stage runs again (and rewrites its folder)."""
    key = content_key(context.task.name, dict(parameters), context.task.fn)
    if drop_unreadable_record(context.result_store, key):
        return key  # gone: the task runs again and writes its record anew
    out_of = getattr(context.task.fn, "stage_dir", None)
    if out_of is not None and not is_complete(out_of(dict(parameters))) and _stored(context, key):
        return f"{key}-recompute-{os.urandom(8).hex()}"
    return key


def _record_path(store, key: str) -> Path | None:
    """Where a local result store keeps `key`'s record (Prefect's LocalFileSystem: the
    basepath, PREFECT_LOCAL_STORAGE_PATH = <work>/prefect-results); None elsewhere."""
    storage = getattr(store, "result_storage", None)
    basepath = getattr(storage, "basepath", None)
    if not basepath or getattr(store, "metadata_storage", None) is not None or "://" in str(basepath):
        return None
    return Path(basepath).expanduser() / key


def drop_unreadable_record(store, key: str) -> bool:
    """Remove a result record Prefect cannot read (it writes records in place: a full disk
    leaves one cut short, which the next run would trust and fail on). True when removed."""
    path = _record_path(store, key)
    if path is None or not path.is_file():
        return False
    try:
        store.read(key)
    except Exception:  # noqa: BLE001 - whatever Prefect raises reading it, it is no record
        try:
            path.unlink()
        except OSError:
            return False
        getattr(store, "cache", {}).pop(str(path), None)
        return True
    return False


def _stored(context, key: str) -> bool:
    """Whether Prefect holds a result record under `key` (when it cannot say: assume so)."""
    try:
        return bool(context.result_store.exists(key))
    except Exception:  # noqa: BLE001 - any doubt means: do not trust the record
        return True
