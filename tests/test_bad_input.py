"""Bad input: one clear line naming file, line and field; exit 2; nothing half-written."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _config(tmp_path: Path, **overrides) -> Path:
    """A copy of the sample config whose paths point back into the repository."""
    text = (ROOT / "configs" / "sample.toml").read_text()
    text = text.replace('"../', f'"{ROOT}/').replace('registry = "languages.toml"', f'registry = "{ROOT}/configs/languages.toml"')
    text = text.replace(f'release_dir = "{ROOT}/releases"', f'release_dir = "{tmp_path}/releases"')
    text = text.replace(f'work_dir = "{ROOT}/.mmedbench-cache"', f'work_dir = "{tmp_path}/work"')
    for old, new in overrides.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmedbench.cli", *args], capture_output=True, text=True, timeout=600)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [l for l in proc.stderr.splitlines() if l.startswith("error: ")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def test_unknown_language_code(tmp_path):
    cfg = _config(tmp_path, **{'languages = ["en", "zh", "ja", "fr", "ru", "es"]': 'languages = ["en", "xx"]'})
    line = _one_error_line(_cli("build", "--config", str(cfg)))
    assert "config.toml" in line and "languages.1" in line and "'xx'" in line
    assert not (tmp_path / "releases").exists()


def test_missing_input_file(tmp_path):
    cfg = _config(tmp_path, **{"tm_terms.jsonl": "tm_nowhere.jsonl"})
    line = _one_error_line(_cli("build", "--config", str(cfg)))
    assert "tm_nowhere.jsonl" in line and "not found" in line


def test_invalid_config_field(tmp_path):
    cfg = _config(tmp_path, **{"quota = 6": "quota = 0"})
    line = _one_error_line(_cli("build", "--config", str(cfg)))
    assert "tasks.xqa.quota" in line


@pytest.mark.slow
def test_malformed_rrf_row_names_file_and_line(tmp_path):
    vocab = tmp_path / "umls"
    shutil.copytree(ROOT / "umls" / "sample", vocab)
    lines = (vocab / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[4] = lines[4].replace("|", "", 1)  # line 5 loses a field
    (vocab / "MRCONSO.RRF").write_text("".join(lines), encoding="utf-8")
    cfg = _config(tmp_path, **{f'path = "{ROOT}/umls/sample"': f'path = "{vocab}"'})
    line = _one_error_line(_cli("build", "--config", str(cfg)))
    assert "MRCONSO.RRF:5:" in line and "fields" in line
    releases = tmp_path / "releases"
    assert not releases.exists() or list(releases.iterdir()) == []


@pytest.fixture
def build_in_process(prefect_harness):
    from flows.build_release import build_release_flow

    return build_release_flow


@pytest.mark.slow
def test_empty_query_names_line_and_field(tmp_path, build_in_process):
    src = [json.loads(l) for l in (ROOT / "sources" / "sample" / "xqa.jsonl").read_text().splitlines()]
    src[2]["text"] = ""
    bad = tmp_path / "xqa.jsonl"
    bad.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in src))
    cfg = _config(tmp_path, **{f'"{ROOT}/sources/sample/xqa.jsonl"': f'"{bad}"'})
    result = build_in_process(str(cfg))
    assert result["error"].startswith(f"{bad}:3: field 'text'")
    assert not (tmp_path / "releases").exists() or list((tmp_path / "releases").iterdir()) == []


@pytest.mark.slow
def test_unknown_language_in_a_source(tmp_path, build_in_process):
    src = (ROOT / "sources" / "sample" / "evidence.jsonl").read_text().splitlines()
    row = json.loads(src[0])
    row["lang"] = "de"
    src[0] = json.dumps(row, ensure_ascii=False)
    bad = tmp_path / "evidence.jsonl"
    bad.write_text("\n".join(src) + "\n")
    cfg = _config(tmp_path, **{f'"{ROOT}/sources/sample/evidence.jsonl"': f'"{bad}"'})
    result = build_in_process(str(cfg))
    assert result["error"].startswith(f"{bad}:1: field 'lang'") and "'de'" in result["error"]


@pytest.mark.slow
def test_translation_memory_miss_leaves_a_cell_empty(tmp_path, build_in_process):
    """Without the Russian term memory no cd/ru query can be made: the build says so."""
    cfg = _config(tmp_path, **{f'  "{ROOT}/sources/sample/tm_terms.jsonl",\n': ""})
    result = build_in_process(str(cfg))
    assert "cell cd/ru is empty" in result["error"] and "translation-memory miss" in result["error"]
    assert not (tmp_path / "releases").exists() or [p for p in (tmp_path / "releases").iterdir()] == []


def test_unknown_runner(tmp_path):
    line = _one_error_line(_cli("build", "--config", str(_config(tmp_path)), "--runner", "spark"))
    assert "--runner" in line and "'spark'" in line


def test_dask_runner_needs_an_address(tmp_path):
    line = _one_error_line(_cli("build", "--config", str(_config(tmp_path)), "--runner", "dask"))
    assert "--address" in line


@pytest.mark.slow
@pytest.mark.parametrize("name,line_no,bad_byte", [
    ("xqa.jsonl", 3, b"\xff"),  # a source
    ("tm_xqa.jsonl", 2, b"\xc3("),  # a translation memory: a UTF-8 lead byte without its continuation
    ("evidence_background.jsonl", 4, b"\xfe"),  # a background file
])
def test_an_undecodable_byte_in_any_jsonl_input_is_one_line(tmp_path, name, line_no, bad_byte):
    """Issue #13's first probe, through the CLI, for each kind of JSON-lines input the same
    reader serves: one line naming file, line and column; exit 2; nothing written."""
    lines = (ROOT / "sources" / "sample" / name).read_bytes().splitlines(keepends=True)
    at = lines[line_no - 1].index(b'": "') + 4
    column = len(lines[line_no - 1][:at].decode("utf-8")) + 1
    lines[line_no - 1] = lines[line_no - 1][:at] + bad_byte + lines[line_no - 1][at:]
    bad = tmp_path / name
    bad.write_bytes(b"".join(lines))
    cfg = _config(tmp_path, **{f'"{ROOT}/sources/sample/{name}"': f'"{bad}"'})
    line = _one_error_line(_cli("build", "--config", str(cfg)))
    assert line == f"error: {bad}:{line_no}: expected UTF-8 text, found byte 0x{bad_byte[0]:02x} at column {column}"
    assert not (tmp_path / "releases").exists() or list((tmp_path / "releases").iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("row,field,value,expected", [
    (7, 1, "EN1", "field 'LAT': expected pattern ^[A-Z]{3}$, got 'EN1'"),
    (10, 1, "ÉNG", "field 'LAT': expected pattern ^[A-Z]{3}$, got 'ÉNG'"),
    (5, 0, "C000077\u0663", "field 'CUI': expected pattern ^C\\d{7}$, got 'C000077\u0663'"),  # an Arabic-Indic digit
])
def test_values_the_rrf_patterns_forbid_are_one_line(tmp_path, row, field, value, expected):
    """Issue #13's RRF probe through the CLI: the fast pre-check no longer lets these through."""
    vocab = tmp_path / "umls"
    shutil.copytree(ROOT / "umls" / "sample", vocab)
    rows = (vocab / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines(keepends=True)
    fields = rows[row - 1].split("|")
    fields[field] = value
    rows[row - 1] = "|".join(fields)
    (vocab / "MRCONSO.RRF").write_text("".join(rows), encoding="utf-8")
    cfg = _config(tmp_path, **{f'path = "{ROOT}/umls/sample"': f'path = "{vocab}"'})
    line = _one_error_line(_cli("build", "--config", str(cfg)))
    assert line == f"error: {vocab}/MRCONSO.RRF:{row}: {expected}"
    assert not (tmp_path / "releases").exists() or list((tmp_path / "releases").iterdir()) == []
