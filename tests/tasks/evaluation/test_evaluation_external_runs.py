"""`mmedbench evaluate --run NAME=DIR`: another system's TREC runs, scored as the project's
own are (pytrec_eval, trec_eval -c), with pivots; one line per malformed file, exit 2."""
from __future__ import annotations

import json

import pytest
import pytrec_eval
from typer.testing import CliRunner

from mmedbench.cli import app
from schemas.results import EvaluationResults
from tasks.evaluation.external import parse_run
from tests.evaluation_release import make_tiny_release

runner = CliRunner()

# written by hand, as any system would: xqa-ja-2 has no line (it scores 0, counted missing)
XQA_JA = "xqa-ja-1 Q0 p3 1 2.5 mine\nxqa-ja-1 Q0 p1 2 1.0 mine\n"
XQA_JA_PIVOT = "xqa-ja-1 Q0 p1 1 3 mine\nxqa-ja-1 Q0 p3 2 2 mine\nxqa-ja-2 Q0 p4 1 9.5 mine\n"
CD_EN = "cd-en-C0000001 Q0 C0000002 1 0.9 mine\ncd-en-C0000001 Q0 C0000001 2 0.8 mine\ncd-en-C0000004 Q0 C0000004 1 1 mine\n"


@pytest.fixture()
def release(tmp_path):
    return make_tiny_release(tmp_path / "release")


