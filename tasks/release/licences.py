"""What each source behind a release is licensed under, for the dataset card.

A small registry in code (not read from files at build time): source formats whose origin is
fixed (one public dataset each) and vocabulary sources (SABs) have a known licence; formats
that can hold anyone's data (sample-jsonl, mmedbench-jsonl, beir), background passages and
translation memories take the `licence` their config entry states, or are "unknown".
Licence ids are the Hugging Face Hub's (https://hf.co/docs/hub/repositories-licenses).
Where a source states no licence the card says so: "none stated: research use only".
"""
from __future__ import annotations

import re
from typing import NamedTuple


class Licence(NamedTuple):
    ids: tuple[str, ...]  # Hub licence ids ("other" for a licence the Hub does not list, "unknown")
    text: str  # what the card says
    url: str = ""


RESEARCH_ONLY = "none stated: research use only, not for redistribution"
UNKNOWN = Licence(("unknown",), "not stated in the build configuration")

# question sources whose format is one public dataset (docs/sources.md; ../shared/data/*/SOURCE.md)
FORMAT_LICENCES: dict[str, Licence] = {
    "pubmedqa": Licence(("mit",), "MIT", "https://github.com/pubmedqa/pubmedqa"),
    "frenchmedmcqa": Licence(("apache-2.0",), "Apache-2.0", "https://github.com/qanastek/FrenchMedMCQA"),
    "igakuqa": Licence(("unknown",), RESEARCH_ONLY, "https://github.com/jungokasai/IgakuQA"),
    "rumeddanet": Licence(("unknown",), RESEARCH_ONLY, "https://github.com/pavel-blinov/RuMedBench"),
    "cnmleqa": Licence(("unknown",), RESEARCH_ONLY, "https://github.com/zonghui0228/CNMLEQA"),
    "casimedicos": Licence(("cc0-1.0",), "CC0 1.0 (the LICENSE file beside the data)", "https://github.com/ixa-ehu/antidote-casimedicos"),
}

DO = Licence(("cc0-1.0", "cc-by-3.0"), "CC0 1.0 (current Disease Ontology); CC BY 3.0 (the 2016 OBO's names, synonyms, definitions)",
             "https://disease-ontology.org")
HPO = Licence(("other",), "HPO licence: free use, cite HPO and its version, term content not altered",
              "https://hpo.jax.org/app/license")
TEST_TERMS = Licence(("apache-2.0",), "Apache-2.0 (written for this project's tests)")
# code-keyed name lists (umls/code_names.py) this project knows; others take their config's `licence`
CODE_NAME_LICENCES = {
    "ICD10RU": Licence(("mit",), "MIT (github.com/ak4nv/mkb10, copyright 2018 Anton Kochnev); ICD-10 is WHO's classification, "
                       "this is its official Russian edition, open reference data of the Russian Ministry of Health: cite both",
                       "https://github.com/ak4nv/mkb10"),
}

# CUI-keyed name lists and glossaries (umls/name_lists.py) of ../shared/data, by the SAB
# configs/shared-real.toml gives them; others take their config's `licence`
NAME_LIST_LICENCES = {
    "QUAERO": Licence(("gfdl",), "GNU Free Documentation License (QUAERO French Medical Corpus, CLEF eHealth): cite QUAERO",
                      "https://quaerofrenchmed.limsi.fr/"),
    "NERELBIO": Licence(("unknown",), RESEARCH_ONLY + " (NEREL-BIO BioNNE-L; its article is CC BY 4.0 and calls the data "
                        "freely available)", "https://github.com/nerel-ds/NEREL-BIO"),
    "NERELBIOEN": Licence(("unknown",), RESEARCH_ONLY + " (NEREL-BIO BioNNE-L, English part)", "https://github.com/nerel-ds/NEREL-BIO"),
    "RUCCON": Licence(("unknown",), RESEARCH_ONLY + " (RuCCoN)", "https://github.com/AIRI-Institute/RuCCoN"),
    "WIKIDATA": Licence(("cc0-1.0",), "CC0 1.0 (Wikidata's labels, descriptions and UMLS CUI statements; terminology facts only)",
                        "https://www.wikidata.org/wiki/Wikidata:Licensing"),
    "WIKIDATAJA": Licence(("cc0-1.0",), "CC0 1.0 (Wikidata's Japanese labels with UMLS CUI statements; terminology facts only)",
                          "https://www.wikidata.org/wiki/Wikidata:Licensing"),
    "DOSPA": Licence(("cc0-1.0",), "CC0 1.0 (Disease Ontology's Spanish translation tables)", "https://disease-ontology.org"),
    **{f"MESPEN{lat}": Licence(("cc-by-4.0",), "CC BY 4.0 (MeSpEn medical glossaries, doi 10.5281/zenodo.2205690): cite MeSpEn",
                               "https://doi.org/10.5281/zenodo.2205690") for lat in ("CHI", "JPN", "RUS", "FRE")},
    "MEDUTX": Licence(("cc-by-3.0",), "CC BY 3.0 (MEDUTX 1.01, Kitasato University / AAMT): cite Kitasato University",
                      "https://aamt.info/"),
}

