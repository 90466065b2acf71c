"""`mmedbench translate`, `mmedbench tmx-export`, `mmedbench tmx-import` (Typer command functions).

Registered in mmedbench/cli.py. Like the other commands: a user's mistake prints one
line `error: ...` and exits 2. `translate` exits 1 when some texts failed (timeouts,
HTTP errors: run it again to retry them) and 0 otherwise; rejections by the gates are
results, not failures. Nothing here imports Prefect.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import List, Optional

import typer

from common.errors import InputError
from mmedbench.ranges import number_in

DEFAULT_CONFIG = "configs/sample.toml"
DEFAULT_MEMORY = "translations/memory.jsonl"


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def _user_errors(path: Path) -> Iterator[None]:
    """A user's mistake (InputError) or a file error (OSError, named by its file or else by
    `path`) becomes the one line `error: ...` and exit 2."""
    try:
        yield
    except InputError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{exc.filename or path}: {exc.strerror or exc}")


def _read_texts(path: Path) -> list[str]:
    """One text per line, UTF-8; line ends (LF or CRLF) are not part of the text."""
    if not path.is_file():
        raise InputError(path, "file not found")
    raw = path.read_bytes()
    try:
        data = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(path, f"not UTF-8 (byte {exc.start})", line) from None
    return [line.removesuffix("\r") for line in data.split("\n")]


def translate(
    engine: str = typer.Option(..., "--engine", help="MT engine: google, deepl, microsoft, mymemory or libre."),
    url: Optional[str] = typer.Option(None, "--url", help="Base URL of a self-hosted LibreTranslate server (libre only)."),
    source: str = typer.Option(..., "--source", help="Language code of the texts (from the registry)."),
    target: str = typer.Option(..., "--target", help="Language code to translate into."),
    file: Path = typer.Argument(..., help="Texts to translate, one per line (UTF-8)."),
    memory: Path = typer.Option(Path(DEFAULT_MEMORY), "--memory", help="Translation-memory store to append to."),
    config: Path = typer.Option(Path(DEFAULT_CONFIG), "--config", "-c", help="Build configuration (for its language registry)."),
    timeout: float = typer.Option(30.0, "--timeout", callback=number_in(0.1, 600, "seconds"),
                                 help="Deadline of each HTTP request, in seconds (0.1 to 600)."),
    min_interval: Optional[float] = typer.Option(None, "--min-interval", callback=number_in(0, 3600, "seconds"),
                                                 help="Seconds between two requests, 0 to 3600 (default: per engine)."),
    max_attempts: int = typer.Option(4, "--max-attempts", callback=number_in(1, 20, "an integer"),
                                      help="Attempts per text on 429, 5xx, timeouts and connection errors (1 to 20)."),
    retry_rejected: bool = typer.Option(False, "--retry-rejected", help="Send again texts whose translation the gates rejected in an earlier run."),
    back_translation_min: float = typer.Option(0.0, "--back-translation-min", callback=number_in(0, 1, "a similarity"),
                                               help="Translate back and reject below this round-trip similarity, 0 to 1 (0: off)."),
) -> None:
    """Machine-translate texts into the translation memory; texts already there are not sent again.

    API keys come from DEEPL_API_KEY, MICROSOFT_TRANSLATOR_KEY, LIBRETRANSLATE_API_KEY."""
    from schemas.config import load_config
    from tasks.translation.engines import RetryPolicy, open_engine
    from tasks.translation.tm_store import TMStore, translate_texts

    try:
        loaded = load_config(config)
        registry = loaded.registry
        reg_name = loaded.resolve(loaded.config.registry).name
        for code, opt in ((source, "--source"), (target, "--target")):
            if code not in registry:
                raise InputError(opt, f"unknown language code {code!r} (registry {reg_name} has: {', '.join(sorted(registry))})")
        from common import paths

        if os.path.lexists(file):  # a missing one: "file not found" below
            paths.input_file(file, "FILE")  # a FIFO would block the read, a loop raise
        if os.path.lexists(memory):
            paths.input_file(memory, "--memory", what="translation memory")
        texts = _read_texts(file)
        tcfg = loaded.config.translation
        if url is None and tcfg.url and tcfg.engine == engine:
            url = tcfg.url
        eng = open_engine(engine, url, timeout=timeout, retry=RetryPolicy(max_attempts=max_attempts), min_interval=min_interval)
        with eng, TMStore(memory) as store:
            if store.dropped_bytes:
                typer.echo(f"note: {memory}: dropped an incomplete last line ({store.dropped_bytes} bytes) "
                           "left by an interrupted run", err=True)
            counts = translate_texts(store, eng, texts, source, target, registry, retry_rejected=retry_rejected,
                                     back_translation_min=back_translation_min)
    except InputError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{exc.filename or memory}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        typer.echo("interrupted: every accepted translation so far is saved; run the same command again to resume", err=True)
        raise typer.Exit(130)
    typer.echo(f"translate {source}->{target} with {engine}: {counts.summary()}; memory {memory}")
    raise typer.Exit(1 if counts.failed else 0)


def tmx_export(
    memory: Optional[List[Path]] = typer.Argument(None, help=f"Translation-memory files (default: {DEFAULT_MEMORY})."),
    out: Path = typer.Option(..., "--out", "-o", help="TMX 1.4b file to write."),
) -> None:
    """Export translation memories to TMX 1.4b, for post-editing in a CAT tool."""
    from tasks.translation.tmx import export_tmx

    paths = list(memory) if memory else [Path(DEFAULT_MEMORY)]
    with _user_errors(out):
        counts = export_tmx(paths, out)
    skipped = "".join(f", skipped {n} ({r})" for r, n in sorted(counts.skipped.items()))
    typer.echo(f"exported {counts.written} translation units from {len(paths)} file(s) to {out}{skipped}")


def tmx_import(
    tmx: Path = typer.Argument(..., help="A post-edited TMX file (as written by tmx-export)."),
    memory: Path = typer.Option(Path(DEFAULT_MEMORY), "--memory", help="Translation-memory store to append verified entries to."),
) -> None:
    """Import post-edited translations: changed or marked units become 'machine-translated and verified'."""
    from tasks.translation.tm_store import TMStore
    from tasks.translation.tmx import import_tmx

    with _user_errors(memory):
        if not memory.is_file():
            raise InputError(memory, "file not found (the store the TMX was exported from)")
        with TMStore(memory) as store:
            counts = import_tmx(tmx, store)
    skipped = "".join(f", skipped {n} ({r})" for r, n in sorted(counts.skipped.items()))
    typer.echo(f"imported {tmx}: {counts.units} units, {counts.verified} verified entries appended, "
               f"{counts.unchanged} unchanged, {counts.already} already imported{skipped}")
