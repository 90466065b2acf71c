"""Questions: templates, population phrases and lead-ins (data/questions.toml), rendered per language."""
from __future__ import annotations

import random
import re

from .data import entries, toml

LANGS = ("en", "fr", "es", "ru", "ja", "zh")  # of every template; 'de', the added language's, is in addition.py
POPULATIONS = [{l: p[l] for l in LANGS} for p in entries("questions", "population", LANGS + ("de",))]
LEAD_INS = [{l: p[l] for l in LANGS} for p in entries("questions", "lead_in", LANGS + ("de",))]
# A template: (task, groups or '*', {lang: text})
TEMPLATES = [(t["task"], t["groups"], {l: t[l] for l in LANGS})
             for t in entries("questions", "template", ("task", "groups") + LANGS, optional=("de",))]
# nominative, genitive, accusative, instrumental
RU_KIND = {group: tuple(forms) for group, forms in toml("questions")["ru_kind"].items()}


def numbers(rng: random.Random) -> dict:
    return {"age": rng.randint(18, 90), "child": rng.randint(2, 16), "week": rng.randint(8, 38), "bmi": rng.randint(25, 49),
            "days": rng.randint(2, 45), "years": rng.randint(2, 25), "crcl": rng.randint(10, 59), "a1": rng.randint(11, 14),
            "a2": rng.randint(15, 19), "months": rng.randint(2, 48),
            "dose": rng.choice([5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 80, 100, 120, 150, 200, 250, 300, 400, 500, 600, 750, 1000]),
            "weeks": rng.randint(2, 30), "year": rng.randint(1995, 2023), "cig": rng.randint(3, 60), "hours": rng.randint(5, 30)}


LEAD_IN_SHARE = 0.35
POP_SHARE = 0.45  # questions that name a population (the rest are shorter, like most real questions)
NO_POP = re.compile(r",? ?\{pop\}[、，]?")


def fr_articles(name: str, g: str) -> dict:
    """Definite article and its contractions; {de_n} is 'de' without article ('atteints d'...')."""
    vowel = name[:1].lower() in "aeiouyhéèêâîôûœ"
    if vowel:
        return {"le_c": "l'" + name, "de_c": "de l'" + name, "a_c": "à l'" + name, "de_n": "d'" + name}
    if g == "f":
        return {"le_c": "la " + name, "de_c": "de la " + name, "a_c": "à la " + name, "de_n": "de " + name}
    return {"le_c": "le " + name, "de_c": "du " + name, "a_c": "au " + name, "de_n": "de " + name}


def es_articles(name: str, g: str) -> dict:
    if g == "f":
        return {"el_c": "la " + name, "del_c": "de la " + name, "al_c": "a la " + name}
    return {"el_c": "el " + name, "del_c": "del " + name, "al_c": "al " + name}


def render_question(template: dict, lang: str, name: str, group: str, gender: str, pop: dict, nums: dict) -> str:
    ctx = dict(nums)
    ctx["c"] = name
    tpl = template[lang]
    if pop is None:  # no population: drop the slot and the separator next to it
        tpl = NO_POP.sub("", tpl)
    else:
        ctx["pop"] = pop[lang].format_map(nums)
    if lang == "fr":
        ctx.update(fr_articles(name, gender))
    elif lang == "es":
        ctx.update(es_articles(name, gender))
    elif lang == "ru":
        k = RU_KIND[group]
        ctx.update(kind_nom=k[0], kind=k[1], kind_acc=k[2], kind_ins=k[3])
    text = tpl.format_map(ctx)
    text = text[:1].upper() + text[1:]
    lead = nums.get("lead")
    return LEAD_INS[lead][lang] + text if lead is not None else text


_VARIATIONS = [("What is the ", "What's the "), ("Which ", "What "), (" in adults ", " among adults "),
               (" in patients ", " among patients "), ("How should ", "How ought "), ("?", " today?")]


def near_duplicate(text: str, rng: random.Random) -> str:
    for a, b in rng.sample(_VARIATIONS, len(_VARIATIONS)):
        if a in text:
            return text.replace(a, b, 1)
    return text[:-1] + " today?"


def choose_template(rng: random.Random, task: str, group: str) -> dict:
    specific = [t[2] for t in TEMPLATES if t[0] == task and t[1] == group]
    generic = [t[2] for t in TEMPLATES if t[0] == task and t[1] == "*"]
    return rng.choice(specific if specific and rng.random() < .65 else generic)
