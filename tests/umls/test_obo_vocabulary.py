"""umls.obo_vocabulary: the vocabulary tables from DO + HPO + babelon, without a UMLS licence.

A tiny invented ontology pair runs everywhere; the real ontologies in ../shared/data are
checked when present (skipped with a reason otherwise).
"""
from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from common.errors import InputError
from tests.conftest import ROOT, require_shared
from umls.obo_vocabulary import SABS, build_obo_vocabulary
from umls.vocabulary import build_vocabulary

LAT = {"ENG": "en", "FRE": "fr", "SPA": "es", "JPN": "ja", "CHI": "zh", "RUS": "ru"}
PREFERRED_EN = ["DO", "HPO", "MSH", "SNOMEDCT_US"]

# --- an invented DO + HPO (structure of the real files; every name and CUI made up) -----------------

DO_OBO = """format-version: 1.2
data-version: doid/releases/2016-09-01
ontology: doid

[Term]
id: DOID:4
name: disease

[Term]
id: DOID:100
name: imaginary organ disease
is_a: DOID:4 ! disease
xref: UMLS_CUI:C9000100

[Term]
id: DOID:101
name: glimmer fever
def: "A made-up fever of the imaginary organ." [url:http\\://example.org]
synonym: "glimmer pyrexia" EXACT []
synonym: "shiny fever" RELATED []
is_a: DOID:100 ! imaginary organ disease
xref: UMLS_CUI:C9000101
xref: UMLS_CUI:C9000001

[Term]
id: DOID:102
name: invented intermediate class
is_a: DOID:100

[Term]
id: DOID:103
name: twinkle syndrome
is_a: DOID:102
xref: UMLS_CUI:C9000103

[Term]
id: DOID:14566
name: disease of cellular proliferation
is_a: DOID:4

[Term]
id: DOID:104
name: sparkle tumour
is_a: DOID:14566
xref: UMLS_CUI:C9000104

[Term]
id: DOID:105
name: obsolete dull fever
is_obsolete: true
xref: UMLS_CUI:C9000105

[Typedef]
id: part_of
name: part of
"""

DO_XREF = """id\tlabel\txref
"DOID:101"\t"glimmer fever"\t"UMLS_CUI:C9000101"
"DOID:101"\t"glimmer fever"\t"MESH:D999999"
"DOID:103"\t"twinkle disorder"\t"UMLS_CUI:C9000103"
"DOID:106"\t"starlight disease"\t"UMLS_CUI:C9000106"
"""

HUMAN_DO = """id\tlabel\tsubClassOf
"DOID:100"\t"imaginary organ disease"\t"disease"
"DOID:106"\t"starlight disease"\t"imaginary organ disease"
"""

HP_OBO = """format-version: 1.2
data-version: hp/releases/2025-01-16

[Term]
id: HP:0000001
name: All

[Term]
id: HP:0000005
name: Mode of inheritance
is_a: HP:0000001 ! All

[Term]
id: HP:0000006
name: Invented dominant inheritance
is_a: HP:0000005 ! Mode of inheritance
xref: UMLS:C9000206

[Term]
id: HP:0000118
name: Phenotypic abnormality
is_a: HP:0000001 ! All

[Term]
id: HP:0001000
name: Abnormality of the imaginary organ
is_a: HP:0000118
xref: UMLS:C9000300

[Term]
id: HP:0001001
name: Glimmer fever
def: "HPO's made-up definition." []
synonym: "Shimmer fever" EXACT layperson []
is_a: HP:0001000
xref: UMLS:C9000001

[Term]
id: HP:0001939
name: Abnormality of metabolism/homeostasis
is_a: HP:0000118

[Term]
id: HP:0001002
name: Increased glimmer level
is_a: HP:0001939
xref: UMLS:C9000302

[Term]
id: HP:0001003
name: Obsolete twinkle
is_obsolete: true
xref: UMLS:C9000999
"""

