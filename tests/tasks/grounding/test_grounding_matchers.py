"""tasks/grounding/grounder.py beyond the plain DictionaryMatcher: normalisation with offsets, the CJK
matcher (dakuten, kana, Sudachi forms, segmentation), the token matcher (stems, reordering,
acronyms), negation, abbreviation handling and the Grounder facade on a tiny vocabulary.
(test_grounding_units.py keeps DictionaryMatcher and expand_abbreviations' original contract.)"""
from __future__ import annotations

import pyarrow as pa
import pytest

from schemas.config import Language
from tasks.grounding.abbreviations import expand_abbreviations
from tasks.grounding.grounder import Grounder
from tasks.grounding.matchers import CJKMatcher, Term, TermMatcher, TermRules, cjk_fold, light_stem
from tasks.grounding.negation import negated
from tasks.grounding.normalize import acronym_fits, fold, fold_term, is_acronym
from tasks.grounding.params import LANGUAGE_DEFAULTS, REGISTRY_FIELDS, params_for
from tasks.grounding.params import Match
from tasks.grounding.spans import Tier
from common.parquet import write_parquet


def T(text: str, cui: str, pref: bool = True, source: int = 0) -> Term:
    return Term(text, cui, (not pref, source, cui))


def spans(text: str, matches: list[Match]) -> list[tuple[str, str]]:
    for m in matches:
        assert text[m.start:m.end] == m.text
    return [(m.text, m.cui) for m in matches]


# ----------------------------------------------------------------------------- normalisation
def test_fold_keeps_offsets_into_the_original():
    text = "Crohn's disease – β-thalassemia, Œdème"
    norm, origin = fold(text)
    assert norm == "crohn disease beta thalassemia, oedeme"
    assert len(origin) == len(norm)
    i = norm.index("thalassemia")
    assert text[origin[i]:origin[i + len("thalassemia") - 1] + 1] == "thalassemia"
    assert text[origin[norm.index("oedeme")]] == "Œ"


def test_fold_cyrillic_keeps_letters_but_folds_yo():
    assert fold_term("Отёк лёгких", latin=False) == "отек легких"


def test_cjk_fold_composes_half_width_voiced_kana_and_maps_groups():
    norm, starts, ends = cjk_fold("ｸﾞﾙｺｰｽ Ａ")
    assert norm == "グルコースa"
    assert (starts[0], ends[0]) == (0, 2)  # グ came from ｸ + ﾞ
    assert cjk_fold("ムクミ", kana=True)[0] == "むくみ"


def test_light_stem_inflection_only_and_snowball_keeps_itis_apart():
    assert light_stem("tumors", "en") == "tumor" and light_stem("tumours", "en") == "tumor"
    assert light_stem("haemorrhages", "en") == "hemorrhage"
    assert light_stem("pleuraux", "fr") == "pleural" and light_stem("enfermedades", "es") == "enfermedad"
    assert light_stem("hepatic", "en", snowball=True) != light_stem("hepatitis", "en", snowball=True)
    assert light_stem("hypertensive", "en", snowball=True) == light_stem("hypertension", "en", snowball=True)


def test_acronym_fits_and_is_acronym():
    assert acronym_fits("COPD", "chronic obstructive pulmonary disease")
    assert acronym_fits("A-T", "ataxia-telangiectasia")
    assert not acronym_fits("WT1", "hereditary Wilms' tumor")
    assert not acronym_fits("DM", "myotonic dystrophy")  # D must come before M
    assert is_acronym("COPD") and is_acronym("WT1") and not is_acronym("Ataxia") and not is_acronym("A")


# ----------------------------------------------------------------------------- CJK matcher
def test_cjk_matcher_fixes_half_width_dakuten():
    m = CJKMatcher([T("グルコース", "C_GLC"), T("ペプチド", "C_PEP")], "ja", segment=False)
    text = "ｸﾞﾙｺｰｽとﾍﾟﾌﾟﾁﾄﾞ"
    assert spans(text, m.match(text)) == [("ｸﾞﾙｺｰｽ", "C_GLC"), ("ﾍﾟﾌﾟﾁﾄﾞ", "C_PEP")]


def test_cjk_matcher_japanese_kana_and_okurigana_variants():
    m = CJKMatcher([T("むくみ", "C_EDEMA"), T("引き揚げ", "C_LIFT")], "ja")
    assert spans("ムクミあり", m.match("ムクミあり")) == [("ムクミ", "C_EDEMA")]
    got = m.match("引揚げた")
    assert spans("引揚げた", got) == [("引揚げ", "C_LIFT")] and got[0].score == 0.95  # Sudachi normalised form


def test_cjk_matcher_zh_word_boundaries():
    m = CJKMatcher([T("肺炎", "C_PN"), T("高血压", "C_HTN"), T("炎链", "C_BAD")], "zh")
    assert spans("高血压病史", m.match("高血压病史")) == [("高血压", "C_HTN")]  # disease suffix 病 allowed
    assert "C_BAD" not in {x.cui for x in m.match("肺炎链球菌")}  # never across a word boundary
    plain = CJKMatcher([T("炎链", "C_BAD")], "zh", segment=False)
    assert [x.cui for x in plain.match("肺炎链球菌")] == ["C_BAD"]


