"""Pictures of an evaluation (matplotlib, Agg, no clock or version in the PNG metadata):

  figures/ndcg10-<retriever>-<split>.png    task x language heatmap of nDCG@10
  figures/cd-tiers-<retriever>-<split>.png  within-set accuracy@1 per tier and language
  figures/pivot-gap-<split>.png             the language gap (pivot minus native nDCG@10) per
                                            cell and system, with 95% bootstrap error bars
  figures/gap-by-family-<split>.png         the language gap per language and system, labelled
                                            by family (mean over the language's cells)

An empty cell is drawn grey and labelled "empty", never coloured as a score.
"""
from __future__ import annotations

from pathlib import Path

from schemas.records import TASKS, TIERS
from schemas.results import EvaluationResults

_METADATA = {"Software": None}
_TIER_COLORS = {"easy": "#9ecae1", "medium": "#4292c6", "hard": "#08306b"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _langs(res: EvaluationResults) -> list[str]:
    seen = list(dict.fromkeys(c.lang for c in res.cells))
    return (["en"] if "en" in seen else []) + [l for l in seen if l != "en"]


def _save(plt, fig, path: Path) -> None:
    """Write a picture without clock or version metadata, and free it."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata=_METADATA)
    plt.close(fig)


def heatmap(res: EvaluationResults, retriever: str, split: str, path: Path) -> None:
    import numpy as np

    plt = _plt()
    langs = _langs(res)
    tasks = [t for t in TASKS if any(c.task == t for c in res.cells)]
    cells = {(c.task, c.lang): c for c in res.cells if c.retriever == retriever and c.split == split}
    grid = np.full((len(tasks), len(langs)), np.nan)
    for i, t in enumerate(tasks):
        for j, l in enumerate(langs):
            c = cells.get((t, l))
            if c is not None and c.metrics is not None:
                grid[i, j] = c.metrics.ndcg_at_10
    fig, ax = plt.subplots(figsize=(1.2 * len(langs) + 2, 0.9 * len(tasks) + 1.6), dpi=100)
    cmap = plt.get_cmap("viridis").with_extremes(bad="#d9d9d9")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for i in range(len(tasks)):
        for j in range(len(langs)):
            v = grid[i, j]
            text = "empty" if np.isnan(v) else f"{v:.3f}"
            color = "black" if np.isnan(v) or v > 0.6 else "white"
            ax.text(j, i, text, ha="center", va="center", color=color, fontsize=9)
    ax.set_xticks(range(len(langs)), langs)
    ax.set_yticks(range(len(tasks)), tasks)
    ax.set_title(f"nDCG@10, {retriever}, {split} split (release {res.release})", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    _save(plt, fig, path)


def tiers_chart(res: EvaluationResults, retriever: str, split: str, path: Path) -> bool:
    plt = _plt()
    rows = {(t.lang, t.tier): t for t in res.tiers if t.retriever == retriever and t.split == split}
    langs = [l for l in _langs(res) if any((l, t) in rows for t in TIERS)]
    if not langs:
        return False
    fig, ax = plt.subplots(figsize=(1.3 * len(langs) + 2.5, 3.6), dpi=100)
    width = 0.26
    for k, tier in enumerate(TIERS):
        xs, ys, ns = [], [], []
        for j, l in enumerate(langs):
            t = rows.get((l, tier))
            if t is not None and t.accuracy_at_1 is not None:
                xs.append(j + (k - 1) * width)
                ys.append(t.accuracy_at_1)
                ns.append(t.count)
        ax.bar(xs, ys, width, label=tier, color=_TIER_COLORS[tier])
        for x, y, n in zip(xs, ys, ns):
            ax.text(x, y + 0.01, f"n={n}", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.set_xticks(range(len(langs)), langs)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("accuracy@1 within the set")
    ax.set_title(f"Concept discrimination by tier, {retriever}, {split} split", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="tier", title_fontsize=8)
    _save(plt, fig, path)
    return True


def pivot_gap_chart(res: EvaluationResults, split: str, path: Path) -> bool:
    """One bar per (cell, system): pivot minus native nDCG@10 on the same items, error bars
    from the paired bootstrap; a cell labelled item difficulty is hatched."""
    plt = _plt()
    gaps = [g for g in res.pivot_gaps if g.split == split]
    if not gaps:
        return False
    systems = list(dict.fromkeys(g.retriever for g in gaps))
    order = {(t, l): (TASKS.index(t), _langs(res).index(l)) for t, l in {(g.task, g.lang) for g in gaps}}
    cells = sorted(order, key=order.__getitem__)
    width = 0.8 / len(systems)
    fig, ax = plt.subplots(figsize=(1.1 * len(cells) * max(1, len(systems) / 2) + 2.5, 3.8), dpi=100)
    colors = plt.get_cmap("tab10")
    for k, name in enumerate(systems):
        mine = {(g.task, g.lang): g for g in gaps if g.retriever == name}
        xs = [i + (k - (len(systems) - 1) / 2) * width for i, c in enumerate(cells) if c in mine]
        rows = [mine[c] for c in cells if c in mine]
        err = [[g.gap - g.gap_interval.low for g in rows], [g.gap_interval.high - g.gap for g in rows]]
        bars = ax.bar(xs, [g.gap for g in rows], width, yerr=err, capsize=3, label=name, color=colors(k % 10))
        for bar, g in zip(bars, rows):
            if g.item_difficulty:
                bar.set_hatch("//")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(cells)), [f"{t}/{l}" for t, l in cells], rotation=30, ha="right")
    ax.set_ylabel("pivot - native nDCG@10")
    ax.set_title(f"Language gap on the same items, {split} split (hatched: item difficulty)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="system", title_fontsize=8)
    _save(plt, fig, path)
    return True


def gap_by_family_chart(res: EvaluationResults, split: str, path: Path) -> bool:
    """The language gap per language (mean over its cells with pivots), one bar per system
    labelled with its family, error bars from the bootstrap (each cell resampled within itself)."""
    plt = _plt()
    means = [m for m in res.gap_means if m.split == split and m.over == "lang"]
    if not means:
        return False
    langs = [l for l in _langs(res) if any(m.key == l for m in means)]
    systems = [r for r in res.retrievers if any(m.retriever == r.name for m in means)]
    width = 0.8 / len(systems)
    fig, ax = plt.subplots(figsize=(1.2 * len(langs) * max(1, len(systems) / 2) + 3.2, 3.8), dpi=100)
    colors = plt.get_cmap("tab10")
    for k, r in enumerate(systems):
        mine = {m.key: m for m in means if m.retriever == r.name}
        xs = [j + (k - (len(systems) - 1) / 2) * width for j, l in enumerate(langs) if l in mine]
        rows = [mine[l] for l in langs if l in mine]
        err = [[m.gap - m.interval.low for m in rows], [m.interval.high - m.gap for m in rows]]
        ax.bar(xs, [m.gap for m in rows], width, yerr=err, capsize=3, label=f"{r.family or r.kind}: {r.name}",
               color=colors(k % 10))
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(langs)), langs)
    ax.set_ylabel("pivot - native nDCG@10")
    ax.set_title(f"Language gap by system family, mean over each language's cells, {split} split", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="family: system", title_fontsize=8)
    _save(plt, fig, path)
    return True


def write_figures(res: EvaluationResults, folder: Path) -> list[str]:
    """Every picture; returns their paths relative to the results folder."""
    out = []
    for split in res.splits:
        name = f"gap-by-family-{split}.png"
        if gap_by_family_chart(res, split, folder / name):
            out.append(f"{folder.name}/{name}")
    for split in res.splits:
        name = f"pivot-gap-{split}.png"
        if pivot_gap_chart(res, split, folder / name):
            out.append(f"{folder.name}/{name}")
    for r in res.retrievers:
        for split in res.splits:
            name = f"ndcg10-{r.name}-{split}.png"
            heatmap(res, r.name, split, folder / name)
            out.append(f"{folder.name}/{name}")
            name = f"cd-tiers-{r.name}-{split}.png"
            if tiers_chart(res, r.name, split, folder / name):
                out.append(f"{folder.name}/{name}")
    return out
