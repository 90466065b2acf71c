"""How a release's cd tiers read through retrieval systems: the evidence of the audit's tier check.

    cd_cells(...), bm25_readings(cells, confusion, languages), evaluation_readings(results, cells, confusion)
    judge_cell(cell, readings) -> CellVerdict

A reading is one system's within-set accuracy@1 per tier on one cd cell: each set's target
ranked among its own members, with the blind-guess rate beside it (1 / the set's distinct
members). Two readings come from the folder alone, with BM25 (the cell's corpus indexed as
`evaluate` indexes it):

- `bm25 (English pivots)`: the cell's queries asked in English (each query's `pivot_text`;
  an English cell's own queries). English names against English entries: this reads how
  hard each distractor set is, in every cell whatever its language, so the tiers themselves
  are checked everywhere. A cd pivot is the target's own name, which its entry holds, so
  its accuracy@1 sits near its ceiling in every tier; the gate reads `closeness` instead,
  how near the set's best distractor scores to the target.
- `bm25`: the cell's own queries, tokenized as the registry says for the language.

and one per system a build's own evaluation scored (`evaluation/results.json`, when it is
this build's: its per-tier within-set accuracy, ties at their expectation, summed over the
splits it scored). The audit reads the pivot tiers as a gate, and the native ones through
the systems above chance in the cell: a system whose accuracy over the cell's sets does not
exceed the blind guess by more than CHANCE_Z standard errors (the test `evaluate` labels a
ladder "at chance" by, tasks/evaluation/tier_steps.py) tells its members apart no better than a guess (BM25 where the language shares no token, or few, with the English
entries), so its order says nothing of the tiers. Where no system is above chance the cell
is labelled, never failed on them. A tie counts as a miss in the audit's BM25 readings (a
tie is not a discrimination); the evaluation's are its published numbers.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import NormalDist

from schemas.config import Language
from schemas.records import TIERS
from tasks.evaluation.tier_steps import above_chance, chance_z

TIER_MIN_SETS = 30  # a ladder is judged where every tier holds this many sets
TIER_FALL_Z = 2.0  # easy -> hard must fall by more than this many standard errors
TIER_RISE_Z = 2.0  # no step to a harder tier may rise by more than this many (the pivots' closeness)
# A system's accuracy may rise at no step by more than `rise_z(n)` standard errors, n the steps
# the release compares: one-sided, Bonferroni over the family at RISE_ALPHA. At a fixed 2.0 the
# real-data release (21 readers above chance, 42 steps, about ten of them flat: medium -> hard in
# zh, ja, ru) fails on noise alone with about 1 - (1 - 0.023)^10 = 0.2; it did once (cd/ja, z 2.37).
# A step that is really inverted is far beyond 3.
RISE_ALPHA = 0.05

PIVOT_READER = "bm25 (English pivots)"
NATIVE_READER = "bm25"


@dataclass
class Tally:
    """One tier of one reading: sets, their summed accuracy@1 and summed blind-guess rate."""

    n: int = 0
    hits: float = 0.0
    chance: float = 0.0
    closeness: list[float] = field(default_factory=list)  # the pivot reading's: see `closeness`

    @property
    def accuracy(self) -> float | None:
        return round(self.hits / self.n, 4) if self.n else None

    @property
    def mean_closeness(self) -> float | None:
        return round(sum(self.closeness) / len(self.closeness), 4) if self.closeness else None

    def add(self, hit: float, members: int) -> None:
        self.n += 1
        self.hits += hit
        self.chance += 1.0 / members


@dataclass
class Reading:
    cell: str
    reader: str
    source: str  # "audit" (BM25 from the folder) or "evaluation" (evaluation/results.json)
    pivot: bool = False
    tiers: dict[str, Tally] = field(default_factory=lambda: {t: Tally() for t in TIERS})

    def sets(self) -> int:
        return sum(t.n for t in self.tiers.values())

    def accuracy(self) -> float | None:
        n = self.sets()
        return round(sum(t.hits for t in self.tiers.values()) / n, 4) if n else None

    def chance(self) -> float | None:
        n = self.sets()
        return round(sum(t.chance for t in self.tiers.values()) / n, 4) if n else None

    def chance_z(self) -> float | None:
        """Standard errors by which the accuracy over every set exceeds the blind guess."""
        return chance_z(sum(t.hits for t in self.tiers.values()), sum(t.chance for t in self.tiers.values()), self.sets())

    def above_chance(self) -> bool:
        return above_chance(sum(t.hits for t in self.tiers.values()), sum(t.chance for t in self.tiers.values()), self.sets())

    def judged(self) -> bool:
        return min(t.n for t in self.tiers.values()) >= TIER_MIN_SETS

    def z(self, upper: str, lower: str) -> float:
        """Standard errors by which tier `upper`'s accuracy exceeds tier `lower`'s."""
        a, b = self.tiers[upper], self.tiers[lower]
        pa, pb = a.hits / a.n, b.hits / b.n
        se = math.sqrt(pa * (1 - pa) / a.n + pb * (1 - pb) / b.n) or 1e-9
        return (pa - pb) / se

    def ladder(self) -> str:
        return "/".join(str(self.tiers[t].accuracy) for t in TIERS)

    def closeness_z(self, easier: str, harder: str) -> float:
        """Standard errors by which tier `harder`'s mean closeness exceeds tier `easier`'s (Welch)."""
        a, b = self.tiers[easier].closeness, self.tiers[harder].closeness
        ma, mb = sum(a) / len(a), sum(b) / len(b)
        va = sum((x - ma) ** 2 for x in a) / max(len(a) - 1, 1)
        vb = sum((x - mb) ** 2 for x in b) / max(len(b) - 1, 1)
        se = math.sqrt(va / len(a) + vb / len(b)) or 1e-9
        return (mb - ma) / se

    def closeness_ladder(self) -> str:
        return "/".join(str(self.tiers[t].mean_closeness) for t in TIERS)


# ----------------------------------------------------------------------------- readings


@dataclass
class CdCell:
    """What the readings need of one cd cell: its entries and its queries by set id."""

    lang: str
    docs: dict[str, dict]
    queries: dict[str, dict]


def cd_cells(cells: Iterable[tuple[str, list[dict], list[dict]]]) -> dict[str, CdCell]:
    """(lang, corpus rows, query rows) of each cd cell -> `CdCell`s keyed `cd/<lang>`."""
    return {f"cd/{lang}": CdCell(lang, {d["_id"]: d for d in corpus if "_id" in d}, {q.get("_id"): q for q in queries})
            for lang, corpus, queries in cells}


def set_members(s: dict, docs: dict[str, dict]) -> list[str] | None:
    """A set's distinct members in the cell's corpus, target first; None when its target is
    not an entry of the cell (the qrels and confusion checks name it)."""
    target = s.get("target_cui")
    if target not in docs:
        return None
    members = [target]
    for d in s.get("distractor_cuis", []):
        if d in docs and d not in members:
            members.append(d)
    return members


def closeness(scores: dict[str, float], target: str) -> float:
    """How close the set's nearest distractor comes to its target for one query: the best
    distractor's score over the target's, capped at 1 (1: a distractor scores as high as the
    target, or the target scores nothing). The English pivot is the target's own name, which
    its entry holds: accuracy@1 sits at its ceiling in every tier, the closeness does not."""
    best = scores[target]
    rival = max((v for k, v in scores.items() if k != target), default=0.0)
    return 1.0 if best <= 0 else min(rival / best, 1.0)


def strict_hit(scores: dict[str, float], target: str) -> float:
    """1 when the target scores above 0 and strictly above every other member, else 0."""
    best = scores[target]
    return float(best > 0 and all(best > v for k, v in scores.items() if k != target))


def bm25_readings(cells: dict[str, CdCell], confusion: list[dict], languages: dict[str, Language]) -> list[Reading]:
    """Per cd cell: the English pivot reading and the native reading, with the cell's BM25 index."""
    from tasks.evaluation.lexical import BM25Index, document_text, tokenizer_for

    out = []
    english = languages.get("en")
    for cell, c in sorted(cells.items()):
        lang = languages.get(c.lang)
        if not c.docs or english is None:
            continue
        docs = sorted((k, document_text(d)) for k, d in c.docs.items())
        pivot_index = BM25Index(docs, tokenizer_for(english))
        native_index = pivot_index if lang is None or lang.segmenter == english.segmenter \
            else BM25Index(docs, tokenizer_for(lang))
        pivot, native = Reading(cell, PIVOT_READER, "audit", pivot=True), Reading(cell, NATIVE_READER, "audit")
        for s in confusion:
            if s.get("lang") != c.lang or s.get("tier") not in TIERS:
                continue
            members = set_members(s, c.docs)
            q = c.queries.get(s.get("set_id"))
            if members is None or q is None:
                continue
            english_text = q.get("text", "") if c.lang == "en" else q.get("pivot_text") or ""
            if lang is not None:
                native.tiers[s["tier"]].add(strict_hit(dict(native_index.within(q.get("text", ""), members)), members[0]), len(members))
            if english_text:
                scores = dict(pivot_index.within(english_text, members))
                pivot.tiers[s["tier"]].add(strict_hit(scores, members[0]), len(members))
                pivot.tiers[s["tier"]].closeness.append(closeness(scores, members[0]))
        out += [pivot, native]
    return out


