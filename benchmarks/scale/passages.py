"""English passages: answers (xqa) and abstract-style evidence (data/passages.toml)."""
from __future__ import annotations

import random

from .data import toml

_P = toml("passages")
OPENERS, BODY, MENTIONS, CLOSERS, TITLES = _P["openers"], _P["body"], _P["mentions"], _P["closers"], _P["titles"]
EV_BACKGROUND, EV_DESIGN, EV_WHO, EV_METHOD = _P["ev_background"], _P["ev_design"], _P["ev_who"], _P["ev_method"]
EV_RESULT, EV_CONCLUSION, EV_TITLE, EV_DESIGN_NAMES = _P["ev_result"], _P["ev_conclusion"], _P["ev_title"], _P["ev_design_names"]
KIND_PASSAGE = _P["kind"]
WITH_PHRASE = _P["with_phrase"]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def passage_numbers(rng: random.Random) -> dict:
    p1 = rng.randint(8, 45)
    lo = round(rng.uniform(0.45, 0.95), 2)
    hr = round(lo + rng.uniform(0.05, 0.25), 2)
    return {"n": rng.choice([rng.randint(60, 990), rng.randint(1000, 24000)]), "pct": rng.randint(5, 60),
            "pct2": rng.randint(3, 40), "pct3": rng.randint(10, 50), "pct4": rng.randint(30, 80), "pct5": rng.randint(20, 70),
            "months": rng.randint(3, 36), "weeks": rng.randint(2, 16), "age": rng.randint(70, 90), "centres": rng.randint(3, 120),
            "fu": rng.randint(6, 72), "y1": rng.randint(1998, 2010), "y2": rng.randint(2012, 2023), "p1": p1,
            "p2": p1 + rng.randint(2, 15), "p3": rng.randint(1, 12), "hr": f"{hr:.2f}", "lo": f"{lo:.2f}",
            "hi": f"{hr + (hr - lo) * rng.uniform(0.8, 1.3):.2f}", "d1": rng.randint(5, 15), "d2": rng.randint(1, 5)}


def words(text: str) -> int:
    return len(text.split())


def answer_passage(rng: random.Random, name: str, group: str) -> tuple[str, str]:
    """An English answer passage of 60-150 words that names the concept."""
    ctx = passage_numbers(rng)
    ctx.update(c=name, Cap=_cap(name), kind=KIND_PASSAGE.get(group, "condition"), with_=WITH_PHRASE.get(group, "patients with"))
    parts = [rng.choice(OPENERS)]
    body = rng.sample(BODY, 6)
    if rng.random() < .6:
        body.insert(rng.randrange(3), rng.choice(MENTIONS))
    target = rng.randint(70, 135)
    for s in body:
        if words(" ".join(parts)) >= target:
            break
        parts.append(s)
    parts.append(rng.choice(CLOSERS))
    text = " ".join(parts).format_map(ctx)
    while words(text) > 150:
        parts.pop(-2)
        text = " ".join(parts).format_map(ctx)
    return rng.choice(TITLES).format_map(ctx), text


def evidence_passage(rng: random.Random, name: str, group: str) -> tuple[str, str]:
    """An abstract-style English passage (Background / Methods / Results / Conclusion)."""
    ctx = passage_numbers(rng)
    d = rng.randrange(len(EV_DESIGN))
    ctx.update(c=name, Cap=_cap(name), who=rng.choice(EV_WHO), with_=WITH_PHRASE.get(group, "patients with"),
               design=EV_DESIGN_NAMES[d])
    results = rng.sample(EV_RESULT, 3)
    parts = [f"Background: {_cap(name)} {rng.choice(EV_BACKGROUND)}.", "Methods: " + EV_DESIGN[d] + ".", rng.choice(EV_METHOD),
             "Results: " + results[0], results[1], results[2], "Conclusion: " + rng.choice(EV_CONCLUSION)]
    text = " ".join(parts).format_map(ctx)
    while words(text) > 150:
        parts.pop(-2)
        text = " ".join(parts).format_map(ctx)
    if words(text) < 60:
        parts.insert(3, rng.choice([m for m in EV_METHOD if m not in parts]))
        text = " ".join(parts).format_map(ctx)
    return rng.choice(EV_TITLE).format_map(ctx), text
