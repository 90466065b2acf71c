"""The results folder (`mmedbench evaluate --out`, and `mmedbench leaderboard --out`) is the
user's: only what that command wrote there is ever replaced. Each function takes the
command's name (`evaluate` by default): its inventory is `.mmedbench-<command>.json`, and
the file moved in last is `results.json` for evaluate, `index.html` for the leaderboard.

- Evaluate lists what it wrote in the folder's inventory, `.mmedbench-evaluate.json`
  (each file's sha256). A rerun removes those files, and only if unchanged; any other
  file (a user's `runs/x/my.trec`, a results.md the user edited) makes it refuse with one
  line, before anything is written, and nothing is deleted.
- Runs into one folder take turns on a lock file beside it (`.<name>.lock`, an flock:
  it dies with its process).
- Results are written into a build folder beside (`.tmp-<name>-<pid>`) and moved in only
  once complete, results.json last; the inventory is first rewritten to name the old and
  the new files, so a run stopped while moving leaves a folder without results.json whose
  files the next run may remove. Ctrl-C or SIGTERM removes the build folder
  (common/interrupts.py); one a killed run left is removed by the next, under the lock.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common.errors import InputError
from common.interrupts import removed_if_interrupted
from common.jsonio import atomic_write, sha256_file
from common.testhooks import hold

INVENTORY = ".mmedbench-evaluate.json"
LAST = "results.json"  # moved in last: a folder holding it holds complete results
LAST_OF = {"evaluate": LAST, "leaderboard": "index.html"}


def inventory_name(command: str) -> str:
    return f".mmedbench-{command}.json"


def _files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file() or p.is_symlink()}


def _inventory(folder: Path, command: str = "evaluate") -> dict[str, str]:
    """The files `command` wrote into `folder` (relative name -> sha256); {} without an inventory."""
    path = folder / inventory_name(command)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
        files = data["files"]
        if isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            return files
    except (ValueError, KeyError, TypeError):
        pass
    raise InputError(path, f"not an inventory mmedbench {command} wrote (move it away or choose another --out)")


def _write_inventory(folder: Path, files: dict[str, str], complete: bool, command: str = "evaluate") -> None:
    with atomic_write(folder / inventory_name(command)) as fh:
        fh.write(json.dumps({"complete": complete, "files": dict(sorted(files.items())), "written_by": f"mmedbench {command}"},
                            indent=2, sort_keys=True) + "\n")


def ours(folder: Path, command: str = "evaluate") -> dict[str, str]:
    """The files of `folder` that `command` may replace (its inventory's, unchanged); raises
    the one-line InputError if the folder holds anything else. A folder that is not there
    or is empty holds nothing."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError(folder, "is a file; expected a results folder", field="--out")
    if not folder.exists():
        return {}
    listed = _inventory(folder, command)
    present = _files(folder)
    present.pop(inventory_name(command), None)
    foreign = [n for n in present if n not in listed]
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise InputError(folder, f"holds files mmedbench {command} did not write ({foreign[0]}{more}); "
                                 "nothing was deleted: choose an empty or new --out folder")
    for name, path in present.items():
        if path.is_symlink() or sha256_file(path) != listed[name]:
            raise InputError(folder / name, f"changed since mmedbench {command} wrote it; nothing was deleted: "
                                            "move it away or choose another --out folder")
    return {n: listed[n] for n in present}


def _remove(folder: Path, names: list[str]) -> None:
    """Remove `names` (files) and then every folder they leave empty, up to `folder`."""
    parents = set()
    for name in names:
        (folder / name).unlink(missing_ok=True)
        parents |= {p for p in (folder / name).parents if p != folder and folder in p.parents}
    for d in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        try:
            d.rmdir()
        except OSError:  # not empty: something of the user's is in it
            pass


def prepare_out(out_dir: Path) -> None:
    """The folder an evaluation writes into, made ready: created, or emptied of what a
    previous evaluation wrote there (its inventory's files, unchanged); any other file is
    refused with one line and nothing is deleted."""
    out_dir = Path(out_dir)
    old = ours(out_dir)
    _remove(out_dir, sorted(old))
    (out_dir / INVENTORY).unlink(missing_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)


@contextmanager
def _lock(out_dir: Path) -> Iterator[None]:
    """Held while one run writes `out_dir`; another waits (the same dance as the release's
    version lock: the holder unlinks the file before unlocking, a waiter that got an unlinked
    inode tries again)."""
    path = out_dir.parent / f".{out_dir.name}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without locks: the build folder's pid still keeps runs apart
            os.close(fd)
            yield
            return
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        with removed_if_interrupted(path):
            yield
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)


@contextmanager
def results_folder(out_dir: Path, command: str = "evaluate") -> Iterator[Path]:
    """Yield an empty build folder to write results into; on success its files replace
    what `command` wrote in `out_dir` before (see the module), under `out_dir`'s lock. On
    any error `out_dir` is left as it was."""
    out_dir = Path(out_dir).resolve()  # "." or a link: the build folder and the lock go beside the real folder
    ours(out_dir, command)  # refuse at once, before minutes of scoring
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with _lock(out_dir):
        for stale in out_dir.parent.glob(f".tmp-{out_dir.name}-*"):  # a killed run's; none is running (the lock)
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
        build = out_dir.parent / f".tmp-{out_dir.name}-{os.getpid()}"
        build.mkdir()
        with removed_if_interrupted(build):
            try:
                yield build
                _move_in(build, out_dir, command)
            finally:
                shutil.rmtree(build, ignore_errors=True)


def _move_in(build: Path, out_dir: Path, command: str = "evaluate") -> None:
    old = ours(out_dir, command)  # again: the folder may have changed while scoring (another run's turn came first)
    new = {n: sha256_file(p) for n, p in _files(build).items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_inventory(out_dir, old | new, complete=False, command=command)
    _remove(out_dir, sorted(old))
    hold(f"{command}:moving")  # tests only: stop with the old results gone and the new ones not in
    last = LAST_OF.get(command, LAST)
    for name in sorted(new, key=lambda n: (n == last, n)):
        (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
        os.replace(build / name, out_dir / name)
    _write_inventory(out_dir, new, complete=True, command=command)
