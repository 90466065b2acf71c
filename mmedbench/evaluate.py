"""Scoring a release from Python: the public entry point behind `mmedbench evaluate`.

    from mmedbench.evaluate import RunSpec, evaluate_release
    res = evaluate_release("releases/0.1.0", ["bm25"], "results",
                           runs=[RunSpec("mine", Path("my-runs"))])
    for gap in res.pivot_gaps:
        print(gap.task, gap.lang, gap.native, gap.pivot, gap.gap, gap.gap_interval)

`res` is the `EvaluationResults` written to results.json (schema: schemas/results.py).
"""
from __future__ import annotations

from schemas.results import EvaluationResults
from tasks.evaluation.external import RunSpec
from tasks.evaluation.stage import evaluate_release

__all__ = ["EvaluationResults", "RunSpec", "evaluate_release"]
