"""A concept's English entry (the cd corpus document) and cd queries that do not give it away.

A cd query names its target; the cell's corpus holds one English entry per concept of
its sets (preferred name, definition, synonyms). When the query's words are the entry's
title, or stand in its text, string matching solves the set and the task measures
nothing (real-data BM25 nDCG@10 on cd/en was 0.976: every English query was its entry's
title). So:

- an entry never contains its own query: a synonym or definition used as a query is
  withheld from the entry of that cell (`concept_entry(..., withheld=query)`);
- an English query is a synonym of the target other than its preferred name (the one
  sharing the fewest words with the name, so that a reordering of the title is the last
  resort), or, when the concept has none, its definition as a description;
- a query in another language is the first of its names in that language that
  `gives_away` nothing (a French name spelled like the English one is skipped).

Pure functions; the release writer and the audit's `trivial_match` check use the same
`gives_away` rule.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from common.parquet import pylist
from common.text import contains_phrase, phrase_key, word_tokens

MAX_SYNONYMS = 8
MAX_PHENOTYPES = 15  # an xqa entry's phenotypes: the commonest, within a dense model's 256 tokens
MAX_DESCRIPTION_WORDS = 40  # a definition longer than this is a paragraph, not a query
_ACRONYM = re.compile(r"^[A-Z0-9][A-Z0-9\-]{0,7}$")
# vocabulary bookkeeping inside a name ("NOS", "(disorder)", "[obs]"): nobody asks that way
_QUALIFIED = re.compile(r"\bNOS\b|\bNEC\b|\[[^\]]*\]|\((?:disorder|finding|morphologic abnormality|situation|"
                        r"procedure|qualifier value|observable entity|clinical|diagnosis|context-dependent category)\)", re.IGNORECASE)


@dataclass(frozen=True)
class EntryParts:
    """What a concept's English entry is made of."""

    cui: str
    name: str
    definition: str
    synonyms: tuple[str, ...]  # English names other than the preferred one, vocabulary order


def concept_entry(parts: EntryParts, withheld: str | None = None) -> dict:
    """The BEIR document of a concept. A `withheld` text (the cell's query for this concept)
    is left out wherever it would stand: as a synonym, or as the definition."""
    gone = phrase_key(withheld) if withheld else None
    name_key = phrase_key(parts.name)
    syn = [s for s in parts.synonyms if phrase_key(s) not in (name_key, gone)][:MAX_SYNONYMS]
    text = parts.definition.strip()
    if gone and phrase_key(text) == gone:
        text = ""
    if syn:
        text = (text + " " if text else "") + "Synonyms: " + "; ".join(syn) + "."
    return {"_id": parts.cui, "title": parts.name, "text": text or parts.name}


def answer_entry(parts: EntryParts, parents: Iterable[str] = (), phenotypes: Iterable[str] = ()) -> dict:
    """The BEIR document of a concept that answers an exam question (xqa's gold passage):
    the concept entry, then what it is a kind of (its parents' names) and, for a disease HPO
    annotates, its phenotypes (most frequent first, at most `MAX_PHENOTYPES`). An exam item
    asks from findings and classes ("which disease causes hyperammonemia?"); name, synonyms
    and definition rarely state them (ARCHITECTURE.md, "xqa gold passages")."""
    entry = concept_entry(parts)
    text = entry["text"] if entry["text"] != parts.name else ""
    kinds = [p for p in dict.fromkeys(parents) if p and phrase_key(p) != phrase_key(parts.name)]
    signs = list(dict.fromkeys(p for p in phenotypes if p))[:MAX_PHENOTYPES]
    if kinds:
        text = (text + " " if text else "") + "A kind of: " + "; ".join(kinds) + "."
    if signs:
        text = (text + " " if text else "") + "Signs and symptoms: " + "; ".join(signs) + "."
    return {"_id": parts.cui, "title": parts.name, "text": text or parts.name}


class AnswerEntries:
    """cui -> `answer_entry` of the concept, from the entries, the vocabulary's parent links
    (a `cui, parent` table) and its phenotypes (umls.hpo.read_phenotypes: none without HPO)."""

    def __init__(self, entries: "EntryTable", parents: pa.Table, phenotypes: Mapping[str, list[str]]):
        self.entries, self.phenotypes = entries, phenotypes
        self.parents: dict[str, list[str]] = {}
        for cui, parent in zip(pylist(parents["cui"]), pylist(parents["parent"])):
            self.parents.setdefault(cui, []).append(parent)

    def __call__(self, cui: str) -> dict:
        names = [self.entries.name(p) for p in sorted(self.parents.get(cui, ())) if p in self.entries]
        return answer_entry(self.entries[cui], names, self.phenotypes.get(cui, ()))


def gives_away(query: str, entry: dict) -> bool:
    """True when string matching finds the answer: the query's words are the entry's
    title, or stand in its title or text as a phrase (normalised: case, accents, spacing
    and punctuation do not count)."""
    q = phrase_key(query)
    if not q:
        return True
    return q == phrase_key(entry["title"]) or contains_phrase(entry["title"] + " " + entry["text"], query)


def _is_acronym(text: str) -> bool:
    return bool(_ACRONYM.match(text.strip()))


