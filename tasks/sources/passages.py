"""The `sample-jsonl` reader (the project's own sample sources) and the validation-error wording the
adapters share; every format's reader is in tasks/sources/adapters/ (ADAPTERS there)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from common.errors import InputError
from common.jsonio import read_jsonl
from schemas.records import Passage, SourceItem


def _validation_error(path: Path, line: int, exc: ValidationError) -> InputError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    msg = err["msg"]
    if err["type"] == "string_too_short":
        msg = "expected a non-empty string"
    return InputError(path, msg, line=line, field=field)


def read_sample_jsonl(path: Path, languages: set[str]) -> Iterator[SourceItem]:
    """The project's own JSONL shape (documented in README, "Source formats")."""
    for line_no, obj in read_jsonl(path):
        try:
            item = SourceItem(**obj)
        except ValidationError as exc:
            raise _validation_error(path, line_no, exc) from None
        except TypeError as exc:
            raise InputError(path, str(exc), line=line_no) from None
        if not item.text.strip():
            raise InputError(path, "expected a non-empty question", line=line_no, field="text")
        if item.lang not in languages:
            raise InputError(path, f"unknown language code {item.lang!r} (build languages: {', '.join(sorted(languages))})", line=line_no, field="lang")
        if item.lang != "en" and not (item.pivot or "").strip():
            raise InputError(path, "a non-English question needs its English pivot text", line=line_no, field="pivot")
        yield item


def read_passages(path: Path) -> Iterator[Passage]:
    for line_no, obj in read_jsonl(path):
        try:
            yield Passage(**obj)
        except ValidationError as exc:
            raise _validation_error(path, line_no, exc) from None

