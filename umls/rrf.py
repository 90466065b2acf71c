"""Streaming readers for UMLS Rich Release Format (RRF) files.

RRF is '|'-separated, unquoted, with a trailing '|' on every line. Files are read with
pyarrow's streaming CSV reader, keeping only the requested columns, so a full release
(about 17M MRCONSO rows) never becomes an object-dtype DataFrame. A malformed row
raises InputError naming the file, the line and the field: the fast path only detects that
something is wrong (pyarrow fails on a row with the wrong number of fields or bytes that are
not UTF-8; vectorised checks catch a missing trailing '|' or a value that breaks its
pattern); a sequential scan, on the error path only, then finds the first malformed line in
file order and says what was expected there.
"""
from __future__ import annotations

import re
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


def _cheap_ok(column: pa.Array, name: str):
    """A vectorised pre-check that is exact for the common columns; the regex (slower,
    about 0.2 s per 3M rows and column) only runs when it fails or does not apply. Byte
    lengths and ASCII classes: a non-ASCII digit or letter must fail here as in the regex."""
    if name in ("CUI", "CUI1", "CUI2"):
        return pc.and_(pc.equal(pc.binary_length(column), 8),
                       pc.and_(pc.starts_with(column, "C"), pc.ascii_is_decimal(pc.utf8_slice_codeunits(column, 1))))
    if name in ("ISPREF",):
        return pc.is_in(column, value_set=pa.array(["Y", "N"]))
    if name == "SRL":
        return pc.and_(pc.equal(pc.binary_length(column), 1), pc.ascii_is_decimal(column))
    if name == "LAT":
        return pc.and_(pc.equal(pc.binary_length(column), 3), pc.and_(pc.ascii_is_alpha(column), pc.ascii_is_upper(column)))
    return None


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # what pyarrow's CSV reader breaks rows at


def _lines(path: Path) -> Iterator[bytes]:
    """The file's lines (without their ends) as pyarrow's reader sees them."""
    with open(path, "rb") as fh:
        for chunk in fh:
            pieces = _LINE_BREAK.split(chunk)
            yield from pieces[:-1] if len(pieces) > 1 else pieces


def _first_problem(path: Path, name: str, columns: list[str], checks: dict[str, str]) -> InputError | None:
    """Error path only: the first malformed line in file order, by a sequential scan. The
    fast path parses blocks on threads and does not know line numbers; this scan applies
    its rules (field count, trailing '|', UTF-8 and pattern of the columns read: the others
    are skipped unread, as pyarrow skips them), so it finds what made the fast path fail,
    and where."""
    fields_expected = len(COLUMNS[name])
    read = [i for i, c in enumerate(COLUMNS[name]) if c in columns]
    compiled = {c: re.compile(p, re.ASCII) for c, p in checks.items()}
    for line_no, raw in enumerate(_lines(path), start=1):
        fields = raw.split(b"|")
        if len(fields) != fields_expected + 1:
            return InputError(path, f"expected {fields_expected} '|'-terminated fields, found {len(fields) - 1}", line=line_no)
        if fields[-1] != b"":
            return InputError(path, "expected the line to end with '|' after the last field", line=line_no)
        values = {}
        for i in read:
            try:
                values[COLUMNS[name][i]] = fields[i].decode("utf-8")
            except UnicodeDecodeError as exc:
                start = sum(len(f) + 1 for f in fields[:i]) + exc.start
                column = len(raw[:start].decode("utf-8", "replace")) + 1
                return InputError(path, f"expected UTF-8 text, found byte 0x{raw[start]:02x} at column {column}",
                                  line=line_no, field=COLUMNS[name][i])
        for col, rx in compiled.items():
            if not rx.fullmatch(values[col]):
                return InputError(path, f"expected pattern {checks[col]}, got {values[col]!r}", line=line_no, field=col)
    return None


def _located(path: Path, name: str, columns: list[str], checks: dict[str, str], fallback: InputError) -> InputError:
    try:
        return _first_problem(path, name, columns, checks) or fallback
    except OSError as exc:
        return InputError(path, f"cannot be read ({exc.strerror or exc})")


def read_rrf(path: Path, columns: list[str], block_size: int = BLOCK_SIZE) -> Iterator[pa.RecordBatch]:
    """Stream record batches of `columns` from an RRF file, validating as it goes."""
    path = Path(path)
    name = path.name
    if name not in COLUMNS:
        raise InputError(path, f"not a known RRF file (expected one of {', '.join(sorted(COLUMNS))})")
    if not path.exists():
        raise InputError(path, "file not found")
    if not path.is_file():
        raise InputError(path, "expected a file, found a folder")
    names = COLUMNS[name] + ["_TRAILING"]
    unknown = [c for c in columns if c not in COLUMNS[name]]
    if unknown:
        raise ValueError(f"{name} has no column {unknown[0]}")
    checks = {c: p for c, p in PATTERNS.get(name, {}).items() if c in columns}
    if path.stat().st_size == 0:
        return
    try:
        reader = _open(path, names, columns, block_size)
    except (pa.ArrowException, OSError) as exc:
        raise _located(path, name, columns, checks, _unreadable(path, exc)) from None
    yield from _batches(path, name, reader, columns, checks)


def _unreadable(path: Path, exc: Exception) -> InputError:
    return InputError(path, f"unreadable RRF: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")


def _open(path: Path, names: list[str], columns: list[str], block_size: int):
    return pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=block_size, use_threads=True),
        # unquoted and unescaped: a '"' is data and a newline always ends a row
        parse_options=pacsv.ParseOptions(delimiter="|", quote_char=False, escape_char=False,
                                         ignore_empty_lines=False),  # a blank line is malformed RRF
        convert_options=pacsv.ConvertOptions(
            include_columns=list(dict.fromkeys(columns + ["_TRAILING"])),
            column_types={c: pa.string() for c in names},
            strings_can_be_null=False,  # an empty field is "", never null
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


def _batches(path: Path, name: str, reader, columns: list[str], checks: dict[str, str]) -> Iterator[pa.RecordBatch]:
    """Validate each block vectorised; on the first problem, `_located` names its line."""
    try:
        for batch in _read_ahead(reader):
            if pc.any(pc.not_equal(batch.column("_TRAILING"), "")).as_py():
                raise _located(path, name, columns, checks, InputError(path, "expected every line to end with '|' after its last field"))
            for col, pattern in checks.items():
                ok = _cheap_ok(batch.column(col), col)
                if ok is None or not pc.all(ok).as_py():
                    if not pc.all(pc.match_substring_regex(batch.column(col), pattern)).as_py():
                        raise _located(path, name, columns, checks, InputError(path, f"expected pattern {pattern}", field=col))
            yield pa.RecordBatch.from_arrays(
                [batch.column(c) for c in columns], names=columns
            )
    except (pa.ArrowException, OSError) as exc:  # a row with too few or too many fields, bytes that are not UTF-8
        raise _located(path, name, columns, checks, _unreadable(path, exc)) from None


def read_rrf_table(path: Path, columns: list[str]) -> pa.Table:
    batches = list(read_rrf(path, columns))
    if not batches:
        return pa.table({c: pa.array([], pa.string()) for c in columns})
    return pa.Table.from_batches(batches)
