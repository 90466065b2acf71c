"""The built sample release through the real loaders people use, offline: every config of
its card with Hugging Face `datasets`, every cell with BEIR's GenericDataLoader, the three
tasks with MTEB (a tiny random-weight model, through the card's snippet), and the loading snippets of the card and of
the project README, run as written (the named model swapped for the tiny one)."""
from __future__ import annotations

import contextlib
import copy
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


class _CardYamlParsedOnce:
    """`yaml` as huggingface_hub's repocard module sees it, but a front matter it has parsed
    before is not parsed again: `load_dataset` parses the card's YAML on every call, and MTEB
    makes one per subset and split (253 over the sample, a quarter of the MTEB run's time,
    each parse of the same text). The same loader (PyYAML's `safe_load`) parses each distinct
    text once; every call gets its own deep copy of the result, as a fresh parse would give."""

    def __init__(self):
        self.parsed: dict[str, object] = {}

    def __getattr__(self, name):
        return getattr(yaml, name)

    def safe_load(self, stream):
        if not isinstance(stream, str):
            return yaml.safe_load(stream)
        if stream not in self.parsed:
            self.parsed[stream] = yaml.safe_load(stream)
        return copy.deepcopy(self.parsed[stream])


@pytest.fixture(autouse=True)
def offline_datasets(tmp_path, monkeypatch):
    """datasets' Arrow cache in the test's folder (not ~/.cache), offline whatever was imported
    first; the card's front matter parsed once per text (`_CardYamlParsedOnce`)."""
    import datasets
    import huggingface_hub.constants
    import huggingface_hub.repocard

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.repocard, "yaml", _CardYamlParsedOnce())
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
            assert ds.column_names == columns[kind.removeprefix("pivot-")], c["config_name"]
            loaded[(task, lang, kind)] = ds
    # a pivot subset for every non-English cell of the sample (its sources all carry English), none for English
    assert {(t, l) for t, l, k in loaded if k.startswith("pivot-")} == {(t, l) for t in ("xqa", "cd", "evidence") for l in LANGS[1:]}
    for task in ("xqa", "cd", "evidence"):
        for lang in LANGS:
            cell = manifest["cells"][f"{task}/{lang}"]
            assert loaded[(task, lang, "corpus")].num_rows == cell["documents"]
            assert loaded[(task, lang, "queries")].num_rows == cell["queries"]  # the sample has no dev split
            assert loaded[(task, lang, "qrels")].num_rows == cell["qrels"]
            assert set(loaded[(task, lang, "queries")]["lang"]) == {lang}
            if lang != "en":
                pivots = [json.loads(l) for l in (release / task / lang / "pivot-queries.jsonl").read_text().splitlines()]
                assert cell["pivots"]["queries"] == len(pivots) == cell["queries"]
                assert loaded[(task, lang, "pivot-queries")].to_list() == pivots
                assert loaded[(task, lang, "pivot-corpus")].num_rows == cell["documents"]
                assert loaded[(task, lang, "pivot-qrels")].num_rows == cell["qrels"]
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


def _pivot_rows(cell_dir) -> list[dict]:
    return [json.loads(l) for l in (cell_dir / "pivot-queries.jsonl").read_text(encoding="utf-8").splitlines()]


def _qrel_rows(path) -> list[list[str]]:
    return [l.split("\t") for l in path.read_text(encoding="utf-8").splitlines()[1:] if l]


