"""The builder's vocabulary tables from open ontologies: a build without a UMLS licence.

    build_obo_vocabulary(data_dir, out_dir, lat_to_lang, preferred_en, roots="all")

Reads, under `data_dir` (the layout of ../shared/data):

  disease-ontology/doid-2016-09-01.obo   DO terms: names, EXACT synonyms, definitions, is_a
  disease-ontology/allXREFinDO.tsv       current DO: UMLS_CUI cross-references and labels
  disease-ontology/HumanDO.tsv           current DO: parents (by label), for terms the 2016 OBO lacks
  hpo/hp.obo                             HPO terms with their `UMLS:` cross-references
  hpo/hp-<code>.babelon.tsv              official HPO label translations, one table per language: the
                                         table of a build language's registry code becomes that
                                         language's atoms (SAB "HPO" + its UMLS LAT: HPOFRE, HPOGER, ...)
  hpo/hp-<code>.synonyms.tsv             official exact synonyms in that language (optional; SY atoms)
  hpo/phenotype.hpoa                     HPO's disease annotations (optional): phenotypes.parquet, the
                                         phenotypes of DO concepts (umls/hpo.py), stated in xqa's entries

and writes the three tables `umls.vocabulary.build_vocabulary` writes from a UMLS release
(same columns, types and sort order, via `common.parquet.write_parquet`):

  atoms.parquet     cui, lang, str, ispref, sab, tty     SABs DO, HPO and HPO<LAT> per translated language
  concepts.parquet  cui, tui, sty, group, name_en, definition, definition_source (the definition's SAB)
  parents.parquet   cui, parent

`roots`:
  "all"     every non-obsolete DO and HPO term with a UMLS CUI (about 16,000 concepts);
  "sample"  exactly the committed sample's sub-hierarchies, through `umls.derive_sample.collect`
            (so the tables equal those `build_vocabulary` makes from `umls/sample`);
  "DOID:1287,HP:0001626,..."  the sub-hierarchies under these terms.

The rules are derive_sample's (one concept per term, its lowest CUI; DO before HPO; the first
name of a concept in a language is its preferred atom; semantic types from ontology branches,
`derive_sample.sty_for`), with three additions for the non-sample modes, each because the
full ontologies need it:

- DO terms that the current DO cross-references to a CUI but the 2016 OBO lacks (or marks
  obsolete) are kept with their current label and current parents (HumanDO.tsv); a current
  label that differs from the 2016 name is kept as an English synonym (SY).
- Parent links bridge terms without a CUI: a term's parents are its nearest ancestors that
  are concepts (derive_sample keeps direct links only, which loses most of the full HPO's
  upper hierarchy).
- HPO branches outside "Phenotypic abnormality" get the UMLS type they are, not Finding:
  Mode of inheritance -> Genetic Function (T045), Clinical modifier -> Qualitative Concept
  (T080), Frequency -> Quantitative Concept (T081), Clinical course -> Temporal Concept (T079).
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa

from common.errors import InputError
from umls import derive_sample as ds
from common.jsonio import iter_lines
from umls.obo import OboFormatError, OboTerm, read_obo
from umls.semgroups import group_of
from common.parquet import write_parquet

DO_OBO = Path("disease-ontology/doid-2016-09-01.obo")
DO_XREF = Path("disease-ontology/allXREFinDO.tsv")
DO_HUMAN = Path("disease-ontology/HumanDO.tsv")
HP_OBO = Path("hpo/hp.obo")
HPOA = Path("hpo/phenotype.hpoa")  # optional: the phenotypes xqa concept entries state (umls/hpo.py)

# Semantic types for HPO's top-level branches other than Phenotypic abnormality (HP:0000118).
HPO_NON_PHENOTYPE_STY = [
    ("HP:0000005", "T045"),  # Mode of inheritance
    ("HP:0012823", "T080"),  # Clinical modifier
    ("HP:0040279", "T081"),  # Frequency
    ("HP:0031797", "T079"),  # Clinical course
]
STY_NAMES = {
    **ds.STY_NAMES,
    "T045": ("B2.2.1.1.4.1", "Genetic Function"),
    "T079": ("A2.1.1", "Temporal Concept"),
    "T080": ("A2.1.2", "Qualitative Concept"),
    "T081": ("A2.1.3", "Quantitative Concept"),
    # the types name lists map their labels to (umls/name_lists.py, configs' `types`)
    "T001": ("A1.1", "Organism"),
    "T004": ("A1.1.3.1.1", "Fungus"),
    "T005": ("A1.1.4", "Virus"),
    "T007": ("A1.1.2", "Bacterium"),
    "T022": ("A1.2.3.4", "Body System"),
    "T023": ("A1.2.3.1", "Body Part, Organ, or Organ Component"),
    "T024": ("A1.2.3.3", "Tissue"),
    "T025": ("A1.2.3.2", "Cell"),
    "T028": ("A1.2.3.5", "Gene or Genome"),
    "T029": ("A2.1.5.2", "Body Location or Region"),
    "T039": ("B2.2.1.1.1", "Physiologic Function"),
    "T058": ("B1.3.1", "Health Care Activity"),
    "T059": ("B1.3.1.1", "Laboratory Procedure"),
    "T060": ("B1.3.1.2", "Diagnostic Procedure"),
    "T061": ("B1.3.1.3", "Therapeutic or Preventive Procedure"),
    "T067": ("B2", "Phenomenon or Process"),
    "T073": ("A1.3.1", "Manufactured Object"),
    "T074": ("A1.3.1.1", "Medical Device"),
    "T083": ("A2.1.5.4", "Geographic Area"),
    "T103": ("A1.4.1", "Chemical"),
    "T116": ("A1.4.1.2.1.7", "Amino Acid, Peptide, or Protein"),
    "T121": ("A1.4.1.1.1", "Pharmacologic Substance"),
    "T125": ("A1.4.1.1.3.2", "Hormone"),
    "T126": ("A1.4.1.1.3.3", "Enzyme"),
    "T201": ("A2.3", "Clinical Attribute"),
}
SABS = ("DO", "HPO", *ds.SAB_BY_LANG.values())  # the SABs of the shared data's languages (fr, es, ja, zh)


def translation_sab(lat: str) -> str:
    """The SAB of HPO's names in a language: "HPO" + its UMLS LAT (HPOFRE, HPOJPN, HPOGER, ...)."""
    return f"HPO{lat}"


