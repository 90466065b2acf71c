"""Every reader, fed mutated genuine input, either reads it or raises the project's InputError:
one line naming the file, never another exception (after ir_datasets' parser tests:
in-memory genuine lines, then malformed ones).

Genuine inputs are the committed sample files (RRF, sources, translation memory, config,
registry) and the adapters' own fixtures (tests/tasks/sources/test_adapters.py); hypothesis mutates their
bytes (flips, inserts of troublesome bytes and tokens, deletions, truncations, duplicated
and swapped lines) and each reader is run to the end on the result. Deterministic
(derandomize) and small enough for `make test-fast`.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.errors import InputError
from tasks.sources.adapters.casimedicos import read_sentences
from tests.conftest import ROOT
from tests.tasks.sources import test_adapters as fx
from tests.tasks.sources import test_casimedicos as cx

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])

# bytes and tokens that break readers: undecodable and overlong UTF-8, separators, quotes,
# brackets, escapes, numbers too long to read, nesting too deep, control characters,
# characters that look like digits or letters, markup, entity declarations, BOMs
TROUBLE = [
    b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\x00", b"\r", b"\n", b"\r\n", b"\x0b", b"\x1c",
    "\u2028".encode(), "\u0085".encode(), b"|", b"||", b"\t", b'"', b"'", b"{", b"}", b"[", b"]", b",", b":", b"\\",
    b"\\u", b"\\ud800", b'"\\udfff"', b"9" * 5000, b"[" * 3000, b'{"a":' * 1500, b"-", b"1e999", b"NaN", b"null",
    b"true", b"0", b"-1", b" ", "É".encode(), "٣".encode(), "Ｃ".encode(), b"!", b"<", b">", b"&", b"&#0;", b"&#xD800;",
    b"<!ENTITY x 'y'>", b"<!DOCTYPE x [<!ENTITY a 'b'>]>", b"</seg>", b"<seg>", b"<tu>", b"\xef\xbb\xbf", b"=", b"[[x]]",
    b"[Term]\n", b"id:", b"is_a:", b"xref:", b"synonym:", b'synonym: "', b"a" * 300, b"C0000005", b"ENG", b"x:y:z",
]
PAYLOAD = st.one_of(st.sampled_from(TROUBLE), st.binary(min_size=1, max_size=6))


@st.composite
def mutated(draw, genuine: bytes) -> bytes:
    data = bytearray(genuine)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["insert", "replace", "delete", "flip", "truncate", "duplicate", "swap"]))
        pos = draw(st.integers(0, len(data)))
        if op == "insert":
            data[pos:pos] = draw(PAYLOAD)
        elif op == "replace":
            data[pos : pos + draw(st.integers(1, 8))] = draw(PAYLOAD)
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 24))]
        elif op == "flip" and pos < len(data):
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[pos:]
        elif op == "duplicate":
            data[pos:pos] = data[pos : pos + draw(st.integers(1, 64))]
        elif op == "swap":
            lines = bytes(data).split(b"\n")
            if len(lines) > 1:
                i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
                data = bytearray(b"\n".join(lines))
    return bytes(data)


def only_input_errors(read, path: Path):
    """Run `read(path)` to the end; an error must be an InputError whose message is one
    short line starting with the file's name (as the CLI prints it)."""
    try:
        return read(path)
    except InputError as exc:
        msg = str(exc)
        assert "\n" not in msg and "\r" not in msg and len(msg) < 1200, msg
        assert Path(exc.file).name and msg.startswith(exc.file), msg
        return exc


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def head(path: Path, lines: int) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:lines])


# ------------------------------------------------------------------------------------ RRF

import umls.rrf as rrf  # noqa: E402

SAMPLE = ROOT / "umls" / "sample"
RRF_FILES = {name: head(SAMPLE / name, 4) for name in ("MRCONSO.RRF", "MRSTY.RRF", "MRREL.RRF", "MRDEF.RRF", "MRSAB.RRF", "MRFILES.RRF")}


