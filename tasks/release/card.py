"""The dataset card (README.md with Hugging Face YAML front matter) of a release.

    write_card(manifest, report, out_dir)

Called after the cells and confusion sets are written into `out_dir` and before the files are
hashed: it writes README.md and its pictures (assets/*.png), and the card reads the cells'
folders for what the manifest does not hold (splits, confusion-set titles). Sections, in order:
front matter (licences, languages, the `<task>-<lang>-{corpus,queries,qrels}` and
`cd-<lang>-top_ranked` configs, and the pivot subsets' `<task>-<lang>-pivot-*`: tasks/release/hub.py),
summary, cells (picture + table), provenance (picture), pivot controls (table), confusion-set tiers
(picture + table), evaluation results (when the build evaluated itself), how to load it (datasets,
MTEB, BEIR, mlcroissant), dropped items, sources and
licences, citation, build.
"""
from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from common.jsonio import atomic_write
from common.text import char_shingles, jaccard
from schemas.records import TASKS, TIERS
from tasks.release.figures import counts_figure, provenance_figure, tiers_figure
from tasks.release.hub import configs_yaml, hub_configs, loadable_files
from tasks.release.licences import hub_licence_ids, licence_rows

ASSETS = "assets"


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def tier_similarities(out_dir: Path, langs: list[str]) -> dict[str, list[float]]:
    """Target-distractor title similarity (character trigrams, as the audit's tier check) of every
    distractor of every confusion set, by tier."""
    titles = {lang: {d["_id"]: d["title"] for d in _jsonl(out_dir / "cd" / lang / "corpus.jsonl")} for lang in langs}
    out: dict[str, list[float]] = {t: [] for t in TIERS}
    for s in _jsonl(out_dir / "cd" / "confusion_sets.jsonl"):
        names = titles.get(s["lang"], {})
        if s["target_cui"] not in names:
            continue
        target = char_shingles(names[s["target_cui"]], 3)
        out[s["tier"]] += [round(jaccard(target, char_shingles(names[d], 3)), 4) for d in s["distractor_cuis"] if d in names]
    return out


def _example_cell(cells: dict, tasks: tuple[str, ...]) -> str | None:
    for task in tasks:
        for cell in [f"{task}/en"] + sorted(cells):
            if cell.startswith(task + "/") and cells.get(cell, {}).get("queries", 0) > 0:
                return cell
    return None


def _front_matter(manifest: dict, licences: list[str], configs: list[dict]) -> list[str]:
    langs = manifest["config"]["languages"]
    total = sum(c["queries"] for c in manifest["cells"].values())
    size = "n<1K" if total < 1000 else "1K<n<10K" if total < 10000 else "10K<n<100K"
    lines = ["---", "license:"] + [f"- {l}" for l in licences]
    if "other" in licences:
        # the Hub asks a name and a link for a licence it does not list: the card's own table
        lines += ["license_name: mmed-bench-ir-sources", "license_link: README.md"]
    lines += ["language:"] + [f"- {l}" for l in langs]
    lines += ["multilinguality:", "- multilingual", "- translation", "size_categories:", f"- {size}",
              "task_categories:", "- text-retrieval", "task_ids:", "- document-retrieval",
              f"pretty_name: MMed-Bench-IR {manifest['version']}",
              "tags:", "- medical", "- umls", "- beir", "- mteb", "- cross-lingual"]
    return lines + configs_yaml(configs) + ["---", ""]


def _cells(manifest: dict) -> list[str]:
    lines = ["## Cells", "", f"![Queries and documents per cell]({ASSETS}/counts.png)", "",
             "| cell | queries | of which dev | documents | qrels | note |", "|---|---|---|---|---|---|"]
    for cell, c in sorted(manifest["cells"].items()):
        lines.append(f"| {cell} | {c['queries']} | {c.get('dev_queries', 0)} | {c['documents']} | {c['qrels']} | {c['realization']} |")
    return lines + [""]


