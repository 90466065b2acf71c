"""HPO's disease annotations (`hpo/phenotype.hpoa`) as the phenotypes of Disease Ontology concepts.

    read_hpoa(path) -> {disease id: {hpo id: frequency}}
    disease_phenotypes(annotations, do_xrefs, term_cui, hp_names) -> {cui: [phenotype name, ...]}, most frequent first
    write_phenotypes / read_phenotypes: the vocabulary's phenotypes.parquet

An exam item whose answer is a disease asks from its findings; the disease's concept entry
(name, synonyms, definition) rarely states them. HPO annotates 12,689 rare diseases (OMIM,
ORPHA, DECIPHER ids) with their phenotypes and how often each occurs; DO reaches those
diseases through its `MIM:` and `ORDO:` cross-references (allXREFinDO.tsv), and a DO term's
concept is its lowest well-formed UMLS CUI (as the open vocabulary chooses it,
umls/obo_vocabulary.py). Only rows of aspect P (phenotypic abnormality) count, never a
`NOT` row (the phenotype is excluded); a phenotype is named by hp.obo's label.

A concept whose DO term cross-references several diseases gets their phenotypes together (a
concept with none of its own, its children's diseases' phenotypes),
ranked by the summed frequency over those diseases (an unstated frequency counts as
`UNSTATED_FREQUENCY`), then by name: deterministic, and the commonest findings first, where
a length-bounded reader (a dense model's 256 tokens) still sees them.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from common.errors import InputError
from common.jsonio import iter_lines
from common.parquet import write_parquet

HPOA = Path("hpo/phenotype.hpoa")
HPOA_COLUMNS = ("database_id", "disease_name", "qualifier", "hpo_id", "reference", "evidence", "onset",
                "frequency", "sex", "modifier", "aspect", "biocuration")
# HPO's frequency terms, as the midpoint of the range each names
FREQUENCY_TERMS = {"HP:0040280": 1.0, "HP:0040281": 0.9, "HP:0040282": 0.55, "HP:0040283": 0.17,
                   "HP:0040284": 0.025, "HP:0040285": 0.0}
UNSTATED_FREQUENCY = 0.5
# DO's cross-reference prefix -> the hpoa database_id prefix of the same disease list
DO_DISEASE_PREFIX = {"MIM": "OMIM", "OMIM": "OMIM", "ORDO": "ORPHA"}  # current DO: MIM:, the 2016 OBO: OMIM:
_RATIO = re.compile(r"^(\d+)/(\d+)$")
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")


def frequency_of(value: str, path: Path, line: int) -> float:
    """An hpoa frequency ("HP:0040281", "3/7", "45%", or empty) as a share in [0, 1]."""
    value = value.strip()
    if not value:
        return UNSTATED_FREQUENCY
    if value in FREQUENCY_TERMS:
        return FREQUENCY_TERMS[value]
    m = _RATIO.match(value)
    if m and int(m.group(2)) > 0 and int(m.group(1)) <= int(m.group(2)):
        return int(m.group(1)) / int(m.group(2))
    m = _PERCENT.match(value)
    if m and float(m.group(1)) <= 100:
        return float(m.group(1)) / 100
    raise InputError(path, f"expected an HPO frequency term, n/m or a percentage, got {value!r}", line=line, field="frequency")


def read_hpoa(path: Path) -> dict[str, dict[str, float]]:
    """database_id -> {hpo_id: frequency} for the phenotypic-abnormality rows not qualified NOT.

    A malformed row (wrong column count, an id that is not HP:nnnnnnn) is an InputError naming its line."""
    if not path.is_file():
        raise InputError(path, "file not found (HPO's disease annotations)")
    out: dict[str, dict[str, float]] = defaultdict(dict)
    header_seen = False
    for line_no, line in iter_lines(path, "HPO's disease annotations"):
        if line.startswith("#") or not line.strip():
            continue
        cells = line.rstrip("\n").split("\t")
        if not header_seen:
            if tuple(cells) != HPOA_COLUMNS:
                raise InputError(path, f"expected the header {' '.join(HPOA_COLUMNS)}", line=line_no)
            header_seen = True
            continue
        if len(cells) != len(HPOA_COLUMNS):
            raise InputError(path, f"expected {len(HPOA_COLUMNS)} tab-separated columns, found {len(cells)}", line=line_no)
        row = dict(zip(HPOA_COLUMNS, cells))
        if not re.fullmatch(r"HP:\d{7}", row["hpo_id"]):
            raise InputError(path, f"expected an HPO id (HP:nnnnnnn), got {row['hpo_id']!r}", line=line_no, field="hpo_id")
        if row["aspect"] != "P" or row["qualifier"] == "NOT":
            continue
        share = frequency_of(row["frequency"], path, line_no)
        phen = out[row["database_id"]]
        phen[row["hpo_id"]] = max(phen.get(row["hpo_id"], 0.0), share)  # one disease, several references
    if not header_seen:
        raise InputError(path, "no header line (expected HPO's phenotype.hpoa)")
    return dict(out)


def do_diseases(xref_rows: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """doid -> the hpoa disease ids (OMIM:/ORPHA:) DO's (doid, xref) pairs name."""
    diseases: dict[str, set[str]] = defaultdict(set)
    for doid, xref in xref_rows:
        prefix, _, code = xref.partition(":")
        if prefix in DO_DISEASE_PREFIX and code.strip():
            diseases[doid].add(f"{DO_DISEASE_PREFIX[prefix]}:{code.strip()}")
    return dict(diseases)


