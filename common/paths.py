"""Every path a user gives, checked in one place before anything reads or writes it.

A path named by an option (`--config`, `--out`, a release folder, `--run NAME=DIR`) or by a
config field (`sources.0.path`, `vocabulary.path`, `translation.memory.1`, `work_dir`) is
looked at here, without following it blindly: a symbolic link loop, a link to nothing, a
FIFO, socket or device where a file is expected, a file that cannot be opened, a folder
where a file is expected (and a file where a folder is) each becomes one InputError naming
the path and the option or field, never an exception from `Path.resolve` or a read that
blocks on a pipe for ever.

    resolve(path, field, config)          the absolute path, links followed (a loop: one line)
    input_file(path, field, config)       a regular file this process can open
    input_folder(path, field, config)     a folder this process can list
    special_kind(path)                    "a FIFO (named pipe)", ... or None for a file or folder

`field` is the option (`--config`) or, with `config`, the config file's field
(`sources.0.path`); the line then names the config file too.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from common.errors import InputError

# what a special file is, in the user's words
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDOOR if hasattr(stat, "S_ISDOOR") else (lambda _m: False), "a door"))


def _error(path: Path | str, message: str, field: str | None, config: Path | str | None) -> InputError:
    if config is not None:
        return InputError(config, f"{path} {message}", field=field)
    return InputError(path, message, field=field)


def _link_problem(path: Path) -> str | None:
    """Why following `path` (or a link on its way) goes nowhere: a loop or a dangling link."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop (following its links never ends)"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR) and os.path.lexists(path) and os.path.islink(path):
            return f"is a symbolic link to {os.readlink(path)}, which does not exist"
        if exc.errno == errno.ENOENT:
            # a link further up the path may be what is dangling ("a/link/file")
            for parent in Path(path).parents:
                if os.path.islink(parent) and not os.path.exists(parent):
                    return f"is under {parent}, a symbolic link to {os.readlink(parent)}, which does not exist"
        if exc.errno == errno.EACCES:
            return f"cannot be reached ({exc.strerror})"
        if exc.errno == errno.ENAMETOOLONG:
            return "is too long a path for the file system"
    except ValueError:  # an embedded NUL
        return "is not a valid path (it holds a NUL byte)"
    return None


def resolve(path: Path | str, field: str | None = None, config: Path | str | None = None) -> Path:
    """The absolute, link-free path (links followed; the path need not exist). A symbolic
    link loop anywhere on the way is the user's mistake, one line, not RuntimeError."""
    try:
        return Path(path).resolve()
    except RuntimeError:  # Python 3.11's pathlib: "Symlink loop from ..."
        raise _error(path, "is a symbolic link loop (following its links never ends)", field, config) from None
    except OSError as exc:
        raise _error(path, f"cannot be resolved ({exc.strerror or exc})", field, config) from None
    except ValueError:
        raise _error(path, "is not a valid path (it holds a NUL byte)", field, config) from None


def special_kind(path: Path | str) -> str | None:
    """What a path is when it is neither a regular file nor a folder (links followed); None
    otherwise, and when it does not exist."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return None


def input_file(path: Path | str, field: str | None = None, config: Path | str | None = None, what: str = "file") -> Path:
    """A regular file that can be opened for reading; anything else is one InputError."""
    path = Path(path)
    problem = _link_problem(path)
    if problem is not None:
        raise _error(path, problem, field, config)
    if not os.path.exists(path):
        raise _error(path, f"not found (expected a {what})", field, config)
    if os.path.isdir(path):
        raise _error(path, f"is a folder; expected a {what}", field, config)
    kind = special_kind(path)
    if kind is not None:
        raise _error(path, f"is {kind}; expected a regular {what}", field, config)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})", field, config) from None
    os.close(fd)
    return path


def input_folder(path: Path | str, field: str | None = None, config: Path | str | None = None, what: str = "folder") -> Path:
    """A folder whose entries can be listed; anything else is one InputError."""
    path = Path(path)
    problem = _link_problem(path)
    if problem is not None:
        raise _error(path, problem, field, config)
    if not os.path.exists(path):
        raise _error(path, f"not found (expected a {what})", field, config)
    if not os.path.isdir(path):
        kind = special_kind(path)
        raise _error(path, f"is {kind or 'a file'}; expected a {what}", field, config)
    try:
        os.listdir(path)
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})", field, config) from None
    return path


def output_path_problem(path: Path | str) -> str | None:
    """Why a path a command would create or write cannot be one, judged before anything is
    made: a loop or a dangling link on its way, or a special file in its place (None: it can)."""
    return _link_problem(Path(path)) or (f"is {kind}" if (kind := special_kind(path)) else None)


RELEASE_MANIFEST = "manifest.json"


def release_folder(path: Path | str, field: str = "RELEASE_DIR") -> Path:
    """A release folder a command reads: a listable folder holding a regular manifest.json."""
    path = Path(path)
    if not os.path.lexists(path) or (_is_dir(path) and not os.path.lexists(path / RELEASE_MANIFEST)):
        raise InputError(path, "not a release folder (no manifest.json)")
    input_folder(path, field, what="release folder")
    input_file(path / RELEASE_MANIFEST, field, what="release manifest")
    return path


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
