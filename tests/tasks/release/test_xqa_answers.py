"""xqa gold passages for multiple-choice sources without answer text: adapters (passage =
"concept"), grounding of the options (tasks/grounding/stage.py, keys.py), the release's item corpus
(tasks/release/writers.py) and PubMedQA's conclusion passages. Invented fixtures only."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from common.errors import InputError
from common.parquet import write_parquet
from schemas.records import Option, Passage, SourceItem
from tasks.grounding.keys import (
    AMBIGUOUS, ANSWER_NOT_KEY, NAMES_ANSWER, NO_ANSWER_CONCEPT, NO_DEFINITION, answer_concepts, option_concept,
)
from tasks.grounding.stage import ground_shard
from tasks.allocation.concept_entries import EntryParts, answer_entry
from tasks.release.writers import _item_documents
from tasks.sources.stage import load_sources
from tests.tasks.sources.test_adapters import (
    cnm, fmc, iga_question, iga_translation, igakuqa_tree, mmed, pqa, read, write_json, write_jsonl,
)
from tests.tasks.grounding.test_grounding_matchers import _lang


# ------------------------------------------------------------------------------ records


def test_an_item_needs_a_passage_or_a_correct_option():
    base = dict(id="q1", task="xqa", lang="en", text="Which one?")
    assert SourceItem(**base, options=[Option(text="Rash", correct=True)]).passages == []
    assert SourceItem(**base, passages=[Passage(id="d", text="t")]).options == []
    for bad in ({}, {"options": [Option(text="Rash")]}, {"passages": [], "options": []}):
        with pytest.raises(ValidationError, match="expected at least one passage, or options with a correct one"):
            SourceItem(**base, **bad)


def test_sample_jsonl_item_without_passages_is_a_located_error(tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [{"id": "q1", "task": "xqa", "lang": "en", "text": "Which one?", "passages": []}])
    msg = str(pytest.raises(InputError, read, "sample-jsonl", path).value)
    assert msg.startswith(f"{path}:1: ") and "expected at least one passage" in msg


# ------------------------------------------------------------------------------ adapters


def test_igakuqa_concept_options_with_english_pivots(tmp_path):
    root = igakuqa_tree(tmp_path, [
        iga_question(),
        iga_question("112A2", answer=["a", "c"]),
        iga_question("112A3", answer=["a or d"]),
        iga_question("112A4", choices=["ａ", "", "ｃ", "ｄ", "ｅ"], answer=["b"]),  # options in a table of the question
        iga_question("112A75", choices=[], answer=["42"]),  # a calculation: the value is the answer
    ])
    write_jsonl(root / "2018" / "112-A_translate.jsonl", [
        iga_translation(), iga_translation("112A2"), iga_translation("112A3"),
        iga_translation("112A4", choices_en=["Sorry, I cannot translate a.", "", "c", "d", "e"]),
        iga_translation("112A75", choices_en=[], problem_text_en="Compute the invented index."),
    ])
    items = read("igakuqa", root, passage="concept")
    assert [i.id for i in items] == ["igakuqa-2018-A-1", "igakuqa-2018-A-2", "igakuqa-2018-A-3", "igakuqa-2018-A-4", "igakuqa-2018-A-75"]
    assert all(i.passages == [] for i in items)
    first = items[0]
    assert first.pivot == "Which finding is most common in the invented syndrome?" and first.text.startswith("架空の症候群")
    assert [(o.text, o.pivot, o.correct) for o in first.options] == [
        ("発熱", "Fever", False), ("発疹", "Rash", True), ("咳嗽", "Cough", False), ("頭痛", "Headache", False),
        ("腹痛", "Abdominal pain", False)]
    assert [o.correct for o in items[1].options] == [True, False, True, False, False]
    assert [o.correct for o in items[2].options] == [True, False, False, True, False]  # "a or d": both count
    assert [(o.text, o.pivot, o.correct) for o in items[3].options] == [
        ("a", "a", False), ("b", "b", True), ("c", "c", False), ("d", "d", False), ("e", "e", False)]
    assert [(o.text, o.pivot, o.correct) for o in items[4].options] == [("42", "42", True)]


def test_frenchmedmcqa_and_cnmleqa_concept_options(tmp_path):
    path = write_json(tmp_path / "dev.json", [fmc()])
    [item] = read("frenchmedmcqa", path, passage="concept")
    assert item.passages == [] and item.pivot is None
    assert [(o.text, o.pivot, o.correct) for o in item.options] == [
        ("Il est hydrosoluble", None, True), ("Il est volatil", None, False), ("Il est inerte", None, False),
        ("Il est acide", None, True), ("Il est basique", None, False)]
    path = write_json(tmp_path / "CNMLEQA-3k.json", [cnm(answer=" opc ", ope="")])
    [item] = read("cnmleqa", path, passage="concept")
    assert item.passages == []
    assert [(o.text, o.correct) for o in item.options] == [("发热", False), ("皮疹", False), ("咳嗽", True), ("头痛", False)]


def test_mmedbench_concept_options_keep_a_free_text_answer(tmp_path):
    path = write_jsonl(tmp_path / "English.jsonl", [mmed(language=..., answer_idx=..., answer="Retinol"), mmed(id="q2")])
    free, keyed = read("mmedbench-jsonl", path, passage="concept")
    assert [(o.text, o.correct) for o in free.options] == [
        ("Vitamin A", False), ("Vitamin C", False), ("Vitamin D", False), ("Retinol", True)]
    assert [(o.text, o.correct) for o in keyed.options] == [("Vitamin A", True), ("Vitamin C", False), ("Vitamin D", False)]
    assert free.passages == keyed.passages == []


def test_pubmedqa_conclusion_passage_and_task_specific_ids(tmp_path):
    path = write_json(tmp_path / "ori_pqal.json", {"1001": pqa()})
    [ev] = read("pubmedqa", path)
    [xqa] = read("pubmedqa", path, task="xqa", passage="conclusion")
    assert ev.id == "pubmedqa-1001" and xqa.id == "pubmedqa-xqa-1001"
    assert [(p.id, p.text) for p in xqa.passages] == [("pubmed-1001-long", "Compound X shortened fever.")]
    assert [p.id for p in read("pubmedqa", path, task="xqa")[0].passages] == ["pubmed-1001-0", "pubmed-1001-1"]
    assert "options.passage" in str(pytest.raises(InputError, read, "pubmedqa", path, passage="abstract").value)
    path = write_json(tmp_path / "no_long.json", {"1001": pqa(LONG_ANSWER=...)})
    assert "1001.LONG_ANSWER" in str(pytest.raises(InputError, read, "pubmedqa", path, passage="conclusion").value)


def test_one_pubmedqa_file_feeds_both_tasks(tmp_path):
    path = write_json(tmp_path / "ori_pqal.json", {"1001": pqa()})
    srcs = [{"format": "pubmedqa", "path": str(path)},
            {"format": "pubmedqa", "path": str(path), "options": {"task": "xqa", "passage": "conclusion"}}]
    out = load_sources(srcs, [], ["en"], 10, tmp_path)
    rows = pq.read_table(out["shards"][0]).to_pylist()
    assert [(r["id"], r["task"], r["passage_ids"], r["options"]) for r in rows] == [
        ("pubmedqa-1001", "evidence", ["pubmed-1001-0", "pubmed-1001-1"], []),
        ("pubmedqa-xqa-1001", "xqa", ["pubmed-1001-long"], [])]
    assert pq.read_table(out["corpora"]["xqa"])["id"].to_pylist() == ["pubmed-1001-long"]


def test_load_sources_keeps_options(tmp_path):
    root = igakuqa_tree(tmp_path, [iga_question()])
    out = load_sources([{"format": "igakuqa", "path": str(root), "options": {"passage": "concept"}}], [], ["en", "ja"], 10, tmp_path)
    [row] = pq.read_table(out["shards"][0]).to_pylist()
    assert row["passage_ids"] == []
    assert row["options"][1] == {"text": "発疹", "pivot": "Rash", "correct": True}
    assert pq.read_table(out["corpora"]["xqa"]).num_rows == 0


# ------------------------------------------------------------------------------ grounding: pure


def M(start: int, end: int, cui: str, score: float = 1.0) -> dict:
    return {"start": start, "end": end, "text": "", "cui": cui, "score": score}


STOP = {"the", "a", "of"}


def test_option_concept_needs_a_mention_covering_the_option():
    assert option_concept("Fabry disease.", [M(0, 13, "C1")], 0.8, STOP) == "C1"
    assert option_concept("The Fabry disease", [M(4, 17, "C1")], 0.8, STOP) == "C1"  # stop words may remain
    assert option_concept("Blood culture", [M(0, 5, "C2")], 0.8, STOP) is None  # names a test, not blood
    assert option_concept("Fabry disease", [M(0, 13, "C1", 0.75)], 0.8, STOP) is None  # below min_score
    assert option_concept("Fabry disease", [], 0.8, STOP) is None
    assert option_concept("法布里病。", [M(0, 4, "C3")], 0.8, set()) == "C3"  # CJK: punctuation only may remain
    assert option_concept("法布里病患者", [M(0, 4, "C3")], 0.8, set()) is None
    # the best covering mention: score, then length, then CUI
    assert option_concept("Fabry disease", [M(0, 13, "C9", 0.9), M(0, 13, "C8", 0.95)], 0.8, STOP) == "C8"
    assert option_concept("Fabry disease", [M(0, 13, "C9"), M(0, 13, "C8")], 0.8, STOP) == "C8"


def opts(*correct: bool) -> list[dict]:
    return [{"text": f"o{i}", "pivot": None, "correct": c} for i, c in enumerate(correct)]


GROUPS = {"C1": "DISO", "C2": "DISO", "C3": "DISO", "C4": "CONC", "C5": "DISO"}
DEFINED = {"C1", "C2", "C3", "C4"}


def test_answer_concepts_and_every_reason():
    key = {"DISO"}
    assert answer_concepts(opts(True, False, False), ["C1", "C2", None], set(), GROUPS, key, DEFINED) == (["C1"], ["C2"], None)
    assert answer_concepts(opts(True, True, False, False), ["C3", "C1", "C2", "C2"], {"C9"}, GROUPS, key, DEFINED) == (
        ["C1", "C3"], ["C2"], None)
    assert answer_concepts(opts(True, False), [None, "C2"], set(), GROUPS, key, DEFINED) == ([], [], NO_ANSWER_CONCEPT)
    assert answer_concepts(opts(True, True), ["C1", None], set(), GROUPS, key, DEFINED) == ([], [], NO_ANSWER_CONCEPT)
    assert answer_concepts(opts(True, False), ["C4", "C1"], set(), GROUPS, key, DEFINED) == ([], [], ANSWER_NOT_KEY)
    assert answer_concepts(opts(True, False), ["C5", "C1"], set(), GROUPS, key, DEFINED) == ([], [], NO_DEFINITION)
    assert answer_concepts(opts(True, False), ["C1", "C1"], set(), GROUPS, key, DEFINED) == ([], [], AMBIGUOUS)
    assert answer_concepts(opts(True, False), ["C1", "C2"], {"C1"}, GROUPS, key, DEFINED) == ([], [], NAMES_ANSWER)


# ------------------------------------------------------------------------------ grounding: the stage


@pytest.fixture(scope="module")
def tiny_vocab(tmp_path_factory):
    d = tmp_path_factory.mktemp("vocab")
    atoms = [("C0000001", "en", "Fabry disease"), ("C0000002", "en", "hypertension"), ("C0000003", "en", "rash"),
             ("C0000004", "en", "fever"), ("C0000005", "en", "gout"), ("C0000006", "en", "migraine"),
             ("C0000001", "zh", "法布里病"), ("C0000003", "zh", "皮疹"), ("C0000004", "zh", "发热")]
    by_lang = {}
    for lang in ("en", "zh"):
        rows = [a for a in atoms if a[1] == lang]
        t = pa.table({"cui": [r[0] for r in rows], "lang": [r[1] for r in rows], "str": [r[2] for r in rows],
                      "ispref": [True] * len(rows), "sab": ["DO"] * len(rows), "tty": ["PT"] * len(rows)})
        by_lang[lang] = str(d / f"atoms-{lang}.parquet")
        write_parquet(t, Path(by_lang[lang]))
    cuis = [f"C000000{i}" for i in range(1, 7)]
    defs = {"C0000001": "A lysosomal storage disease.", "C0000003": "A skin eruption.", "C0000004": "Raised body temperature.",
            "C0000006": "A recurrent headache disorder."}
    concepts = pa.table({"cui": cuis, "tui": ["T047"] * 6, "sty": ["Disease or Syndrome"] * 6,
                         "group": ["DISO"] * 5 + ["CONC"], "name_en": ["n"] * 6, "definition": [defs.get(c, "") for c in cuis]})
    write_parquet(concepts, d / "concepts.parquet")
    return {"concepts": str(d / "concepts.parquet"), "atoms_by_lang": by_lang}


def test_ground_shard_resolves_answers_negatives_and_reasons(tiny_vocab, tmp_path):
    def item(i, lang, text, pivot, options):
        return {"id": f"q{i}", "task": "xqa", "lang": lang, "text": text, "pivot": pivot, "passage_ids": [],
                "options": [{"text": t, "pivot": p, "correct": c} for t, p, c in options]}

    items = [
        item(1, "en", "Which lysosomal disorder causes pain in the hands?", None,
             [("Fabry disease.", None, True), ("Gout", None, False), ("Blood culture", None, False)]),
        item(2, "zh", "哪种疾病有皮疹？", None, [("法布里病", None, True), ("发热", None, False)]),
        item(3, "en", "Which test confirms it?", None, [("Blood culture", None, True), ("Fabry disease", None, False)]),
        item(4, "en", "What do patients with rash have?", None, [("Rash", None, True), ("Fever", None, False)]),
        item(5, "en", "Which one has no definition here?", None, [("Gout", None, True), ("Rash", None, False)]),
        item(6, "en", "Which one is outside the key groups?", None, [("Migraine", None, True), ("Rash", None, False)]),
        item(7, "zh", "哪种疾病？", "Which disease?", [("某病", "Fabry disease", True), ("皮疹", None, False)]),
    ]
    schema = pa.schema([("id", pa.string()), ("task", pa.string()), ("lang", pa.string()), ("text", pa.string()),
                        ("pivot", pa.string()), ("passage_ids", pa.list_(pa.string())),
                        ("options", pa.list_(pa.struct([("text", pa.string()), ("pivot", pa.string()), ("correct", pa.bool_())])))])
    shard = tmp_path / "items-00000.parquet"
    write_parquet(pa.Table.from_pylist(items, schema=schema), shard)
    corpus = tmp_path / "corpus-xqa.parquet"
    write_parquet(pa.table({"id": pa.array([], pa.string()), "title": pa.array([], pa.string()), "text": pa.array([], pa.string())}), corpus)
    langs = {c: _lang(c).model_dump(mode="json") for c in ("en", "zh")}
    from schemas.parameters import GroundingParameters

    out = ground_shard(str(shard), {"xqa": str(corpus)}, tiny_vocab, GroundingParameters.of(langs, ["DISO"], 0.8),
                       str(tmp_path / "cache"), str(tmp_path / "grounded.parquet"))
    rows = {r["id"]: r for r in pq.read_table(out).to_pylist()}
    got = {k: (r["answer_cuis"], r["negative_cuis"], r["no_passage"], r["key_cuis"]) for k, r in rows.items()}
    assert got == {
        "q1": (["C0000001"], ["C0000005"], None, ["C0000001"]),  # "Blood culture" names nothing as a whole
        "q2": (["C0000001"], ["C0000004"], None, ["C0000001", "C0000003"]),  # zh options, grounded natively
        "q3": ([], [], NO_ANSWER_CONCEPT, []),
        "q4": ([], [], NAMES_ANSWER, ["C0000003"]),
        "q5": ([], [], NO_DEFINITION, []),
        "q6": ([], [], ANSWER_NOT_KEY, []),
        "q7": (["C0000001"], ["C0000003"], None, ["C0000001"]),  # the English text of an option first
    }


# ------------------------------------------------------------------------------ release corpus


def test_item_corpus_adds_answer_and_negative_concept_entries():
    entries = {"C0000001": EntryParts("C0000001", "Fabry disease", "A lysosomal storage disease.",
                                      ("Fabry disease", "Anderson-Fabry disease")),
               "C0000005": EntryParts("C0000005", "gout", "", ("gout",)),
               "C0000009": EntryParts("C0000009", "rash", "A skin eruption.", ())}
    rows = [
        {"task": "xqa", "lang": "ja", "passage_ids": ["C0000001"], "distractor_cuis": ["C0000005"]},
        {"task": "xqa", "lang": "en", "passage_ids": ["pubmed-7-long"], "distractor_cuis": []},
        {"task": "evidence", "lang": "en", "passage_ids": ["C0000009"], "distractor_cuis": []},
    ]
    passages = [{"id": "pubmed-7-long", "title": "", "text": "It does."}, {"id": "pubmed-8-long", "title": "", "text": "No."}]
    # a concept's document is its answer entry: parents and HPO phenotypes where it has them
    kinds, signs = {"C0000001": ["sphingolipidosis"]}, {"C0000001": ["Angiokeratoma", "Acroparesthesia"]}
    answers = lambda c: answer_entry(entries[c], kinds.get(c, ()), signs.get(c, ()))  # noqa: E731
    assert _item_documents("xqa", rows, passages, answers) == [
        {"_id": "C0000001", "title": "Fabry disease", "text": "A lysosomal storage disease. Synonyms: Anderson-Fabry disease. "
                                                              "A kind of: sphingolipidosis. Signs and symptoms: Angiokeratoma; Acroparesthesia."},
        {"_id": "C0000005", "title": "gout", "text": "gout"},
        {"_id": "pubmed-7-long", "title": "", "text": "It does."},
        {"_id": "pubmed-8-long", "title": "", "text": "No."},
    ]
    assert [d["_id"] for d in _item_documents("evidence", rows, [], answers)] == ["C0000009"]


# ------------------------------------------------------------------------------ end to end (sample vocabulary)


@pytest.mark.slow
def test_sample_build_with_a_concept_source(prefect_harness, tmp_path):
    """The sample plus invented English multiple-choice questions whose options are sample
    vocabulary concepts: answers' entries are gold, the other options' entries are in the
    corpus, an answer naming no concept is dropped with its reason, and the audit passes."""
    import tomllib

    from flows.build_release import build_release_flow
    from tests.conftest import SAMPLE_CONFIG

    questions = write_jsonl(tmp_path / "English.jsonl", [
        {"id": "af", "question": "Which rhythm disorder gives an irregularly irregular pulse with no P waves on the ECG?",
         "options": ["Atrial fibrillation", "Sinoatrial block", "Blood culture"], "answer_idx": "A"},
        {"id": "test", "question": "Which investigation identifies the organism in suspected infective endocarditis?",
         "options": ["Blood culture", "Hematemesis"], "answer_idx": "A"},
    ])
    text = SAMPLE_CONFIG.read_text(encoding="utf-8")
    text = text.replace('"../', f'"{SAMPLE_CONFIG.parent.parent}/').replace('"languages.toml"', f'"{SAMPLE_CONFIG.parent}/languages.toml"')
    text = text.replace('version = "0.1.0"', 'version = "0.1.0-concepts"')
    source = f'[[sources]]\nformat = "mmedbench-jsonl"\npath = "{questions}"\noptions = {{ passage = "concept" }}\n\n'
    config = tmp_path / "concepts.toml"
    config.write_text(text.replace("[[sources]]", source + "[[sources]]", 1), encoding="utf-8")
    assert len(tomllib.loads(config.read_text())["sources"]) == len(tomllib.loads(SAMPLE_CONFIG.read_text())["sources"]) + 1
    result = build_release_flow(str(config), release_dir=str(tmp_path / "releases"), work_dir=str(tmp_path / "work"))
    assert isinstance(result, dict), result
    release = Path(result["release"])
    assert result["audit_passed"]
    cell = release / "xqa" / "en"
    qrels = (cell / "qrels" / "test.tsv").read_text().splitlines()
    assert "mmedbench-en-af\tC0004238\t1" in qrels
    corpus = {json.loads(l)["_id"]: json.loads(l) for l in (cell / "corpus.jsonl").read_text().splitlines()}
    assert corpus["C0004238"]["title"] == "atrial fibrillation"
    assert corpus["C0004238"]["text"].startswith("A heart conduction disease")
    assert corpus["C0037188"]["title"] == "Sinoatrial block"  # a hard negative
    query = next(json.loads(l) for l in (cell / "queries.jsonl").read_text().splitlines() if "mmedbench-en-af" in l)
    assert "C0004238" in query["cuis"]
    # every language's cell shares the corpus
    assert (release / "xqa" / "ja" / "corpus.jsonl").read_bytes() == (cell / "corpus.jsonl").read_bytes()
    report = json.loads((release / "build_report.json").read_text())
    said = "no answer passage: a correct option names no vocabulary concept"  # schemas/drops.py words NO_ANSWER_CONCEPT so
    assert {"id": "mmedbench-en-test", "stage": "grounding", "reason": said} in report["dropped"]
    assert report["dropped_by_reason"][said] == 1


def test_a_name_and_its_abbreviation_name_the_option_together():
    """The grounder gives a defined abbreviation its long form's concept: the two mentions of
    one concept cover "X (ABBR)" and "ABBR (X)"; mentions of two concepts do not."""
    text = "Severe combined immunodeficiency (SCID)"
    assert option_concept(text, [M(0, 32, "C1"), M(34, 38, "C1")], 0.8, STOP) == "C1"
    assert option_concept(text, [M(0, 32, "C1")], 0.8, STOP) is None  # "SCID" left over
    assert option_concept(text, [M(0, 32, "C1"), M(34, 38, "C2")], 0.8, STOP) is None  # each leaves the other's words
    assert option_concept(text, [M(0, 32, "C1"), M(34, 38, "C1", 0.75)], 0.8, STOP) is None  # the abbreviation below min_score
    assert option_concept("FSH (Follicle-stimulating hormone)", [M(0, 3, "C5"), M(5, 33, "C5")], 0.8, STOP) == "C5"
    # one concept naming the option alone and one through two mentions: score, then longest mention, then CUI
    assert option_concept(text, [M(0, 38, "C9", 0.9), M(0, 32, "C1"), M(34, 38, "C1")], 0.8, STOP) == "C1"
    assert option_concept(text, [M(0, 38, "C9"), M(0, 32, "C1"), M(34, 38, "C1")], 0.8, STOP) == "C9"
