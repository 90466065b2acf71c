"""The three MMed-Bench-IR tasks as MTEB (2.x) tasks over a local release folder.

    from tasks.loaders.mteb_tasks import release_tasks
    results = mteb.evaluate(model, release_tasks("releases/0.1.0"), cache=None)

One MTEB task per benchmark task, one evaluation subset per non-empty cell (hf_subset
`<task>-<lang>`, which is how MTEB's RetrievalDatasetLoader finds the card's
`<task>-<lang>-corpus|queries|qrels` configs), and one per cell's pivot control with test
queries (hf_subset `<task>-<lang>-pivot`, eval language eng-Latn: the cell's items asked in
English, over the same corpus and qrels; the card's `<task>-<lang>-pivot-*` configs). xqa and evidence are retrieval over the cell's
corpus; cd is reranking: each query is scored against its confusion set only (the card's
`cd-<lang>-top_ranked` config: the target and its distractors), which MTEB's loader picks up
by itself and its evaluator uses in place of full-corpus search.

Metadata is filled from the release's manifest, honestly: the dataset path is the folder and
its revision the build id (a local folder has no Hub revision; the build id changes exactly
when the content does); languages are the cells' query languages plus English (the corpus);
licence, sample creation and citation follow the card.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from common.errors import InputError
from schemas.records import TASKS

TASK_NAMES = {"xqa": "MMedBenchIR-XQARetrieval", "cd": "MMedBenchIR-CDReranking", "evidence": "MMedBenchIR-EvidenceRetrieval"}
DESCRIPTIONS = {
    "xqa": "Cross-lingual medical QA retrieval: a question in one language, its English answer passage among all "
           "English answer passages of the release.",
    "cd": "Concept discrimination: a medical concept's name in one language, reranked against English entries of "
          "the concept and its distractors (one confusion set: easy, medium or hard tier).",
    "evidence": "Evidence retrieval for RAG: an evidence-seeking medical question in one language, its gold English "
                "abstract-style passage among all evidence passages.",
}
MAIN_SCORE = {"xqa": "ndcg_at_10", "evidence": "ndcg_at_10", "cd": "mrr_at_10"}
SUBTYPES = {"xqa": ["Question answering"], "evidence": ["Question answering"], "cd": ["Cross-Lingual Semantic Discrimination"]}
# registry scripts -> ISO 15924 (a language written in Han + kana is Japanese: Jpan)
SCRIPT_CODES = {"Latin": "Latn", "Cyrillic": "Cyrl", "Greek": "Grek", "Arabic": "Arab", "Devanagari": "Deva",
                "Hebrew": "Hebr", "Thai": "Thai", "Hangul": "Kore", "Han": "Hans"}
SAMPLE_CREATION = {"native": "found", "terminology": "found", "human-translated": "human-translated",
                   "machine-translated": "machine-translated", "machine-translated and verified": "machine-translated and verified"}


def _iso639_3(code: str) -> str:
    """ISO 639-3 of a registry code, from the table MTEB itself ships (mteb/languages)."""
    base = code.split("-")[0]
    if len(base) == 3:
        return base
    table = json.loads(resources.files("mteb.languages").joinpath("iso_639_1_to_3.json").read_text(encoding="utf-8"))
    if base not in table:
        raise InputError(code, "no ISO 639-3 code for this language (MTEB names languages by ISO 639-3)")
    return table[base]


def language_script(code: str, entry: dict) -> str:
    """MTEB's "<ISO 639-3>-<ISO 15924>" for a registry language entry (its `scripts`)."""
    scripts = entry.get("scripts", ["Latin"])
    if "Han" in scripts and ("Hiragana" in scripts or "Katakana" in scripts):
        script = "Jpan"
    else:
        script = SCRIPT_CODES.get(scripts[0], "Latn")
    return f"{_iso639_3(code)}-{script}"


