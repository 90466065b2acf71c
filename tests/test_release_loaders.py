"""The built sample release through the real loaders people use, offline: every config of
its card with Hugging Face `datasets`, every cell with BEIR's GenericDataLoader, the three
tasks with MTEB (a tiny random-weight model), and the loading snippets of the card and of
the project README, run as written (the named model swapped for the tiny one)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re

# no hub, no network: set before datasets / huggingface_hub are imported anywhere in the session
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402

from tests.conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.slow
LANGS = ["en", "zh", "ja", "fr", "ru", "es"]


@pytest.fixture(autouse=True)
def offline_datasets(tmp_path, monkeypatch):
    """datasets' Arrow cache in the test's folder (not ~/.cache), offline whatever was imported first."""
    import datasets
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    datasets.disable_progress_bars()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tests.tiny_model import tiny_model

    return tiny_model(tmp_path_factory.mktemp("tiny-model"))


def _card_configs(release) -> list[dict]:
    text = (release / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n")[1])["configs"]


def test_every_config_of_the_card_loads_with_datasets(sample_build):
    from datasets import get_dataset_config_names, load_dataset

    release = sample_build["release"]
    manifest = json.loads((release / "manifest.json").read_text())
    configs = _card_configs(release)
    assert sorted(get_dataset_config_names(str(release))) == sorted(c["config_name"] for c in configs)
    columns = {"corpus": ["_id", "title", "text"], "queries": ["_id", "text", "lang", "cuis", "pivot_text", "provenance", "split"],
               "qrels": ["query-id", "corpus-id", "score"], "top_ranked": ["query-id", "corpus-ids"]}
    loaded = {}
    for c in configs:
        task, lang, kind = c["config_name"].split("-", 2)
        for f in c["data_files"]:
            ds = load_dataset(str(release), c["config_name"], split=f["split"])
            assert ds.column_names == columns[kind], c["config_name"]
            loaded[(task, lang, kind)] = ds
    for task in ("xqa", "cd", "evidence"):
        for lang in LANGS:
            cell = manifest["cells"][f"{task}/{lang}"]
            assert loaded[(task, lang, "corpus")].num_rows == cell["documents"]
            assert loaded[(task, lang, "queries")].num_rows == cell["queries"]  # the sample has no dev split
            assert loaded[(task, lang, "qrels")].num_rows == cell["qrels"]
            assert set(loaded[(task, lang, "queries")]["lang"]) == {lang}
    sets = {json.loads(l)["set_id"]: json.loads(l) for l in (release / "cd" / "confusion_sets.jsonl").read_text().splitlines()}
    for lang in LANGS:
        ranked = loaded[("cd", lang, "top_ranked")]
        assert ranked.num_rows == manifest["cells"][f"cd/{lang}"]["queries"]
        for row in ranked:
            s = sets[row["query-id"]]
            assert row["corpus-ids"] == sorted([s["target_cui"], *s["distractor_cuis"]])


def test_every_cell_loads_with_beir(sample_build):
    from beir.datasets.data_loader import GenericDataLoader

    release = sample_build["release"]
    manifest = json.loads((release / "manifest.json").read_text())
    for cell, c in sorted(manifest["cells"].items()):
        corpus, queries, qrels = GenericDataLoader(data_folder=str(release / cell)).load(split="test")
        assert (len(corpus), len(queries), sum(len(v) for v in qrels.values())) == (c["documents"], c["queries"], c["qrels"]), cell
        first = json.loads((release / cell / "queries.jsonl").read_text(encoding="utf-8").splitlines()[0])
        assert queries[first["_id"]] == first["text"]


def test_mteb_evaluates_the_sample(sample_build, tiny):
    import mteb
    from sentence_transformers import SentenceTransformer

    from tasks.loaders.mteb_tasks import release_tasks

    tasks = release_tasks(sample_build["release"])
    assert [t.metadata.name for t in tasks] == ["MMedBenchIR-XQARetrieval", "MMedBenchIR-CDReranking", "MMedBenchIR-EvidenceRetrieval"]
    assert [t.metadata.type for t in tasks] == ["Retrieval", "Reranking", "Retrieval"]
    manifest = json.loads((sample_build["release"] / "manifest.json").read_text())
    assert {t.metadata.dataset["revision"] for t in tasks} == {manifest["build_id"]}
    assert tasks[0].metadata.eval_langs["xqa-ja"] == ["jpn-Jpan", "eng-Latn"]
    assert tasks[1].metadata.eval_langs["cd-zh"] == ["zho-Hans", "eng-Latn"]
    model = SentenceTransformer(str(tiny), device="cpu")
    results = mteb.evaluate(model, tasks, cache=None, show_progress_bar=False)
    scores = {r.task_name: {s["hf_subset"]: s for s in r.scores["test"]} for r in results.task_results}
    for t in tasks:
        task = t.metadata.name
        prefix = {"MMedBenchIR-XQARetrieval": "xqa", "MMedBenchIR-CDReranking": "cd", "MMedBenchIR-EvidenceRetrieval": "evidence"}[task]
        assert sorted(scores[task]) == sorted(f"{prefix}-{l}" for l in LANGS)
        for s in scores[task].values():
            assert 0.0 <= s["main_score"] <= 1.0
    # cd is reranking: each query is ranked among its own 4 candidates (target + 3 distractors),
    # so the target is always within the top 5; retrieval over a whole corpus gives no such bound
    assert {s["recall_at_5"] for s in scores["MMedBenchIR-CDReranking"].values()} == {1.0}
    assert min(s["recall_at_5"] for s in scores["MMedBenchIR-XQARetrieval"].values()) < 1.0
    assert {s["main_score"] == s["mrr_at_10"] for s in scores["MMedBenchIR-CDReranking"].values()} == {True}


def _python_blocks(markdown: str, section: str) -> list[str]:
    body = markdown.split(section, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def _run(code: str, cwd, model) -> str:
    code = re.sub(r'SentenceTransformer\("[^"]+"\)', f'SentenceTransformer("{model}", device="cpu")', code)
    out = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
    finally:
        os.chdir(old)
    return out.getvalue()


def test_the_cards_loading_snippets_run(sample_build, tiny):
    card = (sample_build["release"] / "README.md").read_text(encoding="utf-8")
    datasets_code, mteb_code, beir_code = _python_blocks(card, "## Loading")
    assert _run(datasets_code, sample_build["base"], tiny) == "58 6 6 ['C0004045', 'C0349476', 'C0546817', 'C3163894']\n"
    assert _run(beir_code, sample_build["base"], tiny) == "58 6 6\n"
    lines = _run(mteb_code, sample_build["base"], tiny).splitlines()
    assert [l.split()[0] for l in lines] == ["MMedBenchIR-XQARetrieval", "MMedBenchIR-CDReranking", "MMedBenchIR-EvidenceRetrieval"]


def test_the_readme_loading_snippets_run(sample_build, tiny):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    datasets_code, mteb_code, beir_code = _python_blocks(readme, "## Loading a release")
    assert _run(datasets_code, sample_build["base"], tiny) == "58 6 6 9\n"
    assert _run(beir_code, sample_build["base"], tiny) == "65 6 6\n"
    lines = _run(mteb_code, sample_build["base"], tiny).splitlines()
    assert len(lines) == 3 and all(0.0 <= float(l.split()[1]) <= 1.0 for l in lines)
