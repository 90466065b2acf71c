"""The translation memory: (source hash, source lang, target lang, engine) -> translation.

Read-only here; it is the build's record of every translation ever accepted, so a
rebuild never re-translates and never changes a translation silently.
"""
from __future__ import annotations

import unicodedata
from pathlib import Path

from pydantic import ValidationError

from common.errors import InputError
from common.jsonio import read_jsonl, sha256_text
from schemas.records import Translation

# A verified (post-edited) entry beats a human one, which beats raw machine output.
STATUS_RANK = {"machine-translated and verified": 0, "human-translated": 1, "machine-translated": 2}


def source_key(text: str) -> str:
    return sha256_text(unicodedata.normalize("NFC", text).strip())


class TranslationMemory:
    def __init__(self, entries: list[Translation] | None = None):
        self._best: dict[tuple[str, str, str], Translation] = {}
        for e in entries or []:
            self.add(e)

    def add(self, entry: Translation) -> None:
        key = (source_key(entry.source), entry.source_lang, entry.target_lang)
        cur = self._best.get(key)
        if cur is None or (STATUS_RANK[entry.status], entry.engine, entry.target) < (STATUS_RANK[cur.status], cur.engine, cur.target):
            self._best[key] = entry

    def lookup(self, text: str, source_lang: str, target_lang: str) -> Translation | None:
        return self._best.get((source_key(text), source_lang, target_lang))

    def __len__(self) -> int:
        return len(self._best)

    @classmethod
    def from_files(cls, paths: list[Path]) -> "TranslationMemory":
        tm = cls()
        for path in paths:
            for line_no, obj in read_jsonl(path):
                try:
                    tm.add(Translation(**obj))
                except ValidationError as exc:
                    err = exc.errors()[0]
                    raise InputError(path, err["msg"], line=line_no, field=".".join(map(str, err["loc"])) or None) from None
        return tm
