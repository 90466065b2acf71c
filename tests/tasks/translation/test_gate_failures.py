"""Each gate says which gate failed as a typed field (`GateFailure.gate`), and its str() is the
sentence stored wherever a reason is written; the realized table carries the failed gates'
names and an unrealized item's cause in columns of their own (nothing parsed from text)."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas.config import load_registry
from schemas.gates import GATE_NAMES, GateFailure, gate_key
from tasks.translation.gates import (
    copy_gate,
    langid_gate,
    length_ratio_gate,
    numbers_gate,
    script_gate,
    text_gates,
    translation_gates,
)
from tasks.translation.memory import TranslationMemory
from tasks.translation.stage import REALIZED_SCHEMA, realize_item, realize_shard
from tests.conftest import ROOT

REGISTRY = load_registry(ROOT / "configs" / "languages.toml")
EN_Q = "What are the typical symptoms of myocardial infarction in elderly patients?"
ZH_Q = "稳定型心绞痛有哪些典型特征可将其与非心源性胸痛相区别？"


@pytest.mark.parametrize("failure, gate, text", [
    (script_gate("123 / 456", REGISTRY["en"]), "script", "script: no letters"),
    (script_gate("心筋梗塞の症状", REGISTRY["zh"]), "script", "script: contains Hiragana, not expected in zh"),
    (script_gate("Инфаркт myocardial infarction", REGISTRY["ru"]), "script", "script: 26% of letters in Cyrillic (mostly Latin)"),
    (script_gate(ZH_Q, REGISTRY["ja"]), "script", "script: Japanese sentence without kana"),
    (copy_gate("Heart attack", "  HEART   attack "), "copy", "copy: translation equals its source"),
    (length_ratio_gate(EN_Q, "Symptômes ?", REGISTRY["en"], REGISTRY["fr"]), "length", "length: ratio 0.15 outside [0.5, 2.5]"),
    (length_ratio_gate(EN_Q, "心筋梗塞" * 30, REGISTRY["en"], REGISTRY["ja"]), "length", "length: ratio 1.60 outside [0.1, 1.2]"),
    (numbers_gate("Give 40 mg, 3 times.", "Donner des mg.", REGISTRY["fr"]), "numbers", "numbers: 3, 40 missing from the translation"),
    (numbers_gate("Give 40 mg of aspirin.", "Donner 40 d'aspirine.", REGISTRY["fr"]), "units", "units: mg missing from the translation"),
])
def test_each_gate_names_itself_and_says_what_it_found(failure, gate, text):
    assert isinstance(failure, GateFailure)
    assert failure.gate == gate
    assert str(failure) == text
    assert f"{failure}" == text  # what the audit's messages format


def test_the_langid_gate_names_itself():
    pytest.importorskip("lingua")
    failure = langid_gate(EN_Q, REGISTRY["fr"], "lingua-subset")
    assert failure == GateFailure("langid", "detected en, expected fr")
    assert str(failure) == "langid: detected en, expected fr"


def test_the_gate_lists_keep_their_order_and_types():
    pytest.importorskip("lingua")
    assert translation_gates(EN_Q, EN_Q, REGISTRY["en"], REGISTRY["fr"], "lingua-subset") == [
        GateFailure("langid", "detected en, expected fr"), GateFailure("copy", "translation equals its source")]
    assert text_gates("123 / 456", REGISTRY["fr"], "lingua-subset") == [GateFailure("script", "no letters")]
    assert text_gates(EN_Q, REGISTRY["en"], "lingua-subset") == []


def test_a_gate_name_outside_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="unknown gate 'scripts'"):
        GateFailure("scripts", "no letters")
    assert GATE_NAMES == {"script", "langid", "copy", "length", "numbers", "units", "back-translation"}
    with pytest.raises(TypeError):  # a reason list is joined as text only through str()
        "; ".join([GateFailure("copy", "translation equals its source")])
    assert gate_key("fr", "copy") == "fr: copy"


# --- the realized table's typed columns -----------------------------------------------------------

ITEMS = [
    {"id": "a", "lang": "fr", "text": "Insuffisance cardiaque aiguë", "pivot": "Acute heart failure"},
    {"id": "b", "lang": "es", "text": "Fiebre tifoidea", "pivot": ""},
    {"id": "c", "lang": "en", "text": "Give 40 mg of aspirin", "pivot": "Give 40 mg of aspirin"},
    {"id": "d", "lang": "en", "text": "Heart failure", "pivot": "Heart failure"},
    {"id": "e", "lang": "en", "text": "Lung cancer", "pivot": "Lung cancer"},
]
MEMORY = [  # c's translation drops its dose, d's copies its source, e has none
    {"source_lang": "en", "target_lang": "fr", "source": "Give 40 mg of aspirin", "target": "Donner de l'aspirine"},
    {"source_lang": "en", "target_lang": "fr", "source": "Heart failure", "target": "Heart failure"},
]


def _row(id_, lang, text, provenance, rejected=None, gates=(), unrealized=None):
    return {"id": id_, "lang": lang, "text": text, "provenance": provenance, "rejected": rejected,
            "gates": list(gates), "unrealized": unrealized}


def test_realized_rows_carry_the_gates_and_the_unrealized_cause(tmp_path):
    pytest.importorskip("lingua")
    memory = tmp_path / "tm.jsonl"
    memory.write_text("".join(json.dumps(m) + "\n" for m in MEMORY))
    tm = TranslationMemory.from_files([memory])
    langs = {c: REGISTRY[c] for c in ("en", "fr", "es")}
    rows = [r for it in ITEMS for r in realize_item(it, langs, tm, ["fr"], "lingua-subset")]
    assert rows == [
        _row("a", "fr", "Insuffisance cardiaque aiguë", "native"),
        _row("b", "fr", "", "", "no English pivot", unrealized="no-pivot"),
        _row("c", "fr", "Donner de l'aspirine", "human-translated", "numbers: 40 missing from the translation", ["numbers"]),
        _row("d", "fr", "Heart failure", "human-translated", "copy: translation equals its source", ["copy"]),
        _row("e", "fr", "", "", "no translation in memory", unrealized="no-translation"),
    ]
    assert [r for it in ITEMS[:2] for r in realize_item(it, langs, tm, ["en"], "lingua-subset")] == [
        _row("a", "en", "Acute heart failure", "human-translated"),
        _row("b", "en", "", "", "no English pivot", unrealized="no-pivot"),
    ]
    shard = tmp_path / "items-00000.parquet"
    pq.write_table(pa.Table.from_pylist(ITEMS), shard)
    out = realize_shard(str(shard), "fr", {c: v.model_dump(mode="json") for c, v in langs.items()}, [str(memory)],
                        str(tmp_path / "realized-fr.parquet"), "lingua-subset")
    table = pq.read_table(out)
    assert table.schema == REALIZED_SCHEMA
    assert table.schema.field("gates").type == pa.list_(pa.string())
    assert table.to_pylist() == rows
