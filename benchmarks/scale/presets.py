"""Presets: how big a generated build is, and its quotas."""
from __future__ import annotations

from dataclasses import dataclass, field

QUESTION_LANGS = ["zh", "ja", "fr", "ru", "es"]  # native / translated languages besides en


@dataclass(frozen=True)
class Preset:
    name: str
    mrconso_rows: int  # generation stops at the first tree that reaches it (and min_concepts)
    xqa_en: int
    xqa_native: int  # per non-English language
    ev_en: int
    ev_native: int
    background: int  # evidence passages beyond the items' own
    terms_per_lang: int  # translation-memory entries for concept names, per language
    quotas: dict = field(default_factory=dict)
    tm_share: float = 0.88  # share of English questions with a memory entry, per language
    dup_share: float = 0.025  # same-language near-duplicates of English questions
    xdup_share: float = 0.007  # cross-lingual duplicates (a native question = an English one)
    exact_share: float = 0.003  # exact duplicates under another id
    min_concepts: int = 0  # ... and keeps going until the vocabulary has this many concepts


PAPER_QUOTAS = {"xqa": 1021, "evidence": 340, "cd": 829}
# 'full': the size of a full UMLS release, with the questions, passages, memory and quotas
# of 'paper' (issue #14: at least 16M MRCONSO rows and 3M concepts). A release of 2024AA has
# about 3.38M concepts from 187 source vocabularies (https://grokipedia.com/page/unified_medical_language_system,
# citing NLM); a 2017AA MRCONSO held about 3.4M CUIs (https://github.com/cambridgeltl/sapbert/issues/3).
# The language mix (data/source_mix.toml) is this generator's own estimate: published
# per-LAT counts of a recent release were not found (NLM's statistics page was not reachable
# from here); the one public per-language breakdown found is 2003AA's MRCON (82.6% English,
# then German, Spanish, Portuguese, Russian, ...: http://www.d.umn.edu/~mich0212/research/UMLS/umls-notes.txt),
# far older than SNOMED CT's Spanish edition, MedDRA's Japanese and HPO's Chinese.
PRESETS = {
    "tiny": Preset("tiny", 20_000, 260, 30, 130, 12, 1_400, 60, {"xqa": 50, "evidence": 20, "cd": 40}),
    "paper": Preset("paper", 3_050_000, 6_500, 500, 3_200, 200, 96_000, 2_000, PAPER_QUOTAS),
    "full": Preset("full", 17_000_000, 6_500, 500, 3_200, 200, 96_000, 2_000, PAPER_QUOTAS, min_concepts=3_000_000),
}

