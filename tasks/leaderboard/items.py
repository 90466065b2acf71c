"""Items that tell systems apart, per cell.

A query every system finds, or none does, says nothing about a ranking; nor does one on
which every system scores the same. What is left is where the ranking is decided.

    found(qrels, run)      per query: whether the run put a relevant document in its top 10
    cell_items(...)        a cell's items: how many systems find each, and the summary counts
"""
from __future__ import annotations

from dataclasses import dataclass

from tasks.evaluation.runs import trec_order

TOP = 10


def found(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, bool]:
    """Per query of `qrels`: a document of relevance > 0 among the run's first TOP (in
    trec_eval's order: score descending, then doc-id descending)."""
    out = {}
    for q in sorted(qrels):
        top = [d for d, _s in trec_order(run.get(q, {}))[:TOP]]
        out[q] = any(qrels[q].get(d, 0) > 0 for d in top)
    return out


@dataclass(frozen=True)
class Item:
    query: str
    finders: int  # systems with a relevant document in their top 10 (the item's difficulty: fewer is harder)
    ndcg: tuple[float, ...]  # per system, in the order of CellItems.systems
    differ: bool  # the systems' nDCG@10 on it are not all equal


@dataclass(frozen=True)
class CellItems:
    systems: tuple[str, ...]
    items: list[Item]

    @property
    def differing(self) -> int:
        return sum(1 for i in self.items if i.differ)

    @property
    def all_find(self) -> int:
        return sum(1 for i in self.items if i.finders == len(self.systems))

    @property
    def none_find(self) -> int:
        return sum(1 for i in self.items if i.finders == 0)

    @property
    def differing_share(self) -> float:
        return self.differing / len(self.items) if self.items else 0.0


def cell_items(ndcg: dict[str, dict[str, float]], finds: dict[str, dict[str, bool]]) -> CellItems:
    """`ndcg` and `finds`: system -> query -> value, every system over the same queries."""
    systems = tuple(sorted(ndcg))
    queries = sorted(next(iter(ndcg.values()))) if ndcg else []
    items = []
    for q in queries:
        scores = tuple(ndcg[s][q] for s in systems)
        items.append(Item(q, sum(1 for s in systems if finds[s][q]), scores, len(set(scores)) > 1))
    return CellItems(systems, items)
