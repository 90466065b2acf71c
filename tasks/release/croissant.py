"""The release's Croissant metadata: `croissant.json`, Croissant 1.1 JSON-LD with the RAI vocabulary.

    croissant_metadata(manifest, files) -> dict      pure: the manifest and the folder's files in
    write_croissant(manifest, out_dir)                 the folder's files, then croissant.json

Written by the build after the card and before the files are hashed, so the manifest lists and
hashes it and the audit checks it like every other file. It holds:

- `distribution`: every file of the release (the manifest's `files` but the manifest and the
  audit reports, which are written after it) with its sha256 and encoding format, each at a
  `contentUrl` relative to croissant.json: loading reads the folder, never the network;
- `recordSet`: per cell `<task>-<lang>-corpus`, `-queries`, `-qrels` (and `-pivot-queries`
  where the cell has `pivot-queries.jsonl`), plus `cd-confusion-sets`, each field typed and
  read from the cell's parquet file (parquet keeps the types: JSON lines and TSV go through
  pandas' type guessing in mlcroissant, which turns an id such as "0012" into the number 12);
- the licence of every source (tasks/release/licences.py), the citation and the version;
- the RAI fields, every one written from what the manifest records: sources, provenance
  counts per cell, empty or short cells and why, vocabulary sources per language, tools,
  intended uses and how the release is rebuilt and compared.

Nothing in it depends on the clock (no datePublished: a rebuild is byte-identical), and the
generator does not import mlcroissant (a dependency of the `loaders` extra, for users and
tests, not of the build).
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path, PurePosixPath

from common.jsonio import atomic_write
from schemas.records import TASKS
from tasks.release.card import release_bibtex
from tasks.release.licences import FORMAT_NAMES, licence_rows
from tasks.release.writers import file_entries

CROISSANT = "croissant.json"
CROISSANT_1_1 = "http://mlcommons.org/croissant/1.1"
RAI_1_0 = "http://mlcommons.org/croissant/RAI/1.0"

# Croissant 1.1's @context as mlcroissant writes it (a different one draws a warning), plus `rai`
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "fileProperty": "cr:fileProperty",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

ENCODINGS = {".jsonl": "application/jsonlines", ".tsv": "text/tab-separated-values", ".parquet": "application/x-parquet",
             ".json": "application/json", ".md": "text/markdown", ".png": "image/png"}
PLAIN = "text/plain"  # TREC runs and qrels of evaluation/

TEXT, INTEGER = "sc:Text", "sc:Integer"
# (column, dataType, is an array, what it is); the columns and types of writers.py's parquet files
CORPUS_FIELDS = (("_id", TEXT, False, "document id (a passage id, or the CUI of a concept entry)"),
                 ("title", TEXT, False, "title (English)"),
                 ("text", TEXT, False, "text (English)"))
QUERY_FIELDS = (("_id", TEXT, False, "query id"),
                ("text", TEXT, False, "the query in its language"),
                ("lang", TEXT, False, "language code of `text`"),
                ("cuis", TEXT, True, "key concepts (UMLS CUIs)"),
                ("pivot_text", TEXT, False, "English text of the query: the query itself in English, else its source or "
                                            "what it was translated from; null for a native question without one"),
                ("provenance", TEXT, False, "how `text` was made: native, terminology, human-translated, "
                                            "machine-translated, machine-translated and verified"),
                ("split", TEXT, False, "split: test or dev"))
QREL_FIELDS = (("query-id", TEXT, False, "query id (the cell's queries `_id`)"),
               ("corpus-id", TEXT, False, "relevant document id (the cell's corpus `_id`)"),
               ("score", INTEGER, False, "relevance (1)"),
               ("split", TEXT, False, "the query's split"))
CONFUSION_FIELDS = (("set_id", TEXT, False, "confusion set id (= its cd query's `_id`)"),
                    ("lang", TEXT, False, "language of the set's query"),
                    ("tier", TEXT, False, "easy, medium or hard"),
                    ("target_cui", TEXT, False, "the target concept (the relevant cd corpus entry)"),
                    ("distractor_cuis", TEXT, True, "the distractor concepts (hard negatives)"))
PROVENANCES = ("native", "terminology", "human-translated", "machine-translated and verified", "machine-translated")
TASK_NAMES = {"xqa": "cross-lingual QA retrieval", "cd": "concept discrimination", "evidence": "evidence retrieval"}

# what each question source holds, for the personal-information statement
SOURCE_CONTENT = {
    "pubmedqa": "research questions with PubMed abstracts and their conclusions (study results, not about an "
                "identifiable person)",
    "igakuqa": "Japanese medical licensing exam items (case vignettes describe invented patients)",
    "frenchmedmcqa": "French pharmacy exam items",
    "rumeddanet": "Russian medical yes/no questions with their context passages",
    "cnmleqa": "Chinese medical licensing exam items (case vignettes describe invented patients)",
    "sample-jsonl": "questions and passages written for the project's sample",
}


def encoding_format(name: str) -> str:
    return ENCODINGS.get(PurePosixPath(name).suffix, PLAIN)


def _file_object(name: str, entry: dict) -> dict:
    return {"@type": "cr:FileObject", "@id": name, "name": name, "contentUrl": name,
            "encodingFormat": encoding_format(name), "sha256": entry["sha256"], "contentSize": f"{entry['bytes']} B"}


def _record_set(set_id: str, path: str, fields: tuple, description: str, key: tuple[str, ...]) -> dict:
    out = []
    for column, data_type, is_array, what in fields:
        field = {"@type": "cr:Field", "@id": f"{set_id}/{column}", "name": column, "description": what,
                 "dataType": data_type, "source": {"fileObject": {"@id": path}, "extract": {"column": column}}}
        if is_array:
            field |= {"isArray": True, "arrayShape": "-1"}
        out.append(field)
    keys = [{"@id": f"{set_id}/{k}"} for k in key]
    return {"@type": "cr:RecordSet", "@id": set_id, "name": set_id, "description": description, "field": out,
            "key": keys[0] if len(keys) == 1 else keys}


def _provenance_text(provenance: dict) -> str:
    return ", ".join(f"{k} {provenance[k]}" for k in PROVENANCES if provenance.get(k)) or "no queries"


def pivot_cells(files: dict) -> list[str]:
    """Cells that carry English pivot queries (`<task>/<lang>/pivot-queries.jsonl`)."""
    return sorted(n.rsplit("/", 1)[0] for n in files if n.count("/") == 2 and n.endswith("/pivot-queries.jsonl"))


def _require(files: dict, name: str) -> str:
    if name not in files:
        raise ValueError(f"{name}: a record set reads it, but the release has no such file")
    return name


def record_sets(manifest: dict, files: dict) -> list[dict]:
    """Per cell its corpus, queries, qrels (and pivot queries), then the confusion sets."""
    pivots = set(pivot_cells(files))
    out = []
    for cell, c in sorted(manifest["cells"].items()):
        task, lang = cell.split("/")
        name = f"{task}-{lang}"
        where = f"{TASK_NAMES.get(task, task)}, {lang}"
        out.append(_record_set(f"{name}-corpus", _require(files, f"{cell}/corpus.parquet"), CORPUS_FIELDS,
                               f"{cell} corpus ({where}): {c['documents']} English documents", ("_id",)))
        out.append(_record_set(f"{name}-queries", _require(files, f"{cell}/queries.parquet"), QUERY_FIELDS,
                               f"{cell} queries ({where}): {c['queries']} ({c.get('dev_queries', 0)} dev); "
                               f"provenance: {_provenance_text(c['provenance'])}", ("_id",)))
        out.append(_record_set(f"{name}-qrels", _require(files, f"{cell}/qrels.parquet"), QREL_FIELDS,
                               f"{cell} relevance judgments ({where}): {c['qrels']} (query-id, corpus-id) pairs, "
                               "every split", ("query-id", "corpus-id")))
        if cell in pivots:
            rows = files[f"{cell}/pivot-queries.jsonl"].get("rows", 0)
            out.append(_record_set(f"{name}-pivot-queries", _require(files, f"{cell}/pivot-queries.parquet"), QUERY_FIELDS,
                                   f"{cell} pivot queries: the English pivots of the cell's queries ({rows}), "
                                   "lang en, a control for the translation gap", ("_id",)))
    sets = files.get("cd/confusion_sets.jsonl", {}).get("rows", 0)
    out.append(_record_set("cd-confusion-sets", _require(files, "cd/confusion_sets.parquet"), CONFUSION_FIELDS,
                           f"cd confusion sets of every language ({sets}): each cd query's target and distractors at "
                           "one tier", ("set_id",)))
    return out


# ----------------------------------------------------------------------------- what the build knows
def language_sources(manifest: dict) -> dict[str, list[str]]:
    """Vocabulary sources (SABs of the manifest's sources_srl) naming concepts in each build
    language: those the registry prefers for it, and those carrying its UMLS language suffix
    (HPOFRE, MSHFRE for FRE)."""
    sabs = sorted(manifest.get("sources_srl", {}))
    out = {}
    for lang in manifest["config"]["languages"]:
        entry = manifest["languages"].get(lang, {})
        lat = entry.get("umls_lat", "")
        preferred = set(entry.get("preferred_sources", []))
        out[lang] = [s for s in sabs if s in preferred or (lat and s.endswith(lat) and len(s) > len(lat))]
    return out


def _language_totals(cells: dict) -> dict[str, Counter]:
    totals: dict[str, Counter] = {}
    for cell, c in sorted(cells.items()):
        totals.setdefault(cell.split("/")[1], Counter()).update(c["provenance"])
    return totals


def _sources_text(config: dict) -> list[str]:
    out = [f"{FORMAT_NAMES.get(s['format'], s['format'])} (`{s['path']}`)" for s in config.get("sources", [])]
    out += [f"{b['task']} background passages (`{b['path']}`)" for b in config.get("background", [])]
    out += [f"translation memory (`{m}`)" for m in config.get("translation", {}).get("memory", [])]
    return out


def _cells_of(manifest: dict) -> list[str]:
    return sorted(manifest["cells"], key=lambda c: (TASKS.index(c.split("/")[0]) if c.split("/")[0] in TASKS else 9, c))


def data_collection(manifest: dict) -> str:
    cells = manifest["cells"]
    total = Counter()
    for c in cells.values():
        total.update(c["provenance"])
    per_cell = "; ".join(f"{cell} {_provenance_text(cells[cell]['provenance'])}" for cell in _cells_of(manifest))
    sabs = ", ".join(sorted(manifest.get("sources_srl", {}))) or "none"
    return (f"Built by the mmedbench builder {manifest['code_version']} from {len(manifest['inputs'])} input files pinned by "
            f"sha256 in manifest.json: {'; '.join(_sources_text(manifest['config'])) or 'no question source'}; "
            f"vocabulary sources {sabs}. Each query's text is native (written in its language by its source), "
            "terminology (a vocabulary name of the concept in the language) or taken from the translation memory "
            "(human-translated, machine-translated, machine-translated and verified) after its gates; its English "
            f"text is `pivot_text`. Queries by provenance, all cells: {_provenance_text(dict(total))}. "
            f"Per cell: {per_cell}.")


def missing_data(manifest: dict) -> str:
    cells = manifest["cells"]
    short = [f"{cell}: {cells[cell].get('realization', '')}" for cell in _cells_of(manifest)
             if not cells[cell].get("realization", "").startswith("full")]
    dropped = manifest.get("dropped", {})
    drops = "; ".join(f"{reason}: {n}" for reason, n in sorted(dropped.items())) or "none"
    head = ("Cells below their quota, with the reason the build recorded: " + "; ".join(short) + "."
            if short else "None missing: every cell reached its quota.")
    return f"{head} Candidate items dropped while building, by reason: {drops} (each one is in build_report.json)."


def preprocessing(manifest: dict) -> list[str]:
    cfg, langs = manifest["config"], manifest["languages"]
    grounders: dict[str, list[str]] = {}
    for lang in cfg["languages"]:
        grounders.setdefault(langs.get(lang, {}).get("grounder", "quickumls"), []).append(lang)
    g, d = cfg["grounding"], cfg["dedup"]
    split = "test only" if not cfg["splits"]["dev_fraction"] else f"dev fraction {cfg['splits']['dev_fraction']}, the rest test"
    return [
        "Grounding: every question and passage is linked to UMLS concepts (CUIs) by "
        + ", ".join(f"the {k} grounder ({', '.join(v)})" for k, v in sorted(grounders.items()))
        + f", minimum score {g['min_score']}; key concepts are those in the semantic groups {', '.join(g['key_groups'])}.",
        f"Zero overlap: every key concept and every query is placed in at most one cell (overlap scope "
        f"'{cfg.get('overlap', {}).get('scope', 'all')}'); near-duplicate queries (MinHash LSH, {d['num_perm']} "
        f"permutations, Jaccard >= {d['threshold']}, on the text and on its English pivot) are dropped.",
        "Translation gates on every non-native, non-vocabulary query: the language's script rule, language "
        f"identification ({cfg.get('langid_backend', 'langdetect')}), not a copy of the source, length-ratio bounds, "
        "numbers and units preserved.",
        f"Quotas per cell: xqa {cfg['tasks']['xqa']['quota']}, evidence {cfg['tasks']['evidence']['quota']}, "
        f"cd {cfg['tasks']['cd']['quota']} (one confusion set per cd query: target plus {cfg['tasks']['cd']['distractors']} "
        "distractors at one tier, easy, medium or hard).",
        f"Splits by a hash of the item id alone ({split}): an item keeps its split from version to version.",
    ]


def annotation_protocol() -> list[str]:
    return ["Relevance judgments (qrels, score 1) come from the sources' own pairings, not from annotators: an xqa "
            "question's answer passage(s) (or, for exam items without answer text, the English entries of the "
            "concepts its correct options name), an evidence question's gold passage, a cd query's target concept "
            "entry. Documents not listed are unjudged."]


def machine_tools(manifest: dict) -> list[str]:
    cfg = manifest["config"]
    tools = sorted({f"{e.get('grounder', 'quickumls')} grounder (UMLS concept linking)" for e in manifest["languages"].values()})
    tools.append(f"language identification: {cfg.get('langid_backend', 'langdetect')}")
    tools.append(f"MinHash LSH near-duplicate detection ({cfg['dedup']['num_perm']} permutations)")
    engine = cfg.get("translation", {}).get("engine")
    if engine:
        tools.append(f"machine translation: {engine}")
    return tools


def biases(manifest: dict) -> list[str]:
    by_lang = language_sources(manifest)
    totals = _language_totals(manifest["cells"])
    out = []
    for lang in manifest["config"]["languages"]:
        entry = manifest["languages"].get(lang, {})
        sabs = by_lang.get(lang, [])
        vocab = f"concept names from {', '.join(sabs)}" if sabs else "no vocabulary names"
        out.append(f"{lang} ({entry.get('name', lang)}, {' / '.join(entry.get('scripts', [])) or 'unknown'} script): "
                   f"{vocab}; queries: {_provenance_text(dict(totals.get(lang, {})))}.")
    out.append("Every corpus is English (passages and concept entries): retrieval is monolingual for English and "
               "cross-lingual for every other language.")
    out.append("Native questions come only from the configured sources; in other cells queries are translations or "
               "vocabulary names (counts above), whose wording differs from questions written in the language.")
    return out


def limitations(manifest: dict) -> list[str]:
    by_lang = language_sources(manifest)
    cells = manifest["cells"]
    quota = manifest["config"]["tasks"]["cd"]["quota"]
    out = []
    for lang in manifest["config"]["languages"]:
        sabs = by_lang.get(lang, [])
        cd = cells.get(f"cd/{lang}")
        fill = (f"; cd/{lang} has {cd['queries']} of {quota} queries ({_provenance_text(cd['provenance'])})" if cd else "")
        out.append(f"Vocabulary coverage, {lang}: "
                   + (f"concept names from {', '.join(sabs)}" if sabs else "no vocabulary source names concepts in it")
                   + fill + ".")
    out += [f"{cell}: {cells[cell].get('realization', '')}" for cell in _cells_of(manifest)
            if not cells[cell].get("realization", "").startswith("full")]
    out.append("Relevance is the sources' own pairing with one or a few relevant documents per query; unjudged "
               "documents may also be relevant.")
    return out


def use_cases(manifest: dict) -> list[str]:
    tasks = sorted({c.split("/")[0] for c in manifest["cells"]}, key=lambda t: TASKS.index(t) if t in TASKS else 9)
    return ["Evaluating multilingual and cross-lingual medical retrieval per cell (task x language): "
            + ", ".join(f"{t} ({TASK_NAMES.get(t, t)})" for t in tasks)
            + "; `mmedbench evaluate` reports nDCG@10, Recall@100 and MRR@10 per cell and concept discrimination per tier.",
            "Aggregating over cells: no key concept or query is in two cells, so an average counts nothing twice.",
            "Not intended for training models on these queries (scores would no longer measure unseen questions), "
            "nor for clinical decisions or medical advice."]


def personal_information(manifest: dict) -> list[str]:
    formats = sorted({s["format"] for s in manifest["config"].get("sources", [])})
    known = [f"{FORMAT_NAMES.get(f, f)}: {SOURCE_CONTENT[f]}" for f in formats if f in SOURCE_CONTENT]
    out = ["None about persons: the queries are exam items, research questions and vocabulary concept names, the "
           "passages abstracts, conclusions, evidence passages and vocabulary entries; none is about an identifiable "
           "person, and the builder collects nothing from or about its users."]
    if known:
        out.append("Question sources: " + "; ".join(known) + ".")
    unknown = [s for s in manifest["config"].get("sources", []) if s["format"] not in SOURCE_CONTENT]
    unknown += manifest["config"].get("background", [])
    if unknown:
        out.append("Not assessed by the builder (files supplied by the configuration, its authors answer for their "
                   "content): " + ", ".join(f"`{s['path']}`" for s in unknown) + ".")
    return out


def maintenance(manifest: dict) -> str:
    text = (f"Release {manifest['version']} (build {manifest['build_id'][:12]}) was built by mmedbench "
            f"{manifest['code_version']} from the {len(manifest['inputs'])} inputs and the resolved configuration recorded "
            "in manifest.json (each input by sha256): the same inputs, configuration and code version rebuild it byte "
            "for byte (`mmedbench build --config CONFIG --version VERSION`), and `mmedbench audit RELEASE` re-checks it "
            "from the folder alone. Releases are never overwritten: a change is a new version, and `mmedbench diff OLD "
            "NEW` lists what changed between two releases (cells, queries, documents, qrels, confusion sets, "
            "configuration, inputs, code version, files). A language is added with `mmedbench add-language BASE "
            "--config CONFIG`, a new minor version whose existing cells stay byte-identical.")
    changes = manifest.get("changes")
    if changes:
        text += (f" This release extends {changes['base_version']} (build {changes['base_build_id'][:12]}): added "
                 f"{', '.join(changes['added_cells'])}; {len(changes['unchanged_cells'])} cells carried over unchanged.")
    return text


# ----------------------------------------------------------------------------- the document
def _licences(manifest: dict) -> tuple[list[dict], list[str]]:
    rows = licence_rows(manifest["config"], manifest.get("sources_srl", {}))
    licences = []
    for r in rows:
        lic = r["licence"]
        work = {"@type": "sc:CreativeWork", "name": lic.text,
                "description": f"{r['source']}: {r['use']}; Hugging Face licence id(s): {', '.join(lic.ids)}".replace("`", "")}
        if lic.url:
            work["url"] = lic.url
        if work not in licences:  # one file read twice (two [[sources]] entries) is one source
            licences.append(work)
    return licences, sorted({r["ref"] for r in rows if r["ref"]})


def _description(manifest: dict) -> str:
    cells = manifest["cells"]
    queries = sum(c["queries"] for c in cells.values())
    empty = sum(1 for c in cells.values() if c["queries"] == 0)
    return (f"MMed-Bench-IR {manifest['version']}: a multilingual medical retrieval benchmark in "
            f"{len(manifest['config']['languages'])} languages ({', '.join(manifest['config']['languages'])}) and three "
            "tasks (cross-lingual QA retrieval xqa, concept discrimination cd, evidence retrieval evidence), "
            f"{len(cells)} cells (task x language; {empty} empty), {queries} queries. Every key concept (UMLS CUI) and "
            "every query belongs to at most one cell. Each cell is a BEIR folder (corpus, queries, qrels) with parquet "
            "copies; `mmedbench audit` re-checks the release from its folder alone.")


def croissant_metadata(manifest: dict, files: dict[str, dict]) -> dict:
    """The Croissant JSON-LD of a release from its manifest (cells, config, registry entries,
    sources, inputs, code version) and its files (relative name -> sha256, bytes, rows:
    `file_entries` of the folder without croissant.json). Pure: the same two dicts give the
    same document."""
    files = {k: v for k, v in files.items() if k != CROISSANT}
    licences, references = _licences(manifest)
    meta = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": [CROISSANT_1_1, RAI_1_0],
        "name": "MMed-Bench-IR",
        "alternateName": f"mmed-bench-ir-{manifest['version']}",
        "description": _description(manifest),
        "version": manifest["version"],
        "license": licences,
        "citeAs": release_bibtex(manifest),
        "inLanguage": list(manifest["config"]["languages"]),
        "keywords": ["medical", "information retrieval", "cross-lingual", "multilingual", "UMLS", "BEIR", "MTEB"],
        "isAccessibleForFree": True,
        "distribution": [_file_object(name, files[name]) for name in sorted(files)],
        "recordSet": record_sets(manifest, files),
        "rai:dataCollection": data_collection(manifest),
        "rai:dataCollectionType": ["Secondary Data analysis", "Software Collection"],
        "rai:dataCollectionRawData": "Inputs (sha256 in manifest.json `inputs`): " + ", ".join(sorted(manifest["inputs"])) + ".",
        "rai:dataCollectionMissingData": missing_data(manifest),
        "rai:dataPreprocessingProtocol": preprocessing(manifest),
        "rai:dataAnnotationProtocol": annotation_protocol(),
        "rai:machineAnnotationTools": machine_tools(manifest),
        "rai:dataBiases": biases(manifest),
        "rai:dataLimitations": limitations(manifest),
        "rai:dataUseCases": use_cases(manifest),
        "rai:dataSocialImpact": "Shows, cell by cell, how well retrieval serves medical questions asked in languages "
                                "other than English against English evidence, where translated and native queries differ.",
        "rai:personalSensitiveInformation": personal_information(manifest),
        "rai:dataReleaseMaintenancePlan": maintenance(manifest),
    }
    if references:
        meta["citation"] = references
    return meta


def render(meta: dict) -> str:
    return json.dumps(meta, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def write_croissant(manifest: dict, out_dir: Path) -> dict:
    """Write `croissant.json` into a release folder whose other files are written (all but the
    manifest and the audit reports). Returns the document."""
    out_dir = Path(out_dir)
    meta = croissant_metadata(manifest, {k: v for k, v in file_entries(out_dir).items() if k != CROISSANT})
    with atomic_write(out_dir / CROISSANT) as fh:
        fh.write(render(meta))
    return meta
