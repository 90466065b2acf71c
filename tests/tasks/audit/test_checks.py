"""tasks.audit.checks on small crafted releases: each check passes a sound release and names
exactly what is wrong in a broken one; caps, order and counts of the failures."""
from __future__ import annotations

import json
from pathlib import Path

from common.text import char_shingles, jaccard
from tasks.audit import checks as audit
from tasks.release.writers import file_entries
from tests.tasks.allocation.test_allocator import _name

EN = {"code": "en", "name": "English", "scripts": ["Latin"], "detector_codes": ["en"], "umls_lat": "ENG",
      "grounder": "quickumls", "shingle_n": 5}


def _q(qid: str, text: str, cuis: list[str], lang: str = "en", pivot: str | None = None) -> dict:
    return {"_id": qid, "text": text, "lang": lang, "cuis": cuis, "pivot_text": pivot if pivot is not None else text,
            "provenance": "native", "split": "test"}


def _write_release(root: Path, cells: dict[str, dict], sets: list[dict] | None = None, srl: dict | None = None,
                   counts: dict | None = None, config: dict | None = None) -> Path:
    """A small release folder in the published format: cells {"task/lang": {"corpus": [...],
    "queries": [...], "qrels": [(q, d, score), ...]}}, confusion sets, a manifest that lists
    every file with its hash and every cell with its counts (or `counts` to override)."""
    def jsonl(path: Path, rows: list[dict]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")

    for cell, c in cells.items():
        d = root / cell
        jsonl(d / "corpus.jsonl", c["corpus"])
        jsonl(d / "queries.jsonl", c["queries"])
        (d / "qrels").mkdir(parents=True, exist_ok=True)
        (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{doc}\t{s}\n" for q, doc, s in c["qrels"]))
    jsonl(root / "cd" / "confusion_sets.jsonl", sets or [])
    manifest = {
        "version": "0.0.1", "build_id": "0" * 64, "code_version": "test", "inputs": {}, "dropped": {},
        "config": {"languages": ["en"], "seed": 1, "dedup": {"threshold": 0.7, "num_perm": 128}, "vocabulary": {"max_srl": 0},
                   **(config or {})},
        "languages": {"en": EN}, "sources_srl": {"DO": 0} if srl is None else srl,
        "cells": counts or {cell: {"queries": len(c["queries"]), "documents": len(c["corpus"]), "qrels": len(c["qrels"])}
                            for cell, c in cells.items()},
        "files": file_entries(root),
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")  # keys in the order given
    return root


def _cell(n: int = 2, prefix: str = "x", scores=None) -> dict:
    queries = [_q(f"{prefix}q{i}", _name(f"{prefix}q{i}"), [f"C00000{i:02d}"]) for i in range(n)]
    corpus = [{"_id": f"{prefix}d{i}", "title": "", "text": _name(f"{prefix}d{i}")} for i in range(n)]
    qrels = [(f"{prefix}q{i}", f"{prefix}d{i}", (scores or [1] * n)[i]) for i in range(n)]
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


def _failures(check) -> list[str]:
    return check.failures if not check.passed else []


def test_a_crafted_release_passes_the_structural_checks(tmp_path):
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell()}))
    for check in (audit.check_hashes, audit.check_schemas, audit.check_concept_overlap, audit.check_qrels,
                  audit.check_counts, audit.check_licence, audit.check_confusion_consistency):
        assert check(rel).passed, (check.__name__, check(rel).failures)
    assert audit.check_query_overlap(rel, {"en": audit.Language.model_validate(EN)}, {"threshold": 0.7, "num_perm": 128}, 1).passed


def test_a_query_whose_only_qrel_scores_zero_has_no_relevant_document(tmp_path):
    """qrels `score > 0`: a 0 is a judged non-relevant document, not an answer."""
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell(3, scores=[1, 0, 2])}))
    assert _failures(audit.check_qrels(rel)) == ["xqa/en: query 'xq1' has no relevant document"]


def test_qrels_naming_missing_queries_or_documents(tmp_path):
    cell = _cell(2)
    cell["qrels"] = [("xq0", "xd0", 1), ("xq1", "nope", 1), ("ghost", "xd1", 1)]
    fails = _failures(audit.check_qrels(audit.Release(_write_release(tmp_path, {"xqa/en": cell}))))
    assert fails == ["xqa/en/qrels/test.tsv:3: document 'nope' not in corpus.jsonl",
                     "xqa/en/qrels/test.tsv:4: query 'ghost' not in queries.jsonl"]


