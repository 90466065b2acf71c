"""The dense pass (tasks/grounding/dense.py and the stage's use of it), with a tiny
deterministic encoder: character-trigram counts hashed into 64 dimensions, L2-normalized.
Nothing is downloaded and no model is loaded."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from common.encoders import EmbeddingCache
from tasks.grounding import dense as dn
from tasks.grounding.spans import Term


class TrigramEncoder:
    """Texts -> hashed character trigrams (of the casefolded text, padded), L2-normalized."""

    dimension = 64
    fingerprint = "tiny-trigram-encoder-v1"
    key_parts: list = []

    def __init__(self):
        self.calls = 0
        self.texts = 0

    def embed(self, texts, side):
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, t in enumerate(texts):
            s = f"  {t.casefold()}  "
            for k in range(len(s) - 2):
                out[i, int(hashlib.md5(s[k:k + 3].encode()).hexdigest(), 16) % self.dimension] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


def term(text, cui, pref=True):
    return Term(text, cui, (not pref, 0, cui))


TERMS = {"en": [term("hypertension", "C1"), term("high blood pressure", "C1", False), term("asthma", "C2"),
                term("heart failure", "C3"), term("cold", "C4"), term("cold", "C5")],
         "fr": [term("insuffisance cardiaque", "C3"), term("asthme", "C2")]}
GATES = dn.DenseSettings(span_threshold=0.6, span_margin=0.05, option_threshold=0.8, option_margin=0.1)


@pytest.fixture()
def index():
    return dn.NameIndex.build(TrigramEncoder(), TERMS, None)


def test_span_candidates_follow_words_stopwords_breaks_and_taken_spans():
    text = "Acute heart failure, of the lung"
    toks = [(0, 5), (6, 11), (12, 19), (21, 23), (24, 27), (28, 32)]
    got = dn.span_candidates(text, toks, {"of", "the"}, 3)
    assert [text[s:e] for s, e in got] == ["Acute", "Acute heart", "Acute heart failure", "heart", "heart failure",
                                           "failure", "lung"]
    got = dn.span_candidates(text, toks, {"of", "the"}, 2, taken=[(12, 19)])
    assert [text[s:e] for s, e in got] == ["Acute", "Acute heart", "heart", "lung"]


def test_span_candidates_skip_tokens_without_a_letter():
    text = "a 12 mg dose"
    got = dn.span_candidates(text, [(0, 1), (2, 4), (5, 7), (8, 12)], set(), 3)
    assert [text[s:e] for s, e in got] == ["a", "a 12 mg", "mg", "mg dose", "dose"]


def test_nearest_links_take_the_best_name_per_concept_and_the_margin_to_the_next_concept():
    scores = np.array([[0.9, 0.8, 0.5, 0.1],     # C1 by two names, then C2
                       [0.7, 0.2, 0.7, 0.1],     # a tie between C1 and C2: the smaller CUI, margin 0
                       [0.3, 0.4, 0.2, 0.25]], dtype=np.float32)
    links = dn.nearest_links(scores, ["C1", "C1", "C2", "C3"])
    assert [(l.cui, round(l.score, 3), round(l.margin, 3)) for l in links] == [
        ("C1", 0.9, 0.4), ("C1", 0.7, 0.0), ("C1", 0.4, 0.15)]
    # the runner-up outside the names looked at: the margin is taken to the last one looked at
    one = dn.nearest_links(np.array([[0.9, 0.8, 0.1]], dtype=np.float32), ["C1", "C1", "C2"], top=2)[0]
    assert (one.cui, round(one.margin, 3)) == ("C1", 0.1)


def test_select_links_gates_and_resolves_overlaps_best_first():
    L = dn.Link
    found = [(0, 5, L("C1", 0.9, 0.2)), (0, 11, L("C2", 0.85, 0.2)), (6, 11, L("C3", 0.95, 0.01)),
             (12, 20, L("C4", 0.55, 0.3)), (12, 16, L("C5", 0.7, 0.3))]
    kept = dn.select_links(found, threshold=0.6, margin=0.05)
    assert [(s, e, l.cui) for s, e, l in kept] == [(0, 5, "C1"), (12, 16, "C5")]
    kept = dn.select_links(found, threshold=0.6, margin=0.0)
    assert [(s, e, l.cui) for s, e, l in kept] == [(0, 5, "C1"), (6, 11, "C3"), (12, 16, "C5")]


def test_a_name_speaks_for_its_best_ranked_concept():
    names, cuis = dn.best_ranked_names([term("cold", "C5", False), term("cold", "C4"), term(" ", "C9"), term("flu", "C6")])
    assert (names, cuis) == (["cold", "flu"], ["C4", "C6"])


def test_whole_texts_link_at_the_option_gates(index):
    linker = dn.DenseLinker(index, GATES)
    got = linker.link_whole([("en", "hypertensions"), ("en", "zzzz qqq"), ("fr", "insuffisance cardiaque aigue"),
                             ("en", "asthma")])
    assert [l.cui if l else None for l in got] == ["C1", None, "C3", "C2"]
    assert round(got[3].score, 4) == 1.0
    strict = dn.DenseLinker(index, dn.DenseSettings(0.6, 0.05, option_threshold=0.99, option_margin=0.1))
    assert [l.cui if l else None for l in strict.link_whole([("en", "hypertensions"), ("en", "asthma")])] == [None, "C2"]


def test_a_french_text_is_compared_with_french_and_english_names_only(index):
    links = index.nearest("fr", index.encoder.embed(["asthme", "heart failure"], "query"))
    assert [l.cui for l in links] == ["C2", "C3"]
    assert index.size("en") == 5 and index.size("fr") == 2  # "cold" once: its best-ranked concept
    ja = index.nearest("ja", index.encoder.embed(["asthma"], "query"))  # no ja names: English only
    assert ja[0].cui == "C2" and round(ja[0].score, 4) == 1.0


def test_spans_link_where_the_gates_allow_and_never_over_taken_text(index):
    linker = dn.DenseLinker(index, GATES)
    text = "Patient with hypertensive asthma and heart failures"
    toks = [(m.start(), m.end()) for m in __import__("re").finditer(r"\w+", text)]
    spans = dn.span_candidates(text, toks, {"with", "and"}, 3, taken=[(13, 25)])
    (links,) = linker.link_spans([("en", text, spans)])
    assert [(text[s:e], l.cui) for s, e, l in links] == [("asthma", "C2"), ("heart failures", "C3")]


def test_embeddings_are_cached_by_content_and_a_damaged_file_is_encoded_again(tmp_path):
    enc = TrigramEncoder()
    first = dn.NameIndex.build(enc, TERMS, tmp_path)
    assert enc.texts == 7
    again = dn.NameIndex.build(enc, TERMS, tmp_path)
    assert enc.texts == 7  # read back, not encoded
    e1 = first.nearest("en", enc.embed(["asthma"], "q"))
    e2 = again.nearest("en", enc.embed(["asthma"], "q"))
    assert e1 == e2
    files = sorted((tmp_path / enc.fingerprint[:16]).glob("*.npy"))
    assert len(files) == 2
    files[0].write_bytes(files[0].read_bytes()[:-8])  # cut short
    enc.texts = 0
    dn.NameIndex.build(enc, TERMS, tmp_path)
    assert enc.texts in (2, 5)  # that language's names only


def test_links_do_not_depend_on_how_queries_are_blocked(index, monkeypatch):
    queries = index.encoder.embed(["asthma", "hypertension", "heart", "cold", "fail", "insuffisance"], "q")
    whole = index.nearest("fr", queries)
    monkeypatch.setattr(dn, "SEARCH_CHUNK", 2)
    assert index.nearest("fr", queries) == whole


def test_the_encode_cache_checks_the_array_it_names(tmp_path):
    enc = TrigramEncoder()
    cache = EmbeddingCache(tmp_path)
    a = dn.encode(enc, ["x", "y"], cache)
    assert enc.calls == 1
    b = dn.encode(enc, ["x", "y"], cache)
    assert enc.calls == 1 and np.array_equal(a, b)


# ----------------------------------------------------------------------------- the stage's use
from tasks.grounding import keys  # noqa: E402


def _m(s, e, cui, score, found_by="string"):
    return {"start": s, "end": e, "text": "x", "cui": cui, "score": score, "pass": found_by}


def test_a_dense_link_counts_whatever_min_score_a_string_match_needs():
    mentions = [_m(0, 4, "C1", 0.62, "dense"), _m(5, 9, "C2", 0.7), _m(10, 12, "C3", 0.9)]
    assert keys.key_concepts(mentions, {"C1": "DISO", "C2": "DISO", "C3": "DISO"}, {"DISO"}, 0.8) == ["C1", "C3"]
    assert keys.confident(_m(0, 1, "C", 0.1, "dense"), 0.8) and not keys.confident(_m(0, 1, "C", 0.79), 0.8)


def test_an_option_is_never_named_by_a_dense_span_link():
    """Options have their own, stricter gates (DensePass.whole): a span link covering the
    whole option does not name it."""
    assert keys.option_concept("Asthma", [_m(0, 6, "C2", 0.99, "dense")], 0.8, set()) is None
    assert keys.option_concept("Asthma", [_m(0, 6, "C2", 1.0)], 0.8, set()) == "C2"


def _item(i, lang, text, pivot, options, passages=(), key="text"):
    return {"id": i, "lang": lang, "text": text, "pivot": pivot, "passage_ids": list(passages), "key_concepts": key,
            "options": [{"text": t, "pivot": p, "correct": c} for t, p, c in options]}


def test_dense_targets_are_texts_without_a_key_concept_and_options_of_items_string_cannot_answer():
    group = {"C1": "DISO", "C9": "GEOG"}
    items = [
        _item("a", "fr", "q-a", "p-a", [("o1", "e1", True), ("o2", None, False)]),  # answer unnamed: every option read
        _item("b", "fr", "q-b", None, [("o3", "e3", True), ("o4", "e4", False)]),   # answer named by string: none
        _item("c", "fr", "q-c", "p-c", [], passages=["x"]),                         # text has a key concept
        _item("d", "es", "q-d", "p-d", [("o5", "e5", True)], passages=["y"], key="answer"),  # a case keyed by its answer
        _item("e", "fr", "q-e", "p-e", [], passages=["z"]),                         # only a GEOG concept: read
    ]
    mentions = {("fr", "q-a"): [_m(0, 1, "C9", 1.0)], ("en", "p-a"): [], ("fr", "q-b"): [],
                ("fr", "q-c"): [], ("en", "p-c"): [_m(0, 1, "C1", 0.9)],
                ("es", "q-d"): [], ("en", "p-d"): [], ("en", "e5"): [], ("es", "o5"): [_m(0, 1, "C1", 0.5)],
                ("fr", "q-e"): [_m(0, 1, "C9", 1.0)], ("en", "p-e"): []}
    named = {("en", "e3"): "C1"}
    spans, options = keys.dense_targets(items, mentions, lambda c, t: named.get((c, t)), group, {"DISO"}, 0.8)
    assert spans == [("en", "e5"), ("es", "o5"), ("fr", "q-e"), ("en", "p-e")]
    assert options == [(("en", "e1"), ("fr", "o1")), (None, ("fr", "o2"))]


def test_the_passes_are_listed_once_string_first():
    from pydantic import ValidationError

    from schemas.config import GroundingConfig

    assert GroundingConfig(passes=["string", "dense"]).passes == ["string", "dense"]
    assert GroundingConfig(passes=["dense"]).passes == ["dense"]
    with pytest.raises(ValidationError, match="once"):
        GroundingConfig(passes=["string", "string"])
    with pytest.raises(ValidationError, match="first"):
        GroundingConfig(passes=["dense", "string"])
    with pytest.raises(ValidationError):
        GroundingConfig(passes=["fuzzy"])
