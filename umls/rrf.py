"""Streaming readers for UMLS Rich Release Format (RRF) files.

RRF is '|'-separated, unquoted, with a trailing '|' on every line. Files are read with
pyarrow's streaming CSV reader, keeping only the requested columns, so a full release
(about 17M MRCONSO rows) never becomes an object-dtype DataFrame. A malformed row
raises InputError naming the file and line.
"""
from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from common.errors import InputError

COLUMNS: dict[str, list[str]] = {
    "MRCONSO.RRF": "CUI LAT TS LUI STT SUI ISPREF AUI SAUI SCUI SDUI SAB TTY CODE STR SRL SUPPRESS CVF".split(),
    "MRSTY.RRF": "CUI TUI STN STY ATUI CVF".split(),
    "MRREL.RRF": "CUI1 AUI1 STYPE1 REL CUI2 AUI2 STYPE2 RELA RUI SRUI SAB SL RG DIR SUPPRESS CVF".split(),
    "MRDEF.RRF": "CUI AUI ATUI SATUI SAB DEF SUPPRESS CVF".split(),
    "MRSAB.RRF": "VCUI RCUI VSAB RSAB SON SF SVER VSTART VEND IMETA RMETA SLC SCC SRL TFR CFR CXTY TTYL ATNL LAT CENC CURVER SABIN SSN SCIT".split(),
    "MRFILES.RRF": "FIL DES FMT CLS RWS BTS".split(),
}
# Columns validated by pattern, per file: a wrong value is reported with its line.
PATTERNS: dict[str, dict[str, str]] = {
    "MRCONSO.RRF": {"CUI": r"^C\d{7}$", "LAT": r"^[A-Z]{3}$", "ISPREF": r"^[YN]$", "SRL": r"^\d$"},
    "MRSTY.RRF": {"CUI": r"^C\d{7}$", "TUI": r"^T\d{3}$"},
    "MRREL.RRF": {"CUI1": r"^C\d{7}$", "CUI2": r"^C\d{7}$"},
    "MRDEF.RRF": {"CUI": r"^C\d{7}$"},
    "MRSAB.RRF": {"SRL": r"^\d$"},
}
BLOCK_SIZE = 16 << 20


def _invalid_row(path: Path, ncols: int, state: dict):
    def handler(row) -> str:
        # pyarrow numbers rows from 1 in the file; keep the first problem and stop after it
        if "error" not in state:
            line = row.number if row.number is not None else _find_bad_line(path, ncols)
            state["error"] = InputError(
                path,
                f"expected {ncols - 1} '|'-terminated fields, found {row.actual_columns - 1}",
                line=line,
            )
        return "skip"

    return handler


def _cheap_ok(column: pa.Array, name: str):
    """A vectorised pre-check that is exact for the common columns; the regex (slower,
    about 0.2 s per 3M rows and column) only runs when it fails or does not apply."""
    if name in ("CUI", "CUI1", "CUI2"):
        return pc.and_(pc.equal(pc.utf8_length(column), 8),
                       pc.and_(pc.starts_with(column, "C"), pc.utf8_is_digit(pc.utf8_slice_codeunits(column, 1))))
    if name in ("ISPREF",):
        return pc.is_in(column, value_set=pa.array(["Y", "N"]))
    if name == "SRL":
        return pc.and_(pc.equal(pc.utf8_length(column), 1), pc.utf8_is_digit(column))
    if name == "LAT":
        return pc.and_(pc.equal(pc.utf8_length(column), 3), pc.utf8_is_upper(column))
    return None


def _find_bad_line(path: Path, ncols: int) -> int | None:
    """Error path only: pyarrow's multi-threaded reader does not number rows."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line_no, line in enumerate(fh, start=1):
            if line.rstrip("\r\n").count("|") + 1 != ncols:
                return line_no
    return None


def read_rrf(path: Path, columns: list[str], block_size: int = BLOCK_SIZE) -> Iterator[pa.RecordBatch]:
    """Stream record batches of `columns` from an RRF file, validating as it goes."""
    path = Path(path)
    name = path.name
    if name not in COLUMNS:
        raise InputError(path, f"not a known RRF file (expected one of {', '.join(sorted(COLUMNS))})")
    if not path.exists():
        raise InputError(path, "file not found")
    names = COLUMNS[name] + ["_TRAILING"]
    unknown = [c for c in columns if c not in COLUMNS[name]]
    if unknown:
        raise ValueError(f"{name} has no column {unknown[0]}")
    state: dict = {}
    if path.stat().st_size == 0:
        return
    try:
        reader = _open(path, names, columns, block_size, state)
    except pa.ArrowInvalid as exc:
        raise InputError(path, f"unreadable RRF: {exc}") from None
    yield from _batches(path, name, reader, columns, state)


def _open(path: Path, names: list[str], columns: list[str], block_size: int, state: dict):
    return pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=block_size, use_threads=True),
        parse_options=pacsv.ParseOptions(
            delimiter="|", quote_char=False, escape_char=False, double_quote=False,
            newlines_in_values=False, ignore_empty_lines=False,  # a blank line is malformed RRF; counting it keeps line numbers exact
            invalid_row_handler=_invalid_row(path, len(names), state),
        ),
        convert_options=pacsv.ConvertOptions(
            include_columns=list(dict.fromkeys(columns + ["_TRAILING"])),
            column_types={c: pa.string() for c in names},
            strings_can_be_null=False, quoted_strings_can_be_null=False,
        ),
    )


def _read_ahead(reader) -> Iterator[pa.RecordBatch]:
    """Parse the next block on a helper thread while the caller validates and filters this
    one (pyarrow releases the GIL in both): reading MRCONSO is otherwise parse, then
    check, then parse, and the checks cost about a third of the parse."""
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(reader.read_next_batch)
        while True:
            try:
                batch = pending.result()
            except StopIteration:
                return
            pending = pool.submit(reader.read_next_batch)
            yield batch


def _batches(path: Path, name: str, reader, columns: list[str], state: dict) -> Iterator[pa.RecordBatch]:
    checks = {c: p for c, p in PATTERNS.get(name, {}).items() if c in columns}
    first_line = 1
    try:
        for batch in _read_ahead(reader):
            if "error" in state:
                raise state["error"]
            trailing = batch.column("_TRAILING")
            bad_trailing = pc.not_equal(trailing, "")
            if pc.any(bad_trailing).as_py():
                idx = pc.index(bad_trailing, True).as_py()
                raise InputError(path, "expected the line to end with '|' after the last field", line=first_line + idx)
            for col, pattern in checks.items():
                ok = _cheap_ok(batch.column(col), col)
                if ok is None or not pc.all(ok).as_py():
                    ok = pc.match_substring_regex(batch.column(col), pattern)
                if not pc.all(ok).as_py():
                    idx = pc.index(ok, False).as_py()
                    value = batch.column(col)[idx].as_py()
                    raise InputError(path, f"expected pattern {pattern}, got {value!r}", line=first_line + idx, field=col)
            first_line += batch.num_rows
            yield pa.RecordBatch.from_arrays(
                [batch.column(c) for c in columns], names=columns
            )
    except pa.ArrowInvalid as exc:
        raise InputError(path, f"unreadable RRF: {exc}") from None
    if "error" in state:
        raise state["error"]


def read_rrf_table(path: Path, columns: list[str]) -> pa.Table:
    batches = list(read_rrf(path, columns))
    if not batches:
        return pa.table({c: pa.array([], pa.string()) for c in columns})
    return pa.Table.from_batches(batches)
