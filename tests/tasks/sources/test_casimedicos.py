"""The `casimedicos` source format: texts rebuilt from token-per-line files, cases paired across
languages by position (drops with their reasons), malformed lines as one located error, a
language added by configuration alone; then the real files in ../shared (skipped when absent).

The fixture cases are written for these tests (ir_datasets style: genuine-shaped lines in memory,
then malformed ones); they mimic CasiMedicos' layout only.
"""
from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from common.errors import InputError
from schemas.drops import Drop, drop_counts
from tasks.sources.adapters import ADAPTERS, READERS_WITH_DROPS, read_casimedicos_cases
from tasks.sources.adapters.casimedicos import read_sentences, split_cases
from tests.conftest import require_shared

ALL = {"en", "zh", "ja", "fr", "ru", "es"}


def tokens(sentence: str, label: str = "O") -> list[str]:
    """One sentence as token lines: labelled `O`, or as an argument (`B-`/`I-`, with a quality column)."""
    words = sentence.split()
    if label == "O":
        return [f"{w} O " for w in words]
    return [f"{w} {'B' if i == 0 else 'I'}-{label} HighQuality" for i, w in enumerate(words)]


def case_lines(specialty: str, heading: str, case: list[str], question: str, options: list[str], answer: str,
               explanation: list[str]) -> list[str]:
    sentences = [(f"QUESTION TYPE: {specialty}", "O"), (heading, "O")] + [(s, "Premise") for s in case] + [(question, "O")]
    sentences += [(o, "O") for o in options] + [(answer, "O")] + [(s, "Claim") for s in explanation]
    lines: list[str] = []
    for text, label in sentences:
        lines += tokens(text, label) + [""]
    return lines


OPTS = ["Exercise test.", "Coronary angiography.", "Chest X-ray.", "Echocardiogram.", "Holter monitoring."]
EN = [
    case_lines("CARDIOLOGY", "CLINICAL CASE:", ["A 60-year-old man reports chest pain on exertion."], "Which test comes first?",
               [f"{i}- {o}" for i, o in enumerate(OPTS, 1)], "CORRECT ANSWER: 1",
               ["Stable exertional chest pain is first studied with an exercise test.", "Angiography comes later."]),
    case_lines("NEPHROLOGY", "CLINICAL CASE:", ["A woman has edema and proteinuria."], "What is the likely lesion?",
               ["1- Minimal change.", "2- Membranous.", "3- Amyloid.", "4- IgA.", "5- Lupus."], "CORRECT ANSWER: 2",
               ["Membranous nephropathy is the usual lesion in adults."]),
    case_lines("PEDIATRICS", "CLINICAL CASE:", ["A boy has a barking cough."], "What is the diagnosis?",
               ["1- Croup.", "2- Asthma.", "3- Epiglottitis.", "4- Pertussis.", "5- Bronchiolitis."], "CORRECT ANSWER: 1",
               ["Barking cough and stridor are croup."]),
    case_lines("PSYCHIATRY", "CLINICAL CASE:", ["A man hears voices."], "Which drug?",
               ["1- Haloperidol.", "2- Lithium.", "3- Diazepam.", "4- Sertraline.", "5- Zolpidem."], "CORRECT ANSWER: 1", []),
]
ES = [
    case_lines("CARDIOLOGY", "CLINICAL CASE:", ["Un hombre de 60 años refiere dolor torácico de esfuerzo."],
               "¿Qué prueba se hace primero?",
               ["1- Prueba de esfuerzo.", "2- Coronariografía.", "3- Radiografía de tórax.", "4- Ecocardiograma.", "5- Holter."],
               "CORRECT ANSWER: 1", ["El dolor torácico estable se estudia primero con prueba de esfuerzo."]),
    case_lines("NEPHROLOGY", "CLINICAL CASE:", ["Una mujer tiene edemas y proteinuria."], "¿Cuál es la lesión probable?",
               ["1- Cambios mínimos.", "2- Membranosa.", "3- Amiloide.", "4- IgA.", "5- Lupus."], "CORRECT ANSWER: 2",
               ["La nefropatía membranosa es la lesión habitual en adultos."]),
    case_lines("PEDIATRICS", "CLINICAL CASE:", ["Un niño tiene tos perruna."], "¿Cuál es el diagnóstico?",
               ["1- Crup.", "2- Asma.", "3- Epiglotitis.", "4- Tos ferina.", "5- Bronquiolitis."], "CORRECT ANSWER: 1",
               ["La tos perruna y el estridor son crup."]),
    case_lines("PSYCHIATRY", "CLINICAL CASE:", ["Un hombre oye voces."], "¿Qué fármaco?",
               ["1- Haloperidol.", "2- Litio.", "3- Diazepam.", "4- Sertralina.", "5- Zolpidem."], "CORRECT ANSWER: 1",
               ["El haloperidol trata la psicosis."]),
]
FR = [
    # the French files' own markers: "CLINICAL CASE :", "BONNE RÉPONSE : 1", options "2 -" and "5-Holter."
    case_lines("CARDIOLOGIE", "CLINICAL CASE :", ["Un homme de 60 ans rapporte une douleur thoracique à l'effort."],
               "Quel examen faire en premier ?",
               ["1- Épreuve d'effort.", "2 - Coronarographie.", "3- Radiographie thoracique.", "4- Échocardiographie.", "5-Holter."],
               "BONNE RÉPONSE : 1", ["La douleur thoracique stable s'explore d'abord par une épreuve d'effort."]),
    case_lines("NÉPHROLOGIE", "CLINICAL CASE:", ["Une femme a des oedèmes et une protéinurie."], "Quelle est la lésion probable ?",
               ["1- Lésions minimes.", "2- Membraneuse.", "3- Amylose.", "4- IgA.", "5- Lupus."], "BONNE RÉPONSE : 3",
               ["La glomérulopathie extramembraneuse est la lésion habituelle."]),
    case_lines("PÉDIATRIE", "CLINICAL CASE:", ["Un garçon a une toux aboyante."], "Quel est le diagnostic ?",
               ["1- Laryngite.", "2- Asthme.", "3- Épiglottite.", "4- Coqueluche."], "BONNE RÉPONSE : 1",
               ["La toux aboyante et le stridor font la laryngite."]),
    case_lines("PSYCHIATRIE", "CLINICAL CASE:", ["Un homme entend des voix."], "Quel médicament ?",
               ["1- Halopéridol.", "2- Lithium.", "3- Diazépam.", "4- Sertraline.", "5- Zolpidem."], "BONNE RÉPONSE : 1",
               ["L'halopéridol traite la psychose."]),
]