def evaluation_readings(results: dict | None, cells: dict[str, CdCell], confusion: list[dict]) -> list[Reading]:
    """One native reading per system and cd cell of the build's own evaluation (its `tiers`
    rows, summed over the splits it scored; ties at their expectation, as published). The
    blind guess of a tier is its sets' mean 1 / members, over the cell's sets of that tier."""
    if not results:
        return []
    guess: dict[tuple[str, str], list[float]] = {}
    for s in confusion:
        c = cells.get(f"cd/{s.get('lang')}")
        members = set_members(s, c.docs) if c is not None else None
        if members is not None:
            guess.setdefault((s["lang"], s.get("tier")), []).append(1.0 / len(members))
    out: dict[tuple[str, str], Reading] = {}
    for row in results.get("tiers", []):
        cell, tier = f"cd/{row.get('lang')}", row.get("tier")
        if cell not in cells or tier not in TIERS or not row.get("count") or row.get("accuracy_at_1") is None:
            continue
        if row.get("retriever") == NATIVE_READER:  # the audit reads BM25 itself, every split, ties as misses
            continue
        g = guess.get((row["lang"], tier))
        if not g:
            continue
        r = out.setdefault((cell, row["retriever"]), Reading(cell, row["retriever"], "evaluation"))
        t = r.tiers[tier]
        t.n += row["count"]
        t.hits += row["accuracy_at_1"] * row["count"]
        t.chance += sum(g) / len(g) * row["count"]
    return [out[k] for k in sorted(out)]