@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(RRF_FILES)))
def test_rrf_reader_fuzz(work, data, name):
    """Malformed RRF is located (line, and field where one is at fault); what is read obeys
    the reader's own rules (the pre-check never lets a value through that its pattern forbids)."""
    path = work / name
    path.write_bytes(data.draw(mutated(RRF_FILES[name])))
    out = only_input_errors(lambda p: rrf.read_rrf_table(p, rrf.COLUMNS[name]), path)
    if isinstance(out, InputError):
        assert out.line is not None, str(out)  # the scan finds every problem pyarrow meets
        return
    for col, pattern in rrf.PATTERNS.get(name, {}).items():
        bad = [v for v in out.column(col).to_pylist() if not re.fullmatch(pattern, v, re.ASCII)]
        assert bad == [], (col, bad)


# ------------------------------------------------------------------------------------ OBO, babelon, DO TSV

from umls.derive_sample import read_babelon  # noqa: E402
from umls.obo import read_obo  # noqa: E402
from umls.obo_vocabulary import read_do_tsv, read_synonyms  # noqa: E402
from tests.umls.test_obo import DOC as OBO_DOC  # noqa: E402

BABELON = ("subject_id\tsource_language\ttranslation_language\tpredicate_id\tsource_value\ttranslation_status\ttranslation_value\n"
           "HP:0000001\ten\tfr\trdfs:label\tAll\tOFFICIAL\tTous\n"
           "HP:0001945\ten\tfr\trdfs:label\tFever\tOFFICIAL\tFièvre\n"
           "HP:0001945\ten\tfr\tIAO:0000115\tElevated temperature\tCANDIDATE\tTempérature élevée\n").encode()
SYNONYMS = ("subject_id\ttranslation_value\tcomment\tStatus\tline\n"
            "ID\tAL oboInOwl:hasExactSynonym@fr\t\t\t\n"
            "HP:0001945\tHyperthermie\tsynonyms of HP:0001945 (Fever)\tOFFICIAL\t3\n"
            "HP:0001945\tFièvre élevée\tsynonyms of HP:0001945 (Fever)\tCANDIDATE\t4\n").encode()
DO_TSV = ('id\tlabel\txref\n"DOID:0112248"\t"17-beta hydroxysteroid dehydrogenase 3 deficiency"\t"UMLS_CUI:C0268297"\n'
          '"DOID:0040058"\t"allergic contact dermatitis"\t"MESH:D017449"\n').encode()


@FUZZ
@given(data=st.data())
def test_obo_reader_fuzz(work, data):
    path = work / "doid.obo"
    path.write_bytes(data.draw(mutated(OBO_DOC.encode())))
    only_input_errors(lambda p: list(read_obo(p)), path)


@FUZZ
@given(data=st.data())
def test_babelon_reader_fuzz(work, data):
    path = work / "hp-fr.babelon.tsv"
    path.write_bytes(data.draw(mutated(BABELON)))
    only_input_errors(read_babelon, path)


@FUZZ
@given(data=st.data())
def test_hpo_synonyms_reader_fuzz(work, data):
    path = work / "hp-fr.synonyms.tsv"
    path.write_bytes(data.draw(mutated(SYNONYMS)))
    only_input_errors(read_synonyms, path)


def test_hpo_synonyms_reader_reads_official_rows_and_names_a_bad_byte(work):
    path = work / "hp-fr.synonyms.tsv"
    path.write_bytes(SYNONYMS)
    assert read_synonyms(path) == {"HP:0001945": ["Hyperthermie"]}
    path.write_bytes(SYNONYMS.replace("Hyperthermie".encode(), b"Hyper\xfftherm"))
    with pytest.raises(InputError) as err:
        read_synonyms(path)
    assert str(err.value).startswith(f"{path}:3:")
    path.write_bytes(b"")
    with pytest.raises(InputError, match=r"synonyms\.tsv:1: expected a header with subject_id"):
        read_synonyms(path)


@FUZZ
@given(data=st.data())
def test_do_tsv_reader_fuzz(work, data):
    path = work / "allXREFinDO.tsv"
    path.write_bytes(data.draw(mutated(DO_TSV)))
    only_input_errors(lambda p: read_do_tsv(p, "the current DO's cross-references"), path)


# ------------------------------------------------------------------------------------ JSON lines: sources, passages, memory

from common.jsonio import read_jsonl  # noqa: E402
from tasks.sources.adapters import ADAPTERS, READERS_WITH_DROPS, cnmleqa_tags, read_beir_corpus  # noqa: E402
from tasks.sources.passages import read_passages  # noqa: E402
from tasks.translation.memory import TranslationMemory  # noqa: E402
from tasks.translation.tm_store import read_entries  # noqa: E402

