"""Stage: ground each item's native text, English pivot and gold passages to CUIs.

Key concepts = grounded CUIs in the allowed semantic groups at or above the score
threshold, from the native text or the pivot. Items whose gold passages share none of
their key concepts are marked unanswerable (the allocation drops them with a reason).

Items with options (multiple-choice questions whose source has no answer-bearing text)
get their gold passages here: each option is grounded (its English text first, else its
own), the concepts the correct options name as a whole are the answers (their English
concept entries are the gold passages, and key concepts of the item), the other options'
concepts are the hard negatives; an item without such an answer gets the reason.

Passes (`[grounding] passes`): the string pass (`Grounder`: exact, stemmed, QuickUMLS,
abbreviations) grounds every text; the dense pass, when listed, then reads what it left
(`dense_targets`: texts of evidence items without a key concept, options of exam items whose
answer string matching names not) with the nearest vocabulary name in use-m's space, after
the string pool and in this process (tasks/grounding/dense_pass.py).

A shard's texts are grounded all at once (`ground_texts`, tasks/grounding/pool.py): each
distinct (language, text) once, on forked workers that share the grounders copy-on-write;
results come back in request order. This module is the entry point (`ground_shard`); the
rest lives beside it, one job a module: keys.py (the pure key-concept and answer logic),
reads.py (parquet reads), grounders.py (the grounder cache), pool.py (the fork pool) and
prebuild.py (the QuickUMLS index pre-builder).
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from common.parquet import pylist, rows as table_rows, write_parquet
from tasks.grounding.grounders import GrounderSpec
from tasks.grounding.isolated import ground_workers
from tasks.grounding.keys import (KEY_TEXT, answerable, asked_about, dense_targets, item_keys, key_concepts,
                                  option_concept, option_requests)
from tasks.grounding.normalize import fold_term
from tasks.grounding.pool import POOL_LOCK, ground_texts
from tasks.grounding.reads import concept_facts, names_of, read_rows
from tasks.grounding.stopwords import language_stopwords

GROUNDED_SCHEMA = pa.schema([
    ("id", pa.string()), ("mentions", pa.string()), ("key_cuis", pa.list_(pa.string())),
    ("answerable", pa.bool_()),
    # items with options: the concepts their correct options name (gold passages: the concepts'
    # entries), the other options' concepts (hard negatives), or why the item has no gold passage (a drop code)
    ("answer_cuis", pa.list_(pa.string())), ("negative_cuis", pa.list_(pa.string())), ("no_passage", pa.string()),
])


def _stopwords_of(vocab: dict, languages: dict[str, dict], code: str, cache_root: str, threshold: float,
                  window: int) -> set[str]:
    """The grounder's folded stop-words (`option_concept` needs them): what Grounder.__init__
    computes for a space-delimited language, none for a dictionary (CJK) one."""
    lang = GrounderSpec.of(vocab, languages, code, cache_root, threshold, window).language()
    if lang.grounder == "dictionary":
        return set()
    latin = "Latin" in lang.scripts
    return {fold_term(w, latin) for w in language_stopwords(lang)}


def _passages(items: list[dict], corpus: dict[str, str]) -> dict[str, str]:
    """The items' gold passages, "title. text" by id."""
    passages: dict[str, str] = {}
    needed = sorted({pid for it in items for pid in it["passage_ids"]})
    for task_corpus in corpus.values():
        t = read_rows(task_corpus, "id", needed, ["id", "title", "text"])
        passages.update({i: f"{ti}. {tx}" for i, ti, tx in zip(pylist(t["id"]), pylist(t["title"]), pylist(t["text"]))})
    return passages


def _requests(items: list[dict]) -> list[tuple[str, str]]:
    """Every text the shard grounds first, in order: each item's text, its English pivot,
    its options' English texts."""
    requests: list[tuple[str, str]] = []
    for it in items:
        requests.append((it["lang"], it["text"]))
        if it["lang"] != "en" and it["pivot"]:
            requests.append(("en", it["pivot"]))
        requests += option_requests(it)
    return requests


def _item_concepts(it: dict, mentions: dict, named, linked, group_of: dict[str, str], defined: set[str], params) -> tuple:
    """(native mentions, pivot mentions, key CUIs, answers, negatives, why no gold passage)."""
    key_groups = set(params.key_groups)
    native = mentions[(it["lang"], it["text"])]
    if it["lang"] == "en":
        pivot = native
    else:
        pivot = mentions[("en", it["pivot"])] if it["pivot"] else []
    text_keys = key_concepts(native + pivot, group_of, key_groups, params.min_score)
    options = [] if it["passage_ids"] else it.get("options") or []
    # an option's English text first (the richest vocabulary), else its own; string matches
    # before dense links
    concepts = [(named("en", o["pivot"]) if o["pivot"] else None) or named(it["lang"], o["text"])
                or (linked("en", o["pivot"]) if o["pivot"] else None) or linked(it["lang"], o["text"]) for o in options]
    correct = [m for r in (option_requests(it) if asked_about(it) else []) for m in mentions[r]]
    keys, answers, negatives, no_passage = item_keys(it.get("key_concepts") or KEY_TEXT, text_keys, bool(it["passage_ids"]),
                                                     options, concepts, correct, {m["cui"] for m in native + pivot},
                                                     group_of, key_groups, defined, params.min_score)
    return native, pivot, keys, answers, negatives, no_passage


