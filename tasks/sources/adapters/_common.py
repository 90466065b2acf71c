"""What every source adapter shares: option checking, located JSON reading, field checks, items.

Every malformed record becomes one InputError naming the file, the line (for JSON files,
the line where the record starts) and the field (for JSON files, its JSON path from the
document root, e.g. `[12].question` or `21645374.CONTEXTS.0`).
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from common.errors import InputError
from common.jsonio import check_surrogates, decode_text, json_problem, open_input
from schemas.records import Passage, SourceItem

MCQ_PASSAGE_STYLES = ("answer", "qa", "concept")
ITEM_TASKS = ("xqa", "evidence")


# ------------------------------------------------------------------------------- options


def adapter(fn: Callable | None = None, *, selection: tuple[str, ...] = ()) -> Callable:
    """Give an adapter the registry signature `(path, languages, **options)`.

    Its keyword-only parameters are its options, and so are the names in `selection`, which
    it takes together as `**selection` (which items to read: years, shares); an unknown
    option is the user's mistake (a typo in the config), reported as an InputError naming
    the source file.
    """
    if fn is None:
        return functools.partial(adapter, selection=selection)
    sig = inspect.signature(fn)
    known = [n for n, p in sig.parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY] + list(selection)

    @functools.wraps(fn)
    def wrapper(path: Path, languages: Iterable[str], **options: Any):
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise InputError(path, f"unknown option {', '.join(map(repr, unknown))} (this format takes: {', '.join(known) or 'no options'})", field="options")
        return fn(Path(path), set(languages), **options)

    wrapper.options = tuple(known)  # type: ignore[attr-defined]
    return wrapper


def check_choice(path: Path, name: str, value: Any, allowed: Iterable[Any]) -> Any:
    allowed = tuple(allowed)
    if value not in allowed:
        raise InputError(path, f"expected one of {', '.join(map(repr, allowed))}, got {value!r}", field=f"options.{name}")
    return value


def check_bool(path: Path, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InputError(path, f"expected true or false, got {value!r}", field=f"options.{name}")
    return value


def check_lang(path: Path, lang: str, languages: set[str], line: int | None = None, field: str | None = None) -> str:
    if lang not in languages:
        raise InputError(path, f"language {lang!r} is not a build language (build languages: {', '.join(sorted(languages))})", line=line, field=field)
    return lang


# ------------------------------------------------------------------------------- files


def require_file(path: Path, what: str = "") -> Path:
    if not path.is_file():
        raise InputError(path, "file not found" + (f" ({what})" if what else ""))
    return path


def source_files(path: Path, pattern: str, what: str, exclude: Callable[[Path], bool] = lambda p: False, recursive: bool = False) -> list[Path]:
    """`path` itself when it is a file, else the matching files under the folder, sorted."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(path, f"not found (expected {what})")
    found = sorted(p for p in (path.rglob(pattern) if recursive else path.glob(pattern)) if p.is_file() and not exclude(p))
    if not found:
        raise InputError(path, f"no {pattern} files in this folder (expected {what})")
    return found


class _Lines:
    """Offset -> 1-based line number, for offsets visited in increasing order."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        if offset < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.line


_WS = re.compile(r"[ \t\n\r]*")


def load_text(path: Path) -> str:
    """A source file's whole text: one line for a file missing, unreadable or not UTF-8."""
    require_file(path)
    with open_input(path) as fh:
        try:
            raw = fh.read()
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    return decode_text(path, raw)