# ----------------------------------------------------------------------------- token matcher
@pytest.fixture(scope="module")
def en_terms():
    return [T("rectum cancer", "C_RC"), T("tumor", "C_TUM"), T("heart failure", "C_HF"),
            T("COPD", "C_COPD", False), T("chronic obstructive pulmonary disease", "C_COPD"),
            T("WT1", "C_WILMS", False), T("Wilms tumor", "C_WILMS"),
            T("AS", "C_AS1", False), T("aortic stenosis", "C_AS1"), T("AS", "C_AS2", False),
            T("Angelman syndrome", "C_AS2"), T("Lesch-Nyhan syndrome", "C_LN"), T("hepatitis", "C_HEP"),
            T("Prader-Willi syndrome", "C_PWS")]


@pytest.fixture(scope="module")
def en_matcher(en_terms):
    return TermMatcher(en_terms, True, "en", {"of", "the", "and", "in", "a"}, TermRules(stemmer="snowball"))


def test_exact_stemmed_and_reordered(en_matcher):
    text = "Tumours of the rectum: cancer of the rectum with heart failures."
    got = spans(text, en_matcher.match(text))
    assert ("Tumours", "C_TUM") in got and ("cancer of the rectum", "C_RC") in got and ("heart failures", "C_HF") in got
    assert "C_HEP" not in {c for _t, c in spans("hepatic", en_matcher.match("hepatic"))}


def test_no_match_across_brackets_or_coordinators(en_matcher):
    text = "Angelman syndrome (AS) and Prader-Willi syndrome"
    got = spans(text, en_matcher.match(text))
    assert got == [("Angelman syndrome", "C_AS2"), ("Prader-Willi syndrome", "C_PWS")]  # AS: ambiguous acronym


def test_acronyms_case_sensitive_unambiguous_fitting_and_not_genes(en_matcher):
    assert spans("COPD worsened", en_matcher.match("COPD worsened")) == [("COPD", "C_COPD")]
    assert en_matcher.match("copd worsened") == []
    assert en_matcher.match("the WT1 was") == []  # WT1 does not abbreviate Wilms tumor


def test_eponym_without_its_head_word(en_matcher):
    text = "Lesch-Nyhan patients"
    assert spans(text, en_matcher.match(text)) == [("Lesch-Nyhan", "C_LN")]
    assert en_matcher.match("lesch-nyhan patients") == []  # a name keeps its capitals


def test_each_run_of_words_takes_the_first_rule_that_matches_it_then_the_acronyms():
    """One candidate a run: exact before stemmed before an eponym before a bag of stems (the
    rule decides the score and the Tier, which select_matches ranks before the score); the
    runs in text order, then the acronyms."""
    m = TermMatcher([T("rectum cancer", "C_EXACT"), T("cancer rectum", "C_BAG"), T("heart failure", "C_HF"),
                     T("Lesch-Nyhan syndrome", "C_LN"), T("COPD", "C_COPD", False),
                     T("chronic obstructive pulmonary disease", "C_COPD")],
                    True, "en", {"of", "the", "and", "in", "a"}, TermRules(stemmer="snowball"))
    text = "COPD, rectum cancer, heart failures, cancer of the rectum, Lesch-Nyhan."

    def at(s: str) -> tuple[int, int]:
        return text.index(s), text.index(s) + len(s)

    got = m.candidates(text)
    assert got == [(*at("rectum cancer"), "C_EXACT", 1.0, Tier.EXACT),  # the bag and the stems would say C_BAG / 0.95
                   (*at("heart failures"), "C_HF", 0.95, Tier.STEMMED),
                   (*at("cancer of the rectum"), "C_BAG", 0.9, Tier.VARIANT),
                   (*at("Lesch-Nyhan"), "C_LN", 0.85, Tier.VARIANT),
                   (*at("COPD"), "C_COPD", 1.0, Tier.EXACT)]
    assert [type(c[4]) for c in got] == [Tier] * 5
    assert [int(t) for t in (Tier.EXACT, Tier.STEMMED, Tier.VARIANT, Tier.APPROXIMATE)] == [0, 1, 2, 3]


# ----------------------------------------------------------------------------- negation
def test_negation_cues():
    def neg(text, sub, lang):
        i = text.index(sub)
        return negated(text, Match(i, i + len(sub), sub, "C", 1.0), lang)

    assert neg("There was no fever or cough.", "cough", "en")
    assert not neg("No rash. Fever persisted.", "Fever", "en")  # a new clause
    assert neg("患者无发热、咳嗽。", "咳嗽", "zh")
    assert not neg("无明显诱因出现发热。", "发热", "zh") and not neg("下肢无力、麻木", "麻木", "zh")
    assert neg("浮腫は認めない。", "浮腫", "ja") and not neg("浮腫を認める。", "浮腫", "ja")
    assert neg("sans fièvre", "fièvre", "fr") and neg("sin fiebre", "fiebre", "es")


