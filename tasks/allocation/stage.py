"""Stage: allocate items and confusion sets to cells; every drop keeps its reason."""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from itertools import repeat
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.config import Language
from schemas.drops import DROP_TABLE, GATE_TABLE, UNREALIZED_TABLE, Drop, drop_rows
from schemas.gates import gate_key
from schemas.parameters import AllocationParameters
from tasks.allocation.allocator import Allocator, Candidate, Realization, seeded_order
from tasks.allocation.concept_entries import EntryParts, concept_entry, english_queries, entry_parts, first_fair_query
from tasks.allocation.confusion import computed_on, lazy_candidates, set_workers
from tasks.allocation.hierarchy import Hierarchy
from tasks.allocation.lexicon import Lexicon
from tasks.allocation.tiers import ConceptInfo, TierPools
from tasks.sources.stage import source_drops
from tasks.translation.gates import text_gates, translation_gates
from tasks.translation.memory import TranslationMemory
from tasks.translation.stage import PROVENANCE_OF_STATUS
from common.parquet import pylist, rows as table_rows, write_parquet

ASSIGNMENT_SCHEMA = pa.schema([
    ("id", pa.string()), ("task", pa.string()), ("lang", pa.string()), ("text", pa.string()),
    ("provenance", pa.string()), ("pivot", pa.string()), ("cuis", pa.list_(pa.string())),
    ("passage_ids", pa.list_(pa.string())), ("tier", pa.string()), ("distractor_cuis", pa.list_(pa.string())),
])


class ConceptRealizer:
    """Names a concept in a language without giving its entry away (`concept_entries`).

    English: a synonym withheld from the entry, else the definition as a description.
    Another language: its vocabulary atoms, best first, else a translation-memory entry for
    the English name; each text passes the gates and must not be found in the entry by
    string matching."""

    def __init__(self, atoms: dict[str, pa.Table], entries: Mapping[str, EntryParts], languages: dict[str, Language],
                 tm: TranslationMemory, backend: str | None = None):
        """`atoms[lang]`: the language's atoms (cui, str, ispref, sab), for the languages to name in."""
        self.languages, self.tm, self.entries, self.backend = languages, tm, entries, backend
        self._names = {lang: ranked_names(t, languages[lang].preferred_sources) for lang, t in sorted(atoms.items())
                       if lang in languages and lang != "en"}
        self.rejections: dict[str, int] = defaultdict(int)
        self._english: dict[str, list[str]] = {}
        self._made: dict[tuple[str, str], Realization | None] = {}

    def english(self, cui: str) -> list[str]:
        """`english_queries` of the concept (asked for by `can_name`, then again by the call)."""
        hit = self._english.get(cui)
        if hit is None:
            hit = self._english[cui] = english_queries(self.entries[cui])
        return hit

    def names(self, cui: str, lang: str) -> list[str]:
        """The concept's atoms in `lang`, best first (preferred, then by preferred source, then text)."""
        got = self._names.get(lang)
        span = got[0].get(cui) if got else None
        return [] if span is None else pylist(got[1].slice(span[0], span[1] - span[0]))

    def __call__(self, cui: str, lang: str) -> Realization | None:
        """The concept's query in `lang`, or None. Made once per concept and language; a
        rejection by the gates is counted then (a concept, not each time it is asked for)."""
        key = (cui, lang)
        if key not in self._made:
            self._made[key] = self._make(cui, lang)
        return self._made[key]

    def _make(self, cui: str, lang: str) -> Realization | None:
        parts = self.entries[cui]
        lang_def = self.languages[lang]
        # the same gates as every other query text (the audit re-runs them), then fairness
        names = self.english(cui) if lang == "en" else self.names(cui, lang)
        text = first_fair_query((t for t in names if not text_gates(t, lang_def, self.backend)), parts)
        if text is not None:
            return Realization(text, "terminology")
        if lang == "en":
            return None
        entry = self.tm.lookup(parts.name, "en", lang)
        if entry is None:
            return None
        failures = translation_gates(parts.name, entry.target, self.languages["en"], lang_def, self.backend)
        if failures:
            for f in failures:
                self.rejections[gate_key(lang, f.gate)] += 1
            return None
        if first_fair_query([entry.target], parts) is None:
            self.rejections[gate_key(lang, "gives its entry away")] += 1
            return None
        return Realization(entry.target, PROVENANCE_OF_STATUS[entry.status])

    def can_name(self, cui: str, lang: str) -> bool:
        """Cheap pre-check (no gates): is there any candidate name in the language?"""
        if lang == "en":
            return bool(self.english(cui))
        return cui in self._names.get(lang, {0: {}})[0] or self.tm.lookup(self._english_name(cui), "en", lang) is not None

    def _english_name(self, cui: str) -> str:
        name_of = getattr(self.entries, "name", None)  # an EntryTable names without making the parts
        return name_of(cui) if name_of is not None else self.entries[cui].name