def test_a_pivot_subset_loads_with_datasets(sample_build):
    """The pivot control of xqa/ja: its queries in English under their Japanese ids, and the cell's qrels."""
    from datasets import load_dataset

    release = sample_build["release"]
    cell = release / "xqa" / "ja"
    native = [json.loads(l) for l in (cell / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = load_dataset(str(release), "xqa-ja-pivot-queries", split="test")
    qrels = load_dataset(str(release), "xqa-ja-pivot-qrels", split="test")
    corpus = load_dataset(str(release), "xqa-ja-pivot-corpus", split="test")
    assert queries["_id"] == [q["_id"] for q in native]  # every Japanese query has an English pivot in the sample
    assert queries["text"] == [q["pivot_text"] for q in native]
    assert set(queries["lang"]) == {"en"} and set(queries["pivot_text"]) == {None}
    assert sorted(zip(qrels["query-id"], qrels["corpus-id"])) == sorted((q, d) for q, d, _ in _qrel_rows(cell / "qrels" / "test.tsv"))
    assert corpus.num_rows == sum(1 for _ in (cell / "corpus.jsonl").open())
    top = load_dataset(str(release), "cd-fr-pivot-top_ranked", split="test")
    assert top.to_list() == load_dataset(str(release), "cd-fr-top_ranked", split="test").to_list()


def test_every_pivot_control_loads_with_beir(sample_build):
    from beir.datasets.data_loader import GenericDataLoader

    release = sample_build["release"]
    manifest = json.loads((release / "manifest.json").read_text())
    for cell, c in sorted(manifest["cells"].items()):
        if cell.endswith("/en"):
            assert "pivots" not in c and not (release / cell / "pivot-queries.jsonl").exists()
            continue
        pivots = {r["_id"]: r["text"] for r in _pivot_rows(release / cell)}
        qrels_rows = _qrel_rows(release / cell / "pivot-qrels" / "test.tsv")
        corpus, queries, qrels = GenericDataLoader(data_folder=str(release / cell), prefix="pivot").load(split="test")
        assert (len(corpus), queries, sum(len(v) for v in qrels.values())) == (c["documents"], pivots, len(qrels_rows)), cell
        # every sample query has a pivot, so the cell's own qrels serve the pivot query file as well
        corpus, queries, qrels = GenericDataLoader(data_folder=str(release / cell), query_file="pivot-queries.jsonl").load(split="test")
        assert c["pivots"]["queries"] == c["queries"]
        assert (queries, sum(len(v) for v in qrels.values())) == (pivots, c["qrels"]), cell


def test_mteb_loads_the_pivot_subsets(sample_build):
    from tasks.loaders.mteb_tasks import release_tasks

    release = sample_build["release"]
    tasks = {t.metadata.name: t for t in release_tasks(release)}
    xqa, cd = tasks["MMedBenchIR-XQARetrieval"], tasks["MMedBenchIR-CDReranking"]
    assert xqa.metadata.eval_langs["xqa-ja-pivot"] == ["eng-Latn"]
    assert sorted(k for k in cd.metadata.eval_langs if k.endswith("-pivot")) == [f"cd-{l}-pivot" for l in sorted(LANGS[1:])]
    # only the subsets read below (MTEB's own filter; loading every subset took 3 times as long)
    xqa.filter_languages(None, hf_subsets=["xqa-ja-pivot"])
    cd.filter_languages(None, hf_subsets=["cd-zh-pivot", "cd-zh"])
    for task, cell in ((xqa, "xqa/ja"), (cd, "cd/zh")):
        task.load_data()
        data = task.dataset[cell.replace("/", "-") + "-pivot"]["test"]
        pivots = _pivot_rows(release / cell)
        qrels_rows = _qrel_rows(release / cell / "pivot-qrels" / "test.tsv")
        assert sorted(data["queries"]["id"]) == sorted(r["_id"] for r in pivots)
        assert dict(zip(data["queries"]["id"], data["queries"]["text"])) == {r["_id"]: r["text"] for r in pivots}
        assert data["corpus"].num_rows == sum(1 for _ in (release / cell / "corpus.jsonl").open())
        assert sum(len(v) for v in data["relevant_docs"].values()) == len(qrels_rows)
    assert cd.dataset["cd-zh-pivot"]["test"]["top_ranked"] == cd.dataset["cd-zh"]["test"]["top_ranked"]


def _python_blocks(markdown: str, section: str) -> list[str]:
    body = markdown.split(section, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def _run(code: str, cwd, model, namespace: dict | None = None) -> str:
    """Run a snippet as written (the named model swapped for the tiny one); its variables
    are left in `namespace`."""
    code = re.sub(r'SentenceTransformer\("[^"]+"\)', f'SentenceTransformer("{model}", device="cpu")', code)
    out = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<snippet>", "exec"), namespace if namespace is not None else {"__name__": "__snippet__"})
    finally:
        os.chdir(old)
    return out.getvalue()


def _check_mteb_results(release, tasks, results) -> None:
    """What MTEB made of the release: three tasks named, typed and versioned from the
    manifest, a score for every cell and pivot control, cd scored as reranking."""
    assert [t.metadata.name for t in tasks] == ["MMedBenchIR-XQARetrieval", "MMedBenchIR-CDReranking", "MMedBenchIR-EvidenceRetrieval"]
    assert [t.metadata.type for t in tasks] == ["Retrieval", "Reranking", "Retrieval"]
    manifest = json.loads((release / "manifest.json").read_text())
    assert {t.metadata.dataset["revision"] for t in tasks} == {manifest["build_id"]}
    assert tasks[0].metadata.eval_langs["xqa-ja"] == ["jpn-Jpan", "eng-Latn"]
    assert tasks[1].metadata.eval_langs["cd-zh"] == ["zho-Hans", "eng-Latn"]
    scores = {r.task_name: {s["hf_subset"]: s for s in r.scores["test"]} for r in results.task_results}
    for t in tasks:
        task = t.metadata.name
        prefix = {"MMedBenchIR-XQARetrieval": "xqa", "MMedBenchIR-CDReranking": "cd", "MMedBenchIR-EvidenceRetrieval": "evidence"}[task]
        assert sorted(scores[task]) == sorted([f"{prefix}-{l}" for l in LANGS] + [f"{prefix}-{l}-pivot" for l in LANGS[1:]])
        for s in scores[task].values():
            assert 0.0 <= s["main_score"] <= 1.0
    # cd is reranking: each query is ranked among its own 4 candidates (target + 3 distractors),
    # so the target is always within the top 5; retrieval over a whole corpus gives no such bound
    assert {s["recall_at_5"] for s in scores["MMedBenchIR-CDReranking"].values()} == {1.0}
    assert min(s["recall_at_5"] for s in scores["MMedBenchIR-XQARetrieval"].values()) < 1.0
    assert {s["main_score"] == s["mrr_at_10"] for s in scores["MMedBenchIR-CDReranking"].values()} == {True}


def test_the_cards_loading_snippets_run(sample_build, tiny):
    card = (sample_build["release"] / "README.md").read_text(encoding="utf-8")
    datasets_code, mteb_code, beir_code = _python_blocks(card, "## Loading")
    assert _run(datasets_code, sample_build["base"], tiny) == "58 6 6 ['C0004045', 'C0349476', 'C0546817', 'C3163894']\n6 en\n"
    assert _run(beir_code, sample_build["base"], tiny) == "58 6 6\n58 6 6\n"  # xqa/en, then xqa/es's pivot control
    assert 'GenericDataLoader(data_folder="releases/0.1.0/xqa/es", prefix="pivot")' in beir_code
    # MTEB evaluates the sample once, through the card's own snippet (the suite's one full
    # MTEB run besides the README's): its printed lines, then the results it leaves
    namespace: dict = {"__name__": "__snippet__"}
    lines = _run(mteb_code, sample_build["base"], tiny, namespace).splitlines()
    assert [l.split()[0] for l in lines] == ["MMedBenchIR-XQARetrieval", "MMedBenchIR-CDReranking", "MMedBenchIR-EvidenceRetrieval"]
    _check_mteb_results(sample_build["release"], namespace["tasks"], namespace["results"])


def test_the_readme_loading_snippets_run(sample_build, tiny):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    datasets_code, mteb_code, beir_code = _python_blocks(readme, "## Loading a release")
    assert _run(datasets_code, sample_build["base"], tiny) == "58 6 6 9\n"
    assert _run(beir_code, sample_build["base"], tiny) == "65 6 6\n"
    lines = _run(mteb_code, sample_build["base"], tiny).splitlines()  # one task (the card's snippet runs all three)
    assert len(lines) == 1 and lines[0].split()[0] == "MMedBenchIR-XQARetrieval" and 0.0 <= float(lines[0].split()[1]) <= 1.0
