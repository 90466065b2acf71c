"""common.text (normalise, script profile, shingles, Jaccard) and tasks.translation.gates."""
from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from schemas.config import load_registry
from schemas.gates import GateFailure
from common.text import char_shingles, jaccard, lexical_similarity, normalize, script_of, script_profile
from tasks.translation.gates import (
    copy_gate,
    detect_language,
    langid_gate,
    length_ratio_gate,
    numbers,
    numbers_gate,
    script_gate,
    text_gates,
    translation_gates,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def langs():
    return load_registry(ROOT / "configs" / "languages.toml")


EN_Q = "What are the typical symptoms of myocardial infarction in elderly patients?"
FR_Q = "Quels sont les symptômes typiques de l'infarctus du myocarde chez les patients âgés ?"
JA_Q = "高齢患者における心筋梗塞の典型的な症状は何ですか？"
RU_Q = "Каковы типичные симптомы инфаркта миокарда у пожилых пациентов?"
ZH_Q = "稳定型心绞痛有哪些典型特征可将其与非心源性胸痛相区别？"


# --- normalize ------------------------------------------------------------------------------


def test_normalize_nfkc_fullwidth_to_ascii():
    assert normalize("ＡＢＣ１２３") == "abc123"
    assert normalize("ｍｇ／ｄＬ") == "mg/dl"


def test_normalize_casefold():
    assert normalize("HEART Attack") == "heart attack"
    assert normalize("Straße") == "strasse"  # casefold, not lower
    assert normalize("ИНФАРКТ") == "инфаркт"


def test_normalize_collapses_whitespace():
    assert normalize("  heart\t\n attack\u3000now  ") == "heart attack now"  # incl. ideographic space
    assert normalize("   ") == ""


def test_normalize_composes_kana_voicing_marks():
    decomposed = "ハ\u3099ス"  # HA + combining voiced mark
    assert normalize(decomposed) == "バス"
    assert normalize("ﾊﾞｽ") == "バス"  # half-width katakana with a separate voicing mark
    assert normalize("バス") != normalize("ハス")


# --- script profile ---------------------------------------------------------------------------


def test_script_profile_counts_letters_only():
    prof = script_profile("バス心abc Привет 123!")
    assert prof == {"Katakana": 2, "Han": 1, "Latin": 3, "Cyrillic": 6}


def test_script_of_japanese_marks():
    assert script_of("ー") == "Katakana"
    assert script_of("々") == "Han"
    assert script_of("ｶ") == "Katakana"  # half-width
    assert script_of("ひ") == "Hiragana"
    assert script_of("5") is None and script_of("？") is None


# --- shingles and Jaccard ----------------------------------------------------------------------


def test_shingles_of_text_shorter_than_n_is_one_shingle():
    assert char_shingles("flu", 5) == {"flu"}
    assert char_shingles("Gout", 5) == {"gout"}
    assert char_shingles("abcde", 5) == {"abcde"}  # exactly n
    assert char_shingles("abcdef", 5) == {"abcde", "bcdef"}


@pytest.mark.parametrize("text", ["a", "ab", "flu", "心", "痛風", "x y", "ＡＢ", "バス"])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 10])
def test_shingles_never_empty_for_non_empty_text(text, n):
    sh = char_shingles(text, n)
    assert sh
    assert all(len(s) <= n for s in sh)


def test_shingles_of_blank_text_are_empty():
    assert char_shingles("", 5) == set()
    assert char_shingles(" \t\n", 2) == set()


def test_shingles_are_normalised():
    assert char_shingles("ＨＥＡＲＴ  attack", 3) == char_shingles("heart attack", 3)


def test_cjk_bigrams():
    assert char_shingles("心筋梗塞", 2) == {"心筋", "筋梗", "梗塞"}
    assert char_shingles("痛風", 2) == {"痛風"}


def test_kana_voicing_marks_are_kept_in_shingles():
    assert char_shingles("バス", 2) != char_shingles("ハス", 2)
    assert char_shingles("バス", 2) == {"バス"}
    assert char_shingles("ハス", 2) == {"ハス"}
    assert char_shingles("ハ\u3099ス", 2) == char_shingles("バス", 2)
    assert jaccard(char_shingles("バス", 2), char_shingles("ハス", 2)) == 0.0


def test_jaccard():
    assert jaccard(set(), set()) == 1.0
    assert jaccard({"a"}, set()) == 0.0
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert lexical_similarity("Heart attack", "HEART ATTACK") == 1.0
    assert 0 < lexical_similarity("myocardial infarction", "myocardial ischaemia") < 1


# --- script gate ---------------------------------------------------------------------------------


def test_japanese_sentence_with_kana_passes_ja(langs):
    assert script_gate(JA_Q, langs["ja"]) is None
    assert text_gates(JA_Q, langs["ja"]) == []


def test_all_kanji_short_japanese_term_passes_ja(langs):
    assert script_gate("心筋梗塞", langs["ja"]) is None
    # langdetect calls it Chinese, which the ja langid gate must tolerate for a kanji term
    assert text_gates("心筋梗塞", langs["ja"]) == []
    assert text_gates("急性心筋梗塞", langs["ja"]) == []


def test_long_all_han_sentence_fails_ja_with_kana_reason(langs):
    no_kana = GateFailure("script", "Japanese sentence without kana")
    assert script_gate(ZH_Q, langs["ja"]) == no_kana
    assert no_kana in text_gates(ZH_Q, langs["ja"])
    assert script_gate("急性心筋梗塞患者初期治療選択肢比較検討結果報告", langs["ja"]) == no_kana  # 23 Han, no kana


