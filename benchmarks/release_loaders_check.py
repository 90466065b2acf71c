"""A built release through the loaders researchers use, offline: every config of its card with
Hugging Face `datasets`, every filled cell with BEIR's GenericDataLoader, the three tasks with MTEB.

    python benchmarks/release_loaders_check.py releases/0.1.0-real --model DIR
    python benchmarks/release_loaders_check.py releases/0.1.0-real --tiny   # a random-weight model, built here

The suite does the same on the sample (tests/tasks/loaders/test_release_loaders.py); this is the
check for a real-data release, whose card and cells the suite never sees. Counts are compared
with the manifest's; any difference is printed and the exit code is 1. `--model`: a local
sentence-transformers folder (nothing downloads); `--tiny` builds the suite's tiny model
(tests/tiny_model.py) in a temporary folder, which is enough to see every subset load and score.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def check_datasets(root: Path, manifest: dict) -> tuple[int, list[str]]:
    """Every (config, split) of the card loaded; its corpus and query counts against the manifest."""
    import yaml
    from datasets import disable_progress_bars, load_dataset

    disable_progress_bars()
    configs = yaml.safe_load((root / "README.md").read_text(encoding="utf-8").split("---\n")[1])["configs"]
    cache, loaded, wrong = tempfile.mkdtemp(prefix="release-loaders-"), 0, []
    for c in configs:
        task, lang, kind = c["config_name"].split("-", 2)
        cell = manifest["cells"][f"{task}/{lang}"]
        for f in c["data_files"]:
            rows = load_dataset(str(root), c["config_name"], split=f["split"], cache_dir=cache).num_rows
            loaded += 1
            dev = cell.get("dev_queries", 0)
            want = {"corpus": cell["documents"], "queries": cell["queries"] - dev if f["split"] == "test" else dev}.get(kind)
            if want is not None and rows != want:
                wrong.append(f"{c['config_name']} {f['split']}: {rows} rows, the manifest says {want}")
    return loaded, wrong


def check_beir(root: Path, manifest: dict) -> tuple[list[tuple], list[str]]:
    from beir.datasets.data_loader import GenericDataLoader

    rows, wrong = [], []
    for cell, c in sorted(manifest["cells"].items()):
        if c["queries"] - c.get("dev_queries", 0) == 0:
            continue
        corpus, queries, qrels = GenericDataLoader(data_folder=str(root / cell)).load(split="test")
        rows.append((cell, len(corpus), len(queries), sum(len(v) for v in qrels.values())))
        if (len(corpus), len(queries)) != (c["documents"], c["queries"] - c.get("dev_queries", 0)):
            wrong.append(f"{cell}: BEIR gives {len(corpus)} documents and {len(queries)} test queries")
    return rows, wrong


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    model_arg = ap.add_mutually_exclusive_group(required=True)
    model_arg.add_argument("--model", type=Path, help="a local sentence-transformers folder")
    model_arg.add_argument("--tiny", action="store_true", help="build the suite's tiny random-weight model")
    args = ap.parse_args()
    root = args.release.resolve()
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))

    started = time.monotonic()
    loaded, wrong = check_datasets(root, manifest)
    print(f"datasets: {loaded} config splits loaded in {time.monotonic() - started:.0f} s")
    started = time.monotonic()
    rows, beir_wrong = check_beir(root, manifest)
    wrong += beir_wrong
    print(f"beir: {len(rows)} cells in {time.monotonic() - started:.0f} s")
    for cell, docs, queries, qrels in rows:
        print(f"  {cell:<14} documents={docs:<6} test queries={queries:<5} qrels={qrels}")

    import mteb
    from sentence_transformers import SentenceTransformer

    from tasks.loaders.mteb_tasks import release_tasks

    if args.tiny:
        from tests.tiny_model import tiny_model

        model_dir = tiny_model(Path(tempfile.mkdtemp(prefix="tiny-model-")))
    else:
        model_dir = args.model
    model = SentenceTransformer(str(model_dir), device="cpu")
    started = time.monotonic()
    tasks = release_tasks(root)
    results = mteb.evaluate(model, tasks, cache=None, show_progress_bar=False)
    for r in results.task_results:
        subsets = sorted(s["hf_subset"] for s in r.scores["test"])
        print(f"mteb: {r.task_name} {len(subsets)} subsets: {' '.join(subsets)}")
    print(f"mteb evaluate: {time.monotonic() - started:.0f} s")
    for line in wrong:
        print(f"MISMATCH {line}")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
