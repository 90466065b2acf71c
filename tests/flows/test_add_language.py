"""A seventh language (German) added to the sample release by configuration alone:
a registry entry (configs/languages.toml), German atoms in the vocabulary and a
translation memory (tests/data/lang-de/, written for these tests)."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_CELLS

pytestmark = pytest.mark.slow
DE = ROOT / "tests" / "data" / "lang-de"
MRSAB_DE = "||MMBDE|MMBDE|MMedBench German test terms|MMBDE||||||||0||||PT||GER|UTF-8|Y|Y|MMedBench German test terms||\n"


def german_config(tmp_path: Path) -> Path:
    """The sample config plus: 'de' in languages, German atoms, German memory. No code."""
    vocab = tmp_path / "umls"
    shutil.copytree(ROOT / "umls" / "sample", vocab)
    with (vocab / "MRCONSO.RRF").open("a", encoding="utf-8") as fh:
        fh.write((DE / "MRCONSO.de.RRF").read_text(encoding="utf-8"))
    with (vocab / "MRSAB.RRF").open("a", encoding="utf-8") as fh:
        fh.write(MRSAB_DE)
    text = (ROOT / "configs" / "sample.toml").read_text()
    text = text.replace('"../', f'"{ROOT}/').replace('registry = "languages.toml"', f'registry = "{ROOT}/configs/languages.toml"')
    text = text.replace(f'path = "{ROOT}/umls/sample"', f'path = "{vocab}"')
    text = text.replace('languages = ["en", "zh", "ja", "fr", "ru", "es"]', 'languages = ["en", "zh", "ja", "fr", "ru", "es", "de"]')
    text = text.replace(f'  "{ROOT}/sources/sample/tm_terms.jsonl",\n',
                        f'  "{ROOT}/sources/sample/tm_terms.jsonl",\n  "{DE}/tm_de.jsonl",\n  "{DE}/tm_terms_de.jsonl",\n')
    path = tmp_path / "sample-de.toml"
    path.write_text(text)
    return path


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_seventh_language_by_configuration(sample_build, tmp_path):
    from flows.add_language import add_language_flow
    from tasks.audit.stage import audit_release

    base = sample_build["release"]
    cfg = german_config(tmp_path)
    started = time.perf_counter()
    result = add_language_flow(str(base), str(cfg), release_dir=str(tmp_path / "releases"),
                               work_dir=str(sample_build["base"] / "work"))
    elapsed = time.perf_counter() - started
    assert isinstance(result, dict), result
    print(f"add-language: {elapsed:.1f} s, task runs {result['task_runs']}, cached {result['cached']}")
    new = Path(result["release"])
    assert new.name == "0.2.0" and result["added"] == ["de"]
    assert result["cached"] >= 1  # grounding of unchanged shards is reused
    manifest = json.loads((new / "manifest.json").read_text())
    assert manifest["changes"]["added_cells"] == ["cd/de", "evidence/de", "xqa/de"]
    assert manifest["changes"]["base_version"] == "0.1.0"
    for cell in ("xqa/de", "evidence/de", "cd/de"):
        assert manifest["cells"][cell]["queries"] > 0, cell
    # every base cell is carried over byte for byte
    old, now = _tree(base), _tree(new)
    for name, data in old.items():
        if name.split("/")[0] in ("xqa", "evidence", "cd") and name.count("/") >= 2:
            assert now[name] == data, name
            assert (new / name).stat().st_ino == (base / name).stat().st_ino, name  # linked, not copied
    report = audit_release(new)
    assert report.passed, [c for c in report.checks if not c.passed]
    # `mmedbench diff` (which add-language prints) lists exactly the new cells
    from tasks.diff.stage import diff_releases

    diff = diff_releases(base, new)
    assert (diff.cells_added, diff.cells_removed, diff.cells_changed) == (["cd/de", "evidence/de", "xqa/de"], [], [])
    assert len(diff.cells_unchanged) == SAMPLE_CELLS
    assert {s.split("-")[1] for s in diff.confusion_sets.added} == {"de"}
    assert not diff.confusion_sets.removed and not diff.confusion_sets.changed
    queries = [json.loads(l) for l in (new / "cd" / "de" / "queries.jsonl").read_text().splitlines()]
    assert {q["provenance"] for q in queries} <= {"terminology", "human-translated"}


def test_add_language_refuses_to_drop_or_add_nothing(sample_build, tmp_path):
    from common.errors import InputError
    from flows.inputs import plan_addition

    base = sample_build["release"]
    with pytest.raises(InputError, match="adds no language"):
        plan_addition(base, ["en", "zh", "ja", "fr", "ru", "es"])
    with pytest.raises(InputError, match="drops languages"):
        plan_addition(base, ["en", "de"])
