"""tasks/evaluation/lexical.py: registry-driven tokenizers and BM25 through bm25s."""
from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from schemas.config import load_registry
from tasks.evaluation.lexical import BM25Index, document_text, fold_words, tokenizer_for
from tasks.grounding.normalize import fold_term
from tests.conftest import ROOT

REGISTRY = load_registry(ROOT / "configs" / "languages.toml")


def test_the_registry_names_each_languages_segmenter():
    assert {c: tokenizer_for(l).name for c, l in REGISTRY.items()} == {
        "en": "words", "fr": "words", "es": "words", "ru": "words", "de": "words", "zh": "jieba", "ja": "sudachi"}


@pytest.mark.parametrize("text,latin", [
    ("Crohn's disease and Crohn’s colitis", True),
    ("Œdème pulmonaire aigu — réanimation", True),
    ("ﬁbrose Ｆｕｌｌ-width ＡＢＣ", True),
    ("TNF-α and β2-microglobulin", True),
    ("Straße naïve façade Ørsted Łódź snake_case", True),
    ("Ёлка, йод и жёлчный пузырь", False),
])
def test_words_fold_like_the_grounders_fold(text, latin):
    assert fold_words(text) == re.findall(r"[^\W_]+", fold_term(text, latin))


def test_words_tokens():
    assert tokenizer_for(REGISTRY["fr"])("L'Œdème PULMONAIRE, aigu (TNF-α)") == ["l", "oedeme", "pulmonaire", "aigu", "tnf", "alpha"]
    assert tokenizer_for(REGISTRY["ru"])("Острый аппендицит: ЁЖ") == ["острый", "аппендицит", "еж"]


def test_chinese_is_segmented_by_jieba_never_split_on_spaces():
    tok = tokenizer_for(REGISTRY["zh"])
    assert tok("急性阑尾炎的诊断，Hp感染与 TNF-α。") == ["急性", "阑尾炎", "的", "诊断", "hp", "感染", "与", "tnf", "alpha"]


def test_japanese_is_segmented_by_sudachi_in_normalized_form():
    tok = tokenizer_for(REGISTRY["ja"])
    assert tok("大腿ヘルニアは女性に多い。ＣＴ検査、附属病院") == [
        "大腿", "ヘルニア", "は", "女性", "に", "多い", "ct", "検査", "付属", "病院"]
    # English inside a Japanese cell meets the same tokens as in an English one
    assert tok("Femoral hernia, naïve") == tokenizer_for(REGISTRY["en"])("Femoral hernia, naïve")


def test_tokenizers_are_thread_safe_and_deterministic():
    texts = ["大腿ヘルニアは女性に多い。", "急性阑尾炎的诊断", "Œdème aigu"] * 40
    for code in ("ja", "zh", "fr"):
        tok = tokenizer_for(REGISTRY[code])
        serial = [tok(t) for t in texts]
        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(tok, texts)) == serial


def test_document_text_is_title_space_text():
    assert document_text({"_id": "d", "title": "Heart", "text": "attack"}) == "Heart attack"
    assert document_text({"_id": "d", "title": "", "text": "attack"}) == "attack"


DOCS = [("d3", "kidney stone"), ("d1", "heart attack"), ("d2", "heart failure heart"), ("d0", "heart attack")]


def _bm25(tf: int, df: int, dl: int, n: int, avgdl: float, k1: float = 1.2, b: float = 0.75) -> float:
    """Lucene's BM25 for one term, by hand."""
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_bm25_scores_are_lucene_bm25():
    idx = BM25Index(DOCS, tokenizer_for(REGISTRY["en"]))
    avgdl = 9 / 4
    heart = [0.0, _bm25(1, 3, 2, 4, avgdl), _bm25(2, 3, 3, 4, avgdl), _bm25(1, 3, 2, 4, avgdl)]
    np.testing.assert_allclose(idx.scores("Heart"), heart, rtol=1e-6)
    attack = [0.0, _bm25(1, 2, 2, 4, avgdl), 0.0, _bm25(1, 2, 2, 4, avgdl)]
    np.testing.assert_allclose(idx.scores("heart attack"), np.add(heart, attack), rtol=1e-6)
    assert idx.scores("unknown words").tolist() == [0.0] * 4


def test_top_sorts_by_score_then_doc_id_and_skips_zero_scores():
    idx = BM25Index(DOCS, tokenizer_for(REGISTRY["en"]))
    assert [d for d, _ in idx.top("heart attack", 10)] == ["d0", "d1", "d2"]  # d0 and d1 tie
    assert [d for d, _ in idx.top("heart attack", 1)] == ["d0"]
    assert [d for d, _ in idx.top("heart", 2)] == ["d2", "d0"]
    assert idx.top("nothing matches", 5) == []


def test_within_restricts_the_same_scores_to_a_set():
    idx = BM25Index(DOCS, tokenizer_for(REGISTRY["en"]))
    full = dict(zip(idx.doc_ids, idx.scores("heart attack").tolist()))
    got = idx.within("heart attack", ["d3", "d2", "d1"])
    assert got == [("d1", full["d1"]), ("d2", full["d2"]), ("d3", 0.0)]
    with pytest.raises(ValueError, match="not in the index"):
        idx.within("heart", ["d9"])


def test_cjk_bm25_matches_words_inside_unsegmented_text():
    idx = BM25Index([("a", "急性阑尾炎的诊断"), ("b", "慢性胃炎"), ("c", "阑尾")], tokenizer_for(REGISTRY["zh"]))
    assert [d for d, _ in idx.top("阑尾炎", 3)] == ["a"]  # jieba's word, not a character or a whitespace run


def test_scores_are_bm25s_own_scores():
    idx = BM25Index(DOCS, tokenizer_for(REGISTRY["en"]))
    for q in ("heart attack heart", "kidney", "stone attack"):
        np.testing.assert_allclose(idx.scores(q), idx.bm25.get_scores(tokenizer_for(REGISTRY["en"])(q)), rtol=1e-12)


def test_a_corpus_without_han_or_kana_shares_the_words_index():
    ja, en = tokenizer_for(REGISTRY["ja"]), tokenizer_for(REGISTRY["en"])
    texts = [t for _, t in DOCS]
    assert ja.key_for(texts) == "words" and ja.key_for(texts + ["大腿ヘルニア"]) == "sudachi"
    assert [ja(t) for t in texts] == [en(t) for t in texts]
    shared = BM25Index(DOCS, en).with_tokenizer(ja)
    assert shared.top("heart 大腿", 3) == BM25Index(DOCS, ja).top("heart 大腿", 3)


def test_an_empty_corpus_or_one_without_tokens_retrieves_nothing():
    assert BM25Index([], tokenizer_for(REGISTRY["en"])).top("heart", 3) == []
    idx = BM25Index([("a", "..."), ("b", "—")], tokenizer_for(REGISTRY["en"]))
    assert idx.top("heart", 3) == [] and idx.within("heart", ["b", "a"]) == [("a", 0.0), ("b", 0.0)]


@pytest.mark.parametrize("low,high,latin", [(32, 0x24F, True), (0x400, 0x4FF, False)])
def test_words_fold_equals_fold_on_any_latin_or_cyrillic_text(low, high, latin):
    """Property: the whole-string folding (with its ASCII fast path) gives the tokens of the
    grounder's per-character fold, on random Latin (ASCII to Latin Extended-B) or Cyrillic text."""
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.text(alphabet=st.characters(min_codepoint=low, max_codepoint=high, exclude_categories=("Cs",)), max_size=50))
    def check(text):
        assert fold_words(text) == re.findall(r"[^\W_]+", fold_term(text, latin))

    check()
