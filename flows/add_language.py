"""add_language_flow: add languages to a published release, by configuration alone.

Only the new languages' cells are built; every existing cell is carried over byte for
byte, its key concepts and queries stay owned (zero overlap holds across old and new
cells), and upstream stages come from the cache. The result is a new minor version whose
manifest lists what changed.
"""
from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from flows.build_release import Counter, _StageInputError, run_stages
from schemas.config import load_config
from common.errors import InputError, error_result
from common.interrupts import take_signals_back
from flows.inputs import input_files, next_minor, plan_addition
from tasks.release.stage import assemble_release
from flows import progress

assemble_release = progress.stepped("release", assemble_release)  # a progress line when written


@flow(name="add_language", log_prints=False, validate_parameters=False)
def add_language_flow(base_release: str, config_path: str, version: str | None = None,
                      release_dir: str | None = None, work_dir: str | None = None) -> dict:
    take_signals_back()  # Prefect's flow run took SIGTERM; the command's Ctrl-C/SIGTERM handling stops everything
    logger = get_run_logger()
    base = Path(base_release).resolve()
    loaded = load_config(config_path)
    cfg = loaded.config
    try:
        manifest, new = plan_addition(base, cfg.languages)
    except InputError as exc:
        return error_result(exc)
    inputs = input_files(loaded)
    work = str(Path(work_dir).resolve() if work_dir else loaded.resolve(cfg.work_dir))
    version = version or next_minor(manifest["version"])
    release_root = Path(release_dir) if release_dir else base.parent
    existed = (release_root / version).exists()  # one that appears while we build is another run's
    runs = Counter()
    try:
        vocab, src, alloc = run_stages(loaded, work, runs, new, base_release=str(base))
    except _StageInputError as exc:
        return {"error": str(exc)}
    logger.info("task runs: %d, cached: %d", runs.runs, runs.cached)
    try:
        result = assemble_release(loaded, inputs, vocab, src, alloc, version, release_root, base=base,
                                  new_languages=new, existed_at_start=existed)
    except InputError as exc:
        return error_result(exc)
    result.update(task_runs=runs.runs, cached=runs.cached, added=new)
    return result
