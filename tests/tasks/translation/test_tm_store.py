"""tasks/translation/tm_store.py: crash-safe append-only store, key semantics, the resumable translate loop."""
from __future__ import annotations

import json
import os
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from schemas.config import load_registry
from common.errors import InputError
from schemas.records import Translation
from tasks.translation.engines import TextResult
from tasks.translation.memory import TranslationMemory
from tasks.translation.tm_store import TMStore, read_entries, rejected_path_for, store_key, translate_texts

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = load_registry(ROOT / "configs" / "languages.toml")
FIELDS = set(Translation.model_fields)


def entry(source="Heart failure", target="Insuffisance cardiaque", engine="libre", tgt="fr", status="machine-translated"):
    return Translation(source_lang="en", target_lang=tgt, source=source, target=target, origin="machine",
                       engine=engine, status=status)


class FakeEngine:
    """Stands in for tasks.translation.engines.Engine: a dictionary, with scripted failures."""

    def __init__(self, name="libre", answers=None, fail=(), interrupt_after=None):
        self.name, self.answers, self.fail, self.interrupt_after = name, answers or {}, set(fail), interrupt_after
        self.sent: list[str] = []

    def iter_translate(self, texts, source, target):
        for text in texts:
            if self.interrupt_after is not None and len(self.sent) == self.interrupt_after:
                raise KeyboardInterrupt  # the run is stopped here
            self.sent.append(text)
            if text in self.fail:
                yield TextResult(text, error="HTTP 503 (gave up after 4 attempts)", attempts=4)
            else:
                yield TextResult(text, translation=self.answers.get(text, f"traduction : {text}"), attempts=1)


# --- the file ------------------------------------------------------------------------------------


def test_each_line_is_exactly_a_translation_and_readable_by_the_build(tmp_path):
    path = tmp_path / "sub" / "memory.jsonl"
    with TMStore(path) as store:
        store.append(entry())
        store.append(entry("Lung cancer", "Cancer du poumon"))
        assert len(store) == 2
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [set(json.loads(line)) for line in lines] == [FIELDS, FIELDS]
    tm = TranslationMemory.from_files([path])
    assert tm.lookup("Lung cancer", "en", "fr").target == "Cancer du poumon"


def test_one_fsync_per_appended_entry(tmp_path, monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd)))
    with TMStore(tmp_path / "m.jsonl") as store:
        calls.clear()  # opening a new file fsyncs its directory
        for i in range(3):
            store.append(entry(f"term {i}"))
            assert len(calls) == i + 1
            # durable at once: another reader sees it before the store is closed
            assert len(read_entries(tmp_path / "m.jsonl")) == i + 1


def test_truncated_last_line_is_dropped_and_the_file_repaired(tmp_path):
    path = tmp_path / "memory.jsonl"
    good = "".join(json.dumps(e.model_dump(), ensure_ascii=False) + "\n" for e in (entry(), entry("Lung cancer", "Cancer du poumon")))
    partial = '{"source_lang": "en", "target_lang": "fr", "source": "Migraine", "tar'
    path.write_text(good + partial, encoding="utf-8")
    assert len(read_entries(path)) == 2  # a reader tolerates it without touching the file
    assert path.read_text(encoding="utf-8").endswith(partial)
    with TMStore(path) as store:
        assert store.dropped_bytes == len(partial.encode()) and len(store) == 2
        assert path.read_text(encoding="utf-8") == good  # truncated back before any append
        store.append(entry("Migraine", "Migraine"))
    assert path.read_text(encoding="utf-8").startswith(good)
    assert len(TranslationMemory.from_files([path])) == 3  # every line valid again


def test_truncated_multibyte_character_is_dropped(tmp_path):
    path = tmp_path / "memory.jsonl"
    line = json.dumps(entry("Fever", "Fièvre").model_dump(), ensure_ascii=False).encode()
    cut = line[: line.index("è".encode()) + 1]  # half of a UTF-8 sequence
    path.write_bytes(json.dumps(entry().model_dump()).encode() + b"\n" + cut)
    with TMStore(path) as store:
        assert len(store) == 1 and store.dropped_bytes == len(cut)


def test_complete_last_line_without_newline_is_kept(tmp_path):
    """A hand-edited file may lack its final newline: that entry is data, not a crash."""
    path = tmp_path / "memory.jsonl"
    path.write_text(json.dumps(entry().model_dump()), encoding="utf-8")
    with TMStore(path) as store:
        assert len(store) == 1 and store.dropped_bytes == 0
        store.append(entry("Lung cancer", "Cancer du poumon"))
    assert [e.source for e in read_entries(path)] == ["Heart failure", "Lung cancer"]


