"""A retrieval system that knows nothing of the project: it reads a release's BEIR files and
writes TREC runs named as `mmedbench evaluate --run` expects. Standard library only (the
test runs it with `python -I`, so it cannot import the project).

    python -I outside_ranker.py RELEASE_DIR OUT_DIR
"""
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

TOKEN = re.compile(r"\w+")


def tokens(text):
    return TOKEN.findall(text.lower())


def rank(corpus, queries, out, tag="outside"):
    df = Counter(t for d in corpus for t in set(tokens(d["title"] + " " + d["text"])))
    n = len(corpus)
    docs = [(d["_id"], Counter(tokens(d["title"] + " " + d["text"]))) for d in corpus]
    with open(out, "w", encoding="utf-8") as fh:
        for q in queries:
            terms = set(tokens(q["text"]))
            scored = []
            for doc_id, tf in docs:
                s = sum(tf[t] * math.log(1 + n / df[t]) for t in terms if t in tf)
                if s > 0:
                    scored.append((s, doc_id))
            scored.sort(key=lambda x: (-x[0], x[1]))
            for i, (s, doc_id) in enumerate(scored[:100], start=1):
                fh.write(f"{q['_id']} Q0 {doc_id} {i} {s:.4f} {tag}\n")


def jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def main(release, out):
    release, out = Path(release), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for queries in sorted(release.glob("*/*/queries.jsonl")):
        cell = queries.parent
        name = f"{cell.parent.name}-{cell.name}"
        corpus = jsonl(cell / "corpus.jsonl")
        rank(corpus, jsonl(queries), out / f"{name}.trec")
        if (cell / "pivot-queries.jsonl").exists():
            rank(corpus, jsonl(cell / "pivot-queries.jsonl"), out / f"{name}-pivot.trec")


if __name__ == "__main__":
    main(*sys.argv[1:])