def write_set(root: Path, sets: dict[str, list[list[str]]], split: str = "dev", crlf: str = "ES") -> Path:
    for folder, cases in sets.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        text = "\n".join(line for case in cases for line in case) + "\n"
        if folder == crlf:  # the real ES/train.tsv has CRLF line ends
            text = text.replace("\n", "\r\n")
        (root / folder / f"{split}.tsv").write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def casi(tmp_path) -> Path:
    return write_set(tmp_path / "casimedicos", {"EN": EN, "ES": ES, "FR": FR})


# ------------------------------------------------------------------------------------ texts and pairing


def test_texts_are_rebuilt_from_the_tokens(casi):
    read = read_casimedicos_cases(casi, ALL)
    first = read.items[0]
    assert first.id == "casimedicos-dev-001" and first.task == "evidence" and first.lang == "es"
    assert first.text == "Un hombre de 60 años refiere dolor torácico de esfuerzo. ¿Qué prueba se hace primero?"
    assert first.pivot == "A 60-year-old man reports chest pain on exertion. Which test comes first?"
    assert [(t.lang, t.text, t.status) for t in first.translations] == [
        ("fr", "Un homme de 60 ans rapporte une douleur thoracique à l'effort. Quel examen faire en premier ?", "human-translated")]
    # the gold passage: the English explanation, every sentence of it
    assert [p.text for p in first.passages] == [
        "Stable exertional chest pain is first studied with an exercise test. Angiography comes later."]
    assert first.passages[0].id.startswith("casimedicos-exp-")
    # its options too (what it asks about, for key_concepts = "answer"), English as their pivots
    assert [(o.text, o.pivot, o.correct) for o in first.options] == [
        ("Prueba de esfuerzo.", "Exercise test.", True), ("Coronariografía.", "Coronary angiography.", False),
        ("Radiografía de tórax.", "Chest X-ray.", False), ("Ecocardiograma.", "Echocardiogram.", False),
        ("Holter.", "Holter monitoring.", False)]