def babelon_path(data_dir: Path, code: str) -> Path:
    return Path(data_dir) / "hpo" / f"hp-{code}.babelon.tsv"


def synonyms_path(data_dir: Path, code: str) -> Path:
    return Path(data_dir) / "hpo" / f"hp-{code}.synonyms.tsv"

ATOM_SCHEMA = pa.schema([
    ("cui", pa.string()), ("lang", pa.string()), ("str", pa.string()),
    ("ispref", pa.bool_()), ("sab", pa.string()), ("tty", pa.string()),
])
CONCEPT_SCHEMA = pa.schema([
    ("cui", pa.string()), ("tui", pa.string()), ("sty", pa.string()), ("group", pa.string()),
    ("name_en", pa.string()), ("definition", pa.string()), ("definition_source", pa.string()),
])
PARENT_SCHEMA = pa.schema([("cui", pa.string()), ("parent", pa.string())])


# ---------------------------------------------------------------------------------- reading


def _require(path: Path, what: str) -> Path:
    if not path.exists():
        raise InputError(path, f"file not found ({what})")
    return path


def _read_obo(path: Path) -> dict[str, OboTerm]:
    _require(path, "an OBO ontology the open vocabulary is built from")
    try:
        return {t.id: t for t in read_obo(path) if not t.obsolete}
    except OboFormatError as exc:
        m = re.match(r"^(.*):(\d+): (.*)$", str(exc), flags=re.S)
        if m:
            raise InputError(path, m.group(3), line=int(m.group(2))) from None
        raise InputError(path, str(exc)) from None