def test_chinese_with_kana_fails_zh(langs):
    assert script_gate("心筋梗塞の症状", langs["zh"]) == GateFailure("script", "contains Hiragana, not expected in zh")
    assert script_gate("アスピリン", langs["zh"]) == GateFailure("script", "contains Katakana, not expected in zh")
    assert script_gate(ZH_Q, langs["zh"]) is None


def test_russian_cyrillic_passes_ru_and_latin_fails(langs):
    assert script_gate(RU_Q, langs["ru"]) is None
    assert text_gates(RU_Q, langs["ru"]) == []
    assert script_gate(EN_Q, langs["ru"]) == GateFailure("script", "0% of letters in Cyrillic (mostly Latin)")


def test_no_letters_fails(langs):
    assert script_gate("123 / 456", langs["en"]) == GateFailure("script", "no letters")


# --- langid gate ---------------------------------------------------------------------------------


def test_english_given_as_french_fails_langid(langs):
    assert len(EN_Q.split()) >= 6
    assert script_gate(EN_Q, langs["fr"]) is None  # same script: only language ID can tell
    assert langid_gate(EN_Q, langs["fr"]) == GateFailure("langid", "detected en, expected fr")
    assert langid_gate(FR_Q, langs["fr"]) is None
    assert langid_gate(EN_Q, langs["en"]) is None


def test_short_texts_are_not_language_identified(langs):
    # fewer than 6 words: a concept name is too short to detect
    assert langid_gate("Myocardial infarction", langs["fr"]) is None


def test_medical_chinese_detected_as_korean_still_passes_zh(langs):
    assert detect_language(ZH_Q, backend="langdetect") == "ko"  # the premise: langdetect's Korean profile holds Hanja
    assert langid_gate(ZH_Q, langs["zh"]) is None
    assert text_gates(ZH_Q, langs["zh"]) == []


def test_language_detection_is_repeatable():
    assert len({detect_language(FR_Q) for _ in range(5)}) == 1


# --- copy, numbers and length gates -------------------------------------------------------------------


def test_copy_gate():
    assert copy_gate("Heart attack", "  HEART   attack ") == GateFailure("copy", "translation equals its source")
    assert copy_gate("Heart attack", "Ｈｅａｒｔ ａｔｔａｃｋ") is not None
    assert copy_gate("Heart attack", "Crise cardiaque") is None


def test_numbers_extraction():
    # separators between digits are dropped: decimal and thousands marks differ by language
    assert numbers("Give 40 mg, then 0,5 ml at 1.5 h") == ["05", "15", "40"]
    assert numbers("10,000 IU") == numbers("10 000 UI") == numbers("10000 UI")
    assert numbers("４０ｍｇ") == ["40"]  # full-width digits


def test_dropped_number_fails(langs):
    reason = numbers_gate("Give 40 mg of aspirin daily.", "Donner de l'aspirine chaque jour.", langs["fr"])
    assert reason == GateFailure("numbers", "40 missing from the translation")


def test_kept_numbers_pass(langs):
    assert numbers_gate("Give 40 mg of aspirin for 3 days.", "Donner 40 mg d'aspirine pendant 3 jours.", langs["fr"]) is None
    assert numbers_gate("Give 40 mg of aspirin.", "アスピリン40mgを投与する。", langs["ja"]) is None
    assert numbers_gate("No numbers here.", "Pas de nombres.", langs["fr"]) is None


@pytest.mark.parametrize("src,tgt", [("Take 0,5 mg.", "Prendre 0.5 mg."), ("Take 0.5 mg.", "Prendre 0,5 mg.")])
def test_decimal_comma_and_point_are_equivalent(langs, src, tgt):
    assert numbers_gate(src, tgt, langs["fr"]) is None


def test_changed_number_fails(langs):
    assert numbers_gate("Take 0.5 mg.", "Prendre 5 mg.", langs["fr"]) == GateFailure("numbers", "05 missing from the translation")


def test_dropped_unit_fails_for_latin_targets(langs):
    reason = numbers_gate("Give 40 mg of aspirin.", "Donner 40 d'aspirine.", langs["fr"])
    assert reason == GateFailure("units", "mg missing from the translation")


def test_length_ratio_gate(langs):
    en, fr, ja = langs["en"], langs["fr"], langs["ja"]
    assert length_ratio_gate(EN_Q, FR_Q, en, fr) is None
    assert length_ratio_gate(EN_Q, "Symptômes ?", en, fr) == GateFailure("length", "ratio 0.15 outside [0.5, 2.5]")
    assert length_ratio_gate(EN_Q, FR_Q * 3, en, fr) is not None  # too long
    # CJK targets are much shorter in characters than Latin sources
    assert length_ratio_gate(EN_Q, JA_Q, en, ja) is None
    assert length_ratio_gate(EN_Q, EN_Q + " " + EN_Q, en, ja) is not None  # ratio 2 > 1.2
    # and the reverse direction
    assert length_ratio_gate(JA_Q, EN_Q, ja, en) is None


def test_length_ratio_ignores_short_terms(langs):
    assert length_ratio_gate("Heart attack", "Infarctus aigu du myocarde avec sus-décalage", langs["en"], langs["fr"]) is None
    assert length_ratio_gate("Gout", "X", langs["en"], langs["fr"]) is None


def test_translation_gates_collects_every_reason(langs):
    assert translation_gates(EN_Q, FR_Q, langs["en"], langs["fr"]) == []
    assert translation_gates(EN_Q, EN_Q, langs["en"], langs["fr"]) == [
        GateFailure("langid", "detected en, expected fr"), GateFailure("copy", "translation equals its source")]


def test_nfc_and_nfd_are_the_same_text():
    nfd = unicodedata.normalize("NFD", FR_Q)
    assert nfd != FR_Q
    assert normalize(nfd) == normalize(FR_Q)
    assert copy_gate(FR_Q, nfd) is not None