def _decode(path: Path, dec: json.JSONDecoder, text: str, pos: int, lines: "_Lines") -> tuple[Any, int]:
    try:
        obj, end = dec.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise InputError(path, json_problem(exc), line=exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # a number over 4300 digits; nesting deeper than the stack
        raise InputError(path, json_problem(exc), line=lines.at(pos)) from None
    try:
        check_surrogates(path, text, obj, None, pos, end)
    except InputError as exc:
        raise InputError(path, exc.message, line=lines.at(pos)) from None
    return obj, end


def _expect(path: Path, text: str, pos: int, lines: _Lines, chars: str, what: str) -> str:
    ch = text[pos : pos + 1]
    if not ch or ch not in chars:
        found = repr(ch) if ch else "the end of the file"
        raise InputError(path, f"invalid JSON (expected {what}, found {found})", line=lines.at(pos))
    return ch


def _finish(path: Path, text: str, pos: int, lines: _Lines) -> None:
    pos = _WS.match(text, pos).end()
    if pos != len(text):
        raise InputError(path, "invalid JSON (extra data after the document)", line=lines.at(pos))


def iter_json_array(path: Path) -> Iterator[tuple[int, int, Any]]:
    """Yield (line where the record starts, index, record) for a top-level JSON array."""
    text, dec = load_text(path), json.JSONDecoder()
    lines = _Lines(text)
    pos = _WS.match(text, 0).end()
    _expect(path, text, pos, lines, "[", "a JSON array of records ('[')")
    pos = _WS.match(text, pos + 1).end()
    if text[pos : pos + 1] == "]":
        return _finish(path, text, pos + 1, lines)
    index = 0
    while True:
        obj, end = _decode(path, dec, text, pos, lines)
        yield lines.at(pos), index, obj
        pos = _WS.match(text, end).end()
        if _expect(path, text, pos, lines, ",]", "',' or ']' after a record") == "]":
            return _finish(path, text, pos + 1, lines)
        pos = _WS.match(text, pos + 1).end()
        index += 1


def iter_json_object(path: Path) -> Iterator[tuple[int, str, Any]]:
    """Yield (line where the key is, key, value) for a top-level JSON object; duplicate keys are errors."""
    text, dec = load_text(path), json.JSONDecoder()
    lines = _Lines(text)
    seen: dict[str, int] = {}
    pos = _WS.match(text, 0).end()
    _expect(path, text, pos, lines, "{", "a JSON object of records ('{')")
    pos = _WS.match(text, pos + 1).end()
    if text[pos : pos + 1] == "}":
        return _finish(path, text, pos + 1, lines)
    while True:
        _expect(path, text, pos, lines, '"', "a quoted key")
        key, end = _decode(path, dec, text, pos, lines)
        line = lines.at(pos)
        if key in seen:
            raise InputError(path, f"duplicate key (first at line {seen[key]})", line=line, field=key)
        seen[key] = line
        pos = _WS.match(text, end).end()
        _expect(path, text, pos, lines, ":", "':' after a key")
        pos = _WS.match(text, pos + 1).end()
        value, end = _decode(path, dec, text, pos, lines)
        yield line, key, value
        pos = _WS.match(text, end).end()
        if _expect(path, text, pos, lines, ",}", "',' or '}' after a value") == "}":
            return _finish(path, text, pos + 1, lines)
        pos = _WS.match(text, pos + 1).end()


# ------------------------------------------------------------------------------- fields


class Record:
    """One source record with its location, and typed accessors that raise located errors."""

    def __init__(self, path: Path, line: int | None, obj: Any, prefix: str = ""):
        self.path, self.line, self.prefix = path, line, prefix
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object, found {_kind(obj)}", line=line, field=prefix.rstrip(".") or None)
        self.obj = obj

    def field(self, name: str | int) -> str:
        if isinstance(name, int):
            return f"{self.prefix.rstrip('.')}[{name}]"
        return f"{self.prefix}{name}"

    def fail(self, name: str | int | None, message: str) -> InputError:
        return InputError(self.path, message, line=self.line, field=None if name is None else self.field(name))

    def has(self, name: str) -> bool:
        return self.obj.get(name) is not None and not is_nan(self.obj.get(name))

    def text(self, name: str, *, required: bool = True) -> str | None:
        """A string field, stripped; required ones must be non-empty."""
        if not self.has(name):
            if required:
                raise self.fail(name, "missing (expected a non-empty string)")
            return None
        value = self.obj[name]
        if not isinstance(value, str):
            raise self.fail(name, f"expected a string, found {_kind(value)}")
        value = value.strip()
        if required and not value:
            raise self.fail(name, "expected a non-empty string")
        return value

    def ident(self, name: str) -> str:
        """An identifier: a non-empty string or an integer, as a string without whitespace."""
        value = self.obj.get(name)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.fail(name, "missing (expected a non-empty string or integer id)" if value is None else f"expected a string or integer id, found {_kind(value)}")
        value = str(value).strip()
        if not value or re.search(r"\s", value):
            raise self.fail(name, f"expected an id without whitespace, got {value!r}")
        return value

    def text_list(self, name: str, *, required: bool = True, allow_empty_items: bool = False) -> list[str]:
        value = self.obj.get(name)
        if value is None:
            if required:
                raise self.fail(name, "missing (expected a list of strings)")
            return []
        if not isinstance(value, list):
            raise self.fail(name, f"expected a list of strings, found {_kind(value)}")
        if required and not value:
            raise self.fail(name, "expected a non-empty list")
        out = []
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.fail(f"{name}.{i}", f"expected a string, found {_kind(v)}")
            if not v.strip() and not allow_empty_items:
                raise self.fail(f"{name}.{i}", "expected a non-empty string")
            out.append(v.strip())
        return out

    def text_map(self, name: str) -> dict[str, str]:
        """A non-empty JSON object of strings (multiple-choice options keyed by letter)."""
        value = self.obj.get(name)
        if value is None:
            raise self.fail(name, "missing (expected an object of option texts)")
        if not isinstance(value, dict):
            raise self.fail(name, f"expected an object of option texts, found {_kind(value)}")
        if not value:
            raise self.fail(name, "expected at least one option")
        out = {}
        for k, v in value.items():
            if not isinstance(v, str):
                raise self.fail(f"{name}.{k}", f"expected a string, found {_kind(v)}")
            out[str(k)] = v.strip()
        return out


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


# ------------------------------------------------------------------------------- items


def digest(text: str, n: int = 16) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def content_passage(prefix: str, text: str, title: str = "") -> Passage:
    """A passage whose id is a hash of its content: identical passages collapse into one document."""
    return Passage(id=f"{prefix}-{digest(title + chr(0) + text)}", title=title, text=text)


def question_with_choices(question: str, choices: list[tuple[str, str]]) -> str:
    """The question followed by its lettered choices, one per line."""
    return question + "".join(f"\n{key}. {text}" for key, text in choices if text)


def make_item(rec: Record | None, path: Path, line: int | None, **fields: Any) -> SourceItem:
    """Validate a SourceItem; a failure names the record's location."""
    try:
        return SourceItem(**fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or None
        msg = "expected a non-empty string" if err["type"] == "string_too_short" else err["msg"]
        what = f"the item's {loc!r} would be invalid: {msg}" if loc else msg
        if rec is not None:
            raise rec.fail(None, what) from None
        raise InputError(path, what, line=line) from None


class UniqueIds:
    """Item ids must be unique within a source; the error names both places."""

    def __init__(self) -> None:
        self.where: dict[str, str] = {}

    def claim(self, item_id: str, path: Path, line: int | None, field: str | None) -> None:
        here = f"{path.name}:{line}" if line is not None else path.name
        if item_id in self.where:
            raise InputError(path, f"duplicate item id {item_id!r} (first at {self.where[item_id]})", line=line, field=field)
        self.where[item_id] = here
