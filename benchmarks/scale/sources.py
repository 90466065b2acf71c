"""Sources and memory: the questions with their passages, the translation memory, background passages.

  sources/xqa.jsonl, sources/evidence.jsonl
        'sample-jsonl' items: English questions from templates, native zh/ja/fr/ru/es
        questions (templates in those languages, the concept's atom in that language, an
        English pivot), each with an English answer or evidence passage (60-150 words);
        a few percent deliberate near-duplicates (same-language and cross-lingual).
  sources/background.jsonl
        the rest of the evidence corpus (abstract-style passages).
  tm/memory.jsonl
        translation memory en -> zh/ja/fr/ru/es for most English questions (same template
        in the target language, the concept's atom there where one exists), plus concept
        names (terms) for the concept-discrimination task.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from schemas.config import Language
from tasks.translation.gates import translation_gates

from .addition import write_addition_memory
from .memory import JsonlWriter, tm_entry
from .passages import answer_passage, evidence_passage
from .presets import QUESTION_LANGS, Preset
from .questions import LEAD_IN_SHARE, LEAD_INS, POP_SHARE, POPULATIONS, choose_template, near_duplicate, numbers, render_question
from .vocabulary import QConcept, Vocabulary

PREFIX = {"xqa": "xqa", "evidence": "ev"}  # of item and passage ids


@dataclass
class Item:
    id: str
    task: str
    lang: str
    text: str
    pivot: str | None
    passage: dict
    q: QConcept | None = None
    template: dict | None = None
    pop: dict | None = None
    nums: dict | None = None

    def record(self) -> dict:
        return {"id": self.id, "task": self.task, "lang": self.lang, "text": self.text, "pivot": self.pivot,
                "passages": [self.passage]}


class ItemMaker:
    """Questions with their passages, from one seeded stream: ids numbered per (task, lang),
    passages numbered per task."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.passages = {"xqa": 0, "evidence": 0}
        self.ids: dict[tuple, int] = {}

    def passage(self, task: str, q: QConcept) -> dict:
        self.passages[task] += 1
        pid = f"{PREFIX[task]}-doc-{self.passages[task]:06d}"
        title, text = (answer_passage if task == "xqa" else evidence_passage)(self.rng, q.en, q.group)
        return {"id": pid, "title": title, "text": text}

    def new_id(self, task: str, lang: str) -> str:
        self.ids[(task, lang)] = self.ids.get((task, lang), 0) + 1
        return f"{PREFIX[task]}-{lang}-{self.ids[(task, lang)]:05d}"

    def make(self, task: str, lang: str, q: QConcept) -> Item:
        rng = self.rng
        tpl = choose_template(rng, task, q.group)
        # short names get a population more often: a short text that differs only in its name is a near-duplicate
        share = POP_SHARE if len(q.en) >= 16 else 0.9
        pop, nums = (rng.choice(POPULATIONS) if rng.random() < share else None), numbers(rng)
        if rng.random() < LEAD_IN_SHARE:
            nums["lead"] = rng.randrange(len(LEAD_INS))
        en = render_question(tpl, "en", q.en, q.group, "", pop, nums)
        if lang == "en":
            return Item(self.new_id(task, lang), task, lang, en, None, self.passage(task, q), q, tpl, pop, nums)
        native = render_question(tpl, lang, q.names[lang], q.group, q.genders[lang], pop, nums)
        return Item(self.new_id(task, lang), task, lang, native, en, self.passage(task, q), q, tpl, pop, nums)

    def questions(self, by_role: dict[str, list[QConcept]], preset: Preset) -> tuple[list[Item], list[Item]]:
        """The English questions, then the native ones, language by language."""
        pool = by_role.get("en", [])
        self.rng.shuffle(pool)
        english = [self.make("xqa", "en", q) for q in pool[:preset.xqa_en]]
        english += [self.make("evidence", "en", q) for q in pool[preset.xqa_en:preset.xqa_en + preset.ev_en]]
        natives = []
        for lang in QUESTION_LANGS:
            pool = by_role.get(f"native:{lang}", [])
            self.rng.shuffle(pool)
            natives += [self.make("xqa", lang, q) for q in pool[:preset.xqa_native]]
            natives += [self.make("evidence", lang, q) for q in pool[preset.xqa_native:preset.xqa_native + preset.ev_native]]
        return english, natives

    def duplicates(self, english: list[Item], n_natives: int, preset: Preset) -> tuple[list[Item], list[Item]]:
        """Deliberate duplicates: near-duplicate wording and exact copies (English), and
        cross-lingual copies (a native question that is an English one)."""
        rng, n_en = self.rng, len(english)
        dups = []
        for it in rng.sample(english, int(n_en * preset.dup_share)):
            dups.append(Item(self.new_id(it.task, "en"), it.task, "en", near_duplicate(it.text, rng), None, it.passage, it.q,
                             it.template, it.pop, it.nums))
        for it in rng.sample(english, int(n_en * preset.exact_share)):
            dups.append(Item(self.new_id(it.task, "en"), it.task, "en", it.text, None, it.passage, it.q, it.template, it.pop,
                             it.nums))
        xdups = []
        for it in rng.sample(english, int((n_en + n_natives) * preset.xdup_share)):
            lang = rng.choice(QUESTION_LANGS)
            native = render_question(it.template, lang, it.q.names[lang], it.q.group, it.q.genders[lang], it.pop, it.nums)
            xdups.append(Item(self.new_id(it.task, lang), it.task, lang, native, it.text, it.passage, it.q))
        return dups, xdups


