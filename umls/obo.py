"""Streaming reader for OBO 1.2 flat files (Disease Ontology, HPO).

Only the tags the builder needs are kept; everything else is skipped so that a
10 MB ontology parses in well under a second.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import InputError
from common.jsonio import iter_lines

_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*(\S+)?')


@dataclass
class OboTerm:
    id: str
    name: str = ""
    definition: str = ""
    synonyms: list[tuple[str, str]] = field(default_factory=list)  # (text, scope)
    xrefs: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    obsolete: bool = False


class OboFormatError(InputError, ValueError):
    """A malformed OBO line: an InputError (`path:line: message`), and a ValueError as before."""

    def __init__(self, path: str, line_no: int, message: str):
        super().__init__(path, message, line=line_no)


def _first_word(value: str, path: str, line_no: int, tag: str, comment: bool = True) -> str:
    """The value's first word (before a trailing '! comment' when `comment`)."""
    words = (value.split("!")[0] if comment else value).split()
    if not words:
        raise OboFormatError(path, line_no, f"{tag}: expected a term id, got {value[:60]!r}")
    return words[0]


def _unquote(value: str) -> tuple[str, str]:
    m = _QUOTED.match(value)
    if not m:
        return "", ""
    return m.group(1).replace('\\"', '"').replace("\\\\", "\\"), (m.group(2) or "")


def parse_obo(lines: Iterable[str], path: str = "<obo>") -> Iterator[OboTerm]:
    """Yield every [Term] stanza; raise OboFormatError naming the line on a malformed tag."""
    term: OboTerm | None = None
    in_term = False
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n")
        if line.startswith("["):
            if term is not None:
                yield term
            term = None
            in_term = line.strip() == "[Term]"
            continue
        if not in_term or not line.strip() or line.startswith("!"):
            continue
        if ":" not in line:
            raise OboFormatError(path, line_no, f"expected 'tag: value', got {line[:60]!r}")
        tag, _, value = line.partition(":")
        value = value.strip()
        # drop trailing '! comment' on reference tags only (names may contain '!')
        if tag == "id":
            if not value:
                raise OboFormatError(path, line_no, "id: expected a term id, got nothing")
            term = OboTerm(id=value)
            continue
        if term is None:
            raise OboFormatError(path, line_no, f"tag {tag!r} before the stanza's id")
        if tag == "name":
            term.name = value
        elif tag == "def":
            term.definition = _unquote(value)[0]
        elif tag == "synonym":
            text, scope = _unquote(value)
            if not text:
                raise OboFormatError(path, line_no, "synonym: expected a quoted string")
            term.synonyms.append((text, scope))
        elif tag == "xref":
            term.xrefs.append(_first_word(value, path, line_no, "xref", comment=False))
        elif tag == "is_a":
            term.parents.append(_first_word(value, path, line_no, "is_a"))
        elif tag == "is_obsolete":
            term.obsolete = value == "true"
    if term is not None:
        yield term


def read_obo(path: Path | str) -> Iterator[OboTerm]:
    """Every [Term] stanza of an OBO file; any malformed byte or line is one InputError."""
    return parse_obo((line for _, line in iter_lines(Path(path))), str(path))
