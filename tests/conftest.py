"""Shared fixtures: paths, the ../shared skip rule, and one sample build per run, shared by
the pytest-xdist workers."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

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


def pytest_configure(config):
    """The run's one Prefect server (tests/prefect_server.py), started by the process that
    spawns the xdist workers (they inherit its URL); a server configured outside is kept."""
    if hasattr(config, "workerinput") or os.environ.get("PREFECT_API_URL"):
        return
    from tests.prefect_server import FLAG, start_run_server

    server = start_run_server()
    if server is not None:
        config._mmedbench_prefect_server = server
        os.environ.update({"PREFECT_API_URL": server.url, FLAG: "1"})


def pytest_unconfigure(config):
    server = getattr(config, "_mmedbench_prefect_server", None)
    if server is not None:
        server.stop()


@pytest.fixture(scope="session")
def prefect_harness():
    """Flows run in the test process against the run's server, or (without one) against
    Prefect's test harness: a temporary server and database of this process's own."""
    from tests.prefect_server import FLAG

    if os.environ.get(FLAG):
        yield
        return
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


def run_folder(tmp_path_factory) -> Path:
    """A folder of this pytest run that every pytest-xdist worker sees (their base
    temporary folders share a parent): what the workers build once, for all of them."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def run_lock(path: Path) -> Iterator[None]:
    """Held by one worker at a time (an flock: gone with a worker that dies)."""
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def shared_once(tmp_path_factory, name: str, make) -> tuple[Path, dict]:
    """`make(folder) -> dict` run once per pytest run (not once per worker) in a folder
    named by `name` and the code's fingerprint; the other workers wait for it, then read its
    summary. A `make` that failed leaves no summary: the next worker tries again."""
    from common.version import code_fingerprint

    folder = run_folder(tmp_path_factory) / f"{name}-{code_fingerprint()[:12]}"
    summary = folder / "summary.json"
    with run_lock(folder.with_name(folder.name + ".lock")):
        if not summary.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            made = make(folder)
            summary.write_text(json.dumps(made, default=str), encoding="utf-8")
    return folder, json.loads(summary.read_text(encoding="utf-8"))


def _build_sample(base: Path) -> dict:
    from flows.build_release import build_release_flow

    result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(base / "releases"), work_dir=str(base / "work"))
    assert isinstance(result, dict), result
    return result


@pytest.fixture(scope="session")
def sample_build(prefect_harness, tmp_path_factory):
    """The embedded sample built once per run, whichever worker needs it first (the others
    wait and share its release and its warm work dir: a stage's cache key holds the work
    dir's path, and the result records are Prefect's default store, which the workers
    share). Tests that alter a release work on a copy; builds that use `base/work` as a
    cache write their releases elsewhere."""
    base, result = shared_once(tmp_path_factory, "sample-build", _build_sample)
    return {"result": result, "release": Path(result["release"]), "base": base}


def real_data_config(folder: Path) -> Path:
    """configs/shared-real.toml as a test runs it: its data, registry and work dir (folder/work)
    made absolute, written to folder/shared-real.toml."""
    data = require_shared("hpo", "hp.obo").parents[1]
    text = (ROOT / "configs" / "shared-real.toml").read_text(encoding="utf-8")
    text = text.replace('"../../shared/data', f'"{data}').replace('registry = "languages.toml"', f'registry = "{ROOT}/configs/languages.toml"')
    text = text.replace('work_dir = "../.mmedbench-cache"', f'work_dir = "{folder}/work"')
    config = folder / "shared-real.toml"
    config.write_text(text, encoding="utf-8")
    return config


def _build_real_vocabulary(folder: Path) -> dict:
    import umls.configured
    from mmedbench.cli import ground_vocabulary
    from schemas.config import load_config

    calls = []
    real = umls.configured.build_configured_vocabulary

    def recording(*args):
        paths = real(*args)
        calls.append({"arguments": list(args), "paths": paths})
        return paths

    with mock.patch.object(umls.configured, "build_configured_vocabulary", recording):
        vocabulary = ground_vocabulary(load_config(real_data_config(folder)), "en")
    assert len(calls) == 1, calls
    return {"vocabulary": vocabulary, "ground_cli": folder / "work" / "ground-cli", **calls[0]}


@pytest.fixture(scope="session")
def real_vocabulary(tmp_path_factory):
    """configs/shared-real.toml's vocabulary (../shared/data), built once per run (about 12 s)
    by `mmedbench ground`'s own `ground_vocabulary`, with the arguments it gave the reader and
    the paths it returned: `mmedbench ground` on a copy of `ground_cli` finds it built, and a
    test of the build's vocabulary reads it once the build's own arguments are shown equal."""
    require_shared("quaero")
    require_shared("glossaries")
    _folder, made = shared_once(tmp_path_factory, "real-vocabulary", _build_real_vocabulary)
    return made


def _build_real_russian_vocabulary(folder: Path) -> dict:
    from schemas.config import load_config
    from umls.configured import build_configured_vocabulary

    loaded = load_config(ROOT / "configs" / "shared-real.toml")
    v = loaded.config.vocabulary
    arguments = {"format": v.format, "path": str(loaded.resolve(v.path)), "lat_to_lang": {"ENG": "en", "RUS": "ru"},
                 "max_srl": v.max_srl, "preferred_en": loaded.registry["en"].preferred_sources, "roots": v.roots,
                 "code_names": [{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in v.code_names]}
    a = arguments
    paths = build_configured_vocabulary(a["format"], Path(a["path"]), folder / "vocabulary", a["lat_to_lang"], a["max_srl"],
                                        a["preferred_en"], a["roots"], a["code_names"])
    return {"arguments": arguments, "paths": paths}


@pytest.fixture(scope="session")
def real_russian_vocabulary(tmp_path_factory):
    """configs/shared-real.toml's vocabulary with English and Russian only and its code-keyed
    lists (the Russian ICD-10), no name lists: built once per run (about 4 s) for the tests
    of the Russian ICD-10 and of Russian grounding, with the arguments it was built with."""
    require_shared("icd10-ru")
    _folder, made = shared_once(tmp_path_factory, "real-russian-vocabulary", _build_real_russian_vocabulary)
    return made


def warm_env() -> dict[str, str]:
    """The environment a `mmedbench` subprocess needs to take the stages of `sample_build`'s
    work dir from the cache: the session's result store (the command's own default is
    <work>/prefect-results)."""
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH

    return {"PREFECT_LOCAL_STORAGE_PATH": str(PREFECT_LOCAL_STORAGE_PATH.value())}


@pytest.fixture
def release_copy(sample_build, tmp_path):
    dst = tmp_path / "release"
    shutil.copytree(sample_build["release"], dst)
    return dst
