"""Bad input: one clear line naming file, line and field; exit 2; nothing half-written."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, warm_env


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


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmedbench.cli", *args], capture_output=True, text=True, timeout=600,
                          env=None if env is None else {**os.environ, **env})


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
    assert isinstance(result, InputError) and result.exit_code == 2
    assert str(result).startswith(f"{bad}:3: field 'text'")
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
    assert str(result).startswith(f"{bad}:1: field 'lang'") and "'de'" in str(result)


@pytest.mark.slow
def test_translation_memory_miss_leaves_a_cell_empty(tmp_path, build_in_process, sample_build):
    """Without the Russian term memory no cd/ru query can be made: the build says so. The
    stages the memory does not feed (vocabulary, sources, grounding) come from the session's
    warm work dir."""
    cfg = _config(tmp_path, **{f'  "{ROOT}/sources/sample/tm_terms.jsonl",\n': ""})
    result = build_in_process(str(cfg), work_dir=str(sample_build["base"] / "work"))
    assert "cell cd/ru is empty" in str(result) and "translation-memory miss" in str(result)
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
def test_an_undecodable_byte_in_any_jsonl_input_is_one_line(tmp_path, sample_build, name, line_no, bad_byte):
    """Issue #13's first probe, through the CLI, for each kind of JSON-lines input the same
    reader serves: one line naming file, line and column; exit 2; nothing written. The build
    uses the session's warm work dir (`warm_env`): the translation memory is read beside
    grounding, which the command waits for before it exits, from the cache here."""
    lines = (ROOT / "sources" / "sample" / name).read_bytes().splitlines(keepends=True)
    at = lines[line_no - 1].index(b'": "') + 4
    column = len(lines[line_no - 1][:at].decode("utf-8")) + 1
    lines[line_no - 1] = lines[line_no - 1][:at] + bad_byte + lines[line_no - 1][at:]
    bad = tmp_path / name
    bad.write_bytes(b"".join(lines))
    cfg = _config(tmp_path, **{f'"{ROOT}/sources/sample/{name}"': f'"{bad}"'})
    line = _one_error_line(_cli("build", "--config", str(cfg), "--work-dir", str(sample_build["base"] / "work"), env=warm_env()))
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


# --- issue 29: every option and config key, one line naming its field ---------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from common.errors import InputError  # noqa: E402
from schemas.config import BuildConfig, SemanticGroup, _first_error  # noqa: E402

_runner = CliRunner()


def _in_process(*args: str, stdin: bytes | None = None) -> tuple[int, list[str]]:
    """The command run in this process (for checks made before Prefect starts): exit code and output lines."""
    from mmedbench.cli import app

    r = _runner.invoke(app, list(args), input=stdin)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output.splitlines()


def _sample_raw() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "configs" / "sample.toml").read_text())


def _set(raw: dict, dotted: str, value) -> dict:
    import copy

    raw = copy.deepcopy(raw)
    *parents, last = dotted.split(".")
    d = raw
    for k in parents:
        d = d.setdefault(k, {})
    d[last] = value
    return raw


def _blamed(raw: dict) -> str | None:
    """The field the config's one error line names, or None when the config is valid."""
    from pydantic import ValidationError

    try:
        BuildConfig(**raw)
    except ValidationError as exc:
        return _first_error(Path("c.toml"), exc).field
    return None


INT_KEYS = {"seed": (0, 2**32 - 1), "tasks.xqa.quota": (1, None), "tasks.cd.distractors": (1, 20),
            "dedup.num_perm": (16, 1024), "build.shard_size": (1, None), "vocabulary.max_srl": (0, 9),
            "grounding.quickumls_window": (1, 12)}
