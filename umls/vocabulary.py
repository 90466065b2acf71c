"""Turn a UMLS release (RRF) into the builder's concept tables (parquet).

Outputs, all sorted so that the bytes are a function of the input:
  atoms.parquet     cui, lang, str, ispref, sab, tty   (languages of the build, SRL <= max)
  concepts.parquet  cui, tui, sty, group, name_en, definition, definition_source (the definition's SAB)
  parents.parquet   cui, parent                       (MRREL PAR/RB, both directions folded)
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.errors import InputError
from common.parquet import write_parquet
from umls.rrf import read_rrf, read_rrf_table
from umls.semgroups import group_of

def _allowed_sabs(rrf_dir: Path, max_srl: int) -> set[str] | None:
    mrsab = rrf_dir / "MRSAB.RRF"
    if not mrsab.exists():
        return None
    tb = read_rrf_table(mrsab, ["RSAB", "SRL"])
    return {s for s, r in zip(tb["RSAB"].to_pylist(), tb["SRL"].to_pylist()) if int(r) <= max_srl}


def load_atoms(rrf_dir: Path, lat_to_lang: dict[str, str], max_srl: int, all_cuis: list | None = None) -> pa.Table:
    """Stream MRCONSO, keep the build's languages and licence-permitted atoms.

    `all_cuis`, when given, collects every licence-permitted CUI in any language, so that
    the concept table does not depend on which languages a build has (a list that receives
    one arrow array of distinct CUIs)."""
    lats = pa.array(sorted(lat_to_lang))
    allowed = _allowed_sabs(rrf_dir, max_srl)
    allowed_arr = pa.array(sorted(allowed)) if allowed is not None else None
    parts, cui_parts = [], []
    for batch in read_rrf(rrf_dir / "MRCONSO.RRF", ["CUI", "LAT", "ISPREF", "SAB", "TTY", "STR", "SRL", "SUPPRESS"]):
        permitted = pc.and_(pc.less_equal(pc.cast(batch.column("SRL"), pa.int8()), max_srl), pc.not_equal(batch.column("SUPPRESS"), "O"))
        if allowed_arr is not None:
            permitted = pc.and_(permitted, pc.is_in(batch.column("SAB"), value_set=allowed_arr))
        if all_cuis is not None:
            cui_parts.append(pc.unique(batch.column("CUI").filter(permitted)))
        mask = pc.and_(pc.is_in(batch.column("LAT"), value_set=lats), permitted)
        parts.append(pa.Table.from_batches([batch]).filter(mask))
    if all_cuis is not None:
        all_cuis.append(pc.unique(pa.chunked_array(cui_parts, pa.string())) if cui_parts else pa.array([], pa.string()))
    tb = pa.concat_tables(parts) if parts else pa.table({})
    if tb.num_rows == 0:
        raise InputError(rrf_dir / "MRCONSO.RRF", f"no atoms in the build's languages ({', '.join(sorted(lat_to_lang))}) at SRL <= {max_srl}")
    lat_keys = sorted(lat_to_lang)
    lang = pc.take(pa.array([lat_to_lang[k] for k in lat_keys]), pc.index_in(tb["LAT"], value_set=pa.array(lat_keys)))
    out = pa.table({
        "cui": tb["CUI"], "lang": lang, "str": tb["STR"],
        "ispref": pc.equal(tb["ISPREF"], "Y"), "sab": tb["SAB"], "tty": tb["TTY"],
    })
    # Input order is kept: it is a function of the input bytes (so outputs stay deterministic),
    # and re-sorting millions of atoms cost more than reading them (a random-access take).
    return out


def _first_per_key(table: pa.Table, key: str, order: list[tuple[str, str]]) -> pa.Table:
    """Vectorised 'first row per key' after sorting by (key, *order)."""
    if table.num_rows == 0:
        return table
    t = table.sort_by([(key, "ascending")] + order)
    k = t[key].combine_chunks()
    first = pc.not_equal(k.slice(1), k.slice(0, len(k) - 1))
    mask = pa.concat_arrays([pa.array([True]), first.combine_chunks() if hasattr(first, "combine_chunks") else first])
    return t.filter(mask)


def load_concepts(rrf_dir: Path, atoms: pa.Table, preferred_en: list[str], all_cuis: list | None = None) -> pa.Table:
    """One row per concept: first semantic type, preferred English name, first definition.

    Vectorised (sort + first-per-key): at full scale these tables hold millions of rows."""
    sty = _first_per_key(read_rrf_table(rrf_dir / "MRSTY.RRF", ["CUI", "TUI", "STY"]), "CUI", [("TUI", "ascending")])
    if (rrf_dir / "MRDEF.RRF").exists():
        defs = _first_per_key(read_rrf_table(rrf_dir / "MRDEF.RRF", ["CUI", "SAB", "DEF"]), "CUI",
                              [("SAB", "ascending"), ("DEF", "ascending")])
    else:
        defs = pa.table({"CUI": pa.array([], pa.string()), "SAB": pa.array([], pa.string()), "DEF": pa.array([], pa.string())})
    en = atoms.filter(pc.equal(atoms["lang"], "en")).select(["cui", "str", "ispref", "sab", "tty"])
    rank = pc.index_in(en["sab"], value_set=pa.array(preferred_en, pa.string()))
    en = en.append_column("rank", pc.fill_null(rank, len(preferred_en))).append_column("nopref", pc.invert(en["ispref"]))
    # an abbreviation never names a concept while it has a spelled-out name ("SBH")
    en = en.append_column("abbrev", pc.is_in(en["tty"], value_set=pa.array(["AB", "ACR"])))
    names = _first_per_key(en, "cui", [("abbrev", "ascending"), ("nopref", "ascending"), ("rank", "ascending"), ("str", "ascending")])
    cuis = all_cuis[0] if all_cuis else pc.unique(atoms["cui"])
    base = pa.table({"cui": pa.array(cuis, pa.string())})
    base = base.join(sty.select(["CUI", "TUI", "STY"]), "cui", "CUI", join_type="left outer")
    base = base.join(names.select(["cui", "str"]), "cui", join_type="left outer")
    base = base.join(defs.select(["CUI", "SAB", "DEF"]), "cui", "CUI", join_type="left outer")
    base = base.sort_by("cui")
    tui = pc.fill_null(base["TUI"], "T000")
    # a few hundred distinct types: map each once, not each of millions of concepts
    types = pc.unique(tui)
    groups = pc.take(pa.array([group_of(t) for t in types.to_pylist()], pa.string()), pc.index_in(tui, value_set=types))
    return pa.table({
        "cui": base["cui"], "tui": tui, "sty": pc.fill_null(base["STY"], "Unknown"), "group": groups,
        "name_en": pc.fill_null(base["str"], ""), "definition": pc.fill_null(base["DEF"], ""),
        "definition_source": pc.fill_null(base["SAB"], ""),
    })


def load_parents(rrf_dir: Path) -> pa.Table:
    """Distinct (child, parent) pairs from MRREL: PAR/RB name the parent in CUI2, CHD/RN in CUI1."""
    schema = pa.schema([("cui", pa.string()), ("parent", pa.string())])
    path = rrf_dir / "MRREL.RRF"
    parts = []
    if path.exists():
        for b in read_rrf(path, ["CUI1", "REL", "CUI2"]):
            up = pc.is_in(b["REL"], value_set=pa.array(["PAR", "RB"]))
            down = pc.is_in(b["REL"], value_set=pa.array(["CHD", "RN"]))
            parts.append(pa.table({"cui": b["CUI1"].filter(up), "parent": b["CUI2"].filter(up)}, schema=schema))
            parts.append(pa.table({"cui": b["CUI2"].filter(down), "parent": b["CUI1"].filter(down)}, schema=schema))
    if not parts:
        return schema.empty_table()
    pairs = pa.concat_tables(parts)
    pairs = pairs.filter(pc.not_equal(pairs["cui"], pairs["parent"]))
    pairs = pairs.group_by(["cui", "parent"]).aggregate([])
    return pairs.select(["cui", "parent"]).sort_by([("cui", "ascending"), ("parent", "ascending")])


def build_vocabulary(rrf_dir: Path, out_dir: Path, lat_to_lang: dict[str, str], max_srl: int, preferred_en: list[str]) -> dict[str, str]:
    rrf_dir, out_dir = Path(rrf_dir), Path(out_dir)
    for required in ("MRCONSO.RRF", "MRSTY.RRF"):
        if not (rrf_dir / required).exists():
            raise InputError(rrf_dir / required, "file not found (a UMLS release folder needs MRCONSO.RRF and MRSTY.RRF)")
    all_cuis: list = []
    atoms = load_atoms(rrf_dir, lat_to_lang, max_srl, all_cuis)
    concepts = load_concepts(rrf_dir, atoms, preferred_en, all_cuis)
    parents = load_parents(rrf_dir)
    return write_vocabulary(atoms, concepts, parents, out_dir, sorted(set(lat_to_lang.values())))


def write_vocabulary(atoms: pa.Table, concepts: pa.Table, parents: pa.Table, out_dir: Path, languages: list[str]) -> dict:
    """Write the tables, plus one atoms file per language: a stage that needs only some
    languages depends only on their files, so adding a language leaves its cache intact."""
    out_dir = Path(out_dir)
    paths = {"atoms": out_dir / "atoms.parquet", "concepts": out_dir / "concepts.parquet", "parents": out_dir / "parents.parquet"}
    write_parquet(atoms, paths["atoms"])
    write_parquet(concepts, paths["concepts"])
    write_parquet(parents, paths["parents"])
    by_lang = {}
    for lang in languages:
        p = out_dir / f"atoms-{lang}.parquet"
        write_parquet(atoms.filter(pc.equal(atoms["lang"], lang)), p)
        by_lang[lang] = str(p)
    return {**{k: str(v) for k, v in paths.items()}, "atoms_by_lang": by_lang}