ALL = {"en", "zh", "ja", "fr", "ru", "es"}
SOURCES = ROOT / "sources" / "sample"
JSONL = {
    "xqa.jsonl": head(SOURCES / "xqa.jsonl", 2),
    "evidence_background.jsonl": head(SOURCES / "evidence_background.jsonl", 2),
    "tm_terms.jsonl": head(SOURCES / "tm_terms.jsonl", 3),
}


@FUZZ
@given(data=st.data(), which=st.sampled_from(["jsonl", "sample-jsonl", "passages", "memory", "store"]))
def test_json_lines_readers_fuzz(work, data, which):
    genuine = {"jsonl": "xqa.jsonl", "sample-jsonl": "xqa.jsonl", "passages": "evidence_background.jsonl",
               "memory": "tm_terms.jsonl", "store": "tm_terms.jsonl"}[which]
    path = work / genuine
    path.write_bytes(data.draw(mutated(JSONL[genuine])))
    read = {
        "jsonl": lambda p: list(read_jsonl(p)),
        "sample-jsonl": lambda p: list(ADAPTERS["sample-jsonl"](p, ALL)),
        "passages": lambda p: list(read_passages(p)),
        "memory": lambda p: TranslationMemory.from_files([p]),
        "store": read_entries,
    }[which]
    only_input_errors(read, path)


def _jsonl(rows: list) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def _json(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False, indent=4).encode()


def _tsv(cases: list[list[str]]) -> bytes:
    return ("\n".join(line for case in cases for line in case) + "\n").encode()


# one genuine file per adapter (the adapters' own fixtures), and where it goes in the source
ADAPTER_INPUTS = {
    "mmedbench-jsonl": ("English.jsonl", _jsonl([fx.mmed(), fx.mmed(question="Another invented question?", answer_idx="B")])),
    "pubmedqa": ("ori_pqal.json", _json({"1001": fx.pqa(), "1002": fx.pqa(QUESTION="Is Y invented?")})),
    "igakuqa": ("data/2018/112-A.jsonl", _jsonl([fx.iga_question("112A1"), fx.iga_question("112A2")])),
    "igakuqa-translation": ("data/2018/112-A_translate.jsonl", _jsonl([fx.iga_translation("112A1"), fx.iga_translation("112A2")])),
    "frenchmedmcqa": ("test.json", _json([fx.fmc(), fx.fmc("b" * 64)])),
    "rumeddanet": ("dev_v1.jsonl", _jsonl([fx.rmd(), fx.rmd("1" * 32, answer="нет")])),
    "cnmleqa": ("CNMLEQA-3k.json", _json([fx.cnm(), fx.cnm("00000000-0000-5000-8000-000000000002")])),
    # casimedicos: token-per-line files, one folder per language; each is mutated in turn
    "casimedicos": ("EN/dev.tsv", _tsv(cx.EN)),
    "casimedicos-native": ("ES/dev.tsv", _tsv(cx.ES)),
    "casimedicos-translation": ("FR/dev.tsv", _tsv(cx.FR)),
    # another publisher's shape of the same file: tab-separated, a fourth column, a BOM and CRLF
    "casimedicos-tabs": ("ES/dev.tsv", b"\xef\xbb\xbf" + _tsv([cx.publisher_shapes(c, "tabs") for c in cx.ES]).replace(b"\n", b"\r\n")),
    "beir-corpus": ("toyset/corpus.jsonl", None),
    "beir-queries": ("toyset/queries.jsonl", None),
    "beir-qrels": ("toyset/qrels/test.tsv", None),
}


