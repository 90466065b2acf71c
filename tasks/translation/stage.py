"""Stage: how can each item be said in each build language?

Order of sources (DESIGN.md §3): native text; for English, the item's pivot; the
translation memory. Every non-native text passes the gates first; a rejection is kept
with its reason (text, for people) and its gates' names (for counting), and an item with
nothing to offer in a language with its typed cause, so the release's report can count both.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.config import Language
from schemas.gates import UNREALIZED_TEXT, Unrealized
from tasks.translation import langid
from tasks.translation.gates import detect_languages, text_gates, translation_gates
from tasks.translation.memory import TranslationMemory
from common.jsonio import write_jsonl
from common.parquet import rows as table_rows, write_parquet

# one row per item and target language. `rejected`: why the text is not used, as written
# (the gates' failures joined by "; ", or the unrealized cause's words), None when accepted;
# `gates`: the failed gates' names (schemas.gates.GateName); `unrealized`: the cause
# (schemas.gates.Unrealized) when the item offers no text. Readers count these two columns.
REALIZED_SCHEMA = pa.schema([
    ("id", pa.string()), ("lang", pa.string()), ("text", pa.string()), ("provenance", pa.string()), ("rejected", pa.string()),
    ("gates", pa.list_(pa.string())), ("unrealized", pa.string()),
])
PROVENANCE_OF_STATUS = {
    "human-translated": "human-translated",
    "machine-translated": "machine-translated",
    "machine-translated and verified": "machine-translated and verified",
}


class Candidate(NamedTuple):
    """What an item offers for one target language, before the gates."""

    text: str  # "" when there is nothing
    provenance: str
    source: str | None = None  # the text it translates (None: a native text, gated on its own)
    source_lang: str | None = None
    missing: Unrealized | None = None  # why there is nothing


def candidate(item: dict, code: str, tm: TranslationMemory) -> Candidate:
    """Pure: the item's own text in its language; for English, its pivot; else the source's own
    translation of the item into `code`, else the memory's translation of the pivot (DESIGN.md §3)."""
    if code == item["lang"]:
        return Candidate(item["text"], "native")
    own = next((t for t in item.get("translations") or [] if t["lang"] == code), None)
    if own is not None and code != "en":  # the source's own translation (CasiMedicos' French), gated as one
        return Candidate(own["text"], PROVENANCE_OF_STATUS[own["status"]], item["text"], item["lang"])
    if not item["pivot"]:
        return Candidate("", "", missing="no-pivot")
    if code == "en":
        return Candidate(item["pivot"], "human-translated", item["text"], item["lang"])
    entry = tm.lookup(item["pivot"], "en", code)
    if entry is None:
        return Candidate("", "", missing="no-translation")
    return Candidate(entry.target, PROVENANCE_OF_STATUS[entry.status], item["pivot"], "en")


def realize_item(item: dict, languages: dict[str, Language], tm: TranslationMemory, targets: list[str] | None = None,
                 backend: str | None = None) -> list[dict]:
    """Pure: one row per target language (default: every language given), accepted
    (rejected=None, gates=[]) or with the reason (REALIZED_SCHEMA). `languages` must hold
    the item's own language and en."""
    rows = []
    for code in targets or list(languages):
        c = candidate(item, code, tm)
        if c.missing:
            rows.append({"id": item["id"], "lang": code, "text": "", "provenance": "", "rejected": UNREALIZED_TEXT[c.missing],
                         "gates": [], "unrealized": c.missing})
            continue
        if c.source is None:
            failures = text_gates(c.text, languages[code], backend)
        else:
            failures = translation_gates(c.source, c.text, languages[c.source_lang], languages[code], backend)
        rows.append({"id": item["id"], "lang": code, "text": c.text, "provenance": c.provenance,
                     "rejected": "; ".join(map(str, failures)) or None, "gates": [f.gate for f in failures], "unrealized": None})
    return rows


def realize_shard(shard: str, target: str, languages: dict[str, dict], memory: list[str], out_path: str,
                  langid_backend: str | None = None) -> str:
    """One shard into one target language: adding a language adds tasks, changes none."""
    langs = {k: Language.model_validate(v) for k, v in languages.items()}
    tm = TranslationMemory.from_files([Path(p) for p in memory])
    items = table_rows(pq.read_table(shard))
    rows = []
    with langid.detected_in_batches():
        # the texts the gates will identify, identified at once (lingua: all cores, about 3x
        # faster than one at a time, the same answers); the gates then find them done
        detect_languages(gated_texts(items, target, tm), langs[target].code, langid_backend)
        for item in items:
            rows.extend(realize_item(item, langs, tm, [target], langid_backend))
    write_parquet(pa.Table.from_pylist(rows, schema=REALIZED_SCHEMA), Path(out_path))
    return out_path


def gated_texts(items: list[dict], target: str, tm: TranslationMemory) -> list[str]:
    """The texts `realize_item` puts through the gates for `target` (`candidate`'s)."""
    return [c.text for c in (candidate(item, target, tm) for item in items) if not c.missing]


def split_memory(memory: list[str], targets: list[str], out_dir: str) -> dict[str, str]:
    """Translation-memory entries by target language, one canonical file each, so that a
    realize task depends only on its own language's entries."""
    from pydantic import ValidationError

    from common.errors import InputError
    from common.jsonio import read_jsonl
    from schemas.records import Translation

    by_target: dict[str, list[dict]] = {t: [] for t in targets}
    for path in memory:
        for line, obj in read_jsonl(Path(path)):
            try:
                entry = Translation(**obj)
            except ValidationError as exc:
                err = exc.errors()[0]
                raise InputError(path, err["msg"], line=line, field=".".join(map(str, err["loc"])) or None) from None
            if entry.target_lang in by_target:
                by_target[entry.target_lang].append(entry.model_dump())
    out = {}
    for target, rows in by_target.items():
        p = Path(out_dir) / f"memory-{target}.jsonl"
        rows.sort(key=lambda r: (r.get("source", ""), r.get("source_lang", ""), r.get("engine", ""), r.get("status", ""), r.get("target", "")))
        write_jsonl(p, rows)
        out[target] = str(p)
    return out
