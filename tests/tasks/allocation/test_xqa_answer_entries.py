"""xqa's gold passages: HPO's disease phenotypes (umls/hpo.py) and the answer entry that states
them with the concept's parents (concept_entries.answer_entry, AnswerEntries)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from common.errors import InputError
from tasks.allocation.concept_entries import MAX_PHENOTYPES, AnswerEntries, EntryParts, answer_entry, concept_entry, entry_parts
from tests.conftest import require_shared
from umls import hpo

HEADER = "\t".join(hpo.HPOA_COLUMNS)


def hpoa(tmp_path: Path, rows: list[str], header: str = HEADER) -> Path:
    path = tmp_path / "phenotype.hpoa"
    path.write_text("#description: test\n#version: 2025-01-16\n" + header + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    return path


def row(disease: str, hp: str, frequency: str = "", aspect: str = "P", qualifier: str = "") -> str:
    return "\t".join([disease, "Invented disease", qualifier, hp, "PMID:1", "PCS", "", frequency, "", "", aspect, "HPO:x[2025-01-01]"])


def test_read_hpoa_keeps_phenotypes_with_their_frequency(tmp_path):
    path = hpoa(tmp_path, [
        row("OMIM:100", "HP:0000001", "HP:0040281"),
        row("OMIM:100", "HP:0000002", "1/4"),
        row("OMIM:100", "HP:0000002", "3/4"),        # a second reference: the higher share stands
        row("OMIM:100", "HP:0000003", "45%"),
        row("OMIM:100", "HP:0000004"),                # no frequency stated
        row("OMIM:100", "HP:0000005", qualifier="NOT"),  # excluded, not a phenotype of the disease
        row("OMIM:100", "HP:0000006", aspect="I"),    # mode of inheritance, not a finding
        row("ORPHA:7", "HP:0000001", "HP:0040285"),   # "Excluded" frequency: share 0
    ])
    assert hpo.read_hpoa(path) == {
        "OMIM:100": {"HP:0000001": 0.9, "HP:0000002": 0.75, "HP:0000003": 0.45, "HP:0000004": hpo.UNSTATED_FREQUENCY},
        "ORPHA:7": {"HP:0000001": 0.0},
    }


@pytest.mark.parametrize("bad, line, field, words", [
    (row("OMIM:1", "HP:1"), 4, "hpo_id", "expected an HPO id"),
    (row("OMIM:1", "HP:0000001", "5/4"), 4, "frequency", "expected an HPO frequency term"),
    (row("OMIM:1", "HP:0000001", "often"), 4, "frequency", "expected an HPO frequency term"),
    (row("OMIM:1", "HP:0000001", "101%"), 4, "frequency", "expected an HPO frequency term"),
    ("OMIM:1\tname\t\tHP:0000001", 4, None, "expected 12 tab-separated columns, found 4"),
])
def test_read_hpoa_names_the_bad_line(tmp_path, bad, line, field, words):
    with pytest.raises(InputError) as exc:
        hpo.read_hpoa(hpoa(tmp_path, [row("OMIM:1", "HP:0000001"), bad]))
    assert exc.value.line == line + 1 and exc.value.field == field and words in exc.value.message


def test_read_hpoa_needs_its_header_and_the_file(tmp_path):
    with pytest.raises(InputError, match="expected the header"):
        hpo.read_hpoa(hpoa(tmp_path, [], header="database_id\tdisease_name"))
    with pytest.raises(InputError, match="file not found"):
        hpo.read_hpoa(tmp_path / "absent.hpoa")


def test_disease_phenotypes_rank_by_summed_frequency_then_name():
    annotations = {"OMIM:1": {"HP:A": 0.9, "HP:B": 0.17, "HP:C": 0.5},
                   "ORPHA:2": {"HP:B": 0.9, "HP:D": 0.17, "HP:Z": 0.0},
                   "OMIM:3": {"HP:A": 1.0}}
    names = {"HP:A": "Fever", "HP:B": "Rash", "HP:C": "Cough", "HP:D": "ataxia", "HP:Z": "Zero"}
    xrefs = [("DOID:1", "MIM:1"), ("DOID:1", "ORDO:2"), ("DOID:1", "UMLS_CUI:C0000001"), ("DOID:1", "GARD:9"),
             ("DOID:2", "OMIM:3"),            # the 2016 OBO spells OMIM
             ("DOID:3", "MIM:404")]           # no annotation: no phenotypes
    term_cui = {"DOID:1": "C0000001", "DOID:2": "C0000002", "DOID:3": "C0000003", "HP:A": "C0000009"}
    got = hpo.disease_phenotypes(annotations, xrefs, term_cui, names)
    # Rash 1.07 > Fever 0.9 > Cough 0.5 > ataxia 0.17; a share of 0 is never a phenotype
    assert got == {"C0000001": ["Rash", "Fever", "Cough", "ataxia"], "C0000002": ["Fever"]}


def test_a_class_without_diseases_pools_its_childrens():
    annotations = {"OMIM:1": {"HP:A": 0.9, "HP:B": 0.17}, "OMIM:2": {"HP:B": 0.9}, "OMIM:3": {"HP:C": 1.0}}
    names = {"HP:A": "Fever", "HP:B": "Rash", "HP:C": "Cough"}
    xrefs = [("DOID:1", "MIM:1"), ("DOID:2", "MIM:2"), ("DOID:3", "MIM:3")]
    term_cui = {"DOID:1": "C0000001", "DOID:2": "C0000002", "DOID:3": "C0000003"}
    links = [("C0000001", "C0000010"), ("C0000002", "C0000010"),  # C0000010: a class of two annotated diseases
             ("C0000001", "C0000003"),                           # C0000003 has its own: a child's never joins
             ("C0000010", "C0000020")]                           # only direct children count
    got = hpo.disease_phenotypes(annotations, xrefs, term_cui, names, links)
    assert got == {"C0000001": ["Fever", "Rash"], "C0000002": ["Rash"], "C0000003": ["Cough"], "C0000010": ["Rash", "Fever"]}


def test_phenotypes_table_round_trips(tmp_path):
    table = {"C0000002": ["Fever"], "C0000001": ["Rash", "Fever"]}
    path = hpo.write_phenotypes(table, tmp_path / "phenotypes.parquet")
    assert hpo.read_phenotypes(path) == {"C0000001": ["Rash", "Fever"], "C0000002": ["Fever"]}
    assert hpo.read_phenotypes(None) == {}


PARTS = EntryParts("C0000001", "Invented syndrome", "A disease of invented organs.", ("Invented syndrome", "Fictional disease"))


def test_answer_entry_states_parents_and_phenotypes():
    entry = answer_entry(PARTS, ["Rare disease", "Invented syndrome", "Rare disease"], ["Rash", "Fever", "Rash"])
    assert entry == {"_id": "C0000001", "title": "Invented syndrome",
                     "text": "A disease of invented organs. Synonyms: Fictional disease. A kind of: Rare disease. "
                             "Signs and symptoms: Rash; Fever."}
    assert answer_entry(PARTS) == concept_entry(PARTS)
    many = answer_entry(PARTS, [], [f"Sign {i:02d}" for i in range(40)])
    assert many["text"].endswith(f"Sign {MAX_PHENOTYPES - 1:02d}.") and f"Sign {MAX_PHENOTYPES:02d}" not in many["text"]
    bare = EntryParts("C0000002", "Bare", "", ())
    assert answer_entry(bare) == {"_id": "C0000002", "title": "Bare", "text": "Bare"}
    assert answer_entry(bare, ["Parent"])["text"] == "A kind of: Parent."


def test_answer_entries_read_parents_and_phenotypes_from_the_vocabulary_tables():
    concepts = pa.table({"cui": ["C0000001", "C0000002", "C0000003"], "name_en": ["Invented syndrome", "Rare disease", "Organ disease"],
                         "definition": ["A disease of invented organs.", "", ""]})
    atoms = pa.table({"cui": ["C0000001", "C0000002", "C0000003"], "lang": ["en"] * 3,
                      "str": ["Invented syndrome", "Rare disease", "Organ disease"]})
    parents = pa.table({"cui": ["C0000001", "C0000001", "C0000001"], "parent": ["C0000003", "C0000002", "C0009999"]})
    answers = AnswerEntries(entry_parts(concepts, atoms), parents, {"C0000001": ["Rash"]})
    # parents by CUI order, a parent without an entry left out
    assert answers("C0000001")["text"] == "A disease of invented organs. A kind of: Rare disease; Organ disease. Signs and symptoms: Rash."
    assert answers("C0000002") == {"_id": "C0000002", "title": "Rare disease", "text": "Rare disease"}


@pytest.mark.shared
def test_real_phenotypes_reach_do_concepts(tmp_path):
    from umls.obo_vocabulary import build_obo_vocabulary

    data = require_shared("hpo", "phenotype.hpoa").parent.parent
    paths = build_obo_vocabulary(data, tmp_path, {"ENG": "en"}, ["DO", "HPO"])
    table = hpo.read_phenotypes(paths["phenotypes"])
    # ornithine carbamoyltransferase deficiency (DOID:9271, MIM:311250): hyperammonemia is what the exam asks from
    assert "Hyperammonemia" in table["C0268542"][:MAX_PHENOTYPES]
    assert 1000 < len(table) < 3000


def test_hpoa_reader_fuzz(tmp_path):
    """Mutated genuine-shaped annotations (invented rows) read, or fail with one `file:line` InputError."""
    from hypothesis import given
    from hypothesis import strategies as st

    from tests.test_fuzz_readers import FUZZ, mutated, only_input_errors

    genuine = ("#version: 2025-01-16\n" + HEADER + "\n" + "".join(r + "\n" for r in [
        row("OMIM:100", "HP:0000001", "HP:0040281"), row("ORPHA:7", "HP:0000002", "3/4"),
        row("OMIM:100", "HP:0000003", "45%", qualifier="NOT"), row("OMIM:100", "HP:0000004", aspect="I")])).encode()
    path = tmp_path / "phenotype.hpoa"

    @FUZZ
    @given(data=st.data())
    def fuzz(data):
        path.write_bytes(data.draw(mutated(genuine)))
        only_input_errors(hpo.read_hpoa, path)

    fuzz()
    path.write_bytes(genuine)
    assert hpo.read_hpoa(path) == {"OMIM:100": {"HP:0000001": 0.9}, "ORPHA:7": {"HP:0000002": 0.75}}