def _provenance(manifest: dict) -> list[str]:
    lines = ["## Provenance", "", f"![How each cell's queries were made]({ASSETS}/provenance.png)", "",
             "`native`: written in the language; `terminology`: a vocabulary name in the language (cd); "
             "`human-translated` / `machine-translated` / `machine-translated and verified`: the source's own translation "
             "of its item (CasiMedicos' French, its English) or the translation memory's, after language, script, copy, "
             "length and number gates. Every query's `pivot_text` is its English text.", "",
             "| cell | " + " | ".join(["native", "terminology", "human-translated", "machine-translated and verified",
                                      "machine-translated"]) + " |", "|---" * 6 + "|"]
    for cell, c in sorted(manifest["cells"].items()):
        p = c["provenance"]
        lines.append(f"| {cell} | " + " | ".join(str(p.get(k, 0)) for k in ("native", "terminology", "human-translated",
                                                                            "machine-translated and verified", "machine-translated")) + " |")
    return lines + [""]


PIVOT_PROVENANCE = ("native", "terminology", "human-translated")


def _pivot_cell(cells: dict) -> str | None:
    """The first cell (xqa, evidence, cd; then by name) whose pivot control has test queries."""
    for task in ("xqa", "evidence", "cd"):
        for cell, c in sorted(cells.items()):
            p = c.get("pivots") or {}
            if cell.startswith(task + "/") and p.get("queries", 0) - p.get("dev_queries", 0) > 0:
                return cell
    return None


def _pivots(manifest: dict) -> list[str]:
    lines = ["## Pivot controls", "",
             "A pivot control asks a non-English cell's own items again in English (each query's `pivot_text`), with the "
             "same ids, the same qrels and the same corpus. Pivot minus native is then the language gap on identical "
             "information needs; comparing an English cell with another language's cell mixes language with the "
             "difference between their items.", "",
             "Each is its own subset: `pivot-queries.jsonl` and `pivot-qrels/<split>.tsv` in the cell's folder (BEIR: "
             "`GenericDataLoader(data_folder=cell, prefix=\"pivot\")`), the `datasets` configs "
             "`<task>-<lang>-pivot-corpus`, `-pivot-queries`, `-pivot-qrels` (and `cd-<lang>-pivot-top_ranked`), and the "
             "MTEB subset `<task>-<lang>-pivot`. The English comes from the item's own English source text (`native`), "
             "the vocabulary's English name of the concept (`terminology`, cd) or the source's own English translation "
             "of its item (`human-translated`). English cells have none: their queries are in English.", "",
             "| cell | pivot queries / queries | " + " | ".join(PIVOT_PROVENANCE) + " | no pivot because |",
             "|---" * (3 + len(PIVOT_PROVENANCE)) + "|"]
    for cell, c in sorted(manifest["cells"].items()):
        p = c.get("pivots")
        if p is None:
            continue
        lines.append(f"| {cell} | {p['queries']} / {p['of']} | " + " | ".join(str(p["provenance"].get(k, 0)) for k in PIVOT_PROVENANCE)
                     + f" | {p.get('reason') or '-'} |")
    return lines + [""]


def _tier_readings(manifest: dict, out_dir: Path) -> list[str]:
    """Per cd cell, how its tiers read through retrieval: what the audit's tier check reads
    (tasks/audit/tier_readings.py), so a cell no system reads above chance says so here."""
    from tasks.audit.tier_readings import TIER_MIN_SETS, folder_verdicts

    verdicts = folder_verdicts(out_dir, manifest)
    if not verdicts:
        return []
    lines = ["How the tiers read through retrieval, per cd cell: within-set accuracy@1 easy / medium / hard of BM25 on the "
             "cell's queries asked in English, with how close the nearest distractor comes to the target (its score over "
             "the target's: the tiers themselves, read alike in every language), and of each system "
             "above chance on the cell's own queries (BM25, and the systems of this release's own evaluation); a cell no "
             "system reads better than a blind guess is *at chance* for them, and its tiers are read through the English "
             f"pivots only (the audit judges cells with at least {TIER_MIN_SETS} sets a tier).", "",
             "| cell | English pivots (BM25) | own queries |", "|---|---|---|"]
    for v in verdicts:
        pivot = (f"{v.pivot.ladder().replace('/', ' / ')} (closeness {v.pivot.closeness_ladder().replace('/', ' / ')})"
                 if v.pivot is not None and v.pivot.sets() else "-")
        lines.append(f"| {v.cell} | {pivot} | {v.label()} |")
    return lines + [""]


