"""`mmedbench diff OLD NEW`: what changed between two release folders (no Prefect import)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from common.errors import InputError


def print_diff(old: Path, new: Path, json_out: Optional[Path] = None) -> None:
    """Compare two releases, print the Markdown report, optionally write the JSON one."""
    from tasks.diff.render import diff_json, diff_markdown
    from tasks.diff.stage import diff_releases

    report = diff_releases(old, new)
    typer.echo(diff_markdown(report), nl=False)
    if json_out:
        from common.jsonio import atomic_write

        with atomic_write(json_out) as fh:  # never half-written, world-readable
            fh.write(diff_json(report))


def diff(
    old: Path = typer.Argument(..., help="The earlier release folder, e.g. releases/0.1.0"),
    new: Path = typer.Argument(..., help="The later release folder, e.g. releases/0.2.0"),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the report as JSON here."),
) -> None:
    """Show what changed between two releases: cells, counts, queries, documents, qrels, configuration, inputs."""
    from common.outputs import output_file

    try:
        if json_out is not None:
            output_file(json_out, "--json")
        print_diff(old, new, json_out)
    except InputError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
