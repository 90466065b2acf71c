"""The leaderboard's tables in Markdown (leaderboard.md): the page's tables, for a repository
or a pull request. Names from submissions are escaped: Markdown renders raw HTML."""
from __future__ import annotations

import html

from schemas.leaderboard import Leaderboard, RankedScore


def text(value: object) -> str:
    """A value as Markdown table text: no markup, no cell break, one line."""
    s = html.escape(" ".join(str(value).split()), quote=False)
    return s.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("`", "\\`").replace("[", "\\[")


def score(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def with_interval(r: RankedScore) -> str:
    return score(r.score) + ("" if r.interval is None else f" [{r.interval.low:.3f}, {r.interval.high:.3f}]")


def leaderboard_markdown(board: Leaderboard) -> str:
    tasks = list(dict.fromkeys(c.split("/")[0] for c in board.cells))
    langs = list(dict.fromkeys(c.split("/")[1] for c in board.cells))
    gap_langs = sorted({l for s in board.systems for l in s.gap_per_lang})
    out = [f"# Leaderboard: release {text(board.release)}", "",
           f"Build {board.build_id}, {board.split} split. Score: nDCG@10 ({text(board.measure)}), the unweighted mean "
           f"over the {len(board.cells)} cells every system scored, with its {board.confidence:.0%} bootstrap interval.", "",
           f"Rank: the places a system may hold. From 1 + the systems significantly better to the number of systems "
           f"less those significantly worse; significance by a {board.test}, {board.correction} "
           f"(alpha {board.alpha}).", ""]
    if board.left_out:
        out += ["Left out of the macro score (some system did not score them): "
                + ", ".join(f"{c} ({', '.join(s)})" for c, s in board.left_out.items()) + ".", ""]
    head = (["Rank", "System", "Family", "Coverage", "nDCG@10 [95% CI]"] + [f"task {t}" for t in tasks]
            + [f"lang {l}" for l in langs] + [f"gap {l}" for l in gap_langs])
    out += ["## Systems", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in board.systems:
        gaps = [f"{s.gap_per_lang[l].gap:+.3f} [{s.gap_per_lang[l].interval.low:+.3f}, {s.gap_per_lang[l].interval.high:+.3f}]"
                if l in s.gap_per_lang else "–" for l in gap_langs]
        cells = ([s.macro.rank, text(s.name), s.family, s.coverage, with_interval(s.macro)]
                 + [score(s.per_task.get(t)) for t in tasks] + [score(s.per_lang.get(l)) for l in langs] + gaps)
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "Gap: pivot minus native nDCG@10 on the same items (the items asked in English, and in the language), "
                "over the system's cells of that language with pivots.", "", "## Per cell", ""]
    for t in board.cell_tables:
        it = t.items
        out += [f"### {t.task}/{t.lang} ({t.queries} queries)", "",
                f"Items: the systems' scores differ on {it.differing} of {it.queries} queries ({it.differing_share:.0%}); "
                f"every system finds a relevant document in its top 10 for {it.all_find}, none does for {it.none_find}.", "",
                "| Rank | System | nDCG@10 [95% CI] |", "|---|---|---|"]
        names = {s.system: s.name for s in board.systems}
        out += [f"| {r.rank} | {text(names.get(r.system, r.system))} | {with_interval(r)} |" for r in t.rows]
        out.append("")
    out += [f"Per-query difficulty (how many systems put a relevant document in their top 10) and every system's "
            f"nDCG@10 per query: {board.items_file}.", ""]
    return "\n".join(out)
