"""Stage: read every configured source into sharded item tables and per-task corpora."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from common.errors import InputError
from schemas.drops import DROP_TABLE, Drop, drop_rows
from tasks.sources.adapters import ADAPTERS, READERS_WITH_DROPS
from tasks.sources.passages import read_passages
from common.parquet import write_parquet

ITEM_SCHEMA = pa.schema([
    ("id", pa.string()), ("task", pa.string()), ("lang", pa.string()), ("text", pa.string()), ("pivot", pa.string()),
    ("passage_ids", pa.list_(pa.string())),
    # multiple-choice options of an item whose gold passages are its answers' concept entries
    ("options", pa.list_(pa.struct([("text", pa.string()), ("pivot", pa.string()), ("correct", pa.bool_())]))),
    # the source's own translations of the text (CasiMedicos' French), realized before the memory
    ("translations", pa.list_(pa.struct([("lang", pa.string()), ("text", pa.string()), ("status", pa.string())]))),
    # what the item's key concepts are, as its source says (`key_concepts`: "text" or "answer"; grounding decides)
    ("key_concepts", pa.string()),
])
# what the sources stage drops (a parallel source's unpaired cases): beside the item shards, read
# by the allocation stage into build_report.json's drops (`source_drops`)
SOURCE_DROPS = "source-drops.parquet"
CORPUS_SCHEMA = pa.schema([("id", pa.string()), ("title", pa.string()), ("text", pa.string())])


def load_sources(sources: list[dict], background: list[dict], languages: list[str], shard_size: int, out_dir: Path) -> dict:
    """Validate all sources; write items-NNNNN.parquet shards and corpus-<task>.parquet.

    Returns {"shards": [...paths], "shard_langs": [[native languages of each shard]],
    "corpora": {task: path}, "items": n, "dropped": path of SOURCE_DROPS}.
    """
    out_dir = Path(out_dir)
    items: dict[str, dict] = {}
    where: dict[str, tuple[str, int]] = {}  # item id -> (file it came from, its source's index)
    corpus: dict[str, dict[str, tuple[str, str, str]]] = {"xqa": {}, "evidence": {}}

    def add_passage(task: str, pid: str, title: str, text: str, origin: str) -> None:
        prev = corpus[task].get(pid)
        if prev is not None and prev[:2] != (title, text):
            raise InputError(origin, f"passage id {pid!r} reused with different text (first in {prev[2]})", field="passages.id")
        corpus[task].setdefault(pid, (title, text, origin))

    drops: list[Drop] = []

    def read(src: dict, prefix: str):
        path, options = Path(src["path"]), src.get("options", {})
        if src["format"] in READERS_WITH_DROPS:
            got = READERS_WITH_DROPS[src["format"]](path, set(languages), **options)
            drops.extend(d.model_copy(update={"item_id": prefix + d.item_id}) for d in got.drops)
            return got.items
        return ADAPTERS[src["format"]](path, set(languages), **options)

    for k, src in enumerate(sources):
        path = Path(src["path"])
        prefix = f"{src['id_prefix']}-" if src.get("id_prefix") else ""
        for n, item in enumerate(read(src, prefix), start=1):
            item_id = prefix + item.id
            if item_id in items:
                first, first_src = where[item_id]
                hint = "; two sources of one format need an `id_prefix` each but one" if first_src != k else ""
                raise InputError(path, f"duplicate item id {item_id!r} (first in {first}{hint})", field="id")
            where[item_id] = (path.name, k)
            items[item_id] = {
                "id": item_id, "task": item.task, "lang": item.lang, "text": item.text,
                # None for a non-English source with no English text: it stays in its language
                "pivot": item.pivot if item.lang != "en" else item.text,
                "passage_ids": sorted(p.id for p in item.passages),
                "options": [o.model_dump() for o in item.options],
                "translations": [t.model_dump() for t in item.translations],
                "key_concepts": src.get("key_concepts", "text"),
            }
            for p in item.passages:
                add_passage(item.task, p.id, p.title, p.text, f"{path.name}:{item_id}")
    for bg in background:
        path = Path(bg["path"])
        for p in read_passages(path):
            add_passage(bg["task"], p.id, p.title, p.text, path.name)
    if not items:
        raise InputError(sources[0]["path"], "no items in any source")
    ordered = [items[k] for k in sorted(items)]
    shards, shard_langs = [], []
    for i in range(0, len(ordered), shard_size):
        p = out_dir / f"items-{i // shard_size:05d}.parquet"
        chunk = ordered[i : i + shard_size]
        write_parquet(pa.Table.from_pylist(chunk, schema=ITEM_SCHEMA), p)
        shards.append(str(p))
        shard_langs.append(sorted({it["lang"] for it in chunk}))
    corpora = {}
    for task, docs in corpus.items():
        rows = [{"id": k, "title": v[0], "text": v[1]} for k, v in sorted(docs.items())]
        p = out_dir / f"corpus-{task}.parquet"
        write_parquet(pa.Table.from_pylist(rows, schema=CORPUS_SCHEMA), p)
        corpora[task] = str(p)
    dropped = out_dir / SOURCE_DROPS
    write_parquet(pa.Table.from_pylist(drop_rows(drops), schema=DROP_TABLE), dropped)
    return {"shards": shards, "shard_langs": shard_langs, "corpora": corpora, "items": len(ordered), "dropped": str(dropped)}


def source_drops(item_shards: list[str]) -> list[Drop]:
    """What the sources stage that wrote these shards dropped (none where it wrote no table)."""
    from common.parquet import rows as table_rows
    from schemas.drops import drops_from_rows
    import pyarrow.parquet as pq

    if not item_shards:
        return []
    path = Path(item_shards[0]).parent / SOURCE_DROPS
    return drops_from_rows(table_rows(pq.read_table(path))) if path.exists() else []
