"""`mmedbench evaluate`: metrics against hand-computed values, TREC runs that re-score to
the reported numbers, tiers, gaps, empty cells, determinism, one-line errors."""
from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from mmedbench.cli import app
from schemas.results import EvaluationResults
from tasks.evaluation.metrics import all_tied, mean_metrics, per_query, within_set
from tasks.evaluation.runs import read_qrels, read_run, trec_order, write_run
from tasks.evaluation.stage import evaluate_release
from tests.evaluation_release import BUILD_ID, make_tiny_release, reseal

runner = CliRunner()


# --- metrics on a toy run, by hand ----------------------------------------------------------

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}, "q3": {"d9": 1}, "q4": {"x": 1}}
RUN = {
    "q1": {"d0": 0.9, "d1": 0.8},  # relevant at rank 2
    "q2": {"d2": 3.0, "d5": 2.0, "d3": 1.0},  # relevant at ranks 1 and 3
    # q3: nothing retrieved (trec_eval -c: it still counts, as 0)
    "q4": {f"n{i:02d}": 20.0 - i for i in range(10)} | {"x": 5.0},  # relevant at rank 11
}


def test_per_query_metrics_are_trec_evals_by_hand():
    got = per_query(QRELS, RUN)
    assert got["q1"] == pytest.approx({"ndcg_at_10": 1 / math.log2(3), "recall_at_100": 1.0, "mrr_at_10": 0.5})
    idcg = 1 + 1 / math.log2(3)
    assert got["q2"] == pytest.approx({"ndcg_at_10": (1 + 1 / math.log2(4)) / idcg, "recall_at_100": 1.0, "mrr_at_10": 1.0})
    assert got["q3"] == {"ndcg_at_10": 0.0, "recall_at_100": 0.0, "mrr_at_10": 0.0}
    # found at rank 11: in Recall@100, not in nDCG@10 nor MRR@10 (the run is cut at 10 first)
    assert got["q4"] == pytest.approx({"ndcg_at_10": 0.0, "recall_at_100": 1.0, "mrr_at_10": 0.0})
    means = mean_metrics(got, list(QRELS))
    assert means["mrr_at_10"] == pytest.approx((0.5 + 1.0) / 4)
    assert means["recall_at_100"] == pytest.approx(3 / 4)


def test_trec_order_breaks_ties_like_trec_eval():
    run = {"q": {"a": 1.0, "b": 1.0, "c": 2.0}}
    assert [d for d, _ in trec_order(run["q"])] == ["c", "b", "a"]
    # trec_eval ranks the tied relevant "a" after "b": reciprocal rank 1/3
    assert per_query({"q": {"a": 1}}, run)["q"]["mrr_at_10"] == pytest.approx(1 / 3)


def test_within_set_counts_a_tie_as_its_expectation():
    assert within_set("t", {"t": 2.0, "a": 1.0, "b": 0.0}) == (1.0, 1.0, False)
    assert within_set("t", {"t": 1.0, "a": 1.0, "b": 0.0}) == (0.5, 0.75, True)
    assert within_set("t", {"t": 0.0, "a": 1.0, "b": 2.0}) == (0.0, pytest.approx(1 / 3), False)
    acc, rr, tied = within_set("t", {"t": 0.0, "a": 0.0, "b": 0.0, "c": 0.0})
    assert (acc, tied) == (0.25, True) and rr == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)


@pytest.mark.parametrize("scores, tied", [
    ({"t": 0.0, "a": 0.0, "b": 0.0, "c": 0.0}, True),  # a cross-script query under BM25: nothing matched
    ({"t": 1.5, "a": 1.5, "b": 1.5}, True),  # equal, not only zero
    ({"t": 0.0, "a": 0.0, "b": 0.0, "c": 0.1}, False),  # one member told apart
    ({"t": 1.0, "a": 1.0, "b": 0.0}, False),  # the target tied, but not with every member
    ({"t": 2.0, "a": 0.0, "b": 0.0}, False),
])
def test_a_set_is_all_tied_only_when_every_member_scored_the_same(scores, tied):
    assert all_tied(scores) is tied


def test_a_run_file_is_written_in_trec_evals_order_and_reads_back(tmp_path):
    write_run(tmp_path / "r.trec", {"q2": {"b": 1.0, "a": 1.0}, "q1": {"z": 0.5, "y": 2.25}}, "bm25")
    assert (tmp_path / "r.trec").read_text().splitlines() == [
        "q1 Q0 y 1 2.250000 bm25", "q1 Q0 z 2 0.500000 bm25", "q2 Q0 b 1 1.000000 bm25", "q2 Q0 a 2 1.000000 bm25"]
    assert read_run(tmp_path / "r.trec") == {"q1": {"y": 2.25, "z": 0.5}, "q2": {"a": 1.0, "b": 1.0}}


