"""Paths a command writes, checked before it starts: a file option that names a folder, or
a folder option that names a file, is the user's mistake (one line naming the option), not
an exception half-way through a run."""
from __future__ import annotations

from pathlib import Path

from common.errors import InputError


def _first_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if p.exists():
            return p
    return Path(".")


def output_folder(path: Path | str, option: str, config: Path | str | None = None) -> Path:
    """A folder the command creates or writes into: it, or its first existing ancestor,
    must be a folder. `option` names it (`--release-dir`); with `config`, it is that
    file's key (`release_dir`) and the line names the file."""
    path = Path(path)
    found = _first_existing(path.absolute())
    if found.exists() and not found.is_dir():
        where = "is a file" if found == path.absolute() else f"is under {found}, which is a file"
        if config is not None:
            raise InputError(config, f"{path} {where}; expected a folder", field=option)
        raise InputError(path, f"{where}; expected a folder", field=option)
    return path


def output_file(path: Path | str, option: str) -> Path:
    """A file the command writes: not a folder, and in a folder that exists."""
    path = Path(path)
    if path.is_dir():
        raise InputError(path, "is a folder; expected a file name", field=option)
    parent = path.absolute().parent
    if not parent.exists():
        raise InputError(path, f"folder {parent} does not exist", field=option)
    if not parent.is_dir():
        raise InputError(path, f"{parent} is not a folder", field=option)
    return path