def read_do_tsv(path: Path, what: str) -> list[tuple[int, list[str]]]:
    """Rows of a DO TSV export (header skipped), quotes stripped, with their line numbers."""
    _require(path, what)
    rows = []
    for line_no, line in iter_lines(path, what):
        if line_no == 1 or not line.strip():  # the header
            continue
        cells = [c.strip('"') for c in line.rstrip("\n").split("\t")]
        if len(cells) != 3:
            raise InputError(path, f"expected 3 tab-separated columns, found {len(cells)}", line=line_no)
        rows.append((line_no, cells))
    return rows


class _Lineage:
    """Memoised ancestor sets over an is_a map (a DAG)."""

    def __init__(self, parents: dict[str, list[str]]):
        self.parents = parents
        self.memo: dict[str, frozenset[str]] = {}

    def of(self, node: str) -> frozenset[str]:
        got = self.memo.get(node)
        if got is not None:
            return got
        # iterative post-order, so that deep hierarchies never hit the recursion limit
        stack = [(node, False)]
        visiting: set[str] = set()
        while stack:
            n, ready = stack.pop()
            if n in self.memo:
                continue
            ps = self.parents.get(n, ())
            if ready:
                acc: set[str] = set()
                for p in ps:
                    acc.add(p)
                    acc |= self.memo.get(p, frozenset())
                self.memo[n] = frozenset(acc)
                visiting.discard(n)
                continue
            if n in visiting:  # a cycle: give up on this edge rather than loop
                self.memo[n] = frozenset(ps)
                continue
            visiting.add(n)
            stack.append((n, True))
            stack.extend((p, False) for p in ps if p not in self.memo)
        return self.memo[node]


def _sty(term_id: str, name: str, ancestors: frozenset[str]) -> str:
    if term_id.startswith("HP:") and "HP:0000118" not in ancestors and term_id != "HP:0000118":
        lineage = ancestors | {term_id}
        for branch, tui in HPO_NON_PHENOTYPE_STY:
            if branch in lineage:
                return tui
    return ds.sty_for(term_id, name, set(ancestors))


_CUI = re.compile(r"C\d{7}")


def _valid_cuis(cuis: Iterable[str]) -> list[str]:
    """The well-formed CUIs, sorted: hp.obo 2025-01-16 has "UMLS:0189573" (HP:0034420, its
    only one), which a release's schema rejects wherever it lands (a cd distractor)."""
    return sorted(c for c in cuis if _CUI.fullmatch(c))


def _parse_roots(roots: str | Iterable[str], data_dir: Path) -> set[str] | None:
    if isinstance(roots, str):
        if roots.strip() == "all":
            return None
        roots = [r.strip() for r in roots.split(",") if r.strip()]
    out = set(roots)
    bad = sorted(r for r in out if not re.fullmatch(r"(DOID|HP):\d+", r))
    if not out or bad:
        raise InputError(data_dir, f"roots: expected 'all', 'sample' or comma-separated DOID:/HP: ids, got {bad or 'nothing'}", field="roots")
    return out


def read_synonyms(path: Path) -> dict[str, list[str]]:
    """Official exact synonyms by HPO id from an hpo-translations `hp-<code>.synonyms.tsv`
    (a ROBOT template: header, then a template row `ID  AL oboInOwl:hasExactSynonym@<code>`,
    then subject_id, translation_value, comment, Status, line number). Only OFFICIAL rows,
    as for labels."""
    out: dict[str, list[str]] = defaultdict(list)
    sid = val = status = None
    # iter_lines: a byte that is not UTF-8 is one InputError naming the line, as in every reader
    for line_no, line in iter_lines(path, "HPO's official synonyms"):
        cells = line.rstrip("\n").split("\t")
        if line_no == 1:
            if "subject_id" not in cells or "translation_value" not in cells:
                raise InputError(path, "expected a header with subject_id and translation_value columns", line=1)
            status = next((i for i, h in enumerate(cells) if h.lower() in ("status", "translation_status")), None)
            sid, val = cells.index("subject_id"), cells.index("translation_value")
            continue
        if len(cells) <= max(sid, val) or not cells[sid].startswith("HP:"):
            continue  # the template row, blank lines
        if status is not None and (len(cells) <= status or cells[status] != "OFFICIAL"):
            continue
        text = cells[val].strip()
        if text and text != "NA" and text not in out[cells[sid]]:
            out[cells[sid]].append(text)
    if sid is None:  # an empty file
        raise InputError(path, "expected a header with subject_id and translation_value columns", line=1)
    return dict(out)


