"""A submission's metadata file (submission.toml, schemas/leaderboard.Submission), read with
one line per mistake: `error: FILE:LINE: field 'coverage': expected one of ..., found 'x'`."""
from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from common.errors import InputError, InputErrors
from schemas.config import read_toml
from schemas.leaderboard import COVERAGES, Submission

_EXPECTED = {
    "run": "the NAME it was evaluated under (--run NAME=DIR): lower-case letters, digits, '.', '_' or '-'",
    "name": "one line of 1 to 80 characters",
    "family": "one of " + ", ".join(Submission.model_fields["family"].annotation.__args__),
    "coverage": "one of " + ", ".join(COVERAGES),
    "link": "an http:// or https:// address of the model or paper (no spaces, quotes or angle brackets)",
    "licence": "the run files' licence as an SPDX identifier, e.g. CC-BY-4.0",
}


class SubmissionErrors(InputErrors):
    """Every mistake of one or more metadata files, one line each (str() joins them with
    `error: ` prefixes after the first, which the CLI prints)."""


def _line_of(text: str, key: str) -> int | None:
    m = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*=", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


def read_submission(path: Path) -> Submission:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such metadata file (--submission FILE: a submission.toml)")
    data = read_toml(path)
    text = path.read_text(encoding="utf-8")
    try:
        return Submission.model_validate(data)
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            key = str(err["loc"][0]) if err["loc"] else ""
            line = _line_of(text, key) if key else None
            if err["type"] == "missing":
                errors.append(InputError(path, f"missing: expected {_EXPECTED.get(key, 'a value')}", field=key))
            elif err["type"] == "extra_forbidden":
                errors.append(InputError(path, "not a field of a submission (expected run, name, family, coverage, "
                                               "link, licence)", line, key))
            else:
                found = err.get("input")
                shown = repr(found)[:60] if isinstance(found, str) else type(found).__name__
                errors.append(InputError(path, f"expected {_EXPECTED.get(key, err['msg'])}, found {shown}", line, key))
        raise SubmissionErrors(errors) from None