def test_a_concept_in_two_cells_and_a_query_in_two_cells(tmp_path):
    a, b = _cell(2, "a"), _cell(2, "b")
    b["queries"][1]["cuis"] = ["C0000099", "C0000000"]  # a's first concept
    b["queries"][0]["_id"] = "aq1"  # a's second query id
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": a, "evidence/en": b}))
    assert _failures(audit.check_concept_overlap(rel)) == ["C0000000: in cells evidence/en and xqa/en (key concept)"]
    en = {"en": audit.Language.model_validate(EN)}
    fails = _failures(audit.check_query_overlap(rel, en, {"threshold": 0.7, "num_perm": 128}, 1))
    assert fails == ["aq1: query id in evidence/en and xqa/en"]


def test_concept_overlap_reports_the_declared_scope_and_the_other_one(tmp_path):
    rel = audit.Release(_write_release(tmp_path / "a", {"xqa/en": _cell(2)}))
    assert audit.check_concept_overlap(rel).detail == "scope key: 2 concepts, each in one cell; scope all: 0 of 2 concepts in two or more cells"
    rel = audit.Release(_write_release(tmp_path / "b", {"xqa/en": _cell(2)}, config={"overlap": {"scope": "all"}}))
    assert audit.check_concept_overlap(rel).detail == "scope all: 2 concepts, each in one cell; scope key: 0 of 2 concepts in two or more cells"


def test_exact_and_near_duplicate_queries(tmp_path):
    a = _cell(3, "a")
    a["queries"][1]["text"] = a["queries"][1]["pivot_text"] = "  " + a["queries"][0]["text"].upper()  # same after normalising
    a["queries"][2]["text"] = a["queries"][2]["pivot_text"] = a["queries"][0]["text"][:-1] + "x"  # a one-character edit
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": a}))
    fails = _failures(audit.check_query_overlap(rel, {"en": audit.Language.model_validate(EN)}, {"threshold": 0.7, "num_perm": 128}, 1))
    assert fails[:2] == ["aq1 (xqa/en): same text:en text as aq0", "aq1 (xqa/en): same pivot text as aq0"]
    assert fails[2].startswith("aq2 (xqa/en): near-duplicate of aq0 (text:en, jaccard=0.")
    assert fails[3].startswith("aq2 (xqa/en): near-duplicate of aq0 (pivot, jaccard=0.") and len(fails) == 4


def test_counts_hashes_schemas_and_licence_failures(tmp_path):
    cell = _cell(2)
    root = _write_release(tmp_path, {"xqa/en": cell}, srl={"DO": 0, "MSH": 3},
                          counts={"xqa/en": {"queries": 3, "documents": 2, "qrels": 2}})
    rel = audit.Release(root)
    assert _failures(audit.check_counts(rel)) == ["xqa/en: 2 queries, manifest says 3"]
    assert _failures(audit.check_licence(rel)) == ["source MSH has restriction level 3 > 0"]
    (root / "xqa" / "en" / "corpus.jsonl").write_text('{"_id": "xd0", "title": "", "text": ""}\n')  # tampered, one row
    (root / "extra.txt").write_text("x")
    rel = audit.Release(root)
    assert _failures(audit.check_hashes(rel)) == ["extra.txt: not listed in the manifest", "xqa/en/corpus.jsonl: sha256 differs from the manifest"]
    assert _failures(audit.check_schemas(rel)) == ["xqa/en/corpus.jsonl:1: field text: String should have at least 1 character"]
    assert "xqa/en/corpus.jsonl: 1 rows, manifest says 2" in _failures(audit.check_counts(rel))


def test_an_empty_cell_fails_unless_allowed(tmp_path):
    empty = {"corpus": [], "queries": [], "qrels": []}
    assert _failures(audit.check_counts(audit.Release(_write_release(tmp_path / "a", {"xqa/en": empty})))) == ["xqa/en: empty cell"]
    allowed = _write_release(tmp_path / "b", {"xqa/en": empty}, config={"allow_empty_cells": True})
    assert audit.check_counts(audit.Release(allowed)).passed
    assert _failures(audit.check_licence(audit.Release(_write_release(tmp_path / "c", {"xqa/en": _cell()}, srl={})))) == [
        "manifest lists no vocabulary sources (sources_srl)"]


