"""benchmarks/grounding_eval.py: metrics on hand-made gold/predictions (exact numbers), gold
loaders on invented snippets, the exact-match baseline, and a real-data smoke run that skips
when ../shared/data is absent."""
from __future__ import annotations

import importlib.util
import json
import math
import sys

import pytest

from tests.conftest import ROOT, require_shared

_spec = importlib.util.spec_from_file_location("grounding_eval", ROOT / "benchmarks" / "grounding_eval.py")
ge = importlib.util.module_from_spec(_spec)
sys.modules["grounding_eval"] = ge  # dataclasses look their module up there
_spec.loader.exec_module(ge)

GoldMention, Pred, Counts = ge.GoldMention, ge.Pred, ge.Counts


def gm(start, end, *cuis):
    return GoldMention(start, end, frozenset(cuis))


# ----------------------------------------------------------------------------- prf
def test_prf_exact_numbers():
    assert ge.prf(3, 1, 2) == (0.75, 0.6, pytest.approx(2 * 0.75 * 0.6 / 1.35))
    assert ge.prf(0, 0, 0) == (0.0, 0.0, 0.0)
    assert ge.prf(0, 5, 0) == (0.0, 0.0, 0.0)
    assert ge.prf(4, 0, 0) == (1.0, 1.0, 1.0)


def test_counts_add_up():
    c = Counts(tp=1, fp=2, fn=3, ignored=4, gold_oov=5, strict_tp=1, strict_fp=0, strict_fn=1)
    c += Counts(tp=10, fp=20, fn=30)
    assert (c.tp, c.fp, c.fn, c.ignored, c.gold_oov, c.gold) == (11, 22, 33, 4, 5, 44)


# ----------------------------------------------------------------------------- span scoring
VOCAB = {"C1", "C2", "C3"}


def test_overlap_match_with_right_cui_is_a_true_positive_and_exact_span_is_strict():
    gold = [gm(0, 10, "C1"), gm(20, 30, "C2")]
    preds = [Pred(0, 10, "C1"), Pred(22, 30, "C2")]  # second: overlaps, not identical
    c = ge.score_spans(gold, preds, VOCAB)
    assert (c.tp, c.fp, c.fn, c.ignored) == (2, 0, 0, 0)
    assert (c.strict_tp, c.strict_fp, c.strict_fn) == (1, 1, 1)


def test_wrong_cui_on_a_gold_span_is_both_a_false_positive_and_a_miss():
    c = ge.score_spans([gm(0, 10, "C1")], [Pred(0, 10, "C2")], VOCAB)
    assert (c.tp, c.fp, c.fn) == (0, 1, 1)


def test_out_of_vocabulary_gold_is_not_counted_and_predictions_on_it_are_ignored():
    gold = [gm(0, 10, "C1"), gm(20, 30, "C_OOV"), gm(40, 50, "C_OOV", "C3")]  # last: one CUI known
    preds = [Pred(0, 10, "C1"), Pred(25, 28, "C2"), Pred(60, 65, "C3")]
    c = ge.score_spans(gold, preds, VOCAB)
    assert c.gold_oov == 1
    assert (c.tp, c.fp, c.fn, c.ignored) == (1, 1, 1, 1)  # fp: the unannotated 60-65; fn: 40-50
    p, r, f = ge.prf(c.tp, c.fp, c.fn)
    assert (p, r) == (0.5, 0.5) and f == 0.5


def test_composite_gold_accepts_any_of_its_cuis_but_matches_once():
    gold = [gm(0, 20, "C1", "C2")]
    preds = [Pred(0, 8, "C1"), Pred(12, 20, "C2")]
    c = ge.score_spans(gold, preds, VOCAB)
    assert (c.tp, c.fp, c.fn) == (1, 1, 0)


def test_one_to_one_matching_prefers_the_largest_overlap():
    gold = [gm(0, 10, "C1"), gm(8, 20, "C1")]
    preds = [Pred(0, 9, "C1")]
    c = ge.score_spans(gold, preds, VOCAB)
    assert (c.tp, c.fp, c.fn) == (1, 0, 1)
    assert ge._match(gold, [Pred(9, 20, "C1"), Pred(0, 10, "C1")], exact=False) == {0, 1}


def test_no_gold_no_predictions():
    assert ge.score_spans([], [], VOCAB) == Counts()


# ----------------------------------------------------------------------------- tag scoring
def test_tag_scoring_concept_level():
    text = "患者发热伴咳嗽，无腹泻。慢性咳嗽。"
    tags = [("发热", frozenset({"C1"})), ("咳嗽", frozenset({"C2"})), ("腹泻", frozenset({"C3"})),
            ("慢性咳嗽", frozenset())]  # out of vocabulary
    preds = [Pred(2, 4, "C1"), Pred(5, 7, "C2"), Pred(12, 14, "C9"), Pred(14, 16, "C2"), Pred(0, 2, "C8")]
    c = ge.score_tags(text, tags, preds)
    # found: C1, C2 (twice, counted once); missed: C3; C9 lies inside the OOV tag "慢性咳嗽": ignored;
    # C8 is on untagged text: false positive
    assert (c.tp, c.fn, c.fp, c.ignored, c.gold_oov) == (2, 1, 1, 1, 1)


