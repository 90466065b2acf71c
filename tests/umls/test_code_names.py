"""umls.code_names: concept names keyed by a code system, reaching CUIs through DO's xrefs.

A contributor adds a code-keyed vocabulary with configuration only: here a tiny list written
for this test, in a made-up layout (`|`-separated, Spanish-style columns, codes without dots,
"S"/"N" for current), configured in a build TOML and read by `mmedbench ground` as a user
runs it. Every drop reason is crafted once and counted. The real Russian ICD-10 is checked
when ../shared/data is present.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from common.errors import InputError
from schemas.config import load_config
from tests.conftest import ROOT
from tests.umls.test_obo_vocabulary import PREFERRED_EN, write_data
from umls.code_names import add_code_names, normalize_code, own_code
from umls.configured import build_configured_vocabulary
from umls.obo_vocabulary import build_obo_vocabulary

# ICD10CM xrefs added to the invented DO (tests/umls/test_obo_vocabulary.py): DOID:101's concept is
# C9000001 (its lowest CUI), DOID:100's C9000100, DOID:103's C9000103, DOID:104 has no CUI in
# allXREFinDO but one in the OBO (C9000104), DOID:106 is current-only (C9000106), DOID:999 none.
ICD_XREFS = [
    ("DOID:101", "glimmer fever", "ICD10CM:X01"),
    ("DOID:101", "glimmer fever", "ICD10CM:X01.9"),  # an ancestor and its descendant: X01 is its own
    ("DOID:103", "twinkle disorder", "ICD10CM:X02.1"),  # two siblings: broader than each
    ("DOID:103", "twinkle disorder", "ICD10CM:X02.2"),
    ("DOID:104", "sparkle tumour", "ICD10CM:X03"),  # X03: two concepts
    ("DOID:106", "starlight disease", "ICD10CM:X03"),
    ("DOID:100", "imaginary organ disease", "ICD10CM:X04"),
    ("DOID:999", "no such concept", "ICD10CM:X05"),
]

# the made-up layout: `|`-separated, columns clave / descripcion / vigente; the drop pattern
# sees X04's name after its "not classified elsewhere" phrase is cut, so X04 is kept
CIE_ES = """clave|descripcion|vigente
X01|Fiebre brillante, no especificada|S
X019|Fiebre brillante del adulto|S
X021|Centelleo tipo 1|S
X022|Centelleo tipo 2|S
X03|Tumor chispeante|S
X04|Enfermedad del órgano imaginario [ficticio], no clasificada en otros capítulos|S
X05|Enfermedad inexistente|S
X06|Fiebre retirada|N
X07|Enfermedad sin referencia|S
X01|Fiebre duplicada|S
X08|Otras fiebres|S
"""

CODE_NAMES_TOML = """
[[vocabulary.code_names]]
path = "cie10-es.txt"
lang = "es"
code_system = "ICD10CM"
sab = "CIE10ES"
licence = "apache-2.0"
delimiter = "|"
code_column = "clave"
name_column = "descripcion"
active_column = "vigente"
active_values = ["S"]
drop_names_matching = ['(?i)\\botr[oa]s?\\b']
strip_from_names = [',?\\s*no especificad[oa]s?', '\\s*\\[[^\\]]*\\]', ', no clasificad[oa] en otros capítulos']
"""


def write_build(root: Path, table: str = CIE_ES, extra: str = CODE_NAMES_TOML) -> Path:
    data = write_data(root / "data")
    with (data / "disease-ontology" / "allXREFinDO.tsv").open("a", encoding="utf-8") as fh:
        fh.writelines(f'"{d}"\t"{label}"\t"{x}"\n' for d, label, x in ICD_XREFS)
    (root / "cie10-es.txt").write_text(table, encoding="utf-8")
    cfg = root / "build.toml"
    cfg.write_text(f"""version = "0.0.1"
seed = 1
languages = ["en", "es"]
registry = "{(ROOT / 'configs' / 'languages.toml').as_posix()}"
work_dir = "cache"

[vocabulary]
format = "obo"
path = "data"
roots = "all"
max_srl = 0
{extra}
[[sources]]
format = "sample-jsonl"
path = "none.jsonl"
licence = "apache-2.0"