def test_unpaired_cases_are_dropped_with_their_reasons(casi):
    read = read_casimedicos_cases(casi, ALL)
    assert [i.id for i in read.items] == ["casimedicos-dev-001"]
    assert [(d.item_id, d.stage, d.code, d.detail) for d in read.drops] == [
        ("casimedicos-dev-002", "sources", "answer-disagrees", "en 2, es 2, fr 3"),
        ("casimedicos-dev-003", "sources", "options-disagree", "en 5, es 5, fr 4"),
        ("casimedicos-dev-004", "sources", "missing-text", "no explanation in en"),
    ]
    assert [d.reason for d in read.drops] == [
        "its languages disagree on the answer (en 2, es 2, fr 3)",
        "its languages disagree on the option count (en 5, es 5, fr 4)",
        "unpaired: no explanation in en",
    ]
    assert drop_counts(read.drops) == {"its languages disagree on the answer": 1, "its languages disagree on the option count": 1,
                                       "unpaired: no explanation in en": 1}


def test_a_build_without_french_pairs_spanish_and_english_only(casi):
    read = read_casimedicos_cases(casi, {"en", "es"})
    # French is not read: its disagreements drop nothing; case 4 has no English explanation
    assert [i.id for i in read.items] == ["casimedicos-dev-001", "casimedicos-dev-002", "casimedicos-dev-003"]
    assert all(i.translations == [] for i in read.items)
    assert [d.item_id for d in read.drops] == ["casimedicos-dev-004"]


def test_xqa_items_carry_the_options_with_english_pivots(casi):
    read = read_casimedicos_cases(casi, {"en", "es"}, task="xqa", passage="concept")
    assert [i.id for i in read.items] == [f"casimedicos-xqa-dev-00{n}" for n in (1, 2, 3, 4)]  # no explanation needed
    second = read.items[1]
    assert second.passages == [] and second.task == "xqa"
    assert [(o.text, o.pivot, o.correct) for o in second.options] == [
        ("Cambios mínimos.", "Minimal change.", False), ("Membranosa.", "Membranous.", True), ("Amiloide.", "Amyloid.", False),
        ("IgA.", "IgA.", False), ("Lupus.", "Lupus.", False)]


def test_an_option_runs_over_sentences_until_the_next_number():
    """Only the next number starts an option ("2 -", "3-Text" too); another sentence, even one
    starting "10-", continues the option before it; the answer line ends the options."""
    text = "\n".join(case_lines("X", "CLINICAL CASE:", ["A case."], "Which?",
                                ["1- One.", "2 - Two,", "10- 20 % of cases.", "3-Three.", "4- Four.", "5- Five."],
                                "CORRECT ANSWER : 3", ["Because."]))
    (case,) = split_cases(Path("EN/dev.tsv"), read_sentences(Path("EN/dev.tsv"), text))
    assert (case.line, case.query, case.options, case.answer, case.explanation) == (
        1, "A case. Which?", ["One.", "Two, 10- 20 % of cases.", "Three.", "Four.", "Five."], 3, "Because.")


def test_the_registry_reads_it_and_the_adapter_yields_the_items(casi):
    assert ADAPTERS["casimedicos"].options == ("task", "passage", "files", "native", "status")
    assert [i.id for i in ADAPTERS["casimedicos"](casi, ALL)] == ["casimedicos-dev-001"]
    assert READERS_WITH_DROPS["casimedicos"](casi, ALL).drops[0].code == "answer-disagrees"


def test_the_sources_stage_counts_the_drops(casi, tmp_path):
    import pyarrow.parquet as pq

    from tasks.sources.stage import load_sources, source_drops

    out = tmp_path / "sources"
    out.mkdir()
    got = load_sources([{"format": "casimedicos", "path": str(casi), "options": {}}], [], sorted(ALL), 100, out)
    rows = pq.read_table(got["shards"][0]).to_pylist()
    assert [(r["id"], r["lang"], r["translations"]) for r in rows] == [
        ("casimedicos-dev-001", "es", [{"lang": "fr", "text": FR_QUERY, "status": "human-translated"}])]
    assert [(d.item_id, d.code) for d in source_drops(got["shards"])] == [
        ("casimedicos-dev-002", "answer-disagrees"), ("casimedicos-dev-003", "options-disagree"), ("casimedicos-dev-004", "missing-text")]
    assert got["dropped"] == str(out / "source-drops.parquet")


