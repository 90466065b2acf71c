"""A seventh language for the scale benchmark: German, added with `mmedbench add-language`.

The generator writes, beside the six-language build, a translation memory of German
renderings of the English questions (`tm/memory-de.jsonl`) and a config that adds German
(`config-add-de.toml`). `run_bench.py` then times `mmedbench add-language` on top of the
paper-scale release against the full build (issue target: at most 25% of it).

Only the generic question templates have a German form (their 'de' in data/questions.toml):
German memory entries exist for the English questions written with one of them (about a
third), which is more than the German cells' quotas need. The German concept names are the
vocabulary's GER atoms or the generator's own German rendering. A separate seeded stream is
used, so the six-language inputs stay byte-identical to what they were before German existed.
"""
from __future__ import annotations

import random
from pathlib import Path

from .data import toml
from .memory import JsonlWriter, tm_entry
from .questions import NO_POP, POPULATIONS

ADDITION_LANG = "de"

# questions.py checked the entries; these lists are index-aligned with its POPULATIONS and LEAD_INS
POPULATIONS_DE = [p[ADDITION_LANG] for p in toml("questions")["population"]]
LEAD_INS_DE = [p[ADDITION_LANG] for p in toml("questions")["lead_in"]]
# English generic template -> German. The concept name stands in quotation marks, which
# spares German its case and gender agreement.
TEMPLATES_DE = {t["en"]: t[ADDITION_LANG] for t in toml("questions")["template"] if ADDITION_LANG in t}


def render_de(template: dict, name: str, pop_index: int | None, nums: dict) -> str | None:
    """The German question for an English item, or None when its template has no German form."""
    tpl = TEMPLATES_DE.get(template["en"])
    if tpl is None:
        return None
    ctx = dict(nums, c=name)
    if pop_index is None:
        tpl = NO_POP.sub("", tpl)
    else:
        ctx["pop"] = POPULATIONS_DE[pop_index].format_map(nums)
    text = tpl.format_map(ctx)
    lead = nums.get("lead")
    return LEAD_INS_DE[lead] + text if lead is not None else text


def write_addition_memory(out: Path, english_items: list, seed: int, share: float) -> dict:
    """German memory entries for the English questions (own seeded stream)."""
    rng = random.Random(f"addition:{ADDITION_LANG}:{seed}")
    tm = JsonlWriter(out / "tm" / f"memory-{ADDITION_LANG}.jsonl")
    questions = 0
    for it in english_items:
        if rng.random() >= share:
            continue
        pop_index = None if it.pop is None else POPULATIONS.index(it.pop)
        target = render_de(it.template, it.q.names[ADDITION_LANG], pop_index, it.nums)
        if target is None:
            continue
        for e in tm_entry(rng, it.text, target, ADDITION_LANG):
            tm.add(e)
        questions += 1
    tm.close()
    return {"language": ADDITION_LANG, "question_entries": questions, "lines": tm.rows}


def addition_config(base_config: str) -> str:
    """The base config with German added to `languages` and its memory to `[translation]`."""
    langs = 'languages = ["en", "zh", "ja", "fr", "ru", "es"]'
    mem = 'memory = ["tm/memory.jsonl"]'
    assert langs in base_config and mem in base_config
    text = base_config.replace(langs, f'languages = ["en", "zh", "ja", "fr", "ru", "es", "{ADDITION_LANG}"]')
    text = text.replace(mem, f'memory = ["tm/memory.jsonl", "tm/memory-{ADDITION_LANG}.jsonl"]')
    return text.replace("inputs shaped like a paper-scale build.",
                        f"inputs shaped like a paper-scale build, plus {ADDITION_LANG} (mmedbench add-language).", 1)