[tasks.xqa]
quota = 1
[tasks.evidence]
quota = 1
[tasks.cd]
quota = 1
""", encoding="utf-8")
    return cfg


def build(cfg_path: Path, out: Path) -> dict:
    loaded = load_config(cfg_path)
    v = loaded.config.vocabulary
    code_names = [{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in v.code_names]
    return build_configured_vocabulary(v.format, loaded.resolve(v.path), out, {"ENG": "en", "SPA": "es"}, v.max_srl,
                                       PREFERRED_EN, v.roots, code_names)


def test_codes_compare_without_dots_and_marks():
    assert normalize_code(" a01.1 ") == "A011"
    assert normalize_code("A17.0+") == normalize_code("A17.0\u2020") == "A170"
    assert own_code({"J45", "J45909"}) == "J45"
    assert own_code({"A011", "A012"}) is None
    assert own_code({"J45"}) == "J45"


def test_a_configured_list_in_another_layout_names_concepts_and_counts_every_drop(tmp_path):
    paths = build(write_build(tmp_path), tmp_path / "out")
    report = json.loads(Path(paths["code_names_report"]).read_text(encoding="utf-8"))
    assert report == {"CIE10ES": {
        "file": "cie10-es.txt", "lang": "es", "code_system": "ICD10CM", "rows_read": 11, "codes_mapped": 2,
        "concepts_named": 2,
        "dropped": {"inactive": 1, "duplicate_code": 1, "name_pattern": 1, "no_xref": 1, "no_concept": 1,
                    "code_narrower_than_do_term": 1, "do_term_spans_codes": 2, "ambiguous_code": 1},
    }}
    atoms = [(a["cui"], a["str"], a["ispref"], a["sab"], a["tty"]) for a in pq.read_table(paths["atoms_by_lang"]["es"]).to_pylist()]
    # HPO's official Spanish label stays the preferred name; the list's name follows as a synonym
    assert atoms == [
        ("C9000001", "Fiebre centelleante", True, "HPOSPA", "PT"),
        ("C9000001", "Fiebre brillante", False, "CIE10ES", "SY"),
        ("C9000100", "Enfermedad del órgano imaginario", True, "CIE10ES", "PT"),
    ]
    # the English atoms are untouched by a Spanish list
    without = build(write_build(tmp_path / "plain", extra=""), tmp_path / "out-plain")
    assert pq.read_table(paths["atoms_by_lang"]["en"]).equals(pq.read_table(without["atoms_by_lang"]["en"]))
    assert "code_names_report" not in without


def test_the_cli_grounds_with_a_configured_list(tmp_path):
    cfg = write_build(tmp_path)
    out = subprocess.run([str(Path(sys.executable).with_name("mmedbench")), "ground", "--lang", "es", "--config", str(cfg)],
                         input="Ingresó con fiebre brillante y dolor.\n", capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    mentions = json.loads(out.stdout)["mentions"]
    assert [(m["text"], m["cui"]) for m in mentions] == [("fiebre brillante", "C9000001")]


def test_a_list_above_max_srl_is_left_out(tmp_path):
    cfg = write_build(tmp_path, extra=CODE_NAMES_TOML.replace('licence = "apache-2.0"', 'licence = "apache-2.0"\nsrl = 3'))
    paths = build(cfg, tmp_path / "out")
    assert "code_names_report" not in paths
    assert [a["sab"] for a in pq.read_table(paths["atoms_by_lang"]["es"]).to_pylist()] == ["HPOSPA"]


@pytest.mark.parametrize("table, extra, expected", [
    (CIE_ES.replace("clave|", "codigo|", 1), CODE_NAMES_TOML, "cie10-es.txt:1: field 'vocabulary.code_names.code_column': no column 'clave'"),
    (CIE_ES + "X09|dos|S|extra\n", CODE_NAMES_TOML, "cie10-es.txt:13: expected 3 '|'-separated columns, found 4"),
    (CIE_ES, CODE_NAMES_TOML.replace('path = "cie10-es.txt"', 'path = "missing.txt"'), "missing.txt: field 'vocabulary.code_names.path': file not found"),
])
def test_bad_lists_are_one_clear_error(tmp_path, table, extra, expected):
    with pytest.raises(InputError) as exc:
        build(write_build(tmp_path, table, extra), tmp_path / "out")
    assert expected in str(exc.value)


def test_bad_configuration_is_one_clear_error_with_exit_2(tmp_path):
    cfg = write_build(tmp_path, extra=CODE_NAMES_TOML.replace("'(?i)\\botr[oa]s?\\b'", "'^Otr[oa'"))
    out = subprocess.run([str(Path(sys.executable).with_name("mmedbench")), "ground", "--lang", "es", "--config", str(cfg)],
                         input="x\n", capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and "drop_names_matching[0]: not a regular expression" in out.stderr
    assert "Traceback" not in out.stderr
    rrf = write_build(tmp_path / "rrf", extra=CODE_NAMES_TOML)
    rrf.write_text(rrf.read_text(encoding="utf-8").replace('format = "obo"', 'format = "rrf"'), encoding="utf-8")
    with pytest.raises(InputError, match="need format"):
        load_config(rrf)


def test_two_lists_may_not_share_a_sab(tmp_path):
    data = write_data(tmp_path / "data")
    (tmp_path / "a.txt").write_text(CIE_ES, encoding="utf-8")
    entry = {"path": str(tmp_path / "a.txt"), "lang": "es", "code_system": "ICD10CM", "sab": "CIE10ES", "licence": "mit",
             "delimiter": "|", "code_column": "clave", "name_column": "descripcion"}
    with pytest.raises(InputError, match="given to two"):
        add_code_names({}, {}, data, [entry, entry], {"es"})


@pytest.mark.shared
def test_real_russian_icd10_through_do(real_russian_vocabulary):
    loaded = load_config(ROOT / "configs" / "shared-real.toml")
    v = loaded.config.vocabulary
    code_names = [{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in v.code_names]
    # the run's shared build (English and Russian, the configured code-keyed lists)
    assert real_russian_vocabulary["arguments"] == {
        "format": v.format, "path": str(loaded.resolve(v.path)), "lat_to_lang": {"ENG": "en", "RUS": "ru"}, "max_srl": v.max_srl,
        "preferred_en": PREFERRED_EN, "roots": v.roots, "code_names": json.loads(json.dumps(code_names))}
    paths = real_russian_vocabulary["paths"]
    report = json.loads(Path(paths["code_names_report"]).read_text(encoding="utf-8"))["ICD10RU"]
    # every row of the file is read, and those not flagged active are dropped as inactive (the
    # file read here with the standard library, by the configured columns)
    entry = v.code_names[0]
    with loaded.resolve(entry.path).open(encoding=entry.encoding, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter=entry.delimiter))
    assert report["rows_read"] == len(rows) > 10_000
    assert report["dropped"]["inactive"] == sum(r[entry.active_column] not in entry.active_values for r in rows) > 0
    assert report["rows_read"] == report["codes_mapped"] + sum(report["dropped"].values())
    names = {}
    for a in pq.read_table(paths["atoms_by_lang"]["ru"]).to_pylist():
        assert a["sab"] == "ICD10RU"
        names.setdefault(a["cui"], []).append(a["str"])
    assert names["C0029838"] == ["Шизофрения"]  # F20 -> DOID:5419
    assert names["C0036349"] == ["Параноидная шизофрения"]  # F20.0
    assert names["C0008049"] == ["Ветряная оспа"]  # B01.9 "... без осложнений": the qualifier cut
    # J45 names three DO terms (asthma, allergic asthma, intrinsic asthma): ambiguous, dropped
    assert "C0004096" not in names
    assert not any(n.startswith(("Другие", "Прочие")) for ns in names.values() for n in ns)


def test_a_malformed_cui_makes_no_concept(tmp_path):
    """hp.obo has "UMLS:0189573" (no leading C): a concept under it would fail the release's
    schema wherever it landed, so the term has no CUI and no concept."""
    data = write_data(tmp_path / "data")
    with (data / "hpo" / "hp.obo").open("a", encoding="utf-8") as fh:
        fh.write("\n[Term]\nid: HP:0034420\nname: History of an invented procedure\nis_a: HP:0000118\nxref: UMLS:0189573\n")
    paths = build_obo_vocabulary(data, tmp_path / "out", {"ENG": "en"}, PREFERRED_EN)
    cuis = pq.read_table(paths["concepts"], columns=["cui"])["cui"].to_pylist()
    assert "0189573" not in cuis and "C9000001" in cuis
    assert all(c.startswith("C") and len(c) == 8 for c in cuis)