def _adapter_source(root: Path, which: str, mutated_bytes: bytes) -> tuple[str, Path]:
    """Lay out the genuine source under `root`, with `which`'s file replaced by the mutated bytes."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    fmt = which.split("-")[0] if which.startswith(("igakuqa", "beir", "casimedicos")) else which
    if fmt == "beir":
        folder = fx.beir_folder(root)
        target = root / ADAPTER_INPUTS[which][0]
        target.write_bytes(mutated_bytes)
        return fmt, folder
    if fmt == "casimedicos":
        for key in ("casimedicos", "casimedicos-native", "casimedicos-translation"):
            rel, data = ADAPTER_INPUTS[key]
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(mutated_bytes if rel == ADAPTER_INPUTS[which][0] else data)
        return fmt, root
    if fmt == "igakuqa":
        for key in ("igakuqa", "igakuqa-translation"):
            rel, data = ADAPTER_INPUTS[key]
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(mutated_bytes if key == which else data)
        return fmt, root / "data"
    rel, _ = ADAPTER_INPUTS[which]
    (root / rel).write_bytes(mutated_bytes)
    return fmt, root / rel


def _genuine(which: str) -> bytes:
    rel, data = ADAPTER_INPUTS[which]
    if data is None:  # the BEIR fixture folder's own file
        tmp = Path(__import__("tempfile").mkdtemp())
        try:
            return (fx.beir_folder(tmp).parent / rel).read_bytes()
        finally:
            shutil.rmtree(tmp)
    return data


GENUINE = {k: _genuine(k) for k in ADAPTER_INPUTS}


@FUZZ
@given(data=st.data(), which=st.sampled_from(sorted(ADAPTER_INPUTS)))
def test_every_source_adapter_fuzz(work, data, which):
    fmt, path = _adapter_source(work / "src", which, data.draw(mutated(GENUINE[which])))
    only_input_errors(lambda p: list(ADAPTERS[fmt](p, ALL)), path)
    if fmt == "cnmleqa":
        only_input_errors(cnmleqa_tags, path)
    if fmt == "beir":
        only_input_errors(lambda p: list(read_beir_corpus(p)), path)
    if fmt == "casimedicos":  # the pairing's drops too, and the xqa reading of the options
        only_input_errors(lambda p: READERS_WITH_DROPS[fmt](p, ALL).drops, path)
        only_input_errors(lambda p: list(ADAPTERS[fmt](p, ALL, task="xqa", passage="concept")), path)


@FUZZ
@given(data=st.data(), which=st.sampled_from(["casimedicos", "casimedicos-native", "casimedicos-translation", "casimedicos-tabs"]))
def test_casimedicos_reader_fuzz(work, data, which):
    """The token-per-line reader and its pairing, on each language's file mutated (its own draws:
    the shared fuzz above gives it a few of its 60)."""
    fmt, path = _adapter_source(work / "src", which, data.draw(mutated(GENUINE[which])))
    only_input_errors(lambda p: READERS_WITH_DROPS[fmt](p, ALL), path)


@FUZZ
@given(data=st.data())
def test_token_lines_keep_their_tokens_whatever_the_separators(data):
    """Any runs of spaces and tabs between a line's fields, and any columns after its label,
    give the same token and the same sentence; a BOM-less file's CRLF, CR or LF likewise."""
    sep = st.text(alphabet=" \t", min_size=1, max_size=4)
    token = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=" \t\r\n"), min_size=1, max_size=8)
    words = data.draw(st.lists(token, min_size=1, max_size=6))
    lines = []
    for w in words:
        extra = data.draw(st.lists(st.text(alphabet="abcXY_01", min_size=0, max_size=3), max_size=3))
        tail = "".join(data.draw(sep) + e for e in extra) + data.draw(st.sampled_from(["", " ", "\t", "\t\t"]))
        lines.append(w + data.draw(sep) + data.draw(st.sampled_from(["O", "B-Premise", "I-Claim"])) + tail)
    end = data.draw(st.sampled_from(["\n", "\r\n", "\r"]))
    blank = data.draw(st.sampled_from(["", " ", "\t\t\t"]))
    text = end.join(lines + [blank] + lines) + end
    got = read_sentences(Path("XX/dev.tsv"), text)
    assert [(s.line, s.text) for s in got] == [(1, " ".join(words)), (len(words) + 2, " ".join(words))]


def test_the_genuine_adapter_inputs_read_cleanly(work):
    """The fuzz starts from inputs every adapter accepts as they are."""
    for which in ADAPTER_INPUTS:
        fmt, path = _adapter_source(work / "src", which, GENUINE[which])
        assert list(ADAPTERS[fmt](path, ALL)), which


# ------------------------------------------------------------------------------------ TOML config, registry

from schemas.config import load_config, load_registry  # noqa: E402


def _sample_config_text() -> str:
    text = (ROOT / "configs" / "sample.toml").read_text(encoding="utf-8")
    return text.replace('"../', f'"{ROOT}/').replace('registry = "languages.toml"', f'registry = "{ROOT}/configs/languages.toml"')


