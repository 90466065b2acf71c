"""Every audit check can fail: tamper with a copy of the sample release, re-sign the
manifest (so only the targeted check trips), and expect exactly that check to fail."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.audit.stage import audit_release
from tasks.release.writers import file_entries

pytestmark = pytest.mark.slow


def _rows(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines()]


def _write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def _manifest(release: Path) -> dict:
    return json.loads((release / "manifest.json").read_text())


def _resign(release: Path, manifest: dict | None = None, recount: bool = True, derive: bool = True) -> None:
    """Re-sign the manifest; with `derive`, first re-derive the per-split parquet files from the
    (tampered) BEIR files, as a consistent forger would."""
    from tasks.release.hub import write_split_files

    m = manifest or _manifest(release)
    if derive:
        sets = _rows(release / "cd" / "confusion_sets.jsonl")
        for cell in m["cells"]:
            task, lang = cell.split("/")
            write_split_files(release / task / lang, task, [s for s in sets if s["lang"] == lang])
    m["files"] = file_entries(release)
    if recount:
        for cell in m["cells"]:
            task, lang = cell.split("/")
            d = release / task / lang
            m["cells"][cell]["queries"] = len(_rows(d / "queries.jsonl"))
            m["cells"][cell]["documents"] = len(_rows(d / "corpus.jsonl"))
            m["cells"][cell]["qrels"] = sum(len(p.read_text().splitlines()) - 1 for p in (d / "qrels").glob("*.tsv"))
    (release / "manifest.json").write_text(json.dumps(m, ensure_ascii=False, sort_keys=True, indent=2) + "\n")


def _failed(release: Path) -> set[str]:
    return {c.name for c in audit_release(release).checks if not c.passed}


def test_untouched_copy_passes(release_copy):
    assert _failed(release_copy) == set()


def test_hashes_fail_on_a_tampered_file(release_copy):
    p = release_copy / "xqa" / "en" / "corpus.jsonl"
    rows = _rows(p)
    rows[0]["text"] += " Tampered."
    _write_rows(p, rows)
    assert "hashes" in _failed(release_copy)


def test_hashes_fail_on_an_unlisted_file(release_copy):
    (release_copy / "xqa" / "en" / "extra.jsonl").write_text("{}\n")
    assert "hashes" in _failed(release_copy)


def test_schemas_fail_on_a_bad_cui(release_copy):
    p = release_copy / "xqa" / "fr" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["cuis"] = ["X123"]
    _write_rows(p, rows)
    _resign(release_copy)
    assert "schemas" in _failed(release_copy)


def test_concept_overlap_fails_when_a_cui_is_in_two_cells(release_copy):
    en = _rows(release_copy / "xqa" / "en" / "queries.jsonl")
    p = release_copy / "evidence" / "fr" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["cuis"] = rows[0]["cuis"] + [en[0]["cuis"][0]]
    _write_rows(p, rows)
    _resign(release_copy)
    assert _failed(release_copy) == {"concept_overlap"}


def _inject_query(release: Path, cell: str, query: dict) -> None:
    task, lang = cell.split("/")
    d = release / task / lang
    rows = _rows(d / "queries.jsonl") + [query]
    _write_rows(d / "queries.jsonl", sorted(rows, key=lambda r: r["_id"]))
    doc = _rows(d / "corpus.jsonl")[0]["_id"]
    with (d / "qrels" / "test.tsv").open("a") as fh:
        fh.write(f"{query['_id']}\t{doc}\t1\n")
    _resign(release)


def test_query_overlap_fails_on_a_near_duplicate_pivot(release_copy):
    """The same question in another language: caught through its English pivot."""
    src = _rows(release_copy / "xqa" / "en" / "queries.jsonl")[0]
    words = src["pivot_text"].split()
    words[-2] = "quickly " + words[-2]
    fr = _rows(release_copy / "xqa" / "fr" / "queries.jsonl")[0]
    _inject_query(release_copy, "xqa/fr", {**fr, "_id": "zz-injected", "cuis": ["C9999991"], "pivot_text": " ".join(words),
                                            "text": fr["text"] + " (bis, autre formulation de la question)"})
    assert _failed(release_copy) == {"query_overlap"}


def test_query_overlap_fails_on_an_exact_duplicate_text(release_copy):
    ja = _rows(release_copy / "xqa" / "ja" / "queries.jsonl")[0]
    _inject_query(release_copy, "evidence/ja", {**ja, "_id": "zz-copy", "cuis": ["C9999992"],
                                                "pivot_text": "An unrelated English pivot about something else entirely."})
    assert "query_overlap" in _failed(release_copy)


def test_qrels_fail_on_a_missing_document(release_copy):
    p = release_copy / "xqa" / "es" / "qrels" / "test.tsv"
    q = _rows(release_copy / "xqa" / "es" / "queries.jsonl")[0]["_id"]
    p.write_text(p.read_text() + f"{q}\tno-such-doc\t1\n")
    _resign(release_copy)
    assert _failed(release_copy) == {"qrels_integrity"}


def test_qrels_fail_when_a_query_has_no_relevant_document(release_copy):
    p = release_copy / "evidence" / "ru" / "qrels" / "test.tsv"
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0]] + lines[2:]) + "\n")
    _resign(release_copy)
    assert _failed(release_copy) == {"qrels_integrity"}


def test_language_check_fails_on_english_in_the_chinese_cell(release_copy):
    p = release_copy / "xqa" / "zh" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["text"] = "Which treatment is recommended first for adults with this heart condition today?"
    _write_rows(p, rows)
    _resign(release_copy)
    assert _failed(release_copy) == {"language_and_script"}


def test_tier_ordering_fails_when_tiers_are_swapped(release_copy):
    p = release_copy / "cd" / "confusion_sets.jsonl"
    swap = {"easy": "hard", "hard": "easy", "medium": "medium"}
    _write_rows(p, [{**r, "tier": swap[r["tier"]]} for r in _rows(p)])
    _resign(release_copy)
    assert "tier_ordering" in _failed(release_copy)


def test_confusion_sets_fail_when_a_target_disagrees_with_its_query(release_copy):
    p = release_copy / "cd" / "confusion_sets.jsonl"
    rows = _rows(p)
    rows[0]["target_cui"] = rows[0]["distractor_cuis"][0]
    _write_rows(p, rows)
    _resign(release_copy)
    assert "confusion_sets" in _failed(release_copy)


def test_counts_fail_when_the_manifest_lies(release_copy):
    m = _manifest(release_copy)
    m["cells"]["cd/ja"]["queries"] += 1
    _resign(release_copy, m, recount=False)
    assert _failed(release_copy) == {"counts"}


def test_counts_fail_when_a_split_file_disagrees_with_the_beir_files(release_copy):
    """The `datasets` configs' per-split files must hold the cell's rows."""
    import pyarrow.parquet as pq

    p = release_copy / "cd" / "fr" / "top_ranked" / "test.parquet"
    pq.write_table(pq.read_table(p).slice(1), p)
    _resign(release_copy, derive=False)
    assert _failed(release_copy) == {"counts"}


def test_licence_fails_on_a_restricted_source(release_copy):
    m = _manifest(release_copy)
    m["sources_srl"]["HPO"] = 3
    _resign(release_copy, m)
    assert _failed(release_copy) == {"licence_policy"}


def test_cli_audit_exit_codes(release_copy):
    from typer.testing import CliRunner

    from mmedbench.cli import app

    ok = CliRunner().invoke(app, ["audit", str(release_copy)])
    assert ok.exit_code == 0 and "PASSED" in ok.output
    p = release_copy / "xqa" / "en" / "queries.jsonl"
    p.write_text(p.read_text().replace('"lang":"en"', '"lang":"fr"', 1))
    bad = CliRunner().invoke(app, ["audit", str(release_copy)])
    assert bad.exit_code == 1 and "FAILED" in bad.output


def test_trivial_match_fails_when_a_cd_query_is_its_entry_title(release_copy):
    p = release_copy / "cd" / "fr" / "queries.jsonl"
    rows = _rows(p)
    corpus = {d["_id"]: d for d in _rows(release_copy / "cd" / "fr" / "corpus.jsonl")}
    rows[0]["text"] = corpus[rows[0]["cuis"][0]]["title"].upper()  # case does not hide it
    _write_rows(p, rows)
    _resign(release_copy)
    assert "trivial_match" in _failed(release_copy)


def test_trivial_match_fails_when_a_cd_query_stands_in_its_entry_text(release_copy):
    p = release_copy / "cd" / "en" / "queries.jsonl"
    rows = _rows(p)
    c = release_copy / "cd" / "en" / "corpus.jsonl"
    corpus = _rows(c)
    target = next(d for d in corpus if d["_id"] == rows[0]["cuis"][0])
    target["text"] += f" Also called {rows[0]['text']}."
    _write_rows(c, corpus)
    _resign(release_copy)
    assert _failed(release_copy) == {"trivial_match"}


def test_concept_overlap_in_scope_all_fails_on_a_distractor_that_is_a_key_concept_elsewhere(release_copy):
    keys = {c for q in release_copy.glob("*/*/queries.jsonl") for r in _rows(q) for c in r["cuis"]}
    s = next(s for s in _rows(release_copy / "cd" / "confusion_sets.jsonl") if set(s["distractor_cuis"]) - keys)
    distractor = sorted(set(s["distractor_cuis"]) - keys)[0]
    p = release_copy / "xqa" / "en" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["cuis"] = sorted(set(rows[0]["cuis"]) | {distractor})
    _write_rows(p, rows)
    _resign(release_copy)
    assert _manifest(release_copy)["config"]["overlap"] == {"scope": "all"}  # the default
    assert _failed(release_copy) == {"concept_overlap"}
    m = _manifest(release_copy)
    m["config"]["overlap"] = {"scope": "key"}  # a distractor is no key concept
    _resign(release_copy, m)
    assert _failed(release_copy) == set()
    m["config"]["overlap"] = {"scope": "all"}
    _resign(release_copy, m)
    check = next(c for c in audit_release(release_copy).checks if c.name == "concept_overlap")
    assert any(f.startswith(f"{distractor}: in cells ") for f in check.failures)