# --- a whole evaluation of the tiny release ----------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("tiny")
    release = make_tiny_release(base / "release")
    res = evaluate_release(release, ["bm25"], base / "results", ["test", "dev"])
    return {"release": release, "out": base / "results", "res": res, "base": base}


def _cell(res, task, lang, split="test"):
    return next(c for c in res.cells if (c.task, c.lang, c.split) == (task, lang, split))


def test_cell_scores_match_the_hand_worked_bm25(tiny):
    res = tiny["res"]
    m = _cell(res, "xqa", "en").metrics  # 2 of 3 queries find their passage first; "kidney stones" finds nothing
    assert (m.ndcg_at_10, m.recall_at_100, m.mrr_at_10) == (0.666667, 0.666667, 0.666667)
    assert _cell(res, "xqa", "en", "dev").metrics.ndcg_at_10 == 1.0
    # Sudachi finds 大腿/ヘルニア inside the unsegmented passage; 喘息 matches nothing
    assert _cell(res, "xqa", "ja").metrics.ndcg_at_10 == 0.5
    assert _cell(res, "cd", "en").metrics.ndcg_at_10 == 1.0
    assert _cell(res, "cd", "ja").metrics.ndcg_at_10 == 0.0
    assert _cell(res, "evidence", "en").metrics.mrr_at_10 == 1.0
    assert _cell(res, "xqa", "ja", "dev").metrics is None  # no dev query: no number


def test_an_empty_cell_has_no_number_anywhere(tiny):
    res = tiny["res"]
    empty = _cell(res, "evidence", "ja")
    assert (empty.queries, empty.metrics, empty.run) == (0, None, None)
    assert not (tiny["out"] / "runs" / "bm25" / "evidence-ja.trec").exists()
    macro = {(m.split, m.over, m.key): m for m in res.macro}
    assert macro[("test", "task", "evidence")].cells == ["evidence/en"]
    assert macro[("test", "lang", "ja")].cells == ["xqa/ja", "cd/ja"]
    assert not any(g.task == "evidence" for g in res.pivot_gaps)
    assert "| evidence | 1.000 [1.00, 1.00] | empty | 1.000 [1.00, 1.00] |" in (tiny["out"] / "results.md").read_text()


def test_macro_averages(tiny):
    macro = {(m.split, m.over, m.key): m.metrics.ndcg_at_10 for m in tiny["res"].macro}
    assert macro[("test", "task", "xqa")] == round((2 / 3 + 1 / 2) / 2, 6)
    assert macro[("test", "task", "cd")] == 0.5
    assert macro[("test", "lang", "en")] == round((2 / 3 + 1 + 1) / 3, 6)
    assert macro[("test", "lang", "ja")] == 0.25


def test_the_language_gap_is_read_on_the_same_items(tiny):
    """Pivot minus native, paired per query, on the cells with a pivot control; never English
    cell minus language cell (different items)."""
    gaps = {(g.split, g.task, g.lang): g for g in tiny["res"].pivot_gaps}
    assert sorted(gaps) == [("test", "cd", "ja"), ("test", "xqa", "ja")]
    xqa = gaps[("test", "xqa", "ja")]  # per query: xqa-ja-1 1 -> 0, xqa-ja-2 0 -> 1
    assert (xqa.queries, xqa.cell_queries, xqa.native, xqa.pivot, xqa.gap) == (2, 2, 0.5, 0.5, 0.0)
    # two differences, -1 and +1: a quarter of the resamples are all -1, a quarter all +1
    assert (xqa.gap_interval.low, xqa.gap_interval.high) == (-1.0, 1.0)
    assert (xqa.native_interval.low, xqa.native_interval.high) == (0.0, 1.0)
    cd = gaps[("test", "cd", "ja")]
    assert (cd.queries, cd.native, cd.pivot, cd.gap, cd.gap_interval.low, cd.gap_interval.high) == (1, 0.0, 1.0, 1.0, 1.0, 1.0)
    assert not xqa.item_difficulty and not cd.item_difficulty
    pivot_cells = {(c.task, c.lang, c.split): c for c in tiny["res"].cells if c.query_set == "pivot"}
    assert sorted(pivot_cells) == [("cd", "ja", "test"), ("xqa", "ja", "test")]  # no dev query has a pivot
    assert pivot_cells[("cd", "ja", "test")].run == "runs/bm25/cd-ja-pivot.trec"
    means = {(m.over, m.key): (m.cells, m.gap) for m in tiny["res"].gap_means}
    assert means == {("task", "xqa"): (["xqa/ja"], 0.0), ("task", "cd"): (["cd/ja"], 1.0), ("lang", "ja"): (["xqa/ja", "cd/ja"], 0.5),
                     ("all", "all"): (["xqa/ja", "cd/ja"], 0.5)}
    assert tiny["res"].pivotless == {}


