"""User-facing input errors: one line naming file, line, field and what was expected."""
from __future__ import annotations

import os


def _display(path: str) -> str:
    """Paths under the working directory are shown relative to it (shorter, and what the user typed)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


class InputError(Exception):
    """Bad input from the user. The CLI prints `str(err)` as one line and exits 2."""

    def __init__(self, file: str, message: str, line: int | None = None, field: str | None = None):
        self.file, self.line, self.field, self.message = _display(str(file)), line, field, message
        where = self.file if line is None else f"{self.file}:{line}"
        what = message if field is None else f"field {field!r}: {message}"
        super().__init__(f"{where}: {what}")