def english_queries(parts: EntryParts) -> list[str]:
    """Candidate English queries for a concept, best first: synonyms that are not
    abbreviations, fewest words shared with the preferred name first (a reordered title,
    "diabetes type 2" for "type 2 diabetes", is the last resort), then the definition as a
    description. Each candidate still has to pass `gives_away` against its own entry."""
    name_words = set(word_tokens(parts.name))
    seen = {phrase_key(parts.name)}
    ranked = []
    for s in parts.synonyms:
        key = phrase_key(s)
        if not key or key in seen or _is_acronym(s) or _QUALIFIED.search(s):
            continue
        seen.add(key)
        words = set(word_tokens(s))
        shared = len(words & name_words) / max(1, len(words | name_words))
        ranked.append((shared, len(s), s))
    out = [s for _, _, s in sorted(ranked)]
    definition = parts.definition.strip()
    if definition and len(word_tokens(definition)) <= MAX_DESCRIPTION_WORDS:
        out.append(definition)
    return out


def first_fair_query(candidates: Iterable[str], parts: EntryParts) -> str | None:
    """The first candidate that its own entry (with that candidate withheld) does not give away."""
    for text in candidates:
        if not gives_away(text, concept_entry(parts, withheld=text)):
            return text
    return None


def entry_parts(concepts_t: pa.Table, atoms: pa.Table) -> "EntryTable":
    """Every named concept's English entry parts: name, definition, other English names.

    Columnar (an EntryParts is made when asked for): at paper scale, Python objects for
    every English atom and concept were about 1 GB and 17 s of the allocation stage."""
    return EntryTable.from_tables(concepts_t, atoms)


class EntryTable(Mapping):
    """cui -> EntryParts over arrow columns. Synonyms are the concept's English atoms in
    the atoms table's order (its preferred name among them)."""

    def __init__(self, cuis: list[str], names: pa.Array, definitions: pa.Array, synonyms: pa.Array, offsets: np.ndarray):
        self.cuis, self._names, self._defs, self._syn, self._off = cuis, names, definitions, synonyms, offsets
        self.index = {c: i for i, c in enumerate(cuis)}
        self._made: dict[str, EntryParts] = {}  # the concepts asked for (targets, candidates) recur

    @classmethod
    def from_tables(cls, concepts_t: pa.Table, atoms: pa.Table) -> "EntryTable":
        named = concepts_t.select(["cui", "name_en", "definition"]).filter(
            pc.fill_null(pc.not_equal(concepts_t["name_en"], ""), False))
        cuis = named["cui"].combine_chunks()
        en = atoms.filter(pc.equal(atoms["lang"], "en")) if "lang" in atoms.column_names else atoms
        owner = pc.index_in(en["cui"], value_set=cuis)
        keep = pc.is_valid(owner)
        owner_np = owner.filter(keep).to_numpy(zero_copy_only=False).astype(np.int64)
        order = np.argsort(owner_np, kind="stable")  # grouped by concept, atoms order within
        synonyms = pc.fill_null(en["str"].filter(keep), "").combine_chunks().take(pa.array(order))
        offsets = np.searchsorted(owner_np[order], np.arange(len(cuis) + 1))
        return cls(pylist(cuis), pc.fill_null(named["name_en"], "").combine_chunks(),
                   pc.fill_null(named["definition"], "").combine_chunks(), synonyms, offsets)

    def __getitem__(self, cui: str) -> EntryParts:
        hit = self._made.get(cui)
        if hit is None:
            hit = self._made[cui] = self._make(cui)
        return hit

    def name(self, cui: str) -> str:
        """`self[cui].name` without making (and keeping) the concept's parts: asking whether
        a language can name a concept looks up the English name of hundreds of thousands
        of concepts that never become targets."""
        hit = self._made.get(cui)
        return hit.name if hit is not None else self._names[self.index[cui]].as_py()

    def _make(self, cui: str) -> EntryParts:
        i = self.index[cui]
        return EntryParts(cui, self._names[i].as_py(), self._defs[i].as_py(),
                          tuple(self._syn.slice(self._off[i], self._off[i + 1] - self._off[i]).to_pylist()))

    def __contains__(self, cui) -> bool:
        return cui in self.index

    def __iter__(self):
        return iter(self.cuis)

    def __len__(self) -> int:
        return len(self.cuis)

    def names_of(self, cui: str, default=()) -> list[str]:
        """The concept's English names: preferred name, then its synonyms."""
        i = self.index.get(cui)
        if i is None:
            return list(default)
        return [self._names[i].as_py(), *self._syn.slice(self._off[i], self._off[i + 1] - self._off[i]).to_pylist()]

    def entry_texts(self) -> tuple[np.ndarray, pa.Array]:
        """Every entry's texts (name, synonyms, definition), grouped by concept in `cuis`
        order: (concept index per text, texts)."""
        n = len(self.cuis)
        syn_owner = np.repeat(np.arange(n), np.diff(self._off))
        syn_pos = np.arange(len(syn_owner)) - self._off[syn_owner] + 1
        owner = np.concatenate([np.arange(n), syn_owner, np.arange(n)])
        pos = np.concatenate([np.zeros(n, np.int64), syn_pos, np.full(n, np.iinfo(np.int64).max)])
        order = np.lexsort((pos, owner))
        texts = pa.concat_arrays([self._names, self._syn, self._defs]).take(pa.array(order))
        return owner[order], texts