# --- the audit's bookkeeping: caps, order, counts, first errors -------------------------------------


def test_a_check_caps_its_failures_and_counts_them_all(tmp_path):
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell(25, scores=[0] * 25)}))
    check = audit.check_qrels(rel)
    assert (check.passed, check.detail, len(check.failures)) == (False, "25 failure(s)", 20)
    assert check.failures == [f"xqa/en: query {q!r} has no relevant document" for q in sorted(f"xq{i}" for i in range(25))][:20]
    ok = audit.check_qrels(audit.Release(_write_release(tmp_path / "ok", {"xqa/en": _cell(2)})))
    assert (ok.passed, ok.detail, ok.failures) == (True, "every qrel resolves; every query has a relevant document", [])


def test_release_reads_cells_in_order_and_survives_missing_files(tmp_path):
    root = _write_release(tmp_path, {"xqa/en": _cell(2, "x"), "evidence/en": _cell(2, "e")})
    manifest = json.loads((root / "manifest.json").read_text())
    cells = manifest["cells"]
    manifest["cells"] = {"xqa/en": cells["xqa/en"], "evidence/en": cells["evidence/en"]}  # not in sorted order
    (root / "manifest.json").write_text(json.dumps(manifest))
    (root / "xqa" / "en" / "queries.jsonl").write_text('{"_id": "xq0", "text": ""}\n')
    (root / "evidence" / "en" / "queries.jsonl").unlink()
    rel = audit.Release(root)
    assert list(rel.cells) == ["evidence/en", "xqa/en"] and rel.cells["evidence/en"]["queries"] == []
    assert rel.errors == ["evidence/en/queries.jsonl: missing"]
    fails = audit.check_schemas(rel).failures
    assert fails[0] == "evidence/en/queries.jsonl: missing" and fails[1].startswith("xqa/en/queries.jsonl:1: field text")


