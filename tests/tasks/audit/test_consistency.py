"""An edited release whose manifest was re-hashed (issue 41): the edit contradicts the release
itself, and the audit says so by name. Each tampering is the issue's probe, re-signed as a
consistent forger would (tests/tasks/audit/test_audit_failures.py `_resign`), and fails
exactly the check named for it (besides `audit_report`: the stored report said all passed)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tasks.audit.checks import card_links, file_kind
from tasks.audit.stage import audit_release
from tests.card_figures import card_figures_drawn_once
from tests.tasks.audit.test_audit_failures import _cli_audit, _failures, _manifest, _resign

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def figures_drawn_once():
    """Each audit writes the card again: its pictures drawn once per distinct data (tests/card_figures.py)."""
    with card_figures_drawn_once() as drawn:
        yield drawn


def _resign_only(release: Path) -> None:
    """Re-hash the manifest's files and nothing else (the edit is what is under test)."""
    _resign(release, derive=False, recount=False)


def test_qrels_parquet_with_two_queries_documents_swapped_fails_twins(release_copy):
    p = release_copy / "xqa" / "en" / "qrels.parquet"
    t = pq.read_table(p)
    docs = t["corpus-id"].to_pylist()
    assert docs[0] != docs[1]
    docs[0], docs[1] = docs[1], docs[0]
    pq.write_table(t.set_column(t.schema.get_field_index("corpus-id"), "corpus-id", pa.array(docs)), p)
    _resign_only(release_copy)
    failures = _failures(release_copy)
    assert list(failures) == ["twins"]
    assert failures["twins"] == [f"xqa/en/qrels.parquet: differs from xqa/en/qrels/*.tsv: row 1, field 'corpus-id': "
                                 f"{docs[0]!r}, its twin {docs[1]!r}"]


def test_a_queries_parquet_row_edited_fails_twins(release_copy):
    p = release_copy / "cd" / "fr" / "queries" / "test.parquet"
    rows = pq.read_table(p).to_pylist()
    rows[2]["text"] = "autre chose"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(p)), p)
    _resign_only(release_copy)
    failures = _failures(release_copy)
    assert list(failures) == ["twins"]
    assert failures["twins"][0].startswith("cd/fr/queries/test.parquet: differs from cd/fr/queries.jsonl: row 3, field 'text': "
                                           "'autre chose', its twin ")


def test_a_stray_file_in_a_cell_fails_file_kinds(release_copy):
    (release_copy / "xqa" / "en" / "notes.txt").write_text("checked by hand\n")
    _resign_only(release_copy)
    assert _failures(release_copy) == {"file_kinds": ["xqa/en/notes.txt: not a kind of file a release holds"]}


def test_files_of_a_cell_the_manifest_does_not_list_fail_file_kinds(release_copy):
    shutil.copytree(release_copy / "xqa" / "en", release_copy / "xqa" / "de")
    _resign_only(release_copy)
    failures = _failures(release_copy)
    assert list(failures) == ["file_kinds"]
    assert failures["file_kinds"][0] == "xqa/de/corpus.jsonl: cell file of cell xqa/de, which the manifest does not list"


def test_assets_deleted_while_the_card_links_them_fails_card_links(release_copy):
    shutil.rmtree(release_copy / "assets")
    _resign_only(release_copy)
    assert _failures(release_copy) == {"card_links": [f"README.md links assets/{n}.png, which is not in the release"
                                                      for n in ("counts", "provenance", "tiers")],
                                       "card": [f"assets/{n}.png: missing (the card shows it)"
                                                for n in ("counts", "provenance", "tiers")]}


def test_a_config_data_file_deleted_fails_card_links(release_copy):
    (release_copy / "evidence" / "ja" / "qrels" / "test.parquet").unlink()
    _resign_only(release_copy)
    failures = _failures(release_copy)
    assert "README.md links evidence/ja/qrels/test.parquet, which is not in the release" in failures["card_links"]


