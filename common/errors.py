"""User-facing errors: one line naming file, line, field and what was expected; and the
exit codes every command uses.

Exit codes (README, "Exit codes"):

    0  success (also: a rebuild that found the identical release already published)
    1  the audit failed
    2  a user's input error: a malformed file, a bad config or option, a missing input,
       or the user's environment (disk full)
    3  a conflict with another run (another build published a different release under the
       same version while this one was building)
    anything else: a bug (the CLI exits 70 and prints the traceback)
"""
from __future__ import annotations

import errno
import os

EXIT_OK = 0
EXIT_AUDIT_FAILED = 1
EXIT_INPUT = 2
EXIT_CONFLICT = 3
EXIT_BUG = 70  # sysexits' EX_SOFTWARE: an exception nobody turned into one of the above

# errno values that mean "the disk refuses the write", not "the code is wrong": full, over
# quota, or mounted read-only. The user's environment, exit 2, like a bad input.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
READ_ONLY = frozenset({errno.EROFS})


def _display(path: str) -> str:
    """Paths under the working directory are shown relative to it (shorter, and what the user typed)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


MAX_MESSAGE = 400  # characters: a value quoted from a file must not turn the line into a page


def _one_line(text: str) -> str:
    """Messages are one line and short, whatever a file's bytes put into them."""
    text = " ".join(str(text).splitlines()) if any(c in str(text) for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029") else str(text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 30] + " [...] " + text[-23:]


class InputError(Exception):
    """Bad input from the user. The CLI prints `str(err)` as one line and exits `exit_code` (2)."""

    exit_code = EXIT_INPUT

    def __init__(self, file: str, message: str, line: int | None = None, field: str | None = None):
        self.file, self.line, self.field, self.message = _display(str(file)), line, field, _one_line(message)
        where = self.file if line is None else f"{self.file}:{line}"
        what = self.message if field is None else f"field {_one_line(field)!r}: {self.message}"
        super().__init__(f"{where}: {what}")

    def __reduce__(self):
        # pickled as it is (a stage's error crosses a Dask worker, a spawned process and
        # Prefect's result store): its __init__ takes other arguments than its args
        return _restore, (type(self), self.args, dict(self.__dict__))


class InputErrors(InputError):
    """Several mistakes, one line each (str() joins them with `error: ` prefixes after the
    first, which the CLI prints); the first names the file, line and field."""

    def __init__(self, errors: list[InputError]):
        self.errors = errors
        first = errors[0]
        super().__init__(first.file, first.message, first.line, first.field)
        self.args = ("\nerror: ".join(str(e) for e in errors),)

    def __str__(self) -> str:
        return self.args[0]


def _restore(cls: type, args: tuple, state: dict) -> "InputError":
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class AuditFailedError(InputError):
    """A build whose own release fails its audit: nothing is published. Exit code 1, as a
    failed `mmedbench audit`."""

    exit_code = EXIT_AUDIT_FAILED


class ConflictError(InputError):
    """Another run got there first (a different release published under the same version
    while this one was building). Exit code 3: retrying with another --version fixes it."""

    exit_code = EXIT_CONFLICT


def is_disk_full(exc: BaseException) -> bool:
    """A write the disk refused: full, over quota or read-only (the user's environment)."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL | READ_ONLY


def disk_full(exc: OSError, what: str | None = None, folder: str | os.PathLike | None = None) -> InputError:
    """The one line for a full (or read-only) disk: the file (in its folder), what was being
    done, and the way out. `folder`: where it was writing, when the error names no file."""
    name = exc.filename if isinstance(exc.filename, (str, os.PathLike)) and exc.filename else None
    where = os.fspath(name) if name else (os.fspath(folder) if folder is not None else "?")
    doing = f" while {what}" if what else ""
    if exc.errno in READ_ONLY:
        return InputError(where, f"read-only file system{doing}; "
                                 "make the folder writable or choose another one, and run the same command again")
    return InputError(where, f"disk full ({os.strerror(exc.errno)}){doing}; "
                             "free some space and run the same command again")