# what each source is, for the card's table
FORMAT_NAMES = {
    "pubmedqa": "PubMedQA", "frenchmedmcqa": "FrenchMedMCQA", "igakuqa": "IgakuQA", "rumeddanet": "RuMedDaNet (RuMedBench)",
    "cnmleqa": "CNMLEQA", "casimedicos": "CasiMedicos (Antidote CasiMedicos-Arg)",
    "sample-jsonl": "sample-jsonl file", "mmedbench-jsonl": "MMedBench-style file", "beir": "BEIR folder",
}

# references to cite with the release, where the source names one (BibTeX-free: plain text)
REFERENCES = {
    "pubmedqa": "Jin Q, Dhingra B, Liu Z, Cohen WW, Lu X. PubMedQA: A Dataset for Biomedical Research Question Answering. EMNLP-IJCNLP 2019.",
    "frenchmedmcqa": "Labrak Y, Bazoge A, Dufour R, Daille B, Gourraud PA, Morin E, Rouvier M. FrenchMedMCQA: A French Multiple-Choice "
                     "Question Answering Dataset for Medical domain. LOUHI 2022.",
    "igakuqa": "Kasai J, Kasai Y, Sakaguchi K, Yamada Y, Radev D. Evaluating GPT-4 and ChatGPT on Japanese Medical Licensing "
               "Examinations. arXiv:2303.18027, 2023.",
    "rumeddanet": "Blinov P, Reshetnikova A, Nesterov A, Zubkova G, Kokh V. RuMedBench: A Russian Medical Language Understanding "
                  "Benchmark. AIME 2022.",
    "cnmleqa": "CNMLEQA, https://github.com/zonghui0228/CNMLEQA.",
    "casimedicos": "Sviridova E, Yeginbergen A, Estarrona A, Cabrio E, Villata S, Agerri R. CasiMedicos-Arg: A Medical Question "
                   "Answering Dataset Annotated with Explanatory Argumentative Structures. EMNLP 2024.",
    "DO": "Schriml LM et al. The Human Disease Ontology 2022 update. Nucleic Acids Research 50(D1), 2022.",
    "HPO": "Gargano MA et al. The Human Phenotype Ontology in 2024: phenotypes around the world. Nucleic Acids Research 52(D1), 2024.",
    "QUAERO": "Névéol A, Grouin C, Leixa J, Rosset S, Zweigenbaum P. The QUAERO French Medical Corpus: A Ressource for Medical "
              "Entity Recognition and Normalization. BioTextMining Workshop, LREC 2014.",
    "NERELBIO": "Loukachevitch N et al. NEREL-BIO: a dataset of biomedical abstracts annotated with nested named entities. "
                "Bioinformatics 39(4), 2023.",
    "RUCCON": "Nesterov A et al. RuCCoN: Clinical Concept Normalization in Russian. Findings of ACL 2022.",
    "MESPEN": "Villegas M et al. MeSpEn_Glossaries (medical glossaries), Zenodo, doi 10.5281/zenodo.2205690, 2018.",
    "MEDUTX": "MEDUTX 1.01, Dept. of Medical Informatics, School of Allied Health Sciences, Kitasato University (2009), AAMT UTX.",
    "ICD10RU": "World Health Organization. International Statistical Classification of Diseases and Related Health Problems, "
               "10th Revision (ICD-10). Russian edition: Ministry of Health of the Russian Federation, reference book МКБ-10, "
               "OID 1.2.643.5.1.13.13.11.1005, version 2.27.",
}


