"""tasks.allocation.concept_entries: cd queries never give their entry away."""
from __future__ import annotations

import pyarrow as pa
import pytest

from tasks.allocation.concept_entries import (
    MAX_DESCRIPTION_WORDS,
    MAX_SYNONYMS,
    EntryParts,
    concept_entry,
    english_queries,
    entry_parts,
    first_fair_query,
    gives_away,
)

HYPER = EntryParts("C0020550", "Hyperthyroidism", "Excess production of thyroid hormone by the thyroid gland.",
                   ("Hyperthyroidism", "Overactive thyroid", "hyperthyroidism, NOS", "HT", "Thyroid overactivity"))


def test_entry_leaves_out_the_name_and_the_withheld_synonym():
    assert concept_entry(HYPER) == {
        "_id": "C0020550", "title": "Hyperthyroidism",
        "text": "Excess production of thyroid hormone by the thyroid gland. "
                "Synonyms: Overactive thyroid; hyperthyroidism, NOS; HT; Thyroid overactivity."}
    assert concept_entry(HYPER, withheld="overactive  THYROID")["text"] == (
        "Excess production of thyroid hormone by the thyroid gland. Synonyms: hyperthyroidism, NOS; HT; Thyroid overactivity.")


def test_a_withheld_definition_leaves_the_entry():
    parts = EntryParts("C0000001", "Foo disease", "A rare disease of foo.", ())
    assert concept_entry(parts, withheld="A rare disease of foo")["text"] == "Foo disease"


def test_gives_away_ignores_case_accents_spacing_and_punctuation():
    entry = {"title": "Anemia", "text": "Low haemoglobin. Synonyms: Anaemia; Iron-deficiency anemia."}
    assert gives_away("ANEMIA", entry)  # the title
    assert gives_away("iron deficiency  anémia", entry)  # a phrase of the text
    assert not gives_away("anémie", entry)  # a French name spelled differently
    assert not gives_away("iron", {"title": "Anemia", "text": "Ironic."})  # whole words only
    assert gives_away("", entry)  # an empty query says nothing and finds everything


def test_english_queries_prefer_synonyms_far_from_the_name_and_skip_codes_and_qualifiers():
    # "Overactive thyroid" and "Thyroid overactivity" share no word with the name; the
    # shorter first; "HT" (an abbreviation) and "hyperthyroidism, NOS" (bookkeeping) never
    assert english_queries(HYPER) == ["Overactive thyroid", "Thyroid overactivity",
                                      "Excess production of thyroid hormone by the thyroid gland."]


def test_first_fair_query_skips_a_candidate_its_entry_still_contains():
    parts = EntryParts("C0000002", "Heart attack", "Death of heart muscle (myocardial infarction).",
                       ("Myocardial infarction", "Cardiac infarction"))
    # "Myocardial infarction" would stand in the definition even once withheld as a synonym
    assert first_fair_query(["Myocardial infarction", "Cardiac infarction"], parts) == "Cardiac infarction"
    assert first_fair_query(["Myocardial infarction"], parts) is None


# --- contracts a one-token change would break (benchmarks/mutation.py) ---------------------------

def test_an_entry_keeps_at_most_max_synonyms_and_drops_the_name_and_the_query():
    syns = tuple(f"syn{i}" for i in range(MAX_SYNONYMS + 1))
    parts = EntryParts("C0000001", "Foo", "", ("foo",) + syns)
    assert MAX_SYNONYMS == 8
    assert concept_entry(parts) == {"_id": "C0000001", "title": "Foo", "text": "Synonyms: " + "; ".join(syns[:8]) + "."}
    assert concept_entry(parts, withheld="SYN0")["text"] == "Synonyms: " + "; ".join(syns[1:9]) + "."
    assert concept_entry(EntryParts("C0000001", "Foo", "  ", ("FOO",))) == {"_id": "C0000001", "title": "Foo", "text": "Foo"}
    assert concept_entry(EntryParts("C0000001", "Foo", "Bar.", ()), withheld=None)["text"] == "Bar."


def test_a_definition_of_max_words_is_a_query_one_more_is_not():
    assert MAX_DESCRIPTION_WORDS == 40
    words = [f"w{i}" for i in range(41)]
    assert english_queries(EntryParts("C1", "Foo", " ".join(words[:40]), ())) == [" ".join(words[:40])]
    assert english_queries(EntryParts("C1", "Foo", " ".join(words), ())) == []
    assert english_queries(EntryParts("C1", "Foo", "", ())) == []


def test_english_queries_rank_by_shared_words_then_length_then_text_and_skip_codes():
    parts = EntryParts("C1", "Big red fever", "", (
        "red fever", "big red fever", "ABCDEFGH", "ABCDEFGHI", "hot skin", "cold skin", "  ", "Red Fever", "fever (finding)",
        "illness NOS", "fever [obs]"))
    # 'ABCDEFGH' (8 characters) is an abbreviation; 'ABCDEFGHI' (9) is not; 'Red Fever' repeats 'red fever'
    assert english_queries(parts) == ["hot skin", "ABCDEFGHI", "cold skin", "red fever"]  # shorter first, then text order


def test_first_fair_query_returns_the_first_candidate_its_entry_does_not_contain():
    parts = EntryParts("C1", "Heart attack", "Sudden heart attack pain.", ("cardiac infarction", "coronary event"))
    assert first_fair_query(["heart attack", "cardiac infarction", "coronary event"], parts) == "cardiac infarction"
    assert first_fair_query([], parts) is None


def test_entry_parts_reads_english_atoms_in_order_and_skips_unnamed_concepts():
    concepts = pa.table({"cui": ["C1", "C2", "C3"], "name_en": ["Fever", None, "Rash"], "definition": [None, "x", "Red skin."]})
    atoms = pa.table({"cui": ["C1", "C1", "C3", "C1"], "lang": ["en", "fr", "en", "en"], "str": ["Pyrexia", "Fièvre", "Eruption", "Hyperthermia"]})
    assert entry_parts(concepts, atoms) == {"C1": EntryParts("C1", "Fever", "", ("Pyrexia", "Hyperthermia")),
                                            "C3": EntryParts("C3", "Rash", "Red skin.", ("Eruption",))}


def test_english_queries_rank_by_the_share_of_words_in_common_not_their_count():
    # 'red' shares 1 of 2 words with the name (0.5), 'red hot dry skin' 1 of 5 (0.2): fewer shared first
    assert english_queries(EntryParts("C1", "red fever", "", ("red", "red hot dry skin"))) == ["red hot dry skin", "red"]
    # 'fever fever' has the name's one word only: 1/1 = 1.0, after 'fever rashes' (1/2), though longer is later anyway
    assert english_queries(EntryParts("C1", "Fever", "", ("fever fever", "fever rashes"))) == ["fever rashes", "fever fever"]


def test_entry_parts_are_values():
    import dataclasses

    parts = EntryParts("C1", "Fever", "", ("Pyrexia",))
    assert {parts: 1}[EntryParts("C1", "Fever", "", ("Pyrexia",))] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        parts.name = "Rash"