def read_translations(data_dir: Path, languages: Iterable[str]) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """HPO's names in each language that has a table beside the others: `hpo/hp-<code>.babelon.tsv`
    (official labels, PT) and, when present, `hpo/hp-<code>.synonyms.tsv` (official synonyms, SY).
    A language without a babelon table has no HPO names (HPO publishes no Russian table in
    ../shared/data): its cd cell can only come from other sources."""
    out: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for code in sorted(set(languages) - {"en"}):
        path = babelon_path(data_dir, code)
        if not path.exists():
            continue
        names: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for term_id, label in ds.read_babelon(path).items():
            names[term_id].append(("PT", label))
        syn = synonyms_path(data_dir, code)
        if syn.exists():
            for term_id, texts in read_synonyms(syn).items():
                names[term_id] += [("SY", t) for t in texts]
        out[code] = dict(names)
    return out


class _DoTerms(NamedTuple):
    """The Disease Ontology as the open vocabulary reads it."""

    terms: dict[str, OboTerm]  # the 2016 OBO's non-obsolete terms
    cuis: dict[str, set[str]]  # UMLS CUIs by DOID, from the current DO and the 2016 OBO
    parents: dict[str, list[str]]  # is_a by DOID; HumanDO's (by label) for current-only terms
    labels: dict[str, str]  # the current DO's label by DOID
    current_only: list[str]  # DOIDs with a CUI that the 2016 OBO lacks or marks obsolete, sorted


def _do_terms(data_dir: Path) -> _DoTerms:
    """The 2016 OBO, plus the current DO's CUIs, labels and (for current-only terms) parents."""
    terms = _read_obo(data_dir / DO_OBO)
    cuis: dict[str, set[str]] = defaultdict(set)
    labels: dict[str, str] = {}
    for _line, (doid, label, xref) in read_do_tsv(data_dir / DO_XREF, "the current DO's cross-references"):
        labels.setdefault(doid, label)
        if xref.startswith("UMLS_CUI:"):
            cuis[doid].add(xref.split(":", 1)[1])
    for t in terms.values():
        for x in t.xrefs:
            if x.startswith("UMLS_CUI:"):
                cuis[t.id].add(x.split(":", 1)[1])
    parents: dict[str, list[str]] = {t.id: list(t.parents) for t in terms.values()}
    current_only = sorted(d for d in cuis if d not in terms)
    if current_only:  # HumanDO.tsv is read (and required) only when some term needs its parents
        human_parents = _human_do_parents(data_dir, terms, labels)
        for doid in current_only:
            parents[doid] = human_parents.get(doid, [])
    return _DoTerms(terms, cuis, parents, labels, current_only)


def _human_do_parents(data_dir: Path, terms: dict[str, OboTerm], labels: dict[str, str]) -> dict[str, list[str]]:
    """Parents by DOID from HumanDO.tsv, which names a parent by its label: a label that names
    one term only (HumanDO's, else the 2016 OBO's) is that term. Adds HumanDO's labels to
    `labels` for DOIDs the cross-references lack."""
    human = read_do_tsv(data_dir / DO_HUMAN, "the current DO's hierarchy")
    by_label: dict[str, set[str]] = defaultdict(set)
    for _line, (doid, label, _parent) in human:
        by_label[label].add(doid)
    for doid, t in terms.items():
        by_label.setdefault(t.name, {doid})
    human_parents: dict[str, list[str]] = defaultdict(list)
    for _line, (doid, label, parent) in human:
        labels.setdefault(doid, label)
        ids = by_label.get(parent, set())
        if len(ids) == 1:
            human_parents[doid].append(next(iter(ids)))
    return human_parents


