"""A user's dense model declares its coverage (`dense:DIR@english`, `dense:DIR@multilingual`)
and then takes its side in the separation check, as the built-ins do; undeclared, it takes none."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from mmedbench.cli import app
from tasks.evaluation.retrievers import parse_retriever
from tasks.evaluation.stage import evaluate_release
from tests.evaluation_release import make_tiny_model, make_tiny_release

runner = CliRunner()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("declared")
    return {"base": base, "model": make_tiny_model(base / "model"), "release": make_tiny_release(base / "release")}


def test_a_declared_coverage_is_parsed_and_an_undeclared_one_is_none(tiny):
    m = tiny["model"]
    assert parse_retriever(f"dense:{m}@multilingual").coverage == "multilingual"
    assert parse_retriever(f"dense:mine={m}@english").coverage == "english"
    assert parse_retriever(f"dense:mine={m}@english").name == "dense-mine"
    assert parse_retriever(f"dense:{m}").coverage is None


def test_a_declared_pair_of_models_gets_a_separation_per_cell_with_pivots(tiny):
    m = tiny["model"]
    res = evaluate_release(tiny["release"], [f"dense:eng={m}@english", f"dense:multi={m}@multilingual"],
                           tiny["base"] / "out", ["test"], cache_dir=tiny["base"] / "cache")
    assert {r.name: (r.family, r.coverage) for r in res.retrievers} == {"dense-eng": ("user", "english"),
                                                                        "dense-multi": ("user", "multilingual")}
    assert [(s.task, s.lang) for s in res.separations] == [("xqa", "ja"), ("cd", "ja")]
    for s in res.separations:
        assert [(c.english_only, c.multilingual) for c in s.contrasts] == [("dense-eng", "dense-multi")]
        assert s.contrasts[0].difference == 0.0 and not s.separates  # the same model both ways: no difference


def test_undeclared_models_take_no_side(tiny):
    m = tiny["model"]
    res = evaluate_release(tiny["release"], [f"dense:a={m}", f"dense:b={m}@multilingual"], tiny["base"] / "out2", ["test"],
                           cache_dir=tiny["base"] / "cache")
    assert res.separations == []


def test_an_unknown_coverage_is_one_line(tiny, tmp_path):
    r = runner.invoke(app, ["evaluate", str(tiny["release"]), "-r", f"dense:{tiny['model']}@biomedical",
                            "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert "coverage 'biomedical': expected @english or @multilingual" in r.output