@FUZZ
@given(data=st.data())
def test_config_reader_fuzz(work, data):
    path = work / "config.toml"
    path.write_bytes(data.draw(mutated(_sample_config_text().encode())))
    only_input_errors(load_config, path)


@FUZZ
@given(data=st.data())
def test_registry_reader_fuzz(work, data):
    path = work / "languages.toml"
    path.write_bytes(data.draw(mutated((ROOT / "configs" / "languages.toml").read_bytes()[:1500])))
    only_input_errors(load_registry, path)


# ------------------------------------------------------------------------------------ TMX

from schemas.records import Translation  # noqa: E402
from tasks.translation.tm_store import TMStore  # noqa: E402
from tasks.translation.tmx import import_tmx, tmx_bytes  # noqa: E402

TM_ENTRIES = [Translation(source_lang="en", target_lang="fr", source=s, target=t, origin="machine", engine="libre",
                          status="machine-translated") for s, t in (("Fever", "Fièvre"), ("Heart failure", "Insuffisance cardiaque"))]
TMX = tmx_bytes(TM_ENTRIES)


@FUZZ
@given(data=st.data())
def test_tmx_import_fuzz(work, data):
    store_path, tmx = work / "memory.jsonl", work / "memory.tmx"
    store_path.write_text("".join(json.dumps(e.model_dump(mode="json"), ensure_ascii=False) + "\n" for e in TM_ENTRIES),
                          encoding="utf-8")
    tmx.write_bytes(data.draw(mutated(TMX)))
    with TMStore(store_path) as store:
        only_input_errors(lambda p: import_tmx(p, store), tmx)


# ------------------------------------------------------------------------------------ manifest

from schemas.records import load_manifest  # noqa: E402

MANIFEST = json.dumps({
    "version": "0.1.0", "build_id": "a" * 64, "code_version": "0.1.0+abc", "inputs": {"configs/languages.toml": "b" * 64},
    "config": {"languages": ["en", "fr"], "seed": 1}, "languages": {"en": {"code": "en"}}, "sources_srl": {"DO": 0},
    "cells": {"xqa/en": {"queries": 6, "documents": 58, "qrels": 6, "provenance": {"native": 6}, "realization": "full"}},
    "files": {"xqa/en/queries.jsonl": {"sha256": "c" * 64, "bytes": 10, "rows": 6}}, "dropped": {"no key concept": 2},
}, indent=2, sort_keys=True).encode()


@FUZZ
@given(data=st.data())
def test_manifest_reader_fuzz(work, data):
    path = work / "manifest.json"
    path.write_bytes(data.draw(mutated(MANIFEST)))
    only_input_errors(load_manifest, path)


def test_genuine_manifest_config_and_tmx_read_cleanly(work):
    (work / "manifest.json").write_bytes(MANIFEST)
    assert load_manifest(work / "manifest.json")["version"] == "0.1.0"
    (work / "config.toml").write_text(_sample_config_text(), encoding="utf-8")
    assert load_config(work / "config.toml").config.version == "0.1.0"


# ------------------------------------------------------------------------------------ the probes, one line each


@pytest.mark.parametrize("reader,name,data,where", [
    ("jsonl", "xqa.jsonl", b'{"id": "a"}\n{"id": "b", "text": "caf\xe9"}\n', "xqa.jsonl:2: expected UTF-8 text, found byte 0xe9 at column 25"),
    ("rrf", "MRCONSO.RRF", (rrf_row := "C0000005|EN1|P|L0000005|PF|S0007492|Y|A26634265||M0019694|D012711|MSH|PEP|D012711|Albumin|0|N|256|\n").encode(),
     "MRCONSO.RRF:1: field 'LAT': expected pattern ^[A-Z]{3}$, got 'EN1'"),
    ("rrf", "MRCONSO.RRF", rrf_row.replace("EN1", "ÉNG").encode(), "MRCONSO.RRF:1: field 'LAT': expected pattern ^[A-Z]{3}$, got 'ÉNG'"),
    ("rrf", "MRCONSO.RRF", rrf_row.replace("EN1", "ENG").replace("C0000005", "C000000٥").encode(),
     "MRCONSO.RRF:1: field 'CUI': expected pattern ^C\\d{7}$, got 'C000000٥'"),
    ("toml", "config.toml", b'version = "0.1.0"\nseed = \xff\n', "config.toml:2: expected UTF-8 text, found byte 0xff at column 8"),
    ("toml", "config.toml", b'version = "0.1.0"\nseed = [1,\n', "config.toml:3: invalid TOML: Invalid value (at the end of the file)"),
    ("obo", "hp.obo", b"[Term]\nid: HP:1\nis_a: ! nothing\n", "hp.obo:3: is_a: expected a term id, got '! nothing'"),
    ("manifest", "manifest.json", b'{"version": 1}', "manifest.json: field 'version': Input should be a valid string"),
])
def test_probes_end_in_one_line(work, reader, name, data, where):
    path = work / name
    path.write_bytes(data)
    read = {"jsonl": lambda p: list(read_jsonl(p)), "rrf": lambda p: rrf.read_rrf_table(p, ["CUI", "LAT", "STR"]),
            "toml": load_config, "obo": lambda p: list(read_obo(p)), "manifest": load_manifest}[reader]
    with pytest.raises(InputError) as exc:
        read(path)
    assert str(exc.value) == f"{path}{where[len(name):]}"