# ----------------------------------------------------------------------------- abbreviations
def test_expand_abbreviations_min_cover():
    text = "Papillon-Lefevre syndrome (PLS) and PLS"
    part = Match(17, 25, "syndrome", "C_SYN", 1.0)
    pairs = [(27, 30, 0, 25), (36, 39, 0, 25)]
    assert len(expand_abbreviations(text, [part], pairs)) == 3  # default: old behaviour
    assert expand_abbreviations(text, [part], pairs, min_cover=0.5) == [part]


# ----------------------------------------------------------------------------- facade
def _lang(code: str, **kw) -> Language:
    base = {"en": dict(name="English", scripts=["Latin"], detector_codes=["en"], umls_lat="ENG", grounder="quickumls",
                       spacy_lang="en", stopwords="en", preferred_sources=["DO", "HPO"]),
            "zh": dict(name="Chinese", scripts=["Han"], detector_codes=["zh-cn"], umls_lat="CHI", grounder="dictionary")}
    return Language(code=code, **{**base[code], **kw})


@pytest.fixture(scope="module")
def atoms(tmp_path_factory):
    rows = [("C0000001", "en", "chronic obstructive pulmonary disease", True, "DO", "PT"),
            ("C0000002", "en", "glucose-6-phosphate dehydrogenase deficiency", True, "DO", "PT"),
            ("C0000003", "en", "myotonic dystrophy type 1", True, "DO", "PT"),
            ("C0000004", "en", "disease", True, "DO", "PT"),
            ("C0000005", "en", "hypertension", True, "HPO", "PT"),
            ("C0000006", "en", "hypertension", True, "DO", "PT"),
            ("C0000007", "en", "Huntington disease", True, "DO", "PT"),
            ("C0000011", "zh", "发热", True, "HPOCHI", "PT"),
            ("C0000012", "zh", "咳嗽", True, "HPOCHI", "PT")]
    cols = list(zip(*rows))
    table = pa.table({"cui": list(cols[0]), "lang": list(cols[1]), "str": list(cols[2]), "ispref": list(cols[3]),
                      "sab": list(cols[4]), "tty": list(cols[5])})
    path = tmp_path_factory.mktemp("vocab") / "atoms.parquet"
    write_parquet(table, path)
    return path


@pytest.fixture(scope="module")
def en_grounder(atoms, tmp_path_factory):
    return Grounder(atoms, _lang("en"), tmp_path_factory.mktemp("cache"))


def test_grounder_abbreviations_spelled_out_and_long_forms_linked(en_grounder):
    text = ("Chronic obstructive pulmonary disease (COPD) and glucose-6-phosphate dehydrogenase (G6PD) deficiency; "
            "G6PD deficiency and COPD. Patients with myotonic dystrophy (MYD) and hypertensions.")
    got = spans(text, en_grounder.ground(text))
    assert ("Chronic obstructive pulmonary disease", "C0000001") in got and ("COPD", "C0000001") in got
    assert ("glucose-6-phosphate dehydrogenase (G6PD) deficiency", "C0000002") in got
    assert ("G6PD deficiency", "C0000002") in got
    assert ("myotonic dystrophy", "C0000003") in got  # nearest vocabulary string, TF-IDF cosine
    assert ("hypertensions", "C0000006") in got  # tie between CUIs: the registry's preferred source (DO)
    assert "C0000004" not in {c for _t, c in got}  # bare "disease" is generic


def test_grounder_eponym_and_negation_defaults(en_grounder, atoms, tmp_path):
    assert spans("Huntington patients", en_grounder.ground("Huntington patients")) == [("Huntington", "C0000007")]
    assert en_grounder.params.negation is False
    zh = Grounder(atoms, _lang("zh"), tmp_path)
    assert spans("无发热，有咳嗽", zh.ground("无发热，有咳嗽")) == [("咳嗽", "C0000012")]
    assert [m.text for m in zh.ground("无发热，有咳嗽", include_negated=True)] == ["发热", "咳嗽"]


def test_params_for_defaults_registry_fields_and_explicit_arguments():
    en = _lang("en")
    assert params_for(en) == LANGUAGE_DEFAULTS["en"]
    assert params_for(en, threshold=0.7, window=4).threshold == 0.7
    assert params_for(en, window=4).window == 4

    # a registry entry's optional fields override the language's defaults; explicit arguments win
    tuned = en.model_copy(update={"quickumls_threshold": 0.9, "quickumls_window": 3, "ground_negation": True,
                                  "quickumls_similarity": "cosine", "ground_abbreviations": False})
    p = params_for(tuned)
    assert (p.threshold, p.window, p.negation, p.similarity, p.abbreviations) == (0.9, 3, True, "cosine", False)
    assert params_for(tuned, threshold=0.75).threshold == 0.75
    # every field the mapping names is one the registry's model has (a misspelt one is an error)
    assert set(REGISTRY_FIELDS) <= set(type(en).model_fields)