BABELON_SUBJECT_FIRST = "subject_id\tsource_language\ttranslation_language\tpredicate_id\tsource_value\ttranslation_status\ttranslation_value\n"
BABELON_SOURCE_FIRST = ("source\tsource_version\tsource_language\ttranslation_language\tsubject_id\tpredicate_id\tsource_value\t"
                        "translation_value\ttranslator\ttranslation_date\ttranslation_confidence\ttranslation_precision\t"
                        "translation_type\ttranslation_status\n")


def _subject_first(lang: str, rows: list[tuple[str, str, str, str, str]]) -> str:
    return BABELON_SUBJECT_FIRST + "".join(f"{s}\ten\t{lang}\t{p}\t{src}\t{status}\t{val}\n" for s, p, src, val, status in rows)


def _source_first(lang: str, rows: list[tuple[str, str, str, str, str]]) -> str:
    return BABELON_SOURCE_FIRST + "".join(
        f"hp.owl\tv\ten\t{lang}\t{s}\t{p}\t{src}\t{val}\t\t2024-01-01\t1\tEXACT\t\t{status}\n" for s, p, src, val, status in rows)


def write_data(root: Path) -> Path:
    (root / "disease-ontology").mkdir(parents=True)
    (root / "hpo").mkdir()
    (root / "disease-ontology" / "doid-2016-09-01.obo").write_text(DO_OBO, encoding="utf-8")
    (root / "disease-ontology" / "allXREFinDO.tsv").write_text(DO_XREF, encoding="utf-8")
    (root / "disease-ontology" / "HumanDO.tsv").write_text(HUMAN_DO, encoding="utf-8")
    (root / "hpo" / "hp.obo").write_text(HP_OBO, encoding="utf-8")
    label = "rdfs:label"
    (root / "hpo" / "hp-fr.babelon.tsv").write_text(_subject_first("fr", [
        ("HP:0001001", label, "Glimmer fever", "Fièvre scintillante", "OFFICIAL"),
        ("HP:0001001", "IAO:0000115", "HPO's made-up definition.", "Définition inventée.", "OFFICIAL"),
        ("HP:0001000", label, "Abnormality of the imaginary organ", "Anomalie candidate", "CANDIDATE"),
    ]), encoding="utf-8")
    (root / "hpo" / "hp-es.babelon.tsv").write_text(_subject_first("es", [
        ("HP:0001001", label, "Glimmer fever", "Fiebre centelleante", "OFFICIAL"),
    ]), encoding="utf-8")
    (root / "hpo" / "hp-ja.babelon.tsv").write_text(_source_first("ja", [
        ("HP:0001001", label, "Glimmer fever", "きらめき熱", "OFFICIAL"),
        ("HP:0000001", label, "All", "NA", "NOT_TRANSLATED"),
    ]), encoding="utf-8")
    (root / "hpo" / "hp-zh.babelon.tsv").write_text(_source_first("zh", [
        ("HP:0001001", label, "Glimmer fever", "闪烁热", "OFFICIAL"),
    ]), encoding="utf-8")
    return root


def tables(paths: dict[str, str]) -> dict[str, list[dict]]:
    return {k: pq.read_table(v).to_pylist() for k, v in paths.items() if k != "atoms_by_lang"}


@pytest.fixture
def tiny(tmp_path) -> Path:
    return write_data(tmp_path / "data")


