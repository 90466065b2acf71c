"""tasks/translation/tmx.py: TMX 1.4b export (deterministic, escaped) and post-edited import."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mmedbench.cli_translate import tmx_export, tmx_import
from common.errors import InputError
from schemas.records import Translation
from tasks.translation.memory import TranslationMemory
from tasks.translation.tm_store import TMStore, read_entries
from tasks.translation.tmx import XML_LANG, entry_id, export_tmx, import_tmx, tmx_bytes

VERIFIED = "machine-translated and verified"


def mt(source, target, tgt="fr", engine="libre", status="machine-translated", origin="machine"):
    return Translation(source_lang="en", target_lang=tgt, source=source, target=target, origin=origin,
                       engine=engine, status=status)


TRICKY = [
    mt("Dose < 5 mg & \"rarely\" > 10 mg", "Dose < 5 mg & « rarement » > 10 mg"),
    mt("  leading and trailing spaces ", " espaces\tautour\n"),
    mt("Line one\r\nline two", "Ligne un\r\nligne deux"),
    mt("Heart failure", "心力衰竭", tgt="zh"),
    mt("Fever 🤒", "Fièvre 🤒", engine="deepl"),
    mt("Heart failure", "Insuffisance cardiaque", origin="human", engine="human", status="human-translated"),
]


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "memory.jsonl"
    with TMStore(path) as store:
        for e in TRICKY:
            store.append(e)
    return path


def units(tmx: Path) -> list[dict]:
    out = []
    for tu in ET.parse(tmx).getroot().find("body").findall("tu"):
        props = {p.get("type"): p.text for p in tu.findall("prop")}
        (s, t) = tu.findall("tuv")
        out.append({"tuid": tu.get("tuid"), "props": props, "src": s.get(XML_LANG), "tgt": t.get(XML_LANG),
                    "source": s.find("seg").text, "target": t.find("seg").text})
    return out


def test_export_round_trips_every_character(store_path, tmp_path):
    out = tmp_path / "memory.tmx"
    counts = export_tmx([store_path], out)
    assert counts.written == len(TRICKY)
    got = {(u["src"], u["tgt"], u["source"], u["target"], u["props"]["x-engine"], u["props"]["x-status"],
            u["props"]["x-origin"]) for u in units(out)}
    assert got == {(e.source_lang, e.target_lang, e.source, e.target, e.engine, e.status, e.origin) for e in TRICKY}
    assert {u["tuid"] for u in units(out)} == {entry_id(e) for e in TRICKY}
    # and importing it untouched adds nothing
    with TMStore(store_path) as store:
        c = import_tmx(out, store)
    assert (c.units, c.verified, c.unchanged) == (len(TRICKY), 0, len(TRICKY))
    assert read_entries(store_path) == TRICKY


def test_export_is_tmx_14b_shaped_and_deterministic(tmp_path):
    a, b = tmx_bytes(TRICKY), tmx_bytes(list(reversed(TRICKY)) + TRICKY[:2])  # order and duplicates do not matter
    assert a == b
    text = a.decode("utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE tmx SYSTEM "tmx14.dtd">\n')
    assert "&lt; 5 mg &amp;" in text and "&#13;" in text  # escaped; CR kept as a character reference
    root = ET.fromstring(a)
    assert root.tag == "tmx" and root.get("version") == "1.4"
    header = root.find("header")
    for attr in ("creationtool", "creationtoolversion", "segtype", "o-tmf", "adminlang", "srclang", "datatype"):
        assert header.get(attr), attr
    assert header.get("srclang") == "en"
    tus = root.find("body").findall("tu")
    for tu in tus:
        assert [c.tag for c in tu] == ["prop"] * 4 + ["tuv", "tuv"]  # TMX: props before tuvs
    keys = [(tu.findall("tuv")[1].get(XML_LANG), tu.findall("tuv")[0].find("seg").text) for tu in tus]
    assert keys == sorted(keys)  # sorted by languages, then source


def test_control_characters_are_skipped_not_written_as_broken_xml():
    from tasks.translation.tmx import ExportCounts

    counts = ExportCounts()
    data = tmx_bytes([mt("Bell\x07", "Cloche\x07"), mt("Fever", "Fièvre")], counts)
    assert counts.written == 1 and sum(counts.skipped.values()) == 1
    ET.fromstring(data)  # still well-formed


def _edit(tmx: Path, source: str, *, target: str | None = None, status: str | None = None, seg_source: str | None = None) -> None:
    tree = ET.parse(tmx)
    for tu in tree.getroot().iter("tu"):
        s, t = tu.findall("tuv")
        if s.find("seg").text == source and t.get(XML_LANG) == "fr":
            if target is not None:
                t.find("seg").text = target
            if seg_source is not None:
                s.find("seg").text = seg_source
            if status is not None:
                next(p for p in tu.findall("prop") if p.get("type") == "x-status").text = status
    tree.write(tmx, encoding="UTF-8", xml_declaration=True)


def test_post_edit_becomes_verified_and_wins_in_the_translation_memory(tmp_path):
    path = tmp_path / "memory.jsonl"
    with TMStore(path) as store:
        store.append(mt("Heart failure", "Échec du cœur"))
        store.append(mt("Lung cancer", "Cancer du poumon"))
    out = tmp_path / "memory.tmx"
    export_tmx([path], out)
    _edit(out, "Heart failure", target="Insuffisance cardiaque")
    before = path.read_bytes()
    with TMStore(path) as store:
        c = import_tmx(out, store)
    assert (c.verified, c.unchanged) == (1, 1)
    assert path.read_bytes().startswith(before)  # appended, nothing rewritten
    added = read_entries(path)[-1]
    assert (added.source, added.target, added.status, added.engine) == ("Heart failure", "Insuffisance cardiaque", VERIFIED, "libre")
    hit = TranslationMemory.from_files([path]).lookup("Heart failure", "en", "fr")
    assert hit.target == "Insuffisance cardiaque" and hit.status == VERIFIED
    # importing the same file again appends nothing
    with TMStore(path) as store:
        again = import_tmx(out, store)
    assert again.verified == 0 and again.already == 1 and len(read_entries(path)) == 3


def test_marked_unit_is_verified_without_a_change(tmp_path):
    path = tmp_path / "memory.jsonl"
    with TMStore(path) as store:
        store.append(mt("Lung cancer", "Cancer du poumon"))
    out = tmp_path / "m.tmx"
    export_tmx([path], out)
    _edit(out, "Lung cancer", status="verified")
    with TMStore(path) as store:
        assert import_tmx(out, store).verified == 1
    assert TranslationMemory.from_files([path]).lookup("Lung cancer", "en", "fr").status == VERIFIED


def test_units_that_cannot_be_trusted_are_skipped_with_a_reason(tmp_path):
    path = tmp_path / "memory.jsonl"
    with TMStore(path) as store:
        store.append(mt("Lung cancer", "Cancer du poumon"))
        store.append(mt("Heart failure", "Insuffisance cardiaque", origin="human", engine="human", status="human-translated"))
        store.append(mt("Fever", "Fièvre"))
    out = tmp_path / "m.tmx"
    export_tmx([path], out)
    _edit(out, "Lung cancer", target="Cancer pulmonaire", seg_source="Lung carcinoma")  # the source was edited
    _edit(out, "Heart failure", target="Défaillance cardiaque")  # a human translation
    _edit(out, "Fever", target="   ")
    with TMStore(path) as store:
        c = import_tmx(out, store)
    assert c.verified == 0 and dict(c.skipped) == {
        "source text edited": 1, "human translation edited (change it in its own TM file)": 1, "empty target": 1}
    assert len(read_entries(path)) == 3


def test_unit_from_another_memory_uses_its_target_hash(tmp_path):
    """A TMX exported from other TM files: no original in this store, the x-target-sha256 decides."""
    out = tmp_path / "other.tmx"
    out.write_bytes(tmx_bytes([mt("Lung cancer", "Cancer du poumon"), mt("Fever", "Fièvre")]))
    _edit(out, "Fever", target="Fièvre (hyperthermie)")
    path = tmp_path / "memory.jsonl"
    with TMStore(path) as store:
        c = import_tmx(out, store)
    assert (c.verified, c.unchanged) == (1, 1)
    assert [(e.source, e.target, e.status) for e in read_entries(path)] == [("Fever", "Fièvre (hyperthermie)", VERIFIED)]


def test_foreign_tmx_without_provenance_is_not_trusted(tmp_path):
    out = tmp_path / "foreign.tmx"
    out.write_text("""<?xml version="1.0" encoding="UTF-8"?>
