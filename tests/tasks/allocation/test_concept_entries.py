"""tasks.allocation.concept_entries: cd queries never give their entry away."""
from __future__ import annotations

from tasks.allocation.concept_entries import (
    EntryParts,
    concept_entry,
    english_queries,
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
