"""The dense path end to end, driven by a tiny random-weight sentence-transformers model
built inside the test (nothing downloads)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from typer.testing import CliRunner

from mmedbench.cli import app
from tasks.evaluation.lexical import document_text
from tasks.evaluation.runs import read_run
from tasks.evaluation.stage import evaluate_release
from tests.evaluation_release import CELLS, make_tiny_model, make_tiny_release

runner = CliRunner()


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    base = tmp_path_factory.mktemp("dense")
    model = make_tiny_model(base / "model")
    release = make_tiny_release(base / "release")
    said: list[str] = []
    res = evaluate_release(release, ["bm25", f"dense:tiny={model}"], base / "out", ["test"],
                           cache_dir=base / "cache", progress=said.append)
    return {"base": base, "model": model, "release": release, "res": res, "said": said}


def test_the_dense_retriever_scores_every_filled_cell(dense):
    cells = [c for c in dense["res"].cells if c.retriever == "dense-tiny"]
    assert [(c.task, c.lang, c.query_set) for c in cells if c.metrics is not None] == [
        ("xqa", "en", "native"), ("xqa", "ja", "native"), ("xqa", "ja", "pivot"), ("cd", "en", "native"),
        ("cd", "ja", "native"), ("cd", "ja", "pivot"), ("evidence", "en", "native")]
    params = next(r for r in dense["res"].retrievers if r.name == "dense-tiny").parameters
    assert params["dimension"] == 32 and len(params["model_sha256"]) == 64 and params["search"] == "exact"
    assert str(dense["base"]) not in (dense["base"] / "out" / "results.json").read_text()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"


def test_search_is_exact_over_normalized_embeddings(dense):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(dense["model"]), device="cpu")
    corpus, items = CELLS["xqa/ja"]
    docs = model.encode([document_text(d) for d in corpus], normalize_embeddings=True)
    queries = model.encode([q["text"] for q, _rel in items], normalize_embeddings=True)
    cos = queries.astype(np.float64) @ docs.astype(np.float64).T
    run = read_run(dense["base"] / "out" / "runs" / "dense-tiny" / "xqa-ja.trec")
    for (q, _rel), row in zip(items, cos):
        assert sorted(run[q["_id"]]) == sorted(d["_id"] for d in corpus)  # 4 documents < depth: all of them
        for d, s in zip(corpus, row):
            assert run[q["_id"]][d["_id"]] == pytest.approx(s, abs=2e-6)


def test_a_shared_corpus_is_encoded_once_and_embeddings_are_cached(dense, tmp_path):
    encoded = [m for m in dense["said"] if "documents of" in m]
    # xqa/en and xqa/ja share one corpus, cd/en and cd/ja another, evidence a third
    assert encoded == ["dense-tiny: encoded 4/4 documents of xqa corpus", "dense-tiny: encoded 4/4 documents of cd corpus",
                       "dense-tiny: encoded 2/2 documents of evidence corpus"]
    cached = sorted(p.name for p in (dense["base"] / "cache").rglob("*.npy"))
    assert len(cached) == 3 + 5 + 2  # three corpora, five cells' queries, two pivot controls' queries
    said: list[str] = []
    evaluate_release(dense["release"], ["bm25", f"dense:tiny={dense['model']}"], tmp_path / "again", ["test"],
                     cache_dir=dense["base"] / "cache", progress=said.append)
    assert not any("encoded" in m for m in said)  # all from the cache
    assert sorted(p.name for p in (dense["base"] / "cache").rglob("*.npy")) == cached
    for rel in ("results.json", "runs/dense-tiny/xqa-ja.trec", "runs/dense-tiny/cd-en.trec"):
        assert (tmp_path / "again" / rel).read_bytes() == (dense["base"] / "out" / rel).read_bytes()


def test_without_a_cache_the_bytes_are_the_same(dense, tmp_path):
    evaluate_release(dense["release"], ["bm25", f"dense:tiny={dense['model']}"], tmp_path / "fresh", ["test"])
    assert (tmp_path / "fresh" / "results.json").read_bytes() == (dense["base"] / "out" / "results.json").read_bytes()


def test_a_model_folder_named_model_takes_its_parents_name(dense, tmp_path):
    from tasks.evaluation.retrievers import parse_retriever

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model").symlink_to(dense["model"], target_is_directory=True)
    assert parse_retriever(f"dense:{tmp_path / 'pkg' / 'model'}").name == "dense-pkg"
    assert parse_retriever(f"dense:{dense['model']}").name == "dense-tiny-st"


def test_a_folder_that_is_no_loadable_model_is_one_line(dense, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({"model_type": "nonsense"}))
    (bad / "model.safetensors").write_bytes(b"not weights")
    r = runner.invoke(app, ["evaluate", str(dense["release"]), "-r", f"dense:{bad}", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "cannot load a sentence-transformers model" in lines[0]
