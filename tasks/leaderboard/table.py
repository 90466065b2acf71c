"""The leaderboard's tables, from the systems of one release's evaluation folders.

The macro score is the unweighted mean of nDCG@10 over the cells every system scored (the
leaderboard's cells): a system is never ranked on cells another one skipped. A cell some
system did not score is left out of the macro score, listed, and still gets its own table
among the systems that scored it. Every system is compared with every other one on the same
queries (ranks.py); cells, systems and pairs are taken in name order, so the order in which
folders are given changes nothing.
"""
from __future__ import annotations

from common.errors import InputError
from schemas.leaderboard import (CellItemsSummary, CellTable, Gap, Leaderboard, PairTest, RankedScore, Submission,
                                 SystemRow)
from schemas.records import TASKS
from schemas.results import Interval
from tasks.evaluation import stats
from tasks.evaluation.metrics import mean
from tasks.evaluation.systems import BUILTINS
from tasks.leaderboard import ranks
from tasks.leaderboard.items import CellItems, cell_items
from tasks.leaderboard.outputs import SystemScores

ITEMS_FILE = "items.csv"
_COVERAGE = {"english": "english-only", "multilingual": "multilingual", None: "undeclared"}
_MODELS = {b.name: b.model for b in BUILTINS.values()}


def _r(x: float) -> float:
    return round(float(x), 6)


def _interval(bounds) -> Interval | None:
    return None if bounds is None else Interval(low=_r(bounds[0]), high=_r(bounds[1]))


def draw_key(cell: str, split: str) -> str:
    """The bootstrap's key of a cell: evaluate's own (stage._draw_key), so a cell's interval
    here is the one results.json records."""
    return f"{cell}/{split}"


def _cell_order(cell: str) -> tuple:
    task, lang = cell.split("/")
    return (TASKS.index(task) if task in TASKS else len(TASKS), task, lang)


def _ranked(means: dict[str, float], intervals: dict[str, Interval | None], pairs: list[ranks.Pair]) -> list[RankedScore]:
    ranges = ranks.rank_ranges(means, pairs)
    order = sorted(means, key=lambda n: (-round(means[n], 12), n))
    return [RankedScore(system=n, score=_r(means[n]), interval=intervals[n], rank_low=ranges[n][0], rank_high=ranges[n][1],
                        rank=ranks.label(*ranges[n])) for n in order]


def _pair_tests(pairs: list[ranks.Pair]) -> list[PairTest]:
    return [PairTest(a=p.a, b=p.b, difference=_r(p.difference), p_value=_r(p.p_value), p_adjusted=_r(p.p_adjusted),
                     significant=p.significant) for p in pairs]


def _row(s: SystemScores, sub: Submission | None, macro: RankedScore, cells: list[str], split: str) -> SystemRow:
    r = s.retriever
    per_task, per_lang = {}, {}
    for key, pick in (("task", 0), ("lang", 1)):
        groups: dict[str, list[float]] = {}
        for c in cells:
            groups.setdefault(c.split("/")[pick], []).append(mean(list(s.ndcg[c].values()), "ndcg_cut_10"))
        (per_task if key == "task" else per_lang).update({k: _r(mean(v)) for k, v in groups.items()})
    gaps = {g.key: Gap(gap=g.gap, interval=g.interval, cells=g.cells) for g in s.results.gap_means
            if g.retriever == r.name and g.split == split and g.over == "lang"}
    if sub is not None:
        name, family, coverage, link, licence, source = sub.name, sub.family, sub.coverage, sub.link, sub.licence, "submitted"
    else:
        name, family, coverage, link, licence = r.name, r.family or "user", _COVERAGE[r.coverage], None, None
        source = "built-in" if r.name in _MODELS or r.kind == "hybrid" and r.family == "hybrid" else "evaluated"
    return SystemRow(system=r.name, name=name, source=source, family=family, coverage=coverage, model=_MODELS.get(r.name),
                     link=link, licence=licence, evaluation=s.evaluation, macro=macro, per_task=per_task, per_lang=per_lang,
                     gap_per_lang=gaps)


def build(systems: list[SystemScores], submissions: dict[str, Submission], split: str) -> tuple[Leaderboard, dict[str, CellItems]]:
    """The leaderboard, and each cell's items (for items.csv)."""
    systems = sorted(systems, key=lambda s: s.retriever.name)
    by_name = {s.retriever.name: s for s in systems}
    every = sorted({c for s in systems for c in s.ndcg}, key=_cell_order)
    common = [c for c in every if all(c in s.ndcg for s in systems)]
    if not common:
        raise InputError(systems[0].evaluation, "no cell was scored by every system given: nothing to rank them on "
                                                "(evaluate each system on the same release's cells)")
    left_out = {c: [s.retriever.name for s in systems if c in s.ndcg] for c in every if c not in common}
    first = systems[0].results

    # the macro score over the common cells, its interval (each cell resampled within itself)
    vectors, means, intervals = {}, {}, {}
    for s in systems:
        cells = [[s.ndcg[c][q] for q in sorted(s.ndcg[c])] for c in common]
        vectors[s.retriever.name] = ranks.weighted(cells)
        means[s.retriever.name] = mean([mean(v, "ndcg_cut_10") for v in cells]) if cells else 0.0
        intervals[s.retriever.name] = _interval(stats.macro_interval(cells, [draw_key(c, split) for c in common]))
    pairs = ranks.pairwise(vectors, f"leaderboard/{split}", summed=True) if common else []
    macro = {r.system: r for r in _ranked(means, intervals, pairs)}

    tables, items = [], {}
    for c in every:
        scored = [s for s in systems if c in s.ndcg]
        qids = sorted(scored[0].ndcg[c])
        values = {s.retriever.name: [s.ndcg[c][q] for q in qids] for s in scored}
        cell_pairs = ranks.pairwise({n: v for n, v in values.items()}, f"{c}/{split}")
        cell_means = {n: mean(v, "ndcg_cut_10") for n, v in values.items()}
        cell_intervals = {n: _interval(stats.interval(v, draw_key(c, split))) for n, v in values.items()}
        found = cell_items({s.retriever.name: s.ndcg[c] for s in scored}, {s.retriever.name: s.finds[c] for s in scored})
        items[c] = found
        task, lang = c.split("/")
        tables.append(CellTable(task=task, lang=lang, queries=len(qids), rows=_ranked(cell_means, cell_intervals, cell_pairs),
                                pairs=_pair_tests(cell_pairs),
                                items=CellItemsSummary(queries=len(found.items), differing=found.differing,
                                                       differing_share=_r(found.differing_share), all_find=found.all_find,
                                                       none_find=found.none_find)))

    rows = [_row(by_name[n], submissions.get(n), macro[n], common, split) for n in macro]
    board = Leaderboard(release=first.release, build_id=first.build_id, split=split,
                        measure=first.measures["ndcg_at_10"], test=ranks.TEST, correction=ranks.CORRECTION,
                        alpha=stats.ALPHA, confidence=stats.CONFIDENCE, cells=common, left_out=left_out, systems=rows,
                        pairs=_pair_tests(pairs), cell_tables=tables, items_file=ITEMS_FILE)
    return board, items
