"""The pure key-concept and answer logic of grounding: which mentions count, what an item
is about (its key concepts), what an option names as a whole, the concepts that answer an
item with options (its gold: their concept entries) and why an item has none (a drop code),
whether a gold passage names a key concept, and what the dense pass reads. No I/O: the
grounding stage (stage.py) feeds these the mentions `ground_texts` found.
"""
from __future__ import annotations

import re

from common.text import normalize
from schemas.drops import DropCode
from tasks.grounding.normalize import fold_term


def confident(mention: dict, min_score: float) -> bool:
    """Pure: does a mention count? A string match at or above `min_score`; a dense link always
    (it passed the dense pass's own calibrated gates: a cosine is not a string score)."""
    return mention.get("pass", "string") != "string" or mention["score"] >= min_score


def key_concepts(mentions: list[dict], group_of: dict[str, str], key_groups: set[str], min_score: float) -> list[str]:
    """Pure: the CUIs that count for overlap (allowed group, confident match)."""
    return sorted({m["cui"] for m in mentions if confident(m, min_score) and group_of.get(m["cui"]) in key_groups})


_PUNCT = re.compile(r"[^\w]+")


def padded_words(text: str) -> str:
    return f" {_PUNCT.sub(' ', normalize(text)).strip()} "


def answerable(key_cuis: list[str], passage: str, names: dict[str, set[str]]) -> bool:
    """Pure: does the passage name one of the question's key concepts?

    A vocabulary name of a key concept must occur in the passage as whole words (after
    NFKC + casefold; CJK names as substrings). Cheaper than grounding every gold passage
    with QuickUMLS, which dominated the build at paper scale, and stricter."""
    words = padded_words(passage)
    flat = normalize(passage)
    for cui in key_cuis:
        for name in names.get(cui, ()):
            if name.isascii() or " " in name:
                if f" {name} " in words:
                    return True
            elif name in flat and len(name) >= 2:
                return True
    return False


# why an item with options has no gold passage: drop codes (schemas/drops.py words them)
NO_ANSWER_CONCEPT: DropCode = "no-answer-concept"
ANSWER_NOT_KEY: DropCode = "answer-not-key"
NO_DEFINITION: DropCode = "no-definition"
AMBIGUOUS: DropCode = "ambiguous-answer"
NAMES_ANSWER: DropCode = "names-answer"
_WORDS = re.compile(r"\w+")


def option_concept(text: str, mentions: list[dict], min_score: float, stopwords: set[str]) -> str | None:
    """Pure: the concept an option names as a whole, or None.

    A concept's mentions at or above `min_score` must cover the option: whatever they leave
    is punctuation or `stopwords` (folded as `fold_term` folds; CJK: none, so only
    punctuation may be left) ("Fabry disease." -> Fabry disease; "Blood culture" -> None,
    though "Blood" is a concept: the option names a test, not blood). Several mentions of one
    concept may cover it together: a name and its abbreviation, which the grounder gives the
    long form's concept ("Severe combined immunodeficiency (SCID)", "FSH (Follicle-stimulating
    hormone)"). The best such concept wins (its best score, then its longest mention, then CUI)."""
    spans: dict[str, list[dict]] = {}
    for m in mentions:
        if m.get("pass", "string") != "string" or m["score"] < min_score:
            continue  # a dense span link is not an answer: options have their own gates (`DensePass.whole`)
        spans.setdefault(m["cui"], []).append(m)
    best = None
    for cui, ms in spans.items():
        rest = list(text)
        for m in ms:
            rest[m["start"]:m["end"]] = " " * (m["end"] - m["start"])
        if all(fold_term(w) in stopwords for w in _WORDS.findall("".join(rest))):
            key = (-max(m["score"] for m in ms), -max(m["end"] - m["start"] for m in ms), cui)
            if best is None or key < best[0]:
                best = (key, cui)
    return best[1] if best else None


def answer_concepts(options: list[dict], named: list[str | None], question_cuis: set[str], group_of: dict[str, str],
                    key_groups: set[str], defined: set[str]) -> tuple[list[str], list[str], str | None]:
    """Pure: (answer CUIs, hard-negative CUIs, reason there is no gold passage or None).

    `named[i]` is the concept option i names as a whole (`option_concept`). The gold
    passages are the correct options' concept entries: every correct option must name a
    concept in a key group that has a definition (an entry with a name only states the
    answer as an option string does: it explains nothing); the question must not name it."""
    answers, negatives = [], []
    for opt, cui in zip(options, named):
        if opt["correct"]:
            if cui is None:
                return [], [], NO_ANSWER_CONCEPT
            answers.append(cui)
        elif cui is not None:
            negatives.append(cui)
    answers = sorted(set(answers))
    if any(group_of.get(c) not in key_groups for c in answers):
        return [], [], ANSWER_NOT_KEY
    if any(c not in defined for c in answers):
        return [], [], NO_DEFINITION
    if set(negatives) & set(answers):
        return [], [], AMBIGUOUS
    if set(answers) & question_cuis:
        return [], [], NAMES_ANSWER
    return answers, sorted(set(negatives)), None