def test_schemas_count_records_report_first_errors_and_malformed_qrels(tmp_path):
    cell = _cell(2)
    cell["qrels"] = [("xq0", "xd0", 1), ("xq1", "xd1", "x"), ("", "xd1", 1), ("xq1", "", 1)]
    root = _write_release(tmp_path, {"xqa/en": cell}, sets=[{"set_id": "s", "lang": "en", "tier": "extreme", "target_cui": "X1",
                                                           "distractor_cuis": []}])
    with (root / "xqa" / "en" / "qrels" / "test.tsv").open("a") as fh:
        fh.write("xq1\txd1\n")
    rel = audit.Release(root)
    valid_set = {"set_id": "s", "lang": "en", "tier": "easy", "target_cui": "C0000001", "distractor_cuis": ["C0000002"]}
    ok = _write_release(tmp_path / "ok", {"xqa/en": _cell(2)}, sets=[valid_set])
    assert audit.check_schemas(audit.Release(ok)).detail == "7 records valid"  # 2 docs, 2 queries, 2 qrels, 1 set
    assert audit.check_schemas(rel).failures == [
        "xqa/en/qrels/test.tsv:3: expected 'query-id<TAB>corpus-id<TAB>integer score'",
        "xqa/en/qrels/test.tsv:4: String should have at least 1 character",
        "xqa/en/qrels/test.tsv:5: String should have at least 1 character",
        "xqa/en/qrels/test.tsv:6: expected 'query-id<TAB>corpus-id<TAB>integer score'",
        "cd/confusion_sets.jsonl:1: field tier: Input should be 'easy', 'medium' or 'hard'",
    ]
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["code_version"], manifest["dropped"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    assert audit.check_schemas(audit.Release(root)).failures[0] == "manifest.json: field code_version: Field required"


def test_failures_are_listed_in_name_order(tmp_path):
    cell = _cell(6, scores=[0] * 6)
    root = _write_release(tmp_path, {"xqa/en": cell}, srl={"ZZ": 4, "AA": 3, "MM": 5})
    for name in ("zeta.txt", "alpha.txt", "mid.txt", "beta.txt"):
        (root / name).write_text("x")
    for name in ("corpus.jsonl", "queries.jsonl"):
        (root / "xqa" / "en" / name).write_text("")
    for name in ("z", "dev", "b"):  # read in name order, whatever order the folder lists them in
        (root / "xqa" / "en" / "qrels" / f"{name}.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n")
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = dict(reversed(list(manifest["files"].items())))  # listed in reverse name order
    (root / "manifest.json").write_text(json.dumps(manifest))
    rel = audit.Release(root)
    assert [q[0] for q in rel.cells["xqa/en"]["qrels"]] == [f"xqa/en/qrels/{n}.tsv" for n in ("b", "dev", "test", "test", "test",
                                                                                              "test", "test", "test", "z")]
    assert _failures(audit.check_hashes(rel)) == [
        "alpha.txt: not listed in the manifest", "beta.txt: not listed in the manifest", "mid.txt: not listed in the manifest",
        "xqa/en/qrels/b.tsv: not listed in the manifest", "xqa/en/qrels/dev.tsv: not listed in the manifest",
        "xqa/en/qrels/z.tsv: not listed in the manifest", "zeta.txt: not listed in the manifest",
        "xqa/en/corpus.jsonl: sha256 differs from the manifest", "xqa/en/queries.jsonl: sha256 differs from the manifest"]
    assert _failures(audit.check_counts(rel))[:2] == ["xqa/en/corpus.jsonl: 0 rows, manifest says 6",
                                                      "xqa/en/queries.jsonl: 0 rows, manifest says 6"]
    assert _failures(audit.check_licence(rel)) == ["source AA has restriction level 3 > 0", "source MM has restriction level 5 > 0",
                                                   "source ZZ has restriction level 4 > 0"]


def test_the_licence_level_defaults_to_zero(tmp_path):
    root = _write_release(tmp_path, {"xqa/en": _cell()}, srl={"DO": 0, "X": 1})
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["config"]["vocabulary"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    assert _failures(audit.check_licence(audit.Release(root))) == ["source X has restriction level 1 > 0"]


def test_queries_without_relevant_documents_are_listed_in_order(tmp_path):
    rel = audit.Release(_write_release(tmp_path, {"xqa/en": _cell(5, scores=[0, 1, 0, 0, -1])}))
    assert _failures(audit.check_qrels(rel)) == [f"xqa/en: query 'xq{i}' has no relevant document" for i in (0, 2, 3, 4)]


def test_query_overlap_of_a_language_outside_the_registry_uses_5_grams(tmp_path):
    """'xx' is not in the manifest's registry: its texts are compared on 5-grams. These two
    are near-duplicates on 5-grams (25/35) but not on 6-grams (23/35)."""
    a = "abcdefghijklmnopqrstuvwxyz01234567"
    b = a[:17] + "9" + a[18:]
    assert jaccard(char_shingles(a, 5), char_shingles(b, 5)) >= 0.7 > jaccard(char_shingles(a, 6), char_shingles(b, 6))
    cell = {"corpus": [{"_id": "d", "title": "", "text": "t"}],
            "queries": [_q("q1", a, ["C0000001"], "xx", _name("p1")), _q("q2", b, ["C0000002"], "xx", _name("p2"))], "qrels": []}
    rel = audit.Release(_write_release(tmp_path, {"xqa/xx": cell}))
    # seed 0: LSH proposes the pair (it may miss a pair this close to the threshold)
    fails = _failures(audit.check_query_overlap(rel, {"en": audit.Language.model_validate(EN)}, {"threshold": 0.7, "num_perm": 128}, 0))
    assert len(fails) == 1 and fails[0].startswith("q2 (xqa/xx): near-duplicate of q1 (text:xx")


def test_language_check_counts_queries_and_names_unknown_languages(tmp_path):
    cells = {"xqa/en": {"corpus": [], "queries": [_q("q1", "What is the first-line treatment of acute bronchitis in adults?", ["C1"])],
                        "qrels": []},
             "xqa/xx": {"corpus": [], "queries": [_q("q2", "anything", ["C2"], "xx")], "qrels": []}}
    rel = audit.Release(_write_release(tmp_path, cells))
    en = {"en": audit.Language.model_validate(EN)}
    check = audit.check_language(rel, en, "lingua-subset")
    assert check.failures == ["xqa/xx: language 'xx' not in the manifest's registry"]
    del rel.cells["xqa/xx"]
    check = audit.check_language(rel, en, "lingua-subset")
    assert (check.passed, check.detail) == (True, "1 queries in their cell's language and script")
