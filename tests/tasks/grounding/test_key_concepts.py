"""What an item's key concepts are (a source's `key_concepts`): "text", every key-group concept its
text or pivot names; "answer", the concepts its correct options name (a clinical case asks about
its answer, not every finding of its history). The pure choice on crafted items, the grounding
stage on a tiny vocabulary, the allocation's verdict, the sources stage's column and the config's
one-line error. Invented fixtures only."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from common.parquet import write_parquet
from tasks.allocation.stage import grounding_verdict
from tasks.grounding.stage import (
    ANSWER_NOT_KEY, NAMES_ANSWER, NO_ANSWER_CONCEPT, correct_concepts, ground_shard, item_keys, uses_options,
)
from tests.tasks.grounding.test_grounding_matchers import _lang
from tests.tasks.release.test_xqa_answers import tiny_vocab  # noqa: F401  (a fixture)

GROUPS = {"C1": "DISO", "C2": "DISO", "C3": "DISO", "C8": "CONC"}
KEY = {"DISO"}
DEFINED = {"C1", "C2", "C3"}


def opts(*correct: bool) -> list[dict]:
    return [{"text": f"o{i}", "pivot": None, "correct": c} for i, c in enumerate(correct)]


# ------------------------------------------------------------------------------ the pure choice


def test_text_keys_are_what_the_text_names_and_the_options_of_a_case_do_not_count():
    # a case with its explanation as gold: its options say nothing with "text"
    assert item_keys("text", ["C2", "C3"], True, opts(True, False), ["C1", "C3"], {"C2", "C3"}, GROUPS, KEY, DEFINED) == (
        ["C2", "C3"], [], [], None)
    # an exam item (its options are its gold): the text's concepts and the answer's
    assert item_keys("text", ["C2"], False, opts(True, False), ["C1", "C3"], {"C2"}, GROUPS, KEY, DEFINED) == (
        ["C1", "C2"], ["C1"], ["C3"], None)
    assert item_keys("text", ["C2"], True, [], [], {"C2"}, GROUPS, KEY, DEFINED) == (["C2"], [], [], None)


def test_answer_keys_are_the_correct_options_concepts_only():
    # a case with its explanation as gold: key = the answer, gold stays the explanation (no answer CUIs)
    assert item_keys("answer", ["C2", "C3"], True, opts(False, True, True), ["C3", "C1", "C2"], {"C2", "C3"}, GROUPS, KEY,
                     DEFINED) == (["C1", "C2"], [], [], None)
    # its case naming the answer is no reason to drop it (the gold is the explanation, not the entry)
    assert item_keys("answer", ["C1"], True, opts(True, False), ["C1", None], {"C1"}, GROUPS, KEY, DEFINED) == (
        ["C1"], [], [], None)
    # an exam item: key = the answer, not beside the text's concepts; gold and negatives as with "text"
    assert item_keys("answer", ["C2"], False, opts(True, False), ["C1", "C3"], {"C2"}, GROUPS, KEY, DEFINED) == (
        ["C1"], ["C1"], ["C3"], None)


def test_an_answer_naming_no_key_concept_leaves_no_key_and_says_why():
    case = dict(text_keys=["C2", "C3"], has_passages=True, question_cuis={"C2", "C3"}, group_of=GROUPS, key_groups=KEY,
                defined=DEFINED)
    assert item_keys("answer", options=opts(True, False), named=[None, "C1"], **case) == ([], [], [], NO_ANSWER_CONCEPT)
    assert item_keys("answer", options=opts(True, True), named=["C1", None], **case) == ([], [], [], NO_ANSWER_CONCEPT)
    assert item_keys("answer", options=opts(True, False), named=["C8", "C1"], **case) == ([], [], [], ANSWER_NOT_KEY)
    assert item_keys("answer", options=[], named=[], **case) == ([], [], [], NO_ANSWER_CONCEPT)
    assert item_keys("answer", options=opts(False, False), named=["C1", "C2"], **case) == ([], [], [], NO_ANSWER_CONCEPT)
    # an exam item keeps every reason of answer_concepts, and no text concept stands in
    assert item_keys("answer", ["C1", "C2"], False, opts(True, False), ["C1", "C3"], {"C1"}, GROUPS, KEY, DEFINED) == (
        [], [], [], NAMES_ANSWER)


def test_correct_concepts_are_sorted_and_unique():
    assert correct_concepts(opts(True, True, False), ["C2", "C1", "C3"], GROUPS, KEY) == (["C1", "C2"], None)
    assert correct_concepts(opts(True, True), ["C2", "C2"], GROUPS, KEY) == (["C2"], None)
    assert correct_concepts(opts(True, True), ["C2", "C8"], GROUPS, KEY) == ([], ANSWER_NOT_KEY)


def test_options_are_grounded_where_they_are_gold_or_say_what_is_asked():
    case = {"passage_ids": ["p"], "options": opts(True)}
    assert uses_options({**case, "key_concepts": "answer"}) is True
    assert uses_options({**case, "key_concepts": "text"}) is False
    assert uses_options(case) is False  # shards without the column: "text"
    assert uses_options({"passage_ids": [], "options": opts(True), "key_concepts": "text"}) is True
    assert uses_options({"passage_ids": ["p"], "options": [], "key_concepts": "answer"}) is False


# ------------------------------------------------------------------------------ the stage


def test_ground_shard_keys_a_case_by_its_answer(tiny_vocab, tmp_path):  # noqa: F811
    def case(i, mode, text, options, passage):
        return {"id": f"e{i}", "task": "evidence", "lang": "en", "text": text, "pivot": text, "passage_ids": [passage],
                "options": [{"text": t, "pivot": None, "correct": c} for t, c in options], "key_concepts": mode}

    history = "A boy with fever and a rash in the hands. What is the diagnosis?"
    opts_ = [("Fabry disease.", True), ("Gout", False), ("Migraine", False)]
    items = [
        case(1, "answer", history, opts_, "p-fabry"),  # the explanation names the answer
        case(2, "text", history, opts_, "p-fabry"),  # the same case keyed by its history
        case(3, "answer", history, opts_, "p-fever"),  # the explanation names the fever only: unanswerable
        case(4, "text", history, opts_, "p-fever"),
        case(5, "answer", history, [("Blood culture", True), ("Gout", False)], "p-fabry"),  # names nothing as a whole
        case(6, "answer", history, [("Migraine", True), ("Gout", False)], "p-fabry"),  # outside the key groups
    ]
    schema = pa.schema([("id", pa.string()), ("task", pa.string()), ("lang", pa.string()), ("text", pa.string()),
                        ("pivot", pa.string()), ("passage_ids", pa.list_(pa.string())),
                        ("options", pa.list_(pa.struct([("text", pa.string()), ("pivot", pa.string()), ("correct", pa.bool_())]))),
                        ("key_concepts", pa.string())])
    shard = tmp_path / "items-00000.parquet"
    write_parquet(pa.Table.from_pylist(items, schema=schema), shard)
    corpus = tmp_path / "corpus-evidence.parquet"
    write_parquet(pa.table({"id": ["p-fabry", "p-fever"], "title": ["", ""],
                            "text": ["Pain in the hands of a boy is Fabry disease until proven otherwise.",
                                     "The fever is not the clue here."]}), corpus)
    from schemas.parameters import GroundingParameters

    langs = {"en": _lang("en").model_dump(mode="json")}
    out = ground_shard(str(shard), {"evidence": str(corpus)}, tiny_vocab, GroundingParameters.of(langs, ["DISO"], 0.8),
                       str(tmp_path / "cache"), str(tmp_path / "grounded.parquet"))
    got = {r["id"]: (r["key_cuis"], r["answerable"], r["answer_cuis"], r["no_passage"]) for r in pq.read_table(out).to_pylist()}
    assert got == {
        "e1": (["C0000001"], True, [], None),
        "e2": (["C0000003", "C0000004"], False, [], None),  # rash, fever: the explanation names neither
        "e3": (["C0000001"], False, [], None),
        "e4": (["C0000003", "C0000004"], True, [], None),
        "e5": ([], False, [], NO_ANSWER_CONCEPT),
        "e6": ([], False, [], ANSWER_NOT_KEY),
    }


def test_a_case_without_an_answer_concept_is_dropped_with_that_reason():
    item = {"id": "e5", "task": "evidence"}
    drop = grounding_verdict(item, {"answerable": False, "no_passage": NO_ANSWER_CONCEPT})
    assert (drop.stage, drop.code) == ("grounding", NO_ANSWER_CONCEPT)
    assert grounding_verdict(item, {"answerable": False, "no_passage": None}).code == "unanswerable"
    assert grounding_verdict(item, {"answerable": True, "no_passage": None}) is None


# ------------------------------------------------------------------------------ sources stage and config


def test_the_sources_stage_carries_each_sources_choice_on_its_items(tmp_path):
    from tasks.sources.stage import load_sources
    from tests.tasks.sources.test_casimedicos import EN, ES, FR, write_set

    root = write_set(tmp_path / "casimedicos", {"EN": EN, "ES": ES, "FR": FR})
    out = tmp_path / "sources"
    out.mkdir()
    got = load_sources([{"format": "casimedicos", "path": str(root), "options": {}, "key_concepts": "answer"},
                        {"format": "casimedicos", "path": str(root), "options": {"task": "xqa", "passage": "concept"}}],
                       [], ["en", "es", "fr"], 100, out)
    rows = pq.read_table(got["shards"][0]).to_pylist()
    assert [(r["id"], r["key_concepts"]) for r in rows] == [
        ("casimedicos-dev-001", "answer"), ("casimedicos-xqa-dev-001", "text"), ("casimedicos-xqa-dev-004", "text")]
    assert [o["correct"] for o in rows[0]["options"]] == [True, False, False, False, False]


def test_key_concepts_is_text_or_answer_and_a_bad_value_is_one_line(tmp_path):
    from pathlib import Path

    from pydantic import ValidationError

    from schemas.config import BuildConfig, _first_error
    from tests.cli.test_bad_input import _config, _in_process, _sample_raw

    raw = _sample_raw()
    assert BuildConfig(**raw).sources[0].key_concepts == "text"
    raw["sources"][1]["key_concepts"] = "answer"
    assert [s.key_concepts for s in BuildConfig(**raw).sources] == ["text", "answer"]
    raw["sources"][1]["key_concepts"] = "options"
    with pytest.raises(ValidationError) as exc:
        BuildConfig(**raw)
    assert _first_error(Path("c.toml"), exc.value).field == "sources.1.key_concepts"
    cfg = _config(tmp_path, **{'path = "' + str(Path(__file__).parents[3] / "sources/sample/evidence.jsonl") + '"':
                               'path = "' + str(Path(__file__).parents[3] / "sources/sample/evidence.jsonl") + '"\nkey_concepts = "all"'})
    code, lines = _in_process("build", "--config", str(cfg))
    assert code == 2 and len(lines) == 1, lines
    assert lines[0] == f"error: {cfg}: field 'sources.1.key_concepts': Input should be 'text' or 'answer'", lines[0]
    assert not (tmp_path / "releases").exists()
