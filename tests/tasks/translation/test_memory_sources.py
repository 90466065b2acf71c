"""tasks.translation.memory (translation memory), tasks.sources.passages (sample JSONL adapter), schemas.config errors."""
from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest

from schemas.config import load_config
from common.errors import InputError
from schemas.records import SourceItem, Translation
from tasks.translation.memory import TranslationMemory, source_key
from tasks.sources.passages import read_sample_jsonl

ROOT = Path(__file__).resolve().parents[3]
LANGS = {"en", "fr", "ja"}


def write_jsonl(path: Path, rows: list) -> Path:
    """dicts are dumped as JSON; strings are written verbatim (for malformed lines)."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def tm_entry(source="Café au lait spots?", target="Taches café au lait ?", status="human-translated", **kw) -> dict:
    entry = {"source_lang": "en", "target_lang": "fr", "source": source, "target": target, "status": status}
    if status != "human-translated":
        entry.update(origin="machine", engine="google")
    entry.update(kw)
    return entry


# --- translation memory ----------------------------------------------------------------------------


def test_lookup_by_source_text_is_nfc_normalised_and_stripped(tmp_path):
    nfd = unicodedata.normalize("NFD", "  Café au lait spots?\n")
    assert nfd.strip() != "Café au lait spots?"  # different code points
    tm = TranslationMemory.from_files([write_jsonl(tmp_path / "tm.jsonl", [tm_entry(source=nfd)])])
    assert len(tm) == 1
    hit = tm.lookup("Café au lait spots?", "en", "fr")
    assert hit is not None and hit.target == "Taches café au lait ?"
    assert tm.lookup("  Café au lait spots?  ", "en", "fr") == hit
    assert source_key(nfd) == source_key("Café au lait spots?")


def test_lookup_misses(tmp_path):
    tm = TranslationMemory([Translation(**tm_entry())])
    assert tm.lookup("Café au lait spots?", "en", "es") is None  # other target language
    assert tm.lookup("Café au lait spots?", "fr", "fr") is None  # other source language
    assert tm.lookup("cafe au lait spots?", "en", "fr") is None  # no accent / case folding in the key
    assert tm.lookup("Something else", "en", "fr") is None


@pytest.mark.parametrize("order", [0, 1], ids=["verified-last", "verified-first"])
def test_verified_beats_machine_translated_for_the_same_key(order):
    machine = Translation(**tm_entry(target="Taches café-au-lait ?", status="machine-translated"))
    verified = Translation(**tm_entry(target="Taches café au lait ?", status="machine-translated and verified"))
    entries = [machine, verified] if order == 0 else [verified, machine]
    tm = TranslationMemory(entries)
    assert len(tm) == 1
    hit = tm.lookup("Café au lait spots?", "en", "fr")
    assert hit.status == "machine-translated and verified"
    assert hit.target == "Taches café au lait ?"


def test_status_ranking_verified_human_machine():
    machine = Translation(**tm_entry(target="m", status="machine-translated"))
    human = Translation(**tm_entry(target="h"))
    verified = Translation(**tm_entry(target="v", status="machine-translated and verified"))
    assert TranslationMemory([machine, human]).lookup("Café au lait spots?", "en", "fr").target == "h"
    assert TranslationMemory([human, verified, machine]).lookup("Café au lait spots?", "en", "fr").target == "v"


def test_ties_are_broken_independently_of_order():
    a = Translation(**tm_entry(target="B", status="machine-translated", engine="deepl"))
    b = Translation(**tm_entry(target="A", status="machine-translated", engine="google"))
    first = TranslationMemory([a, b]).lookup("Café au lait spots?", "en", "fr")
    assert first == TranslationMemory([b, a]).lookup("Café au lait spots?", "en", "fr")
    assert first.engine == "deepl"


def test_entries_from_several_files(tmp_path):
    p1 = write_jsonl(tmp_path / "a.jsonl", [tm_entry(status="machine-translated", target="old")])
    p2 = write_jsonl(tmp_path / "b.jsonl", [tm_entry(status="machine-translated and verified", target="new"),
                                            tm_entry(source="Gout", target="Goutte")])
    tm = TranslationMemory.from_files([p1, p2])
    assert len(tm) == 2
    assert tm.lookup("Café au lait spots?", "en", "fr").target == "new"
    assert tm.lookup("Gout", "en", "fr").target == "Goutte"


def test_malformed_tm_line_names_line_and_field(tmp_path):
    path = write_jsonl(tmp_path / "tm.jsonl", [tm_entry(), tm_entry(source="Gout", target="Goutte"),
                                                tm_entry(status="approved")])
    with pytest.raises(InputError) as exc_info:
        TranslationMemory.from_files([path])
    err = exc_info.value
    assert err.line == 3 and err.field == "status"
    assert str(err).startswith(f"{path}:3: field 'status'")


def test_empty_tm_target_names_line_and_field(tmp_path):
    path = write_jsonl(tmp_path / "tm.jsonl", [tm_entry(target="")])
    with pytest.raises(InputError) as exc_info:
        TranslationMemory.from_files([path])
    assert (exc_info.value.line, exc_info.value.field) == (1, "target")


def test_invalid_json_in_tm_names_line(tmp_path):
    path = write_jsonl(tmp_path / "tm.jsonl", [tm_entry(), '{"source_lang": "en",'])
    with pytest.raises(InputError) as exc_info:
        TranslationMemory.from_files([path])
    assert exc_info.value.line == 2
    assert f"{path}:2: invalid JSON" in str(exc_info.value)


# --- sample JSONL source adapter ---------------------------------------------------------------------


def item(**kw) -> dict:
    base = {"id": "xqa-en-001", "task": "xqa", "lang": "en", "text": "What is the first-line treatment of gout flares?",
            "pivot": None, "passages": [{"id": "doc-1", "title": "Gout", "text": "Colchicine or an NSAID is used."}]}
    base.update(kw)
    return base


def read(tmp_path, rows, languages=LANGS):
    return list(read_sample_jsonl(write_jsonl(tmp_path / "src.jsonl", rows), languages))


def test_valid_items(tmp_path):
    out = read(tmp_path, [item(), "", item(id="xqa-ja-001", lang="ja", text="痛風発作の第一選択治療は何ですか？",
                                             pivot="What is the first-line treatment of gout flares?")])
    assert [i.id for i in out] == ["xqa-en-001", "xqa-ja-001"]
    assert all(isinstance(i, SourceItem) for i in out)
    assert out[0].passages[0].text == "Colchicine or an NSAID is used."
    assert out[1].pivot == "What is the first-line treatment of gout flares?"


@pytest.mark.parametrize("text", ["", "   "], ids=["empty", "blank"])
def test_empty_question_text_names_line_and_field(tmp_path, text):
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(), item(id="q2", text=text)])
    err = exc_info.value
    assert (err.line, err.field) == (2, "text")
    assert ":2: field 'text':" in str(err)
    assert "non-empty" in str(err)


def test_unknown_language_code_names_field_lang(tmp_path):
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(), item(), item(id="q3", lang="de", pivot="x")])
    err = exc_info.value
    assert (err.line, err.field) == (3, "lang")
    assert "'de'" in str(err) and "en, fr, ja" in str(err)


def test_malformed_language_code_names_field_lang(tmp_path):
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(lang="EN")])
    assert (exc_info.value.line, exc_info.value.field) == (1, "lang")


@pytest.mark.parametrize("pivot", [None, "", "  "], ids=["null", "empty", "blank"])
def test_non_english_item_without_pivot_names_field_pivot(tmp_path, pivot):
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(), item(id="q2", lang="fr", text="Quel est le traitement de la goutte ?", pivot=pivot)])
    err = exc_info.value
    assert (err.line, err.field) == (2, "pivot")
    assert "pivot" in str(err)


def test_invalid_json_line_names_line(tmp_path):
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(), item(id="q2"), "{not json}", item(id="q4")])
    err = exc_info.value
    assert err.line == 3 and err.field is None
    assert "src.jsonl:3: invalid JSON" in str(err)


def test_non_object_line_names_line(tmp_path):
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(), "[1, 2]"])
    assert exc_info.value.line == 2
    assert "expected a JSON object" in str(exc_info.value)


def test_schema_errors_name_nested_field(tmp_path):
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(passages=[{"id": "d", "title": "", "text": ""}])])
    assert exc_info.value.field == "passages.0.text"
    with pytest.raises(InputError) as exc_info:
        read(tmp_path, [item(extra_field=1)])
    assert exc_info.value.field == "extra_field"


def test_missing_source_file(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        list(read_sample_jsonl(tmp_path / "none.jsonl", LANGS))


def test_committed_sample_sources_read():
    langs = {"en", "zh", "ja", "fr", "ru", "es"}
    for name in ("xqa.jsonl", "evidence.jsonl"):
        items = list(read_sample_jsonl(ROOT / "sources" / "sample" / name, langs))
        assert items, name
        assert len({i.id for i in items}) == len(items)


# --- config -----------------------------------------------------------------------------------------------


@pytest.fixture
def config_dir(tmp_path) -> Path:
    shutil.copy(ROOT / "configs" / "languages.toml", tmp_path / "languages.toml")
    return tmp_path


def sample_config_text(languages: str) -> str:
    text = (ROOT / "configs" / "sample.toml").read_text(encoding="utf-8")
    old = 'languages = ["en", "zh", "ja", "fr", "ru", "es"]'
    assert old in text
    return text.replace(old, f"languages = {languages}")


def test_config_loads(config_dir):
    path = config_dir / "build.toml"
    path.write_text(sample_config_text('["en", "ja"]'), encoding="utf-8")
    loaded = load_config(path)
    assert loaded.config.languages == ["en", "ja"]
    assert [lang.code for lang in loaded.languages] == ["en", "ja"]
    assert loaded.resolve("languages.toml") == (config_dir / "languages.toml").resolve()


def test_config_unknown_language_code_names_its_index(config_dir):
    path = config_dir / "build.toml"
    path.write_text(sample_config_text('["en", "fr", "tlh"]'), encoding="utf-8")
    with pytest.raises(InputError) as exc_info:
        load_config(path)
    err = exc_info.value
    assert err.field == "languages.2"
    assert str(err).startswith(f"{path}: field 'languages.2': unknown language code 'tlh'")


def test_config_without_english_is_rejected(config_dir):
    path = config_dir / "build.toml"
    path.write_text(sample_config_text('["fr", "ja"]'), encoding="utf-8")
    with pytest.raises(InputError, match="must include 'en'"):
        load_config(path)


def test_config_invalid_toml(config_dir):
    path = config_dir / "build.toml"
    path.write_text("version = \n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid TOML"):
        load_config(path)


def test_missing_config_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(InputError) as exc_info:
        load_config(path)
    assert str(exc_info.value) == f"{path}: file not found"


def test_missing_registry_file(tmp_path):
    path = tmp_path / "build.toml"
    path.write_text(sample_config_text('["en"]'), encoding="utf-8")  # no languages.toml beside it
    with pytest.raises(InputError) as exc_info:
        load_config(path)
    assert "languages.toml: file not found" in str(exc_info.value)
