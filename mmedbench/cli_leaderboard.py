"""`mmedbench leaderboard` (a Typer command function, registered in mmedbench/cli.py).

Reads evaluation folders (`mmedbench evaluate --out`) of one release and submissions'
metadata files, and writes the leaderboard: a static page (index.html, style.css, sort.js),
leaderboard.md, leaderboard.json and items.csv. A user's mistake (folders of two releases,
a metadata file with a wrong field, a changed run file) prints one line per mistake and
exits 2, having written nothing. Never imports Prefect; never downloads.
"""
from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from common.errors import InputError


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def leaderboard(
    evaluations: List[Path] = typer.Argument(..., help="Evaluation folders (mmedbench evaluate --out) of one release: "
                                                       "built-in systems and submitted runs."),
    submission: List[Path] = typer.Option([], "--submission", "-s",
                                          help="A submitted system's metadata (submission.toml: run, name, family, coverage, "
                                               "link, licence). Repeat for several."),
    split: str = typer.Option("test", "--split", help="The split to rank: test or dev."),
    out: Path = typer.Option(Path("leaderboard"), "--out", "-o",
                             help="Folder of the page (index.html, style.css, sort.js), leaderboard.md, leaderboard.json "
                                  "and items.csv."),
) -> None:
    """Rank one release's systems from evaluation folders: rank ranges, intervals, per cell and language, the items that tell systems apart; a static page plus Markdown and JSON."""
    from common.interrupts import handled

    with handled(f"{out} holds no new leaderboard; run the same command again"):
        _leaderboard(evaluations, submission, split, out)


def _leaderboard(evaluations: List[Path], submissions: List[Path], split: str, out: Path) -> None:
    from common.outputs import output_folder
    from schemas.records import SPLITS
    from tasks.evaluation.outdir import results_folder
    from tasks.leaderboard.outputs import read_evaluation
    from tasks.leaderboard.site import write_site
    from tasks.leaderboard.submission import SubmissionErrors, read_submission
    from tasks.leaderboard.table import build

    try:
        if split not in SPLITS:
            raise InputError("--split", f"expected test or dev, found {split!r}")
        output_folder(out, "--out")
        for folder in evaluations:
            if out.resolve() == folder.resolve():
                raise InputError(out, "is an evaluation folder given to read; choose another --out", field="--out")
        systems, first = [], None
        for folder in evaluations:
            got = read_evaluation(folder, split)
            build_id = got[0].results.build_id if got else None
            if first is None:
                first = (folder, got[0].results) if got else None
            elif build_id != first[1].build_id:
                raise InputError(folder, f"evaluates release {got[0].results.release} (build {build_id[:12]}), "
                                         f"{first[0]} release {first[1].release} (build {first[1].build_id[:12]}): "
                                         "a leaderboard ranks one release")
            for s in got:
                if s.retriever.name in {x.retriever.name for x in systems}:
                    other = next(x.evaluation for x in systems if x.retriever.name == s.retriever.name)
                    raise InputError(folder, f"system {s.retriever.name!r} is also in {other}: each system once")
            systems += got
        if not systems:
            raise InputError(evaluations[0] if evaluations else "EVALUATIONS", "no system to rank")
        metas, errors = {}, []
        for path in submissions:
            try:
                meta = read_submission(path)
            except SubmissionErrors as exc:
                errors += exc.errors
                continue
            if meta.run not in {s.retriever.name for s in systems}:
                errors.append(InputError(path, f"names {meta.run!r}, no system of the evaluation folders given", field="run"))
            elif meta.run in metas:
                errors.append(InputError(path, f"a second metadata file for {meta.run!r}", field="run"))
            else:
                metas[meta.run] = meta
        if errors:
            raise SubmissionErrors(errors)
        board, items = build(systems, metas, split)
        with results_folder(out, "leaderboard") as building:
            write_site(board, items, building)
    except InputError as exc:
        _fail(str(exc), exc.exit_code)
    except OSError as exc:
        from common.errors import disk_full, is_disk_full

        if is_disk_full(exc):
            _fail(str(disk_full(exc, f"writing the leaderboard (nothing in {out} changed)", folder=out)))
        _fail(f"{exc.filename or out}: {exc.strerror or exc}")
    typer.echo(f"leaderboard of release {board.release}: {len(board.systems)} systems over {len(board.cells)} cells; "
               f"{out}/index.html")
    for s in board.systems:
        ci = "" if s.macro.interval is None else f" [{s.macro.interval.low:.3f}, {s.macro.interval.high:.3f}]"
        typer.echo(f"  {s.macro.rank:5s} {s.system:24s} nDCG@10 {s.macro.score:.3f}{ci}")
