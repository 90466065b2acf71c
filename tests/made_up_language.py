"""The made-up Latin-script language `xq` (issue 45), shared by tests/flows/test_made_up_language.py
(added to the sample config) and benchmarks/seventh_language_real.py (added to the real-data
config): its registry entry, its CasiMedicos-format cases and how their token files are written.
Its words are German (tests/data/lang-de, written for these tests), so its names share few tokens
with the English entries."""
from __future__ import annotations

from tests.conftest import ROOT

DE = ROOT / "tests" / "data" / "lang-de"
CODE, LAT, SAB = "xq", "XQX", "MMBXQ"
REGISTRY_ENTRY = f"""
[languages.{CODE}]
name = "Made-up Latin"
scripts = ["Latin"]
min_script_share = 0.8
detector_codes = ["de"]             # what the language detector answers for its (German) words
umls_lat = "{LAT}"
preferred_sources = ["{SAB}"]
shingle_n = 5
grounder = "quickumls"
spacy_lang = "de"
stopwords = "de"
"""
MRSAB = f"||{SAB}|{SAB}|Made-up test terms|{SAB}||||||||0||||PT||{LAT}|UTF-8|Y|Y|Made-up test terms||\n"

# two clinical cases, English and the made-up language, in CasiMedicos' layout
CASES = {
    "EN": [("CARDIOLOGY", "A 70-year-old man faints; his pulse is slow and regular.",
            "Which rhythm disorder explains it?", ["Atrioventricular block.", "Atrial flutter.", "Sinus tachycardia.",
                                                   "Ventricular ectopy."], 1,
            "A slow regular pulse with fainting points to atrioventricular block."),
           ("GASTROENTEROLOGY", "A woman has severe upper abdominal pain radiating to the back after heavy drinking.",
            "Which diagnosis is most likely?", ["Acute pancreatitis.", "Appendicitis.", "Cholecystitis.", "Gastritis."], 1,
            "Epigastric pain radiating to the back after alcohol suggests acute pancreatitis.")],
    CODE.upper(): [("KARDIOLOGIE", "Ein 70-jähriger Mann wird ohnmächtig; sein Puls ist langsam und regelmäßig.",
                    "Welche Rhythmusstörung erklärt das?", ["Atrioventrikulärer Block.", "Vorhofflattern.",
                                                           "Sinustachykardie.", "Ventrikuläre Extrasystolen."], 1, ""),
                   ("GASTROENTEROLOGIE", "Eine Frau hat nach starkem Alkoholkonsum heftige Oberbauchschmerzen, die in den "
                                         "Rücken ausstrahlen.",
                    "Welche Diagnose ist am wahrscheinlichsten?", ["Akute Bauchspeicheldrüsenentzündung.",
                                                                   "Blinddarmentzündung.", "Gallenblasenentzündung.",
                                                                   "Magenschleimhautentzündung."], 1, "")],
}


def token_file(cases: list[tuple], tabs: bool) -> bytes:
    """CasiMedicos-like token lines. `tabs`: TOKEN<TAB>LABEL<TAB>QUALITY<TAB>FLAG (quality and
    flag mostly empty, every fifth line space-separated), a BOM and CRLF; else one space."""
    sentences = []
    for specialty, case, question, options, answer, explanation in cases:
        sentences += [f"QUESTION TYPE: {specialty}", "CLINICAL CASE:", case, question]
        sentences += [f"{i}- {o}" for i, o in enumerate(options, 1)] + [f"CORRECT ANSWER: {answer}"]
        sentences += [explanation] if explanation else []
    lines, n = [], 0
    for sentence in sentences:
        for k, word in enumerate(sentence.split()):
            n += 1
            label = "O" if k else "B-Premise"
            if not tabs:
                lines.append(f"{word} {label} HighQuality")
            elif n % 5 == 0:
                lines.append(f"{word} {label}")
            else:
                lines.append("\t".join([word, label, "HighQuality" if n % 3 == 0 else "", "x" if n % 7 == 0 else ""]))
        lines.append("\t\t\t" if tabs else "")
    text = "\n".join(lines) + "\n"
    return ("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8") if tabs else text.encode("utf-8")