# what an item's key concepts are (a source's `key_concepts`, carried on its items): "text", every
# concept its text or pivot names; "answer", what it asks about, the concepts its correct options name
KEY_TEXT, KEY_ANSWER = "text", "answer"


def asked_about(item: dict) -> bool:
    """Pure: is the item keyed by its answer while its gold is its passages (a case and its
    explanation, `key_concepts` "answer")? Then its correct options are grounded whole,
    for every concept they mention, and the other options not at all."""
    return item.get("key_concepts") == KEY_ANSWER and bool(item["passage_ids"])


def option_requests(item: dict) -> list[tuple[str, str]]:
    """Pure: the option texts grounded up front. Options that are the gold (no passages): every
    option's English text (its own only when that names nothing, later). A case keyed by its
    answer: its correct options' English and own texts. Else none."""
    if not item["passage_ids"]:
        return [("en", o["pivot"]) for o in item.get("options") or [] if o["pivot"]]
    if not asked_about(item):
        return []
    out = []
    for o in item.get("options") or []:
        if o["correct"]:
            out += ([("en", o["pivot"])] if o["pivot"] else []) + [(item["lang"], o["text"])]
    return out


def answer_keys(correct_mentions: list[dict], group_of: dict[str, str], key_groups: set[str],
                min_score: float) -> tuple[list[str], str | None]:
    """Pure: (the key-group concepts the correct options mention, None), or ([], why there are
    none: they mention no concept at `min_score`, or only concepts outside the key groups).
    Mentioned, not named as a whole: the gold is the explanation, not a concept entry, and a
    resident-exam answer is a phrase ("intravenous corticosteroids and plasmapheresis")."""
    sure = [m for m in correct_mentions if confident(m, min_score)]
    if not sure:
        return [], NO_ANSWER_CONCEPT
    keys = key_concepts(sure, group_of, key_groups, min_score)
    return (keys, None) if keys else ([], ANSWER_NOT_KEY)


def item_keys(mode: str, text_keys: list[str], has_passages: bool, options: list[dict], named: list[str | None],
              correct_mentions: list[dict], question_cuis: set[str], group_of: dict[str, str], key_groups: set[str],
              defined: set[str], min_score: float) -> tuple[list[str], list[str], list[str], str | None]:
    """Pure: (key CUIs, answer CUIs, hard-negative CUIs, why no gold passage or None).

    "text": the key concepts are every key-group concept the text or pivot names (`text_keys`),
    with the answers' concepts for an item whose options are its gold. "answer": only what
    its correct options name: a clinical case names every finding of the patient's history
    (pain, fever), but asks about one thing; its history's concepts are not what it is
    about, and owning them would keep every other case naming pain out of the cell. An
    item with gold passages keeps them (answer CUIs empty) and is keyed by the concepts its
    correct options mention (`correct_mentions`, `answer_keys`); an exam item, whose gold is
    its answer's concept entry, by that concept (`answer_concepts`, every reason kept).
    One left without a key concept gets the typed reason."""
    if mode == KEY_ANSWER and has_passages:
        keys, why = answer_keys(correct_mentions, group_of, key_groups, min_score)
        return keys, [], [], why
    if not options or has_passages:
        return text_keys, [], [], None
    answers, negatives, no_passage = answer_concepts(options, named, question_cuis, group_of, key_groups, defined)
    # the answer is what the question is about: with "text", beside what its text names
    keys = answers if mode == KEY_ANSWER else sorted(set(text_keys) | set(answers))
    return keys, answers, negatives, no_passage


def dense_targets(items: list[dict], mentions: dict, named, group_of: dict[str, str], key_groups: set[str],
                  min_score: float) -> tuple[list[tuple[str, str]], list[tuple[tuple[str, str] | None, tuple[str, str]]]]:
    """Pure: what the dense pass reads: (texts whose spans it links, options it reads whole).

    Spans: the text and English pivot of an item keyed by its text whose gold is its passages,
    when string matching found no key concept in either (one that has one is about it already;
    a vignette is hundreds of spans), and the correct options of a case keyed by its answer
    when they mention none. An exam item's text is not read: its key is its answer. Options:
    (English text or None, own text) of every option of an item whose options are its gold
    and one of whose correct options string matching names not: its answer can only come
    from the dense pass, and its other options' links are the hard negatives beside it."""
    spans: list[tuple[str, str]] = []
    options: list[tuple[tuple[str, str] | None, tuple[str, str]]] = []
    for it in items:
        if asked_about(it):
            correct = option_requests(it)
            if not key_concepts([m for r in correct for m in mentions[r]], group_of, key_groups, min_score):
                spans += correct
            continue
        if it["passage_ids"]:
            texts = [(it["lang"], it["text"])] + ([("en", it["pivot"])] if it["lang"] != "en" and it["pivot"] else [])
            if not key_concepts([m for r in texts for m in mentions[r]], group_of, key_groups, min_score):
                spans += texts
            continue
        opts = it.get("options") or []
        if all((o["pivot"] and named("en", o["pivot"])) or named(it["lang"], o["text"]) for o in opts if o["correct"]):
            continue
        options += [(("en", o["pivot"]) if o["pivot"] else None, (it["lang"], o["text"])) for o in opts]
    return list(dict.fromkeys(spans)), list(dict.fromkeys(options))