def test_tiny_concepts_names_and_types(tiny, tmp_path):
    t = tables(build_obo_vocabulary(tiny, tmp_path / "out", LAT, PREFERRED_EN))
    concepts = {c["cui"]: c for c in t["concepts"]}
    assert sorted(concepts) == ["C9000001", "C9000100", "C9000103", "C9000104", "C9000106", "C9000206", "C9000300", "C9000302"]
    glimmer = concepts["C9000001"]  # DOID:101 (lowest of its CUIs) and HP:0001001 share it
    assert (glimmer["tui"], glimmer["sty"], glimmer["group"], glimmer["name_en"]) == ("T047", "Disease or Syndrome", "DISO", "glimmer fever")
    assert glimmer["definition"] == "A made-up fever of the imaginary organ."  # DO before HPO
    assert concepts["C9000104"]["tui"] == "T191"  # under disease of cellular proliferation
    assert concepts["C9000300"]["tui"] == "T033"
    assert concepts["C9000302"]["tui"] == "T034"  # a measurement under metabolism/homeostasis
    assert (concepts["C9000206"]["tui"], concepts["C9000206"]["group"]) == ("T045", "PHYS")  # Mode of inheritance
    assert concepts["C9000106"]["name_en"] == "starlight disease"  # current DO only, its current label

    atoms = [(a["lang"], a["str"], a["ispref"], a["sab"], a["tty"]) for a in t["atoms"] if a["cui"] == "C9000001"]
    assert atoms == [
        ("en", "glimmer fever", True, "DO", "PT"),
        ("en", "glimmer pyrexia", False, "DO", "SY"),
        ("en", "Shimmer fever", False, "HPO", "SY"),  # HPO's "Glimmer fever" is the same name; RELATED synonyms are not kept
        ("es", "Fiebre centelleante", True, "HPOSPA", "PT"),
        ("fr", "Fièvre scintillante", True, "HPOFRE", "PT"),
        ("ja", "きらめき熱", True, "HPOJPN", "PT"),
        ("zh", "闪烁热", True, "HPOCHI", "PT"),
    ]
    twinkle = [(a["str"], a["tty"]) for a in t["atoms"] if a["cui"] == "C9000103"]
    assert twinkle == [("twinkle syndrome", "PT"), ("twinkle disorder", "SY")]  # the current label, kept as a synonym
    assert not any(a["str"] == "Anomalie candidate" for a in t["atoms"])  # only OFFICIAL translations
    assert {a["sab"] for a in t["atoms"]} <= set(SABS)


def test_tiny_parents_bridge_terms_without_a_cui(tiny, tmp_path):
    t = tables(build_obo_vocabulary(tiny, tmp_path / "out", LAT, PREFERRED_EN))
    assert sorted((p["cui"], p["parent"]) for p in t["parents"]) == [
        ("C9000001", "C9000100"),  # DO is_a
        ("C9000001", "C9000300"),  # HPO is_a of the same concept
        ("C9000103", "C9000100"),  # through DOID:102, which has no CUI
        ("C9000106", "C9000100"),  # current DO parent, by label, from HumanDO.tsv
    ]


def test_tiny_roots_and_languages(tiny, tmp_path):
    t = tables(build_obo_vocabulary(tiny, tmp_path / "a", {"ENG": "en", "JPN": "ja"}, PREFERRED_EN, roots="DOID:100,HP:0001939"))
    assert sorted(c["cui"] for c in t["concepts"]) == ["C9000001", "C9000100", "C9000103", "C9000106", "C9000302"]
    assert {a["lang"] for a in t["atoms"]} == {"en"}  # HP:0001001 (the only translated term) is outside the roots
    with pytest.raises(InputError, match="roots"):
        build_obo_vocabulary(tiny, tmp_path / "b", LAT, PREFERRED_EN, roots="heart")


def test_tiny_output_is_deterministic_and_shaped_like_build_vocabulary(tiny, tmp_path):
    a = build_obo_vocabulary(tiny, tmp_path / "a", LAT, PREFERRED_EN)
    b = build_obo_vocabulary(tiny, tmp_path / "b", LAT, PREFERRED_EN)
    ref = build_vocabulary(ROOT / "umls" / "sample", tmp_path / "ref", LAT, 0, PREFERRED_EN)
    for name in ("atoms", "concepts", "parents"):
        assert Path(a[name]).read_bytes() == Path(b[name]).read_bytes()
        assert pq.read_schema(a[name]) == pq.read_schema(ref[name]), name
        rows = pq.read_table(a[name]).to_pylist()
        keys = {"atoms": lambda r: (r["cui"], r["lang"], not r["ispref"], r["sab"], r["str"]),
                "concepts": lambda r: r["cui"], "parents": lambda r: (r["cui"], r["parent"])}[name]
        assert rows == sorted(rows, key=keys)


