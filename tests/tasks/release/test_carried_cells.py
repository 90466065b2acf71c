"""add-language carries the base release's cells over as hard links, after checking them
against the base's manifest (tasks.release.stage._merge_base)."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from common.errors import InputError
from tasks.release.stage import _merge_base, carried_file_problems


def _base(root: Path) -> Path:
    """A two-cell base release: files, manifest (sha256 of each), one confusion set."""
    files = {"xqa/en/queries.jsonl": b'{"_id": "q1"}\n', "xqa/en/qrels/test.tsv": b"query-id\tcorpus-id\tscore\nq1\td1\t1\n",
             "cd/en/queries.jsonl": b'{"_id": "cd-en-C1"}\n'}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "cd" / "confusion_sets.jsonl").write_text('{"set_id": "cd-en-C1"}\n')
    manifest = {"version": "0.1.0", "build_id": "b", "cells": {"xqa/en": {"queries": 1}, "cd/en": {"queries": 1}},
                "files": {n: {"sha256": hashlib.sha256(d).hexdigest()} for n, d in files.items()}}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def _new(root: Path) -> Path:
    (root / "cd").mkdir(parents=True)
    (root / "cd" / "confusion_sets.jsonl").write_text('{"set_id": "cd-de-C2"}\n')
    return root


def test_cells_are_carried_as_links_and_sets_merged(tmp_path):
    base, new = _base(tmp_path / "base"), _new(tmp_path / "new")
    counts = {}
    changes = _merge_base(base, new, ["de"], counts)
    for name in ("xqa/en/queries.jsonl", "xqa/en/qrels/test.tsv", "cd/en/queries.jsonl"):
        assert (new / name).read_bytes() == (base / name).read_bytes()
        assert os.stat(new / name).st_ino == os.stat(base / name).st_ino  # the same file, not a copy
    assert counts == {"xqa/en": {"queries": 1}, "cd/en": {"queries": 1}}
    assert changes["unchanged_cells"] == ["cd/en", "xqa/en"] and changes["base_version"] == "0.1.0"
    sets = [json.loads(l)["set_id"] for l in (new / "cd" / "confusion_sets.jsonl").read_text().splitlines()]
    assert sets == ["cd-de-C2", "cd-en-C1"]


def test_a_copy_where_links_are_refused(tmp_path, monkeypatch):
    def no_links(src, dst):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    base, new = _base(tmp_path / "base"), _new(tmp_path / "new")
    _merge_base(base, new, ["de"], {})
    assert (new / "xqa/en/queries.jsonl").read_bytes() == b'{"_id": "q1"}\n'
    assert os.stat(new / "xqa/en/queries.jsonl").st_ino != os.stat(base / "xqa/en/queries.jsonl").st_ino


def test_a_base_that_changed_since_publishing_is_refused(tmp_path):
    base = _base(tmp_path / "base")
    manifest = json.loads((base / "manifest.json").read_text())
    assert carried_file_problems(base, manifest, ["cd/en", "xqa/en"]) == []
    (base / "xqa/en/queries.jsonl").write_bytes(b'{"_id": "q2"}\n')  # same size, other bytes
    (base / "xqa/en/extra.jsonl").write_bytes(b"")
    (base / "cd/en/queries.jsonl").unlink()
    assert carried_file_problems(base, manifest, ["cd/en", "xqa/en"]) == [
        ("cd/en/queries.jsonl", "listed in the base release's manifest but missing"),
        ("xqa/en/extra.jsonl", "not listed in the base release's manifest"),
        ("xqa/en/queries.jsonl", "sha256 differs from the base release's manifest"),
    ]
    assert carried_file_problems(base, manifest, ["cd/en"]) == [
        ("cd/en/queries.jsonl", "listed in the base release's manifest but missing")]
    with pytest.raises(InputError) as err:
        _merge_base(base, _new(tmp_path / "new"), ["de"], {})
    assert str(err.value) == (f"{base}/cd/en/queries.jsonl: listed in the base release's manifest but missing "
                              "(and 2 more file(s)): its cells cannot be carried over as they are; run mmedbench audit on it")