def test_a_stored_report_saying_999_files_match_fails_audit_report(release_copy):
    p = release_copy / "audit_report.json"
    report = json.loads(p.read_text())
    hashes = next(c for c in report["checks"] if c["name"] == "hashes")
    hashes["detail"] = "999 files match their sha256 (the audit reports aside)"
    p.write_text(json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    _resign_only(release_copy)
    checks = audit_release(release_copy).checks
    assert {c.name for c in checks if not c.passed} == {"audit_report"}
    failures = next(c for c in checks if c.name == "audit_report").failures
    assert failures[0].startswith("audit_report.json: check 'hashes' says pass (999 files match their sha256 (the audit "
                                  "reports aside)), the audit now finds pass (238 files match")
    assert failures[1:] == ["audit_report.md: is not audit_report.json as Markdown"]
    r = _cli_audit(release_copy)
    assert r.exit_code == 1 and "| audit_report | FAIL |" in r.output


def test_a_stored_report_that_is_missing_fails_audit_report(release_copy):
    (release_copy / "audit_report.json").unlink()
    m = _manifest(release_copy)
    del m["files"]["audit_report.json"]
    (release_copy / "manifest.json").write_text(json.dumps(m, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    checks = audit_release(release_copy).checks
    assert {c.name: c.failures for c in checks if not c.passed} == {
        "audit_report": ["audit_report.json: missing (a published release holds its audit report)"]}


def test_an_evaluated_release_passes_file_kinds(release_copy, tmp_path):
    """What `evaluate` writes (results, runs, qrels, figures) is of the kinds the format has:
    the evaluation's own output, copied in as `build --evaluate` places it, and re-signed."""
    from tasks.evaluation.stage import evaluate_release

    out = tmp_path / "results"
    evaluate_release(release_copy, ["bm25"], out)
    shutil.copytree(out, release_copy / "evaluation")
    _resign_only(release_copy)
    names = sorted(p.relative_to(release_copy).as_posix() for p in (release_copy / "evaluation").rglob("*") if p.is_file())
    assert {"evaluation/results.json", "evaluation/results.md", "evaluation/runs/bm25/cd-fr-pivot.trec"} <= set(names)
    assert any(n.startswith("evaluation/qrels/") for n in names) and any(n.startswith("evaluation/figures/") for n in names)
    check = next(c for c in audit_release(release_copy).checks if c.name == "file_kinds")
    assert check.passed, check.failures
    (release_copy / "evaluation" / "runs" / "bm25" / "cd-fr.txt").write_text("x")
    (release_copy / "evaluation" / "scratch.json").write_text("{}")
    check = next(c for c in audit_release(release_copy).checks if c.name == "file_kinds")
    assert check.failures == ["evaluation/runs/bm25/cd-fr.txt: not a kind of file a release holds",
                              "evaluation/scratch.json: not a kind of file a release holds"]


@pytest.mark.parametrize("name, kind", [
    ("manifest.json", ("manifest", None)),
    ("xqa/de/pivot-queries.parquet", ("cell file", "xqa/de")),
    ("triage/pt-BR/qrels/dev.tsv", ("cell qrels of a split", "triage/pt-BR")),
    ("cd/ko/pivot-top_ranked/validation.parquet", ("cell file of a split", "cd/ko")),
    ("evaluation/runs/dense-e5_small/evidence-de-pivot.trec", ("evaluation run", "evidence/de")),
    ("evaluation/qrels/cd-fr-pivot.test.qrels", ("evaluation qrels", None)),
    ("evaluation/figures/gap-by-cell.png", ("evaluation figure", None)),
    ("assets/new-picture.png", ("card picture", None)),
    ("xqa/en/notes.txt", None),
    ("xqa/en/corpus.jsonl.bak", None),
    ("evaluation/runs/bm25/xqa-en.trec.gz", None),
    ("evaluation/results.csv", None),
    ("assets/counts.svg", None),
    (".hidden", None),
    ("cd/confusion_sets.csv", None),
])
def test_file_kinds_go_by_pattern(name, kind):
    """New cells, languages, systems and figures need no change; anything else is named."""
    assert file_kind(name) == kind


def test_card_links_reads_markdown_html_and_data_files():
    card = ("---\nconfigs:\n- config_name: xqa-en-corpus\n  data_files:\n  - split: test\n    path: xqa/en/corpus.parquet\n---\n"
            "# t\n![a](assets/a.png) [b](b.md) [web](https://example.org/x.png) [top](#cells) "
            '<img src="assets/d.png"> [q](docs/e.md#part)\n')
    assert card_links(card) == ["assets/a.png", "assets/d.png", "b.md", "docs/e.md", "xqa/en/corpus.parquet"]
