"""Derive the embedded sample vocabulary (UMLS RRF format) from open ontologies.

    python -m umls.derive_sample --data ../shared/data --out umls/sample

Reads Disease Ontology (CC0 / CC BY 3.0) and HPO (with its official babelon label
translations) and writes a small, genuine-format UMLS subset: MRCONSO, MRSTY,
MRREL, MRDEF, MRSAB, MRFILES. Only terminology facts are written (CUIs, names,
semantic types, parent links, definitions); the output is a pure function of the
input files, so re-running it reproduces the committed bytes.

Why a branch subset: the sample must stay small (a few thousand concepts) yet keep
whole sub-hierarchies, so that hard-tier confusion sets (siblings) exist.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from collections import defaultdict
from collections.abc import Callable, Set as AbstractSet
from pathlib import Path

from common.errors import InputError
from common.jsonio import iter_lines
from umls.obo import OboTerm, parse_obo

# Sub-hierarchies kept in the sample: a coherent clinical domain
# (heart, lungs, endocrine glands, metabolism) plus the neoplasm and behaviour
# branches, so that several semantic types exist for the easy tier.
DO_ROOTS = {
    "DOID:1287": "cardiovascular system disease",
    "DOID:28": "endocrine system disease",
    "DOID:1579": "respiratory system disease",
    "DOID:9351": "diabetes mellitus",
}
HPO_ROOTS = {
    "HP:0001626": "Abnormality of the cardiovascular system",
    "HP:0000818": "Abnormality of the endocrine system",
    "HP:0002086": "Abnormality of the respiratory system",
}
# Honest UMLS semantic types from ontology branches (first matching ancestor wins).
STY_BY_BRANCH = [
    ("DOID:14566", "T191"),  # disease of cellular proliferation -> Neoplastic Process
    ("DOID:150", "T048"),  # disease of mental health -> Mental or Behavioral Dysfunction
    ("DOID:0050117", "T047"),  # disease by infectious agent -> Disease or Syndrome
    ("DOID:4", "T047"),  # disease -> Disease or Syndrome
    ("HP:0002664", "T191"),  # Neoplasm
    ("HP:0000708", "T048"),  # Behavioral abnormality
    ("HP:0001197", "T019"),  # Abnormality of prenatal development or birth -> Congenital Abnormality
    ("HP:0001939", "T034"),  # Abnormality of metabolism/homeostasis -> Laboratory or Test Result
    ("HP:0025142", "T184"),  # Constitutional symptom -> Sign or Symptom
    ("HP:0012531", "T184"),  # Pain -> Sign or Symptom
    ("HP:0000118", "T033"),  # Phenotypic abnormality -> Finding
]
# Name-based refinement inside HPO: congenital malformations are Congenital Abnormality.
LAB_WORDS = ("level", "concentration", "count", "ratio", "activity")
CONGENITAL_WORDS = ("aplasia", "hypoplasia", "atresia", "congenital", "agenesis")
STY_NAMES = {
    "T019": ("A1.2.2.1", "Congenital Abnormality"),
    "T033": ("A2.2", "Finding"),
    "T034": ("A2.2.1", "Laboratory or Test Result"),
    "T047": ("B2.2.1.2.1", "Disease or Syndrome"),
    "T048": ("B2.2.1.2.1.1", "Mental or Behavioral Dysfunction"),
    "T184": ("A2.2.2", "Sign or Symptom"),
    "T191": ("B2.2.1.2.1.2", "Neoplastic Process"),
}
LAT_BY_LANG = {"en": "ENG", "fr": "FRE", "es": "SPA", "ja": "JPN", "zh": "CHI"}
SAB_BY_LANG = {"fr": "HPOFRE", "es": "HPOSPA", "ja": "HPOJPN", "zh": "HPOCHI"}


def _ancestors(node: str, parents: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = [node]
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def sty_for(term_id: str, name: str, ancestors: set[str]) -> str:
    """The semantic type of a DO or HPO term: its first branch in STY_BY_BRANCH among its
    lineage, congenital and laboratory names told apart."""
    lineage = ancestors | {term_id}
    for branch, tui in STY_BY_BRANCH:
        if branch in lineage:
            if tui == "T033" and any(w in name.lower() for w in CONGENITAL_WORDS):
                return "T019"
            if tui == "T034" and not any(w in name.lower() for w in LAB_WORDS):
                continue  # a metabolic disorder, not a measurement
            return tui
    return "T033" if term_id.startswith("HP:") else "T047"


BABELON_COLUMNS = ("subject_id", "predicate_id", "translation_status", "translation_value")


def read_babelon(path: Path) -> dict[str, str]:
    """Official rdfs:label translations by HPO id (column order differs between files: the
    header names them). Tab-separated, unquoted; a malformed file is one InputError."""
    labels: dict[str, str] = {}
    header: dict[str, int] | None = None
    for line_no, line in iter_lines(path, "HPO's babelon label translations"):
        cells = line.rstrip("\n").split("\t")
        if header is None:
            header = {name: i for i, name in enumerate(cells)}
            missing = [c for c in BABELON_COLUMNS if c not in header]
            if missing:
                raise InputError(path, f"expected a header naming the columns {', '.join(BABELON_COLUMNS)} "
                                       f"(missing: {', '.join(missing)})", line=line_no)
            continue
        if not line.strip():
            continue
        row = {name: cells[i] if i < len(cells) else None for name, i in header.items()}
        if row["predicate_id"] != "rdfs:label" or row["translation_status"] != "OFFICIAL":
            continue
        value = (row["translation_value"] or "").strip()
        if value and value != "NA":
            subject = (row["subject_id"] or "").strip()
            if not subject:
                raise InputError(path, "expected an HPO id", line=line_no, field="subject_id")
            labels.setdefault(subject, value)
    return labels


def new_concept() -> dict:
    """An empty concept record: names per language as (sab, tty, text), sty, parent CUIs, defs by SAB, source term ids."""
    return {"names": defaultdict(list), "sty": None, "parents": set(), "defs": {}, "src": set()}


def hpo_cuis(terms: dict[str, OboTerm]) -> dict[str, list[str]]:
    """The sorted CUIs of each HPO term, from its `UMLS:` cross-references."""
    return {t.id: sorted({x.split(":", 1)[1] for x in t.xrefs if x.startswith("UMLS:")}) for t in terms.values()}


Translations = dict[str, dict[str, "str | list[tuple[str, str]]"]]


def add_term(c: dict, term: OboTerm, sab: str, translations: Translations | None = None, also_en: str = "",
             translation_sabs: dict[str, str] | None = None) -> None:
    """Add an OBO term to the concept record `c`: its id as a source, its name as the English PT and
    its EXACT synonyms (then `also_en`, if any) as SY under `sab`, its official translations in their
    languages under `translation_sabs[lang]` (default SAB_BY_LANG), and its definition (the first
    one per SAB stays). A translation is a label (a PT) or a list of (tty, text) names."""
    c["src"].add(term.id)
    c["names"]["en"].append((sab, "PT", term.name))
    for text, scope in term.synonyms:
        if scope == "EXACT":
            c["names"]["en"].append((sab, "SY", text))
    if also_en:
        c["names"]["en"].append((sab, "SY", also_en))
    sabs = translation_sabs or SAB_BY_LANG
    for lang, labels in (translations or {}).items():
        names = labels.get(term.id)
        if names:
            for tty, text in ([("PT", names)] if isinstance(names, str) else names):
                c["names"][lang].append((sabs[lang], tty, text))
    if term.definition:
        c["defs"].setdefault(sab, term.definition)


def add_terms(
    concepts: dict,
    id_to_cui: dict[str, str],
    sab: str,
    terms: dict[str, OboTerm],
    cuis: dict[str, list[str]],
    ancestors: Callable[[str], AbstractSet[str]],
    roots: AbstractSet[str] | None,
    sty: Callable[[str, str, AbstractSet[str]], str],
    translations: Translations | None = None,
    also_en: dict[str, str] | None = None,
    translation_sabs: dict[str, str] | None = None,
) -> None:
    """Add one ontology's terms to `concepts` (keyed by CUI), in term id order.

    A term is kept when it has a CUI (`cuis`: its sorted CUIs) and it or one of its `ancestors`
    is in `roots` (None: every term); it joins the concept of its lowest CUI (the stable choice),
    recorded in `id_to_cui`, through `add_term`. A concept's semantic type is
    `sty(term_id, name, ancestors)` of its first term."""
    for term_id in sorted(terms):
        term_cuis = cuis.get(term_id)
        if not term_cuis:
            continue
        anc = ancestors(term_id)
        if roots is not None and not (anc | {term_id}) & roots:
            continue
        t = terms[term_id]
        cui = term_cuis[0]
        id_to_cui[term_id] = cui
        c = concepts.setdefault(cui, new_concept())
        add_term(c, t, sab, translations, (also_en or {}).get(term_id, ""), translation_sabs)
        if c["sty"] is None:
            c["sty"] = sty(term_id, t.name, anc)


def collect(data: Path) -> dict:
    """Concepts keyed by CUI: names per language, sty, parents (CUIs), definition."""
    concepts: dict[str, dict] = {}

    # ---- Disease Ontology
    do_cuis: dict[str, list[str]] = defaultdict(list)
    with (data / "disease-ontology/allXREFinDO.tsv").open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            doid, _label, xref = (c.strip('"') for c in line.rstrip("\n").split("\t"))
            if xref.startswith("UMLS_CUI:"):
                do_cuis[doid].append(xref.split(":", 1)[1])
    with (data / "disease-ontology/doid-2016-09-01.obo").open(encoding="utf-8") as fh:
        do_terms = {t.id: t for t in parse_obo(fh, "doid-2016-09-01.obo") if not t.obsolete}
    for t in do_terms.values():
        for x in t.xrefs:
            if x.startswith("UMLS_CUI:") and x.split(":", 1)[1] not in do_cuis[t.id]:
                do_cuis[t.id].append(x.split(":", 1)[1])
    do_parents = {t.id: t.parents for t in do_terms.values()}

    # ---- HPO
    with (data / "hpo/hp.obo").open(encoding="utf-8") as fh:
        hp_terms = {t.id: t for t in parse_obo(fh, "hp.obo") if not t.obsolete}
    hp_parents = {t.id: t.parents for t in hp_terms.values()}
    translations = {lang: read_babelon(data / f"hpo/hp-{lang}.babelon.tsv") for lang in SAB_BY_LANG}

    id_to_cui: dict[str, str] = {}
    add_terms(concepts, id_to_cui, "DO", do_terms, {d: sorted(v) for d, v in do_cuis.items()},
              lambda term_id: _ancestors(term_id, do_parents), set(DO_ROOTS), sty_for)
    add_terms(concepts, id_to_cui, "HPO", hp_terms, hpo_cuis(hp_terms),
              lambda term_id: _ancestors(term_id, hp_parents), set(HPO_ROOTS), sty_for, translations)
    # parent links between kept concepts (nearest kept ancestor is not inferred: direct is_a only)
    for term_id, cui in id_to_cui.items():
        parents = do_parents.get(term_id) or hp_parents.get(term_id) or []
        for p in parents:
            pc = id_to_cui.get(p)
            if pc and pc != cui:
                concepts[cui]["parents"].add(pc)
    return concepts


def _rid(prefix: str, key: str, width: int = 8) -> str:
    """Deterministic identifier from content (stable when unrelated rows change)."""
    return prefix + str(int(hashlib.sha256(key.encode()).hexdigest()[:12], 16) % 10**width).zfill(width)


def write_rrf(concepts: dict, out: Path) -> dict[str, int]:
    out.mkdir(parents=True, exist_ok=True)
    conso, sty, rel, mrdef = [], [], [], []
    for cui in sorted(concepts):
        c = concepts[cui]
        for lang in sorted(c["names"]):
            lat = LAT_BY_LANG[lang]
            seen: set[str] = set()
            for i, (sab, tty, text) in enumerate(c["names"][lang]):
                text = " ".join(text.replace("|", " ").split())
                if not text or text.lower() in seen:
                    continue
                seen.add(text.lower())
                pref = "Y" if i == 0 else "N"
                ts = "P" if i == 0 else "S"
                aui = _rid("A", f"{cui}|{lat}|{sab}|{text}")
                lui = _rid("L", f"{lat}|{text.lower()}", 7)
                sui = _rid("S", f"{lat}|{text}", 7)
                code = sorted(s for s in c["src"] if (s.startswith("HP:") == sab.startswith("HPO")))
                conso.append(
                    [cui, lat, ts, lui, "PF", sui, pref, aui, "", code[0] if code else "", "", sab, tty,
                     code[0] if code else "", text, "0", "N", ""]
                )
        tree, name = STY_NAMES[c["sty"]]
        sty.append([cui, c["sty"], tree, name, _rid("AT", f"{cui}|{c['sty']}"), ""])
        for p in sorted(c["parents"]):
            sab = "DO" if any(s.startswith("DOID") for s in c["src"]) else "HPO"
            rel.append([cui, "", "CUI", "PAR", p, "", "CUI", "isa", _rid("R", f"{cui}|PAR|{p}"), "", sab, sab, "", "Y", "N", ""])
            rel.append([p, "", "CUI", "CHD", cui, "", "CUI", "inverse_isa", _rid("R", f"{p}|CHD|{cui}"), "", sab, sab, "", "Y", "N", ""])
        for sab, text in sorted(c["defs"].items()):
            text = " ".join(text.replace("|", " ").split())
            mrdef.append([cui, "", _rid("AT", f"{cui}|DEF|{sab}"), "", sab, text, "N", ""])
    rel.sort()
    files = {"MRCONSO.RRF": conso, "MRSTY.RRF": sty, "MRREL.RRF": rel, "MRDEF.RRF": mrdef}
    sab_rows = []
    for vsab, son, lat in [
        ("DO", "Human Disease Ontology", "ENG"),
        ("HPO", "Human Phenotype Ontology", "ENG"),
        ("HPOFRE", "Human Phenotype Ontology, French", "FRE"),
        ("HPOSPA", "Human Phenotype Ontology, Spanish", "SPA"),
        ("HPOJPN", "Human Phenotype Ontology, Japanese", "JPN"),
        ("HPOCHI", "Human Phenotype Ontology, Chinese", "CHI"),
    ]:
        # VCUI|RCUI|VSAB|RSAB|SON|SF|SVER|VSTART|VEND|IMETA|RMETA|SLC|SCC|SRL|TFR|CFR|CXTY|TTYL|ATNL|LAT|CENC|CURVER|SABIN|SSN|SCIT
        sab_rows.append(["", "", vsab, vsab, son, vsab, "", "", "", "", "", "", "", "0", "", "", "", "PT,SY", "", lat, "UTF-8", "Y", "Y", son, ""])
    files["MRSAB.RRF"] = sab_rows
    counts = {}
    for name, rows in files.items():
        with (out / name).open("w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write("|".join(row) + "|\n")
        counts[name] = len(rows)
    write_mrfiles(out, counts)
    return counts


# MRFILES.RRF: each file's description and columns
MRFILES_COLUMNS = {
    "MRCONSO.RRF": ("Concept names and sources", "CUI,LAT,TS,LUI,STT,SUI,ISPREF,AUI,SAUI,SCUI,SDUI,SAB,TTY,CODE,STR,SRL,SUPPRESS,CVF"),
    "MRDEF.RRF": ("Definitions", "CUI,AUI,ATUI,SATUI,SAB,DEF,SUPPRESS,CVF"),
    "MRREL.RRF": ("Related Concepts", "CUI1,AUI1,STYPE1,REL,CUI2,AUI2,STYPE2,RELA,RUI,SRUI,SAB,SL,RG,DIR,SUPPRESS,CVF"),
    "MRSAB.RRF": ("Source Information", "VCUI,RCUI,VSAB,RSAB,SON,SF,SVER,VSTART,VEND,IMETA,RMETA,SLC,SCC,SRL,TFR,CFR,CXTY,TTYL,ATNL,LAT,CENC,CURVER,SABIN,SSN,SCIT"),
    "MRSTY.RRF": ("Semantic Types", "CUI,TUI,STN,STY,ATUI,CVF"),
}


def write_mrfiles(out: Path, rows: dict[str, int]) -> None:
    """out/MRFILES.RRF for the files of MRFILES_COLUMNS already in `out`: description, columns,
    row count (`rows`, by file name) and size in bytes."""
    with (out / "MRFILES.RRF").open("w", encoding="utf-8", newline="\n") as fh:
        for name in sorted(MRFILES_COLUMNS):
            des, fmt = MRFILES_COLUMNS[name]
            size = (out / name).stat().st_size
            fh.write(f"{name}|{des}|{fmt}|{len(fmt.split(','))}|{rows[name]}|{size}|\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--out", type=Path, default=Path("umls/sample"))
    args = ap.parse_args(argv)
    if not (args.data / "hpo/hp.obo").exists():
        print(f"error: {args.data}/hpo/hp.obo: not found (the derivation needs ../shared/data)", file=sys.stderr)
        return 2
    concepts = collect(args.data)
    counts = write_rrf(concepts, args.out)
    print(f"concepts={len(concepts)} " + " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