def ranked_names(atoms: pa.Table, preferred_sources: list[str]) -> tuple[dict[str, tuple[int, int]], pa.Array]:
    """Pure: each concept's distinct (preferred?, source rank, text) atoms sorted as tuples
    (preferred first, then by the language's preferred sources, then text), as
    (cui -> (start, stop) into the texts, texts). Arrow sorts strings by UTF-8 bytes, which
    is code-point order, as Python's tuple sort. The same text from two sources of different
    rank is listed twice, as before."""
    prefs = pa.array(preferred_sources, pa.string())
    t = pa.table({
        "cui": atoms["cui"], "nopref": pc.invert(pc.fill_null(atoms["ispref"], False)),
        "rank": pc.fill_null(pc.index_in(atoms["sab"], value_set=prefs), len(preferred_sources)), "str": atoms["str"],
    })
    keys = ["cui", "nopref", "rank", "str"]
    t = t.group_by(keys, use_threads=False).aggregate([]).sort_by([(k, "ascending") for k in keys])
    cuis = t["cui"].combine_chunks()
    n = len(cuis)
    if n == 0:
        return {}, pa.array([], pa.string())
    starts = np.flatnonzero(np.concatenate([[True], pc.not_equal(cuis.slice(1), cuis.slice(0, n - 1)).to_numpy(zero_copy_only=False)]))
    stops = np.append(starts[1:], n)
    return dict(zip(pylist(cuis.take(pa.array(starts))), zip(starts.tolist(), stops.tolist()))), t["str"].combine_chunks()


def cd_targets(eligible: list[str], languages: list[str], quota: int, can_name, floor: int = 400,
               per_language: int = 4) -> list[str]:
    """Pure: the confusion-set targets to build sets for, in `eligible`'s (seeded) order.

    The first `floor` eligible concepts, plus, for each language, its next
    `per_language * quota` eligible concepts that it can name at all and that no earlier
    language drew. Drawing targets
    without asking whether a language can name them left the cd cells of languages with
    few atoms short at paper scale (zh filled 465 of 829), while 20x enough nameable
    concepts existed. Each target later gets one tier, hence the margin."""
    chosen = set(eligible[:floor])
    for lang in languages:
        # counted only when drawn for this language: targets already chosen are what
        # earlier languages (English first, able to name everything) will take
        want = per_language * quota
        for cui in eligible:
            if want <= 0:
                break
            if cui not in chosen and can_name(cui, lang):
                chosen.add(cui)
                want -= 1
    return [c for c in eligible if c in chosen]


def concept_infos(concepts_t: pa.Table) -> dict[str, ConceptInfo]:
    """Every named concept's type, group and English name. Types and groups are a few
    hundred distinct strings: one object each, not one per concept."""
    shared: dict[str, str] = {}
    tuis = [shared.setdefault(t, t) for t in pylist(concepts_t["tui"])]
    groups = [shared.setdefault(g, g) for g in pylist(concepts_t["group"])]
    return {c: ConceptInfo(c, tui, grp, name)
            for c, tui, grp, name in zip(pylist(concepts_t["cui"]), tuis, groups, pylist(concepts_t["name_en"])) if name}


