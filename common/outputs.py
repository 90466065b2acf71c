"""Paths a command writes, checked before it starts: a file option that names a folder, or
a folder option that names a file, is the user's mistake (one line naming the option), not
an exception half-way through a run. So is a path inside a release folder (a release is
never written to after it is published), a folder that cannot be written (a read-only file
system, no permission) and, for the folders a build fills, a disk without room.

A release folder is recognised by its `manifest.json`: any folder holding one, whatever it
is called or wherever it lies (a copy of a release is as much a release). Paths are
compared after resolving links, so a link pointing into a release is refused too.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from common.errors import InputError
from common.paths import output_path_problem

RELEASE_MARK = "manifest.json"  # what makes a folder a release folder
# Room a build asks for before its first stage: floors, not estimates (the sample's work dir
# takes 11 MB, its release 2.8 MB; real data far more). A disk that fills later still ends
# the build in one line, and the same command completes it once there is room.
WORK_MIN_FREE = 32 << 20
RELEASE_MIN_FREE = 8 << 20


def _first_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if p.exists():
            return p
    return Path(".")


def release_around(path: Path | str) -> Path | None:
    """The release folder `path` is (or is inside), after resolving links; None if none."""
    real = Path(os.path.realpath(path))
    for folder in (real, *real.parents):
        try:
            if (folder / RELEASE_MARK).is_file():
                return folder
        except OSError:  # an unreadable folder is not one we can tell is a release
            continue
    return None


def refuse_inside_release(path: Path | str, option: str) -> None:
    """One line, exit 2, when a command would write `path` inside a release folder."""
    release = release_around(path)
    if release is not None:
        raise InputError(path, f"is inside the release folder {release}; a release is never written to "
                               f"(choose a path outside it)", field=option)


def _unwritable(folder: Path) -> str | None:
    """Why nothing can be created in `folder` (None: something can). Tried, not asked:
    root passes os.access on a folder it may not write, and a read-only mount says so
    only when written to."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".mmedbench-write-test-", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass
    return None


def free_bytes(path: Path | str) -> int:
    """Bytes an unprivileged user may still write on the file system holding `path`."""
    return shutil.disk_usage(_first_existing(Path(path).absolute())).free


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"


def output_folder(path: Path | str, option: str, config: Path | str | None = None, min_free: int = 0) -> Path:
    """A folder the command creates or writes into: it, or its first existing ancestor,
    must be a folder, outside any release, that can be written; with `min_free`, on a file
    system with at least that many bytes free. `option` names it (`--release-dir`); with
    `config`, it is that file's key (`release_dir`) and the line names the file."""
    path = Path(path)
    found = _first_existing(path.absolute())

    def fail(message: str):
        if config is not None:
            return InputError(config, f"{path} {message}", field=option)
        return InputError(path, message, field=option)

    problem = output_path_problem(path)
    if problem is not None:
        raise fail(f"{problem}; expected a folder")
    if found.exists() and not found.is_dir():
        where = "is a file" if found == path.absolute() else f"is under {found}, which is a file"
        raise fail(f"{where}; expected a folder")
    release = release_around(path)
    if release is not None:
        raise fail(f"is inside the release folder {release}; a release is never written to (choose a folder outside it)")
    why = _unwritable(found)
    if why is not None:
        where = "" if found == path.absolute() else f" ({found}, where it would be made)"
        raise fail(f"cannot be written{where}: {why}")
    if min_free and (free := free_bytes(found)) < min_free:
        raise fail(f"disk full: {_mib(free)} free on its file system, at least {_mib(min_free)} needed; "
                   "free some space or choose another folder")
    return path


def output_file(path: Path | str, option: str) -> Path:
    """A file the command writes: not a folder, not inside a release, and in a folder that
    exists and can be written."""
    path = Path(path)
    problem = output_path_problem(path)
    if problem is not None:
        raise InputError(path, f"{problem}; expected a file name", field=option)
    if path.is_dir():
        raise InputError(path, "is a folder; expected a file name", field=option)
    parent = path.absolute().parent
    if not parent.exists():
        raise InputError(path, f"folder {parent} does not exist", field=option)
    if not parent.is_dir():
        raise InputError(path, f"{parent} is not a folder", field=option)
    refuse_inside_release(path, option)
    why = _unwritable(parent)
    if why is not None:
        raise InputError(path, f"cannot be written (folder {parent}): {why}", field=option)
    return path