# ------------------------------------------------------------------------------------ vocabulary name lists and glossaries

import zipfile  # noqa: E402

from tests.umls import test_name_lists as nl  # noqa: E402
from umls.name_lists import NameListConfig, read_rows  # noqa: E402
from umls.name_readers import file_lines, read_glossary, read_utx, zip_member_lines  # noqa: E402

DO_TRANSLATIONS = ("source_id\tpredicate\tsource_text\ttranslation_text\ttranslator\tsource_lang\ttranslation_lang\tstatus\n"
                   "DOID:1681\trdfs:label\theart septal defect\tdefecto septal cardíaco\tX\ten\tes\tfinal\n"
                   "DOID:0040003\toboInOwl:hasExactSynonym\tbenzyl penicillin allergy\talergia a la bencilpenicilina\tX\ten\tes\t"
                   "MANUALLY TRANSLATED\n")
NAME_LISTS = {  # genuine lines of each format, and the block that reads them
    "x.ann": (nl.BRAT, {"format": "brat", "types": {"DISO": "T047"}}),
    "0.concept": ("T80||4551|4553||Body_location||ЛЖ||C0080310\nT75||1728|1749||Disease||аллергического ринита||C2607914\n",
                  {"format": "biosyn"}),
    "ru_train.tsv": (nl.NEREL, {"format": "delimited", "delimiter": "\t", "name_column": "text", "cui_column": "UMLS_CUI",
                                "label_column": "entity_type", "types": {"DISO": "T047"}}),
    "wd.csv": (nl.WIKIDATA, {"format": "delimited", "name_column": "en_label", "cui_column": "umls_id",
                             "label_column": ["category_en", "category"], "description_column": "en_description",
                             "types": {"disease": "T047"}}),
    "doid-es.tsv": (DO_TRANSLATIONS, {"format": "do-translations"}),
}


@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(NAME_LISTS)))
def test_name_list_readers_fuzz(work, data, name):
    genuine, block = NAME_LISTS[name]
    path = work / name
    path.write_bytes(data.draw(mutated(genuine.encode())))
    src = NameListConfig(path=str(path), lang="fr", sab="FUZZ", licence="mit", **block)
    only_input_errors(lambda p: list(read_rows(src, p)), path)


@FUZZ
@given(data=st.data(), which=st.sampled_from(["glossary", "utx", "utx-zip"]))
def test_glossary_readers_fuzz(work, data, which):
    if which == "glossary":
        path = work / "en_fr.tsv"
        path.write_bytes(data.draw(mutated(" 1 19-norprogesterone\t19-norprogestérone\t\n 2 gout\tgoutte\t\n".encode())))
        only_input_errors(lambda p: list(read_glossary(file_lines(p, "a glossary"), p, "source")), path)
        return
    raw = data.draw(mutated(nl.UTX.encode()))
    if which == "utx":
        path = work / "medutx.utx"
        path.write_bytes(raw)
        only_input_errors(lambda p: list(read_utx(file_lines(p, "a glossary"), p)), path)
        return
    path = work / "medutx.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("medutx1.01.utx", raw)
    only_input_errors(lambda p: list(read_utx(zip_member_lines(p, "medutx1.01.utx"), p)), path)
