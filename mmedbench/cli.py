"""The `mmedbench` command line: build, add-language, evaluate, leaderboard, audit, ground, stats, diff,
translate, tmx-export, tmx-import (README "Commands").

Exit codes (common/errors.py, README "Exit codes"): 0 success, 1 the audit failed, 2 a
user's input error (one line `error: file:line: field: what was expected`), 3 a conflict
with another run; anything else is a bug (70, with the traceback). Commands that need no
orchestration (audit, ground, stats) never import Prefect.
"""
from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import List, Optional

import typer

from common.errors import EXIT_BUG, InputError, disk_full, is_disk_full
from common.gcpolicy import use_batch_schedule
from common.interrupts import handled

class _OneLineErrors(typer.core.TyperGroup):
    """An option's value that is not of its type or out of its range (click's BadParameter,
    raised by the conversion or by a range callback) is one `error:` line naming the option,
    exit 2, as every other bad input: not click's usage box."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:  # typer's own click (typer._click), not the click package
            name = exc.param_hint or (exc.param.opts[0] if exc.param is not None and getattr(exc.param, "opts", None)
                                      else getattr(exc.param, "name", None) or "option")
            if isinstance(name, (list, tuple)):
                name = name[0]
            message = exc.message.rstrip(".")
            typer.echo(f"error: {str(name).strip(chr(39))}: {message}", err=True)
            raise typer.Exit(2) from None


app = typer.Typer(cls=_OneLineErrors, add_completion=False, no_args_is_help=True,
                  help="Build, version and audit the MMed-Bench-IR benchmark.")
DEFAULT_CONFIG = "configs/sample.toml"


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


QUIET_HELP = "No progress lines on stderr (by default one per finished stage or shard, and one every 30 s of silence)."


def _progress(quiet: bool):
    """Progress lines on stderr for the duration of a flow (flows/progress.py)."""
    from flows.progress import for_command, reporting

    return reporting(for_command(quiet))


def _prefect_environment(loaded, work_dir: Optional[Path], verbose: bool) -> Path:
    """Settings Prefect reads at import, so set before any flow module is imported."""
    work = work_dir.resolve() if work_dir else loaded.resolve(loaded.config.work_dir)
    # Prefect's cache records live beside the files they point to: removing the work dir
    # removes both.
    os.environ.setdefault("PREFECT_LOCAL_STORAGE_PATH", str(work / "prefect-results"))
    # Prefect's INFO lines (server start, every task state) drown the one line that matters;
    # the command prints its own summary. --verbose brings them back.
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "WARNING")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect's temporary server shares one SQLite database (~/.prefect) between concurrent
    # runs; on a busy machine two of them starting at once need more than its default 20 s.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    # ... and its bookkeeping may then log tracebacks about events it retries or drops on
    # shutdown, which say nothing about the build: its own log level, unless --verbose.
    os.environ.setdefault("PREFECT_SERVER_LOGGING_LEVEL", "WARNING" if verbose else "CRITICAL")
    _start_prefect_server()
    return work


_SERVER: dict = {}


def _start_prefect_server() -> None:
    """Start the temporary API server Prefect would start on the flow's first API call, now:
    its subprocess takes seconds to import and open its database, and it now does so while
    this process imports the flow and its stages; this process also no longer imports
    Prefect's server package (3.3 s) to start it. The same command and environment as
    Prefect's own (`prefect.server.api.server.SubprocessASGIServer`); the flow is pointed
    at it with `temporary_settings` (`_prefect_server`). A configured server is left alone."""
    import atexit
    import signal
    import socket
    import subprocess

    import prefect
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    # The server never sees a terminal's Ctrl-C (sent to the whole process group): this
    # process stops it (SIGTERM, common/interrupts.py and the exit call below). Caught while
    # still importing, Ctrl-C made its command line print "Aborted!" beside the one line.
    # Blocked, not ignored, here: one that arrives meanwhile stays pending for this process.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        proc = subprocess.Popen(prefect_server_argv(Path(prefect.__file__).parent, port), env=env,
                                preexec_fn=_dies_with(os.getpid()))
    except OSError:
        return  # Prefect starts its own on first use, and says why if it cannot
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    atexit.register(stop)
    _SERVER.update(proc=proc, url=f"http://127.0.0.1:{port}/api")


def prefect_server_argv(prefect_dir: Path, port: int) -> list[str]:
    """Prefect's own command for its temporary API server (SubprocessASGIServer's), on 127.0.0.1."""
    return [sys.executable, "-m", "uvicorn", "--app-dir", str(prefect_dir.parent), "--factory",
            "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "error", "--lifespan", "on"]


def _dies_with(parent: int):
    """A preexec_fn: the child gets SIGTERM when this process ends, however it ends (a C++
    abort or SIGKILL runs no exit call that would stop it). Linux's PR_SET_PDEATHSIG; libc is
    loaded here, before the fork, so the child only calls it."""
    import ctypes
    import signal

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the exit calls stop it as before
        return None

    def set_death_signal() -> None:
        prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the call
            os.kill(os.getpid(), signal.SIGTERM)

    return set_death_signal


def _healthy(url: str, proc, timeout: float) -> bool:
    import time

    import httpx

    deadline = time.monotonic() + timeout
    with httpx.Client() as client:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if client.get(f"{url}/health").status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    return False


def _quiet_shutdown_chatter(verbose: bool) -> None:
    """Prefect's event worker says "Still processing items: N items remaining..." (WARNING)
    while the flow's process exits, most visibly after a build refused in its first second:
    a second line beside the one that matters; and Prefect logs a traceback for each result
    record a full disk stopped (flows/quiet_logs.py). --verbose keeps them."""
    import logging

    if not verbose:
        logging.getLogger("EventsWorker").setLevel(logging.ERROR)
        from flows.quiet_logs import quiet_reported_failures

        quiet_reported_failures()  # a full disk's tracebacks: the command prints its one line


@contextmanager
def _prefect_server():
    """Run the flow against the server `_start_prefect_server` started, once it answers; if
    it did not come up (its port taken meanwhile, say), Prefect starts its own as usual."""
    started = _SERVER.pop("proc", None)
    if started is None:
        yield
        return
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, temporary_settings

    url = _SERVER.pop("url")
    if not _healthy(url, started, PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()):
        yield
        return
    with temporary_settings(updates={PREFECT_API_URL: url}):
        yield


@app.command()
def build(
    config: Path = typer.Option(Path(DEFAULT_CONFIG), "--config", "-c", help="Build configuration (TOML)."),
    version: Optional[str] = typer.Option(None, "--version", help="Release version (default: the config's)."),
    release_dir: Optional[Path] = typer.Option(None, "--release-dir", help="Where releases are written (default: the config's)."),
    work_dir: Optional[Path] = typer.Option(None, "--work-dir", help="Cache of intermediate results (default: the config's)."),
    runner: str = typer.Option("local", "--runner", help="Task runner: 'local' (threads) or 'dask'."),
    address: Optional[str] = typer.Option(None, "--address", help="Dask scheduler address for --runner dask."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Prefect's own log lines."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    evaluate: List[str] = typer.Option([], "--evaluate", help="Score the release with this retriever before its audit "
                                       "(bm25, dense:MODEL_DIR); the card shows the table. Repeatable."),
) -> None:
    """Build a release: ground, allocate, make confusion sets, realize, write and audit."""
    with handled(INTERRUPTED_BUILD):
        _build(config, version, release_dir, work_dir, runner, address, verbose, quiet, evaluate)


INTERRUPTED_BUILD = "nothing was published; the same command resumes from the cache"


def _output_folders(loaded, release_dir: Optional[Path], work_dir: Optional[Path], default_release: Optional[Path] = None) -> None:
    """--release-dir / --work-dir (or the config's release_dir / work_dir) must be folders
    outside any release, writable, with room (common/outputs.py), before Prefect starts."""
    from common.outputs import RELEASE_MIN_FREE, WORK_MIN_FREE, output_folder

    cfg = loaded.config
    if release_dir is not None:
        output_folder(release_dir, "--release-dir", min_free=RELEASE_MIN_FREE)
    elif default_release is None:
        output_folder(loaded.resolve(cfg.release_dir), "release_dir", loaded.path, min_free=RELEASE_MIN_FREE)
    else:  # add-language's default: beside its base
        output_folder(default_release, "--release-dir", min_free=RELEASE_MIN_FREE)
    if work_dir is not None:
        output_folder(work_dir, "--work-dir", min_free=WORK_MIN_FREE)
    else:
        output_folder(loaded.resolve(cfg.work_dir), "work_dir", loaded.path, min_free=WORK_MIN_FREE)


def _build(config: Path, version: Optional[str], release_dir: Optional[Path], work_dir: Optional[Path], runner: str,
           address: Optional[str], verbose: bool, quiet: bool, evaluate: List[str]) -> None:
    try:
        from flows.inputs import input_files as _input_files
        from schemas.config import check_version_option, load_config
        from tasks.release.stage import evaluation_retrievers

        check_version_option(version)
        loaded = load_config(config)  # fail fast, before Prefect starts
        _output_folders(loaded, release_dir, work_dir)
        _input_files(loaded)
        evaluation_retrievers(loaded, evaluate)
    except InputError as exc:
        _fail(str(exc))
    work = _prefect_environment(loaded, work_dir, verbose)
    from flows.build_release import with_runner

    try:
        flow_fn = with_runner(runner, address)
    except InputError as exc:
        _fail(str(exc))
    _quiet_shutdown_chatter(verbose)
    with _prefect_server(), _progress(quiet):
        result = flow_fn(str(config), version, str(release_dir) if release_dir else None,
                                    str(work), evaluate)
    if isinstance(result, InputError):  # what stopped a stage, as the stage raised it
        _fail(str(result), result.exit_code)
    cells = result["cells"]
    typer.echo(f"release {result['release']} {result['status']}; audit passed; "
               f"task runs {result['task_runs']}, cached {result['cached']}")
    for cell in sorted(cells):
        c = cells[cell]
        typer.echo(f"  {cell:14s} queries={c['queries']:<5d} documents={c['documents']:<6d} qrels={c['qrels']}")


@app.command("add-language")
def add_language(
    base: Path = typer.Argument(..., help="The published release to extend, e.g. releases/0.1.0"),
    config: Path = typer.Option(..., "--config", "-c", help="Build configuration listing the base's languages plus the new ones."),
    version: Optional[str] = typer.Option(None, "--version", help="New version (default: the base's next minor)."),
    release_dir: Optional[Path] = typer.Option(None, "--release-dir", help="Where to write it (default: beside the base)."),
    work_dir: Optional[Path] = typer.Option(None, "--work-dir", help="Cache of intermediate results (default: the config's)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Prefect's own log lines."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Add languages to a release: build only their cells, keep every existing cell as is."""
    with handled(INTERRUPTED_BUILD):
        _add_language(base, config, version, release_dir, work_dir, verbose, quiet)


def _add_language(base: Path, config: Path, version: Optional[str], release_dir: Optional[Path], work_dir: Optional[Path],
                  verbose: bool, quiet: bool) -> None:
    try:
        from schemas.config import check_version_option, load_config
        from flows.inputs import input_files, plan_addition

        check_version_option(version)
        loaded = load_config(config)
        _output_folders(loaded, release_dir, work_dir, default_release=base.parent)
        input_files(loaded)
        plan_addition(base, loaded.config.languages)
    except InputError as exc:
        _fail(str(exc))
    work = _prefect_environment(loaded, work_dir, verbose)
    from flows.add_language import add_language_flow

    _quiet_shutdown_chatter(verbose)
    with _prefect_server(), _progress(quiet):
        result = add_language_flow(str(base), str(config), version, str(release_dir) if release_dir else None, str(work))
    if isinstance(result, InputError):
        _fail(str(result), result.exit_code)
    typer.echo(f"release {result['release']} {result['status']} (added {', '.join(result['added'])}); audit passed; "
               f"task runs {result['task_runs']}, cached {result['cached']}")
    for cell in sorted(result["cells"]):
        if cell.split("/")[1] in result["added"]:
            c = result["cells"][cell]
            typer.echo(f"  {cell:14s} queries={c['queries']:<5d} documents={c['documents']:<6d} qrels={c['qrels']}")
    typer.echo("")
    print_diff(base, Path(result["release"]))


@app.command()
def audit(
    release: Path = typer.Argument(..., help="A release folder, e.g. releases/0.1.0"),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the report as JSON here."),
) -> None:
    """Re-run every quality check on a release, using nothing but the release folder."""
    from common.jsonio import atomic_write
    from common.outputs import output_file
    from common.paths import release_folder
    from schemas.records import load_manifest
    from tasks.audit.stage import audit_release, report_markdown

    try:
        if json_out is not None:
            output_file(json_out, "--json")  # before minutes of checks, not after
        release_folder(release)
        load_manifest(release / "manifest.json")  # the audit needs a readable manifest to know what to check
    except InputError as exc:
        _fail(str(exc))
    report = audit_release(release)  # a file it cannot read is a failed check, never an exception
    typer.echo(report_markdown(report), nl=False)
    if json_out:
        with atomic_write(json_out) as fh:
            fh.write(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    raise typer.Exit(0 if report.passed else 1)


def ground_vocabulary(loaded, lang: str) -> Path:
    """The configured vocabulary's folder for `ground` (and benchmarks/grounding_passes.py), built
    once per content by the same reader as the build, for either format (rrf, obo)."""
    from flows.caching import content_key, is_complete, mark_complete
    from umls.configured import build_configured_vocabulary, vocabulary_files

    cfg = loaded.config
    v = cfg.vocabulary
    vpath = loaded.input(v.path, "vocabulary.path", folder=True, what="vocabulary folder")
    codes = sorted(set(cfg.languages) | {lang})
    lat = {loaded.registry[c].umls_lat: c for c in codes}
    work = loaded.resolve(cfg.work_dir)
    code_names = [{**c.model_dump(), "path": str(loaded.input(c.path, f"vocabulary.code_names.{i}.path"))}
                  for i, c in enumerate(v.code_names)]
    name_lists = [{**c.model_dump(), "path": str(loaded.input(c.path, f"vocabulary.name_lists.{i}.path", folder=None))}
                  for i, c in enumerate(v.name_lists)]
    glossaries = [{**c.model_dump(), "path": str(loaded.input(c.path, f"vocabulary.glossaries.{i}.path", folder=None))}
                  for i, c in enumerate(v.glossaries)]
    morphology = {c: loaded.registry[c].morphology for c in codes}
    key = content_key("ground-cli-vocab", {"format": v.format, "lat": lat, "srl": v.max_srl, "roots": v.roots,
                                           "files": {p.relative_to(vpath).as_posix(): str(p) for p in vocabulary_files(v.format, vpath)},
                                           **({"code_names": code_names} if code_names else {}),
                                           **({"name_lists": name_lists, "glossaries": glossaries, "morphology": morphology}
                                              if name_lists or glossaries else {})})
    vdir = work / "ground-cli" / key[:16]
    if not is_complete(vdir):  # never a folder a killed run left half-written
        mark_complete(vdir, build_configured_vocabulary(v.format, vpath, vdir, lat, v.max_srl,
                                                        loaded.registry["en"].preferred_sources, v.roots, code_names,
                                                        name_lists, glossaries, morphology))
    return vdir


@app.command()
def ground(
    lang: str = typer.Option(..., "--lang", help="Language code of the input texts."),
    config: Path = typer.Option(Path(DEFAULT_CONFIG), "--config", "-c"),
    passes: str = typer.Option("string", "--passes", help="Which grounding passes run: string, dense or both (dense: "
                               "use-m's nearest vocabulary name, for spans string matching left, at the config's gates)."),
) -> None:
    """Ground texts from stdin (one per line) to CUIs; one JSON line of mentions per input."""
    from schemas.config import load_config
    from tasks.grounding.grounder import Grounder

    try:
        loaded = load_config(config)
        if lang not in loaded.registry:
            raise InputError(config, f"unknown language code {lang!r} (registry has: {', '.join(sorted(loaded.registry))})", field="--lang")
        if passes not in ("string", "dense", "both"):
            raise InputError("--passes", f"expected string, dense or both, found {passes!r}")
        cfg = loaded.config
        work = loaded.resolve(cfg.work_dir)
        vdir = ground_vocabulary(loaded, lang)
        g = (Grounder(vdir / "atoms.parquet", loaded.registry[lang], work / "indexes", cfg.grounding.quickumls_threshold,
                      cfg.grounding.quickumls_window) if passes != "dense" else None)
        dense = None
        if passes != "string":
            from schemas.parameters import dense_gates
            from tasks.grounding.dense_pass import DensePass

            used = sorted({lang, "en"})
            dense = DensePass({c: str(vdir / "atoms.parquet") for c in used}, {c: loaded.registry[c] for c in used},
                              dense_gates(cfg.grounding), str(work / "indexes"), os.cpu_count() or 1,
                              progress=lambda code, done, total: typer.echo(f"embedding {code} names {done}/{total}", err=True))
    except InputError as exc:
        _fail(str(exc))
    from common.jsonio import undecodable

    out = sys.stdout
    for n, raw in enumerate(sys.stdin.buffer, start=1):
        try:
            text = raw.decode("utf-8").rstrip("\n")
        except UnicodeDecodeError as exc:  # the lines before it were answered already
            _fail(str(undecodable("<stdin>", raw[: exc.start], raw[exc.start], n)))
        out.write(json.dumps({"mentions": _ground_line(g, dense, lang, text)}, ensure_ascii=False) + "\n")
        out.flush()


def _ground_line(grounder, dense, lang: str, text: str) -> list[dict]:
    """A line's mentions from the passes asked for (string: `grounder`, dense: `dense`); a
    line longer than spaCy takes at once (max_length, E088) is grounded in pieces
    (common/longtext.py) and the mentions re-offset into the line."""
    from common.longtext import PIECE_CHARS, pieces

    found = []
    for start, piece in (pieces(text, PIECE_CHARS) if len(text) > PIECE_CHARS else [(0, text)]):
        got = [m.as_dict() for m in grounder.ground(piece)] if grounder is not None else []
        if dense is not None:
            got += dense.span_mentions([(lang, piece)], {(lang, piece): got})[(lang, piece)]
        found += [{**d, "start": d["start"] + start, "end": d["end"] + start} for d in got]
    return sorted(found, key=lambda m: (m["start"], m["end"], m["cui"])) if dense is not None else found


@app.command()
def stats(release: Path = typer.Argument(..., help="A release folder.")) -> None:
    """Print a release's cells, counts and provenance from its manifest."""
    from common.paths import release_folder
    from schemas.records import load_manifest

    try:
        m = load_manifest(release_folder(release) / "manifest.json")
    except InputError as exc:
        _fail(str(exc))
    typer.echo(f"release {m['version']} (build {m['build_id'][:12]}, code {m['code_version']})")
    for cell, c in sorted(m["cells"].items()):
        prov = ", ".join(f"{k}={v}" for k, v in c.get("provenance", {}).items())
        typer.echo(f"  {cell:14s} queries={c['queries']:<5d} documents={c['documents']:<6d} qrels={c['qrels']:<5d} {prov}")
    for reason, n in sorted(m["dropped"].items()):
        typer.echo(f"  dropped: {reason}: {n}")


from mmedbench.cli_translate import tmx_export, tmx_import, translate  # noqa: E402  (no Prefect import)
from mmedbench.cli_diff import diff, print_diff  # noqa: E402

app.command()(translate)
app.command("tmx-export")(tmx_export)
app.command("tmx-import")(tmx_import)
app.command()(diff)

from mmedbench.cli_evaluate import evaluate  # noqa: E402  (no Prefect import)

app.command()(evaluate)

from mmedbench.cli_leaderboard import leaderboard  # noqa: E402  (no Prefect import)

app.command()(leaderboard)


def main() -> None:
    """Run the app; whatever escapes a command still ends in a distinct exit code."""
    use_batch_schedule()
    try:
        app()
    except InputError as exc:  # a user's mistake a command did not turn into its line itself
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:
        if not is_disk_full(exc):
            raise _bug(exc)
        line = disk_full(exc, folder=os.getcwd())
        typer.echo(f"error: {line}", err=True)
        sys.exit(line.exit_code)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        raise _bug(exc)


def _bug(exc: BaseException) -> SystemExit:
    import traceback

    traceback.print_exception(exc)
    typer.echo(f"error: a bug in mmedbench ({type(exc).__name__}); the traceback above says where (exit {EXIT_BUG})", err=True)
    return SystemExit(EXIT_BUG)


if __name__ == "__main__":
    main()