def english_stop_words() -> frozenset[str]:
    """spaCy's bundled English stop-word list, read from its module file: importing it the
    usual way imports spaCy, thinc and torch (seconds and about 230 MB) for one word list."""
    import importlib.util

    spec = importlib.util.find_spec("spacy")  # finds the package without importing it
    path = Path(spec.submodule_search_locations[0]) / "lang" / "en" / "stop_words.py"
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location("_spacy_en_stop_words", path))
    module.__spec__.loader.exec_module(module)
    return frozenset(module.STOP_WORDS)


def read_atoms(vocab: dict, lang: str, columns: list[str]) -> pa.Table:
    """One language's atoms, in the vocabulary's order: its own file when there is one."""
    path = (vocab.get("atoms_by_lang") or {}).get(lang)
    if path:
        return pq.read_table(path, columns=columns)
    atoms = pq.read_table(vocab["atoms"], columns=[*columns, "lang"])
    return atoms.filter(pc.equal(atoms["lang"], lang)).select(columns)


class _NamesOf:
    """A concept's English names (preferred, then synonyms), looked up as `names.get(cui, default)`."""

    def __init__(self, entries):
        self.entries = entries

    def get(self, cui: str, default=()):
        return self.entries.names_of(cui, default)


def seed_from_release(alloc: Allocator, base: Path, languages: dict[str, Language]) -> set[str]:
    """Pre-load an allocator with a published release: its key concepts stay owned by their
    cells, its queries stay in the near-duplicate index. Returns the ids already used."""
    import json

    used: set[str] = set()
    texts: list[tuple[str, str, str, int]] = []  # added to the index in one batch, in this order
    manifest = json.loads((base / "manifest.json").read_text(encoding="utf-8"))
    for cell in sorted(manifest["cells"]):
        task, lang = cell.split("/")
        n = manifest["languages"][lang]["shingle_n"]
        for line in (base / task / lang / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            used.add(q["_id"])
            for cui in q["cuis"]:
                alloc.owner[cui] = (task, lang)
            if q.get("pivot_text"):
                texts.append((q["_id"], "pivot", q["pivot_text"], alloc.shingle_n["en"]))
            texts.append((q["_id"], f"text:{lang}", q["text"], n))
    alloc.dedup.add_many(texts)
    if alloc.overlap_scope == "all":
        for line in (base / "cd" / "confusion_sets.jsonl").read_text(encoding="utf-8").splitlines():
            s = json.loads(line)
            for cui in s["distractor_cuis"]:
                alloc.owner.setdefault(cui, ("cd", s["lang"]))
    return used


def index_entries(vocab: dict, out_dir: str) -> dict[str, str]:
    """The English entries' lexicon (`lexicon.Lexicon`: every entry's words, IDF), written
    for allocation. It depends on the vocabulary alone, so a build that adds a language or
    changes quotas reads it from the cache (2.3 s of add-language's 19 s allocation at
    paper scale); a cold build makes it once grounding is done."""
    concepts_t = pq.read_table(vocab["concepts"])
    entries = entry_parts(concepts_t, read_atoms(vocab, "en", ["cui", "str"]))
    owner, texts = entries.entry_texts()
    return Lexicon.from_texts(entries.cuis, owner, texts, {}, english_stop_words()).save(Path(out_dir) / "lexicon")


def _realizations(realized: list[str]) -> tuple[dict[str, dict[str, Realization]], Counter, Counter]:
    """Each item's texts by language; the translation gates' rejections by "lang: gate"; and
    the texts never made, by (lang, Unrealized code): they failed no gate (nothing to gate)."""
    reals: dict[str, dict[str, Realization]] = defaultdict(dict)
    gate_rejections: Counter = Counter()
    unrealized: Counter = Counter()
    for s in realized:
        for r in table_rows(pq.read_table(s)):
            if r["unrealized"] is not None:
                unrealized[(r["lang"], r["unrealized"])] += 1
            elif r["gates"]:
                gate_rejections.update(gate_key(r["lang"], g) for g in r["gates"])
            else:
                reals[r["id"]][r["lang"]] = Realization(r["text"], r["provenance"])
    return reals, gate_rejections, unrealized


def grounding_verdict(item: dict, grounding: dict) -> Drop | None:
    """Pure: None to keep the item, else why grounding left it without a gold passage (or,
    first, without key concepts: a case whose correct answer names none, key_concepts "answer")."""
    if grounding.get("no_passage"):
        return Drop(stage="grounding", item_id=item["id"], code=grounding["no_passage"])
    if item["task"] == "evidence" and not grounding["answerable"]:
        # evidence must be quality-assured (DESIGN §1); an exam question's answer passage
        # (the correct option) rarely names the question's concept, and need not
        return Drop(stage="grounding", item_id=item["id"], code="unanswerable")
    return None


def _candidates(items: dict[str, dict], ground: dict[str, dict], reals: dict, order: list[str],
                used: set[str]) -> tuple[list[Candidate], list[Drop]]:
    """The items allocation places, and the ones grounding's verdict drops."""
    cands, drops = [], []
    for item_id in sorted(items):
        if item_id in used:
            continue
        it, g = items[item_id], ground[item_id]
        drop = grounding_verdict(it, g)
        if drop is not None:
            drops.append(drop)
            continue
        if g.get("answer_cuis"):
            # gold passages: the answers' concept entries (ids: the CUIs); hard negatives: the
            # other options' entries (the release writes both into the task's corpus)
            it["passage_ids"] = list(g["answer_cuis"])
            it["negative_cuis"] = list(g["negative_cuis"])
        options = {l: r for l, r in reals[item_id].items() if l in order}
        own = tuple(sorted(t["lang"] for t in it.get("translations") or []))
        cands.append(Candidate(item_id, it["task"], it["lang"], it["text"], it["pivot"], tuple(g["key_cuis"]), options, own))
    return cands, drops


def _confusion_sets(alloc: Allocator, params: AllocationParameters, vocab: dict[str, str],
                    lexicon_files: dict[str, str]) -> tuple[list, dict[str, int]]:
    """Confusion sets over the concepts nobody owns yet: (assignment, candidate) pairs, and
    the gates' rejections of the concepts' translations."""
    order, seed = params.targets, params.seed
    concepts_t = pq.read_table(vocab["concepts"])
    concepts = concept_infos(concepts_t)
    hierarchy = Hierarchy(table=pq.read_table(vocab["parents"]))
    eligible = sorted((c for c, info in concepts.items() if info.group in params.key_groups and c not in alloc.owner),
                      key=lambda c: seeded_order(seed, f"cd-target:{c}"))
    # only the columns and languages used: English (entries) and the languages named here
    atoms = {lang: read_atoms(vocab, lang, ["cui", "str"] if lang == "en" else ["cui", "str", "ispref", "sab"])
             for lang in sorted({"en", *order})}
    entries = entry_parts(concepts_t, atoms["en"])
    realizer = ConceptRealizer(atoms, entries, params.languages, TranslationMemory.from_files([Path(p) for p in params.memory]),
                               params.langid_backend)
    del atoms
    # with every role owned, sets compete for their distractors too: draw more candidates
    targets = cd_targets(eligible, order, params.quotas["cd"], realizer.can_name,
                         per_language=4 if params.overlap_scope == "key" else 12)
    lexicon = Lexicon.load(lexicon_files, _NamesOf(entries))
    excluded = frozenset(alloc.owner) if params.overlap_scope == "all" else frozenset()
    # computed as the allocator reads them: it stops once the cells are full
    sets_by_tier = lazy_candidates(TierPools.build(concepts, hierarchy, lexicon, params.distractors, seed, excluded), targets,
                                   one_tier_per_target=True,
                                   names_in=realizer.names, languages=tuple(order))

    def shares_a_word(cand, real) -> bool:
        """Does the query share any word with its target's entry (the query withheld)?"""
        entry = concept_entry(entries[cand.target_cui], withheld=real.text)
        return bool(lexicon.words_of(real.text) & lexicon.words_of(f"{entry['title']} {entry['text']}"))

    # with MMEDBENCH_ALLOC_WORKERS > 1: the sets ahead of the allocator's reading, on worker
    # processes forked now (sharing the lexicon and hierarchy copy-on-write); the same lists,
    # in the same order, as in-process
    with computed_on(sets_by_tier, set_workers()):
        chosen = alloc.allocate_confusion_sets(sets_by_tier, realizer, ["easy", "medium", "hard"], stratum=shares_a_word,
                                               nameable={l: sum(map(realizer.can_name, targets, repeat(l))) for l in order})
    return chosen, realizer.rejections


def _assignment_rows(alloc: Allocator, chosen: list, items: dict[str, dict], used: set[str]) -> list[dict]:
    rows = []
    for a in alloc.assignments:
        if a.task == "cd":
            continue
        rows.append({"id": a.id, "task": a.task, "lang": a.lang, "text": a.text, "provenance": a.provenance, "pivot": a.pivot,
                     "cuis": list(a.cuis), "passage_ids": items[a.id]["passage_ids"], "tier": None,
                     "distractor_cuis": items[a.id].get("negative_cuis", [])})
    for a, cand in chosen:
        if a.id in used:
            continue
        rows.append({"id": a.id, "task": "cd", "lang": a.lang, "text": a.text, "provenance": a.provenance, "pivot": a.pivot,
                     "cuis": list(a.cuis), "passage_ids": [], "tier": cand.tier, "distractor_cuis": list(cand.distractor_cuis)})
    return sorted(rows, key=lambda r: (r["task"], r["lang"], r["id"]))


def _write_tables(out: Path, rows: list[dict], drops: list[Drop], gate_rejections: Counter,
                  unrealized: Counter) -> dict[str, str]:
    paths = {"assignments": str(out / "assignments.parquet"), "dropped": str(out / "dropped.parquet"),
             "gates": str(out / "gate_rejections.parquet"), "unrealized": str(out / "unrealized.parquet")}
    write_parquet(pa.Table.from_pylist(rows, schema=ASSIGNMENT_SCHEMA), Path(paths["assignments"]))
    write_parquet(pa.Table.from_pylist(drop_rows(drops), schema=DROP_TABLE), Path(paths["dropped"]))
    gates = [{"gate": k, "rejections": v} for k, v in sorted(gate_rejections.items())]
    write_parquet(pa.Table.from_pylist(gates, schema=GATE_TABLE), Path(paths["gates"]))
    missing = [{"lang": lang, "unrealized": code, "items": n} for (lang, code), n in sorted(unrealized.items())]
    write_parquet(pa.Table.from_pylist(missing, schema=UNREALIZED_TABLE), Path(paths["unrealized"]))
    return paths


def allocate_cells(params: AllocationParameters, item_shards: list[str], grounded: list[str], realized: list[str],
                   vocab: dict[str, str], lexicon_files: dict[str, str], out_dir: str) -> dict:
    """Allocate every cell; or, with a base release, only the cells of `params.targets`
    around the base release's concepts and queries (which stay where they are).
    `lexicon_files`: what `index_entries` wrote for this vocabulary."""
    order = list(params.targets)
    items = {r["id"]: r for s in item_shards for r in table_rows(pq.read_table(s))}
    ground = {r["id"]: r for s in grounded for r in table_rows(pq.read_table(s))}
    reals, gate_rejections, unrealized = _realizations(realized)
    cell_quotas = {(task, lang): params.quotas[task] for task in ("xqa", "evidence", "cd") for lang in order}
    alloc = Allocator(cell_quotas, order, {k: v.shingle_n for k, v in params.languages.items()}, params.dedup_threshold,
                      params.dedup_num_perm, params.seed, overlap_scope=params.overlap_scope)
    used = seed_from_release(alloc, Path(params.base_release), params.languages) if params.base_release else set()
    cands, drops = _candidates(items, ground, reals, order, used)
    drops = source_drops(item_shards) + drops  # the sources stage's (unpaired cases of a parallel source)
    alloc.allocate_items(cands)
    chosen, realizer_rejections = _confusion_sets(alloc, params, vocab, lexicon_files)
    gate_rejections.update(realizer_rejections)
    return _write_tables(Path(out_dir), _assignment_rows(alloc, chosen, items, used), drops + alloc.drops, gate_rejections,
                         unrealized)
