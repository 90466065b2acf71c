"""Word reduction rules (inflection only): light stems per language, Snowball where NLTK has
one, pymorphy3 lemmas where the registry asks for them."""
from __future__ import annotations

import re

from tasks.grounding.params import QUICKUMLS_LANG
from tasks.grounding.runtime import morph_parses, snowball_stemmer


_EN_BRITISH = [(re.compile(r"(?<=[a-z])ae(?=[a-z])"), "e"), (re.compile(r"(?<=[a-z])oe(?=[a-z])"), "e"),
               (re.compile(r"(?<=[a-z]{3})our(?=s?$)"), "or")]


def light_stem(word: str, lang_code: str, snowball: bool = False) -> str:
    """Inflection only (plural), so that "tumors" = "tumor" but "hepatic" != "hepatitis"
    (a Snowball stemmer conflates those); English also folds British spellings (haemorrhage,
    oedema, tumour). Languages without rules here use Snowball when NLTK has one."""
    w = word
    if lang_code == "en":
        for rx, rep in _EN_BRITISH:
            w = rx.sub(rep, w)
    if snowball:
        if lang_code == "en" and w.endswith(("itis", "itides")):
            return w  # Snowball makes hepatitis = hepatic, retinitis = retinal
        st = snowball_stemmer(QUICKUMLS_LANG.get(lang_code, (None, None))[1])
        return st.stem(w) if st is not None else w
    if lang_code == "en":
        if len(w) > 4 and w.endswith("ies"):
            return w[:-3] + "y"
        if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            return w[:-1]
        return w
    if lang_code == "fr":
        if len(w) > 5 and w.endswith("aux"):
            return w[:-3] + "al"
        if len(w) > 3 and w.endswith(("s", "x")) and not w.endswith(("ss", "us")):
            return w[:-1]
        return w
    if lang_code == "es":
        if len(w) > 5 and w.endswith("ces"):
            return w[:-3] + "z"
        if len(w) > 5 and w.endswith("iones"):
            return w[:-5] + "ion"
        if len(w) > 4 and w.endswith("es") and w[-3] not in "aeiou":
            return w[:-2]
        if len(w) > 3 and w.endswith("s") and w[-2] in "aeiou" and not w.endswith("is"):
            return w[:-1]
        return w
    st = snowball_stemmer(QUICKUMLS_LANG.get(lang_code, (None, None))[1])
    return st.stem(w) if st is not None else w


def lemma(word: str, lang_code: str) -> str:
    """The most probable dictionary lemma of a folded word ("шизофренией" -> "шизофрения",
    "острым" -> "острый"), folded the way fold() folds ("ё" -> "е"); words pymorphy3 cannot
    parse (Latin, numbers) come back as they are."""
    parses = morph_parses(word, lang_code)
    return parses[0].normal_form.replace("ё", "е") if parses else word
