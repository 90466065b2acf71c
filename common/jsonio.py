"""Deterministic file I/O: canonical JSON lines, sha256, atomic writes."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from common.errors import InputError


def dumps(obj: Any) -> str:
    """Canonical JSON: sorted keys, no ASCII escaping, compact separators."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def write_jsonl(path: Path, records: Iterable[dict]) -> int:
    n = 0
    with atomic_write(path) as fh:
        for rec in records:
            fh.write(dumps(rec) + "\n")
            n += 1
    return n


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object); a malformed line raises InputError naming it."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    with path.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"invalid JSON ({exc.msg} at column {exc.colno})", line_no) from None
            if not isinstance(obj, dict):
                raise InputError(path, "expected a JSON object", line_no)
            yield line_no, obj


class atomic_write:
    """Write to a temporary file beside `path`, fsync, then rename: never half-written."""

    def __init__(self, path: Path, mode: str = "w"):
        self.path, self.mode = Path(path), mode

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        kwargs = {} if "b" in self.mode else {"encoding": "utf-8", "newline": "\n"}
        self.fh = os.fdopen(fd, self.mode, **kwargs)
        return self.fh

    def __exit__(self, exc_type, exc, tb):
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        if exc_type is None:
            os.replace(self.tmp, self.path)
        else:
            os.unlink(self.tmp)
        return False


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