FR_QUERY = "Un homme de 60 ans rapporte une douleur thoracique à l'effort. Quel examen faire en premier ?"


# ------------------------------------------------------------------------------------ malformed input


def located(exc: InputError, path: Path, line: int | None, field: str | None) -> None:
    assert (Path(exc.file).name, exc.line, exc.field) == (path.name, line, field), str(exc)


@pytest.mark.parametrize("bad, message", [
    ("lonely", "expected a token and its label (O, B-<type> or I-<type>) separated by spaces or a tab, found only 'lonely'"),
    ("lonely\t\t\t", "expected a token and its label (O, B-<type> or I-<type>) separated by spaces or a tab, found only 'lonely'"),
    ("word X-Claim HighQuality", "expected O, B-<type> or I-<type> after the token, got 'X-Claim'"),
    ("word\tNOUN\tO\t", "expected O, B-<type> or I-<type> after the token, got 'NOUN'"),  # a column inserted before LABEL
    ("word\u00a0O", "expected a token and its label (O, B-<type> or I-<type>) separated by spaces or a tab, "
                    "found only 'word\\xa0O'"),  # a no-break space is not a separator
])
def test_a_malformed_line_is_one_located_error(bad, message):
    lines = "\n".join(EN[0]).split("\n")
    lines[7] = bad  # inside the case's first sentence
    with pytest.raises(InputError) as exc:
        read_sentences(Path("EN/dev.tsv"), "\n".join(lines))
    assert (exc.value.line, exc.value.field, exc.value.message) == (8, "label", message)
    assert str(exc.value) == f"EN/dev.tsv:8: field 'label': {message}"


@pytest.mark.parametrize("bad, first", [("\tO\tHighQuality\t", "'\\t' before 'O'"), (" O", "' ' before 'O'")])
def test_a_line_without_its_token_is_one_located_error(bad, first):
    """An empty first column would shift every field: the label read as the token."""
    lines = "\n".join(EN[0]).split("\n")
    lines[7] = bad
    with pytest.raises(InputError) as exc:
        read_sentences(Path("XX/dev.tsv"), "\n".join(lines))
    assert str(exc.value) == f"XX/dev.tsv:8: field 'token': expected the token first, found {first} (an empty token column)"


def publisher_shapes(lines: list[str], shape: str) -> list[str]:
    """The same token lines as another publisher ships them: `tabs` (TOKEN<TAB>LABEL<TAB>QUALITY
    <TAB>FLAG, the quality and the correction flag usually empty; blank lines stay blank), `mixed`
    (every third line space-separated, the others tab-separated, runs of both), `columns` (more
    columns after the label)."""
    out = []
    for i, line in enumerate(lines):
        fields = line.split()
        if not fields:
            out.append("\t\t\t" if shape == "tabs" and i % 2 else "")
        elif shape == "tabs":
            token, label, *rest = fields
            flag = "corrected" if i % 7 == 0 else ""
            out.append("\t".join([token, label, rest[0] if rest else "", flag]))
        elif shape == "mixed":
            out.append(" ".join(fields) if i % 3 == 0 else " \t ".join(fields) + "\t")
        else:
            out.append(" ".join(fields + ["_"] * (len(fields) < 3) + ["NN", "1", "x"]))
    return out