# ----------------------------------------------------------------------------- verdicts


@dataclass
class CellVerdict:
    cell: str
    pivot: Reading | None
    readers: list[Reading]  # the native readings above chance, with TIER_MIN_SETS sets a tier
    at_chance: list[Reading]  # the native readings with as many sets that are not above chance
    unjudged: list[Reading]  # the native readings with fewer sets in some tier
    failures: list[str]

    def label(self) -> str:
        """How the cell's own queries read its tiers, in a few words."""
        if self.readers:
            return "read by " + ", ".join(f"{r.reader} {r.ladder()}" for r in self.readers)
        if self.at_chance:
            return (f"at chance for {', '.join(r.reader for r in self.at_chance)} "
                    "(the tiers are read through the English pivots only)")
        ladders = ", ".join(f"{r.reader} {r.ladder()}" for r in self.unjudged) or "no reading"
        return f"{ladders}, under {TIER_MIN_SETS} sets a tier: not judged"


def _z(z: float) -> str:
    """A z for the reports; two tiers without spread give +-inf (their standard error is 0)."""
    return f"{z:.2f}" if abs(z) < 1e6 else ("inf" if z > 0 else "-inf")


def rise_z(steps: int) -> float:
    """Pure: the z a system's step to a harder tier must exceed to fail, with `steps` such steps
    compared in the release (one-sided, Bonferroni at RISE_ALPHA; 2 steps: 1.96, 42: 3.04)."""
    return round(NormalDist().inv_cdf(1 - RISE_ALPHA / max(steps, 1)), 2)


def _ladder_failures(r: Reading, what: str, rise: float) -> tuple[bool, list[str]]:
    """(falls easy -> hard beyond noise, each step that rises beyond `rise` as a failure)."""
    rises = []
    for a, b in (("easy", "medium"), ("medium", "hard")):
        if -r.z(a, b) > rise:
            rises.append(f"{r.cell}: {what} within-set accuracy@1 rises from {a} to {b} beyond noise: "
                         f"{r.tiers[a].accuracy} -> {r.tiers[b].accuracy} (z {-r.z(a, b):.2f} > {rise})")
    return r.z("easy", "hard") > TIER_FALL_Z, rises


