"""Negation cues and scopes per language: a mention in a negated scope is not a finding."""
from __future__ import annotations

import re

from tasks.grounding.normalize import fold_term
from tasks.grounding.params import Match
from tasks.grounding.spans import WORD


# Negation cues. Latin/Cyrillic: a cue among the few tokens before the mention, in the same
# clause. zh: a cue before the mention in the same clause (a 、-list keeps the scope open).
# ja: a cue right after the mention (発熱なし, 浮腫を認めない).
NEGATION_CUES: dict[str, list[str]] = {
    "en": ["no", "not", "without", "absence of", "absent", "negative for", "denies", "denied", "free of", "nor"],
    "fr": ["pas de", "pas d", "sans", "absence de", "absence d", "aucun", "aucune", "ni", "non"],
    "es": ["sin", "no", "ausencia de", "niega", "ningun", "ninguna", "ni"],
    "ru": ["нет", "не", "без", "отсутствие", "отрицает"],
}


_NEG_WINDOW_TOKENS = 5


_CLAUSE_END = re.compile(r"[.;:!?\n]")


_ZH_NEG = re.compile(r"(?:无|未见|未闻及|未触及|未|否认|没有|不伴|非)[^，。；;：:！？\n]{0,10}$|不$")


# words with 无/不/非 that negate nothing after them (weakness, asymptomatic, non-invasive), and
# 无(明显)诱因 "without apparent cause", after which the finding is asserted
_ZH_NOT_NEG = re.compile(r"无(?:明显|任何)?(?:诱因|原因)|无力|无症状|无创|无菌|无痛|无效|无法|无关|不适|不全|不齐|不良|不规则|不能|不清|非特异")


_JA_NEG = re.compile(r"^[はがをもの]?(?:なし|無し|ない|なく|認めない|認めず|認められない|みられない|見られない|陰性)")


def negated(text: str, m: Match, lang_code: str, latin: bool = True) -> bool:
    """Is the mention in the scope of a negation cue (see NEGATION_CUES)?"""
    if lang_code == "zh":
        left = text[max(0, m.start - 12):m.start]
        left = _ZH_NOT_NEG.sub(lambda x: "，" if "因" in x.group() else "X" * len(x.group()), left)
        return bool(_ZH_NEG.search(left))
    if lang_code == "ja":
        return bool(_JA_NEG.match(text[m.end:m.end + 8]))
    cues = NEGATION_CUES.get(lang_code)
    if not cues:
        return False
    left = text[max(0, m.start - 80):m.start]
    cut = max((x.end() for x in _CLAUSE_END.finditer(left)), default=0)
    words = WORD.findall(fold_term(left[cut:], latin))[-_NEG_WINDOW_TOKENS:]
    joined = " " + " ".join(words) + " "
    return any(f" {c} " in joined for c in cues)