FLOAT_KEYS = ["grounding.min_score", "dedup.threshold", "splits.dev_fraction", "grounding.quickumls_threshold"]
NOT_A_NUMBER = st.one_of(st.booleans(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(key=st.sampled_from(sorted(INT_KEYS)), value=st.one_of(NOT_A_NUMBER, st.floats(allow_nan=True)))
def test_an_integer_key_takes_no_bool_string_or_float(key, value):
    """`seed = true` and `quota = "6"` used to be silently converted."""
    assert _blamed(_set(_sample_raw(), key, value)) == key


@PROPERTY
@given(key=st.sampled_from(sorted(INT_KEYS)), value=st.integers(min_value=-(2**70), max_value=2**70))
def test_an_integer_key_is_accepted_exactly_in_its_range(key, value):
    low, high = INT_KEYS[key]
    inside = value >= low and (high is None or value <= high)
    assert _blamed(_set(_sample_raw(), key, value)) == (None if inside else key)


@PROPERTY
@given(key=st.sampled_from(FLOAT_KEYS), value=NOT_A_NUMBER)
def test_a_number_key_takes_no_bool_or_string(key, value):
    assert _blamed(_set(_sample_raw(), key, value)) == key


GROUPS = list(SemanticGroup.__args__)


@PROPERTY
@given(groups=st.lists(st.sampled_from(GROUPS) | st.text(min_size=1, max_size=6), min_size=1, max_size=6))
def test_key_groups_are_a_closed_vocabulary_listed_once(groups):
    """`key_groups = ["BOGUS"]` used to be accepted, and silently changed the overlap rules."""
    blamed = _blamed(_set(_sample_raw(), "grounding.key_groups", groups))
    unknown = [i for i, g in enumerate(groups) if g not in GROUPS]
    if unknown:
        assert blamed == f"grounding.key_groups.{unknown[0]}"
    elif len(set(groups)) < len(groups):
        assert blamed == "grounding.key_groups"
    else:
        assert blamed is None


def test_the_semantic_groups_are_umls_semgroups():
    from umls.semgroups import _GROUPS

    assert sorted(GROUPS) == sorted(_GROUPS)


@PROPERTY
@given(langs=st.lists(st.sampled_from(["en", "zh", "ja", "fr", "ru", "es", "de"]), min_size=1, max_size=8))
def test_languages_include_en_once_each(langs):
    """Duplicate languages, or none of them `en`, used to name no field."""
    blamed = _blamed(_set(_sample_raw(), "languages", langs))
    assert blamed == (None if "en" in langs and len(set(langs)) == len(langs) else "languages")


@pytest.mark.parametrize("key,value,field,message", [
    ("seed", "-1", "seed", "Input should be greater than or equal to 0"),
    ("seed", str(2**64), "seed", "Input should be less than or equal to 4294967295"),
    ("seed", "true", "seed", "Input should be a valid integer"),
    ("quota", '"6"', "tasks.xqa.quota", "Input should be a valid integer"),
    ("key_groups", '["BOGUS"]', "grounding.key_groups.0", "Input should be 'ACTI', 'ANAT',"),
    ("languages", '["en", "fr", "en"]', "languages", "'en' is listed twice (at 0 and 2); list each language once"),
    ("languages", '["fr", "es"]', "languages", "must include 'en' (the pivot language)"),
    ("scope", '"most"', "overlap.scope", "Input should be 'key' or 'all'"),
    ("format", '"csv"', "sources.0.format", "Input should be 'sample-jsonl',"),
])
def test_the_issues_config_probes_are_one_line_naming_the_field(tmp_path, key, value, field, message):
    replace = {"seed": ("seed = 20261122", f"seed = {value}"), "quota": ("quota = 6", f"quota = {value}"),
               "key_groups": ('key_groups = ["DISO", "CHEM", "PROC", "ANAT", "GENE"]', f"key_groups = {value}"),
               "languages": ('languages = ["en", "zh", "ja", "fr", "ru", "es"]', f"languages = {value}"),
               "scope": ("[dedup]", f"[overlap]\nscope = {value}\n\n[dedup]"),
               "format": ('format = "sample-jsonl"', f"format = {value}")}[key]
    cfg = _config(tmp_path, **{replace[0]: replace[1]})
    code, lines = _in_process("build", "--config", str(cfg))
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: {cfg}: field '{field}': {message}"), lines[0]
    assert not (tmp_path / "releases").exists()


@pytest.mark.parametrize("option", ["--release-dir", "--work-dir"])
def test_a_folder_option_naming_a_file_is_one_line(tmp_path, option):
    cfg = _config(tmp_path)
    (tmp_path / "afile").write_text("x")
    code, lines = _in_process("build", "--config", str(cfg), option, str(tmp_path / "afile"))
    assert (code, lines) == (2, [f"error: {tmp_path / 'afile'}: field '{option}': is a file; expected a folder"])
    code, lines = _in_process("build", "--config", str(cfg), option, str(tmp_path / "afile" / "sub"))
    assert (code, lines) == (2, [f"error: {tmp_path / 'afile' / 'sub'}: field '{option}': is under {tmp_path / 'afile'}, "
                                 "which is a file; expected a folder"])


def test_a_config_folder_key_naming_a_file_blames_the_config(tmp_path):
    (tmp_path / "afile").write_text("x")
    cfg = _config(tmp_path, **{f'release_dir = "{tmp_path}/releases"': f'release_dir = "{tmp_path}/afile"'})
    code, lines = _in_process("build", "--config", str(cfg))
    assert (code, lines) == (2, [f"error: {cfg}: field 'release_dir': {tmp_path / 'afile'} is a file; expected a folder"])


@pytest.mark.parametrize("command", ["audit", "diff"])
def test_a_json_option_naming_a_folder_or_a_missing_parent_is_one_line(tmp_path, command):
    from tests.evaluation_release import make_tiny_release

    release = str(make_tiny_release(tmp_path / "release"))
    args = [command, release] + ([release] if command == "diff" else [])
    code, lines = _in_process(*args, "--json", str(tmp_path))
    assert (code, lines) == (2, [f"error: {tmp_path}: field '--json': is a folder; expected a file name"])
    missing = tmp_path / "no" / "r.json"
    code, lines = _in_process(*args, "--json", str(missing))
    assert (code, lines) == (2, [f"error: {missing}: field '--json': folder {tmp_path / 'no'} does not exist"])


def test_invalid_utf8_on_grounds_stdin_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "mmedbench.cli", "ground", "--lang", "en"], input=b"fever\nbad \xff byte\n",
                          capture_output=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode().splitlines() == ["error: <stdin>:2: expected UTF-8 text, found byte 0xff at column 5"]
    assert len(proc.stdout.decode().splitlines()) == 1  # the line before it was answered


def test_an_empty_source_file_is_blamed_not_the_translation_memory(tmp_path):
    empty = tmp_path / "xqa.jsonl"
    empty.write_text("\n")
    cfg = _config(tmp_path, **{f'path = "{ROOT}/sources/sample/xqa.jsonl"': f'path = "{empty}"'})
    code, lines = _in_process("build", "--config", str(cfg))
    assert (code, lines) == (2, [f"error: {empty}: source file is empty: no items (sources.0.path in config.toml)"])


def test_an_empty_mrsty_is_blamed_not_the_translation_memory(tmp_path):
    vocab = tmp_path / "umls"
    shutil.copytree(ROOT / "umls" / "sample", vocab)
    (vocab / "MRSTY.RRF").write_text("")
    cfg = _config(tmp_path, **{f'path = "{ROOT}/umls/sample"': f'path = "{vocab}"'})
    code, lines = _in_process("build", "--config", str(cfg))
    assert (code, lines) == (2, [f"error: {vocab / 'MRSTY.RRF'}: is empty; it holds the concepts' semantic types: without "
                                 "them no concept is a key concept (vocabulary.path in config.toml)"])


@pytest.mark.parametrize("command", ["build", "add-language"])
@pytest.mark.parametrize("version", ["../../elsewhere", "1.0", "v1.0.0"])
def test_a_version_option_that_is_no_version_is_one_line(tmp_path, command, version):
    """--version names the release folder: never a path out of --release-dir."""
    args = [command] + ([str(tmp_path)] if command == "add-language" else []) + ["--config", str(_config(tmp_path)), "--version", version]
    code, lines = _in_process(*args)
    assert (code, lines) == (2, [f"error: --version: expected a version like 0.2.0 (digits.digits.digits, then optionally "
                                 f"-suffix), got {version!r}"])


# --- issue 47: every path a user gives, one line naming it and its field -------------------------

@pytest.mark.parametrize("kind,expected", [
    ("loop", "is a symbolic link loop (following its links never ends)"),
    ("dangling", "is a symbolic link to {tmp}/gone.jsonl, which does not exist"),
    ("fifo", "is a FIFO (named pipe); expected a regular file"),
])
@pytest.mark.parametrize("key,old", [
    ("sources.0.path", "{ROOT}/sources/sample/xqa.jsonl"),
    ("background.0.path", "{ROOT}/sources/sample/evidence_background.jsonl"),
    ("translation.memory.0", "{ROOT}/sources/sample/tm_xqa.jsonl"),
])
def test_an_odd_input_path_in_the_config_is_one_line_naming_its_field(tmp_path, kind, expected, key, old):
    """A source that was a symbolic link loop exited 70 with two tracebacks (Path.resolve);
    a FIFO would have blocked the build for ever."""
    import os

    odd = tmp_path / "odd.jsonl"
    if kind == "loop":
        odd.symlink_to(odd.name)
    elif kind == "dangling":
        odd.symlink_to(tmp_path / "gone.jsonl")
    else:
        os.mkfifo(odd)
    cfg = _config(tmp_path, **{f'"{old.format(ROOT=ROOT)}"': f'"{odd}"'})
    code, lines = _in_process("build", "--config", str(cfg))
    assert (code, lines) == (2, [f"error: {cfg}: field '{key}': {odd} {expected.format(tmp=tmp_path)}"])
    assert not (tmp_path / "releases").exists()


def test_a_config_that_is_a_loop_or_a_folder_is_one_line(tmp_path):
    loop = tmp_path / "c.toml"
    loop.symlink_to("c.toml")
    assert _in_process("build", "--config", str(loop)) == (
        2, [f"error: {loop}: field '--config': is a symbolic link loop (following its links never ends)"])
    assert _in_process("build", "--config", str(tmp_path)) == (2, [f"error: {tmp_path}: field '--config': is a folder; "
                                                                   "expected a file"])


def test_a_vocabulary_path_that_is_a_file_is_one_line(tmp_path):
    cfg = _config(tmp_path, **{f'path = "{ROOT}/umls/sample"': f'path = "{ROOT}/umls/sample/MRCONSO.RRF"'})
    code, lines = _in_process("build", "--config", str(cfg))
    assert (code, lines) == (2, [f"error: {cfg}: field 'vocabulary.path': {ROOT}/umls/sample/MRCONSO.RRF is a file; "
                                 "expected a vocabulary folder"])


@pytest.mark.parametrize("command", ["audit", "stats", "evaluate"])
def test_a_release_folder_argument_that_is_a_loop_is_one_line(tmp_path, command):
    loop = tmp_path / "rel"
    loop.symlink_to("rel")
    code, lines = _in_process(command, str(loop), *(["--out", str(tmp_path / "out")] if command == "evaluate" else []))
    assert (code, lines) == (2, [f"error: {loop}: field 'RELEASE_DIR': is a symbolic link loop (following its links never "
                                 "ends)"])
