"""Content-addressed cache keys for Prefect tasks that pass file paths.

Prefect's INPUTS policy hashes argument values; a path string does not change when the
file behind it does. These keys hash file *contents* (memoised by size and mtime), plus
the task's source code, so an unchanged stage is skipped and a changed input recomputes.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
from pathlib import Path
from typing import Any

from common.version import __version__, code_fingerprint

_FILE_MEMO: dict[tuple[str, int, int], str] = {}


def file_digest(path: Path) -> str:
    st = path.stat()
    memo_key = (str(path), st.st_size, st.st_mtime_ns)
    if memo_key not in _FILE_MEMO:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                h.update(block)
        _FILE_MEMO[memo_key] = h.hexdigest()
    return _FILE_MEMO[memo_key]


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
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
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


def task_cache_key(context, parameters: dict) -> str:
    """Prefect `cache_key_fn`: task source + contents of any files named in the parameters."""
    return content_key(context.task.name, dict(parameters), context.task.fn)
