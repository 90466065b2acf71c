"""The card's pictures (PNG): counts per cell, provenance per cell, tier similarity distributions.

Drawn with matplotlib's Agg canvas directly (no pyplot, no global backend switch), at a fixed
size and dpi, with no "Software" text chunk, so the bytes are a function of the data and the
matplotlib version: a rebuild writes identical files.
"""
from __future__ import annotations

import io
from pathlib import Path

from common.jsonio import atomic_write
from schemas.records import TIERS

DPI = 100
PROVENANCE_COLOURS = {
    "native": "#1b9e77", "terminology": "#7570b3", "human-translated": "#66a61e",
    "machine-translated and verified": "#e6ab02", "machine-translated": "#d95f02",
}
TIER_COLOURS = {"easy": "#a6cee3", "medium": "#1f78b4", "hard": "#08306b"}


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    with atomic_write(path, "wb") as fh:
        fh.write(buf.getvalue())


def counts_figure(cells: dict[str, dict], tasks: list[str], langs: list[str], path: Path) -> None:
    """A task x language grid: queries per cell (colour), with queries and documents written in."""
    import numpy as np

    q = np.array([[cells.get(f"{t}/{l}", {}).get("queries", 0) for l in langs] for t in tasks], dtype=float)
    fig = _figure(1.2 + 1.0 * len(langs), 1.0 + 0.8 * len(tasks))
    ax = fig.add_subplot()
    im = ax.imshow(q, cmap="Blues", vmin=0, vmax=max(1.0, q.max()) * 1.25, aspect="auto")
    for i, t in enumerate(tasks):
        for j, l in enumerate(langs):
            c = cells.get(f"{t}/{l}", {})
            ax.text(j, i, f"{c.get('queries', 0)} q\n{c.get('documents', 0)} docs", ha="center", va="center", fontsize=8,
                    color="white" if q[i, j] > 0.6 * q.max() and q.max() > 0 else "black")
    ax.set_xticks(range(len(langs)), langs)
    ax.set_yticks(range(len(tasks)), tasks)
    ax.set_title("Queries and documents per cell")
    fig.colorbar(im, ax=ax, label="queries", shrink=0.8)
    fig.tight_layout()
    _save(fig, path)


def provenance_figure(cells: dict[str, dict], path: Path) -> None:
    """One horizontal bar per cell, split by how its queries were made."""
    names = sorted(cells)
    kinds = [k for k in PROVENANCE_COLOURS if any(cells[c]["provenance"].get(k) for c in names)]
    fig = _figure(8, 1.0 + 0.28 * len(names))
    ax = fig.add_subplot()
    left = [0] * len(names)
    for kind in kinds:
        widths = [cells[c]["provenance"].get(kind, 0) for c in names]
        ax.barh(range(len(names)), widths, left=left, color=PROVENANCE_COLOURS[kind], label=kind)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("queries")
    ax.set_title("How each cell's queries were made")
    if kinds:
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    _save(fig, path)


def tiers_figure(similarities: dict[str, list[float]], path: Path) -> None:
    """Target-distractor title similarity (character-trigram Jaccard) per tier: a box per tier, mean marked."""
    tiers = [t for t in TIERS if similarities.get(t)]
    fig = _figure(6, 3.2)
    ax = fig.add_subplot()
    if tiers:
        bp = ax.boxplot([similarities[t] for t in tiers], showmeans=True, patch_artist=True)
        for patch, t in zip(bp["boxes"], tiers):
            patch.set_facecolor(TIER_COLOURS[t])
        ax.set_xticks(range(1, len(tiers) + 1), [f"{t}\n(n={len(similarities[t])})" for t in tiers])
    ax.set_ylim(0, 1)
    ax.set_ylabel("trigram Jaccard similarity")
    ax.set_title("Target-distractor similarity by confusion-set tier")
    fig.tight_layout()
    _save(fig, path)