<tmx version="1.4"><header srclang="en" creationtool="x" creationtoolversion="1" segtype="sentence" o-tmf="x" adminlang="en" datatype="plaintext"/>
<body><tu><tuv xml:lang="en"><seg>Fever</seg></tuv><tuv xml:lang="fr"><seg>Fièvre</seg></tuv></tu>
<tu><prop type="x-verified">yes</prop><prop type="x-engine">deepl</prop>
<tuv xml:lang="fr"><seg>Toux</seg></tuv><tuv xml:lang="en"><seg>Cough</seg></tuv></tu></body></tmx>""", encoding="utf-8")
    path = tmp_path / "memory.jsonl"
    with TMStore(path) as store:
        c = import_tmx(out, store)
    assert c.verified == 1 and sum(c.skipped.values()) == 1
    (e,) = read_entries(path)  # the marked one; srclang picks the English tuv whatever its position
    assert (e.source_lang, e.target_lang, e.source, e.target, e.engine, e.status) == ("en", "fr", "Cough", "Toux", "deepl", VERIFIED)


def test_entity_declarations_and_broken_xml_are_refused(tmp_path):
    bomb = tmp_path / "bomb.tmx"
    bomb.write_text('<?xml version="1.0"?><!DOCTYPE tmx [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
                    "<tmx><body/></tmx>")
    broken = tmp_path / "broken.tmx"
    broken.write_text("<tmx><body><tu></body></tmx>")
    with TMStore(tmp_path / "m.jsonl") as store:
        with pytest.raises(InputError, match="entity declarations are not allowed"):
            import_tmx(bomb, store)
        with pytest.raises(InputError, match=r"broken.tmx:1: not well-formed XML"):
            import_tmx(broken, store)


def test_cli_export_then_import(tmp_path):
    app = typer.Typer()
    app.command("tmx-export")(tmx_export)
    app.command("tmx-import")(tmx_import)
    path = tmp_path / "memory.jsonl"
    with TMStore(path) as store:
        store.append(mt("Lung cancer", "Cancer du poumon"))
    out = tmp_path / "m.tmx"
    res = CliRunner().invoke(app, ["tmx-export", str(path), "--out", str(out)])
    assert res.exit_code == 0 and res.stdout == f"exported 1 translation units from 1 file(s) to {out}\n"
    _edit(out, "Lung cancer", target="Cancer pulmonaire")
    res = CliRunner().invoke(app, ["tmx-import", str(out), "--memory", str(path)])
    assert res.exit_code == 0 and "1 verified entries appended" in res.stdout
    res = CliRunner().invoke(app, ["tmx-import", str(out), "--memory", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and res.stderr.startswith("error: ") and "file not found" in res.stderr
    res = CliRunner().invoke(app, ["tmx-export", str(tmp_path / "nope.jsonl"), "--out", str(out)])
    assert res.exit_code == 2 and "nope.jsonl: file not found" in res.stderr