# hpo-translations' German table: its own column order, and CANDIDATE (machine) rows beside OFFICIAL ones
BABELON_DE = ("source_language\tsource_value\tsubject_id\tpredicate_id\ttranslation_language\ttranslation_value\t"
              "translation_status\ttranslator\ttranslator_expertise\ttranslation_date\tcomment\n"
              "en\tGlimmer fever\tHP:0001001\trdfs:label\tde\tGlitzerfieber\tOFFICIAL\torcid:0\tDOMAIN_EXPERT\t2024-12-10\t\n"
              "en\tIncreased glimmer level\tHP:0001002\trdfs:label\tde\tErhöhter Glitzerspiegel\tOFFICIAL\torcid:0\tDOMAIN_EXPERT\t2024-12-10\t\n"
              "en\tAbnormality of the imaginary organ\tHP:0001000\trdfs:label\tde\tMaschinenvorschlag\tCANDIDATE\tDeepL\tALGORITHM\t2024-05-08\tpreview\n")
SYNONYMS_DE = ("subject_id\ttranslation_value\tcomment\tStatus\tLine number\n"
               "ID\tAL oboInOwl:hasExactSynonym@de\t\t\t\n"
               "HP:0001001\tFunkelfieber\tsynonyms of HP:0001001 (Glimmer fever)\tOFFICIAL\t7\n"
               "HP:0001001\tSchimmerfieber\tsynonyms of HP:0001001 (Glimmer fever)\tCANDIDATE\t8\n")


def test_a_language_is_added_by_a_table_beside_the_others(tiny, tmp_path):
    """German is a registry entry (umls_lat GER) and two files in hpo/: no code names it."""
    (tiny / "hpo" / "hp-de.babelon.tsv").write_text(BABELON_DE, encoding="utf-8")
    (tiny / "hpo" / "hp-de.synonyms.tsv").write_text(SYNONYMS_DE, encoding="utf-8")
    t = tables(build_obo_vocabulary(tiny, tmp_path / "de", LAT | {"GER": "de"}, PREFERRED_EN))
    german = [(a["cui"], a["str"], a["ispref"], a["sab"], a["tty"]) for a in t["atoms"] if a["lang"] == "de"]
    assert german == [
        ("C9000001", "Glitzerfieber", True, "HPOGER", "PT"),
        ("C9000001", "Funkelfieber", False, "HPOGER", "SY"),  # official synonym; the CANDIDATE one is not kept
        ("C9000302", "Erhöhter Glitzerspiegel", True, "HPOGER", "PT"),
    ]
    # without German in the build, the table is read by nobody
    t = tables(build_obo_vocabulary(tiny, tmp_path / "plain", LAT, PREFERRED_EN))
    assert {a["lang"] for a in t["atoms"]} == {"en", "fr", "es", "ja", "zh"}