def test_every_score_carries_its_bootstrap_interval(tiny):
    xqa_en = _cell(tiny["res"], "xqa", "en")  # per query 1, 1, 0
    low, high = xqa_en.intervals["ndcg_at_10"].low, xqa_en.intervals["ndcg_at_10"].high
    assert (low, high) == (0.0, 1.0) and low <= xqa_en.metrics.ndcg_at_10 <= high
    cd_en = _cell(tiny["res"], "cd", "en")  # every query 1: no spread
    assert (cd_en.intervals["ndcg_at_10"].low, cd_en.intervals["ndcg_at_10"].high) == (1.0, 1.0)
    for m in tiny["res"].macro:
        for metric, iv in m.intervals.items():
            assert iv.low <= getattr(m.metrics, metric) <= iv.high, (m, metric)


def test_concept_discrimination_per_tier(tiny):
    tiers = {(t.lang, t.tier): t for t in tiny["res"].tiers if t.split == "test"}
    assert (tiers[("en", "hard")].count, tiers[("en", "hard")].accuracy_at_1, tiers[("en", "hard")].mrr) == (1, 1.0, 1.0)
    ja = tiers[("ja", "medium")]  # nothing matches: the target ties with both distractors
    assert (ja.count, ja.ties, ja.accuracy_at_1, ja.mrr, ja.retrieval_ndcg_at_10) == (1, 1, 0.333333, 0.611111, 0.0)
    assert (tiers[("ja", "easy")].count, tiers[("ja", "easy")].accuracy_at_1) == (0, None)


def test_rescoring_the_run_files_gives_the_reported_numbers(tiny):
    """What `trec_eval -c` does on runs/ and qrels/, through trec_eval's code (pytrec_eval)."""
    import pytrec_eval

    res, out = tiny["res"], tiny["out"]
    checked = 0
    for c in res.cells:
        if c.metrics is None:
            continue
        pivot = "-pivot" if c.query_set == "pivot" else ""
        qrels = read_qrels(out / "qrels" / f"{c.task}-{c.lang}{pivot}.{c.split}.qrels")
        run = read_run(out / c.run)
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
        top10 = {q: dict(sorted(d.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:10]) for q, d in run.items()}
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
        n = len(qrels)
        assert round(sum(ev.get(q, {}).get("ndcg_cut_10", 0) for q in qrels) / n, 6) == c.metrics.ndcg_at_10
        assert round(sum(ev.get(q, {}).get("recall_100", 0) for q in qrels) / n, 6) == c.metrics.recall_at_100
        assert round(sum(rr.get(q, {}).get("recip_rank", 0) for q in qrels) / n, 6) == c.metrics.mrr_at_10
        checked += 1
    assert checked == 8  # 5 filled test cells, xqa/en dev, and the two pivot controls


def test_results_json_is_the_schema_and_names_its_inputs(tiny):
    data = json.loads((tiny["out"] / "results.json").read_text())
    res = EvaluationResults.model_validate(data)
    assert res.build_id == BUILD_ID and res.release == "0.0.1"
    assert "xqa/ja/corpus.jsonl" in res.inputs and "cd/confusion_sets.jsonl" in res.inputs
    assert str(tiny["base"]) not in (tiny["out"] / "results.json").read_text()  # no absolute paths
    # no cd query in dev: no tier picture for it
    assert sorted(p.name for p in (tiny["out"] / "figures").iterdir()) == [
        "cd-tiers-bm25-test.png", "gap-by-family-test.png", "ndcg10-bm25-dev.png", "ndcg10-bm25-test.png", "pivot-gap-test.png"]
    assert "xqa/ja/pivot-queries.jsonl" in res.inputs


def test_the_same_release_gives_byte_identical_results(tiny, tmp_path):
    evaluate_release(tiny["release"], ["bm25"], tmp_path / "again", ["test", "dev"])
    for rel in ["results.json", "runs/bm25/xqa-ja.trec", "runs/bm25/cd-en.trec", "figures/ndcg10-bm25-test.png"]:
        assert (tmp_path / "again" / rel).read_bytes() == (tiny["out"] / rel).read_bytes(), rel


