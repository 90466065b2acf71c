"""How long `mmedbench evaluate` takes, cold and warm, and its peak memory.

    python benchmarks/bench_evaluate.py [--out benchmarks/out/eval-paper] [--seed 0] [-r bm25 | -r default]
    python benchmarks/bench_evaluate.py --release releases/0.1.0-real -r default --warm --out /tmp/bench-real

Cold: an empty embedding cache; warm (--warm): the same command again on the cache the cold
run filled (the corpora and queries are not encoded again). `-r default` is evaluate's
default systems (one of each family).

Writes a synthetic release folder shaped like the paper-scale build (docs/performance.md:
13,140 queries; an xqa corpus of 9,000 answer passages and an evidence corpus of 100,200
passages of 60-150 words, each shared by the six language cells; cd corpora of about
3,300 concept entries per language; zh and ja queries in Han and kana, segmented by jieba
and Sudachi; fr, es and ru queries in their own words), then times
`evaluate_release(release, ["bm25"], out)` end to end: reading and hashing the release,
tokenizing, indexing (bm25s), retrieving the top 100 for every query, writing the runs,
scoring with pytrec_eval, results.json/md and pictures. The folder is written once and
reused (its generation is not timed). Prints the phases from the progress lines.

This is a benchmark, not a test: nothing asserts a time. The CPU time is printed beside
the wall time: on a machine shared with other jobs, it is what an idle one would take.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LANGS = ["en", "zh", "ja", "fr", "ru", "es"]
QUOTAS = {"xqa": 1021, "evidence": 340, "cd": 829}  # per cell, as the paper-scale build
XQA_PASSAGES, EVIDENCE_PASSAGES = 9_000, 100_200
DISTRACTORS = 3
HEADER = "query-id\tcorpus-id\tscore\n"

_SYLLABLES = ["ab", "ac", "ad", "al", "an", "ar", "as", "at", "ca", "ce", "ci", "co", "cu", "da", "de", "di", "do", "el",
              "em", "en", "er", "es", "et", "fa", "fe", "fi", "ga", "ge", "gi", "go", "he", "hi", "ia", "ic", "id", "il",
              "in", "io", "ir", "is", "it", "la", "le", "li", "lo", "lu", "ma", "me", "mi", "mo", "mu", "na", "ne", "ni",
              "no", "nu", "ol", "om", "on", "or", "os", "ov", "pa", "pe", "pi", "po", "ra", "re", "ri", "ro", "ru", "sa",
              "se", "si", "so", "ta", "te", "ti", "to", "tu", "ul", "um", "un", "ur", "us", "va", "ve", "vi", "xi", "zo"]
_FUNCTION = ["the", "of", "and", "in", "a", "to", "with", "is", "for", "was", "were", "by", "on", "as", "patients",
             "that", "at", "from", "or", "be", "this", "are", "an", "which", "after", "than", "not", "these"]
_CYRILLIC = "абвгдежзиклмнопрстуфхцчшыэюя"
_HAN = ("病症炎癌腫瘍血管心肺肝腎胃腸骨脳神経免疫感染治療診断検査薬剤手術患者急性慢性高低圧糖尿頭痛発熱咳嗽呼吸循環"
        "内分泌代謝遺伝子細胞組織臓器皮膚眼耳鼻喉口腔歯科婦人小児精神科外科内科放射線麻酔救急")
_KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテト"


class Words:
    """A Zipfian vocabulary of pseudo-words: realistic term statistics for BM25."""

    def __init__(self, rng: random.Random, size: int = 60_000):
        seen: set[str] = set(_FUNCTION)
        self.words = list(_FUNCTION)
        while len(self.words) < size:
            w = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 5)))
            if w not in seen:
                seen.add(w)
                self.words.append(w)
        self.weights = [1.0 / (i + 1) ** 1.07 for i in range(size)]
        self.cum = []
        acc = 0.0
        for w in self.weights:
            acc += w
            self.cum.append(acc)
        self.rng = rng

    def sample(self, n: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=n)


def _cjk(rng: random.Random, n: int, kana: bool) -> str:
    out = []
    for _ in range(n):
        out.append("".join(rng.choice(_HAN) for _ in range(rng.randint(1, 3))))
        if kana:
            out.append(rng.choice(["の", "は", "が", "を", "に", "で", "と"]))
    return "".join(out) + ("ですか。" if kana else "是什么？")


def _foreign(rng: random.Random, lang: str, base: list[str]) -> str:
    """A question in fr/es (some words shared with English, as cognates are) or ru (Cyrillic)."""
    if lang == "ru":
        return " ".join("".join(rng.choice(_CYRILLIC) for _ in range(rng.randint(3, 10))) for _ in base) + "?"
    return " ".join(w if rng.random() < 0.35 else w + rng.choice(["e", "o", "ia", "ique", "osis"]) for w in base) + " ?"


def _query(rng: random.Random, words: Words, lang: str, relevant: str) -> str:
    own = relevant.split()
    base = rng.sample(own, min(4, len(own))) + words.sample(rng.randint(6, 14))
    rng.shuffle(base)
    if lang == "en":
        return " ".join(base).capitalize() + "?"
    if lang in ("zh", "ja"):
        return _cjk(rng, rng.randint(4, 9), lang == "ja")
    return _foreign(rng, lang, base)


def _write_jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")


def generate(out: Path, seed: int) -> dict:
    rng = random.Random(seed)
    words = Words(rng)
    corpora = {}
    for task, n in (("xqa", XQA_PASSAGES), ("evidence", EVIDENCE_PASSAGES)):
        corpora[task] = [{"_id": f"{task}-p{i:06d}", "title": " ".join(words.sample(rng.randint(3, 8))).capitalize(),
                          "text": " ".join(words.sample(rng.randint(60, 150))) + "."} for i in range(n)]
    registry = _registry()
    cells, sets, n_queries = {}, [], 0
    cui = iter(range(1, 10_000_000))
    for task in ("xqa", "cd", "evidence"):
        for lang in LANGS:
            d = out / task / lang
            if task == "cd":
                docs, queries, qrels = [], [], []
                for _ in range(QUOTAS["cd"]):
                    members = [f"C{next(cui):07d}" for _ in range(DISTRACTORS + 1)]
                    for c in members:
                        docs.append({"_id": c, "title": " ".join(words.sample(rng.randint(2, 4))),
                                     "text": " ".join(words.sample(rng.randint(15, 40))) + ". Synonyms: "
                                             + "; ".join(" ".join(words.sample(rng.randint(1, 3))) for _ in range(rng.randint(0, 5))) + "."})
                    target = members[0]
                    qid = f"cd-{lang}-{target}"
                    name = docs[-DISTRACTORS - 1]["title"]
                    text = name if lang == "en" else _cjk(rng, rng.randint(1, 3), lang == "ja")[:-4] if lang in ("zh", "ja") else _foreign(rng, lang, name.split())[:-2]
                    queries.append({"_id": qid, "text": text, "lang": lang, "cuis": [target], "pivot_text": name,
                                    "provenance": "terminology", "split": "test"})
                    qrels.append((qid, target))
                    sets.append({"set_id": qid, "lang": lang, "tier": rng.choice(["easy", "medium", "hard"]),
                                 "target_cui": target, "distractor_cuis": sorted(members[1:])})
                docs.sort(key=lambda r: r["_id"])
            else:
                docs, queries, qrels = corpora[task], [], []
                for i in range(QUOTAS[task]):
                    rel = rng.choice(docs)
                    qid = f"{task}-{lang}-{i:05d}"
                    queries.append({"_id": qid, "text": _query(rng, words, lang, rel["text"]), "lang": lang,
                                    "cuis": [f"C{next(cui):07d}"], "pivot_text": None, "provenance": "native", "split": "test"})
                    qrels.append((qid, rel["_id"]))
            _write_jsonl(d / "corpus.jsonl", docs)
            _write_jsonl(d / "queries.jsonl", queries)
            (d / "qrels").mkdir(parents=True, exist_ok=True)
            (d / "qrels" / "test.tsv").write_text(HEADER + "".join(f"{q}\t{p}\t1\n" for q, p in sorted(qrels)), encoding="utf-8")
            cells[f"{task}/{lang}"] = {"queries": len(queries), "documents": len(docs), "qrels": len(qrels)}
            n_queries += len(queries)
    _write_jsonl(out / "cd" / "confusion_sets.jsonl", sorted(sets, key=lambda r: r["set_id"]))
    manifest = {"version": "0.0.0-bench", "build_id": hashlib.sha256(f"bench-{seed}".encode()).hexdigest(),
                "config": {"languages": LANGS}, "languages": registry, "cells": cells}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
    seal(out)
    return {"queries": n_queries, "xqa_passages": XQA_PASSAGES, "evidence_passages": EVIDENCE_PASSAGES}


def seal(out: Path) -> None:
    """List every file with its sha256 in the manifest, as a build does: evaluate scores only
    a release whose files match their manifest."""
    path = out / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["files"] = {p.relative_to(out).as_posix(): {"sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                                                         "bytes": p.stat().st_size}
                         for p in sorted(out.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")


def _registry() -> dict:
    from schemas.config import load_registry

    reg = load_registry(ROOT / "configs" / "languages.toml")
    return {c: reg[c].model_dump(mode="json") for c in LANGS}


def _measure(release: Path, systems: list[str], out: Path, cache: Path, threads: int) -> dict:
    from tasks.evaluation.stage import evaluate_release

    t0, c0 = time.perf_counter(), time.process_time()
    marks: list[tuple[float, str]] = []
    res = evaluate_release(release, systems, out, cache_dir=cache, threads=threads,
                           progress=lambda m: marks.append((time.perf_counter() - t0, m)))
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"res": res, "marks": marks, "wall": total, "cpu": cpu}


def main() -> None:
    import shutil
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "eval-paper")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--release", type=Path, help="an existing release (e.g. releases/0.1.0-real) instead of the synthetic one")
    ap.add_argument("-r", "--retriever", action="append", help="systems (default: bm25; 'default' for evaluate's four)")
    ap.add_argument("--threads", type=int, default=0, help="0: the cores this process may use")
    ap.add_argument("--warm", action="store_true", help="run twice on one embedding cache; report the second run too")
    args = ap.parse_args()
    from tasks.evaluation.stage import available_cores
    from tasks.evaluation.systems import DEFAULT_SYSTEMS

    systems = [s for r in (args.retriever or ["bm25"]) for s in (DEFAULT_SYSTEMS if r == "default" else [r])]
    release = args.release or args.out / "release"
    if args.release is None and not (release / "manifest.json").exists():
        t = time.perf_counter()
        counts = generate(release, args.seed)
        print(f"generated {release}: {counts} in {time.perf_counter() - t:.1f} s (not timed below)")
    elif args.release is None and "files" not in json.loads((release / "manifest.json").read_text()):
        seal(release)  # generated before evaluate checked a release against its manifest
    threads = args.threads or available_cores()
    cache = Path(tempfile.mkdtemp(prefix="bench-embeddings-"))  # cold: an empty embedding cache
    try:
        runs = [("cold", _measure(release, systems, args.out / "results", cache, threads))]
        if args.warm:
            runs.append(("warm", _measure(release, systems, args.out / "results-warm", cache, threads)))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    for label, run in runs:
        print(f"{label}:")
        for t, m in run["marks"]:
            if "encoded" not in m or m.split(" ")[-1] in ("corpus", "queries") and "/" in m:
                print(f"  {t:7.1f} s  {m}")
    res = runs[0][1]["res"]
    first = res.retrievers[0].name
    n = sum(c.queries for c in res.cells if c.metrics is not None and c.retriever == first and c.query_set == "native")
    pivots = sum(c.queries for c in res.cells if c.metrics is not None and c.retriever == first and c.query_set == "pivot")
    docs = {c.lang + c.task: c.documents for c in res.cells if c.retriever == res.retrievers[0].name}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for label, run in runs:
        print(f"{label}: {', '.join(systems)} over {n} queries and {pivots} pivot queries of {release}: {run['wall']:.1f} s wall, "
              f"{run['cpu']:.1f} s CPU, {threads} threads, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"peak RSS of the process {rss:,.0f} MB; {len(docs)} cells")


if __name__ == "__main__":
    main()