def _tiers(sims: dict[str, list[float]], distractors: int) -> list[str]:
    lines = ["## Confusion-set tiers (cd)", "",
             f"Each cd query names a target concept; its candidates are the target and {distractors} distractors at one tier: "
             "easy (another semantic group or type, far in the hierarchy), medium (same type, no close common ancestor), "
             "hard (hierarchy siblings, lexically closest first). The picture and table give the character-trigram "
             "similarity of each distractor's name to its target's.", "",
             f"![Target-distractor similarity by tier]({ASSETS}/tiers.png)", "",
             "| tier | distractors | mean | median | min | max |", "|---|---|---|---|---|---|"]
    for t in TIERS:
        v = sims.get(t, [])
        if v:
            lines.append(f"| {t} | {len(v)} | {statistics.fmean(v):.3f} | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} |")
        else:
            lines.append(f"| {t} | 0 | - | - | - | - |")
    return lines + [""]


CUI = re.compile(r"^C\d{7}$")  # schemas.records.Cui: a concept entry's document id
SMALL_CELL = 100  # test queries under which a cell's score is flagged: its 95% interval is wide
TASK_MEASURES = {
    "xqa": "finding the English answer passage of a question asked in {lang}",
    "evidence": "finding the English evidence passage that answers a question asked in {lang}",
    "cd": "telling a concept named in {lang} from {k} look-alike concepts, among their English entries",
}


# where an item task's queries come from, by the source format their ids start with (docs/sources.md)
SOURCE_TEXTS = {
    "pubmedqa": "PubMedQA questions; gold: their abstract's sections and conclusion",
    "casimedicos": "CasiMedicos clinical cases with their question (Spanish MIR exam; Spanish original, French "
                   "translation); gold: {gold}",
    "igakuqa": "IgakuQA exam questions (Japanese, or their English translation); gold: the answer concept's English entry",
    "frenchmedmcqa": "FrenchMedMCQA exam questions; gold: the answer concept's English entry",
    "cnmleqa": "CNMLEQA exam questions; gold: the answer concept's English entry",
    "rumeddanet": "RuMedDaNet yes/no questions; gold: their Russian context",
}


def cell_sources(cell_dir: Path) -> dict[str, int]:
    """Queries per source format (an item's id starts with its format's name) in a cell."""
    from collections import Counter

    path = cell_dir / "queries.jsonl"
    if not path.exists():
        return {}
    return dict(sorted(Counter(q["_id"].split("-")[0] for q in _jsonl(path)).items()))


def _source_words(task: str, sources: dict[str, int]) -> str:
    gold = "the doctors' English explanation of the case" if task == "evidence" else "the answer concept's English entry"
    parts = [f"{SOURCE_TEXTS[s].format(gold=gold)} ({n})" for s, n in sources.items() if s in SOURCE_TEXTS]
    return "; ".join(parts)


def source_items_by_cell(shards: list[str]) -> dict[str, int]:
    """How many source items each cell could take in its own language: items of the task
    written in the language (`<task>/<lang>` -> count), from the sources stage's item shards."""
    import pyarrow.parquet as pq
    from collections import Counter

    counts: Counter = Counter()
    for shard in shards:
        t = pq.read_table(shard, columns=["task", "lang"])
        counts.update(f"{task}/{lang}" for task, lang in zip(t["task"].to_pylist(), t["lang"].to_pylist()))
    return dict(sorted(counts.items()))


def _baseline_intervals(out_dir: Path) -> tuple[str | None, dict[str, tuple[float, float, int]]]:
    """The first retriever of the build's own evaluation (`[evaluation]`) and, per cell, its
    test nDCG@10 with the 95% interval's half-width and the test queries scored."""
    path = out_dir / "evaluation" / "results.json"
    if not path.exists():
        return None, {}
    res = json.loads(path.read_text(encoding="utf-8"))
    if not res.get("retrievers"):
        return None, {}
    first = res["retrievers"][0]["name"]
    out = {}
    for c in res["cells"]:
        iv = (c.get("intervals") or {}).get("ndcg_at_10")
        if c["retriever"] == first and c["split"] == "test" and c.get("query_set", "native") == "native" and iv:
            out[f"{c['task']}/{c['lang']}"] = (c["metrics"]["ndcg_at_10"], (iv["high"] - iv["low"]) / 2, c["queries"])
    return first, out


