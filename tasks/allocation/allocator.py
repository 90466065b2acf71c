"""Allocation of items to cells (task x language) under the zero-overlap guarantee.

Pure logic, no I/O. Every key concept and every query ends up in at most one cell;
every item that is not placed gets a reason. Deterministic for a given seed.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from common.text import normalize
from schemas.drops import Drop
from tasks.dedup.near_duplicates import Duplicate, NearDuplicateIndex


@dataclass(frozen=True)
class Realization:
    text: str
    provenance: str


@dataclass(frozen=True)
class Candidate:
    id: str
    task: str
    native_lang: str
    native_text: str
    pivot: str | None  # None: a non-English source without English text
    key_cuis: tuple[str, ...]
    realizations: dict[str, Realization] = field(hash=False, compare=False)
    # languages besides the native one the source itself has the item in (its own translations)
    own_langs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Assignment:
    id: str
    task: str
    lang: str
    text: str
    provenance: str
    pivot: str
    cuis: tuple[str, ...]


TASK_ORDER = ("evidence", "xqa")


def duplicate_detail(dup: Duplicate) -> str:
    """A near-duplicate drop's detail: the query kept, the namespace and the Jaccard."""
    return f"{dup.kept_id} ({dup.namespace}, jaccard={dup.jaccard:.2f})"


