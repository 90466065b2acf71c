"""umls.name_readers and umls.name_lists: CUI-keyed name lists and glossaries as vocabulary atoms.

Parsers are fed text in memory, genuine lines in each source's real layout (QUAERO's brat
notes, NEREL-BIO's tsv, RuCCoN's BioSyn rows, wikidata-medical's csv, DO's translation tables,
MeSpEn's `count src<TAB>tgt`, MEDUTX's UTX) and malformed ones (after ir_datasets' parser
tests). The rules run on a tiny concept dict where every drop reason is crafted and counted.
The real lists are checked when ../shared/data is present.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from common.errors import InputError
from schemas.config import load_config
from tests.conftest import ROOT
from umls import derive_sample as ds
from umls.name_lists import add_name_lists, best_form, lemmatizer, list_files, mention_key, written_form
from umls.name_readers import (NameRow, PairRow, read_biosyn, read_brat, read_delimited, read_glossary, read_utx,
                               zip_member_lines)


def numbered(text: str) -> list[tuple[int, str]]:
    return list(enumerate(text.splitlines(keepends=True), start=1))


# ------------------------------------------------------------------------------ readers

BRAT = ("T1\tPROC 0 10\tTraitement\n"
        "#1\tAnnotatorNotes T1\tC0087111\n"
        "T2\tDISO 15 36\tmétastases hépatiques\n"
        "T3\tDISO 285 293;305 315\tdouleurs chroniques\n"
        "#3\tAnnotatorNotes T3\tC0013144 C2830004\n"
        "R1\tRel Arg1:T1 Arg2:T2\n"
        "#2\tAnnotatorNotes T2\t C0494165\n")


def test_brat_mentions_carry_their_notes_cuis():
    assert read_brat(numbered(BRAT), "x.ann") == [
        NameRow(1, "Traitement", ("C0087111",), "PROC"),
        NameRow(3, "métastases hépatiques", ("C0494165",), "DISO"),  # the note after the relation, leading space
        NameRow(4, "douleurs chroniques", ("C0013144", "C2830004"), "DISO"),  # discontinuous, two CUIs
    ]


@pytest.mark.parametrize("bad, expected", [
    ("T1\tPROC 0 10 Traitement\n", "x.ann:1: expected a text-bound annotation"),
    ("T1\tPROC zero ten\tTraitement\n", "x.ann:1: field 'T': expected 'LABEL START END' offsets"),
    ("#1 AnnotatorNotes T1 C0087111\n", "x.ann:1: expected a note"),
])
def test_malformed_brat_is_one_located_error(bad, expected):
    with pytest.raises(InputError) as exc:
        read_brat(numbered(bad), "x.ann")
    assert str(exc.value).startswith(expected)


def test_biosyn_rows_and_a_short_line():
    text = "T80||4551|4553||Body_location||ЛЖ||C0080310\nT1||9|46||Disease||Бронхиальная астма, атопическая форма||C0004096\n\n"
    assert list(read_biosyn(numbered(text), "0.concept")) == [
        NameRow(1, "ЛЖ", ("C0080310",), "Body_location"), NameRow(2, "Бронхиальная астма, атопическая форма", ("C0004096",), "Disease")]
    with pytest.raises(InputError, match=r"0.concept:3: expected 5 '\|\|'-separated fields"):
        list(read_biosyn(numbered(text.rstrip("\n") + "\nT2||1|2||Drug||аспирин\n"), "0.concept"))


NEREL = ("document_id\ttext\tentity_type\tspans\tUMLS_CUI\n"
         "22271960_ru\tтяжелой острой респираторной инфекцией\tDISO\t101-139\tC3873497\n"
         "22271960_ru\tГПБ\tDISO\t497-500\tCUILESS\n")
WIKIDATA = ('\ufeffqid,category_en,category_ja,category_qid,en_label,ja_label,en_description,ja_description,mesh_id,icd10,icd9,snomed_id,umls_id\n'
            'Q170990,disease,病気,Q12136,arthritis,関節炎,"any of several joint disorders, some autoimmune, some infectious",,D001168,,712,,C0003864\n')
WIKIDATA_OLD = ('qid,category,category_qid,en_label,ja_label,en_description,ja_description,mesh_id,icd10,icd9,snomed_id,umls_id\n'
                'Q1,病気,Q12136,gout,痛風,a form of arthritis,,D006073,,,,C0018099\n')


def test_delimited_rows_by_the_columns_named():
    rows = list(read_delimited(numbered(NEREL), "ru.tsv", "\t", "text", "UMLS_CUI", "entity_type"))
    assert rows == [NameRow(2, "тяжелой острой респираторной инфекцией", ("C3873497",), "DISO"), NameRow(3, "ГПБ", ("CUILESS",), "DISO")]
    lines = numbered(WIKIDATA)
    lines[0] = (1, lines[0][1].lstrip("\ufeff"))  # iter_lines drops the byte-order mark
    rows = list(read_delimited(lines, "w.csv", ",", "en_label", "umls_id", ["category_en", "category"], "en_description"))
    assert rows == [NameRow(2, "arthritis", ("C0003864",), "disease", "any of several joint disorders, some autoimmune, some infectious")]
    # an older extraction's header says `category`: the label column's second name
    rows = list(read_delimited(numbered(WIKIDATA_OLD), "o.csv", ",", "ja_label", "umls_id", ["category_en", "category"]))
    assert rows == [NameRow(2, "痛風", ("C0018099",), "病気")]


@pytest.mark.parametrize("text, expected", [
    (NEREL.replace("UMLS_CUI", "CUI", 1), "ru.tsv:1: field 'cui_column': no column 'UMLS_CUI'"),
    (NEREL + "x\ty\tDISO\n", "ru.tsv:4: expected 5 '\\t'-separated columns, found 3"),
    ("", "ru.tsv:1: empty file"),
])
def test_malformed_delimited_is_one_located_error(text, expected):
    with pytest.raises(InputError) as exc:
        list(read_delimited(numbered(text), "ru.tsv", "\t", "text", "UMLS_CUI", "entity_type"))
    assert str(exc.value).startswith(expected)


def test_glossaries_of_either_direction():
    zh_en = " 1 10-羟基喜树碱\t10-Hydroxy-camptothecin\t     \n 2 阿司匹林\tAspirin\t\n"
    assert list(read_glossary(numbered(zh_en), "zh.tsv", english="target")) == [
        PairRow(1, "10-Hydroxy-camptothecin", "10-羟基喜树碱"), PairRow(2, "Aspirin", "阿司匹林")]
    en_fr = " 1 19-norprogesterone\t19-norprogestérone\t\n"
    assert list(read_glossary(numbered(en_fr), "fr.tsv", english="source")) == [PairRow(1, "19-norprogesterone", "19-norprogestérone")]
    with pytest.raises(InputError, match="fr.tsv:2: expected 'count source-term<TAB>target-term', found no tab"):
        list(read_glossary(numbered(en_fr + " 1 aspirin aspirine\n"), "fr.tsv", english="source"))
    with pytest.raises(InputError, match="fr.tsv:1: expected a count, a space and the source term"):
        list(read_glossary(numbered("aspirin\taspirine\t\n"), "fr.tsv", english="source"))


UTX = ("#UTX-S 1.01; en-US/ja-JP; 2009-09-08T17:55:00Z+09:00 license: CC-BY 3.0\t\t\t\r\n"
       "#src\ttgt\tsrc:pos\tcomment\r\n"
       "gout\t痛風\tnoun\t\r\n"
       "aspirin\tアスピリン\tnoun\t\r\n")


def test_utx_inside_its_zip(tmp_path):
    archive = tmp_path / "medutx.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("medutx1.01.utx", UTX.encode("utf-8"))
        zf.writestr("bad.utx", b"gout\t\xff\n")
    assert list(read_utx(zip_member_lines(archive, "medutx1.01.utx"), archive)) == [
        PairRow(3, "gout", "痛風"), PairRow(4, "aspirin", "アスピリン")]
    with pytest.raises(InputError, match="field 'member': no member 'x.utx' in the archive"):
        list(zip_member_lines(archive, "x.utx"))
    with pytest.raises(InputError, match=r"bad.utx:1: not UTF-8 text"):
        list(zip_member_lines(archive, "bad.utx"))
    with pytest.raises(InputError, match=r"medutx.zip:1: expected 'src<TAB>tgt"):
        list(read_utx(numbered("gout 痛風\n"), archive))
    (tmp_path / "not.zip").write_bytes(b"plain text")
    with pytest.raises(InputError, match="not a zip archive"):
        list(zip_member_lines(tmp_path / "not.zip", "x"))


# ------------------------------------------------------------------------------ normalising


def test_russian_mentions_meet_at_their_lemmas_and_keep_the_nominative():
    lemma = lemmatizer("pymorphy3", "ru")
    assert mention_key("сахарным диабетом", lemma) == mention_key("Сахарный диабет", lemma) == "сахарный диабет"
    assert best_form({"сахарным диабетом": 3, "сахарный диабет": 1}, lemma) == "сахарный диабет"
    assert mention_key("Ёлка", lambda w: w) == "елка"
    assert written_form("Traitement") == "traitement"
    assert written_form("maladie de Crohn") == "maladie de Crohn"
    assert written_form("ЛЖ") == "ЛЖ"


# ------------------------------------------------------------------------------ the rules


def concept(sty: str = "T047", en: tuple[str, ...] = (), defs: dict | None = None) -> dict:
    c = ds.new_concept()
    c["sty"] = sty
    for i, name in enumerate(en):
        c["names"]["en"].append(("DO", "PT" if i == 0 else "SY", name))
    c["defs"].update(defs or {})
    return c


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_every_row_is_named_or_dropped_by_its_reason(tmp_path):
    concepts = {"C0011849": concept(en=("diabetes mellitus",), defs={"DO": "A disease of glucose."}),
                "C0018099": concept(en=("gout",))}
    wiki = write(tmp_path, "wd.csv", "umls_id,en_label,category_en,en_description\n"
                 "C0004057,aspirin,medication,a salicylate drug\n"  # a new concept, with a description
                 "C0004057,Aspirin,medication,\n"  # its duplicate (case folded)
                 "C0018099,gout,disease,a form of arthritis\n"  # DO's own name: a duplicate; DO has no definition
                 "C0011849,diabetes mellitus,disease,metabolic disease\n"  # DO's definition stays
                 ",no cui,disease,\n"
                 "C123,bad cui,disease,\n"
                 "C0000001,an unknown kind,galaxy,\n"  # a new concept of a label the config does not map
                 "C0000002,cold,symptom,\n"  # "cold" names two concepts: neither
                 "C0000003,cold,disease,\n")
    nerel = write(tmp_path, "ru_train.tsv", "document_id\ttext\tentity_type\tspans\tUMLS_CUI\n"
                  "d1\tсахарным диабетом\tDISO\t1-2\tC0011849\n"
                  "d1\tсахарный диабет\tDISO\t1-2\tC0011849\n"
                  "d2\tаспирина\tCHEM\t1-2\tC0004057\n"
                  "d3\tкровь\tANATOMY\t1-2\tC0005767\n"  # a new concept nobody names in English
                  "d4\tгпб\tDISO\t1-2\tCUILESS\n"
                  "d5\t12\tDISO\t1-2\tC0018099\n"  # no letter
                  "d6\tподагра\tDISO\t1-2\tC0018099\n"
                  "d6\tподагра\tDISO\t1-2\tC0018099\n"
                  "d6\tподагра\tDISO\t1-2\tC0018099\n"
                  "d6\tподагры\tDISO\t1-2\tC0011849\n")  # 3 of 4 gout: below 0.8, so "подагра" names neither
    glossary = write(tmp_path, "en_fr.tsv", " 1 aspirin\taspirine\t\n"
                     " 1 Diabetes  mellitus\tdiabète sucré\t\n"
                     " 1 gout\tgoutte\t\n"
                     " 1 gout\tgoutte\t\n"  # a repeat
                     " 1 cold\trhume\t\n"  # English "cold" was dropped: no concept has it
                     " 1 ASPIRIN\tASPIRIN\t\n"  # untranslated
                     " 1 aspirine\tgoutte\t\n")  # English "aspirine" names nothing: not found
    lists = [
        {"path": wiki, "format": "delimited", "lang": "en", "sab": "WIKIDATA", "licence": "cc0-1.0", "name_column": "en_label",
         "cui_column": "umls_id", "label_column": "category_en", "description_column": "en_description",
         "types": {"medication": "T121", "disease": "T047", "symptom": "T184"}},
        {"path": nerel, "format": "delimited", "delimiter": "\t", "text": "mentions", "lang": "ru", "sab": "NERELBIO",
         "licence": "unknown", "name_column": "text", "cui_column": "UMLS_CUI", "label_column": "entity_type",
         "types": {"DISO": "T047", "ANATOMY": "T023", "CHEM": "T121"}, "majority": 0.8},
    ]
    glossaries = [{"path": glossary, "format": "glossary", "lang": "fr", "sab": "MESPENFRE", "licence": "cc-by-4.0"}]
    report = add_name_lists(concepts, {}, lists, glossaries, {"en", "ru", "fr"}, {"ru": "pymorphy3"})
    assert report == {
        "WIKIDATA": {"files": 1, "lang": "en", "kind": "name_list", "format": "delimited", "rows_read": 9, "names_added": 1,
                     "concepts_named": 1, "concepts_created": 1, "definitions_given": 2,
                     "dropped": {"no_cui": 1, "malformed_cui": 1, "unmapped_label": 1, "ambiguous_name": 2, "duplicate": 3}},
        "NERELBIO": {"files": 1, "lang": "ru", "kind": "name_list", "format": "delimited", "rows_read": 10, "names_added": 2,
                     "concepts_named": 2, "concepts_created": 0, "definitions_given": 0,
                     "dropped": {"no_cui": 1, "no_name": 1, "ambiguous_name": 4, "duplicate": 1, "no_english_name": 1}},
        "MESPENFRE": {"files": 1, "lang": "fr", "kind": "glossary", "format": "glossary", "rows_read": 7, "names_added": 3,
                      "concepts_named": 3, "concepts_created": 0, "definitions_given": 0,
                      "dropped": {"untranslated": 1, "no_english_match": 2, "duplicate": 1}},
    }
    for r in report.values():  # every row read is named or dropped
        assert r["rows_read"] == r["names_added"] + sum(r["dropped"].values())
    assert sorted(concepts) == ["C0004057", "C0011849", "C0018099"]  # кровь's concept has no English name: not created
    # the Russian mention "аспирина" is written in the nominative
    assert dict(concepts["C0004057"]["names"]) == {"en": [("WIKIDATA", "PT", "aspirin")], "ru": [("NERELBIO", "PT", "аспирин")],
                                                   "fr": [("MESPENFRE", "PT", "aspirine")]}
    assert concepts["C0004057"]["sty"] == "T121" and concepts["C0004057"]["parents"] == set()
    assert concepts["C0011849"]["names"]["ru"] == [("NERELBIO", "PT", "сахарный диабет")]
    assert concepts["C0011849"]["names"]["fr"] == [("MESPENFRE", "PT", "diabète sucré")]
    # a description defines a concept without a better definition, under its source's SAB
    assert concepts["C0004057"]["defs"] == {"WIKIDATA": "a salicylate drug"}
    assert concepts["C0018099"]["defs"] == {"WIKIDATA": "a form of arthritis"}
    assert concepts["C0011849"]["defs"] == {"DO": "A disease of glucose."}


def test_a_glossary_term_reaching_two_concepts_is_dropped(tmp_path):
    concepts = {"C1": concept(en=("heart attack",)), "C2": concept(en=("myocardial infarction", "MI")), "C3": concept(en=("mi",))}
    concepts = {f"C000000{k[-1]}": v for k, v in concepts.items()}
    g = write(tmp_path, "g.tsv", " 1 heart attack\tinfarctus\t\n 1 myocardial infarction\tinfarctus\t\n 1 MI\tIDM\t\n")
    report = add_name_lists(concepts, {}, [], [{"path": g, "format": "glossary", "lang": "fr", "sab": "GLOSS", "licence": "mit"}], {"fr"})
    assert report["GLOSS"]["dropped"] == {"ambiguous_term": 2, "ambiguous_english": 1}
    assert all("fr" not in c["names"] for c in concepts.values())


def test_do_translations_reach_concepts_through_doids(tmp_path):
    head = "source_id\tpredicate\tsource_text\ttranslation_text\ttranslator\tsource_lang\ttranslation_lang\tstatus\n"
    t = write(tmp_path, "tr/doid-es.tsv", head
              + "DOID:1\trdfs:label\tgout\tgota\tX\ten\tes\tfinal\n"
              + "DOID:1\tIAO:0000115\ta disease\tuna enfermedad\tX\ten\tes\tfinal\n"
              + "DOID:1\toboInOwl:hasExactSynonym\tpodagra\tpodagra\tX\ten\tes\tdraft\n"
              + "DOID:9\trdfs:label\tnothing\tnada\tX\ten\tes\tfinal\n")
    concepts = {"C0018099": concept(en=("gout",))}
    report = add_name_lists(concepts, {"DOID:1": "C0018099"}, [{"path": str(tmp_path / "tr"), "include": ["doid-es*.tsv"],
                                                                "format": "do-translations", "lang": "es", "sab": "DOSPA",
                                                                "licence": "cc0-1.0", "statuses": ["final"]}], [], {"es"})
    assert report["DOSPA"]["dropped"] == {"other_predicate": 1, "other_status": 1, "no_concept": 1}
    assert concepts["C0018099"]["names"]["es"] == [("DOSPA", "PT", "gota")]


def test_held_out_splits_never_feed_the_vocabulary(tmp_path):
    from schemas.config import NameListConfig

    base = {"format": "brat", "lang": "fr", "sab": "QUAERO", "licence": "gfdl", "types": {"DISO": "T047"}}
    for path in ("corpus/test", "data/bionnel_ru_dev.tsv", "processed_data/test/0.concept"):
        with pytest.raises(ValueError, match="held-out split"):
            NameListConfig(path=path, **base)
    NameListConfig(path="output/by_category/medical_device.csv", **base)  # "device" is no split
    root = tmp_path / "data" / "corpus"  # (pytest's own folder is named after the test)
    write(root, "train/a.ann", BRAT)
    write(root, "test/b.ann", BRAT)
    assert list_files(NameListConfig(path=str(root), include=["train/*.ann"], **base)) == [root / "train/a.ann"]
    with pytest.raises(InputError, match="test/b.ann: field 'vocabulary.name_lists.include': names a held-out split"):
        list_files(NameListConfig(path=str(root), include=["*/*.ann"], **base))
    with pytest.raises(ValueError, match="held-out split"):
        NameListConfig(path=str(root), include=["test/*.ann"], **base)


# ------------------------------------------------------------------------------ inputs, build id, licences


def test_every_vocabulary_block_file_is_a_pinned_input(tmp_path):
    from flows.inputs import input_files
    from tests.umls.test_code_names import write_build

    (tmp_path / "quaero" / "train").mkdir(parents=True)
    (tmp_path / "quaero" / "train" / "1.ann").write_text(BRAT, encoding="utf-8")
    (tmp_path / "g.tsv").write_text(" 1 gout\tgoutte\t\n", encoding="utf-8")
    extra = ('\n[[vocabulary.name_lists]]\npath = "quaero/train"\ninclude = ["*.ann"]\nformat = "brat"\nlang = "fr"\n'
             'sab = "QUAERO"\nlicence = "gfdl"\ntext = "mentions"\n[vocabulary.name_lists.types]\nDISO = "T047"\n'
             '\n[[vocabulary.glossaries]]\npath = "g.tsv"\nformat = "glossary"\nlang = "fr"\nsab = "GLOSS"\nlicence = "mit"\n')
    from tests.umls.test_code_names import CODE_NAMES_TOML

    cfg = write_build(tmp_path, extra=CODE_NAMES_TOML + extra)
    (tmp_path / "none.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    files = input_files(load_config(cfg))
    assert {k: v.name for k, v in files.items() if k in ("cie10-es.txt", "quaero/train/1.ann", "g.tsv")} == {
        "cie10-es.txt": "cie10-es.txt", "quaero/train/1.ann": "1.ann", "g.tsv": "g.tsv"}


def test_build_id_follows_a_vocabulary_list(tmp_path):
    """An edited code-keyed list rebuilds as a new release, not as "unchanged"."""
    from flows.inputs import input_files
    from schemas.parameters import WriteParameters
    from tasks.release.stage import _build_id
    from tests.umls.test_code_names import write_build

    cfg = write_build(tmp_path)
    (tmp_path / "none.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")

    def build_id() -> str:
        loaded = load_config(cfg)
        return _build_id(WriteParameters(version="0.0.1", release_root=tmp_path / "r", existed_at_start=False, base=None,
                                         languages=["en", "es"], dev_fraction=0.0, quotas={"xqa": 1, "evidence": 1, "cd": 1},
                                         allow_empty_cells=False, empty_cell_blame="x", config_dump=loaded.config.model_dump(mode="json"),
                                         inputs=input_files(loaded), manifest_languages={}, vocabulary_dir=tmp_path / "data",
                                         code_name_srl={}))

    before = build_id()
    assert build_id() == before
    (tmp_path / "cie10-es.txt").write_text((tmp_path / "cie10-es.txt").read_text(encoding="utf-8").replace("brillante", "brillosa"),
                                           encoding="utf-8")
    assert build_id() != before


def test_a_sab_the_licence_table_does_not_know_is_unknown_outside_umls():
    from tasks.release.licences import licence_rows, vocabulary_licence

    assert vocabulary_licence("NEWLIST", 0, {}, umls=False)[1].ids == ("unknown",)
    assert vocabulary_licence("NEWLIST", 0, {}, umls=True)[1].text.startswith("UMLS Metathesaurus License Agreement")
    assert vocabulary_licence("NEWLIST", 0, {"NEWLIST": "mit"}, umls=False)[1].ids == ("mit",)
    assert vocabulary_licence("QUAERO", 0, {}, umls=False)[1].ids == ("gfdl",)
    rows = licence_rows({"vocabulary": {"format": "obo", "name_lists": [{"sab": "MINE", "licence": "cc-by-4.0"}]}},
                        {"DO": 0, "MINE": 0, "ODD": 0})
    assert {r["source"]: r["licence"].ids for r in rows} == {"vocabulary: DO": ("cc0-1.0", "cc-by-3.0"),
                                                              "vocabulary: MINE": ("cc-by-4.0",), "vocabulary: ODD": ("unknown",)}
    assert {r["source"]: r["use"] for r in rows}["vocabulary: MINE"] == "concept names and the concepts it adds (cd corpus and queries)"


# ------------------------------------------------------------------------------ real data


@pytest.mark.shared
@pytest.mark.slow
def test_real_lists_of_shared_real(real_vocabulary):
    from schemas.parameters import VocabularyParameters

    loaded = load_config(ROOT / "configs" / "shared-real.toml")
    p = VocabularyParameters.derive(loaded, None)
    # the build reads the run's shared vocabulary (built by `mmedbench ground`) with the very same
    # arguments, its output folder aside
    build = [p.format, Path(p.rrf_dir), p.lat_to_lang, p.max_srl, p.preferred_en, p.roots, list(p.code_names),
             list(p.name_lists), list(p.glossaries), dict(p.morphology)]
    shared = real_vocabulary["arguments"]
    assert shared[:2] + shared[3:] == json.loads(json.dumps(build, default=str))
    paths = real_vocabulary["paths"]
    report = json.loads(Path(paths["name_lists_report"]).read_text(encoding="utf-8"))
    assert {sab: (r["rows_read"], r["names_added"]) for sab, r in report.items()} == REAL_COUNTS
    for r in report.values():
        assert r["rows_read"] == r["names_added"] + sum(r["dropped"].values())
    concepts = pq.read_table(paths["concepts"], columns=["cui", "group", "definition_source"]).to_pylist()
    assert sum(c["definition_source"] == "WIKIDATA" for c in concepts) == report["WIKIDATA"]["definitions_given"]


# (rows read, names added) per source, configs/shared-real.toml on ../shared/data as of 2026-11-28
REAL_COUNTS = {"DOSPA": (8118, 2608), "MEDUTX": (27123, 1523), "MESPENCHI": (79809, 1699), "MESPENFRE": (6576, 407),
               "MESPENJPN": (17932, 1088), "MESPENRUS": (4374, 45), "NERELBIO": (24255, 2014), "NERELBIOEN": (2690, 1224),
               "QUAERO": (5689, 581), "RUCCON": (11220, 909), "WIKIDATA": (108075, 12280), "WIKIDATAJA": (108075, 2845)}


def test_the_cli_grounds_with_a_configured_name_list(tmp_path):
    """`mmedbench ground` reads the name lists as the build does: a French mention list's name
    of an existing concept is found in French text."""
    import subprocess
    import sys

    from tests.umls.test_code_names import write_build

    (tmp_path / "corpus" / "train").mkdir(parents=True)
    (tmp_path / "corpus" / "train" / "1.ann").write_text("T1\tDISO 0 15\tFièvre lumineuse\n#1\tAnnotatorNotes T1\tC9000001\n",
                                                        encoding="utf-8")
    extra = ('\n[[vocabulary.name_lists]]\npath = "corpus/train"\ninclude = ["*.ann"]\nformat = "brat"\nlang = "fr"\n'
             'sab = "QUAERO"\nlicence = "gfdl"\ntext = "mentions"\n[vocabulary.name_lists.types]\nDISO = "T047"\n')
    cfg = write_build(tmp_path, extra=extra)
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('languages = ["en", "es"]', 'languages = ["en", "fr"]'), encoding="utf-8")
    out = subprocess.run([str(Path(sys.executable).with_name("mmedbench")), "ground", "--lang", "fr", "--config", str(cfg)],
                         input="Il souffre d'une fièvre lumineuse depuis hier.\n", capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [(m["text"], m["cui"]) for m in json.loads(out.stdout)["mentions"]] == [("fièvre lumineuse", "C9000001")]
