"""Everything `mmedbench leaderboard` writes, into a folder that is then moved in whole
(tasks/evaluation/outdir.results_folder): index.html, style.css, sort.js (the page),
leaderboard.md and leaderboard.json (the same tables), items.csv (per query: difficulty
and each system's nDCG@10)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from common.jsonio import atomic_write
from schemas.leaderboard import Leaderboard
from tasks.leaderboard.html import CSS, SCRIPT, leaderboard_html
from tasks.leaderboard.items import CellItems
from tasks.leaderboard.markdown import leaderboard_markdown

FILES = ("index.html", "style.css", "sort.js", "leaderboard.md", "leaderboard.json", "items.csv")


def items_csv(board: Leaderboard, items: dict[str, CellItems]) -> str:
    """One row per query of every cell: its cell, id, how many systems find it (a relevant
    document in the top 10), of how many, and each system's nDCG@10 (empty: not scored)."""
    systems = sorted(s.system for s in board.systems)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["task", "lang", "query_id", "systems_finding", "systems_scoring", "scores_differ"]
               + [f"ndcg_at_10:{s}" for s in systems])
    for t in board.cell_tables:
        cell = items[f"{t.task}/{t.lang}"]
        for it in cell.items:
            by = dict(zip(cell.systems, it.ndcg))
            w.writerow([t.task, t.lang, it.query, it.finders, len(cell.systems), int(it.differ)]
                       + [f"{by[s]:.6f}" if s in by else "" for s in systems])
    return buf.getvalue()


def write_site(board: Leaderboard, items: dict[str, CellItems], folder: Path) -> None:
    folder = Path(folder)
    texts = {"index.html": leaderboard_html(board), "style.css": CSS, "sort.js": SCRIPT,
             "leaderboard.md": leaderboard_markdown(board),
             "leaderboard.json": json.dumps(board.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n",
             "items.csv": items_csv(board, items)}
    for name in FILES:
        with atomic_write(folder / name) as fh:
            fh.write(texts[name])
