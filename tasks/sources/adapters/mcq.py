"""Helpers for multiple-choice sources: resolving answer keys to option texts, building passages."""
from __future__ import annotations

import re

from schemas.records import Option, Passage
from tasks.sources.adapters._common import Record, content_passage


def option_key(options: dict[str, str], key: str) -> str | None:
    """The options' own spelling of `key` (exact first, then case-insensitive), or None."""
    key = key.strip()
    if key in options:
        return key
    folded = {k.casefold(): k for k in options}
    return folded.get(key.casefold())


def answer_keys(rec: Record, name: str, options: dict[str, str]) -> list[str]:
    """Option keys named by `name`: "B", "A,C", "A C" or ["A", "C"]; every key must be an option."""
    value = rec.obj.get(name)
    if isinstance(value, str):
        parts = [p for p in re.split(r"[,;\s]+", value.strip()) if p]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = [v.strip() for v in value]
    else:
        raise rec.fail(name, "missing (expected the correct option key(s))" if value is None else "expected an option key or a list of option keys")
    if not parts:
        raise rec.fail(name, "expected at least one option key")
    keys = []
    for p in parts:
        k = option_key(options, p)
        if k is None:
            raise rec.fail(name, f"{p!r} is not one of the options ({', '.join(options)})")
        if k not in keys:
            keys.append(k)
    for k in keys:
        if not options[k]:
            raise rec.fail(f"options.{k}", "the correct option's text is empty")
    return keys


def answer_passage(prefix: str, style: str, question: str, answers: list[str], extra: str = "", label: str = "") -> Passage:
    """The answer-bearing passage of a multiple-choice item.

    style "answer": the correct option text(s) (joined by "; "), then `extra` (a rationale or
    explanation) on the next line; style "qa": the question first, then the same.
    `label` (e.g. "Answer: ") prefixes the answer line in "qa" style.
    """
    answer = "; ".join(a for a in answers if a)
    body = answer + (f"\n{extra}" if extra else "")
    if style == "qa":
        body = f"{question}\n{label}{body}"
    return content_passage(prefix, body)


def choice_options(texts: list[str], correct: list[int], pivots: list[str] | None = None) -> list[Option]:
    """The choices as `Option`s (passage style "concept"): the correct ones flagged, empty
    choices left out (they name nothing). `pivots`: the choices' English texts, if any."""
    out = []
    for i, text in enumerate(texts):
        pivot = (pivots[i].strip() or None) if pivots else None
        if text.strip():
            out.append(Option(text=text.strip(), pivot=pivot, correct=i in correct))
    return out