def test_a_bad_line_in_the_middle_is_an_input_error(tmp_path):
    path = tmp_path / "memory.jsonl"
    path.write_text(json.dumps(entry().model_dump()) + "\n{oops\n" + json.dumps(entry("x").model_dump()) + "\n")
    with pytest.raises(InputError, match=r"memory.jsonl:2: invalid JSON"):
        TMStore(path)
    path.write_text(json.dumps({**entry().model_dump(), "status": "great"}) + "\n")
    with pytest.raises(InputError, match=r"memory.jsonl:1: field 'status'"):
        TMStore(path)


def test_append_only_old_bytes_are_never_rewritten(tmp_path):
    path = tmp_path / "memory.jsonl"
    snapshots = []
    for i in range(3):
        with TMStore(path) as store:
            store.append(entry(target=f"Insuffisance cardiaque v{i}"))  # same key again: kept, not replaced
        snapshots.append(path.read_bytes())
    assert snapshots[0] and snapshots[1].startswith(snapshots[0]) and snapshots[2].startswith(snapshots[1])
    with TMStore(path) as store:
        key = store_key("Heart failure", "en", "fr", "libre")
        assert [e.target for e in store.get(key)] == [f"Insuffisance cardiaque v{i}" for i in range(3)]


def test_a_second_writer_is_refused(tmp_path):
    with TMStore(tmp_path / "m.jsonl"):
        with pytest.raises(InputError, match="in use by another run"):
            TMStore(tmp_path / "m.jsonl")
    TMStore(tmp_path / "m.jsonl").close()  # released on close


# --- keys ------------------------------------------------------------------------------------


def test_key_is_nfc_stripped_source_languages_and_engine():
    nfd = unicodedata.normalize("NFD", "  Café-au-lait spots\n")
    assert nfd.strip() != "Café-au-lait spots"
    base = store_key("Café-au-lait spots", "en", "fr", "libre")
    assert store_key(nfd, "en", "fr", "libre") == base
    assert store_key("café-au-lait spots", "en", "fr", "libre") != base  # no case folding
    assert store_key("Café-au-lait spots", "en", "es", "libre") != base
    assert store_key("Café-au-lait spots", "en", "fr", "deepl") != base
    assert len(base.source_sha256) == 64


def test_translate_texts_sends_only_texts_without_an_entry_for_the_key(tmp_path):
    path = tmp_path / "m.jsonl"
    with TMStore(path) as store:
        store.append(entry("Heart failure", engine="libre"))
        store.append(entry("Lung cancer", "Cancer du poumon", engine="deepl"))  # other engine: other key
        store.append(entry("Fever", "Fiebre", tgt="es"))  # other target language: other key
        eng = FakeEngine()
        nfd = unicodedata.normalize("NFD", "Fever")
        counts = translate_texts(store, eng, ["Heart failure ", "Lung cancer", "Fever", "", nfd, "Heart failure"],
                                 "en", "fr", REGISTRY)
    assert eng.sent == ["Lung cancer", "Fever"]
    assert (counts.texts, counts.blank, counts.duplicates, counts.reused, counts.sent, counts.accepted) == (5, 1, 2, 1, 2, 2)
    new = read_entries(path)[3:]
    assert [(e.source, e.engine, e.status, e.origin) for e in new] == [
        ("Lung cancer", "libre", "machine-translated", "machine"), ("Fever", "libre", "machine-translated", "machine")]


def test_rejections_are_journalled_and_not_sent_again(tmp_path):
    path = tmp_path / "m.jsonl"
    echo = {"Heart failure": "Heart failure"}  # an untranslated answer: the copy gate rejects it
    with TMStore(path) as store:
        counts = translate_texts(store, FakeEngine(answers=echo), ["Heart failure", "Lung cancer"], "en", "fr", REGISTRY)
    assert counts.rejected == 1 and counts.rejected_by_reason == Counter({"copy": 1}) and counts.accepted == 1
    assert [e.source for e in read_entries(path)] == ["Lung cancer"]
    # the journal keeps the gate's sentence (GateFailure's str()), as written before it was typed
    assert [json.loads(line)["reasons"] for line in rejected_path_for(path).read_text().splitlines()] == [
        ["copy: translation equals its source"]]
    with TMStore(path) as store:
        eng = FakeEngine(answers=echo)
        again = translate_texts(store, eng, ["Heart failure", "Lung cancer"], "en", "fr", REGISTRY)
        assert eng.sent == [] and again.skipped_rejected == 1 and again.reused == 1
        eng = FakeEngine()
        retried = translate_texts(store, eng, ["Heart failure"], "en", "fr", REGISTRY, retry_rejected=True)
        assert eng.sent == ["Heart failure"] and retried.accepted == 1


