"""The folder layout is the pipeline: lower layers never import upper ones.

    common/   (shared I/O and text helpers)  <  schemas/  <  umls/  <  tasks/<stage>/  <  flows/  <  mmedbench/ (CLI)

Each stage package under tasks/ has a `stage.py` entry point; `dedup` is a subsystem shared
by allocation and audit and has none.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["common", "schemas", "umls", "tasks", "flows", "mmedbench"]
STAGES = ["sources", "grounding", "translation", "allocation", "release", "audit", "evaluation"]


def project_imports(path: Path) -> set[str]:
    """Top-level project packages a module imports (at any depth of the file)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found |= {n.split(".")[0] for n in names if n.split(".")[0] in LAYERS}
    return found


def layer_violations(root: Path) -> list[str]:
    out = []
    for rank, layer in enumerate(LAYERS):
        for f in sorted((root / layer).rglob("*.py")):
            above = {p for p in project_imports(f) if LAYERS.index(p) > rank}
            out += [f"{f.relative_to(root)} imports {p}" for p in sorted(above)]
    return out


def test_no_layer_imports_a_layer_above_it():
    assert layer_violations(ROOT) == []


def test_a_layer_violation_is_reported(tmp_path):
    for layer in LAYERS:
        (tmp_path / layer).mkdir()
    (tmp_path / "umls" / "bad.py").write_text("from tasks.grounding.grounder import Grounder\n")
    (tmp_path / "common" / "ok.py").write_text("import json\n")
    assert layer_violations(tmp_path) == ["umls/bad.py imports tasks"]


@pytest.mark.parametrize("stage", STAGES)
def test_every_stage_package_has_a_stage_entry_point(stage):
    assert (ROOT / "tasks" / stage / "stage.py").is_file()


def test_tasks_holds_only_stage_packages():
    """A newcomer reading file names sees the DAG: no loose modules beside the stages."""
    loose = sorted(p.name for p in (ROOT / "tasks").iterdir() if p.suffix == ".py" and p.name != "__init__.py")
    assert loose == []
