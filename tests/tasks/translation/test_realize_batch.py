"""realize_shard identifies its gated texts in one batch (langid.detect_many): the same rows
as gating one text at a time, and no text left to be identified on its own."""
from __future__ import annotations

import json
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas.config import load_registry
from tasks.translation import langid
from tasks.translation.memory import TranslationMemory
from tasks.translation.stage import gated_texts, realize_item, realize_shard
from tests.conftest import ROOT

pytest.importorskip("lingua")
REGISTRY = load_registry(ROOT / "configs" / "languages.toml")
ITEMS = [
    {"id": "q1", "lang": "en", "text": "What is the first-line treatment of type 2 diabetes mellitus?",
     "pivot": "What is the first-line treatment of type 2 diabetes mellitus?"},
    {"id": "q2", "lang": "fr", "text": "Quel est le traitement de l'insuffisance cardiaque aiguë ?",
     "pivot": "What is the treatment of acute heart failure?"},
    {"id": "q3", "lang": "en", "text": "Which drug lowers blood pressure in pregnancy?",
     "pivot": "Which drug lowers blood pressure in pregnancy?"},
    {"id": "q4", "lang": "es", "text": "¿Cuál es la causa de la fiebre tifoidea?", "pivot": ""},
    {"id": "q5", "lang": "en", "text": "How is acute appendicitis diagnosed in children?",
     "pivot": "How is acute appendicitis diagnosed in children?"},
]
MEMORY = [  # q1 well translated, q3 into English (a copy: rejected), q5 not in the memory
    {"source_lang": "en", "target_lang": "fr", "source": ITEMS[0]["pivot"],
     "target": "Quel est le traitement de première intention du diabète de type 2 ?"},
    {"source_lang": "en", "target_lang": "fr", "source": ITEMS[2]["pivot"],
     "target": "Which drug lowers blood pressure in pregnancy?"},
]


@pytest.fixture
def shard(tmp_path):
    path = tmp_path / "items-00000.parquet"
    pq.write_table(pa.Table.from_pylist(ITEMS), path)
    memory = tmp_path / "tm.jsonl"
    memory.write_text("".join(json.dumps(m) + "\n" for m in MEMORY))
    return path, memory


@pytest.mark.parametrize("target", ["fr", "en"])
def test_a_shard_is_gated_as_one_text_at_a_time(shard, tmp_path, monkeypatch, target):
    path, memory = shard
    langs = {c: REGISTRY[c] for c in ("en", "fr", "es")}
    tm = TranslationMemory.from_files([memory])
    one_by_one = [r for it in ITEMS for r in realize_item(it, langs, tm, [target], "lingua-subset")]

    singles = []
    real = langid.lingua_detector

    class Recording:
        def __init__(self, detector):
            self.detector = detector

        def detect_language_of(self, text):
            singles.append(text)
            return self.detector.detect_language_of(text)

        def detect_languages_in_parallel_of(self, texts):
            return self.detector.detect_languages_in_parallel_of(texts)

    monkeypatch.setattr(langid, "lingua_detector", lambda codes=None: Recording(real(codes)))
    out = realize_shard(str(path), target, {c: v.model_dump(mode="json") for c, v in langs.items()}, [str(memory)],
                        str(tmp_path / f"out-{target}.parquet"), "lingua-subset")
    assert pq.read_table(out).to_pylist() == one_by_one
    assert singles == []  # every gated text was in the batch
    assert langid._detected() == {}  # and the answers went with the block
    if target == "fr":
        assert [r["rejected"] for r in one_by_one] == [None, None, "langid: detected en, expected fr; copy: translation equals its source",
                                                       "no English pivot", "no translation in memory"]


def test_the_gated_texts_are_the_native_text_the_pivot_or_the_memory():
    tm = TranslationMemory.from_files([])
    for m in MEMORY:
        from schemas.records import Translation

        tm.add(Translation(**m))
    assert gated_texts(ITEMS, "fr", tm) == [MEMORY[0]["target"], ITEMS[1]["text"], MEMORY[1]["target"]]
    assert gated_texts(ITEMS, "en", tm) == [ITEMS[0]["pivot"], ITEMS[1]["pivot"], ITEMS[2]["pivot"], ITEMS[4]["pivot"]]
    assert gated_texts(ITEMS, "es", tm) == [ITEMS[3]["text"]]


def test_each_thread_keeps_its_own_batch():
    seen = {}

    def other():
        seen["before"] = dict(langid._detected())
        with langid.detected_in_batches():
            langid.detect_many(["Insuffisance rénale aiguë"], "lingua-subset", ("fr",))
            seen["inside"] = len(langid._detected())

    with langid.detected_in_batches():
        langid.detect_many(["Fiebre tifoidea aguda"], "lingua-subset", ("es",))
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(langid._detected()) == 1  # the other thread's block ending took nothing from this one
    assert seen == {"before": {}, "inside": 1}