def gold_kinds(cell_dir: Path) -> tuple[int, int]:
    """(concept entries, source passages) among a cell's relevant documents (qrels of every
    split): a concept entry's id is its CUI. An exam question whose gold is the entry of its
    answer concept asks to reason from findings to a definition; a question whose gold is its
    own abstract's passage asks to find that passage."""
    entries = passages = 0
    for path in sorted((cell_dir / "qrels").glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            doc = line.split("\t")[1]
            if CUI.match(doc):
                entries += 1
            else:
                passages += 1
    return entries, passages


def empty_reason(cell: str, manifest: dict, source_items: dict[str, int] | None) -> str:
    """Why a cell has no query, from the build's facts: whether any source has the task's
    items in the language (`source_items`, `source_items_by_cell`), the vocabulary's names
    for cd, and what translation the build had (it translates from the memory only: no
    machine-translation engine is reachable offline)."""
    task, lang = cell.split("/")
    name = manifest["languages"].get(lang, {}).get("name", lang)
    memory = manifest["config"].get("translation", {}).get("memory") or []
    if task == "cd":
        first = f"no concept left to it has a {name} name in the vocabulary"
    elif source_items is None:
        first = f"no {task} source item in {name} was placed"
    elif source_items.get(cell, 0) == 0:
        first = f"no {task} source in {name}"
    else:
        first = (f"its {source_items[cell]} {name} {task} source items were all dropped (build_report.json says why, "
                 "item by item)")
    if lang == "en":
        return first
    if not memory:
        second = "no translation: no machine-translation engine is reachable offline and no translation memory is configured"
    else:
        second = (f"no translation: the translation memory holds no {name} text passing the gates for the items left, "
                  "and no machine-translation engine is reachable offline")
    return f"{first}; {second}"


def measures(manifest: dict, out_dir: Path, source_items: dict[str, int] | None = None) -> list[str]:
    """The card's section on what each cell measures: per cell, the task in its language
    and where its queries come from, its test queries, the 95% interval half-width of the
    build's own baseline (nDCG@10, test), a flag under SMALL_CELL test queries, and, for an
    empty cell, why it is empty."""
    retriever, scored = _baseline_intervals(out_dir)
    k = manifest["config"]["tasks"]["cd"]["distractors"]
    score_head = f"{retriever} nDCG@10 (test) ± 95% half-width" if retriever else "baseline (none: the build did not evaluate itself)"
    lines = ["## What each cell measures", "",
             f"Per cell: what its queries ask and where they come from, its test queries, and the build's own baseline "
             f"with the half-width of its 95% bootstrap interval over queries. A cell with fewer than {SMALL_CELL} test "
             "queries is flagged: its score moves by more than its neighbours' differences. An empty cell says why it is "
             "empty.", "",
             "Every evidence cell is cross-lingual in one way: its queries in the cell's language, its corpus the English "
             "evidence passages of every evidence source, and every non-English query has its English pivot. A source "
             "whose gold passages are not English (RuMedDaNet's Russian contexts) measures monolingual retrieval and is "
             "not an evidence source of this design.", "",
             f"| cell | measures | test queries | {score_head} | note |", "|---|---|---:|---:|---|"]
    for cell, c in sorted(manifest["cells"].items()):
        task, lang = cell.split("/")
        name = manifest["languages"].get(lang, {}).get("name", lang)
        test = c["queries"] - c.get("dev_queries", 0)
        if c["queries"] == 0:
            lines.append(f"| {cell} | nothing: empty | 0 | - | empty: {empty_reason(cell, manifest, source_items)} |")
            continue
        prov = ", ".join(f"{k_} {n}" for k_, n in sorted(c.get("provenance", {}).items()))
        what = TASK_MEASURES[task].format(lang=name, k=k) + f" (queries: {prov}"
        if task != "cd":
            entries, passages = gold_kinds(out_dir / task / lang)
            what += f"; gold: {passages} source passages, {entries} concept entries"
            pivots = c.get("pivots")
            if pivots is not None:
                what += f"; English pivots: {pivots['queries']} of {pivots['of']}"
        what += ")"
        sources = _source_words(task, cell_sources(out_dir / task / lang)) if task != "cd" else ""
        if sources:
            what += f". From: {sources}"
        got = scored.get(cell)
        score = f"{got[0]:.3f} ± {got[1]:.3f}" if got else "-"
        note = f"**fewer than {SMALL_CELL} test queries**" if test < SMALL_CELL else "-"
        lines.append(f"| {cell} | {what} | {test} | {score} | {note} |")
    return lines + [""]


def loading_snippets(version: str, cells: dict) -> dict[str, str]:
    """Python snippets that load this release with datasets, MTEB, BEIR (tests/tasks/loaders/test_release_loaders.py runs them) and
    mlcroissant (one line; tests/tasks/release/test_croissant.py runs it)."""
    release = f"releases/{version}"
    cell = _example_cell(cells, ("xqa", "evidence", "cd")) or "xqa/en"
    cd = _example_cell(cells, ("cd",)) or "cd/en"
    name, cd_name = cell.replace("/", "-"), cd.replace("/", "-")
    pivot = _pivot_cell(cells)
    datasets_pivot = beir_pivot = ""
    if pivot is not None:
        datasets_pivot = (f'\npivot = load_dataset(release, "{pivot.replace("/", "-")}-pivot-queries", split="test")'
                          f'  # {pivot}\'s items asked in English\nprint(len(pivot), pivot[0]["lang"])')
        beir_pivot = (f'\n\n# the pivot control: {pivot}\'s items asked in English, with their qrels\n'
                      f'corpus, queries, qrels = GenericDataLoader(data_folder="{release}/{pivot}", prefix="pivot").load(split="test")'
                      f'\nprint(len(corpus), len(queries), len(qrels))')
    return {
        "datasets": f'''from datasets import load_dataset

release = "{release}"  # this folder
corpus = load_dataset(release, "{name}-corpus", split="test")
queries = load_dataset(release, "{name}-queries", split="test")
qrels = load_dataset(release, "{name}-qrels", split="test")
candidates = load_dataset(release, "{cd_name}-top_ranked", split="test")  # cd: each query's confusion set
print(len(corpus), len(queries), len(qrels), candidates[0]["corpus-ids"])''' + datasets_pivot,
        "mteb": f'''import mteb
from sentence_transformers import SentenceTransformer

from mmedbench.mteb import release_tasks  # ships with the mmedbench builder

model = SentenceTransformer("intfloat/multilingual-e5-small")  # any embedding model
tasks = release_tasks("{release}")  # MMedBenchIR-xqa, MMedBenchIR-cd (reranking), MMedBenchIR-evidence
results = mteb.evaluate(model, tasks, cache=None)
for task_result in results.task_results:
    print(task_result.task_name, task_result.get_score())''',
        "croissant": f'import mlcroissant as mlc; print(len(list(mlc.Dataset("{release}/croissant.json").records("{name}-queries"))))',
        "beir": f'''from beir.datasets.data_loader import GenericDataLoader

corpus, queries, qrels = GenericDataLoader(data_folder="{release}/{cell}").load(split="test")
print(len(corpus), len(queries), len(qrels))''' + beir_pivot,
    }


def _loading(manifest: dict) -> list[str]:
    s = loading_snippets(manifest["version"], manifest["cells"])
    return ["## Loading", "",
            "Every cell is a BEIR folder, and every cell is also `datasets` configs in the layout MTEB's retrieval "
            "loader reads: `<task>-<lang>-corpus`, `<task>-<lang>-queries`, `<task>-<lang>-qrels` "
            "(splits `test`, and `dev` where configured) and, for cd, `cd-<lang>-top_ranked` (each query's candidates); "
            "a pivot control has the same four with `-pivot` after the cell (`<task>-<lang>-pivot-queries`, ...). "
            "A cell or split without rows has no config: `datasets` cannot load an empty split.", "",
            "With `datasets`:", "", "```python", s["datasets"], "```", "",
            "With MTEB (one evaluation subset per cell, `<task>-<lang>`, and one per pivot control, `<task>-<lang>-pivot`; "
            "cd is scored as reranking of each query's confusion set):", "",
            "```python", s["mteb"], "```", "",
            "With BEIR:", "", "```python", s["beir"], "```", "",
            "With mlcroissant, from `croissant.json` (Croissant 1.1 with the responsible-AI fields; record sets "
            "`<task>-<lang>-corpus`, `-queries`, `-qrels`, `<task>-<lang>-pivot-queries` and `cd-confusion-sets`): " f"`{s['croissant']}`", ""]


def _dropped(report: dict) -> list[str]:
    lines = ["## Dropped items", ""] + [f"- {reason}: {n}" for reason, n in sorted(report["dropped_by_reason"].items())]
    if report["gate_rejections"]:
        lines += ["", "Translation gate rejections:", ""] + [f"- {k}: {v}" for k, v in sorted(report["gate_rejections"].items())]
    if report["unrealized"]:
        lines += ["", "Texts never made, per source item and language (no English pivot to translate, or no translation "
                  "of it in the translation memory: nothing reached the gates):", ""]
        lines += [f"- {k}: {v}" for k, v in sorted(report["unrealized"].items())]
    return lines + ["", "Every dropped item and its reason is in `build_report.json`.", ""]


def _licences(rows: list[dict]) -> list[str]:
    lines = ["## Sources and licences", "",
             "The release is a derived work of these sources; each keeps its own terms.", "",
             "| source | used for | licence |", "|---|---|---|"]
    for r in rows:
        lic = r["licence"]
        text = f"[{lic.text}]({lic.url})" if lic.url else lic.text
        lines.append(f"| {r['source']} | {r['use']} | {text} |")
    return lines + [""]


def release_bibtex(manifest: dict) -> str:
    """The release's own BibTeX entry (the card's citation block; the MTEB tasks' citation)."""
    version = manifest["version"]
    key = "mmedbenchir_" + version.replace(".", "_").replace("-", "_")
    return "\n".join([f"@misc{{{key},", "  title = {MMed-Bench-IR: a multilingual medical retrieval benchmark "
                      "with zero concept overlap between cells},", f"  version = {{{version}}},",
                      f"  note = {{build {manifest['build_id'][:12]}, mmedbench {manifest['code_version']}}}", "}"])


def _citation(manifest: dict, rows: list[dict]) -> list[str]:
    lines = ["## Citation", "", "```bibtex", release_bibtex(manifest), "```", ""]
    refs = sorted({r["ref"] for r in rows if r["ref"]})
    if refs:
        lines += ["Please cite the sources too:", ""] + [f"- {r}" for r in refs] + [""]
    return lines


def write_card(manifest: dict, report: dict, out_dir: Path, source_items: dict[str, int] | None = None) -> None:
    """`source_items`: the sources' items per cell in its own language (`source_items_by_cell`),
    which says why an empty cell is empty; without it the card says less."""
    out_dir = Path(out_dir)
    cfg = manifest["config"]
    cells = manifest["cells"]
    files = {cell: loadable_files(out_dir / cell, cell.split("/")[0]) for cell in cells}
    langs = sorted({c.split("/")[1] for c in cells}, key=lambda l: (cfg["languages"] + [l]).index(l))
    sims = tier_similarities(out_dir, langs)
    rows = licence_rows(cfg, manifest.get("sources_srl", {}))
    assets = out_dir / ASSETS
    counts_figure(cells, list(TASKS), langs, assets / "counts.png")
    provenance_figure(cells, assets / "provenance.png")
    tiers_figure(sims, assets / "tiers.png")

    lines = _front_matter(manifest, hub_licence_ids(rows), hub_configs(files))
    lines += [f"# MMed-Bench-IR release {manifest['version']}", "",
              "A multilingual medical retrieval benchmark in three tasks (cross-lingual QA retrieval `xqa`, "
              "concept discrimination `cd`, evidence retrieval `evidence`), each a BEIR folder per language. "
              "Every key concept (UMLS CUI) and every query belongs to exactly one cell (task x language); "
              "`mmedbench audit` re-checks this and every other property from this folder alone.", ""]
    lines += _cells(manifest)
    results = out_dir / "evaluation" / "results.json"
    if results.exists():  # `build --evaluate`: scored from this very folder, before the card; the
        from tasks.evaluation.report import card_section  # family table leads, right after the counts

        lines += card_section(results, manifest["build_id"]) + [""]
    lines += measures(manifest, out_dir, source_items)
    lines += _provenance(manifest)
    lines += _pivots(manifest)
    lines += _tiers(sims, cfg["tasks"]["cd"]["distractors"])
    lines += _tier_readings(manifest, out_dir)
    lines += _loading(manifest)
    lines += _dropped(report)
    lines += _licences(rows)
    lines += _citation(manifest, rows)
    lines += ["## Build", "", f"Built by mmedbench {manifest['code_version']} (build `{manifest['build_id'][:12]}`). "
              "Inputs and their sha256 are listed in `manifest.json`. Vocabulary strings come from sources at or below "
              f"UMLS restriction level {cfg['vocabulary']['max_srl']}.", ""]
    with atomic_write(out_dir / "README.md") as fh:
        fh.write("\n".join(lines))
