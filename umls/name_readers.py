"""Readers of concept-name files that are not ontologies: one function per format, each over
(line number, line) pairs (common.jsonio.iter_lines), so tests feed them text in memory.

A reader yields `NameRow`s, one per row that carries a name, whatever its content: the caller
(umls/name_lists.py) decides what a row is worth and counts every row it drops by reason. A
line a format cannot have (a brat mention line without its tab-separated fields, a BioSyn line
with too few `||` fields, a glossary line without its tab) is an InputError naming the file and
line: exit 2, never a silently shorter vocabulary.

  brat        brat standoff `.ann` (QUAERO): `T<n>\\tLABEL START END[;START END]\\tmention`, and
              `#<n>\\tAnnotatorNotes T<n>\\tCUI [CUI ...]` giving the mention's CUIs; other
              annotation lines (relations, attributes) carry no names and are skipped
  biosyn      BioSyn `.concept` (RuCCoN): `doc||start|end||type||mention||CUI`
  delimited   a table with a header row (NEREL-BIO's BioNNE-L tsv, wikidata-medical's csv): the
              columns named in the config
  glossary    MeSpEn: `count source-term<TAB>target-term<TAB>` (the count and the source term
              are separated by a space)
  utx         UTX-S 1.x (MEDUTX): `#` header lines, then `src<TAB>tgt<TAB>pos<TAB>comment`
"""
from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from common.errors import InputError
from common.jsonio import iter_lines


class NameRow(NamedTuple):
    line: int
    name: str
    cuis: tuple[str, ...]  # as the row writes them (may be malformed or empty: the caller counts)
    label: str = ""  # the source's own type label (QUAERO's CHEM, RuCCoN's Drug, a wikidata category)
    description: str = ""


class PairRow(NamedTuple):
    """A glossary entry: an English term and its translation."""

    line: int
    english: str
    term: str


Lines = Iterable[tuple[int, str]]


def read_brat(lines: Lines, path: str | Path) -> list[NameRow]:
    """The mentions of one brat `.ann` file with the CUIs of their AnnotatorNotes (a mention
    without a note has none), in mention order."""
    mentions: dict[str, tuple[int, str, str]] = {}
    notes: dict[str, tuple[str, ...]] = {}
    for line_no, line in lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith("T"):
            cells = line.split("\t")
            if len(cells) != 3:
                raise InputError(path, f"expected a text-bound annotation 'T<n><TAB>LABEL START END<TAB>text', found {len(cells)} "
                                       "tab-separated fields", line=line_no)
            spec = cells[1].split(" ", 1)
            if len(spec) != 2 or not re.fullmatch(r"\d+ \d+(;\d+ \d+)*", spec[1]):
                raise InputError(path, f"expected 'LABEL START END' offsets, found {cells[1]!r}", line=line_no, field="T")
            mentions[cells[0]] = (line_no, spec[0], cells[2])
        elif line.startswith("#"):
            cells = line.split("\t")
            if len(cells) < 2:
                raise InputError(path, "expected a note '#<n><TAB>AnnotatorNotes T<n><TAB>text'", line=line_no)
            head = cells[1].split()
            if len(head) == 2 and head[0] == "AnnotatorNotes":
                notes[head[1]] = tuple((cells[2] if len(cells) > 2 else "").split())
    return [NameRow(line_no, text, notes.get(tid, ()), label) for tid, (line_no, label, text) in mentions.items()]


def read_biosyn(lines: Lines, path: str | Path) -> Iterator[NameRow]:
    """BioSyn `.concept` rows: `doc||start|end||type||mention||CUI` (CUIs joined by '|' when several)."""
    for line_no, line in lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        cells = line.split("||")
        if len(cells) != 5:
            raise InputError(path, f"expected 5 '||'-separated fields (doc||start|end||type||mention||CUI), found {len(cells)}",
                             line=line_no)
        yield NameRow(line_no, cells[3], tuple(c for c in cells[4].split("|") if c), cells[2])


