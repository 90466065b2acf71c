"""Adding a stage to the build touches three things: its package, one line of the flow's
stage list (flows/build_release.BUILD_STAGES) and its parameters model. Here a no-op
"stats" stage is written as a package of its own in a temporary folder (its function and
its parameters model, nothing else), one Stage line is inserted after allocation, and the
sample is built through it: the stage runs once, on its parameters derived from the config
and on the allocation's result, and the release is the sample's, byte for byte."""
from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_CONFIG

STATS_PACKAGE = '''
"""A no-op stage: counts the allocation's queries per cell, changes nothing."""
import json
from pathlib import Path

import pyarrow.parquet as pq

from schemas.parameters import Parameters

DERIVED = []  # how often the flow derived this stage's parameters


class StatsParameters(Parameters):
    out: Path
    languages: list[str]

    @classmethod
    def derive(cls, loaded, request):
        DERIVED.append(request.version)
        return cls(out=request.work_dir / "stats.json", languages=loaded.config.languages)


def count(params: StatsParameters, upstream: dict) -> dict:
    t = pq.read_table(upstream["allocate"]["assignments"], columns=["task", "lang"])
    cells = {}
    for task, lang in zip(t["task"].to_pylist(), t["lang"].to_pylist()):
        cells[f"{task}/{lang}"] = cells.get(f"{task}/{lang}", 0) + 1
    stats = {"cells": dict(sorted(cells.items())), "languages": params.languages}
    params.out.write_text(json.dumps(stats, sort_keys=True))
    return stats
'''


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def stats_package(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg" / "statsstage"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "stage.py").write_text(textwrap.dedent(STATS_PACKAGE))
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    import statsstage.stage as module

    yield module
    sys.modules.pop("statsstage.stage", None)
    sys.modules.pop("statsstage", None)


@pytest.mark.slow
def test_a_stage_added_by_its_package_one_flow_line_and_its_parameters(sample_build, stats_package, tmp_path, monkeypatch):
    from flows import build_release as fb

    names = [s.name for s in fb.BUILD_STAGES]
    at = names.index("allocate") + 1
    # the one flow line
    line = fb.Stage("stats", stats_package.count, stats_package.StatsParameters)
    monkeypatch.setattr(fb, "BUILD_STAGES", fb.BUILD_STAGES[:at] + (line,) + fb.BUILD_STAGES[at:])

    work = sample_build["base"] / "work"
    result = fb.build_release_flow(str(SAMPLE_CONFIG), release_dir=str(tmp_path / "releases"), work_dir=str(work))
    assert isinstance(result, dict), result
    assert result["status"] == "written"
    assert stats_package.DERIVED == ["0.1.0"]  # derived once, from the config and the run's request

    stats = json.loads((work / "stats.json").read_text())
    manifest = json.loads((Path(result["release"]) / "manifest.json").read_text())
    # it saw the allocation: its counts are the published cells' (every cell of the sample is full)
    assert stats["cells"] == {cell: c["queries"] for cell, c in sorted(manifest["cells"].items())}
    assert stats["languages"] == ["en", "zh", "ja", "fr", "ru", "es"]
    # a no-op: the release is the sample's, byte for byte
    assert _tree(Path(result["release"])) == _tree(sample_build["release"])


def test_a_stage_parameters_model_forbids_what_it_does_not_declare(stats_package, tmp_path):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="extra"):
        stats_package.StatsParameters(out=tmp_path, languages=["en"], seed=1)