def test_failed_texts_are_not_recorded_and_are_sent_by_the_next_run(tmp_path):
    path = tmp_path / "m.jsonl"
    with TMStore(path) as store:
        counts = translate_texts(store, FakeEngine(fail={"Lung cancer"}), ["Heart failure", "Lung cancer"], "en", "fr", REGISTRY)
    assert counts.failed_by_reason == Counter({"HTTP 503 (gave up after 4 attempts)": 1}) and counts.requests == 5
    with TMStore(path) as store:
        eng = FakeEngine()
        translate_texts(store, eng, ["Heart failure", "Lung cancer"], "en", "fr", REGISTRY)
    assert eng.sent == ["Lung cancer"]


def test_interrupted_run_keeps_what_it_accepted_and_resumes(tmp_path):
    path = tmp_path / "m.jsonl"
    texts = [f"Disease number {i}" for i in range(6)]
    with TMStore(path) as store, pytest.raises(KeyboardInterrupt):
        translate_texts(store, FakeEngine(interrupt_after=4), texts, "en", "fr", REGISTRY)
    assert [e.source for e in read_entries(path)] == texts[:4]
    with TMStore(path) as store:
        eng = FakeEngine()
        counts = translate_texts(store, eng, texts, "en", "fr", REGISTRY)
    assert eng.sent == texts[4:] and counts.reused == 4
    assert [e.source for e in read_entries(path)] == texts


def test_language_errors_are_input_errors(tmp_path):
    with TMStore(tmp_path / "m.jsonl") as store:
        with pytest.raises(InputError, match="unknown language code 'xx'"):
            translate_texts(store, FakeEngine(), ["a"], "en", "xx", REGISTRY)
        with pytest.raises(InputError, match="same language"):
            translate_texts(store, FakeEngine(), ["a"], "fr", "fr", REGISTRY)


class _ScriptedEngine:
    """An engine whose answers are fixed: forward and backward translations by text."""

    name = "scripted"

    def __init__(self, answers: dict[str, str]):
        self.answers = answers
        self.sent: list[str] = []

    def _one(self, text):
        from tasks.translation.engines import TextResult

        self.sent.append(text)
        return TextResult(text=text, translation=self.answers[text], attempts=1)

    def iter_translate(self, texts, source, target):
        for t in texts:
            yield self._one(t)

    def translate(self, text, source, target):
        return self._one(text)


def test_back_translation_rejects_a_drifted_translation(tmp_path):
    from schemas.config import load_registry
    from tests.conftest import ROOT
    from tasks.translation.tm_store import TMStore, read_entries, translate_texts

    registry = load_registry(ROOT / "configs" / "languages.toml")
    good = "Which drug is recommended first for adults with newly diagnosed high blood pressure?"
    drift = "Which test confirms the diagnosis of pulmonary embolism in pregnant women?"
    engine = _ScriptedEngine({
        good: "Quel médicament est recommandé en premier chez l'adulte avec une hypertension nouvellement diagnostiquée ?",
        "Quel médicament est recommandé en premier chez l'adulte avec une hypertension nouvellement diagnostiquée ?":
            "Which drug is recommended first for adults with newly diagnosed hypertension?",
        drift: "Quel examen confirme le diagnostic de fracture du poignet chez les enfants sportifs ?",
        "Quel examen confirme le diagnostic de fracture du poignet chez les enfants sportifs ?":
            "Which examination confirms a wrist fracture in children who play sports?",
    })
    with TMStore(tmp_path / "memory.jsonl") as store:
        counts = translate_texts(store, engine, [good, drift], "en", "fr", registry, back_translation_min=0.5)
    assert counts.accepted == 1 and counts.rejected_by_reason == {"back-translation": 1}
    assert [e.source for e in read_entries(tmp_path / "memory.jsonl")] == [good]
    assert [json.loads(line)["reasons"] for line in (tmp_path / "memory.rejected.jsonl").read_text().splitlines()] == [
        ["back-translation: similarity 0.12 below 0.5"]]
    # off by default: the same drift is accepted without a round trip
    with TMStore(tmp_path / "other.jsonl") as store:
        assert translate_texts(store, _ScriptedEngine(engine.answers), [drift], "en", "fr", registry).accepted == 1