def table_rows(text_lines: Lines, path: str | Path, delimiter: str, columns: str, text: str) -> Iterator[tuple[int, list[str]]]:
    """(line, cells) of a table with a header row (csv quoting): first the header (line 1), then
    every non-blank row. A row with another number of cells than the header ("expected N
    {columns} columns") or malformed quoting ("malformed {text}") is an InputError."""
    numbered = list(text_lines)
    if not numbered:
        raise InputError(path, "empty file (expected a header row)", line=1)
    starts = [n for n, _ in numbered]
    reader = csv.reader(io.StringIO("".join(line for _, line in numbered)), delimiter=delimiter)
    try:
        header = next(reader)
        yield 1, header
        for row in reader:
            # csv's line_num counts physical lines read so far: the row's first line is the file's
            line_no = starts[min(reader.line_num - 1, len(starts) - 1)]
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise InputError(path, f"expected {len(header)} {columns} columns, found {len(row)}", line=line_no)
            yield line_no, row
    except csv.Error as exc:
        raise InputError(path, f"malformed {text} ({exc})", line=reader.line_num) from None


def read_delimited(text_lines: Lines, path: str | Path, delimiter: str, name_column: str, cui_column: str,
                   label_column: str | list[str] | None = None, description_column: str | None = None) -> Iterator[NameRow]:
    """Rows of a table with a header (csv quoting), by the columns named (`label_column` may
    list alternatives: the first the header has); a row with another number of cells than the
    header is an InputError."""
    rows = table_rows(text_lines, path, delimiter, f"{delimiter!r}-separated", "delimited text")
    _, header = next(rows)
    if isinstance(label_column, list):
        label_column = next((c for c in label_column if c in header), label_column[0] if label_column else None)
    wanted = {"name_column": name_column, "cui_column": cui_column, "label_column": label_column,
              "description_column": description_column}
    cols = {}
    for field, name in wanted.items():
        if name is None:
            continue
        if name not in header:
            raise InputError(path, f"no column {name!r} in the header (it has: {', '.join(header)})", line=1, field=field)
        cols[field] = header.index(name)
    for line_no, row in rows:
        yield NameRow(line_no, row[cols["name_column"]], tuple(row[cols["cui_column"]].split()),
                      row[cols["label_column"]] if "label_column" in cols else "",
                      row[cols["description_column"]] if "description_column" in cols else "")


def read_glossary(lines: Lines, path: str | Path, english: str) -> Iterator[PairRow]:
    """MeSpEn rows `count source<TAB>target<TAB>`: `english` says which side is English
    ("source" or "target")."""
    for line_no, line in lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) < 2:
            raise InputError(path, "expected 'count source-term<TAB>target-term', found no tab", line=line_no)
        count_src = cells[0].lstrip().split(" ", 1)  # the count is right-aligned: " 1 term"
        if len(count_src) != 2 or not count_src[0].isdigit():
            raise InputError(path, f"expected a count, a space and the source term, found {cells[0][:40]!r}", line=line_no)
        src, tgt = count_src[1].strip(), cells[1].strip()
        yield PairRow(line_no, src, tgt) if english == "source" else PairRow(line_no, tgt, src)


def read_utx(lines: Lines, path: str | Path, english: str = "source") -> Iterator[PairRow]:
    """UTX-S rows after the `#` header lines: src, tgt, then optional columns."""
    for line_no, line in lines:
        line = line.rstrip("\r\n")
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) < 2:
            raise InputError(path, "expected 'src<TAB>tgt[<TAB>...]' (UTX), found no tab", line=line_no)
        src, tgt = cells[0].strip(), cells[1].strip()
        yield PairRow(line_no, src, tgt) if english == "source" else PairRow(line_no, tgt, src)


def zip_member_lines(path: Path, member: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of a UTF-8 text member of a zip archive (a glossary shipped zipped)."""
    try:
        with zipfile.ZipFile(path) as zf:
            if member not in zf.namelist():
                raise InputError(path, f"no member {member!r} in the archive (it has: {', '.join(sorted(zf.namelist()))})",
                                 field="member")
            raw = zf.read(member)
    except zipfile.BadZipFile as exc:
        raise InputError(path, f"not a zip archive ({exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}!{member}", f"not UTF-8 text (byte {raw[exc.start]:#04x})", line=line) from None
    # lines break at LF only, as iter_lines breaks them (a U+2028 inside a term is not a line end)
    return ((i, line + "\n") for i, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1) if line)


def file_lines(path: Path, what: str) -> Iterator[tuple[int, str]]:
    return iter_lines(path, what)
