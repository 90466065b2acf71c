"""An independent check of `mmedbench leaderboard`: from the evaluation folders' TREC runs and
qrels alone, with pytrec_eval, numpy and scipy (no project code), recompute every system's
macro nDCG@10, its bootstrap interval, the paired tests, Holm and the rank ranges, and
compare them with leaderboard.json.

    python benchmarks/leaderboard_check.py SITE/leaderboard.json EVALUATION_DIR...

The bootstrap draws differ from the project's (another generator, 10,000 resamples), so
intervals agree within `--tolerance`; the randomization p-values are scipy's own
(permutation_test, paired sign flips), so a pair whose adjusted p lies within 0.01 of
alpha is reported as borderline, not as a mismatch.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pytrec_eval
from scipy import stats

ALPHA = 0.05


def read_qrels(path: Path) -> dict:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        q, _zero, d, r = line.split()
        out.setdefault(q, {})[d] = int(r)
    return out


def read_run(path: Path) -> dict:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q, _q0, d, _rank, score, _tag = line.split()
            out.setdefault(q, {})[d] = float(score)
    return out


def per_query_ndcg(qrels: dict, run: dict) -> dict[str, float]:
    got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return {q: got.get(q, {}).get("ndcg_cut_10", 0.0) for q in sorted(qrels)}  # trec_eval -c


def systems_of(folder: Path, split: str) -> dict[str, dict[str, dict[str, float]]]:
    res = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    out: dict[str, dict] = {r["name"]: {} for r in res["retrievers"]}
    for c in res["cells"]:
        if c["split"] != split or c.get("query_set", "native") != "native" or c["metrics"] is None:
            continue
        qrels = read_qrels(folder / "qrels" / f"{c['task']}-{c['lang']}.{split}.qrels")
        out[c["retriever"]][f"{c['task']}/{c['lang']}"] = per_query_ndcg(qrels, read_run(folder / c["run"]))
    return out


def holm(p: list[float]) -> list[float]:
    order = np.argsort(p, kind="stable")
    adj, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adj[i] = running
    return adj


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("leaderboard", type=Path)
    ap.add_argument("folders", type=Path, nargs="+")
    ap.add_argument("--tolerance", type=float, default=0.01)
    args = ap.parse_args()
    board = json.loads(args.leaderboard.read_text(encoding="utf-8"))
    split = board["split"]
    systems: dict[str, dict] = {}
    for f in args.folders:
        systems |= systems_of(f, split)
    cells = [c for c in sorted({c for s in systems.values() for c in s}) if all(c in s for s in systems.values())]
    assert sorted(cells) == sorted(board["cells"]), (cells, board["cells"])
    names = sorted(systems)
    rng = np.random.default_rng(12345)
    macro, lows, highs, weighted = {}, {}, {}, {}
    draws = {c: rng.integers(0, len(systems[names[0]][c]), size=(10000, len(systems[names[0]][c]))) for c in cells}
    for n in names:
        vecs = [np.array([systems[n][c][q] for q in sorted(systems[n][c])]) for c in cells]
        macro[n] = float(np.mean([v.mean() for v in vecs]))
        boot = np.mean([v[draws[c]].mean(axis=1) for v, c in zip(vecs, cells)], axis=0)
        lows[n], highs[n] = np.percentile(boot, [2.5, 97.5])
        weighted[n] = np.concatenate([v / (len(cells) * len(v)) for v in vecs])
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    raw = []
    for a, b in pairs:
        r = stats.permutation_test((weighted[a], weighted[b]), lambda x, y, axis: np.sum(x - y, axis=axis),
                                   permutation_type="samples", n_resamples=9999, alternative="two-sided",
                                   vectorized=True, random_state=7)
        raw.append(float(r.pvalue))
    adj = holm(raw)
    better = {n: 0 for n in names}
    worse = {n: 0 for n in names}
    borderline = []
    for (a, b), p in zip(pairs, adj):
        if abs(p - ALPHA) < 0.01:
            borderline.append((a, b, p))
        if p < ALPHA:
            top, bottom = (a, b) if macro[a] > macro[b] else (b, a)
            better[bottom] += 1
            worse[top] += 1
    rows = {s["system"]: s for s in board["systems"]}
    bad = 0
    print(f"{'system':24s} {'macro':>8s} {'board':>8s} {'interval (check)':>20s} {'interval (board)':>20s} range/board")
    for n in sorted(names, key=lambda n: -macro[n]):
        m = rows[n]["macro"]
        rng_label = f"{1 + better[n]}" if 1 + better[n] == len(names) - worse[n] else f"{1 + better[n]}-{len(names) - worse[n]}"
        ok = (abs(macro[n] - m["score"]) < 1e-6 and abs(lows[n] - m["interval"]["low"]) <= args.tolerance
              and abs(highs[n] - m["interval"]["high"]) <= args.tolerance and rng_label == m["rank"])
        bad += not ok
        print(f"{n:24s} {macro[n]:8.4f} {m['score']:8.4f} [{lows[n]:.3f}, {highs[n]:.3f}]     "
              f"[{m['interval']['low']:.3f}, {m['interval']['high']:.3f}]     {rng_label}/{m['rank']} {'ok' if ok else 'MISMATCH'}")
    board_pairs = {(p["a"], p["b"]): p for p in board["pairs"]}
    for (a, b), p, pa in zip(pairs, raw, adj):
        bp = board_pairs[(a, b)]
        print(f"  {a} vs {b}: p {p:.4f} (board {bp['p_value']:.4f}), Holm {pa:.4f} (board {bp['p_adjusted']:.4f}), "
              f"significant {pa < ALPHA} (board {bp['significant']})")
    for a, b, p in borderline:
        print(f"  borderline: {a} vs {b}, adjusted p {p:.4f} within 0.01 of alpha")
    print("all match" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