def _do_named_terms(do: _DoTerms) -> dict[str, OboTerm]:
    """The 2016 terms, and the current-only ones named by their current label."""
    return {**do.terms, **{doid: OboTerm(id=doid, name=do.labels.get(doid, "")) for doid in do.current_only}}


def _do_renamed(do: _DoTerms) -> dict[str, str]:
    """A current label that differs from the 2016 name, by DOID: kept as an English synonym."""
    return {doid: do.labels[doid] for doid, t in do.terms.items() if do.labels.get(doid) and do.labels[doid] != t.name}


def _hp_terms(data_dir: Path) -> tuple[dict[str, OboTerm], dict[str, list[str]], dict[str, list[str]]]:
    """HPO's non-obsolete terms, their is_a parents and their well-formed CUIs, by HPO id."""
    terms = _read_obo(data_dir / HP_OBO)
    parents = {t.id: list(t.parents) for t in terms.values()}
    cuis = {tid: _valid_cuis(c) for tid, c in ds.hpo_cuis(terms).items()}
    return terms, parents, cuis


def _translation_sabs(translations: dict, given: dict[str, str] | None) -> dict[str, str]:
    """The SAB of each translated language: the one given, else derive_sample's, else "HPO" + code."""
    return {code: (given or {}).get(code) or ds.SAB_BY_LANG.get(code) or f"HPO{code.upper()}" for code in translations}


def nearest_concepts(term_id: str, parents: dict[str, list[str]], id_to_cui: dict[str, str]) -> set[str]:
    """Pure: the CUIs of a term's nearest ancestors that are concepts: a walk up its parents
    that stops at each term with a CUI and passes through terms without one. (No memo: each
    term is asked once, and a walk stops at concepts, the only terms a memo could hold.)"""
    out: set[str] = set()
    seen: set[str] = set()
    stack = list(parents.get(term_id, ()))
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        if p in id_to_cui:
            out.add(id_to_cui[p])
        else:
            stack.extend(parents.get(p, ()))
    return out