def _readers(own: list[Reading]) -> list[Reading]:
    """The native readings that judge a cell: above chance, every tier with TIER_MIN_SETS sets."""
    return [r for r in own if not r.pivot and r.sets() and r.judged() and r.above_chance()]


def judge_cell(cell: str, readings: list[Reading], rise: float | None = None) -> CellVerdict:
    """The tier check of one cd cell.

    Pivot (the tiers themselves), where every tier holds TIER_MIN_SETS sets: under the English
    pivots the nearest distractor's closeness to the target must grow from easy to hard by
    more than TIER_FALL_Z standard errors, and shrink at no step by more than TIER_RISE_Z. Native (the cell's own queries),
    through the systems above chance whose tiers hold TIER_MIN_SETS sets: at least one of
    them must see the fall, and none a rise beyond `rise` (default: `rise_z` of this cell's
    steps; `judge` passes the release's). No system above chance: labelled, not failed."""
    own = [r for r in readings if r.cell == cell]
    pivot = next((r for r in own if r.pivot), None)
    failures: list[str] = []
    if pivot is not None and pivot.judged():
        # the tiers themselves: the nearest distractor comes closer to the target tier by tier
        z = pivot.closeness_z("easy", "hard")
        if z <= TIER_FALL_Z:
            failures.append(f"{cell}: {PIVOT_READER}: the nearest distractor does not come closer from easy to hard "
                            f"beyond noise: closeness {pivot.tiers['easy'].mean_closeness} -> "
                            f"{pivot.tiers['hard'].mean_closeness} (z {_z(z)} <= {TIER_FALL_Z})")
        for a, b in (("easy", "medium"), ("medium", "hard")):
            if -pivot.closeness_z(a, b) > TIER_RISE_Z:
                failures.append(f"{cell}: {PIVOT_READER}: the nearest distractor is farther in {b} than in {a} beyond "
                                f"noise: closeness {pivot.tiers[a].mean_closeness} -> {pivot.tiers[b].mean_closeness} "
                                f"(z {-pivot.closeness_z(a, b):.2f} > {TIER_RISE_Z})")
    native = [r for r in own if not r.pivot and r.sets()]
    readers = _readers(own)
    if readers:
        rise = rise_z(2 * len(readers)) if rise is None else rise
        results = [_ladder_failures(r, r.reader, rise) for r in readers]
        if not any(falls for falls, _ in results):
            failures.append(f"{cell}: no system above chance sees within-set accuracy@1 fall from easy to hard beyond noise: "
                            + "; ".join(f"{r.reader} {r.tiers['easy'].accuracy} -> {r.tiers['hard'].accuracy} "
                                        f"(z {r.z('easy', 'hard'):.2f} <= {TIER_FALL_Z})" for r in readers))
        failures += [f for _, rises in results for f in rises]
    return CellVerdict(cell, pivot, readers, [r for r in native if r.judged() and not r.above_chance()],
                       [r for r in native if not r.judged()], failures)


def judge(readings: list[Reading]) -> list[CellVerdict]:
    cells = sorted({r.cell for r in readings})
    rise = rise_z(2 * sum(len(_readers([r for r in readings if r.cell == c])) for c in cells))
    return [judge_cell(cell, readings, rise) for cell in cells]


def folder_verdicts(out_dir, manifest: dict) -> list[CellVerdict]:
    """The verdicts of a release folder being written (the card's table, before the manifest
    is on disk): its cd cells, confusion sets, the manifest's registry and, when the folder
    holds it, the build's own evaluation."""
    import json
    from pathlib import Path

    out_dir = Path(out_dir)

    def rows(path: Path) -> list[dict]:
        if not path.exists():
            return []
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    languages = {k: Language.model_validate(v) for k, v in manifest.get("languages", {}).items()}
    langs = sorted(c.split("/")[1] for c in manifest.get("cells", {}) if c.startswith("cd/"))
    cells = cd_cells((l, rows(out_dir / "cd" / l / "corpus.jsonl"), rows(out_dir / "cd" / l / "queries.jsonl")) for l in langs)
    confusion = rows(out_dir / "cd" / "confusion_sets.jsonl")
    results_path = out_dir / "evaluation" / "results.json"
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.exists() else None
    if results is not None and results.get("build_id") != manifest.get("build_id"):
        results = None
    readings = bm25_readings(cells, confusion, languages) + evaluation_readings(results, cells, confusion)
    return judge(readings)
