"""The translation memory's lines, and the JSONL writer every generated file goes through."""
from __future__ import annotations

import json
import random
from pathlib import Path


def _dumps(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")) + "\n"


class JsonlWriter:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = path.open("w", encoding="utf-8", newline="\n", buffering=1 << 20)
        self.buf: list[str] = []
        self.rows = 0

    def add(self, obj: dict) -> None:
        self.buf.append(_dumps(obj))
        self.rows += 1
        if len(self.buf) >= 20_000:
            self.fh.write("".join(self.buf))
            self.buf.clear()

    def close(self) -> None:
        self.fh.write("".join(self.buf))
        self.fh.close()


def tm_entry(rng: random.Random, source: str, target: str, lang: str) -> list[dict]:
    u = rng.random()
    base = {"source_lang": "en", "target_lang": lang, "source": source, "target": target}
    if u < .35:
        return [{**base, "origin": "human", "engine": "human", "status": "human-translated"}]
    if u < .80:
        return [{**base, "origin": "machine", "engine": rng.choice(["google", "deepl", "microsoft"]), "status": "machine-translated"}]
    engine = rng.choice(["deepl", "google"])
    out = [{**base, "origin": "machine", "engine": engine, "status": "machine-translated and verified"}]
    if rng.random() < .3:  # the raw output the post-editor accepted unchanged is kept too
        out.append({**base, "origin": "machine", "engine": engine, "status": "machine-translated"})
    return out