def _licence(manifest: dict) -> str:
    from tasks.release.licences import hub_licence_ids, licence_rows

    ids = set(hub_licence_ids(licence_rows(manifest["config"], manifest.get("sources_srl", {})))) - {"unknown"}
    if len(ids) == 1 and ids != {"other"}:
        return ids.pop()
    return "multiple" if ids else "not specified"


def _sample_creation(cells: dict) -> str:
    kinds = {SAMPLE_CREATION[p] for c in cells.values() for p, n in c["provenance"].items() if n}
    return kinds.pop() if len(kinds) == 1 else "multiple"


def task_metadata(manifest: dict, release_dir: Path, task: str):
    """The TaskMetadata of one benchmark task over this release, or None when no cell of it can be evaluated."""
    from mteb.abstasks.task_metadata import TaskMetadata
    from tasks.release.card import release_bibtex

    cells = {cell: c for cell, c in sorted(manifest["cells"].items())
             if cell.split("/")[0] == task and c["queries"] - c.get("dev_queries", 0) > 0 and c["documents"] > 0}
    if not cells:
        return None
    langs = manifest["languages"]
    english = language_script("en", langs.get("en", {"scripts": ["Latin"]}))
    eval_langs = {}
    for cell in cells:
        lang = cell.split("/")[1]
        query = language_script(lang, langs[lang])
        eval_langs[cell.replace("/", "-")] = [query] if query == english else [query, english]
    for cell in cells:
        pivots = cells[cell].get("pivots") or {}
        if pivots.get("queries", 0) - pivots.get("dev_queries", 0) > 0:  # the pivot control: English queries, English corpus
            eval_langs[f"{cell.replace('/', '-')}-pivot"] = [english]
    return TaskMetadata(
        name=TASK_NAMES[task],
        description=DESCRIPTIONS[task],
        reference=None,
        dataset={"path": str(release_dir), "revision": manifest["build_id"]},
        type="Reranking" if task == "cd" else "Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=eval_langs,
        main_score=MAIN_SCORE[task],
        date=None,
        domains=["Medical", "Written"],
        task_subtypes=SUBTYPES[task],
        license=_licence(manifest),
        annotations_creators="derived",
        dialect=[],
        sample_creation=_sample_creation(cells),
        bibtex_citation=release_bibtex(manifest),
    )


def _task_class(meta):
    """An AbsTaskRetrieval subclass for `meta`. Queries keep only `id` and `text` for the model:
    the release's other query columns (`cuis`, a list; `pivot_text`, null for sources without an
    English text) are for readers, and MTEB's batch collation takes every column."""
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    def dataset_transform(self, num_proc=None, **kwargs):
        for subset in self.dataset.values():
            for split in subset.values():
                split["queries"] = split["queries"].select_columns(["id", "text"])
                split["corpus"] = split["corpus"].select_columns(["id", "title", "text"])

    return type(meta.name.replace("-", "_"), (AbsTaskRetrieval,),
                {"metadata": meta, "dataset_transform": dataset_transform, "__module__": __name__})


def release_tasks(release_dir: str | Path, tasks: tuple[str, ...] = TASKS) -> list:
    """MTEB tasks (AbsTaskRetrieval instances) for a release folder: one per benchmark task that
    has a non-empty cell, each with one evaluation subset per such cell."""
    release_dir = Path(release_dir).resolve()
    path = release_dir / "manifest.json"
    if not path.exists():
        raise InputError(release_dir, "not a release folder (no manifest.json)")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if not any(name.endswith("/queries/test.parquet") for name in manifest["files"]):
        raise InputError(release_dir, "this release predates the card's datasets configs (no <task>/<lang>/queries/test.parquet); "
                                      "MTEB cannot load it: rebuild it with this version of mmedbench")
    out = []
    for task in tasks:
        meta = task_metadata(manifest, release_dir, task)
        if meta is None:
            continue
        out.append(_task_class(meta)())
    return out
