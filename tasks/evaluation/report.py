"""results.md, and the results table a dataset card shows.

Numbers come from an EvaluationResults only; an empty cell reads "empty", never a number.
"""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from schemas.records import TASKS, TIERS
from schemas.results import EvaluationResults

METRIC_LABELS = {"ndcg_at_10": "nDCG@10", "recall_at_100": "Recall@100", "mrr_at_10": "MRR@10"}


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _langs(res: EvaluationResults) -> list[str]:
    seen = list(dict.fromkeys(c.lang for c in res.cells))
    return (["en"] if "en" in seen else []) + [l for l in seen if l != "en"]


def _grid(res: EvaluationResults, retriever: str, split: str, metric: str) -> list[str]:
    """Tasks x languages for one retriever, with the macro averages as the last column and row."""
    langs = _langs(res)
    cells = {(c.task, c.lang): c for c in res.cells if c.retriever == retriever and c.split == split}
    macro = {(m.over, m.key): m for m in res.macro if m.retriever == retriever and m.split == split}
    lines = [f"| {METRIC_LABELS[metric]} | " + " | ".join(langs) + " | task mean |",
             "|---|" + "---:|" * (len(langs) + 1)]
    for task in TASKS:
        if not any(t == task for t, _l in cells):
            continue
        row = []
        for lang in langs:
            c = cells.get((task, lang))
            row.append("" if c is None else "empty" if c.metrics is None else _f(getattr(c.metrics, metric)))
        m = macro.get(("task", task))
        lines.append(f"| {task} | " + " | ".join(row) + f" | {_f(getattr(m.metrics, metric)) if m else '-'} |")
    row = []
    for lang in langs:
        m = macro.get(("lang", lang))
        row.append(_f(getattr(m.metrics, metric)) if m else "-")
    lines.append("| language mean | " + " | ".join(row) + " | |")
    return lines


def _counts(res: EvaluationResults, split: str) -> list[str]:
    langs = _langs(res)
    first = res.retrievers[0].name
    cells = {(c.task, c.lang): c for c in res.cells if c.retriever == first and c.split == split}
    lines = [f"| queries ({split}) | " + " | ".join(langs) + " |", "|---|" + "---:|" * len(langs)]
    for task in TASKS:
        if any(t == task for t, _l in cells):
            lines.append(f"| {task} | " + " | ".join(str(cells[(task, l)].queries) if (task, l) in cells else ""
                                                     for l in langs) + " |")
    return lines


def results_table_markdown(res: EvaluationResults) -> str:
    """nDCG@10 per task and language for each retriever on the first split: the card's table."""
    split = res.splits[0]
    out = [f"nDCG@10 on the {split} split, computed by `mmedbench evaluate` from this release's own files "
           f"(build {res.build_id[:12]}); `empty`: the cell has no {split} query, so no score. "
           f"Runs, qrels and the full results (Recall@100, MRR@10, concept-discrimination tiers, "
           f"cross-lingual gaps) are in `evaluation/`.", ""]
    for r in res.retrievers:
        out += [f"**{r.name}**", ""] + _grid(res, r.name, split, "ndcg_at_10") + [""]
    return "\n".join(out)


def card_section(results_path: Path, build_id: str) -> list[str]:
    """The card's results section: only from results computed from this very build."""
    try:
        res = EvaluationResults.model_validate(json.loads(Path(results_path).read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return []
    if res.build_id != build_id:
        return []
    return ["## Retrieval baselines", "", results_table_markdown(res).rstrip()]


def _params(p: dict) -> str:
    return ", ".join(f"{k}={str(v)[:12] + '...' if k.endswith('sha256') else v}" for k, v in p.items())


def results_markdown(res: EvaluationResults, figures: list[str]) -> str:
    lines = [f"# Retrieval evaluation of release {res.release}", "",
             f"Build `{res.build_id[:12]}`; splits: {', '.join(res.splits)}; {res.depth} documents per query in each run. "
             "Every number is computed from the release's own files (listed with their sha256 in results.json); "
             "`empty`: the cell has no query in the split, so it has no score and is left out of the means.", "",
             "## Retrievers", ""]
    for r in res.retrievers:
        lines.append(f"- `{r.name}` ({r.kind}): {_params(r.parameters)}")
    for split in res.splits:
        lines += ["", f"## {split} split", ""] + _counts(res, split)
        for r in res.retrievers:
            lines += ["", f"### {r.name}", ""]
            for metric in METRIC_LABELS:
                lines += _grid(res, r.name, split, metric) + [""]
        tiers = [t for t in res.tiers if t.split == split]
        if tiers:
            lines += ["### Concept discrimination by tier", "",
                      "Within the set: the target ranked among its own confusion set (a tie counts as the "
                      "expectation over the tied members' orders). Retrieval: over the cell's whole corpus.", "",
                      "| retriever | lang | tier | sets | ties | accuracy@1 (set) | MRR (set) | nDCG@10 (corpus) | MRR@10 (corpus) |",
                      "|---|---|---|---:|---:|---:|---:|---:|---:|"]
            order = {t: i for i, t in enumerate(TIERS)}
            for t in sorted(tiers, key=lambda t: ([r.name for r in res.retrievers].index(t.retriever),
                                                  _langs(res).index(t.lang), order[t.tier])):
                lines.append(f"| {t.retriever} | {t.lang} | {t.tier} | {t.count} | {t.ties} | {_f(t.accuracy_at_1)} | "
                             f"{_f(t.mrr)} | {_f(t.retrieval_ndcg_at_10)} | {_f(t.retrieval_mrr_at_10)} |")
        gaps = [g for g in res.gaps if g.split == split]
        if gaps:
            lines += ["", "### Cross-lingual gap (nDCG@10)", "",
                      "| retriever | task | lang | en | lang | en - lang | lang / en |", "|---|---|---|---:|---:|---:|---:|"]
            for g in gaps:
                lines.append(f"| {g.retriever} | {g.task} | {g.lang} | {_f(g.english)} | {_f(g.other)} | {_f(g.gap)} | {_f(g.ratio)} |")
    if figures:
        lines += ["", "## Figures", ""] + [f"![{Path(f).stem}]({f})" for f in figures]
    lines += ["", "## Re-scoring the runs", "",
              "The run files hold the printed scores the metrics were computed from; trec_eval reads them as they are:", "",
              "```",
              "trec_eval -c -m ndcg_cut.10 -m recall.100 qrels/<task>-<lang>.<split>.qrels runs/<retriever>/<task>-<lang>.trec",
              "trec_eval -c -M 10 -m recip_rank qrels/<task>-<lang>.<split>.qrels runs/<retriever>/<task>-<lang>.trec",
              "```", "",
              "`-c` counts every query of the qrels (one the run retrieves nothing for scores 0); `-M 10` cuts each "
              "ranking at 10 documents for MRR@10.", ""]
    return "\n".join(lines)
