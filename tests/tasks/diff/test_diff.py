"""`mmedbench diff OLD NEW`: cells, counts, rows by id and text hash, qrels, configuration,
inputs. Two small release folders written here (no build needed); the sample and its German
extension are compared in tests/flows/test_add_language.py."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from common.jsonio import sha256_file
from mmedbench.cli import app
from tasks.diff.compare import diff_hashes, diff_qrels, diff_records, flatten, text_hash
from tasks.diff.render import diff_json, diff_markdown
from tasks.diff.stage import diff_releases

H = "0" * 64


def _write(root: Path, cells: dict[str, dict], config: dict, inputs: dict[str, str], sets: list[dict], version: str, build: str) -> Path:
    manifest_cells = {}
    for cell, c in cells.items():
        d = root / cell
        (d / "qrels").mkdir(parents=True)
        (d / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in c["corpus"]))
        (d / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in c["queries"]))
        (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d_}\t{s}\n" for q, d_, s in c["qrels"]))
        manifest_cells[cell] = {"queries": len(c["queries"]), "documents": len(c["corpus"]), "qrels": len(c["qrels"]),
                                "dev_queries": 0, "provenance": {}}
    (root / "cd").mkdir(exist_ok=True)
    (root / "cd" / "confusion_sets.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sets))
    files = {p.relative_to(root).as_posix(): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
             for p in sorted(root.rglob("*")) if p.is_file()}
    manifest = {"version": version, "build_id": build, "code_version": "0.1.0+test", "config": config, "inputs": inputs,
                "cells": manifest_cells, "files": files, "sources_srl": {"DO": 0}}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def _q(qid: str, text: str, cuis=("C0000001",)) -> dict:
    return {"_id": qid, "text": text, "lang": "en", "cuis": list(cuis), "pivot_text": None, "provenance": "native", "split": "test"}


OLD_CELLS = {
    "xqa/en": {"queries": [_q("q1", "What is asthma?"), _q("q2", "What is gout?"), _q("q3", "Why fever?")],
               "corpus": [{"_id": "d1", "title": "", "text": "Asthma is ..."}, {"_id": "d2", "title": "", "text": "Gout is ..."}],
               "qrels": [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d2", 1)]},
    "cd/en": {"queries": [_q("cd-en-C1", "asthma")], "corpus": [{"_id": "C1", "title": "asthma", "text": "asthma"}],
              "qrels": [("cd-en-C1", "C1", 1)]},
    "cd/fr": {"queries": [_q("cd-fr-C2", "goutte")], "corpus": [{"_id": "C2", "title": "gout", "text": "gout"}],
              "qrels": [("cd-fr-C2", "C2", 1)]},
}
CONFIG = {"version": "0.1.0", "languages": ["en", "fr"], "dedup": {"threshold": 0.7, "num_perm": 128}, "tasks": {"cd": {"quota": 1}}}
SETS = [{"set_id": "cd-en-C1", "lang": "en", "tier": "easy", "target_cui": "C1", "distractor_cuis": ["C9"]}]


@pytest.fixture
def pair(tmp_path):
    old = _write(tmp_path / "0.1.0", OLD_CELLS, CONFIG, {"a.jsonl": "1" * 64, "b.jsonl": "2" * 64}, SETS, "0.1.0", "a" * 64)
    cells = copy.deepcopy(OLD_CELLS)
    x = cells["xqa/en"]
    x["queries"][1]["text"] = "What causes gout?"                    # q2: text changed
    x["queries"][2]["cuis"] = ["C0000002"]                           # q3: key concepts changed
    x["queries"].append(_q("q4", "What is croup?"))                  # q4 added
    del x["queries"][0]                                              # q1 removed
    x["corpus"].append({"_id": "d3", "title": "", "text": "Croup is ..."})
    x["qrels"] = [("q2", "d2", 1), ("q3", "d2", 1), ("q4", "d3", 1)]
    del cells["cd/fr"]                                                # a cell removed
    cells["cd/ja"] = {"queries": [_q("cd-ja-C3", "痛風")], "corpus": [{"_id": "C3", "title": "gout", "text": "gout"}],
                      "qrels": [("cd-ja-C3", "C3", 1)]}
    config = copy.deepcopy(CONFIG) | {"version": "0.2.0", "languages": ["en", "ja"]}
    config["dedup"]["threshold"] = 0.8
    sets = SETS + [{"set_id": "cd-ja-C3", "lang": "ja", "tier": "hard", "target_cui": "C3", "distractor_cuis": ["C8"]}]
    new = _write(tmp_path / "0.2.0", cells, config, {"x/a.jsonl": "1" * 64, "b.jsonl": "3" * 64, "c.jsonl": "4" * 64},
                 sets, "0.2.0", "b" * 64)
    return old, new


def test_diff_of_two_releases(pair):
    d = diff_releases(*pair)
    assert (d.cells_added, d.cells_removed, d.cells_changed, d.cells_unchanged) == (["cd/ja"], ["cd/fr"], ["xqa/en"], ["cd/en"])
    xqa = next(c for c in d.cells if c.cell == "xqa/en")
    assert (xqa.old.queries, xqa.new.queries, xqa.old.documents, xqa.new.documents) == (3, 3, 2, 3)
    assert xqa.queries.added == ["q4"] and xqa.queries.removed == ["q1"]
    assert [(c.id, c.fields) for c in xqa.queries.changed] == [("q2", ["text"]), ("q3", ["cuis"])]
    q2 = xqa.queries.changed[0]
    assert (q2.old_text_sha256, q2.new_text_sha256) == (text_hash("What is gout?"), text_hash("What causes gout?"))
    assert xqa.documents.added == ["d3"] and not xqa.documents.removed and not xqa.documents.changed
    assert [(r.query_id, r.corpus_id) for r in xqa.qrels.added] == [("q4", "d3")]
    assert [(r.query_id, r.corpus_id) for r in xqa.qrels.removed] == [("q1", "d1")]
    assert d.confusion_sets.added == ["cd-ja-C3"] and not d.confusion_sets.removed
    assert [(c.key, c.kind, c.old, c.new) for c in d.config] == [
        ("dedup.threshold", "changed", 0.7, 0.8), ("languages", "changed", ["en", "fr"], ["en", "ja"]),
        ("version", "changed", "0.1.0", "0.2.0")]
    assert [(f.path, f.kind, f.old_path) for f in d.inputs] == [
        ("b.jsonl", "changed", None), ("c.jsonl", "added", None), ("x/a.jsonl", "moved", "a.jsonl")]
    assert not d.identical


def test_markdown_and_json(pair):
    d = diff_releases(*pair)
    md = diff_markdown(d)
    assert "- added: cd/ja\n- removed: cd/fr\n- changed: xqa/en\n- unchanged: 1\n" in md
    assert "| xqa/en | changed | 3 | 2 → 3 | 3 | +1 −1 ~2 | +1 −0 ~0 | +1 −1 |" in md
    assert f"- query `q2` changed: text (text {text_hash('What is gout?')} → {text_hash('What causes gout?')})" in md
    assert "| dedup.threshold | changed | `0.7` | `0.8` |" in md
    assert "| x/a.jsonl | moved from a.jsonl |" in md
    assert json.loads(diff_json(d))["cells_added"] == ["cd/ja"]


def test_identical_releases(pair):
    old, _ = pair
    d = diff_releases(old, old)
    assert d.identical and d.cells_unchanged == ["cd/en", "cd/fr", "xqa/en"] and not d.files
    assert diff_markdown(d).endswith("The releases are identical.\n")


def test_an_edit_after_publishing_shows(pair):
    """Files are compared as they are, not as the manifest says."""
    old, _ = pair
    import shutil

    edited = old.parent / "edited"
    shutil.copytree(old, edited)
    path = edited / "cd" / "en" / "queries.jsonl"
    path.write_text(path.read_text().replace("asthma", "asthme"))
    d = diff_releases(old, edited)
    assert d.cells_changed == ["cd/en"] and [f.path for f in d.files] == ["cd/en/queries.jsonl"]


def test_cli(pair, tmp_path):
    old, new = pair
    res = CliRunner().invoke(app, ["diff", str(old), str(new), "--json", str(tmp_path / "d.json")])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("# Release diff 0.1.0 → 0.2.0\n")
    assert json.loads((tmp_path / "d.json").read_text())["cells_removed"] == ["cd/fr"]
    res = CliRunner().invoke(app, ["diff", str(old), str(tmp_path)])
    assert res.exit_code == 2 and res.output == f"error: {tmp_path}: not a release folder (no manifest.json)\n"


def test_pure_comparisons():
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": {}}) == {"a.b": 1, "a.c": [1, 2], "d": {}}
    d = diff_records({"x": {"_id": "x", "text": "a"}}, {"x": {"_id": "x", "text": "a", "title": "t"}})
    assert [(c.id, c.fields) for c in d.changed] == [("x", ["title"])]
    q = diff_qrels([("q", "d", 1, "test")], [("q", "d", 2, "test")])
    assert [(r.score) for r in q.added] == [2] and [(r.score) for r in q.removed] == [1]
    moved = diff_hashes({"a": "1", "b": "1"}, {"c": "1"}, moves=True)
    assert [(f.path, f.kind, f.old_path) for f in moved] == [("b", "removed", None), ("c", "moved", "a")]
    assert [(f.path, f.kind) for f in diff_hashes({"a": "1"}, {"c": "1"})] == [("a", "removed"), ("c", "added")]