def seeded_order(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


ENOUGH_TARGETS = 12  # per quota slot: what cd_targets draws per language under overlap "all"


def short_of_targets(languages: list[str], nameable: dict[str, int], quotas: dict[str, int]) -> list[str]:
    """The languages that can name fewer than ENOUGH_TARGETS x quota of the drawn targets,
    fewest first (then the build's order): they fill their cd cells first. Only the short
    ones go first: ordering every language by what it names put English last, on the
    concepts no other language names (HPO phenotypes asked by their definitions), and its
    dense easy tier fell from 1.000 to 0.929."""
    short = [l for l in languages if nameable.get(l, 0) < ENOUGH_TARGETS * quotas.get(l, 0)]
    return sorted(short, key=lambda l: (nameable.get(l, 0), languages.index(l)))


def oversupplied_cells(candidates: list[Candidate], quotas: dict[tuple[str, str], int]) -> set[tuple[str, str]]:
    """Pure: the cells that more candidates (with a key concept) can go to than their quota
    holds. Such a cell fills whichever of them come first; a scarce cell takes all it gets."""
    supply: Counter = Counter()
    for c in candidates:
        if c.key_cuis:
            supply.update((c.task, l) for l in c.realizations)
    return {cell for cell, n in supply.items() if n > quotas.get(cell, 0)}


def can_wait(cand: Candidate, oversupplied: set[tuple[str, str]]) -> bool:
    """Pure: may the item be placed after the others? Only if every cell it can go to is
    oversupplied: placed first, it would take concepts that items of a scarce cell need (the
    real-data build's 640 PubMedQA questions, for evidence/en's 340 places, took the
    answer concepts of 83 CasiMedicos cases that only evidence/es and evidence/fr can ask)."""
    return all((cand.task, l) in oversupplied for l in cand.realizations)


@dataclass
class _CellFill:
    """One language's cd cell being filled: what its tiers' sets are placed with."""
    lang: str
    stratum: object  # (cand, realization) -> bool, or None
    realize: object  # (cui, lang) -> Realization | None
    used_targets: set[str]
    chosen: list


class Allocator:
    def __init__(self, quotas: dict[tuple[str, str], int], languages: list[str], shingle_n: dict[str, int],
                 threshold: float, num_perm: int, seed: int, overlap_scope: str = "all"):
        # "key": a query's key concepts (a cd set's target) belong to one cell; "all": every
        # concept in any role (key concept, set target, distractor) belongs to one cell
        self.overlap_scope = overlap_scope
        self.quotas = quotas
        self.languages = languages
        self.shingle_n = shingle_n
        self.seed = seed
        self.dedup = NearDuplicateIndex(threshold, num_perm, seed)
        self.owner: dict[str, tuple[str, str]] = {}  # cui -> cell
        self.filled: Counter = Counter()
        self.assignments: list[Assignment] = []
        self.drops: list[Drop] = []  # every item not placed, with its code

    @property
    def dropped(self) -> list[tuple[str, str]]:
        """(id, reason) of every item not placed, in the order they were dropped."""
        return [(d.item_id, d.reason) for d in self.drops]

    def _drop(self, item_id: str, code: str, detail: str = "") -> None:
        self.drops.append(Drop(stage="allocation", item_id=item_id, code=code, detail=detail))

    # ------------------------------------------------------------------ helpers
    def _room(self, cell: tuple[str, str]) -> bool:
        return self.filled[cell] < self.quotas.get(cell, 0)

    def _fill_ratio(self, cell: tuple[str, str]) -> float:
        return self.filled[cell] / max(1, self.quotas.get(cell, 0))

    def _source_duplicate(self, item_id: str, native_lang: str, native_text: str, pivot: str | None):
        return (pivot and self.dedup.find(item_id, "pivot", pivot, self.shingle_n["en"])) or (
            self.dedup.find(item_id, f"text:{native_lang}", native_text, self.shingle_n[native_lang])
        )

    def _place(self, a: Assignment, native_lang: str, native_text: str) -> None:
        self.assignments.append(a)
        self.filled[(a.task, a.lang)] += 1
        for cui in a.cuis:
            self.owner[cui] = (a.task, a.lang)
        if a.pivot:
            self.dedup.add(a.id, "pivot", a.pivot, self.shingle_n["en"])
        self.dedup.add(a.id, f"text:{native_lang}", native_text, self.shingle_n[native_lang])
        if a.lang != native_lang:
            self.dedup.add(a.id, f"text:{a.lang}", a.text, self.shingle_n[a.lang])

    # ------------------------------------------------------------------ items (xqa, evidence)
    def choose_language(self, cand: Candidate) -> tuple[str | None, str]:
        """(the cell's language, "") or (None, why not, as the release words it)."""
        lang, why = self.placement(cand)
        return lang, "" if why is None else Drop(stage="allocation", item_id=cand.id, code=why[0], detail=why[1]).reason

    def placement(self, cand: Candidate) -> tuple[str | None, tuple[str, str] | None]:
        """(the cell's language, None) or (None, (drop code, detail))."""
        owners = {self.owner[c] for c in cand.key_cuis if c in self.owner}
        if len(owners) > 1:
            return None, ("key-concepts-owned", " and ".join(f"{t}/{l}" for t, l in sorted(owners)))
        if owners:
            task, lang = next(iter(owners))
            if task != cand.task:
                return None, ("key-concept-owned", f"{task}/{lang}")
            if lang not in cand.realizations:
                return None, ("owner-unrealizable", f"{task}/{lang}")
            if not self._room((task, lang)):
                return None, ("owner-full", f"{task}/{lang}")
            return lang, None
        options = [l for l in self.languages if l in cand.realizations and self._room((cand.task, l))]
        if not options:
            return None, ("cells-full", "") if cand.realizations else ("no-realization", "")
        own = [l for l in options if l != "en" and (l == cand.native_lang or l in cand.own_langs)]
        if own:
            # native questions are scarce: keep them native; an item its source has in several
            # languages (CasiMedicos: Spanish and its French) goes to the least filled of them
            return min(own, key=lambda l: (self._fill_ratio((cand.task, l)), self.languages.index(l))), None
        options.sort(key=lambda l: (self._fill_ratio((cand.task, l)), self.languages.index(l)))
        return options[0], None

    def allocate_items(self, candidates: list[Candidate]) -> None:
        # items that can wait last (every cell they can go to has more candidates than room:
        # another takes the place they leave), then most constrained first (fewest languages),
        # then a seeded shuffle. One question offered to both tasks (a source configured twice)
        # is decided in one place, evidence first (it must be answerable; xqa takes it when
        # evidence cannot): its copies share the shuffle key of the first of them, and wait
        # only if every copy can
        lead: dict[str, str] = {}
        for c in sorted(candidates, key=lambda c: (TASK_ORDER.index(c.task), c.id)):
            lead.setdefault(normalize(c.pivot or c.native_text), c.id)
        key = {c.id: lead[normalize(c.pivot or c.native_text)] for c in candidates}
        over = oversupplied_cells(candidates, self.quotas)
        scarce = {key[c.id] for c in candidates if not can_wait(c, over)}
        order = sorted(candidates, key=lambda c: (key[c.id] not in scarce, len(c.realizations), seeded_order(self.seed, key[c.id]),
                                                  TASK_ORDER.index(c.task), c.id))
        for cand in order:
            if not cand.key_cuis:
                self._drop(cand.id, "no-key-concept")
                continue
            dup = self._source_duplicate(cand.id, cand.native_lang, cand.native_text, cand.pivot)
            if dup is not None:
                self._drop(cand.id, "near-duplicate", duplicate_detail(dup))
                continue
            lang, why = self.placement(cand)
            first_clash = None
            while lang is not None:
                real = cand.realizations[lang]
                clash = self.dedup.find(cand.id, f"text:{lang}", real.text, self.shingle_n[lang])
                if clash is None:
                    break
                # that language's text duplicates another query; try the next one
                first_clash = first_clash or clash
                remaining = {k: v for k, v in cand.realizations.items() if k != lang}
                cand = Candidate(cand.id, cand.task, cand.native_lang, cand.native_text, cand.pivot, cand.key_cuis, remaining,
                                 cand.own_langs)
                lang, why = self.placement(cand)
            if lang is None and first_clash is not None:
                why = ("near-duplicate", duplicate_detail(first_clash))  # the clash is why it found no home, not the fallback's
            if lang is None:
                self._drop(cand.id, *why)
                continue
            real = cand.realizations[lang]
            self._place(Assignment(cand.id, cand.task, lang, real.text, real.provenance, cand.pivot, tuple(sorted(cand.key_cuis))),
                        cand.native_lang, cand.native_text)

    # ------------------------------------------------------------------ confusion sets
    def _viable_set(self, cand, lang: str, used_targets: set[str], realize):
        """The set's query in `lang` if the set can go to that cell now, else None."""
        cell = ("cd", lang)
        if cand.target_cui in self.owner or cand.target_cui in used_targets:
            return None
        if self.overlap_scope == "all" and any(self.owner.get(d, cell) != cell for d in cand.distractor_cuis):
            return None
        real = realize(cand.target_cui, lang)
        if real is None:
            return None
        set_id = f"cd-{lang}-{cand.target_cui}"
        if self.dedup.find(set_id, "pivot", cand.target_name, self.shingle_n["en"]) or self.dedup.find(
            set_id, f"text:{lang}", real.text, self.shingle_n[lang]
        ):
            return None
        return real

    def _place_set(self, cand, lang: str, real, used_targets: set[str]) -> Assignment:
        cell = ("cd", lang)
        a = Assignment(f"cd-{lang}-{cand.target_cui}", "cd", lang, real.text, real.provenance, cand.target_name, (cand.target_cui,))
        self._place(a, lang, real.text)
        if self.overlap_scope == "all":
            for d in cand.distractor_cuis:
                self.owner.setdefault(d, cell)
        used_targets.add(cand.target_cui)
        return a

    def _fill_tier(self, candidates, fill: "_CellFill", n: int, want_true: int | None, got: dict[bool, int]) -> None:
        """Place this tier's candidates in `fill.lang`'s cell until it holds `n` of them (`got`
        counts them by stratum), `want_true` of them in the True stratum where there are
        enough (the other stratum fills the rest once the tier's list is read)."""
        lang, stratum, realize, used_targets, chosen = fill.lang, fill.stratum, fill.realize, fill.used_targets, fill.chosen
        deferred = []
        candidates = iter(candidates)
        # full is tested before the next candidate is read: a lazy list computes what is read
        while got[True] + got[False] < n:
            cand = next(candidates, None)
            if cand is None:
                break
            real = self._viable_set(cand, lang, used_targets, realize)
            if real is None:
                continue
            if want_true is not None:
                side = bool(stratum(cand, real))
                limit = want_true if side else n - want_true
                if got[side] >= limit:
                    deferred.append(cand)  # the other stratum is short so far
                    continue
                got[side] += 1
            else:
                got[True] += 1
            chosen.append((self._place_set(cand, lang, real, used_targets), cand))
        for cand in deferred:  # a stratum ran out: fill the tier from the other one
            if got[True] + got[False] >= n:
                break
            real = self._viable_set(cand, lang, used_targets, realize)
            if real is not None:
                got[bool(stratum(cand, real))] += 1
                chosen.append((self._place_set(cand, lang, real, used_targets), cand))

    def allocate_confusion_sets(self, sets_by_tier: dict[str, list], realize, tiers: list[str], stratum=None,
                                nameable: dict[str, int] | None = None) -> list:
        """Pick cd sets per language, an equal share per tier where each tier's pool allows
        (what a tier cannot fill goes to the tiers with candidates left), targets unowned and
        unique.

        `sets_by_tier[tier]` holds ConfusionCandidate objects in seeded order;
        `realize(cui, lang)` returns a Realization, or None when the concept cannot be
        named in that language. With `stratum(cand, realization) -> bool`, every tier of a
        cell gets the same share of sets in the True stratum (as far as the pools allow):
        for a lexical retriever, whether the query shares any word with its target's entry
        decides more than the distractors do, and tiers that drew different shares of such
        targets by chance differ by that chance, not by their distractors.

        With `nameable` (per language, how many of the drawn targets it can name), a language
        short of targets fills its cell first (`short_of_targets`), as items go most
        constrained first: every concept in any role belongs to one cell, and the languages
        choosing first took the few concepts Russian can name (cd/ru 25 of 830 at the
        paper's quota). The others fill tier by tier: every language takes its share of a
        tier before any takes the next. Filled language by language, the hard sets of the
        first took the concepts the medium sets of the last needed (real data: cd/es 57
        medium test sets against 87-93 elsewhere).
        """
        chosen = []
        used_targets: set[str] = set()
        quotas = {l: self.quotas.get(("cd", l), 0) for l in self.languages}
        short = [] if nameable is None else short_of_targets(self.languages, nameable, quotas)
        for lang in short:
            fill = _CellFill(lang, stratum, realize, used_targets, chosen)
            self._fill_languages([(self._tier_reader(sets_by_tier, fill), fill)], tiers)
        together = []
        for lang in (l for l in self.languages if l not in short):
            fill = _CellFill(lang, stratum, realize, used_targets, chosen)
            together.append((self._tier_reader(sets_by_tier, fill), fill))
        self._fill_languages(together, tiers)
        return chosen

    def _tier_reader(self, sets_by_tier: dict[str, list], fill: "_CellFill"):
        """`read(tier)`: the tier's candidates for `fill.lang`, in order."""
        lang, used_targets, realize = fill.lang, fill.used_targets, fill.realize

        def passed_over(cui: str) -> bool:
            """`_viable_set` is None for any set of this target, whatever its distractors:
            a tier list need not compute them (at paper scale 7,699 sets were computed
            for German's 829, most for concepts German cannot name)."""
            return cui in self.owner or cui in used_targets or realize(cui, lang) is None

        def read(tier: str):
            got = sets_by_tier.get(tier, [])
            if hasattr(got, "for_language"):  # one list per language (confusion.ByLanguage)
                got = got.for_language(lang)
            return got.read(passed_over) if hasattr(got, "read") else iter(got)
        return read

    def _stratum_shares(self, read, fill: "_CellFill", per_tier: dict[str, int]) -> tuple[dict[str, int], float]:
        """Probe the stratum of the sets each tier would take, to share them out evenly: the
        True-stratum count wanted per tier, and the probed share."""
        probe: dict[str, list[bool]] = {t: [] for t in per_tier}
        for tier in per_tier:
            for cand in read(tier):
                if len(probe[tier]) >= 2 * per_tier[tier]:
                    break
                real = self._viable_set(cand, fill.lang, fill.used_targets, fill.realize)
                if real is not None:
                    probe[tier].append(bool(fill.stratum(cand, real)))
        seen = sum(len(v) for v in probe.values())
        share = sum(sum(v) for v in probe.values()) / seen if seen else 0.0
        return {t: round(per_tier[t] * share) for t in per_tier}, share

    def _fill_languages(self, cells: list, tiers: list[str]) -> None:
        """Fill these languages' cells (`(read, fill)` pairs) tier by tier, in order."""
        plans = [(read, fill, *self._tier_plan(read, fill, tiers)) for read, fill in cells]
        for tier in tiers:
            for read, fill, per_tier, want_true, _share, placed in plans:
                self._fill_tier(read(tier), fill, per_tier[tier], want_true[tier], placed[tier])
        # a tier whose pool ran out leaves the rest of its share to the tiers that have
        # candidates left, in order: a cell takes as many sets as its pools allow (the few
        # Russian names reach few siblings: equal shares left cd/ru at 172 of 300)
        for tier in tiers:
            for read, fill, _per_tier, want_true, share, placed in plans:
                short = self.quotas.get(("cd", fill.lang), 0) - sum(sum(p.values()) for p in placed.values())
                if short <= 0:
                    continue
                have = sum(placed[tier].values())
                want = None if want_true[tier] is None else round((have + short) * share)
                self._fill_tier(read(tier), fill, have + short, want, placed[tier])

    def _tier_plan(self, read, fill: "_CellFill", tiers: list[str]) -> tuple[dict, dict, float, dict]:
        """A cell's equal share per tier, the True-stratum count wanted per tier (probed),
        the probed share, and its placed counts (per tier, per stratum) to fill in."""
        quota = self.quotas.get(("cd", fill.lang), 0)
        per_tier = {t: quota // len(tiers) + (1 if i < quota % len(tiers) else 0) for i, t in enumerate(tiers)}
        want_true: dict[str, int | None] = {t: None for t in tiers}
        share = 0.0
        if fill.stratum is not None and quota:
            want_true, share = self._stratum_shares(read, fill, per_tier)
        return per_tier, want_true, share, {t: {True: 0, False: 0} for t in tiers}