def _bridge_parents(id_to_cui: dict[str, str], do_parents: dict[str, list[str]],
                    hp_parents: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(concept, parent concept) links, in term order: each term's nearest ancestors that are
    concepts, so that terms without a CUI do not cut the hierarchy (derive_sample keeps direct
    links only, which loses most of the full HPO's upper hierarchy)."""
    links = []
    for term_id, cui in id_to_cui.items():
        parents = hp_parents if term_id.startswith("HP:") else do_parents
        links += [(cui, pc) for pc in nearest_concepts(term_id, parents, id_to_cui) if pc != cui]
    return links


def collect_open(data_dir: Path, roots: str | Iterable[str] = "all", languages: Iterable[str] = ("fr", "es", "ja", "zh"),
                 translation_sabs: dict[str, str] | None = None) -> dict:
    """Concepts keyed by CUI, in derive_sample.collect's shape (names per language, sty, parents, defs, src).

    `languages`: registry codes whose HPO tables to read (`read_translations`);
    `translation_sabs`: their SAB by code (default: derive_sample.SAB_BY_LANG, then "HPO" + code).
    """
    return _collect_open(data_dir, roots, languages, translation_sabs)[0]


def _collect_open(data_dir: Path, roots: str | Iterable[str], languages: Iterable[str],
                  translation_sabs: dict[str, str] | None) -> tuple[dict, dict[str, str]]:
    """collect_open's concepts, and the CUI of every ontology term that became one."""
    data_dir = Path(data_dir)
    wanted = _parse_roots(roots, data_dir)
    do = _do_terms(data_dir)
    hp_terms, hp_parents, hp_cuis = _hp_terms(data_dir)
    translations = read_translations(data_dir, languages)
    sabs = _translation_sabs(translations, translation_sabs)

    concepts: dict[str, dict] = {}
    id_to_cui: dict[str, str] = {}
    # DO before HPO (derive_sample's rule): a CUI both name takes DO's name as its preferred
    # English atom, and the semantic type of DO's term
    ds.add_terms(concepts, id_to_cui, "DO", _do_named_terms(do), {doid: _valid_cuis(cuis) for doid, cuis in do.cuis.items()},
                 _Lineage(do.parents).of, wanted, _sty, also_en=_do_renamed(do))
    ds.add_terms(concepts, id_to_cui, "HPO", hp_terms, hp_cuis, _Lineage(hp_parents).of, wanted, _sty, translations,
                 translation_sabs=sabs)
    for cui, parent in _bridge_parents(id_to_cui, do.parents, hp_parents):
        concepts[cui]["parents"].add(parent)
    return concepts, id_to_cui


# ---------------------------------------------------------------------------------- tables


def _clean(text: str) -> str:
    """derive_sample.write_rrf's normalisation (what a round trip through RRF would give)."""
    return " ".join(text.replace("|", " ").split())


def concept_tables(concepts: dict, lat_to_lang: dict[str, str], preferred_en: list[str]) -> tuple[pa.Table, pa.Table, pa.Table]:
    """atoms, concepts, parents tables, exactly as build_vocabulary would read them from RRF."""
    # names are keyed by registry code (collect_open) or by derive_sample's codes (the sample)
    lang_out = {code: code for code in lat_to_lang.values()}
    lang_out |= {lang: lat_to_lang[lat] for lang, lat in ds.LAT_BY_LANG.items() if lat in lat_to_lang}
    atoms: list[tuple] = []
    for cui in sorted(concepts):
        for lang, names in concepts[cui]["names"].items():
            if lang not in lang_out:
                continue
            seen: set[str] = set()
            for i, (sab, tty, text) in enumerate(names):
                text = _clean(text)
                if not text or text.lower() in seen:
                    continue
                seen.add(text.lower())
                atoms.append((cui, lang_out[lang], text, i == 0, sab, tty))
    if not atoms:
        raise InputError("<open vocabulary>", f"no atoms in the build's languages ({', '.join(sorted(lat_to_lang))})")
    atoms.sort(key=lambda a: (a[0], a[1], not a[3], a[4], a[2]))
    cols = list(zip(*atoms))
    atom_table = pa.table([pa.array(c, type=f.type) for c, f in zip(cols, ATOM_SCHEMA)], schema=ATOM_SCHEMA)

    rank = {sab: i for i, sab in enumerate(preferred_en)}
    name_en: dict[str, tuple] = {}
    for cui, lang, text, pref, sab, _tty in atoms:
        if lang != "en":
            continue
        key = (not pref, rank.get(sab, len(rank)), text)
        if cui not in name_en or key < name_en[cui]:
            name_en[cui] = key
    rows: dict[str, list] = {f.name: [] for f in CONCEPT_SCHEMA}
    for cui in sorted({a[0] for a in atoms}):
        c = concepts[cui]
        tui = c["sty"] or "T000"
        rows["cui"].append(cui)
        rows["tui"].append(tui)
        rows["sty"].append(STY_NAMES[tui][1] if tui in STY_NAMES else "Unknown")
        rows["group"].append(group_of(tui))
        rows["name_en"].append(name_en[cui][2] if cui in name_en else "")
        defs = sorted((sab, _clean(text)) for sab, text in c["defs"].items())
        rows["definition"].append(defs[0][1] if defs else "")
        rows["definition_source"].append(defs[0][0] if defs else "")  # the SAB the definition is from
    concept_table = pa.table(rows, schema=CONCEPT_SCHEMA)

    pairs = sorted({(cui, p) for cui, c in concepts.items() for p in c["parents"] if p != cui})
    parent_table = pa.table({"cui": [p[0] for p in pairs], "parent": [p[1] for p in pairs]}, schema=PARENT_SCHEMA)
    return atom_table, concept_table, parent_table


def build_obo_vocabulary(data_dir: Path, out_dir: Path, lat_to_lang: dict[str, str], preferred_en: list[str], roots: str = "all",
                         code_names: Iterable = (), name_lists: Iterable = (), glossaries: Iterable = (),
                         morphology: dict | None = None) -> dict[str, str]:
    """Write atoms / concepts / parents parquet from DO + HPO + HPO babelon, plus the names of
    the code-keyed sources (`code_names`: umls.code_names) in the build's languages; return
    their paths (and, with code-keyed sources, `code_names_report`: what each mapped and dropped)."""
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    sabs = {code: translation_sab(lat) for lat, code in lat_to_lang.items() if code != "en"}
    code_names, name_lists, glossaries = list(code_names), list(name_lists), list(glossaries)
    report = None
    lists_report = None
    if roots.strip() == "sample":
        if code_names or name_lists or glossaries:
            raise InputError(data_dir, "code_names need the open vocabulary's own term-to-CUI map: roots 'all' or a list of roots",
                             field="vocabulary.roots")
        for rel in (DO_OBO, DO_XREF, HP_OBO, *(Path(f"hpo/hp-{lang}.babelon.tsv") for lang in ds.SAB_BY_LANG)):
            _require(data_dir / rel, "derive_sample reads it")
        concepts = ds.collect(data_dir)
    else:
        concepts, id_to_cui = _collect_open(data_dir, roots, sorted(sabs), sabs)
        if code_names:
            from umls.code_names import add_code_names

            report = add_code_names(concepts, id_to_cui, data_dir, code_names, set(lat_to_lang.values()))
        if name_lists or glossaries:
            from umls.name_lists import add_name_lists

            lists_report = add_name_lists(concepts, id_to_cui, name_lists, glossaries, set(lat_to_lang.values()), morphology)
    atoms, concept_table, parents = concept_tables(concepts, lat_to_lang, preferred_en)
    from umls.vocabulary import write_vocabulary

    paths = write_vocabulary(atoms, concept_table, parents, out_dir, sorted(set(lat_to_lang.values())))
    if roots.strip() != "sample" and (data_dir / HPOA).is_file():
        links = zip(parents["cui"].to_pylist(), parents["parent"].to_pylist())
        paths["phenotypes"] = _write_disease_phenotypes(data_dir, id_to_cui, set(concept_table["cui"].to_pylist()), links, out_dir)
    if report is not None:
        import json

        from common.jsonio import atomic_write

        with atomic_write(out_dir / "code_names_report.json") as fh:
            fh.write(json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
        paths["code_names_report"] = str(out_dir / "code_names_report.json")
    if lists_report is not None:
        import json

        from common.jsonio import atomic_write

        with atomic_write(out_dir / "name_lists_report.json") as fh:
            fh.write(json.dumps(lists_report, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
        paths["name_lists_report"] = str(out_dir / "name_lists_report.json")
    return paths


def _write_disease_phenotypes(data_dir: Path, id_to_cui: dict[str, str], cuis: set[str], links, out_dir: Path) -> str:
    """phenotypes.parquet: HPO's phenotypes of the DO concepts whose diseases it annotates
    (umls/hpo.py); xqa's concept entries state them."""
    from umls.hpo import disease_phenotypes, read_hpoa, write_phenotypes

    xrefs = [(doid, xref) for _line, (doid, _label, xref) in read_do_tsv(data_dir / DO_XREF, "the current DO's cross-references")]
    xrefs += [(t.id, x) for t in _read_obo(data_dir / DO_OBO).values() for x in t.xrefs]
    names = {t.id: t.name for t in _read_obo(data_dir / HP_OBO).values()}
    term_cui = {t: c for t, c in id_to_cui.items() if c in cuis}
    phenotypes = disease_phenotypes(read_hpoa(data_dir / HPOA), xrefs, term_cui, names, links)
    return write_phenotypes(phenotypes, out_dir / "phenotypes.parquet")


def sources_srl() -> dict[str, int]:
    """Restriction level of every SAB this vocabulary can contain (all open: 0), for the manifest."""
    return {sab: 0 for sab in SABS}