def rank_phenotypes(diseases: Iterable[str], annotations: dict[str, dict[str, float]], names: dict[str, str]) -> list[str]:
    """The named phenotypes of these diseases, by summed frequency (highest first), then name."""
    total: dict[str, float] = defaultdict(float)
    for d in sorted(diseases):
        for hp, share in annotations.get(d, {}).items():
            if share > 0 and names.get(hp):
                total[hp] += share
    ranked = sorted(total, key=lambda hp: (-round(total[hp], 9), names[hp].casefold(), hp))
    out: list[str] = []
    for hp in ranked:
        if names[hp] not in out:
            out.append(names[hp])
    return out


def disease_phenotypes(annotations: dict[str, dict[str, float]], do_xrefs: Iterable[tuple[str, str]],
                       term_cui: dict[str, str], hp_names: dict[str, str],
                       parent_links: Iterable[tuple[str, str]] = ()) -> dict[str, list[str]]:
    """cui -> its phenotypes, for the concepts DO terms with OMIM/ORPHA cross-references became
    (`term_cui`: ontology term id -> its concept, as the open vocabulary chose it). A concept
    without diseases of its own whose children (`parent_links`: (child cui, parent cui)) have
    some gets theirs, pooled: a class's findings are its subtypes' ("muscular dystrophy")."""
    own: dict[str, set[str]] = defaultdict(set)
    for doid, ids in do_diseases(do_xrefs).items():
        if doid in term_cui:
            own[term_cui[doid]] |= ids
    pooled: dict[str, set[str]] = defaultdict(set)
    for child, parent in parent_links:
        if child in own and parent not in own:
            pooled[parent] |= own[child]
    out = {}
    for cui in sorted(set(own) | set(pooled)):
        ranked = rank_phenotypes(own.get(cui) or pooled[cui], annotations, hp_names)
        if ranked:
            out[cui] = ranked
    return out


PHENOTYPE_SCHEMA = pa.schema([("cui", pa.string()), ("rank", pa.int32()), ("phenotype", pa.string())])


def write_phenotypes(phenotypes: dict[str, list[str]], path: Path) -> str:
    """phenotypes.parquet: one row per (cui, rank, phenotype name), sorted by cui and rank."""
    rows = [(cui, i, name) for cui in sorted(phenotypes) for i, name in enumerate(phenotypes[cui])]
    cols = list(zip(*rows)) if rows else [(), (), ()]
    write_parquet(pa.table([pa.array(c, type=f.type) for c, f in zip(cols, PHENOTYPE_SCHEMA)], schema=PHENOTYPE_SCHEMA), Path(path))
    return str(path)


def read_phenotypes(path: str | Path | None) -> dict[str, list[str]]:
    """cui -> phenotype names in rank order, from `write_phenotypes`' table (none without one)."""
    if not path:
        return {}
    import pyarrow.parquet as pq

    out: dict[str, list[str]] = defaultdict(list)
    t = pq.read_table(path)
    for cui, name in zip(t["cui"].to_pylist(), t["phenotype"].to_pylist()):
        out[cui].append(name)
    return dict(out)
