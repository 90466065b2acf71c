"""The QuickUMLS index pre-builder: a spawned helper process that builds the large missing
indexes, largest first, while this process builds the other grounders (and then waits for
each of those indexes instead of building it).
"""
from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pyarrow.parquet as pq

from common.workers import reset_signals
from schemas.config import Language
from tasks.grounding.grounders import GROUNDERS, GrounderSpec
from tasks.grounding.quickumls_index import index_built, index_dir, lock_ahead, quickumls_index


# an index of fewer atoms builds in seconds: not worth a process (about two seconds of imports)
PREBUILD_MIN_ATOMS = 200_000


def _build_indexes(jobs: list[tuple[str, str, str]], ready) -> None:
    """In a helper process: take the builder lock of every index in `jobs`, say so
    (`ready`), then build them in turn, each lock released once its index is published. A
    failure is left to the parent, which builds (and reports on) an index it finds missing:
    exiting releases the locks."""
    reset_signals()  # and it dies with the parent
    try:
        langs = [(Path(atoms), Language.model_validate_json(lang_json), Path(root)) for atoms, lang_json, root in jobs]
        for atoms, lang, root in langs:
            lock_ahead(index_dir(atoms, lang, root))
        ready.set()
        for atoms, lang, root in langs:
            quickumls_index(atoms, lang, root)
    except BaseException:  # noqa: BLE001
        os._exit(1)


def prebuild_indexes(keys: dict[str, GrounderSpec], workers: int, min_atoms: int | None = None):
    """Start a process that builds every missing QuickUMLS index of these languages with at
    least `min_atoms` atoms (PREBUILD_MIN_ATOMS), largest first: the English index is the
    largest single piece of grounder setup (a minute of CPU at paper scale, seven at full),
    and an index build leaves its transient memory (GBs at full scale) with the process that
    built it, which for the build's process would last through grounding and allocation.
    The helper has locked them all when this returns, so this process, building the other
    grounders and then these in the helper's order, waits for each index instead of building
    it. Returns the process and the codes it builds, in order; (None, ()) with one worker
    or nothing worth a process."""
    if workers < 2:
        return None, ()
    todo = []
    for code, spec in sorted(keys.items()):
        if not spec.uses_quickumls() or GROUNDERS.built(spec):
            continue
        rows = pq.ParquetFile(spec.atoms_path).metadata.num_rows
        if (rows >= (PREBUILD_MIN_ATOMS if min_atoms is None else min_atoms)
                and not index_built(Path(spec.atoms_path), spec.language(), Path(spec.cache_root))):
            todo.append((-rows, code, (spec.atoms_path, spec.lang_json, spec.cache_root)))
    if not todo:
        return None, ()
    todo.sort()
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_build_indexes, args=([job for _, _, job in todo], ready), daemon=True)
    proc.start()
    while not ready.wait(0.1) and proc.is_alive():  # until it holds every lock (or failed)
        pass
    return proc, tuple(code for _, code, _ in todo)


def stop_helper(proc, failed: bool) -> None:
    """The index helper has published every index it builds by now (each was waited for)
    and is exiting: let it; on an error or interrupt it is stopped instead."""
    if not failed:
        proc.join(60)
    if proc.is_alive():
        proc.terminate()
    proc.join()
