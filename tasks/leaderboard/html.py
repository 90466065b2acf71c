"""The leaderboard as a static page: index.html, style.css and sort.js, nothing else.

Every asset is a file beside the page (no font, script or picture from the network: the page
opens from disk offline). Every value from an evaluation or a submission goes through
html.escape, in text and in attributes alike; a link is written only when it is http(s)
(schemas/leaderboard.Link). The gap picture is inline SVG.
"""
from __future__ import annotations

import html

from schemas.leaderboard import Leaderboard, RankedScore, SystemRow

CSS = """\
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; max-width: 78rem; padding: 0 1rem; color: #1b1b1b; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-size: .9rem; }
th, td { border-bottom: 1px solid #ddd; padding: .25rem .55rem; text-align: right; white-space: nowrap; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
td.text, th.text { text-align: left; }
.ci { color: #666; font-size: .8rem; }
.note { color: #444; max-width: 60rem; }
svg text { font-size: 11px; font-family: system-ui, sans-serif; }
"""

# a few lines: click a header to sort its table by that column (numbers by data-value)
SCRIPT = """\
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.value, y = b.cells[col].dataset.value;
        var c = th.dataset.type === "num" ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return down ? -c : c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

FAMILY_COLOURS = {"lexical": "#8c564b", "english-dense": "#d62728", "multilingual-dense": "#1f77b4",
                  "biomedical-dense": "#2ca02c", "learned-sparse": "#9467bd", "late-interaction": "#17becf",
                  "reranker": "#bcbd22", "hybrid": "#ff7f0e", "other": "#7f7f7f", "user": "#7f7f7f"}


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(x: float | None, fmt: str = ".3f") -> tuple[str, str]:
    """(data-value, shown) of a number; a missing one sorts last."""
    return ("-1e9", "–") if x is None else (repr(float(x)), format(x, fmt))


def _td(value: str, shown: str, cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<td{c} data-value="{e(value)}">{shown}</td>'


def _score_td(r: RankedScore) -> str:
    ci = "" if r.interval is None else f' <span class="ci">[{r.interval.low:.3f}, {r.interval.high:.3f}]</span>'
    return _td(repr(r.score), f"{r.score:.3f}{ci}")


def _rank_td(r: RankedScore) -> str:
    # sorts by best place, then worst; ascending is best first
    return _td(f"{r.rank_low + r.rank_high / 1000:.3f}", e(r.rank))


def _name_cell(s: SystemRow) -> str:
    shown = e(s.name)
    if s.link:
        shown = f'<a href="{e(s.link)}" rel="nofollow noopener">{shown}</a>'
    return _td(s.name, shown, "text")


def _th(label: str, kind: str = "num") -> str:
    return f'<th data-type="{kind}" class="{"text" if kind == "text" else ""}">{e(label)}</th>'


def _gap_svg(board: Leaderboard) -> str:
    """Per language, each system's gap (pivot minus native nDCG@10) as a dot with its
    interval, coloured by family."""
    langs = sorted({l for s in board.systems for l in s.gap_per_lang})
    rows = [(l, s) for l in langs for s in board.systems if l in s.gap_per_lang]
    if not rows:
        return "<p>No cell of this release has pivot queries scored by these systems.</p>"
    lows = [s.gap_per_lang[l].interval.low for l, s in rows] + [0.0]
    highs = [s.gap_per_lang[l].interval.high for l, s in rows] + [0.0]
    lo, hi = min(lows) - 0.05, max(highs) + 0.05
    left, width, step, top = 380, 420, 16, 24
    height = top + step * (len(rows) + len(langs)) + 20

    def x(v: float) -> float:
        return round(left + (v - lo) / (hi - lo) * width, 2)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{height}" role="img" '
             f'aria-label="language gap per system and language">',
             f'<line x1="{x(0)}" y1="{top - 8}" x2="{x(0)}" y2="{height - 20}" stroke="#999" stroke-dasharray="3,3"/>',
             f'<text x="{x(0)}" y="{top - 12}" text-anchor="middle">0 (no gap)</text>']
    y = top
    for lang in langs:
        parts.append(f'<text x="4" y="{y + 4}" font-weight="bold">{e(lang)}</text>')
        y += step
        for l, s in rows:
            if l != lang:
                continue
            g, colour = s.gap_per_lang[l], FAMILY_COLOURS.get(s.family, "#7f7f7f")
            parts.append(f'<text x="14" y="{y + 4}">{e(s.name[:36])} ({e(s.family)})</text>'
                         f'<line x1="{x(g.interval.low)}" y1="{y}" x2="{x(g.interval.high)}" y2="{y}" stroke="{colour}" stroke-width="2"/>'
                         f'<circle cx="{x(g.gap)}" cy="{y}" r="4" fill="{colour}"><title>{e(s.name)}: {g.gap:+.3f} '
                         f'[{g.interval.low:+.3f}, {g.interval.high:+.3f}]</title></circle>')
            y += step
    for v in (lo + 0.05, 0.5 * (lo + hi), hi - 0.05):
        parts.append(f'<text x="{x(v)}" y="{height - 4}" text-anchor="middle">{v:+.2f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def leaderboard_html(board: Leaderboard) -> str:
    tasks = list(dict.fromkeys(c.split("/")[0] for c in board.cells))
    langs = list(dict.fromkeys(c.split("/")[1] for c in board.cells))
    gap_langs = sorted({l for s in board.systems for l in s.gap_per_lang})
    names = {s.system: s.name for s in board.systems}
    out = ['<!DOCTYPE html>', '<html lang="en">', '<head>', '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f'<title>MMed-Bench-IR leaderboard: release {e(board.release)}</title>',
           '<link rel="stylesheet" href="style.css">', '</head>', '<body>',
           f'<h1>MMed-Bench-IR leaderboard: release {e(board.release)}</h1>',
           f'<p class="note">Build <code>{e(board.build_id)}</code>, {e(board.split)} split. Score: nDCG@10 '
           f'(<code>{e(board.measure)}</code>), the unweighted mean over the {len(board.cells)} cells every system '
           f'scored, with its {board.confidence:.0%} bootstrap interval over queries.</p>',
           f'<p class="note" id="method"><b>Rank</b> is the range of places a system may hold: from 1 + the number '
           f'of systems significantly better to the number of systems less the number significantly worse. '
           f'Significance: a {e(board.test)}; correction: {e(board.correction)} (alpha {board.alpha}). '
           f'Two systems within noise of each other share their places. Click a column to sort.</p>']
    if board.left_out:
        out.append('<p class="note">Left out of the macro score (some system did not score them; each has its table '
                   'below): ' + ", ".join(f"{e(c)} ({e(', '.join(names.get(n, n) for n in s))})"
                                         for c, s in board.left_out.items()) + ".</p>")
    head = ([_th("Rank"), _th("System", "text"), _th("Family", "text"), _th("Coverage", "text"), _th("nDCG@10 [95% CI]")]
            + [_th(f"task {t}") for t in tasks] + [_th(f"lang {l}") for l in langs] + [_th(f"gap {l}") for l in gap_langs])
    out += ['<h2>Systems</h2>', '<table class="sortable" id="systems">', "<thead><tr>" + "".join(head) + "</tr></thead>",
            "<tbody>"]
    for s in board.systems:
        cells = [_rank_td(s.macro), _name_cell(s), _td(s.family, e(s.family), "text"), _td(s.coverage, e(s.coverage), "text"),
                 _score_td(s.macro)]
        cells += [_td(*_num(s.per_task.get(t))) for t in tasks] + [_td(*_num(s.per_lang.get(l))) for l in langs]
        for l in gap_langs:
            g = s.gap_per_lang.get(l)
            if g is None:
                cells.append(_td(*_num(None)))
            else:
                cells.append(_td(repr(g.gap), f'{g.gap:+.3f} <span class="ci">[{g.interval.low:+.3f}, '
                                              f'{g.interval.high:+.3f}]</span>'))
        out.append(f'<tr data-system="{e(s.system)}">' + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>",
            '<p class="note">Gap: pivot minus native nDCG@10 on the same items (asked in English, and in the language), '
            "over the system's cells of that language with pivots; above 0, the system loses score in the language.</p>",
            '<h2>Language gap by family</h2>', _gap_svg(board), '<h2>Per cell</h2>']
    for t in board.cell_tables:
        it = t.items
        out += [f'<h3 id="cell-{e(t.task)}-{e(t.lang)}">{e(t.task)}/{e(t.lang)} ({t.queries} queries)</h3>',
                f'<p class="note">Items: the systems\' scores differ on {it.differing} of {it.queries} queries '
                f'({it.differing_share:.0%}); every system finds a relevant document in its top 10 for {it.all_find}, '
                f'none does for {it.none_find}.</p>',
                f'<table class="sortable cell" data-cell="{e(t.task)}/{e(t.lang)}"><thead><tr>{_th("Rank")}'
                f'{_th("System", "text")}{_th("nDCG@10 [95% CI]")}</tr></thead><tbody>']
        out += [f'<tr data-system="{e(r.system)}">{_rank_td(r)}{_td(names.get(r.system, r.system), e(names.get(r.system, r.system)), "text")}'
                f'{_score_td(r)}</tr>' for r in t.rows]
        out.append("</tbody></table>")
    out += ['<h2>Items that tell systems apart</h2>',
            f'<p class="note">Per query: how many systems put a relevant document in their top 10 (its difficulty: '
            f'fewer is harder) and each system\'s nDCG@10: <a href="{e(board.items_file)}" download>{e(board.items_file)}</a>. '
            'A query every system finds, or none does, says nothing about the ranking.</p>',
            '<h2>Systems and submissions</h2>', '<table class="sortable" id="about"><thead><tr>'
            + _th("System", "text") + _th("Source", "text") + _th("Model or link", "text") + _th("Licence of the runs", "text")
            + _th("Evaluation folder", "text") + "</tr></thead><tbody>"]
    for s in board.systems:
        what = (f'<a href="{e(s.link)}" rel="nofollow noopener">{e(s.link)}</a>' if s.link else e(s.model or "–"))
        out.append(f'<tr>{_td(s.name, e(s.name), "text")}{_td(s.source, e(s.source), "text")}'
                   f'{_td(s.link or s.model or "", what, "text")}{_td(s.licence or "", e(s.licence or "–"), "text")}'
                   f'{_td(s.evaluation, e(s.evaluation), "text")}</tr>')
    out += ["</tbody></table>", '<p class="note">The same tables: <a href="leaderboard.md">leaderboard.md</a>, '
            '<a href="leaderboard.json">leaderboard.json</a>.</p>', '<script src="sort.js"></script>', "</body>", "</html>", ""]
    return "\n".join(out)
