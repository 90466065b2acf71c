"""A seventh language for the scale benchmark: German, added with `mmedbench add-language`.

generate_scale.py writes, beside the six-language build, a translation memory of German
renderings of the English questions (`tm/memory-de.jsonl`) and a config that adds German
(`config-add-de.toml`). `run_bench.py` then times `mmedbench add-language` on top of the
paper-scale release against the full build (issue target: at most 25% of it).

Only the generic question templates have a German form: German memory entries exist for
the English questions written with one of them (about a third), which is more than the
German cells' quotas need. The German concept names are the vocabulary's GER atoms or the
generator's own German rendering. A separate seeded stream is used, so the six-language
inputs stay byte-identical to what they were before German existed.
"""
from __future__ import annotations

import random
from pathlib import Path

ADDITION_LANG = "de"

# index-aligned with generate_scale.POPULATIONS
POPULATIONS_DE = [
    "bei Erwachsenen über {age} Jahren",
    "bei Kindern unter {child} Jahren",
    "bei Schwangeren in der {week}. Schwangerschaftswoche",
    "bei Patienten mit einem Body-Mass-Index über {bmi}",
    "bei Patienten, die seit mehr als {days} Tagen auf der Intensivstation liegen",
    "bei Pflegeheimbewohnern über {age} Jahren",
    "bei Patienten, die nach der Diagnose {years} Jahre lang nachbeobachtet wurden",
    "bei Patienten mit einer Kreatinin-Clearance unter {crcl} mL/min",
    "bei Jugendlichen im Alter von {a1} bis {a2} Jahren",
    "bei Patienten, die seit mindestens {years} Jahren hausärztlich betreut werden",
    "bei Frauen über {age} Jahren",
    "bei Männern ab {age} Jahren",
    "bei Patienten mit einem seit mehr als {years} Jahren bekannten Diabetes",
    "bei Säuglingen, die vor der {week}. Schwangerschaftswoche geboren wurden",
    "bei Patienten, die seit mehr als {days} Tagen auf eine Operation warten",
    "bei Sportlern, die mehr als {hours} Stunden pro Woche trainieren",
    "bei Menschen, die mehr als {cig} Zigaretten am Tag rauchen",
    "bei Patienten, die in den letzten {weeks} Wochen aus dem Krankenhaus entlassen wurden",
]

# index-aligned with generate_scale.LEAD_INS
LEAD_INS_DE = [
    "Eine Frage aus der Hausarztpraxis: ",
    "Aus einer interdisziplinären Fallkonferenz: ",
    "Für ein klinisches Audit: ",
    "Gefragt von einer Assistenzärztin: ",
    "Klinische Frage: ",
    "Evidenzanfrage: ",
    "Aus einer Anfrage der Krankenhausapotheke: ",
    "Aufgeworfen in einem Journal Club: ",
]

# English generic template -> German. The concept name stands in quotation marks, which
# spares German its case and gender agreement.
TEMPLATES_DE = {
    "What is the clinical significance of {c} {pop}?": "Welche klinische Bedeutung hat „{c}“ {pop}?",
    "How should clinicians interpret findings related to {c} {pop}?":
        "Wie sollten Ärzte Befunde im Zusammenhang mit „{c}“ {pop} interpretieren?",
    "Which laboratory tests are most useful when evaluating {c} {pop}?":
        "Welche Laboruntersuchungen sind bei der Abklärung von „{c}“ {pop} am nützlichsten?",
    "What follow-up schedule is advised for {c} {pop}?": "Welcher Nachsorgeplan wird bei „{c}“ {pop} empfohlen?",
    "Which risk factors are most strongly associated with {c} {pop}?":
        "Welche Risikofaktoren sind am stärksten mit „{c}“ {pop} assoziiert?",
    "How often does {c} lead to hospital admission {pop}?":
        "Wie häufig führt „{c}“ {pop} zu einer Krankenhausaufnahme?",
    "What do current guidelines say about screening for {c} {pop}?":
        "Was sagen aktuelle Leitlinien zum Screening auf „{c}“ {pop}?",
    "What is the typical prognosis associated with {c} {pop}?": "Wie ist die typische Prognose bei „{c}“ {pop}?",
    "Is {c} associated with higher {years}-year mortality {pop}?":
        "Ist „{c}“ {pop} mit einer höheren {years}-Jahres-Mortalität assoziiert?",
    "What evidence links {c} to cardiovascular events {pop}?":
        "Welche Evidenz verbindet „{c}“ {pop} mit kardiovaskulären Ereignissen?",
    "Do randomized trials show that early recognition of {c} improves outcomes {pop}?":
        "Zeigen randomisierte Studien, dass die frühe Erkennung von „{c}“ {pop} die Behandlungsergebnisse verbessert?",
    "What is the reported prevalence of {c} {pop} in cohort studies published after {year}?":
        "Wie hoch ist die berichtete Prävalenz von „{c}“ {pop} in Kohortenstudien, die nach {year} veröffentlicht wurden?",
    "Does a structured follow-up programme reduce readmissions related to {c} {pop}?":
        "Verringert ein strukturiertes Nachsorgeprogramm Wiederaufnahmen im Zusammenhang mit „{c}“ {pop}?",
    "How accurate is point-of-care testing for detecting {c} {pop}?":
        "Wie genau ist patientennahe Diagnostik beim Nachweis von „{c}“ {pop}?",
}


def render_de(template: dict, name: str, pop_index: int | None, nums: dict, no_pop) -> str | None:
    """The German question for an English item, or None when its template has no German form."""
    tpl = TEMPLATES_DE.get(template["en"])
    if tpl is None:
        return None
    ctx = dict(nums, c=name)
    if pop_index is None:
        tpl = no_pop.sub("", tpl)
    else:
        ctx["pop"] = POPULATIONS_DE[pop_index].format_map(nums)
    text = tpl.format_map(ctx)
    lead = nums.get("lead")
    return LEAD_INS_DE[lead] + text if lead is not None else text


def write_addition_memory(out: Path, english_items: list, populations: list[dict], no_pop, tm_entry, writer_cls,
                          seed: int, share: float) -> dict:
    """German memory entries for the English questions (own seeded stream)."""
    rng = random.Random(f"addition:{ADDITION_LANG}:{seed}")
    tm = writer_cls(out / "tm" / f"memory-{ADDITION_LANG}.jsonl")
    questions = 0
    for it in english_items:
        if rng.random() >= share:
            continue
        pop_index = None if it.pop is None else populations.index(it.pop)
        target = render_de(it.template, it.q.names[ADDITION_LANG], pop_index, it.nums, no_pop)
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