@pytest.mark.parametrize("shape", ["tabs", "mixed", "columns"])
@pytest.mark.parametrize("ends", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_what_publishers_ship_reads_as_the_space_separated_file(tmp_path, shape, ends, bom):
    """Tabs or spaces, a fourth column, more columns, CRLF or CR line ends and a BOM give the
    very items the space-separated LF file gives."""
    plain = read_casimedicos_cases(write_set(tmp_path / "plain", {"EN": EN, "ES": ES, "FR": FR}, crlf=""), ALL)
    shipped = {"EN": [publisher_shapes(c, shape) for c in EN], "ES": [publisher_shapes(c, shape) for c in ES], "FR": FR}
    root = write_set(tmp_path / "shipped", shipped, crlf="")
    for f in (root / "EN" / "dev.tsv", root / "ES" / "dev.tsv"):
        f.write_bytes((bom + f.read_text(encoding="utf-8").replace("\n", ends)).encode("utf-8"))
    got = read_casimedicos_cases(root, ALL)
    assert [i.model_dump() for i in got.items] == [i.model_dump() for i in plain.items]
    assert got.drops == plain.drops and (len(got.items), len(got.drops)) == (1, 3)


def test_a_tab_separated_line_names_its_line_in_a_crlf_file_with_a_bom():
    text = "\ufeff" + "\r\n".join(publisher_shapes(EN[0], "tabs")).replace("\tB-Premise\t", "\tB-premise?\t", 1)
    bad = next(n for n, line in enumerate(text.split("\r\n"), start=1) if "B-premise?" in line)
    with pytest.raises(InputError) as exc:
        read_sentences(Path("XX/dev.tsv"), text[1:])  # load_text drops the BOM
    assert str(exc.value) == f"XX/dev.tsv:{bad}: field 'label': expected O, B-<type> or I-<type> after the token, got 'B-premise?'"
    assert bad == 8


def test_text_before_the_first_case_is_an_error():
    path = Path("ES/test.tsv")
    with pytest.raises(InputError) as exc:
        split_cases(path, read_sentences(path, "Hola O\n\n" + "\n".join(ES[0])))
    assert str(exc.value) == "ES/test.tsv:1: field 'QUESTION TYPE': expected a case to start with 'QUESTION TYPE:', found 'Hola'"


def test_a_missing_case_is_an_error_naming_the_file(tmp_path):
    root = write_set(tmp_path / "c", {"EN": EN, "ES": ES, "FR": FR[:3]})
    with pytest.raises(InputError) as exc:
        read_casimedicos_cases(root, ALL)
    located(exc.value, root / "FR" / "dev.tsv", None, "QUESTION TYPE")
    assert "3 cases, but EN/dev.tsv has 4: cases pair by position" in str(exc.value)


def test_a_malformed_line_in_a_translation_names_its_file_and_line(tmp_path):
    bad = [list(c) for c in FR]
    bad[1][3] = "Une"  # the second case's first case token, without its label
    root = write_set(tmp_path / "c", {"EN": EN, "ES": ES, "FR": bad})
    line = len(FR[0]) + 4
    with pytest.raises(InputError) as exc:
        read_casimedicos_cases(root, ALL)
    located(exc.value, root / "FR" / "dev.tsv", line, "label")


@pytest.mark.parametrize("options, field, needle", [
    ({"files": {"es": "ES"}}, "options.files", "no folder for 'en'"),
    ({"files": {"en": "EN"}}, "options.files", "no folder for 'es'"),
    ({"files": ["EN"]}, "options.files", "expected a table of language code = folder"),
    ({"status": {"de": "human-translated"}}, "options.status.de", "'de' is not a translation this source reads"),
    ({"status": {"fr": "by hand"}}, "options.status.fr", "expected one of"),
    ({"native": "de"}, "options.files", "no folder for 'de' (the native language)"),
    ({"native": "fr", "files": {"en": "EN", "fr": "FR"}, "languages": {"en", "es"}}, "options.native",
     "language 'fr' is not a build language"),
    ({"task": "cd"}, "options.task", "expected one of 'xqa', 'evidence'"),
    ({"passage": "answer"}, "options.passage", "expected one of 'explanation', 'concept'"),
    ({"files": {"en": "EN", "es": "ES", "fr": "FRENCH"}}, None, "not found (the 'fr' folder named in options.files)"),
])
def test_bad_options_are_located_errors(casi, options, field, needle):
    options = dict(options)
    languages = options.pop("languages", ALL)
    with pytest.raises(InputError) as exc:
        read_casimedicos_cases(casi, languages, **options)
    assert exc.value.field == field and needle in exc.value.message, str(exc.value)


# ------------------------------------------------------------------------------------ a seventh language by configuration


IT = [case_lines("CARDIOLOGIA", "CLINICAL CASE:", ["Un uomo di 60 anni riferisce dolore toracico da sforzo."],
                 "Quale esame si fa per primo?",
                 ["1- Test da sforzo.", "2- Coronarografia.", "3- Radiografia del torace.", "4- Ecocardiogramma.", "5- Holter."],
                 "RISPOSTA CORRETTA: 1", ["Il dolore toracico stabile si studia prima con il test da sforzo."])]


def test_a_seventh_language_is_a_config_entry(tmp_path):
    """A made-up language `xx` (its files in XX/, the Italian-like markers of another translation)
    joins by the source's `files` entry and the build's `languages`: no code names it."""
    from schemas.config import load_config
    from tasks.sources.stage import load_sources
    from tasks.translation.memory import TranslationMemory
    from tasks.translation.stage import candidate

    import pyarrow.parquet as pq

    root = write_set(tmp_path / "casimedicos", {"EN": EN[:1], "ES": ES[:1], "XX": IT})
    registry = (Path(__file__).parents[3] / "configs" / "languages.toml").read_text(encoding="utf-8")
    registry += ('\n[languages.xx]\nname = "Made-up"\nscripts = ["Latin"]\ndetector_codes = ["it"]\numls_lat = "XXX"\n'
                 'grounder = "quickumls"\nspacy_lang = "it"\n')
    (tmp_path / "languages.toml").write_text(registry, encoding="utf-8")
    config = tmp_path / "build.toml"
    config.write_text(f'''version = "0.0.1"
seed = 1
languages = ["en", "es", "xx"]
registry = "languages.toml"
[vocabulary]
path = "vocab"
[[sources]]
format = "casimedicos"
path = "{root}"
options = {{ files = {{ en = "EN", es = "ES", xx = "XX" }}, status = {{ xx = "machine-translated and verified" }} }}
[tasks.xqa]
quota = 1
[tasks.evidence]
quota = 1
[tasks.cd]
quota = 1
''', encoding="utf-8")
    loaded = load_config(config)
    assert "xx" in loaded.registry and loaded.config.sources[0].format == "casimedicos"
    src = loaded.config.sources[0]
    out = tmp_path / "sources"
    out.mkdir()
    got = load_sources([{"format": src.format, "path": src.path, "options": src.options}], [], loaded.config.languages, 10, out)
    (item,) = pq.read_table(got["shards"][0]).to_pylist()
    assert item["translations"] == [{"lang": "xx", "text": "Un uomo di 60 anni riferisce dolore toracico da sforzo. "
                                     "Quale esame si fa per primo?", "status": "machine-translated and verified"}]
    # the realize stage offers it in xx, as the source's translation (before any memory)
    said = candidate(item, "xx", TranslationMemory([]))
    assert (said.text, said.provenance, said.source_lang) == (item["translations"][0]["text"], "machine-translated and verified", "es")


# ------------------------------------------------------------------------------------ realization and allocation


def test_the_source_translation_is_realized_before_the_memory():
    from tasks.translation.memory import TranslationMemory
    from tasks.translation.stage import candidate

    item = {"id": "c-1", "lang": "es", "text": "Un hombre con fiebre.", "pivot": "A man with fever.",
            "translations": [{"lang": "fr", "text": "Un homme avec de la fièvre.", "status": "human-translated"}]}
    tm = TranslationMemory([])
    assert candidate(item, "fr", tm)[:4] == ("Un homme avec de la fièvre.", "human-translated", "Un hombre con fiebre.", "es")
    assert candidate(item, "es", tm)[:2] == ("Un hombre con fiebre.", "native")
    assert candidate(item, "en", tm)[:2] == ("A man with fever.", "human-translated")
    assert candidate(item, "ru", tm).missing == "no-translation"


def test_an_item_in_two_languages_of_its_source_goes_to_the_least_filled():
    from tasks.allocation.allocator import Allocator, Candidate, Realization

    def cand(i: int, cuis: tuple[str, ...], own=("fr",)):
        reals = {l: Realization(f"text {i} {l} " + "x" * i, "native" if l == "es" else "human-translated") for l in ("en", "es", "fr")}
        return Candidate(f"c-{i}", "evidence", "es", f"texto número {i} " + "y" * (3 * i), f"pivot number {i} " + "z" * (5 * i),
                         cuis, reals, own)

    alloc = Allocator({("evidence", l): 10 for l in ("en", "es", "fr")}, ["en", "fr", "es"], {"en": 5, "es": 5, "fr": 5},
                      0.7, 128, 7)
    # unowned concepts: fr (first in the build's order) then es, then the least filled
    assert alloc.placement(cand(1, ("C0000001",)))[0] == "fr"
    alloc.filled[("evidence", "fr")] = 1
    assert alloc.placement(cand(2, ("C0000002",)))[0] == "es"
    # an owned concept decides: the owner's cell
    alloc.owner["C0000003"] = ("evidence", "fr")
    alloc.filled[("evidence", "es")] = 5
    assert alloc.placement(cand(3, ("C0000003",)))[0] == "fr"
    # without the source's second language the native one is kept, however full (today's rule)
    assert alloc.placement(cand(4, ("C0000004",), own=()))[0] == "es"


# ------------------------------------------------------------------------------------ real data (../shared)


@pytest.mark.shared
def test_real_casimedicos_pairs():
    root = require_shared("qa", "casimedicos")
    read = read_casimedicos_cases(root, ALL)
    assert len(read.items) == REAL_ITEMS
    assert sorted((d.item_id, d.code, d.detail) for d in read.drops) == REAL_DROPS
    assert all(i.lang == "es" and i.pivot and [t.lang for t in i.translations] == ["fr"] for i in read.items)
    # every case pairs: the French markers ("BONNE RÉPONSE :", "RÉPONSE CORRECTE :", "CORRECT ANSWER :") are read
    assert Counter(i.id.split("-")[1] for i in read.items) == {"train": 381, "dev": 55, "test": 117}
    assert len({i.id for i in read.items}) == len(read.items)
    xqa = read_casimedicos_cases(root, ALL, task="xqa", passage="concept")
    assert len(xqa.items) == REAL_XQA_ITEMS and all(sum(o.correct for o in i.options) == 1 for i in xqa.items)


REAL_ITEMS = 553  # the files hold 553 cases (the dataset card says 558)
REAL_DROPS: list = []  # every case's languages agree on its options and answer
REAL_XQA_ITEMS = 553


def test_two_folders_of_one_format_need_an_id_prefix(casi, tmp_path):
    """A second folder of cases in the same format gives the same ids: the stage stops with one
    line naming the way out, and with an `id_prefix` on one source both load, its drops
    prefixed too."""
    import pyarrow.parquet as pq

    from tasks.sources.stage import load_sources, source_drops

    second = tmp_path / "more-cases"
    shutil.copytree(casi, second)
    out = tmp_path / "sources"
    out.mkdir()
    twice = [{"format": "casimedicos", "path": str(casi), "options": {}}, {"format": "casimedicos", "path": str(second), "options": {}}]
    with pytest.raises(InputError) as err:
        load_sources(twice, [], sorted(ALL), 100, out)
    assert str(err.value) == (f"{second}: field 'id': duplicate item id 'casimedicos-dev-001' (first in {casi.name}; "
                              "two sources of one format need an `id_prefix` each but one)")
    twice[1]["id_prefix"] = "more"
    got = load_sources(twice, [], sorted(ALL), 100, out)
    assert [r["id"] for r in pq.read_table(got["shards"][0]).to_pylist()] == ["casimedicos-dev-001", "more-casimedicos-dev-001"]
    assert sorted(d.item_id for d in source_drops(got["shards"]) if d.code == "answer-disagrees") == [
        "casimedicos-dev-002", "more-casimedicos-dev-002"]


def test_an_id_prefix_is_lowercase_letters_and_digits():
    import pydantic

    from schemas.config import SourceConfig

    assert SourceConfig.model_validate({"format": "casimedicos", "path": "x", "id_prefix": "more2"}).id_prefix == "more2"
    for bad in ("More", "more-cases", ""):
        with pytest.raises(pydantic.ValidationError):
            SourceConfig.model_validate({"format": "casimedicos", "path": "x", "id_prefix": bad})


def test_an_id_repeated_within_one_source_names_no_id_prefix(tmp_path):
    """The id_prefix hint is for two sources; one file repeating an id is that file's error."""
    from tasks.sources.stage import load_sources

    line = (Path(__file__).parents[3] / "sources" / "sample" / "xqa.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "x.jsonl").write_text(f"{line}\n{line}\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    with pytest.raises(InputError) as err:
        load_sources([{"format": "sample-jsonl", "path": str(tmp_path / "x.jsonl"), "options": {}}], [], sorted(ALL), 10, tmp_path / "out")
    assert str(err.value) == f"{tmp_path / 'x.jsonl'}: field 'id': duplicate item id 'xqa-en-001' (first in x.jsonl)"
