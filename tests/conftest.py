"""Shared fixtures: paths, the ../shared skip rule, and one sample build per session."""
from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import pytest

from schemas.records import TASKS

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SAMPLE_CONFIG = ROOT / "configs" / "sample.toml"
# What the sample's counts derive from: it fills every cell (task x language) to its task's
# quota, one confusion set per cd query, and every non-English cell has its pivot control.
_SAMPLE = tomllib.loads(SAMPLE_CONFIG.read_text(encoding="utf-8"))
SAMPLE_LANGUAGES: list[str] = _SAMPLE["languages"]
SAMPLE_QUOTAS: dict[str, int] = {task: _SAMPLE["tasks"][task]["quota"] for task in TASKS}
SAMPLE_CELLS = len(TASKS) * len(SAMPLE_LANGUAGES)
SAMPLE_PIVOT_CELLS = len(TASKS) * (len(SAMPLE_LANGUAGES) - 1)


def require_shared(*parts: str) -> Path:
    """Skip (with the reason) when ../shared/data is absent, as on a user's fresh clone."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/data not present ({path} missing): real-data tests run in development checkouts and CI")
    return path


@pytest.fixture(scope="session")
def prefect_harness():
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def sample_build(prefect_harness, tmp_path_factory):
    """Build the embedded sample once; tests that alter a release work on a copy."""
    from flows.build_release import build_release_flow

    base = tmp_path_factory.mktemp("sample-build")
    result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(base / "releases"), work_dir=str(base / "work"))
    assert isinstance(result, dict), result
    return {"result": result, "release": Path(result["release"]), "base": base}


@pytest.fixture
def release_copy(sample_build, tmp_path):
    dst = tmp_path / "release"
    shutil.copytree(sample_build["release"], dst)
    return dst
