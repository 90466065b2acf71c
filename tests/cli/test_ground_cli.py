"""`mmedbench ground` reads the configured vocabulary through the build's own reader, for
either format: a UMLS release (rrf) or Disease Ontology + HPO (obo), where a language comes
from a table beside the others (here German, written by the test)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mmedbench.cli import app
from tests.conftest import ROOT, real_data_config
from tests.umls.test_obo_vocabulary import BABELON_DE, write_data


def _config(tmp_path: Path, fmt: str, vocab: Path, languages: list[str]) -> Path:
    path = tmp_path / f"{fmt}.toml"
    path.write_text(f'''version = "0.1.0"
seed = 1
languages = {json.dumps(languages)}
registry = "{ROOT}/configs/languages.toml"
work_dir = "{tmp_path}/work"

[vocabulary]
format = "{fmt}"
path = "{vocab}"

[[sources]]
format = "sample-jsonl"
path = "{ROOT}/sources/sample/xqa.jsonl"

[tasks.xqa]
quota = 1
[tasks.evidence]
quota = 1
[tasks.cd]
quota = 1
''', encoding="utf-8")
    return path


def _ground(config: Path, lang: str, text: str):
    res = CliRunner().invoke(app, ["ground", "--lang", lang, "--config", str(config)], input=text + "\n")
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.output


def test_ground_an_obo_vocabulary_with_a_language_added_by_a_table(tmp_path):
    data = write_data(tmp_path / "data")
    (data / "hpo" / "hp-de.babelon.tsv").write_text(BABELON_DE, encoding="utf-8")
    config = _config(tmp_path, "obo", data, ["en", "fr", "de"])
    code, out = _ground(config, "de", "Seit Tagen Glitzerfieber.")
    assert code == 0, out
    assert json.loads(out) == {"mentions": [{"start": 11, "end": 24, "text": "Glitzerfieber", "cui": "C9000001", "score": 1.0,
                                               "pass": "string"}]}
    code, out = _ground(config, "fr", "Une fièvre scintillante.")
    assert code == 0, out
    assert [m["cui"] for m in json.loads(out)["mentions"]] == ["C9000001"]


def test_ground_an_rrf_vocabulary(tmp_path):
    config = _config(tmp_path, "rrf", ROOT / "umls" / "sample", ["en", "fr"])
    code, out = _ground(config, "en", "Chronic hypertension.")
    assert code == 0, out
    assert [m["cui"] for m in json.loads(out)["mentions"]] == ["C0020538"]


def test_ground_a_missing_vocabulary_folder_is_one_line(tmp_path):
    config = _config(tmp_path, "obo", tmp_path / "nowhere", ["en"])
    code, out = _ground(config, "en", "x")
    assert code == 2
    assert out.strip().startswith("error: ") and "vocabulary folder" in out and len(out.strip().splitlines()) == 1


@pytest.mark.shared
@pytest.mark.slow
def test_ground_with_the_real_data_config_in_every_language(real_vocabulary, tmp_path):
    """configs/shared-real.toml (an obo vocabulary) grounds in all six languages (Russian has no
    HPO table: its names come from the ICD-10 list and the name lists). The vocabulary is the
    run's shared one, which `ground_vocabulary` built for this config: the command finds it
    (and builds no other) in its work dir."""
    config = real_data_config(tmp_path)
    shutil.copytree(real_vocabulary["ground_cli"], tmp_path / "work" / "ground-cli")
    built = sorted(p.name for p in (tmp_path / "work" / "ground-cli").iterdir())
    assert built == [Path(real_vocabulary["vocabulary"]).name]
    texts = {"en": "Chronic hypertension.", "zh": "患者有高血压。", "ja": "患者は高血圧である。",
             "fr": "Une hypertension artérielle.", "es": "Tiene hipertensión arterial.", "ru": "Артериальная гипертензия."}
    for lang, sentence in texts.items():
        code, out = _ground(config, lang, sentence)
        assert code == 0, (lang, out)
        cuis = [m["cui"] for m in json.loads(out)["mentions"]]
        assert "C0020538" in cuis, (lang, cuis)  # hypertension (Russian: from the name lists now)
    assert sorted(p.name for p in (tmp_path / "work" / "ground-cli").iterdir()) == built


def test_a_second_cache_root_in_one_process_finds_its_stopwords(tmp_path, monkeypatch):
    """NLTK binds its stopwords reader to the first root it read: grounding German with a new
    cache root after English with another (ground after a build, in one process) must still
    find the German list."""
    import nltk
    from nltk.corpus.reader import StopwordsCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    from tasks.grounding.stopwords import ensure_nltk_stopwords

    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    monkeypatch.setattr(nltk.corpus, "stopwords", LazyCorpusLoader("stopwords", StopwordsCorpusReader, r"(?!README|\.).*", encoding="utf8"))
    ensure_nltk_stopwords(tmp_path / "a", {"english": "en"})
    assert "the" in nltk.corpus.stopwords.words("english")
    ensure_nltk_stopwords(tmp_path / "b", {"english": "en", "german": "de"})
    assert "und" in nltk.corpus.stopwords.words("german")


def test_ground_passes_is_checked_before_any_work(tmp_path):
    config = _config(tmp_path, "obo", tmp_path / "nowhere", ["en"])
    res = CliRunner().invoke(app, ["ground", "--lang", "en", "--config", str(config), "--passes", "fuzzy"], input="x\n")
    assert res.exit_code == 2
    assert res.output.strip() == "error: --passes: expected string, dense or both, found 'fuzzy'"


def test_ground_both_passes_say_which_found_each_mention(tmp_path):
    """The string match keeps its place; the dense pass (use-m, from its wheel) reads only
    what it left, and every mention says its pass."""
    data = write_data(tmp_path / "data")
    (data / "hpo" / "hp-de.babelon.tsv").write_text(BABELON_DE, encoding="utf-8")
    config = _config(tmp_path, "obo", data, ["en", "fr", "de"])
    res = CliRunner().invoke(app, ["ground", "--lang", "de", "--config", str(config), "--passes", "both"],
                             input="Seit Tagen Glitzerfieber.\n")
    assert res.exit_code == 0, res.output
    line = [ln for ln in res.output.splitlines() if ln.startswith("{")][0]
    mentions = json.loads(line)["mentions"]
    assert mentions[0] == {"start": 11, "end": 24, "text": "Glitzerfieber", "cui": "C9000001", "score": 1.0, "pass": "string"}
    assert all(m["pass"] == "dense" and not (m["start"] < 24 and 11 < m["end"]) for m in mentions[1:])