def test_tag_with_several_cuis_is_found_by_any_and_counted_once():
    tags = [("肝炎", frozenset({"C1", "C2"})), ("肝炎", frozenset({"C1", "C2"}))]
    c = ge.score_tags("慢性肝炎", tags, [Pred(2, 4, "C2")])
    assert (c.tp, c.fn, c.fp) == (1, 0, 0)


def test_prediction_on_oov_tag_but_also_elsewhere_counts():
    tags = [("慢性咳嗽", frozenset())]
    text = "慢性咳嗽，咳嗽"
    c = ge.score_tags(text, tags, [Pred(2, 4, "C2"), Pred(5, 7, "C2")])
    assert (c.tp, c.fp, c.ignored) == (0, 1, 0)


def test_tag_occurrences():
    assert ge.tag_occurrences("咳嗽咳嗽，咳", "咳嗽") == [(0, 2), (2, 4)]
    assert ge.tag_occurrences("abc", "") == []


# ----------------------------------------------------------------------------- loaders
XREFS = '\t'.join(['id', 'label', 'xref']) + "\n" + "\n".join([
    '"DOID:1"\t"made-up disease one"\t"MESH:D000001"',
    '"DOID:1"\t"made-up disease one"\t"UMLS_CUI:C0000001"',
    '"DOID:2"\t"made-up disease two"\t"MIM:100100"',
    '"DOID:2"\t"made-up disease two"\t"UMLS_CUI:C0000002"',
    '"DOID:2"\t"made-up disease two"\t"UMLS_CUI:C0000022"',
    '"DOID:3"\t"no cui"\t"MESH:D000003"',
]) + "\n"

TITLE = "Frobnitz syndrome in two families."
ABSTRACT = "Frobnitz syndrome (FS) and glorp deficiency were seen; FS was mild."
PUBTATOR = "\n".join([
    f"123|t|{TITLE}",
    f"123|a|{ABSTRACT}",
    f"123\t0\t17\tFrobnitz syndrome\tSpecificDisease\tD000001",
    f"123\t{len(TITLE) + 1 + 19}\t{len(TITLE) + 1 + 21}\tFS\tSpecificDisease\tD000001|OMIM:100100",
    f"123\t{len(TITLE) + 1 + 27}\t{len(TITLE) + 1 + 43}\tglorp deficiency\tSpecificDisease\tD000003",
    "",
    "456|t|Nothing here.",
    "456|a|No mentions at all.",
    "",
])


def test_do_xrefs_map_mesh_and_omim_to_cuis(tmp_path):
    (tmp_path / "x.tsv").write_text(XREFS, encoding="utf-8")
    x = ge.load_do_xrefs(tmp_path / "x.tsv")
    assert x == {"MESH:D000001": frozenset({"C0000001"}), "MIM:100100": frozenset({"C0000002", "C0000022"})}
    assert ge.ncbi_ids_to_cuis("D000001|OMIM:100100", x) == frozenset({"C0000001", "C0000002", "C0000022"})
    assert ge.ncbi_ids_to_cuis("D000001+D999999", x) == frozenset({"C0000001"})
    assert ge.ncbi_ids_to_cuis("D000003", x) == frozenset()
    assert ge.ncbi_ids_to_cuis("-1", x) == frozenset()


def test_pubtator_loader(tmp_path):
    (tmp_path / "x.tsv").write_text(XREFS, encoding="utf-8")
    (tmp_path / "c.txt").write_text(PUBTATOR, encoding="utf-8")
    docs = ge.load_pubtator(tmp_path / "c.txt", ge.load_do_xrefs(tmp_path / "x.tsv"))
    assert [d.doc_id for d in docs] == ["123", "456"]
    d = docs[0]
    assert d.text == TITLE + " " + ABSTRACT
    assert [d.text[m.start:m.end] for m in d.mentions] == ["Frobnitz syndrome", "FS", "glorp deficiency"]
    assert [sorted(m.cuis) for m in d.mentions] == [["C0000001"], ["C0000001", "C0000002", "C0000022"], []]
    assert docs[1].mentions == []


def test_pubtator_loader_rejects_offsets_that_do_not_index_the_text(tmp_path):
    bad = PUBTATOR.replace("123\t0\t17\t", "123\t1\t18\t")
    (tmp_path / "c.txt").write_text(bad, encoding="utf-8")
    with pytest.raises(ValueError, match="offsets 1-18"):
        ge.load_pubtator(tmp_path / "c.txt", {})


def test_brat_loader_with_discontinuous_span(tmp_path):
    text = "Numbness of the skin and mild fever.\n"
    (tmp_path / "d1.txt").write_text(text, encoding="utf-8")
    (tmp_path / "d1.ann").write_text(
        "T1\tC0000010 0 8;16 20\tNumbness skin\n"
        "#1\tAnnotatorNotes T1\t\"C0000010\", \"made up\", \"Finding\" ,\"DISO\"\n"
        "T2\tC0000011 30 35\tfever\n", encoding="utf-8")
    (tmp_path / "d2.txt").write_text("No annotation file.\n", encoding="utf-8")
    docs = ge.load_brat(tmp_path)
    assert [d.doc_id for d in docs] == ["d1", "d2"]
    assert [(m.start, m.end, sorted(m.cuis)) for m in docs[0].mentions] == [(0, 20, ["C0000010"]), (30, 35, ["C0000011"])]
    assert docs[1].mentions == []


