"""The audit parses and validates a corpus shared by several cells (the same file in
every language) once: each cell still gets its own failures, with its own path."""
from __future__ import annotations

import json
from pathlib import Path

from tasks.audit.checks import Release, check_schemas

DOC = {"_id": "d1", "title": "Gout", "text": "Gout is an inflammatory arthritis."}
QUERY = {"_id": "q-{lang}", "text": "{lang} question", "lang": "{lang}", "cuis": ["C0018099"], "pivot_text": None,
         "provenance": "native", "split": "test"}


def _release(root: Path, corpora: dict[str, str]) -> Release:
    cells = {}
    for lang, corpus in corpora.items():
        d = root / "xqa" / lang
        (d / "qrels").mkdir(parents=True)
        (d / "corpus.jsonl").write_text(corpus, encoding="utf-8")
        q = {k: (v.format(lang=lang) if isinstance(v, str) else v) for k, v in QUERY.items()}
        (d / "queries.jsonl").write_text(json.dumps(q) + "\n", encoding="utf-8")
        (d / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq-{lang}\td1\t1\n", encoding="utf-8")
        cells[f"xqa/{lang}"] = {}
    (root / "cd").mkdir()
    (root / "cd" / "confusion_sets.jsonl").write_text("", encoding="utf-8")
    (root / "manifest.json").write_text(json.dumps({"cells": cells}), encoding="utf-8")
    return Release(root)


BROKEN = (json.dumps(DOC) + "\n" + "{not json\n" + json.dumps({**DOC, "_id": "d2", "text": ""}) + "\r\n"
          + json.dumps({**DOC, "_id": "d3"}) + "\n")


def test_a_shared_corpus_is_parsed_once_and_each_cell_gets_its_failures(tmp_path):
    rel = _release(tmp_path, {"en": BROKEN, "fr": BROKEN, "es": json.dumps(DOC) + "\n"})
    assert rel.cells["xqa/en"]["corpus"] is rel.cells["xqa/fr"]["corpus"]  # one parse, shared
    assert rel.cells["xqa/es"]["corpus"] is not rel.cells["xqa/en"]["corpus"]
    assert [n for n, _ in rel.cells["xqa/fr"]["corpus"]] == [1, 3, 4]  # line numbers kept, CRLF read as text mode does
    assert rel.errors == ["xqa/en/corpus.jsonl:2: invalid JSON (Expecting property name enclosed in double quotes)",
                          "xqa/fr/corpus.jsonl:2: invalid JSON (Expecting property name enclosed in double quotes)"]
    check = check_schemas(rel)
    assert check.failures == [  # what parsing every file on its own gave (checked against the code before)
        "xqa/en/corpus.jsonl:2: invalid JSON (Expecting property name enclosed in double quotes)",
        "xqa/fr/corpus.jsonl:2: invalid JSON (Expecting property name enclosed in double quotes)",
        "manifest.json: field version: Field required",  # this test's manifest is minimal
        "xqa/en/corpus.jsonl:3: field text: String should have at least 1 character",
        "xqa/fr/corpus.jsonl:3: field text: String should have at least 1 character",
    ]
    assert check.detail == "5 failure(s)"


def test_a_query_in_the_wrong_cell_and_a_clean_shared_corpus(tmp_path):
    rel = _release(tmp_path, {"en": json.dumps(DOC) + "\n", "fr": json.dumps(DOC) + "\n"})
    q = tmp_path / "xqa" / "fr" / "queries.jsonl"
    q.write_text(q.read_text().replace('"lang": "fr"', '"lang": "en"'), encoding="utf-8")
    check = check_schemas(Release(tmp_path))
    assert check.failures == ["manifest.json: field version: Field required",
                              "xqa/fr/queries.jsonl:1: field 'lang': 'en' in the fr cell"]
    assert [f for f in check_schemas(rel).failures if not f.startswith("manifest.json")] == []
