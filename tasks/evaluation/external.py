"""Run files made by any system: `mmedbench evaluate --run NAME=DIR`.

DIR holds TREC runs named as the project names its own: `<task>-<lang>.trec` for a cell's
queries and `<task>-<lang>-pivot.trec` for its pivot control (the same items asked in
English). A line is `query-id Q0 doc-id rank score tag` (whitespace-separated, as
trec_eval reads it); trec_eval orders a query's documents by score, a tie by doc-id
descending, and ignores the rank column, and so do we. A query of the cell without a line
scores 0 (trec_eval -c) and is counted as missing.

Every file is checked before anything is scored: each malformed file gets one line
(file:line: what was expected), and the command exits 2 having written nothing.
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

from common.errors import InputError

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class RunFilesError(InputError):
    """Several malformed run files: one line each (str() joins them with `error: ` prefixes
    after the first, which the CLI prints)."""

    def __init__(self, errors: list[InputError]):
        self.errors = errors
        first = errors[0]
        super().__init__(first.file, first.message, first.line, first.field)
        self.args = ("\nerror: ".join(str(e) for e in errors),)

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class RunSpec:
    name: str
    directory: Path


def parse_run_spec(spec: str) -> RunSpec:
    name, sep, folder = spec.partition("=")
    if not sep or not name or not folder:
        raise InputError("--run", f"expected NAME=DIR, got {spec!r}")
    if not NAME.match(name):
        raise InputError("--run", f"run name {name!r}: expected lower-case letters, digits, '.', '_' or '-' (64 at most)")
    directory = Path(folder).expanduser()
    if not directory.is_dir():
        raise InputError(directory, "is not a folder of run files (--run NAME=DIR)")
    return RunSpec(name, directory)


def run_file_name(task: str, lang: str, pivot: bool = False) -> str:
    return f"{task}-{lang}{'-pivot' if pivot else ''}.trec"


def parse_run(data: bytes, path: Path) -> dict[str, dict[str, float]]:
    """query-id -> {doc-id: score}; InputError (file:line) at the first malformed line."""
    run: dict[str, dict[str, float]] = {}
    for n, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, f"expected UTF-8 text, found byte 0x{raw[exc.start]:02x} at column {exc.start + 1}", n) from None
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise InputError(path, f"expected 6 fields 'query-id Q0 doc-id rank score tag', found {len(fields)}", n)
        qid, _q0, doc, rank, score, _tag = fields
        try:
            int(rank)
        except ValueError:
            raise InputError(path, f"expected an integer rank, got {rank[:40]!r}", n, "rank") from None
        try:
            value = float(score)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise InputError(path, f"expected a finite number, got {score[:40]!r}", n, "score")
        docs = run.setdefault(qid, {})
        if doc in docs:
            raise InputError(path, f"document {doc[:60]!r} is listed twice for query {qid[:60]!r} (trec_eval refuses this)", n)
        docs[doc] = value
    return run


@dataclass
class ExternalRuns:
    spec: RunSpec
    runs: dict[str, dict[str, dict[str, float]]]  # file name -> run
    data: dict[str, bytes]  # file name -> bytes (copied as they are into the results' runs/)
    sha256: dict[str, str]  # file name -> sha256


def read_runs(spec: RunSpec, wanted: list[str]) -> ExternalRuns:
    """The run files of `wanted` (file names) that exist in the folder. Raises RunFilesError
    with one line per malformed file; InputError when the folder holds none of them."""
    out = ExternalRuns(spec, {}, {}, {})
    errors: list[InputError] = []
    for name in wanted:
        path = spec.directory / name
        if not path.is_file():
            continue
        try:
            data = path.read_bytes()
            out.runs[name] = parse_run(data, path)
        except InputError as exc:
            errors.append(exc)
            continue
        out.data[name] = data
        out.sha256[name] = hashlib.sha256(data).hexdigest()
    if errors:
        raise RunFilesError(errors)
    if not out.runs:
        raise InputError(spec.directory, f"holds no run file named for a cell of this release "
                                         f"(expected names like {wanted[0] if wanted else '<task>-<lang>.trec'})")
    return out
