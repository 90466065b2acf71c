"""The sample release evaluated end to end, and a build that evaluates itself."""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from schemas.records import TIERS
from schemas.results import EvaluationResults
from tasks.audit.stage import audit_release
from tasks.evaluation.metrics import per_query
from tasks.evaluation.runs import read_qrels, read_run
from tasks.evaluation.stage import evaluate_release
from tests.conftest import SAMPLE_CELLS, SAMPLE_CONFIG, SAMPLE_PIVOT_CELLS

pytestmark = pytest.mark.slow


def test_the_sample_release_is_scored_in_all_18_cells(sample_build, tmp_path):
    res = evaluate_release(sample_build["release"], ["bm25"], tmp_path / "res")
    filled = [c for c in res.cells if c.metrics is not None and c.query_set == "native"]
    assert len(filled) == SAMPLE_CELLS and all(c.queries > 0 for c in filled)
    assert sorted((m.over, m.key) for m in res.macro) == sorted(
        [("task", t) for t in ("xqa", "cd", "evidence")] + [("lang", l) for l in ("en", "zh", "ja", "fr", "ru", "es")])
    assert {(t.lang, t.tier) for t in res.tiers} == {(l, t) for l in ("en", "zh", "ja", "fr", "ru", "es")
                                                     for t in ("easy", "medium", "hard")}
    # every non-English cell of the sample has its pivot control: the gap is read on the same items
    others = ("zh", "ja", "fr", "ru", "es")
    assert sorted((g.task, g.lang) for g in res.pivot_gaps) == sorted((t, l) for t in ("xqa", "cd", "evidence") for l in others)
    assert res.pivotless == {}
    for g in res.pivot_gaps:
        assert g.queries == g.cell_queries and g.gap_interval.low <= g.gap <= g.gap_interval.high
    pivots = [c for c in res.cells if c.query_set == "pivot"]
    assert len(pivots) == SAMPLE_PIVOT_CELLS
    for c in filled + pivots:  # re-scored from the files alone, as trec_eval -c would
        tag = "-pivot" if c.query_set == "pivot" else ""
        per_q = per_query(read_qrels(tmp_path / "res" / "qrels" / f"{c.task}-{c.lang}{tag}.test.qrels"),
                          read_run(tmp_path / "res" / c.run))
        assert round(sum(v["ndcg_at_10"] for v in per_q.values()) / len(per_q), 6) == c.metrics.ndcg_at_10


def test_a_build_that_evaluates_itself_shows_the_table_on_its_card(sample_build, tmp_path):
    from flows.build_release import build_release_flow
    from tasks.evaluation.systems import DEFAULT_SYSTEMS

    result = build_release_flow(str(SAMPLE_CONFIG), release_dir=str(tmp_path / "releases"),
                                work_dir=str(sample_build["base"] / "work"), evaluate=list(DEFAULT_SYSTEMS))
    assert isinstance(result, dict), result
    release = tmp_path / "releases" / "0.1.0"
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["config"]["evaluation"]["retrievers"] == ["bm25", "minilm", "use-m", "hybrid:bm25+use-m"]
    assert "evaluation/results.json" in manifest["files"] and "evaluation/runs/bm25/cd-ja.trec" in manifest["files"]
    inside = EvaluationResults.model_validate_json((release / "evaluation" / "results.json").read_text())
    assert inside.build_id == manifest["build_id"]
    card = (release / "README.md").read_text()
    table = card.split("## Retrieval baselines", 1)[1].split("## Provenance")[0]
    xqa = next(m for m in inside.macro if (m.over, m.key) == ("task", "xqa"))
    assert f"| {xqa.metrics.ndcg_at_10:.3f} [" in table.split("| xqa |")[1].splitlines()[0]
    # the card's gap table is pivot minus native, with its picture (hashed with the release)
    gaps = card.split("## Language gap on the same items", 1)[1].split("## Provenance")[0]
    g = next(g for g in inside.pivot_gaps if (g.task, g.lang) == ("cd", "fr"))
    assert f"| bm25 | cd/fr | {g.queries} of {g.cell_queries} | {g.native:.3f} [" in gaps
    assert "](evaluation/figures/pivot-gap-test.png)" in gaps and "evaluation/figures/pivot-gap-test.png" in manifest["files"]
    # the card leads with every family's gap, each cell's separation label and their picture
    lead = card.split("## Language gap by system family", 1)[1].split("## Retrieval baselines")[0]
    assert card.index("## Language gap by system family") < card.index("## Retrieval baselines")
    for g in inside.pivot_gaps:
        family = next(r.family for r in inside.retrievers if r.name == g.retriever)
        assert f"| {g.task}/{g.lang} | {family} | {g.retriever} | {g.native:.3f} [" in lead
    assert sorted((s.task, s.lang) for s in inside.separations) == sorted(
        (t, l) for t in ("xqa", "cd", "evidence") for l in ("zh", "ja", "fr", "ru", "es"))
    for s in inside.separations:
        assert s.reading in lead and s.separates == (s.contrasts[0].interval.low > 0)
    assert "](evaluation/figures/gap-by-family-test.png)" in lead
    assert "evaluation/figures/gap-by-family-test.png" in manifest["files"]
    assert audit_release(release).passed
    # anyone re-evaluating the published release gets the very bytes the card was made from
    again = tmp_path / "again"
    evaluate_release(release, list(DEFAULT_SYSTEMS), again, threads=1, cache_dir=sample_build["base"] / "work" / "embeddings")
    assert (again / "results.json").read_bytes() == (release / "evaluation" / "results.json").read_bytes()
    # and a card never shows a table from another build
    assert "## Retrieval baselines" not in (sample_build["release"] / "README.md").read_text()


