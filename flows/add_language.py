"""add_language_flow: add languages to a published release, by configuration alone.

Only the new languages' cells are built; every existing cell is carried over byte for
byte, its key concepts and queries stay owned (zero overlap holds across old and new
cells), and upstream stages come from the cache. The result is a new minor version whose
manifest lists what changed. The stages are the build's (flows/build_release.py), asked
for the new languages' cells around the base release.
"""
from __future__ import annotations

from pathlib import Path

from prefect import flow

from common.errors import InputError
from common.interrupts import take_signals_back
from flows.build_release import build_request, run_build
from flows.inputs import next_minor, plan_addition
from schemas.config import load_config


@flow(name="add_language", log_prints=False, validate_parameters=False)
def add_language_flow(base_release: str, config_path: str, version: str | None = None,
                      release_dir: str | None = None, work_dir: str | None = None) -> dict | InputError:
    take_signals_back()  # Prefect's flow run took SIGTERM; the command's Ctrl-C/SIGTERM handling stops everything
    base = Path(base_release).resolve()
    try:
        loaded = load_config(config_path)
        manifest, new = plan_addition(base, loaded.config.languages)
        version = version or next_minor(manifest["version"])
        release_root = Path(release_dir) if release_dir else base.parent
        request = build_request(loaded, work_dir, version, release_root, targets=new, base_release=base)
        result = run_build(loaded, request)
    except InputError as exc:
        return exc
    result.update(added=new)
    return result
