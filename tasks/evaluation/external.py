"""Run files made by any system: `mmedbench evaluate --run NAME=DIR`.

DIR holds TREC runs named as the project names its own: `<task>-<lang>.trec` for a cell's
queries and `<task>-<lang>-pivot.trec` for its pivot control (the same items asked in
English). A line is `query-id Q0 doc-id rank score tag` (whitespace-separated, as
trec_eval reads it); trec_eval orders a query's documents by score, a tie by doc-id
descending, and ignores the rank column, and so do we. A query of the cell without a line
scores 0 (trec_eval -c) and is counted as missing.

Every file is checked before anything is scored: each malformed file gets one line
(file:line: what was expected), and the command exits 2 having written nothing.

Each file read is then held against the release (`RunFileReport`, as trec_eval would not:
it silently skips a query without qrels): how many of its lines name a query the cell does
not have, or a document its corpus does not have, with the first of each (line and id);
and whether it is empty (0 bytes, or only blank lines: the run retrieved nothing). The
command prints the report, file by file, with the cell each file was read for;
`--strict` makes any of these an error (`strict_problems`), before anything is scored.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from common import paths
from common.errors import InputError, InputErrors

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class RunFilesError(InputErrors):
    """Several malformed run files: one line each (str() joins them with `error: ` prefixes
    after the first, which the CLI prints)."""


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
    if not os.path.lexists(directory) or (os.path.isfile(directory) and not os.path.islink(directory)):
        raise InputError(directory, "is not a folder of run files (--run NAME=DIR)")
    return RunSpec(name, paths.input_folder(directory, "--run", what="folder of run files"))


def run_file_name(task: str, lang: str, pivot: bool = False) -> str:
    return f"{task}-{lang}{'-pivot' if pivot else ''}.trec"


def parse_run(data: bytes, path: Path) -> dict[str, dict[str, float]]:
    """query-id -> {doc-id: score}; InputError (file:line) at the first malformed line."""
    return parse_run_lines(data, path).run


@dataclass
class ParsedRun:
    run: dict[str, dict[str, float]]  # query-id -> {doc-id: score}
    lines: int  # lines holding a result (blank ones aside)
    query_lines: dict[str, list[int]]  # query-id -> its lines, in order
    doc_lines: dict[str, list[int]]  # doc-id -> its lines, in order


def parse_run_lines(data: bytes, path: Path) -> ParsedRun:
    """The run and where each query and document appears; InputError at the first malformed line."""
    parsed = ParsedRun({}, 0, {}, {})
    run = parsed.run
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
        parsed.lines += 1
        parsed.query_lines.setdefault(qid, []).append(n)
        parsed.doc_lines.setdefault(doc, []).append(n)
    return parsed


@dataclass(frozen=True)
class Unknown:
    """Lines of a run file naming ids the release does not have: how many, and the first."""

    lines: int
    ids: int
    first_line: int
    first_id: str


def _unknown(where: dict[str, list[int]], known: set[str]) -> Unknown | None:
    bad = {i: ns for i, ns in where.items() if i not in known}
    if not bad:
        return None
    first = min(bad, key=lambda i: bad[i][0])
    return Unknown(sum(len(ns) for ns in bad.values()), len(bad), bad[first][0], first)


@dataclass(frozen=True)
class RunFileReport:
    """One run file held against the cell it was read for."""

    file: str  # the file's name in the run folder
    cell: str  # "<task>/<lang>", or "<task>/<lang> pivot" for a pivot control's file
    bytes: int
    lines: int  # result lines
    queries: int  # distinct queries it ranks for
    unknown_queries: Unknown | None  # lines naming a query the cell (or its pivot control) does not have
    unknown_documents: Unknown | None  # lines naming a document the cell's corpus does not have

    @property
    def empty(self) -> bool:
        return self.lines == 0

    def problems(self) -> list[str]:
        """What does not fit the release, one phrase each (none: the file fits)."""
        out = []
        if self.empty:
            what = "0 bytes" if self.bytes == 0 else "only blank lines"
            out.append(f"is empty ({what}): the run retrieved nothing, so every query of {self.cell} scores 0")
        for kind, u in (("query", self.unknown_queries), ("document", self.unknown_documents)):
            if u is not None:
                whose = f"{self.cell}" if kind == "query" else f"the corpus of {self.cell.split(' ')[0]}"
                out.append(f"{u.lines} of {self.lines} lines name a {kind} {whose} does not have "
                           f"({u.ids} distinct; first: line {u.first_line}, {u.first_id[:60]!r})")
        return out

    def summary(self) -> str:
        """One line for the command's summary: the file, its cell, and what does not fit."""
        head = f"{self.file} -> {self.cell}: {self.lines} lines, {self.queries} queries"
        problems = self.problems()
        return head + ("; " + "; ".join(problems) if problems else "")