def ground_shard(shard: str, corpus: dict[str, str], vocab: dict, params, cache_root: str, out_path: str,
                 stats: dict | None = None) -> str:
    """`vocab` needs "concepts" and "atoms_by_lang" for the shard's languages and English
    only, `params` (schemas.parameters.GroundingParameters) those languages: the task's
    cache key then ignores languages the shard does not use. `stats`, when given, counts
    the grounding calls ("texts") and the distinct texts grounded ("unique")."""
    languages = {c: l.model_dump(mode="json") for c, l in params.languages.items()}
    threshold, window = params.threshold, params.window
    items = table_rows(pq.read_table(shard))
    passages = _passages(items, corpus)
    # every text the shard grounds, in order; then all of them at once (in worker processes when
    # there are several), and the items assembled from the results
    requests = _requests(items)
    mentions = ground_texts(requests, vocab, languages, threshold, window, cache_root)
    stopwords: dict[str, set[str]] = {}

    def named(code: str, text: str) -> str | None:
        if code not in stopwords:
            stopwords[code] = _stopwords_of(vocab, languages, code, cache_root, threshold, window)
        return option_concept(text, mentions[(code, text)], params.min_score, stopwords[code])

    # an option's own text is grounded only when its English text names nothing
    second = [(it["lang"], o["text"]) for it in items if not it["passage_ids"] for o in it.get("options") or []
              if not (o["pivot"] and named("en", o["pivot"]))]
    mentions.update(ground_texts([r for r in second if r not in mentions], vocab, languages, threshold, window, cache_root))
    if stats is not None:
        stats["texts"] = stats.get("texts", 0) + len(requests) + len(second)
        stats["unique"] = stats.get("unique", 0) + len(mentions)
    whole: dict[tuple[str, str], tuple[str, float] | None] = {}
    if "dense" in params.passes:
        whole = _dense_pass(items, mentions, named, vocab, params, cache_root)

    def linked(code: str, text: str) -> str | None:
        found = whole.get((code, text))
        return found[0] if found else None

    # the group and definedness of the concepts the shard's mentions name (every concept
    # below comes from them), from the table's facts read once per process
    group_of, defined = concept_facts(vocab["concepts"], sorted({m["cui"] for ms in mentions.values() for m in ms}
                                                                | {f[0] for f in whole.values() if f}))
    grounded = [(it, *_item_concepts(it, mentions, named, linked, group_of, defined, params)) for it in items]
    names = names_of(sorted(vocab["atoms_by_lang"].values()), {c for g in grounded for c in g[3]})
    rows = [{"id": it["id"], "mentions": json.dumps({"native": native, "pivot": pivot}, ensure_ascii=False, sort_keys=True),
             "key_cuis": keys, "answerable": any(answerable(keys, passages.get(pid, ""), names) for pid in it["passage_ids"]),
             "answer_cuis": answers, "negative_cuis": negatives, "no_passage": no_passage}
            for it, native, pivot, keys, answers, negatives, no_passage in grounded]
    write_parquet(pa.Table.from_pylist(rows, schema=GROUNDED_SCHEMA), Path(out_path))
    return out_path


def _dense_pass(items: list[dict], mentions: dict, named, vocab: dict, params, cache_root: str) -> dict:
    """Run the dense pass on the shard: span mentions added to `mentions` (in place), and the
    concepts options name as a whole returned, by (lang, text): an option's English text
    first, its own text only where that links nothing."""
    from tasks.grounding.dense_pass import DensePass

    key_groups = set(params.key_groups)
    group_of, _defined = concept_facts(vocab["concepts"], sorted({m["cui"] for ms in mentions.values() for m in ms}))
    spans, options = dense_targets(items, mentions, named, group_of, key_groups, params.min_score)
    if not spans and not options:
        return {}
    # under the pool lock: the encoder and the search run on OpenBLAS threads, and a fork while
    # another thread is inside BLAS hangs in OpenBLAS' pre-fork handler (blas_thread_shutdown_
    # joining a busy server thread): seen as a real-data build stuck with every thread asleep
    with POOL_LOCK:
        dense = DensePass(dict(vocab["atoms_by_lang"]), dict(params.languages), params.dense, cache_root, ground_workers())
        for req, found in dense.span_mentions(spans, mentions).items():
            if found:
                mentions[req] = sorted(mentions[req] + found, key=lambda m: (m["start"], m["end"], m["cui"]))
        whole = dense.whole(list(dict.fromkeys(pivot or own for pivot, own in options)))
        whole.update(dense.whole(list(dict.fromkeys(own for pivot, own in options if pivot and not whole[pivot]))))
    return whole
