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
from tasks.grounding.keys import (
    ANSWER_NOT_KEY, NAMES_ANSWER, NO_ANSWER_CONCEPT, answer_keys, asked_about, item_keys, option_requests,
)
from tasks.grounding.stage import ground_shard
from tests.tasks.grounding.test_grounding_matchers import _lang
from tests.tasks.release.test_xqa_answers import tiny_vocab  # noqa: F401  (a fixture)

GROUPS = {"C1": "DISO", "C2": "DISO", "C3": "DISO", "C8": "CONC"}
KEY = {"DISO"}
DEFINED = {"C1", "C2", "C3"}


def opts(*correct: bool) -> list[dict]:
    return [{"text": f"o{i}", "pivot": None, "correct": c} for i, c in enumerate(correct)]


# ------------------------------------------------------------------------------ the pure choice


def m(cui: str, score: float = 1.0) -> dict:
    return {"cui": cui, "score": score, "start": 0, "end": 1, "text": "x"}


def keys(mode, text_keys, has_passages, options, named, correct=(), question=frozenset()):
    return item_keys(mode, text_keys, has_passages, options, named, list(correct), set(question), GROUPS, KEY, DEFINED, 0.8)


def test_text_keys_are_what_the_text_names_and_a_cases_options_do_not_count():
    # a case with its explanation as gold: its options (and its answer's mentions) say nothing with "text"
    assert keys("text", ["C2", "C3"], True, [], [], correct=[m("C1")]) == (["C2", "C3"], [], [], None)
    # an exam item (its options are its gold): the text's concepts and the answer's
    assert keys("text", ["C2"], False, opts(True, False), ["C1", "C3"], question={"C2"}) == (["C1", "C2"], ["C1"], ["C3"], None)


def test_answer_keys_are_what_the_correct_options_name_only():
    # a case: key = every key-group concept its correct options mention (not the text's), gold
    # stays the explanation (no answer CUIs); the case naming it is no reason to drop it
    assert keys("answer", ["C2", "C3"], True, [], [], correct=[m("C3"), m("C1"), m("C8"), m("C1")], question={"C3"}) == (
        ["C1", "C3"], [], [], None)
    # a mention below min_score does not count
    assert keys("answer", ["C2"], True, [], [], correct=[m("C1"), m("C3", 0.79)]) == (["C1"], [], [], None)
    # an exam item: key = its answer's concept, not beside the text's; gold and negatives as with "text"
    assert keys("answer", ["C2"], False, opts(True, False), ["C1", "C3"], question={"C2"}) == (["C1"], ["C1"], ["C3"], None)


def test_an_answer_naming_no_key_concept_leaves_no_key_and_says_why():
    assert keys("answer", ["C2", "C3"], True, [], [], correct=[]) == ([], [], [], NO_ANSWER_CONCEPT)
    assert keys("answer", ["C2", "C3"], True, [], [], correct=[m("C1", 0.5)]) == ([], [], [], NO_ANSWER_CONCEPT)
    assert keys("answer", ["C2", "C3"], True, [], [], correct=[m("C8")]) == ([], [], [], ANSWER_NOT_KEY)
    # an exam item keeps every reason of answer_concepts, and no text concept stands in
    assert keys("answer", ["C1", "C2"], False, opts(True, False), ["C1", "C3"], question={"C1"}) == ([], [], [], NAMES_ANSWER)
    assert keys("answer", ["C1", "C2"], False, opts(True, False), [None, "C3"]) == ([], [], [], NO_ANSWER_CONCEPT)


def test_answer_keys_are_sorted_unique_and_confident():
    assert answer_keys([m("C2"), m("C1"), m("C2")], GROUPS, KEY, 0.8) == (["C1", "C2"], None)
    assert answer_keys([m("C2", 0.8)], GROUPS, KEY, 0.8) == (["C2"], None)
    assert answer_keys([m("C2", 0.79)], GROUPS, KEY, 0.8) == ([], NO_ANSWER_CONCEPT)
    assert answer_keys([m("C8"), m("C9")], GROUPS, KEY, 0.8) == ([], ANSWER_NOT_KEY)


def test_which_option_texts_are_grounded():
    o = [{"text": "Uno.", "pivot": "One.", "correct": False}, {"text": "Dos.", "pivot": "Two.", "correct": True},
         {"text": "Tres.", "pivot": None, "correct": True}]
    case = {"lang": "es", "passage_ids": ["p"], "options": o}
    assert option_requests({**case, "key_concepts": "answer"}) == [("en", "Two."), ("es", "Dos."), ("es", "Tres.")]
    assert asked_about({**case, "key_concepts": "answer"}) is True
    assert option_requests({**case, "key_concepts": "text"}) == [] and asked_about({**case, "key_concepts": "text"}) is False
    assert option_requests(case) == []  # shards without the column: "text"
    exam = {"lang": "es", "passage_ids": [], "options": o}
    assert option_requests({**exam, "key_concepts": "answer"}) == option_requests(exam) == [("en", "One."), ("en", "Two.")]
    assert asked_about({**exam, "key_concepts": "answer"}) is False


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
        case(5, "answer", history, [("Blood culture", True), ("Gout", False)], "p-fabry"),  # names no concept
        case(6, "answer", history, [("Migraine", True), ("Gout", False)], "p-fabry"),  # outside the key groups
        # a phrase: every key concept it mentions (not named as a whole: the gold is the explanation)
        case(7, "answer", history, [("Gout", False), ("Treat the gout and the Fabry disease", True)], "p-gout"),
    ]
    schema = pa.schema([("id", pa.string()), ("task", pa.string()), ("lang", pa.string()), ("text", pa.string()),
                        ("pivot", pa.string()), ("passage_ids", pa.list_(pa.string())),
                        ("options", pa.list_(pa.struct([("text", pa.string()), ("pivot", pa.string()), ("correct", pa.bool_())]))),
                        ("key_concepts", pa.string())])
    shard = tmp_path / "items-00000.parquet"
    write_parquet(pa.Table.from_pylist(items, schema=schema), shard)
    corpus = tmp_path / "corpus-evidence.parquet"
    write_parquet(pa.table({"id": ["p-fabry", "p-fever", "p-gout"], "title": ["", "", ""],
                            "text": ["Pain in the hands of a boy is Fabry disease until proven otherwise.",
                                     "The fever is not the clue here.", "Gout comes first."]}), corpus)
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
        "e7": (["C0000001", "C0000005"], True, [], None),
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
