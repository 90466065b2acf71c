"""The dataset card (README.md with Hugging Face YAML front matter) of a release."""
from __future__ import annotations

from pathlib import Path

from common.jsonio import atomic_write


def write_card(manifest: dict, report: dict, out_dir: Path) -> None:
    cfg = manifest["config"]
    langs = cfg["languages"]
    lines = ["---", "license: other", "language:"] + [f"- {l}" for l in langs]
    lines += ["task_categories:", "- text-retrieval", "tags:", "- medical", "- umls", "- beir", "- cross-lingual", "configs:"]
    for cell in sorted(manifest["cells"]):
        task, lang = cell.split("/")
        lines += [f"- config_name: {task}-{lang}", "  data_files:",
                  f"  - split: queries\n    path: {task}/{lang}/queries.jsonl",
                  f"  - split: corpus\n    path: {task}/{lang}/corpus.jsonl"]
    lines += ["---", "", f"# MMed-Bench-IR release {manifest['version']}", "",
              "A multilingual medical retrieval benchmark in three tasks (cross-lingual QA retrieval `xqa`, "
              "concept discrimination `cd`, evidence retrieval `evidence`), each a BEIR folder per language. "
              "Every key concept (UMLS CUI) and every query belongs to exactly one cell (task x language); "
              "`mmedbench audit` re-checks this and every other property from this folder alone.", "",
              "## Cells", "", "| cell | queries | documents | qrels | provenance | note |", "|---|---|---|---|---|---|"]
    for cell, c in sorted(manifest["cells"].items()):
        prov = ", ".join(f"{k} {v}" for k, v in c["provenance"].items()) or "-"
        lines.append(f"| {cell} | {c['queries']} | {c['documents']} | {c['qrels']} | {prov} | {c['realization']} |")
    lines += ["", "## How queries were made", "",
              "`native`: written in the language; `terminology`: a vocabulary atom in the language; "
              "`human-translated` / `machine-translated` / `machine-translated and verified`: from the translation memory, "
              "after language, script, copy, length and number gates.", "",
              "## Dropped items", ""]
    for reason, n in sorted(report["dropped_by_reason"].items()):
        lines.append(f"- {reason}: {n}")
    if report["gate_rejections"]:
        lines += ["", "## Gate rejections", ""] + [f"- {k}: {v}" for k, v in sorted(report["gate_rejections"].items())]
    results = out_dir / "evaluation" / "results.json"
    if results.exists():  # `build --evaluate`: scored from this very folder, before the card
        from tasks.evaluation.report import card_section

        lines += [""] + card_section(results, manifest["build_id"])
    lines += ["", "## Provenance", "", f"Built by mmedbench {manifest['code_version']} (build {manifest['build_id'][:12]}). "
              "Inputs and their sha256 are listed in `manifest.json`. Vocabulary strings come from sources at or below "
              f"UMLS restriction level {cfg['vocabulary']['max_srl']}.", ""]
    with atomic_write(out_dir / "README.md") as fh:
        fh.write("\n".join(lines))