def _runs(folder, files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return folder


def _ndcg(qrels_tsv: str, run_text: str) -> float:
    """trec_eval -c -m ndcg_cut.10 through trec_eval's code, from the files alone."""
    qrels = {}
    for line in qrels_tsv.splitlines()[1:]:
        q, d, r = line.split("\t")
        qrels.setdefault(q, {})[d] = int(r)
    run = {}
    for line in run_text.splitlines():
        q, _q0, d, _rank, score, _tag = line.split()
        run.setdefault(q, {})[d] = float(score)
    per = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return sum(per.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels) / len(qrels)


def test_another_systems_runs_are_scored_with_pivots_and_missing_queries(release, tmp_path):
    runs = _runs(tmp_path / "mine", {"xqa-ja.trec": XQA_JA, "xqa-ja-pivot.trec": XQA_JA_PIVOT, "cd-en.trec": CD_EN})
    r = runner.invoke(app, ["evaluate", str(release), "--run", f"mine={runs}", "--out", str(tmp_path / "out"), "-q"])
    assert r.exit_code == 0, r.output
    assert "1 queries had no line in their run" in r.output
    res = EvaluationResults.model_validate_json((tmp_path / "out" / "results.json").read_text())
    assert [x.name for x in res.retrievers] == ["mine"] and res.retrievers[0].kind == "run"
    cells = {(c.task, c.lang, c.query_set): c for c in res.cells if c.split == "test" and c.metrics is not None}
    assert sorted(cells) == [("cd", "en", "native"), ("xqa", "ja", "native"), ("xqa", "ja", "pivot")]
    qrels = (release / "xqa" / "ja" / "qrels" / "test.tsv").read_text()
    assert cells[("xqa", "ja", "native")].metrics.ndcg_at_10 == round(_ndcg(qrels, XQA_JA), 6) == 0.5
    assert cells[("xqa", "ja", "native")].missing_queries == 1
    assert cells[("xqa", "ja", "pivot")].metrics.ndcg_at_10 == round(_ndcg(qrels, XQA_JA_PIVOT), 6)
    cd_qrels = (release / "cd" / "en" / "qrels" / "test.tsv").read_text()
    assert cells[("cd", "en", "native")].metrics.ndcg_at_10 == round(_ndcg(cd_qrels, CD_EN), 6)
    gap = next(g for g in res.pivot_gaps if (g.task, g.lang) == ("xqa", "ja"))
    assert gap.gap == round(cells[("xqa", "ja", "pivot")].metrics.ndcg_at_10 - 0.5, 6)
    # the files are copied as they are, so trec_eval on runs/ gives the numbers
    assert (tmp_path / "out" / "runs" / "mine" / "xqa-ja-pivot.trec").read_text() == XQA_JA_PIVOT
    assert set(res.run_inputs) == {"mine/xqa-ja.trec", "mine/xqa-ja-pivot.trec", "mine/cd-en.trec"}
    assert "| xqa | not run | 0.500" in (tmp_path / "out" / "results.md").read_text()  # xqa-en.trec absent


def test_a_run_and_a_retriever_are_compared_with_a_corrected_test(release, tmp_path):
    runs = _runs(tmp_path / "mine", {"xqa-ja.trec": XQA_JA, "cd-en.trec": CD_EN})
    r = runner.invoke(app, ["evaluate", str(release), "-r", "bm25", "--run", f"mine={runs}", "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 0, r.output
    res = EvaluationResults.model_validate_json((tmp_path / "o" / "results.json").read_text())
    comps = {(c.task, c.lang): c for c in res.comparisons}
    assert sorted(comps) == [("cd", "en"), ("xqa", "ja")]  # the cells both scored
    cd = comps[("cd", "en")]  # bm25 1, 1; mine 1/log2(3), 1: exact test over 2 queries
    assert (cd.retriever_a, cd.retriever_b, cd.queries) == ("bm25", "mine", 2)
    assert cd.p_value == 1.0 and cd.p_adjusted == 1.0 and not cd.significant
    again = tmp_path / "again"
    runner.invoke(app, ["evaluate", str(release), "-r", "bm25", "--run", f"mine={runs}", "--out", str(again), "-q"])
    assert (again / "results.json").read_bytes() == (tmp_path / "o" / "results.json").read_bytes()


@pytest.mark.parametrize("text,message", [
    ("q Q0 d 1 0.5\n", "run.trec:1: expected 6 fields 'query-id Q0 doc-id rank score tag', found 5"),
    ("q Q0 d 1 0.5 t\nq Q0 e one 0.4 t\n", "run.trec:2: field 'rank': expected an integer rank, got 'one'"),
    ("q Q0 d 1 nan t\n", "run.trec:1: field 'score': expected a finite number, got 'nan'"),
    ("q Q0 d 1 0.5 t\nq Q0 d 2 0.4 t\n", "run.trec:2: document 'd' is listed twice for query 'q' (trec_eval refuses this)"),
    (b"q Q0 d 1 0.5 t\nq Q0 \xff 2 0.4 t\n", "run.trec:2: expected UTF-8 text, found byte 0xff at column 6"),
])
def test_a_malformed_run_line_is_named_by_file_and_line(tmp_path, text, message):
    from common.errors import InputError

    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(InputError) as err:
        parse_run(data, tmp_path / "run.trec")
    assert str(err.value).endswith(message), str(err.value)


def test_two_bad_run_files_get_one_line_each_and_nothing_is_written(release, tmp_path):
    runs = _runs(tmp_path / "bad", {"xqa-ja.trec": "xqa-ja-1 Q0 p3 1\n", "cd-en.trec": CD_EN,
                                    "cd-ja-pivot.trec": "cd-ja-C0000002 Q0 C0000002 x 1 t\n"})
    r = runner.invoke(app, ["evaluate", str(release), "--run", f"bad={runs}", "--out", str(tmp_path / "out")])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 2 and all(l.startswith("error: ") for l in lines), r.output
    assert "xqa-ja.trec:1:" in r.output and "cd-ja-pivot.trec:1: field 'rank'" in r.output
    assert "Traceback" not in r.output and not (tmp_path / "out").exists()


@pytest.mark.parametrize("spec,message", [
    ("mine", "expected NAME=DIR"),
    ("Mine={d}", "run name 'Mine'"),
    ("mine={d}/nowhere", "is not a folder of run files"),
    ("mine={d}", "holds no run file named for a cell of this release"),
])
def test_a_bad_run_option_is_one_line(release, tmp_path, spec, message):
    (tmp_path / "empty").mkdir()
    r = runner.invoke(app, ["evaluate", str(release), "--run", spec.format(d=tmp_path / "empty"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and message in r.output, r.output


def test_a_run_named_like_a_retriever_is_refused(release, tmp_path):
    runs = _runs(tmp_path / "bm25", {"cd-en.trec": CD_EN})
    r = runner.invoke(app, ["evaluate", str(release), "-r", "bm25", "--run", f"bm25={runs}", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "two systems with the same name" in r.output