# --- the command -------------------------------------------------------------------------------

def test_the_command_writes_everything(tiny, tmp_path):
    r = runner.invoke(app, ["evaluate", str(tiny["release"]), "--out", str(tmp_path / "res"), "--split", "test",
                            "--cache-dir", str(tmp_path / "cache")])
    assert r.exit_code == 0, r.output
    assert "[20/20] rrf-bm25-use-m-v3-q6 evidence/en" in r.output  # progress: cells done, four default systems
    assert "use-m-v3-q6: encoded 4/4 documents of xqa corpus" in r.output  # and documents as they are encoded
    assert (tmp_path / "res" / "results.md").exists() and (tmp_path / "res" / "runs" / "bm25" / "cd-ja.trec").exists()


@pytest.mark.parametrize("args,message", [
    (["{missing}"], "not a release folder (no manifest.json)"),
    (["{release}", "-r", "dense:{tmp}/nowhere"], "not a local model folder"),
    (["{release}", "-r", "dense:{tmp}"], "not a sentence-transformers or transformers model folder"),
    (["{release}", "-r", "splade"], "unknown retriever"),
    (["{release}", "--split", "train"], "unknown split 'train'"),
    (["{release}", "--out", "{release}/evaluation"], "is inside the release folder"),
])
def test_a_users_mistake_is_one_line_and_exit_2(tiny, tmp_path, args, message):
    fill = {"missing": str(tmp_path / "missing"), "release": str(tiny["release"]), "tmp": str(tmp_path)}
    argv = ["evaluate"] + [a.format(**fill) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "out")]
    r = runner.invoke(app, argv)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], r.output


def test_a_release_without_a_dev_split_says_so(tmp_path):
    release = make_tiny_release(tmp_path / "release")
    for p in release.rglob("dev.tsv"):
        p.unlink()
    reseal(release)
    r = runner.invoke(app, ["evaluate", str(release), "--split", "dev", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "has no 'dev' split" in r.output


def test_a_users_run_file_in_out_is_never_deleted(tiny, tmp_path):
    """runs/<x>/my.trec is the user's, not a results folder's leftover (issue 29)."""
    (tmp_path / "runs" / "old").mkdir(parents=True)
    (tmp_path / "runs" / "old" / "my.trec").write_text("mine")
    r = runner.invoke(app, ["evaluate", str(tiny["release"]), "--out", str(tmp_path), "-q"])
    assert r.exit_code == 2, r.output
    assert r.output.splitlines() == [f"error: {tmp_path}: holds files mmedbench evaluate did not write (runs/old/my.trec); "
                                     "nothing was deleted: choose an empty or new --out folder"]
    assert (tmp_path / "runs" / "old" / "my.trec").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_a_foreign_out_folder_is_never_overwritten(tiny, tmp_path):
    (tmp_path / "mine.txt").write_text("keep")
    r = runner.invoke(app, ["evaluate", str(tiny["release"]), "--out", str(tmp_path)])
    assert r.exit_code == 2 and "holds files mmedbench evaluate did not write (mine.txt)" in r.output
    assert (tmp_path / "mine.txt").read_text() == "keep"


def test_evaluate_never_imports_prefect(tiny, tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = ("import sys; from typer.testing import CliRunner; from mmedbench.cli import app; "
            f"r = CliRunner().invoke(app, ['evaluate', {str(tiny['release'])!r}, '-r', 'bm25', '--out', {str(tmp_path / 'o')!r}, '-q']); "
            "assert r.exit_code == 0, r.output; print(sorted(m for m in sys.modules if m.split('.')[0] in ('prefect', 'torch')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"  # neither Prefect nor, for BM25 alone, torch


def test_a_cell_without_a_pivot_control_says_why_from_the_manifest(tmp_path):
    from tests.evaluation_release import reseal

    release = make_tiny_release(tmp_path / "release")
    (release / "xqa" / "ja" / "pivot-queries.jsonl").unlink()
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["cells"]["xqa/ja"]["pivots"] = {"queries": 0, "of": 2, "reason": "its source has no English text"}
    (release / "manifest.json").write_text(json.dumps(manifest))
    res = evaluate_release(reseal(release), ["bm25"], tmp_path / "out")
    assert res.pivotless == {"xqa/ja": "its source has no English text"}
    assert [(g.task, g.lang) for g in res.pivot_gaps] == [("cd", "ja")]
    assert "- `xqa/ja`: its source has no English text" in (tmp_path / "out" / "results.md").read_text()
