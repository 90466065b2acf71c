"""End to end: build the embedded sample under Prefect, audit it, rebuild it."""
from __future__ import annotations

import filecmp
import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_CONFIG

pytestmark = pytest.mark.slow

LANGS = ["en", "zh", "ja", "fr", "ru", "es"]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_all_18_cells_non_empty_and_audit_passes(sample_build):
    from tasks.audit.stage import audit_release

    release = sample_build["release"]
    manifest = json.loads((release / "manifest.json").read_text())
    assert sorted(manifest["cells"]) == sorted(f"{t}/{l}" for t in ("xqa", "cd", "evidence") for l in LANGS)
    assert all(c["queries"] > 0 for c in manifest["cells"].values())
    report = audit_release(release)
    assert report.passed, [c for c in report.checks if not c.passed]
    by_name = {c.name: c for c in report.checks}
    assert by_name["concept_overlap"].passed and by_name["query_overlap"].passed


def test_release_layout_is_beir(sample_build):
    release = sample_build["release"]
    for task in ("xqa", "cd", "evidence"):
        for lang in LANGS:
            d = release / task / lang
            assert (d / "qrels" / "test.tsv").read_text().startswith("query-id\tcorpus-id\tscore\n")
            q = json.loads((d / "queries.jsonl").read_text().splitlines()[0])
            assert {"_id", "text", "lang", "cuis"} <= q.keys() and q["lang"] == lang
            doc = json.loads((d / "corpus.jsonl").read_text().splitlines()[0])
            assert set(doc) == {"_id", "title", "text"}
            assert (d / "queries.parquet").exists() and (d / "corpus.parquet").exists()
    sets = [json.loads(l) for l in (release / "cd" / "confusion_sets.jsonl").read_text().splitlines()]
    assert {s["tier"] for s in sets} == {"easy", "medium", "hard"}
    card = (release / "README.md").read_text()
    assert card.startswith("---\n") and "configs:" in card


def test_tiers_ordered_by_measured_similarity(sample_build):
    report = json.loads((sample_build["release"] / "audit_report.json").read_text())
    tiers = next(c for c in report["checks"] if c["name"] == "tier_ordering")
    assert tiers["passed"], tiers


def test_rebuild_is_cached_and_identical(sample_build):
    from flows.build_release import build_release_flow

    base = sample_build["base"]
    again = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(base / "releases"), work_dir=str(base / "work"))
    assert again["status"] == "unchanged"
    assert again["cached"] == again["task_runs"] > 0


def test_independent_build_is_byte_identical(sample_build, tmp_path):
    """A second build with its own cache and release folder gives the same bytes."""
    from flows.build_release import build_release_flow

    other = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(tmp_path / "r"), work_dir=str(tmp_path / "w"))
    assert other["cached"] == 0
    a, b = _tree(sample_build["release"]), _tree(Path(other["release"]))
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []


def test_existing_release_is_never_overwritten(sample_build, tmp_path):
    from flows.build_release import build_release_flow

    release = sample_build["release"]
    target = tmp_path / "releases" / release.name
    target.mkdir(parents=True)
    (target / "manifest.json").write_text("{}")
    work = tmp_path / "work"  # a cache of its own: a stage that ran would leave its outputs here
    result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(tmp_path / "releases"), work_dir=str(work))
    assert (result.message, result.exit_code) == (
        "a different release with this version exists; releases are never overwritten (use --version)", 3)
    assert (target / "manifest.json").read_text() == "{}"
    assert [p.name for p in (tmp_path / "releases").iterdir()] == [release.name]
    # refused before any stage ran, not after building it all
    assert sorted(p.name for p in work.rglob("*") if p.is_file() and p.name != "file-digests.json") == []


def test_rebuild_refuses_a_published_release_changed_after_publishing(sample_build, tmp_path):
    """A rebuild with nothing changed skips the audit only when the published files still
    match their manifest; a changed file is reported, and nothing is touched."""
    import shutil

    from flows.build_release import build_release_flow

    copy = tmp_path / "releases" / sample_build["release"].name
    shutil.copytree(sample_build["release"], copy)
    queries = copy / "xqa" / "en" / "queries.jsonl"
    queries.write_text(queries.read_text() + "\n")
    result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(tmp_path / "releases"), work_dir=str(sample_build["base"] / "work"))
    assert "no longer matches its own manifest" in str(result) and result.exit_code == 2
    assert queries.read_text().endswith("\n\n")
    assert [p.name for p in (tmp_path / "releases").iterdir()] == [copy.name]
