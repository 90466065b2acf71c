"""The grounding stage's parquet reads: a shard's rows of the corpora and atoms tables,
concepts' semantic groups and definedness, and the names of the concepts an item is keyed
by, each read without decoding what the shard does not name.
"""
from __future__ import annotations

import functools
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.parquet import pylist
from tasks.grounding.keys import padded_words


_READ_BATCH = 1 << 17  # rows decoded at a time


def read_rows(path: str, key: str, values: list[str], columns: list[str]) -> pa.Table:
    """The rows of a parquet table whose `key` is one of `values`, in file order, read a
    batch at a time (never the whole table: atoms and concepts are millions of rows, and
    shard tasks run side by side). A row group's key column is read first, and its other
    columns only if it holds a wanted key: a shard of exam questions names no evidence
    passage, and the passages' text was most of a paper build's grounding I/O."""
    wanted = pa.array(values, pa.string())
    f = pq.ParquetFile(path)
    parts = []
    for group in range(f.metadata.num_row_groups):
        keep = pc.is_in(f.read_row_group(group, columns=[key]).column(0), value_set=wanted).combine_chunks()
        if not pc.any(keep).as_py():
            continue
        start = 0
        for b in f.iter_batches(batch_size=_READ_BATCH, row_groups=[group], columns=columns):
            parts.append(pa.Table.from_batches([b]).filter(keep.slice(start, b.num_rows)))
            start += b.num_rows
    return pa.concat_tables(parts) if parts else f.schema_arrow.empty_table().select(columns)


@functools.lru_cache(maxsize=2)
def _concept_facts(path: str, stamp: tuple[int, int]) -> pa.Table:
    """Every concept's CUI, semantic group and whether it has a definition, read once per
    process (`stamp`: the file's size and mtime, so a rewritten file is read again): each
    shard decoded every definition to learn which of its concepts have one (0.45 of a paper
    build's 35 grounding CPU s). Without the definitions' text this is about 20 bytes a
    concept."""
    f = pq.ParquetFile(path)
    parts = [pa.table({"cui": b["cui"], "group": b["group"],
                       "defined": pa.array([bool(d and d.strip()) for d in pylist(b["definition"])], pa.bool_())})
             for b in f.iter_batches(batch_size=_READ_BATCH, columns=["cui", "group", "definition"])]
    return pa.concat_tables(parts) if parts else pa.table({"cui": pa.array([], pa.string()), "group": pa.array([], pa.string()),
                                                           "defined": pa.array([], pa.bool_())})


def concept_facts(path: str, cuis: list[str]) -> tuple[dict[str, str], set[str]]:
    """(semantic group by CUI, the CUIs with a definition) of these concepts."""
    st = os.stat(path)
    facts = _concept_facts(path, (st.st_size, st.st_mtime_ns))
    t = facts.filter(pc.is_in(facts["cui"], value_set=pa.array(cuis, pa.string())))
    cui = pylist(t["cui"])
    return dict(zip(cui, pylist(t["group"]))), {c for c, d in zip(cui, pylist(t["defined"])) if d}


def forget_concept_facts() -> None:
    """Drop the concept facts read (GROUNDERS.clear, once all shards are grounded)."""
    _concept_facts.cache_clear()


def names_of(atoms_paths: list[str], cuis: set[str]) -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    wanted = sorted(cuis)
    for path in atoms_paths:
        t = read_rows(path, "cui", wanted, ["cui", "str"])
        for cui, text in zip(pylist(t["cui"]), pylist(t["str"])):
            name = padded_words(text).strip()
            if len(name) >= 3 or (name and not name.isascii()):
                names.setdefault(cui, set()).add(name)
    return names
