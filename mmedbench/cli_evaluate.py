"""`mmedbench evaluate` (a Typer command function, registered in mmedbench/cli.py).

Scores a release with BM25 and/or dense retrievers, and/or the TREC run files of any
system (`--run NAME=DIR`); writes results.json, results.md, TREC runs and qrels, and
pictures. A user's mistake (no release, a model path that is not a local model, an unknown
split, a malformed run file) prints one line `error: ...` (one per malformed run file) and
exits 2. Never imports Prefect; never downloads.
"""
from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from common.errors import InputError


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


THREADS_PER_CORE = 4  # --threads above this many per core only oversubscribes (and a huge count exhausts memory)


def _cores() -> int:
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def threads_in_range(value: int) -> int:
    """--threads: 0 (the cores) or 1 to 4 x the cores this process may use, checked before
    any model loads (100000 threads failed as a model that "cannot be loaded")."""
    top = THREADS_PER_CORE * _cores()
    if value != 0 and not 1 <= value <= top:
        raise typer.BadParameter(f"expected 0 (the cores this process may use) or 1 to {top} "
                                 f"({THREADS_PER_CORE} x its {_cores()} cores), got {value}")
    return value


def evaluate(
    release: Path = typer.Argument(..., help="A release folder, e.g. releases/0.1.0"),
    retriever: List[str] = typer.Option([], "--retriever", "-r",
                                        help="A built-in system (bm25, minilm, use-m, me5-small), hybrid:A+B (reciprocal "
                                             "rank fusion of two systems' runs), or dense:MODEL_DIR / dense:NAME=MODEL_DIR "
                                             "(a local sentence-transformers folder; nothing downloads; @english or @multilingual after it "
                                             "declares what it was trained for, for the gap and separation tables). Repeat for several. "
                                             "Default: one system of each family (bm25, minilm, use-m, hybrid:bm25+use-m), "
                                             "unless --run is given."),
    run: List[str] = typer.Option([], "--run",
                                  help="NAME=DIR: score another system's TREC run files, named <task>-<lang>.trec and "
                                       "<task>-<lang>-pivot.trec (the pivot control). Repeat for several."),
    split: List[str] = typer.Option(["test"], "--split", help="Split to score: test or dev. Repeat for both."),
    out: Path = typer.Option(Path("results"), "--out", "-o", help="Results folder (results.json, results.md, runs/, qrels/, figures/)."),
    cache_dir: Path = typer.Option(Path(".mmedbench-cache/embeddings"), "--cache-dir",
                                   help="Cache of dense embeddings, by content hash."),
    threads: int = typer.Option(0, "--threads", callback=threads_in_range,
                                help="Threads for the encoders (torch, BLAS, OpenMP): 0 (the cores this process may "
                                     "use) or 1 to 4 x those cores."),
    strict: bool = typer.Option(False, "--strict", help="A --run file that does not fit the release (a line naming a "
                                                        "query or document it does not have, an empty file) is an "
                                                        "error, not a line of the report."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
) -> None:
    """Score a release: nDCG@10, Recall@100, MRR@10 per cell with intervals, the language gap on the same items, tiers, runs, pictures."""
    from common.interrupts import handled

    with handled(f"{out} holds no complete new results; run the same command again"):
        _evaluate(release, retriever, run, split, out, cache_dir, threads, quiet, strict)


def _evaluate(release: Path, retriever: List[str], run: List[str], split: List[str], out: Path, cache_dir: Path,
              threads: int, quiet: bool, strict: bool = False) -> None:
    from common import paths
    from common.outputs import output_folder
    from tasks.evaluation.external import parse_run_spec
    from tasks.evaluation.outdir import results_folder
    from tasks.evaluation.retrievers import parse_retrievers
    from tasks.evaluation.stage import available_cores, evaluate_release, release_info
    from tasks.evaluation.systems import DEFAULT_SYSTEMS

    try:
        info = release_info(release)
        if paths.resolve(out, "--out").is_relative_to(paths.resolve(release, "RELEASE_DIR")):
            raise InputError(out, "is inside the release folder; a published release is never modified (choose another --out)")
        output_folder(out, "--out")
        output_folder(cache_dir, "--cache-dir")
        runs = [parse_run_spec(r) for r in run]
        wanted = retriever or ([] if run else list(DEFAULT_SYSTEMS))
        specs = parse_retrievers(wanted, others=tuple(r.name for r in runs)) if wanted else []
        progress = None if quiet else (lambda m: typer.echo(m, err=True))
        told: list = []
        with results_folder(out) as building:  # the user's files in --out are never deleted
            res = evaluate_release(release, specs, building, split, info=info, cache_dir=cache_dir, progress=progress,
                                   runs=runs, threads=threads or available_cores(), strict=strict,
                                   run_report=lambda *a: told.append(a))
    except InputError as exc:
        _fail(str(exc), exc.exit_code)  # 1: the release fails its hash check
    except OSError as exc:
        from common.errors import disk_full, is_disk_full

        if is_disk_full(exc):  # the results folder's disk, not the release (the error may name no file)
            _fail(str(disk_full(exc, f"writing results (nothing in {out} changed)", folder=out)))
        _fail(f"{exc.filename or release}: {exc.strerror or exc}")
    filled = sum(1 for c in res.cells if c.metrics is not None)
    typer.echo(f"evaluated release {res.release} with {', '.join(r.name for r in res.retrievers)}: "
               f"{filled} scored cell-splits, {len(res.cells) - filled} empty; results in {out}/results.md")
    for m in res.macro:
        if m.over == "task":
            typer.echo(f"  {m.retriever:24s} {m.split:4s} {m.key:9s} nDCG@10={m.metrics.ndcg_at_10:.3f} "
                       f"Recall@100={m.metrics.recall_at_100:.3f} MRR@10={m.metrics.mrr_at_10:.3f} ({len(m.cells)} cells)")
    for g in res.gap_means:
        if g.over == "all":
            typer.echo(f"  {g.retriever:24s} {g.split:4s} language gap (pivot - native nDCG@10) {g.gap:+.3f} "
                       f"[{g.interval.low:+.3f}, {g.interval.high:+.3f}] over {len(g.cells)} cells with pivots")
    missing = sum(c.missing_queries for c in res.cells if c.retriever in {r.name for r in res.retrievers if r.kind == "run"})
    if missing:
        typer.echo(f"  run files: {missing} queries had no line in their run and scored 0 (per cell in results.md)")
    for external, reports in told:
        print_run_report(external, reports)


def print_run_report(external, reports) -> None:
    """Which --run files were read for which cells, and what in them does not fit the release."""
    for ext in external:
        mine = reports[ext.spec.name]
        unfit = sum(1 for r in mine if r.problems())
        typer.echo(f"  run {ext.spec.name} ({ext.spec.directory}): {len(mine)} files read"
                   + (f", {unfit} not fitting the release (--strict refuses them)" if unfit else ""))
        for r in mine:
            typer.echo(f"    {r.summary()}")
        for name in ext.ignored:
            typer.echo(f"    {name}: not read (no cell of this release has that name)")