def test_runs_written_by_an_outside_script_are_scored_with_pivots(sample_build, tmp_path):
    """A system that does not use the project (tests/data/outside_ranker.py, standard library,
    run isolated) writes TREC runs; `mmedbench evaluate --run` scores them, native and pivot,
    and each cell's nDCG@10 is what pytrec_eval computes from the release's qrels and the run."""
    import subprocess
    import sys

    import pytrec_eval

    from tests.conftest import ROOT

    release, runs = sample_build["release"], tmp_path / "outside"
    subprocess.run([sys.executable, "-I", str(ROOT / "tests" / "data" / "outside_ranker.py"), str(release), str(runs)],
                   check=True, timeout=300)
    out = subprocess.run([sys.executable, "-m", "mmedbench.cli", "evaluate", str(release), "--run", f"outside={runs}",
                          "--out", str(tmp_path / "res"), "-q"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    res = EvaluationResults.model_validate_json((tmp_path / "res" / "results.json").read_text())
    scored = [c for c in res.cells if c.metrics is not None]
    assert sum(c.query_set == "pivot" for c in scored) == SAMPLE_PIVOT_CELLS
    assert sum(c.query_set == "native" for c in scored) == SAMPLE_CELLS
    for c in scored:
        lines = (release / c.task / c.lang / "qrels" / "test.tsv").read_text().splitlines()[1:]
        ids = {json.loads(l)["_id"] for l in (release / c.task / c.lang / ("pivot-queries.jsonl" if c.query_set == "pivot"
                                                                          else "queries.jsonl")).read_text().splitlines()}
        qrels = {}
        for line in lines:
            q, d, r = line.split("\t")
            if q in ids:
                qrels.setdefault(q, {})[d] = int(r)
        run = {}
        for line in (runs / Path(c.run).name).read_text().splitlines():
            q, _q0, d, _rank, score, _tag = line.split()
            run.setdefault(q, {})[d] = float(score)
        per = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        expected = sum(per.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels) / len(qrels)
        assert abs(c.metrics.ndcg_at_10 - expected) < 5e-5, (c.task, c.lang, c.query_set)
        assert c.missing_queries == sum(1 for q in qrels if q not in run)


def _within_set_from_run(run: dict[str, float], target: str, members: list[str]) -> Fraction:
    """accuracy@1 of `target` among `members` from a BM25 run file alone: a member the run
    lacks scored 0 (the sample's cd corpora hold fewer documents than a run's depth, so the
    run lists every document BM25 scores above 0); a tie counts as 1 / (tied members + 1)."""
    scores = {m: run.get(m, 0.0) for m in members}
    above = sum(1 for m in members if m != target and scores[m] > scores[target])
    tied = sum(1 for m in members if m != target and scores[m] == scores[target])
    return Fraction(0) if above else Fraction(1, tied + 1)


def test_the_tier_steps_of_the_sample_rescore_from_the_run_files(sample_build, tmp_path):
    """`mmedbench evaluate` as a user runs it: each cd cell's tier steps in results.json are
    what its run file, qrels and confusion sets give, with the p-value enumerated in exact
    arithmetic, and each cell has its row in results.md."""
    import subprocess
    import sys

    from tests.conftest import ROOT, SAMPLE_LANGUAGES
    from tests.tasks.evaluation.test_tier_steps import exact_p

    release, out_dir = sample_build["release"], tmp_path / "res"
    out = subprocess.run([sys.executable, "-m", "mmedbench.cli", "evaluate", str(release), "-r", "bm25", "--out", str(out_dir),
                          "-q"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    res = EvaluationResults.model_validate_json((out_dir / "results.json").read_text())
    assert sorted(t.lang for t in res.tier_steps) == sorted(SAMPLE_LANGUAGES)
    assert (res.statistics.tier_step_min_sets, res.statistics.tier_step_exact_up_to_patterns) == (80, 8192)
    sets = {s["set_id"]: s for s in map(json.loads, (release / "cd" / "confusion_sets.jsonl").read_text().splitlines())}
    md = (out_dir / "results.md").read_text()
    compared, at_chance = 0, set()
    for ladder in res.tier_steps:
        run: dict[str, dict[str, float]] = {}
        for line in (out_dir / "runs" / "bm25" / f"cd-{ladder.lang}.trec").read_text().splitlines():
            q, _q0, d, _rank, score, _tag = line.split()
            run.setdefault(q, {})[d] = float(score)
        qrels = (release / "cd" / ladder.lang / "qrels" / "test.tsv").read_text().splitlines()[1:]
        test_ids = sorted({line.split("\t")[0] for line in qrels})
        per_tier: dict[str, list[Fraction]] = {t: [] for t in TIERS}
        all_tied = {t: 0 for t in TIERS}
        for q in test_ids:
            s = sets[q]
            members = [s["target_cui"]] + s["distractor_cuis"]
            per_tier[s["tier"]].append(_within_set_from_run(run.get(q, {}), s["target_cui"], members))
            all_tied[s["tier"]] += len({run.get(q, {}).get(m, 0.0) for m in members}) == 1
        means = {t: sum(v) / len(v) for t, v in per_tier.items() if v}
        for step in ladder.steps:
            xs, ys = per_tier[step.upper], per_tier[step.lower]
            assert (step.upper_sets, step.lower_sets, step.verdict) == (len(xs), len(ys), "too few sets")  # < 80 sets
            if not (xs and ys):
                assert step.difference is None and step.p_value is None
                continue
            assert abs(step.difference - float(means[step.upper] - means[step.lower])) <= 5e-7  # 6 decimals
            assert step.p_value == round(float(exact_p(xs, ys)), 6)
            compared += 1
        assert ladder.strictly_ordered == (len(means) == 3 and means["easy"] > means["medium"] > means["hard"])
        assert ladder.all_tied == sum(all_tied.values())
        assert [t.all_tied for t in res.tiers if (t.retriever, t.lang, t.split) == ("bm25", ladder.lang, "test")] == \
            [all_tied[t] for t in TIERS]
        # at chance: more than half the sets tie every member, or the accuracy over the sets is not
        # above the blind guess (1 / 4 here) by more than two standard errors
        n = sum(len(v) for v in per_tier.values())
        z = (float(sum(sum(v) for v in per_tier.values())) / n - 0.25) / (0.25 * 0.75 / n) ** 0.5
        assert ladder.at_chance == (2 * sum(all_tied.values()) > n or z <= 2.0), (ladder.lang, z)
        if ladder.at_chance:
            at_chance.add(ladder.lang)
        first = ladder.steps[0]
        assert f"| bm25 | {ladder.lang} | {first.upper_sets} / {first.lower_sets} | " in md
    assert compared == 2 * len(SAMPLE_LANGUAGES)  # the sample fills every tier of every cd cell's test split
    # BM25 matches no token of a Cyrillic or CJK query in the English entries: most sets tie every member;
    # es's 9 sets (0.75 / 0.42 / 0.42) are not above the blind guess beyond noise (z 1.92)
    assert sorted(at_chance) == ["es", "ja", "ru", "zh"]
