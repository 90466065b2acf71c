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
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from common.text import contains_phrase, phrase_key, word_tokens

MAX_SYNONYMS = 8
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


def entry_parts(concepts_t: pa.Table, atoms: pa.Table) -> dict[str, EntryParts]:
    """Every named concept's English entry parts: name, definition, other English names."""
    en = atoms.filter(pc.equal(atoms["lang"], "en"))
    synonyms: dict[str, list[str]] = defaultdict(list)
    for c, s in zip(en["cui"].to_pylist(), en["str"].to_pylist()):
        synonyms[c].append(s)
    return {c: EntryParts(c, name, definition or "", tuple(synonyms.get(c, ())))
            for c, name, definition in zip(*(concepts_t[k].to_pylist() for k in ("cui", "name_en", "definition"))) if name}