def test_mantra_loader_walks_corpus_folders(tmp_path):
    for sub in ("EMEA_x", "Medline_x"):
        folder = tmp_path / "Mantra-GSC" / "French" / sub
        folder.mkdir(parents=True)
        (folder / "a.txt").write_text("fièvre\n", encoding="utf-8")
        (folder / "a.ann").write_text("T1\tC0000012 0 6\tfièvre\n", encoding="utf-8")
    docs = ge.load_mantra(tmp_path, "fr")
    assert [d.doc_id for d in docs] == ["EMEA_x/a", "Medline_x/a"]


def test_cnmleqa_loader(tmp_path):
    items = [
        {"id": "q1", "question": "患者发热三天，最可能的诊断是", "opa": "肺炎", "opb": "感冒", "answer": "opa",
         "disease or diagnosis": "肺炎", "surgery": "无", "medication": "无", "laboratory examination": "无",
         "symptom or sign": "发热, 咳嗽，发热"},
        {"id": "q2", "question": "无标签的问题", "answer": "opc", "opc": "答案",
         "disease or diagnosis": math.nan, "symptom or sign": "无"},  # the real file has NaN fields
    ]
    (tmp_path / "q.json").write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    docs = ge.load_cnmleqa(tmp_path / "q.json")
    assert docs[0].text == "患者发热三天，最可能的诊断是\n肺炎"
    assert docs[0].tags == ["肺炎", "发热", "咳嗽"]  # in field order, deduplicated, "无" dropped
    assert docs[1].text == "无标签的问题\n答案" and docs[1].tags == []
    assert ge.split_tags("a、b；c") == ["a", "b", "c"]


def test_subsample_is_deterministic_and_by_id():
    docs = [ge.GoldDoc(f"doc{i}", "") for i in range(200)]
    a = ge.subsample(docs, 50)
    assert [d.doc_id for d in a] == [d.doc_id for d in ge.subsample(list(reversed(docs)), 50)][::-1]
    assert 30 <= len(a) <= 70
    assert ge.subsample(docs, None) == docs and ge.subsample(docs, 500) == docs


# ----------------------------------------------------------------------------- baseline
def test_exact_baseline_latin():
    b = ge.ExactBaseline([("Heart failure", "C1", True), ("heart", "C2", True), ("pain", "C3", True),
                          ("Pain", "C4", False), ("failure", "C5", True)], cjk=False)
    text = "HEART FAILURE and pain in Spain; hearts."
    got = [(text[p.start:p.end], p.cui) for p in b.match(text)]
    # longest first, case-insensitive; not inside words ("Spain", "hearts"); preferred atom wins
    assert got == [("HEART FAILURE", "C1"), ("pain", "C3")]


def test_exact_baseline_cjk_matches_inside_words():
    b = ge.ExactBaseline([("糖尿病", "C1", True), ("糖尿病肾病", "C2", True)], cjk=True)
    assert [(p.start, p.end, p.cui) for p in b.match("2型糖尿病肾病和糖尿病")] == [(2, 7, "C2"), (8, 11, "C1")]


# ----------------------------------------------------------------------------- real data
def test_real_gold_sets_load():
    data = require_shared("ncbi-disease")
    xrefs = ge.load_do_xrefs(require_shared("disease-ontology", "allXREFinDO.tsv"))
    test = ge.load_pubtator(data / "NCBItestset_corpus.txt", xrefs)
    assert len(test) == 100 and sum(len(d.mentions) for d in test) == 960
    assert sum(1 for d in test for m in d.mentions if m.cuis) > 600  # most map to a CUI through DO
    fr = ge.load_mantra(require_shared("mantra-gsc"), "fr")
    assert len(fr) == 250 and sum(len(d.mentions) for d in fr) == 1052
    qa = ge.load_cnmleqa(require_shared("qa", "cnmleqa", "CNMLEQA-3k.json"))
    assert len(qa) == 2949 and all(d.text for d in qa)


@pytest.mark.slow
def test_real_data_smoke_run(tmp_path, capsys):
    require_shared("hpo", "hp.obo")
    rc = ge.main(["--langs", "fr,zh", "--max-docs", "60", "--work-dir", str(tmp_path), "--no-write"])
    assert rc == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| fr ") or line.startswith("| zh ")}
    assert set(rows) == {"fr", "zh"}
    for line in rows.values():
        grounder_f1 = float(line.split("|")[2].split("**")[1])
        baseline_f1 = float(line.split("|")[3].split("**")[1])
        assert 0.3 < grounder_f1 <= 1.0 and 0.0 < baseline_f1 <= 1.0
    assert "| cnmleqa | zh |" in out and "| mantra-gsc | fr |" in out