def vocabulary_licence(sab: str, srl: int, stated: dict[str, str] | None = None, umls: bool = True) -> tuple[str, Licence]:
    """(source family, licence) of a vocabulary source (SAB) in the manifest. `stated`: the
    licence a build config gives each code-keyed list's, name list's and glossary's SAB;
    `umls`: whether the vocabulary is a UMLS release (format "rrf"). Only there is a SAB this
    table does not know a UMLS source: in an open vocabulary it is "unknown", never UMLS's."""
    if sab in CODE_NAME_LICENCES:
        return sab, CODE_NAME_LICENCES[sab]
    if sab in NAME_LIST_LICENCES:
        return sab, NAME_LIST_LICENCES[sab]
    if stated and sab in stated:
        return sab, source_licence("", stated[sab])
    if sab == "DO":
        return "DO", DO
    if re.fullmatch(r"HPO([A-Z]{3})?", sab):
        return "HPO", HPO
    if sab == "MMBDE":
        return sab, TEST_TERMS
    if not umls:
        return sab, UNKNOWN
    return sab, Licence(("other",), f"UMLS Metathesaurus License Agreement (source restriction level {srl})",
                        "https://www.nlm.nih.gov/research/umls/knowledge_sources/metathesaurus/release/license_agreement.html")


def source_licence(fmt: str, stated: str | None) -> Licence:
    if stated:
        return Licence((stated,), f"{stated} (as the build configuration states)")
    return FORMAT_LICENCES.get(fmt, UNKNOWN)


def licence_rows(config: dict, sources_srl: dict[str, int]) -> list[dict]:
    """One row per source behind a release: what it is, what the release takes from it, its licence."""
    rows = []
    for s in config.get("sources", []):
        lic = source_licence(s["format"], s.get("licence"))
        rows.append({"source": f"{FORMAT_NAMES.get(s['format'], s['format'])} (`{s['path']}`)", "use": "questions and passages",
                     "licence": lic, "ref": REFERENCES.get(s["format"]) if not s.get("licence") else None})
    for b in config.get("background", []):
        lic = source_licence("", b.get("licence"))
        rows.append({"source": f"background passages (`{b['path']}`)", "use": f"{b['task']} corpus", "licence": lic, "ref": None})
    memory = config.get("translation", {}).get("memory", [])
    if memory:
        lic = source_licence("", config["translation"].get("licence"))
        rows.append({"source": "translation memory (" + ", ".join(f"`{m}`" for m in memory) + ")", "use": "translated queries",
                     "licence": lic, "ref": None})
    families: dict[str, list[str]] = {}
    lics: dict[str, Licence] = {}
    vocabulary = config.get("vocabulary", {})
    blocks = [*vocabulary.get("code_names", []), *vocabulary.get("name_lists", []), *vocabulary.get("glossaries", [])]
    stated = {c["sab"]: c["licence"] for c in blocks}
    umls = vocabulary.get("format", "rrf") == "rrf"
    for sab, srl in sorted(sources_srl.items()):
        fam, lic = vocabulary_licence(sab, srl, stated, umls)
        families.setdefault(fam, []).append(sab)
        lics[fam] = lic
    for fam, sabs in families.items():
        # a source's parts (MESPENCHI, NERELBIOEN, DOSPA) cite their source's reference
        ref = REFERENCES.get(fam) or next((REFERENCES[k] for k in sorted(REFERENCES, key=len, reverse=True)
                                           if k.isupper() and fam.startswith(k)), None)
        rows.append({"source": f"vocabulary: {', '.join(sabs)}", "use": "concept names, definitions, hierarchy (cd corpus and queries)",
                     "licence": lics[fam], "ref": ref})
    return rows


def hub_licence_ids(rows: list[dict]) -> list[str]:
    return sorted({i for r in rows for i in r["licence"].ids})