def write_items(out: Path, items: list[Item]) -> None:
    files = {t: JsonlWriter(out / "sources" / f"{t}.jsonl") for t in ("xqa", "evidence")}
    for it in items:
        files[it.task].add(it.record())
    for f in files.values():
        f.close()


@dataclass
class MemoryCounts:
    questions: dict[str, int]  # lang -> English questions with an entry
    terms: dict[str, int]  # lang -> concept names with an entry
    from_atoms: int  # question targets naming the concept with its open vocabulary atom (else a rendering)
    lines: int


def write_memory(rng: random.Random, out: Path, english: list[Item], kept: list[QConcept], share: float,
                 langs: dict[str, Language]) -> MemoryCounts:
    """tm/memory.jsonl: the English questions (a `share` of them per language), then concept names."""
    tm = JsonlWriter(out / "tm" / "memory.jsonl")
    counts = MemoryCounts({l: 0 for l in QUESTION_LANGS}, {l: 0 for l in QUESTION_LANGS}, 0, 0)
    for it in english:
        for lang in QUESTION_LANGS:
            if rng.random() >= share:
                continue
            target = render_question(it.template, lang, it.q.names[lang], it.q.group, it.q.genders[lang], it.pop, it.nums)
            for e in tm_entry(rng, it.text, target, lang):
                tm.add(e)
            counts.questions[lang] += 1
            counts.from_atoms += it.q.has_atom[lang]
    for q in kept:
        if not q.role.startswith("term:"):
            continue
        lang = q.role[5:]
        target = q.names[lang]
        if len(target.split()) >= 6 or (lang in ("zh", "ja") and len(target) >= 20):
            continue  # long names need language identification: keep the memory to short terms
        if translation_gates(q.name_en, target, langs["en"], langs[lang]):
            continue  # e.g. a gene name, Latin letters in a Cyrillic term
        for e in tm_entry(rng, q.name_en, target, lang):
            tm.add(e)
        counts.terms[lang] += 1
    tm.close()
    counts.lines = tm.rows
    return counts


def write_background(rng: random.Random, out: Path, question_concepts: list[QConcept], reservoir: list[tuple],
                     n: int) -> None:
    """sources/background.jsonl: n evidence passages, a tenth of them on a question's concept."""
    bg = JsonlWriter(out / "sources" / "background.jsonl")
    for i in range(1, n + 1):
        if rng.random() < .1 and question_concepts:
            q = question_concepts[rng.randrange(len(question_concepts))]
            name, group = q.en, q.group
        else:
            name, group = reservoir[rng.randrange(len(reservoir))][:2]
        title, text = (evidence_passage if rng.random() < .8 else answer_passage)(rng, name, group)
        bg.add({"id": f"ev-bg-{i:07d}", "title": title, "text": text})
    bg.close()


def write_sources(vocab: Vocabulary, out: Path, preset: Preset, seed: int, registry: dict) -> dict:
    """Every file but the vocabulary's and the config; returns their counts."""
    rng = random.Random(f"sources:{seed}")
    langs = {code: Language(code=code, **entry) for code, entry in registry.items()}
    by_role: dict[str, list[QConcept]] = {}
    for q in vocab.kept:
        by_role.setdefault(q.role, []).append(q)
    maker = ItemMaker(rng)
    english, natives = maker.questions(by_role, preset)
    dups, xdups = maker.duplicates(english, len(natives), preset)
    english_all = english + dups
    write_items(out, english_all + natives + xdups)
    memory = write_memory(rng, out, english_all, vocab.kept, preset.tm_share, langs)
    addition = write_addition_memory(out, english_all, seed, preset.tm_share)
    write_background(rng, out, [it.q for it in english + natives], vocab.reservoir, preset.background)
    items = english_all + natives + xdups

    def count(task, pred):
        return sum(1 for it in items if it.task == task and pred(it))

    n_en = len(english)
    return {
        "questions": {t: {l: count(t, lambda it, l=l: it.lang == l) for l in ["en"] + QUESTION_LANGS} for t in ("xqa", "evidence")},
        "questions_total": len(items),
        "deliberate_duplicates": {"near": int(n_en * preset.dup_share), "exact": int(n_en * preset.exact_share),
                                  "cross_lingual": len(xdups)},
        "passages": {"xqa": maker.passages["xqa"], "evidence": maker.passages["evidence"], "background": preset.background,
                     "evidence_corpus": maker.passages["evidence"] + preset.background},
        "memory": {"question_entries": memory.questions, "term_entries": memory.terms, "lines": memory.lines,
                   "question_targets_with_vocabulary_atom": round(memory.from_atoms / max(1, sum(memory.questions.values())), 3)},
        "addition": addition,
    }