def report_run_file(name: str, cell: str, data: bytes, parsed: ParsedRun, queries: set[str], documents: set[str]) -> RunFileReport:
    return RunFileReport(file=name, cell=cell, bytes=len(data), lines=parsed.lines, queries=len(parsed.run),
                         unknown_queries=_unknown(parsed.query_lines, queries),
                         unknown_documents=_unknown(parsed.doc_lines, documents))


@dataclass
class ExternalRuns:
    spec: RunSpec
    runs: dict[str, dict[str, dict[str, float]]]  # file name -> run
    data: dict[str, bytes]  # file name -> bytes (copied as they are into the results' runs/)
    sha256: dict[str, str]  # file name -> sha256
    parsed: dict[str, ParsedRun] = field(default_factory=dict)  # file name -> where its ids are
    ignored: list[str] = field(default_factory=list)  # *.trec files in the folder named for no cell of the release

    def reports(self, cells: dict[str, tuple[str, set[str], set[str]]]) -> list[RunFileReport]:
        """Each file read, against its cell: `cells` maps a file name to (cell label, the
        cell's query ids, its corpus' document ids)."""
        return [report_run_file(name, cells[name][0], self.data[name], self.parsed[name], cells[name][1], cells[name][2])
                for name in sorted(self.runs)]


def read_runs(spec: RunSpec, wanted: list[str]) -> ExternalRuns:
    """The run files of `wanted` (file names) that exist in the folder. Raises RunFilesError
    with one line per malformed file; InputError when the folder holds none of them, or
    when one of them is not a readable regular file (a FIFO, a dangling link, a folder)."""
    out = ExternalRuns(spec, {}, {}, {})
    errors: list[InputError] = []
    for name in wanted:
        path = spec.directory / name
        if not os.path.lexists(path):
            continue
        try:
            paths.input_file(path, "--run", what="run file")
            data = path.read_bytes()
            out.parsed[name] = parse_run_lines(data, path)
        except InputError as exc:
            errors.append(exc)
            continue
        except OSError as exc:
            errors.append(InputError(path, f"cannot be read ({exc.strerror or exc})", field="--run"))
            continue
        out.runs[name] = out.parsed[name].run
        out.data[name] = data
        out.sha256[name] = hashlib.sha256(data).hexdigest()
    if errors:
        raise RunFilesError(errors)
    if not out.runs:
        raise InputError(spec.directory, f"holds no run file named for a cell of this release "
                                         f"(expected names like {wanted[0] if wanted else '<task>-<lang>.trec'})")
    out.ignored = sorted(p.name for p in spec.directory.glob("*.trec") if p.name not in set(wanted))
    return out


def strict_problems(name: str, directory: Path, reports: list[RunFileReport]) -> InputError | None:
    """`--strict`: every file that does not fit the release is an error, one line each."""
    errors = [InputError(directory / r.file, "; ".join(r.problems()) + " (--strict)", field=f"--run {name}")
              for r in reports if r.problems()]
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else RunFilesError(errors)
