"""tasks.sources.adapters: every source format on small invented fixtures (good and malformed records),
then a smoke test per format on the real datasets in ../shared/data (skipped when absent).

The fixtures mimic each dataset's structure only; their text is written for these tests.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from common.errors import InputError
from schemas.records import SourceItem
from tasks.sources.adapters import ADAPTERS, cnmleqa_tags, read_beir_corpus
from tasks.sources.adapters.igakuqa import question_hash
from tests.conftest import require_shared

ALL = {"en", "zh", "ja", "fr", "ru", "es"}


def write_jsonl(path: Path, rows: list) -> Path:
    """dicts are dumped as JSON; strings are written verbatim (for malformed lines)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows), encoding="utf-8")
    return path


def write_json(path: Path, obj) -> Path:
    """Pretty-printed like the real files (one key per line), so records start on known lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=4), encoding="utf-8")
    return path


def read(fmt: str, path: Path, languages=ALL, **options) -> list[SourceItem]:
    return list(ADAPTERS[fmt](path, languages, **options))


def error(fmt: str, path: Path, languages=ALL, **options) -> str:
    with pytest.raises(InputError) as exc:
        read(fmt, path, languages, **options)
    return str(exc.value)


def located(message: str, path: Path, line: int | None, field: str | None) -> None:
    where = str(path) if line is None else f"{path}:{line}"
    expected = f"{where}: field {field!r}: " if field else f"{where}: "
    assert message.startswith(expected), f"{message!r} does not start with {expected!r}"


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return n
    raise AssertionError(needle)


# ------------------------------------------------------------------------------------ registry


def test_registry_names_and_signature():
    assert set(ADAPTERS) == {"sample-jsonl", "mmedbench-jsonl", "pubmedqa", "igakuqa", "frenchmedmcqa", "rumeddanet", "cnmleqa", "beir",
                             "casimedicos"}
    for name, fn in ADAPTERS.items():
        assert callable(fn) and isinstance(fn.options, tuple), name
        assert "task" in fn.options or name == "sample-jsonl"


def test_sample_jsonl_is_the_projects_own_adapter():
    items = read("sample-jsonl", Path(__file__).parents[3] / "sources" / "sample" / "xqa.jsonl")
    assert items and all(isinstance(i, SourceItem) for i in items)


@pytest.mark.parametrize("fmt", sorted(ADAPTERS))
def test_unknown_option_names_the_source(fmt, tmp_path):
    path = tmp_path / "anything.json"
    with pytest.raises(InputError) as exc:
        ADAPTERS[fmt](path, ALL, qestion_field="x")
    located(str(exc.value), path, None, "options")
    assert "'qestion_field'" in str(exc.value)


# ------------------------------------------------------------------------------------ mmedbench-jsonl


def mmed(**kw) -> dict:
    rec = {
        "question": "Which vitamin deficiency causes night blindness in the invented case?",
        "options": {"A": "Vitamin A", "B": "Vitamin C", "C": "Vitamin D"},
        "answer": "Vitamin A", "answer_idx": "A",
        "rationale": "Retinal rods need a retinol-derived pigment.",
        "language": "English",
    }
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not ...}


def test_mmedbench_english_and_japanese(tmp_path):
    path = write_jsonl(tmp_path / "mixed.jsonl", [
        mmed(id="q7"),
        mmed(question="架空の症例で夜盲症を起こすのはどれか。", options=["ビタミンA", "ビタミンC"], answer_idx=["A"],
             rationale="網膜の桿体に必要。", language="ja", question_en="Which one causes night blindness in the invented case?"),
    ])
    en, ja = read("mmedbench-jsonl", path)
    assert en.id == "mmedbench-en-q7" and en.lang == "en" and en.pivot is None and en.task == "xqa"
    assert en.passages[0].text == "Vitamin A\nRetinal rods need a retinol-derived pigment."
    assert en.passages[0].id.startswith("mmedbench-doc-")
    assert ja.id == "mmedbench-ja-2" and ja.pivot.startswith("Which one") and ja.passages[0].text.startswith("ビタミンA\n")


def test_mmedbench_answer_forms_and_language_from_file_name(tmp_path):
    path = write_jsonl(tmp_path / "English.jsonl", [
        mmed(language=..., answer_idx=..., answer="B"),  # answer given as a key
        mmed(language=..., answer_idx="A,C", rationale=...),  # several keys, no rationale
        mmed(language=..., answer_idx=..., answer="Retinol", rationale=""),  # free-text answer
    ])
    a, b, c = read("mmedbench-jsonl", path, with_choices=True)
    assert a.lang == "en" and a.passages[0].text.startswith("Vitamin C\n")
    assert b.passages[0].text == "Vitamin A; Vitamin D"
    assert c.passages[0].text == "Retinol"
    assert a.text.endswith("\nA. Vitamin A\nB. Vitamin C\nC. Vitamin D")


def test_mmedbench_pivot_rules(tmp_path):
    path = write_jsonl(tmp_path / "French.jsonl", [mmed(language=..., question="Quelle carence cause la cécité nocturne ?")])
    located(error("mmedbench-jsonl", path), path, 1, "question_en")
    [item] = read("mmedbench-jsonl", path, require_pivot=False)
    assert item.lang == "fr" and item.pivot is None


@pytest.mark.parametrize("row, field", [
    (mmed(question=...), "question"),
    (mmed(question="   "), "question"),
    (mmed(question=42), "question"),
    (mmed(options="A) one"), "options"),
    (mmed(options={"A": 3}), "options.A"),
    (mmed(answer_idx="F"), "answer_idx"),
    (mmed(answer_idx=..., answer=...), "answer"),
    (mmed(answer_idx=..., answer="F"), "answer"),  # a lone letter is a key, and F is not an option
    (mmed(rationale=["x"]), "rationale"),
    (mmed(language="Klingon"), "language"),
    (mmed(language="ru"), "language"),  # not a build language
    (mmed(id="a b"), "id"),
])
def test_mmedbench_malformed_record(tmp_path, row, field):
    path = write_jsonl(tmp_path / "set.jsonl", [mmed(), row])
    located(error("mmedbench-jsonl", path, {"en", "ja", "fr"}), path, 2, field)


def test_mmedbench_bad_json_and_duplicate_id(tmp_path):
    path = write_jsonl(tmp_path / "set.jsonl", [mmed(), '{"question": "unterminated'])
    msg = error("mmedbench-jsonl", path)
    located(msg, path, 2, None)
    assert "invalid JSON" in msg
    path = write_jsonl(tmp_path / "dup.jsonl", [mmed(id=1), mmed(id="1")])
    msg = error("mmedbench-jsonl", path)
    located(msg, path, 2, "id")
    assert "dup.jsonl:1" in msg


def test_mmedbench_bad_options(tmp_path):
    path = write_jsonl(tmp_path / "set.jsonl", [mmed()])
    located(error("mmedbench-jsonl", path, task="cd"), path, None, "options.task")
    located(error("mmedbench-jsonl", path, passage="full"), path, None, "options.passage")
    located(error("mmedbench-jsonl", path, require_pivot="no"), path, None, "options.require_pivot")


# ------------------------------------------------------------------------------------ pubmedqa


def pqa(**kw) -> dict:
    rec = {
        "QUESTION": "Does invented compound X shorten fever in the imaginary trial?",
        "CONTEXTS": ["Background sentence about the imaginary trial.", "Results sentence: fever lasted one day less."],
        "LABELS": ["BACKGROUND", "RESULTS"], "MESHES": ["Fever"], "YEAR": "2001",
        "final_decision": "yes", "LONG_ANSWER": "Compound X shortened fever.",
    }
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not ...}


def test_pubmedqa_items_and_passage_ids(tmp_path):
    path = write_json(tmp_path / "ori_pqal.json", {"1001": pqa(), "1002": pqa(QUESTION="Is Y safe in the imaginary cohort?")})
    a, b = read("pubmedqa", path)
    assert (a.id, a.task, a.lang, a.pivot) == ("pubmedqa-1001", "evidence", "en", None)
    assert [p.id for p in a.passages] == ["pubmed-1001-0", "pubmed-1001-1"]
    assert a.passages[1].text.startswith("Results sentence")
    [x, _] = read("pubmedqa", path, task="xqa", long_answer=True)
    assert x.task == "xqa" and x.passages[-1].id == "pubmed-1001-long"


@pytest.mark.parametrize("record, field", [
    (pqa(QUESTION=...), "1002.QUESTION"),
    (pqa(QUESTION=""), "1002.QUESTION"),
    (pqa(CONTEXTS="one string"), "1002.CONTEXTS"),
    (pqa(CONTEXTS=[]), "1002.CONTEXTS"),
    (pqa(CONTEXTS=["ok", 7]), "1002.CONTEXTS.1"),
    ("not an object", "1002"),
])
def test_pubmedqa_malformed_record(tmp_path, record, field):
    path = write_json(tmp_path / "ori_pqal.json", {"1001": pqa(), "1002": record})
    located(error("pubmedqa", path), path, line_of(path, '"1002"'), field)


def test_pubmedqa_bad_json_names_the_line(tmp_path):
    path = tmp_path / "ori_pqal.json"
    path.write_text('{\n  "1001": {"QUESTION": "q?", "CONTEXTS": ["c"]},\n  "1002": {"QUESTION": "q?",, }\n}\n')
    msg = error("pubmedqa", path)
    located(msg, path, 3, None)
    assert "invalid JSON" in msg
    path.write_text('[{"QUESTION": "q?"}]')
    assert "expected a JSON object of records" in error("pubmedqa", path)
    path.write_text('{"1": {"QUESTION": "q?", "CONTEXTS": ["c"]},\n "1": {"QUESTION": "q?", "CONTEXTS": ["c"]}}')
    located(error("pubmedqa", path), path, 2, "1")


def test_pubmedqa_needs_english_in_the_build(tmp_path):
    path = write_json(tmp_path / "ori_pqal.json", {"1001": pqa()})
    assert "'en' is not a build language" in error("pubmedqa", path, {"fr"})


# ------------------------------------------------------------------------------------ igakuqa


def iga_question(pid="112A1", **kw) -> dict:
    rec = {"problem_id": pid, "problem_text": "架空の症候群で最もよくみられる所見はどれか。",
           "choices": ["発熱", "発疹", "咳嗽", "頭痛", "腹痛"], "text_only": True, "answer": ["b"], "points": "1"}
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not ...}


def iga_translation(pid="112A1", **kw) -> dict:
    rec = {"problem_id": pid, "problem_text_en": "Which finding is most common in the invented syndrome?",
           "choices_en": ["Fever", "Rash", "Cough", "Headache", "Abdominal pain"], "answer": ["b"]}
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not ...}


def igakuqa_tree(tmp_path: Path, questions: list, translations: list | None = None) -> Path:
    root = tmp_path / "data"
    write_jsonl(root / "2018" / "112-A.jsonl", questions)
    write_jsonl(root / "2018" / "112-A_translate.jsonl", translations if translations is not None else
                [iga_translation(q["problem_id"]) for q in questions if isinstance(q, dict) and "problem_id" in q])
    write_jsonl(root / "2018" / "112-A_metadata.jsonl", [{"problem_id": "112A1", "category": "架空"}])
    return root


def test_igakuqa_items_pivots_and_english_passages(tmp_path):
    root = igakuqa_tree(tmp_path, [
        iga_question(),
        iga_question("112A2", answer=["a", "c"], text_only=False),
        iga_question("112A3", answer=["a or d"]),
        iga_question("112A75", choices=[], answer=["42"]),  # a calculation: the value is the answer
    ])
    write_jsonl(root / "2018" / "112-A_translate.jsonl", [
        iga_translation(), iga_translation("112A2"), iga_translation("112A3"),
        iga_translation("112A75", choices_en=[], problem_text_en="Compute the invented index."),
    ])
    items = read("igakuqa", root)
    assert [i.id for i in items] == ["igakuqa-2018-A-1", "igakuqa-2018-A-2", "igakuqa-2018-A-3", "igakuqa-2018-A-75"]
    first = items[0]
    assert first.lang == "ja" and first.task == "xqa" and first.text.startswith("架空の症候群")
    assert first.pivot == "Which finding is most common in the invented syndrome?"
    assert first.passages[0].text == "Which finding is most common in the invented syndrome?\nAnswer: Rash"
    assert items[1].passages[0].text.endswith("Answer: Fever; Cough")
    assert items[2].passages[0].text.endswith("Answer: Fever; Headache")
    assert items[3].passages[0].text == "Compute the invented index.\nAnswer: 42"
    # options
    assert [i.id for i in read("igakuqa", root, text_only=True)] == ["igakuqa-2018-A-1", "igakuqa-2018-A-3", "igakuqa-2018-A-75"]
    one = read("igakuqa", root / "2018" / "112-A.jsonl", passage="answer", with_choices=True)[0]
    assert one.passages[0].text == "Rash"
    assert one.text.endswith("\ne. 腹痛") and one.pivot.endswith("\ne. Abdominal pain")


@pytest.mark.parametrize("row, field", [
    (iga_question("112A2", problem_text=...), "problem_text"),
    (iga_question("112A2", problem_text=" "), "problem_text"),
    (iga_question("112A2", choices="発熱"), "choices"),
    (iga_question("112A2", answer="b"), "answer"),
    (iga_question("112A2", answer=["z"]), "answer.0"),
    (iga_question("112A2", answer=["B1"]), "answer.0"),
    (iga_question("112A2", text_only="yes"), "text_only"),
    (iga_question("A-2"), "problem_id"),
])
def test_igakuqa_malformed_question(tmp_path, row, field):
    root = igakuqa_tree(tmp_path, [iga_question(), row], [iga_translation(), iga_translation(row["problem_id"])])
    located(error("igakuqa", root), root / "2018" / "112-A.jsonl", 2, field)


def test_igakuqa_translation_problems(tmp_path):
    root = igakuqa_tree(tmp_path, [iga_question(), iga_question("112A2")], [iga_translation()])
    located(error("igakuqa", root), root / "2018" / "112-A.jsonl", 2, "problem_id")  # no translation
    root = igakuqa_tree(tmp_path, [iga_question()], [iga_translation(choices_en=["Fever"])])
    located(error("igakuqa", root), root / "2018" / "112-A_translate.jsonl", 1, "choices_en")
    root = igakuqa_tree(tmp_path, [iga_question()], [iga_translation(problem_text_en=None)])
    located(error("igakuqa", root), root / "2018" / "112-A_translate.jsonl", 1, "problem_text_en")
    root = igakuqa_tree(tmp_path, [iga_question()], ['{"problem_id": "112A1",'])
    located(error("igakuqa", root), root / "2018" / "112-A_translate.jsonl", 1, None)
    (root / "2018" / "112-A_translate.jsonl").unlink()
    msg = error("igakuqa", root)
    assert "112-A_translate.jsonl: file not found" in msg


def test_igakuqa_english_items_from_other_years(tmp_path):
    root = igakuqa_tree(tmp_path, [iga_question(), iga_question("112A2", choices=["", "Ｂ", "c", "d", "e"], answer=["b"])])
    write_jsonl(root / "2020" / "114-B.jsonl", [iga_question("114B3")])
    write_jsonl(root / "2020" / "114-B_translate.jsonl", [iga_translation("114B3")])
    en = read("igakuqa", root, {"en", "ja"}, passage="concept", lang="en", years=[2018])
    assert [i.id for i in en] == ["igakuqa-en-2018-A-1", "igakuqa-en-2018-A-2"]
    first = en[0]
    assert (first.lang, first.text, first.pivot) == ("en", "Which finding is most common in the invented syndrome?", None)
    assert [(o.text, o.pivot, o.correct) for o in first.options] == [
        ("Fever", None, False), ("Rash", None, True), ("Cough", None, False), ("Headache", None, False), ("Abdominal pain", None, False)]
    # choices laid out in a table of the question are letters in English too
    assert [(o.text, o.correct) for o in en[1].options] == [("a", False), ("B", True), ("c", False), ("d", False), ("e", False)]
    ja = read("igakuqa", root, {"en", "ja"}, passage="concept", years=[2020, 2022])
    assert [(i.id, i.lang, i.pivot) for i in ja] == [("igakuqa-2020-B-3", "ja", "Which finding is most common in the invented syndrome?")]
    assert [(o.text, o.pivot) for o in ja[0].options][:2] == [("発熱", "Fever"), ("発疹", "Rash")]
    assert [i.id for i in read("igakuqa", root, {"en", "ja"}, lang="en")] == ["igakuqa-en-2018-A-1", "igakuqa-en-2018-A-2", "igakuqa-en-2020-B-3"]
    qa = read("igakuqa", root, {"en"}, lang="en", years=[2020])[0]
    assert qa.passages[0].text == "Which finding is most common in the invented syndrome?\nAnswer: Rash" and qa.pivot is None
    assert "'en' is not a build language" in error("igakuqa", root, {"ja"}, lang="en")
    assert "options.lang" in error("igakuqa", root, {"en", "ja"}, lang="fr")
    for bad in ([], [2018.0], "2018", [True]):
        assert "expected a non-empty list of exam years" in error("igakuqa", root, {"en", "ja"}, years=bad)


def test_igakuqa_share_splits_every_year_at_random_the_same_in_both_languages(tmp_path):
    root = igakuqa_tree(tmp_path, [iga_question(f"112A{n}") for n in range(1, 11)])
    # sha256("igakuqa:2018-A-<n>") as a fraction of 2**64: n = 1, 2, 4, 5, 8 fall below 0.5
    assert question_hash(2018, "A", 1) == 0.07920196725800553
    low = read("igakuqa", root, {"en", "ja"}, passage="concept", share=[0.0, 0.5])
    high = read("igakuqa", root, {"en", "ja"}, passage="concept", lang="en", share=[0.5, 1])
    assert [i.id for i in low] == ["igakuqa-2018-A-1", "igakuqa-2018-A-2", "igakuqa-2018-A-4", "igakuqa-2018-A-5", "igakuqa-2018-A-8"]
    assert [i.id for i in high] == ["igakuqa-en-2018-A-3", "igakuqa-en-2018-A-6", "igakuqa-en-2018-A-7", "igakuqa-en-2018-A-9",
                                    "igakuqa-en-2018-A-10"]
    low_en = read("igakuqa", root, {"en", "ja"}, passage="concept", lang="en", share=[0.0, 0.5])
    assert [i.id.replace("-en-", "-") for i in low_en] == [i.id for i in low]  # one question, one side, in either language
    # [from, to): the question at exactly `from` is in, at exactly `to` out
    at = question_hash(2018, "A", 1)
    assert [i.id for i in read("igakuqa", root, {"en", "ja"}, share=[at, 0.1])] == ["igakuqa-2018-A-1"]
    assert [i.id for i in read("igakuqa", root, {"en", "ja"}, share=[0.0, at])] == ["igakuqa-2018-A-4", "igakuqa-2018-A-5"]
    assert [i.id for i in read("igakuqa", root, {"en", "ja"}, years=[2019], share=[0.0, 1.0])] == []
    for bad in ([0.5], [0.5, 0.5], [0.6, 0.2], [-0.1, 0.5], [0.0, 1.5], "0-0.5", [True, 1.0]):
        located(error("igakuqa", root, {"en", "ja"}, share=bad), root, None, "options.share")
    assert error("igakuqa", root, {"en", "ja"}, shares=[0.0, 0.5]) == (
        f"{root}: field 'options': unknown option 'shares' (this format takes: task, passage, with_choices, text_only, lang, years, share)")


def test_igakuqa_language_and_folder_errors(tmp_path):
    root = igakuqa_tree(tmp_path, [iga_question()])
    assert "'ja' is not a build language" in error("igakuqa", root, {"en"})
    assert "not found" in error("igakuqa", tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    assert "no *.jsonl files" in error("igakuqa", tmp_path / "empty")
    assert "not its translation" in error("igakuqa", root / "2018" / "112-A_translate.jsonl")


# ------------------------------------------------------------------------------------ frenchmedmcqa


def fmc(id_="a" * 64, **kw) -> dict:
    rec = {"id": id_, "question": "Parmi les propositions suivantes, laquelle décrit le composé imaginaire Z ?",
           "answers": {"a": "Il est hydrosoluble", "b": "Il est volatil", "c": "Il est inerte", "d": "Il est acide", "e": "Il est basique"},
           "correct_answers": ["a", "d"], "subject_name": "pharmacie", "type": "multiple", "nbr_correct_answers": 2}
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not ...}


def test_frenchmedmcqa_items_and_verbatim_duplicates(tmp_path):
    write_json(tmp_path / "corpus" / "train.json", [fmc(), fmc("b" * 64, correct_answers=["b"]), fmc()])
    write_json(tmp_path / "corpus" / "test.json", [fmc("c" * 64)])
    items = read("frenchmedmcqa", tmp_path / "corpus")
    assert [i.id for i in items] == ["frenchmedmcqa-" + "c" * 16, "frenchmedmcqa-" + "a" * 16, "frenchmedmcqa-" + "b" * 16]
    first = items[1]
    assert first.lang == "fr" and first.pivot is None and first.task == "xqa"
    assert first.passages[0].text == "Il est hydrosoluble; Il est acide"
    assert items[0].passages[0].id == first.passages[0].id  # same answer text, same document
    qa = read("frenchmedmcqa", tmp_path / "corpus" / "test.json", passage="qa", with_choices=True)[0]
    assert qa.passages[0].text.startswith("Parmi les propositions") and qa.text.endswith("\ne. Il est basique")


@pytest.mark.parametrize("record, field", [
    (fmc("b" * 64, question=...), "[1].question"),
    (fmc("b" * 64, question=""), "[1].question"),
    (fmc("b" * 64, answers=["x"]), "[1].answers"),
    (fmc("b" * 64, correct_answers=["f"]), "[1].correct_answers"),
    (fmc("b" * 64, correct_answers=[]), "[1].correct_answers"),
    (fmc("b" * 64, correct_answers=7), "[1].correct_answers"),
    (fmc(..., ), "[1].id"),
    (fmc(question="Une autre question ?"), "[1].id"),  # same id, different record
    (["not", "an", "object"], "[1]"),
])
def test_frenchmedmcqa_malformed_record(tmp_path, record, field):
    path = write_json(tmp_path / "dev.json", [fmc(), record])
    second = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("    {") or line.startswith("    [")][1]
    located(error("frenchmedmcqa", path), path, second, field)


def test_frenchmedmcqa_bad_json(tmp_path):
    path = tmp_path / "dev.json"
    path.write_text('[\n  {"id": "x", "question": "q ?", "answers": {"a": "r"}, "correct_answers": ["a"]},\n]\n')
    msg = error("frenchmedmcqa", path)
    located(msg, path, 3, None)
    assert "invalid JSON" in msg
    path.write_text('{"id": "x"}')
    assert "expected a JSON array of records" in error("frenchmedmcqa", path)


# ------------------------------------------------------------------------------------ rumeddanet


def rmd(pair="0" * 32, **kw) -> dict:
    rec = {"context": "Вымышленный синдром Икс проявляется лихорадкой и сыпью.",
           "question": "Проявляется ли вымышленный синдром Икс сыпью?", "answer": "да", "pairID": pair}
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not ...}


def test_rumeddanet_items_and_shared_contexts(tmp_path):
    folder = tmp_path / "RuMedDaNet"
    write_jsonl(folder / "train_v1.jsonl", [rmd(), rmd("1" * 32, question="Проявляется ли синдром Икс кашлем?", answer="нет")])
    write_jsonl(folder / "dev_v1.jsonl", [rmd("2" * 32, context="Другой вымышленный контекст.")])
    items = read("rumeddanet", folder)
    assert [i.id for i in items] == ["rumeddanet-" + "2" * 32, "rumeddanet-" + "0" * 32, "rumeddanet-" + "1" * 32]
    assert all(i.lang == "ru" and i.pivot is None and i.task == "evidence" for i in items)
    assert items[1].passages[0].id == items[2].passages[0].id != items[0].passages[0].id
    assert items[1].passages[0].id.startswith("rumeddanet-ctx-")
    assert [i.id for i in read("rumeddanet", folder / "train_v1.jsonl", answers=["да"])] == ["rumeddanet-" + "0" * 32]
    assert "options.answers" in error("rumeddanet", folder, answers=["может быть"])


@pytest.mark.parametrize("row, field", [
    (rmd("1" * 32, question=...), "question"),
    (rmd("1" * 32, question="\t"), "question"),
    (rmd("1" * 32, context=["a"]), "context"),
    (rmd("1" * 32, answer="возможно"), "answer"),
    (rmd(pairID=...), "pairID"),
    (rmd(), "pairID"),  # duplicate
    ("[1, 2]", None),
    ("{bad json", None),
])
def test_rumeddanet_malformed_record(tmp_path, row, field):
    path = write_jsonl(tmp_path / "dev_v1.jsonl", [rmd(), row])
    located(error("rumeddanet", path), path, 2, field)


# ------------------------------------------------------------------------------------ cnmleqa


def cnm(id_="00000000-0000-5000-8000-000000000001", **kw) -> dict:
    rec = {"id": id_, "question": "虚构综合征最常见的表现是", "opa": "发热", "opb": "皮疹", "opc": "咳嗽", "opd": "头痛", "ope": "腹痛",
           "answer": "opb", "year": 2020, "question_type": "知识问答", "source": "invented",
           "disease or diagnosis": "虚构综合征", "surgery": "无", "medication": "无",
           "laboratory examination": "血常规, 尿常规", "symptom or sign": "皮疹、发热；心率90次/分"}
    rec.update(kw)
    return {k: v for k, v in rec.items() if v is not ...}


def test_cnmleqa_items_passages_and_tags(tmp_path):
    path = write_json(tmp_path / "CNMLEQA-3k.json", [cnm(), cnm("id-2", answer="opb", explanation="皮疹见于该病。", medication=float("nan"))])
    a, b = read("cnmleqa", path)
    assert a.id == "cnmleqa-00000000-0000-5000-8000-000000000001" and a.lang == "zh" and a.pivot is None
    assert a.passages[0].text == "皮疹" and b.passages[0].text == "皮疹\n皮疹见于该病。"
    assert read("cnmleqa", path, passage="qa")[0].passages[0].text == "虚构综合征最常见的表现是\n皮疹"
    assert read("cnmleqa", path, with_choices=True)[0].text.endswith("\nE. 腹痛")
    tags = cnmleqa_tags(path)
    assert tags[a.id] == ["虚构综合征", "皮疹", "发热", "心率90次/分", "血常规", "尿常规"]
    assert list(tags) == [a.id, b.id]


@pytest.mark.parametrize("record, field", [
    (cnm("id-2", question=...), "[1].question"),
    (cnm("id-2", question=""), "[1].question"),
    (cnm("id-2", answer="opf"), "[1].answer"),
    (cnm("id-2", answer=1), "[1].answer"),
    (cnm("id-2", opb=["皮疹"]), "[1].opb"),
    (cnm("id-2", opb=""), "[1].opb"),  # the correct option is empty
    (cnm("id-2", medication=3), "[1].medication"),
    (cnm(), "[1].id"),  # duplicate id
])
def test_cnmleqa_malformed_record(tmp_path, record, field):
    path = write_json(tmp_path / "CNMLEQA-3k.json", [cnm(), record])
    second = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == "    {"][1]
    located(error("cnmleqa", path), path, second, field)


def test_cnmleqa_tags_report_malformed_records(tmp_path):
    path = write_json(tmp_path / "CNMLEQA-3k.json", [cnm(surgery={"x": 1})])
    with pytest.raises(InputError) as exc:
        cnmleqa_tags(path)
    located(str(exc.value), path, 2, "[0].surgery")


# ------------------------------------------------------------------------------------ beir


def beir_folder(tmp_path: Path, qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\nq2\td1\t0\n",
                queries: list | None = None, corpus: list | None = None) -> Path:
    root = tmp_path / "toyset"
    write_jsonl(root / "corpus.jsonl", corpus if corpus is not None else [
        {"_id": "d1", "title": "Invented fever", "text": "An invented fever lasts three days."},
        {"_id": "d2", "title": "", "text": "Rest shortens the invented fever."},
        {"_id": "d3", "title": "Unrelated", "text": "Not judged."},
    ])
    write_jsonl(root / "queries.jsonl", queries if queries is not None else [
        {"_id": "q1", "text": "How long does the invented fever last?"},
        {"_id": "q2", "text": "A query without relevant documents."},
    ])
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return root


def test_beir_items_from_positive_qrels(tmp_path):
    root = beir_folder(tmp_path)
    [item] = read("beir", root)
    assert item.id == "beir-toyset-q1" and item.task == "evidence" and item.lang == "en" and item.pivot is None
    assert [p.id for p in item.passages] == ["beir-toyset-d1", "beir-toyset-d2"]
    assert item.passages[0].title == "Invented fever"
    [x] = read("beir", root, task="xqa", prefix="toy")
    assert x.id == "toy-q1" and x.task == "xqa"
    assert [p.id for p in read_beir_corpus(root)] == ["beir-toyset-d1", "beir-toyset-d2", "beir-toyset-d3"]


def test_beir_query_language_and_pivot(tmp_path):
    root = beir_folder(tmp_path, queries=[{"_id": "q1", "text": "Combien de temps dure la fièvre inventée ?", "lang": "fr",
                                           "pivot_text": "How long does the invented fever last?"}])
    [item] = read("beir", root)
    assert item.lang == "fr" and item.pivot == "How long does the invented fever last?"
    located(error("beir", root, {"en"}), root / "queries.jsonl", 1, "lang")


@pytest.mark.parametrize("qrels, line, field", [
    ("q1\td1\tone\n", 1, "score"),
    ("query-id\tcorpus-id\tscore\nq1\td1\n", 2, None),
    ("q1\td9\t1\n", 1, "corpus-id"),
    ("q9\td1\t1\n", 1, "query-id"),
    ("q1\t\t1\n", 1, "corpus-id"),
])
def test_beir_malformed_qrels(tmp_path, qrels, line, field):
    root = beir_folder(tmp_path, qrels=qrels)
    located(error("beir", root), root / "qrels" / "test.tsv", line, field)


def test_beir_malformed_queries_and_corpus(tmp_path):
    root = beir_folder(tmp_path, queries=[{"_id": "q1", "text": ""}])
    located(error("beir", root), root / "queries.jsonl", 1, "text")
    root = beir_folder(tmp_path, queries=[{"text": "no id"}])
    located(error("beir", root), root / "queries.jsonl", 1, "_id")
    root = beir_folder(tmp_path, corpus=[{"_id": "d1", "title": "", "text": ""}, {"_id": "d2", "text": "x"}])
    located(error("beir", root), root / "corpus.jsonl", 1, "text")
    root = beir_folder(tmp_path, corpus=[{"_id": "d1", "text": "x"}, "{oops"])
    located(error("beir", root), root / "corpus.jsonl", 2, None)
    (root / "qrels" / "test.tsv").unlink()
    assert "test.tsv: file not found" in error("beir", root)
    assert "options.split" in error("beir", root, split="../x")


# ------------------------------------------------------------------------------------ real data (../shared)


def _check_real(items: list[SourceItem], n: int, lang: str, prefix: str, pivots: bool) -> None:
    assert len(items) == n
    ids = [i.id for i in items]
    assert len(set(ids)) == len(ids)
    assert all(i.id.startswith(prefix) for i in items)
    assert {i.lang for i in items} == {lang}
    assert all((i.pivot is not None) == pivots for i in items)
    # a passage id names one text
    texts: dict[str, str] = {}
    for i in items:
        for p in i.passages:
            assert texts.setdefault(p.id, p.text) == p.text


@pytest.mark.shared
def test_real_pubmedqa():
    items = read("pubmedqa", require_shared("pubmedqa", "ori_pqal.json"))
    _check_real(items, 1000, "en", "pubmedqa-", pivots=False)
    assert all(re.fullmatch(r"pubmed-\d+-\d+", p.id) for i in items for p in i.passages)


@pytest.mark.shared
def test_real_igakuqa():
    root = require_shared("qa", "igakuqa", "data")
    items = read("igakuqa", root)
    _check_real(items, 2000, "ja", "igakuqa-", pivots=True)
    assert {i.id.split("-")[1] for i in items} == {"2018", "2019", "2020", "2021", "2022"}
    assert all("\nAnswer: " in i.passages[0].text for i in items)
    assert len(read("igakuqa", root, text_only=True)) == 1471


@pytest.mark.shared
def test_real_frenchmedmcqa():
    # 3,105 records; one train record is repeated verbatim and read once
    _check_real(read("frenchmedmcqa", require_shared("qa", "frenchmedmcqa")), 3104, "fr", "frenchmedmcqa-", pivots=False)


@pytest.mark.shared
def test_real_rumeddanet():
    _check_real(read("rumeddanet", require_shared("qa", "rumedbench", "RuMedDaNet")), 1564, "ru", "rumeddanet-", pivots=False)


@pytest.mark.shared
def test_real_cnmleqa():
    path = require_shared("qa", "cnmleqa", "CNMLEQA-3k.json")
    items = read("cnmleqa", path)
    _check_real(items, 2949, "zh", "cnmleqa-", pivots=False)
    tags = cnmleqa_tags(path)
    assert set(tags) == {i.id for i in items}
    assert sum(1 for t in tags.values() if t) > 2000
    assert all("无" not in t and all(x.strip() == x and x for x in t) for t in tags.values())


@pytest.mark.shared
def test_real_pubmedqa_as_beir(tmp_path):
    """The BEIR adapter on a folder written from the real PubMedQA items (in tmp, never in the project)."""
    items = read("pubmedqa", require_shared("pubmedqa", "ori_pqal.json"))[:50]
    root = tmp_path / "pqa-beir"
    write_jsonl(root / "corpus.jsonl", [{"_id": p.id, "title": p.title, "text": p.text} for i in items for p in i.passages])
    write_jsonl(root / "queries.jsonl", [{"_id": i.id, "text": i.text} for i in items])
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{i.id}\t{p.id}\t1\n" for i in items for p in i.passages))
    beir = read("beir", root, prefix="x")
    assert [b.text for b in beir] == [i.text for i in items]
    assert [[p.text for p in b.passages] for b in beir] == [[p.text for p in i.passages] for i in items]
