"""Audit check `card` (issue 47, class 5): the card (README.md) and its pictures are what the
release's own files give; a sentence appended, a figure edited, a picture swapped, each
with the manifest re-hashed, fail it naming the card's line (the audit passed them before)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tasks.audit.card_check import card_differences, source_items_on_card
from tasks.audit.checks import Release
from tasks.audit.card_check import check_card
from tests.tasks.audit.test_audit_failures import _cli_audit, _failures, _resign

pytestmark = pytest.mark.slow


def _resign_only(release):
    _resign(release, derive=False, recount=False)


def test_a_fresh_sample_release_passes(release_copy):
    check = check_card(Release(release_copy))
    lines = (release_copy / "README.md").read_text(encoding="utf-8").count("\n") + 1
    assert check.passed and check.detail == (f"README.md ({lines} lines, 18 cells of 3 tasks) and its 3 pictures are what "
                                             "the release's files give")


def test_a_release_named_by_a_relative_path_or_dot_passes(release_copy, monkeypatch):
    # CI's `mmedbench audit releases/0.1.0-real`: the card was written again from links whose
    # relative targets resolved from the scratch folder, so it had no cells and failed
    monkeypatch.chdir(release_copy.parent)
    assert check_card(Release(Path(release_copy.name))).passed
    r = _cli_audit(Path(release_copy.name))
    assert r.exit_code == 0 and "| card | pass |" in r.output
    # and from inside it, as `mmedbench audit .` (its name was '', a pydantic error, exit 70)
    monkeypatch.chdir(release_copy)
    r = _cli_audit(Path("."))
    assert r.exit_code == 0 and r.output.startswith("# Audit of release 0.1.0\n\nResult: PASSED\n") and "| card | pass |" in r.output


def test_a_sentence_appended_to_the_card_fails_it_by_line(release_copy):
    card = release_copy / "README.md"
    text = card.read_text(encoding="utf-8")
    card.write_text(text + "This release was reviewed by three clinicians.\n", encoding="utf-8")
    _resign_only(release_copy)
    line = text.count("\n") + 1
    assert _failures(release_copy) == {"card": [f"README.md:{line}: 'This release was reviewed by three clinicians.' is not "
                                                "on the card the release's files give"]}
    r = _cli_audit(release_copy)
    assert r.exit_code == 1 and "README.md:" in r.output and "| card | FAIL |" in r.output


def test_a_figure_edited_on_the_card_fails_it(release_copy):
    card = release_copy / "README.md"
    lines = card.read_text(encoding="utf-8").split("\n")
    at = next(i for i, l in enumerate(lines) if l.startswith("| xqa/en | 6 |"))
    edited = lines[at].replace("| xqa/en | 6 |", "| xqa/en | 600 |", 1)
    original, lines[at] = lines[at], edited
    card.write_text("\n".join(lines), encoding="utf-8")
    _resign_only(release_copy)
    assert _failures(release_copy) == {"card": [f"README.md:{at + 1}: {edited!r}; the release's files give {original!r}"]}


def test_a_picture_swapped_fails_it(release_copy):
    shutil.copyfile(release_copy / "assets" / "tiers.png", release_copy / "assets" / "counts.png")
    _resign_only(release_copy)
    assert _failures(release_copy) == {"card": ["assets/counts.png: not the picture the release's files give"]}


def test_a_manifest_count_edited_and_re_hashed_is_caught_through_the_card(release_copy):
    """The card is written from the manifest: a count edited there (and the manifest re-hashed)
    no longer gives the card the release holds."""
    import json

    m = json.loads((release_copy / "manifest.json").read_text())
    m["dropped"] = {**m["dropped"], "invented-reason": 5}
    (release_copy / "manifest.json").write_text(json.dumps(m, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    report = json.loads((release_copy / "build_report.json").read_text())
    report["dropped_by_reason"]["invented-reason"] = 5
    (release_copy / "build_report.json").write_text(json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    _resign_only(release_copy)
    failures = _failures(release_copy)
    assert failures["card"] == ["README.md:" + failures["card"][0].split(":")[1] + ": '- invented-reason: 5' is missing, "
                                "which the release's files give"]


# ----------------------------------------------------------------------------- pure
def test_the_empty_cells_source_items_are_read_from_the_card():
    manifest = {"cells": {"xqa/ru": {"queries": 0}, "evidence/ru": {"queries": 0}, "cd/ru": {"queries": 0},
                          "xqa/en": {"queries": 3}}}
    card = ("| xqa/ru | nothing: empty | 0 | - | empty: its 12 Russian xqa source items were all dropped (...) |\n"
            "| evidence/ru | nothing: empty | 0 | - | empty: no evidence source in Russian; no translation |\n")
    assert source_items_on_card(card, manifest) == {"xqa/ru": 12, "evidence/ru": 0}
    assert source_items_on_card("| xqa/ru | nothing: empty | 0 | - | empty: no xqa source item in Russian was placed |",
                                manifest) is None


def test_differences_are_aligned():
    assert card_differences("a\nb\nc\n", "a\nb\nc\n") == []
    assert card_differences("a\nX\nb\nc\n", "a\nb\nc\n") == ["README.md:2: 'X' is not on the card the release's files give"]
    assert card_differences("a\nc\n", "a\nb\nc\n") == ["README.md:2: 'b' is missing, which the release's files give"]
    assert card_differences("a\nB\nc\n", "a\nb\nc\n") == ["README.md:2: 'B'; the release's files give 'b'"]