def test_tiny_input_errors(tiny, tmp_path):
    # a build language without a table has no HPO names (Russian in ../shared/data), no error
    (tiny / "hpo" / "hp-zh.babelon.tsv").unlink()
    t = tables(build_obo_vocabulary(tiny, tmp_path / "a", LAT, PREFERRED_EN))
    assert {a["lang"] for a in t["atoms"]} == {"en", "fr", "es", "ja"}
    (tiny / "hpo" / "hp-fr.synonyms.tsv").write_text("id\tvalue\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"hp-fr\.synonyms\.tsv:1: expected a header with subject_id"):
        build_obo_vocabulary(tiny, tmp_path / "b", {"ENG": "en", "FRE": "fr"}, PREFERRED_EN)
    (tiny / "hpo" / "hp-fr.synonyms.tsv").unlink()
    obo = tiny / "hpo" / "hp.obo"
    obo.write_text(HP_OBO.replace("name: Glimmer fever", "Glimmer fever without a tag"), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        build_obo_vocabulary(tiny, tmp_path / "c", LAT, PREFERRED_EN)
    line = HP_OBO.splitlines().index("name: Glimmer fever") + 1
    assert str(exc.value).startswith(f"{obo}:{line}: ")
    (tiny / "disease-ontology" / "allXREFinDO.tsv").write_text('id\tlabel\txref\n"DOID:101"\t"glimmer fever"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"allXREFinDO\.tsv:2: expected 3 tab-separated columns"):
        build_obo_vocabulary(tiny, tmp_path / "d", LAT, PREFERRED_EN)


# --- the real ontologies (../shared/data) ---------------------------------------------------------


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    data = require_shared("hpo", "hp.obo").parents[1]
    out = tmp_path_factory.mktemp("obo-vocab")
    paths = build_obo_vocabulary(data, out, LAT, PREFERRED_EN)
    return {"paths": paths, "data": data, "out": out}


@pytest.mark.shared
def test_real_all_concepts_and_languages(real):
    concepts = pq.read_table(real["paths"]["concepts"])
    atoms = pq.read_table(real["paths"]["atoms"])
    assert concepts.num_rows > 15000
    assert set(atoms["lang"].to_pylist()) == {"en", "fr", "es", "ja", "zh"}
    assert set(atoms["sab"].to_pylist()) == set(SABS)
    assert all(concepts["name_en"].to_pylist())  # every concept has an English name
    assert pq.read_table(real["paths"]["parents"]).num_rows > 15000


@pytest.mark.shared
def test_real_hypertension_in_every_language(real):
    atoms = pq.read_table(real["paths"]["atoms"])
    concepts = pq.read_table(real["paths"]["concepts"])
    htn = atoms.filter(pc.equal(atoms["cui"], "C0020538")).to_pylist()
    [concept] = concepts.filter(pc.equal(concepts["cui"], "C0020538")).to_pylist()
    assert concept["name_en"] and concept["group"] == "DISO"
    assert any(a["lang"] == "en" and a["ispref"] and a["str"] == concept["name_en"] for a in htn)
    for lang in ("fr", "es", "ja", "zh"):
        assert any(a["lang"] == lang for a in htn), lang


@pytest.mark.shared
def test_real_sample_roots_equal_the_committed_sample(real, tmp_path):
    """roots='sample' goes through derive_sample.collect: the same tables as build_vocabulary on umls/sample."""
    ours = build_obo_vocabulary(real["data"], tmp_path / "ours", LAT, PREFERRED_EN, roots="sample")
    ref = build_vocabulary(ROOT / "umls" / "sample", tmp_path / "ref", LAT, 0, PREFERRED_EN)
    for name in ("concepts", "parents"):
        assert Path(ours[name]).read_bytes() == Path(ref[name]).read_bytes(), name
    # the RRF reader keeps the file's row order (re-sorting millions of atoms is costly): same rows
    key = lambda r: tuple(str(v) for v in r.values())  # noqa: E731
    assert sorted(pq.read_table(ours["atoms"]).to_pylist(), key=key) == sorted(pq.read_table(ref["atoms"]).to_pylist(), key=key)


def test_a_renamed_term_s_current_label_from_humando_becomes_an_english_synonym(tiny):
    """A 2016 term the current DO renamed, seen only in HumanDO.tsv (no cross-reference row
    carries its current label), keeps its 2016 name and gains the current one as a synonym."""
    from umls.obo_vocabulary import collect_open

    before = collect_open(tiny, "all", languages=())["C9000104"]
    (tiny / "disease-ontology" / "HumanDO.tsv").write_text(
        HUMAN_DO + '"DOID:104"\t"sparkle neoplasm"\t"disease of cellular proliferation"\n', encoding="utf-8")
    after = collect_open(tiny, "all", languages=())["C9000104"]
    assert before["names"]["en"] == [("DO", "PT", "sparkle tumour")]
    assert after["names"]["en"] == [("DO", "PT", "sparkle tumour"), ("DO", "SY", "sparkle neoplasm")]
