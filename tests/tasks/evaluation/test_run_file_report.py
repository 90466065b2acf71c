"""`evaluate --run NAME=DIR` says what in a run file does not fit the release (issue 47,
class 3): lines naming a query or document the release does not have (count and first, per
file), an empty file, which file was read for which cell; `--strict` makes them errors."""
from __future__ import annotations

import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from common.errors import InputError
from mmedbench.cli import app
from tasks.evaluation.external import Unknown, parse_run_lines, report_run_file
from tests.evaluation_release import make_tiny_release

runner = CliRunner()

XQA_JA = "xqa-ja-1 Q0 p3 1 2.5 mine\nxqa-ja-1 Q0 p1 2 1.0 mine\nxqa-ja-2 Q0 p4 1 1 mine\n"
# line 2 names a query the release does not have, lines 3 and 4 a document its corpus does not have
XQA_JA_STRANGERS = ("xqa-ja-1 Q0 p3 1 2.5 mine\nxqa-ja-9 Q0 p1 1 1.0 mine\nxqa-ja-2 Q0 p99 1 1 mine\n"
                    "xqa-ja-1 Q0 p77 2 0.5 mine\n")


@pytest.fixture()
def release(tmp_path):
    return make_tiny_release(tmp_path / "release")


def _runs(folder, files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    return folder


def _evaluate(release, runs, out, *more):
    return runner.invoke(app, ["evaluate", str(release), "--run", f"mine={runs}", "--out", str(out), "-q", *more])


def test_strangers_are_counted_with_the_first_of_each_and_strict_refuses_them(release, tmp_path):
    runs = _runs(tmp_path / "mine", {"xqa-ja.trec": XQA_JA_STRANGERS, "cd-en.trec": "cd-en-C0000001 Q0 C0000001 1 1 mine\n",
                                     "xqa-de.trec": "x Q0 y 1 1 mine\n"})
    r = _evaluate(release, runs, tmp_path / "out")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    at = lines.index(f"  run mine ({runs}): 2 files read, 1 not fitting the release (--strict refuses them)")
    assert lines[at + 1:at + 4] == [
        "    cd-en.trec -> cd/en: 1 lines, 1 queries",
        "    xqa-ja.trec -> xqa/ja: 4 lines, 3 queries; 1 of 4 lines name a query xqa/ja does not have (1 distinct; "
        "first: line 2, 'xqa-ja-9'); 2 of 4 lines name a document the corpus of xqa/ja does not have (2 distinct; "
        "first: line 3, 'p99')",
        "    xqa-de.trec: not read (no cell of this release has that name)"]
    r = _evaluate(release, runs, tmp_path / "strict", "--strict")
    assert r.exit_code == 2, r.output
    assert r.output.splitlines() == [
        f"error: {runs}/xqa-ja.trec: field '--run mine': 1 of 4 lines name a query xqa/ja does not have (1 distinct; "
        "first: line 2, 'xqa-ja-9'); 2 of 4 lines name a document the corpus of xqa/ja does not have (2 distinct; first: "
        "line 3, 'p99') (--strict)"]
    assert not (tmp_path / "strict").exists()  # nothing written


def test_an_empty_run_file_is_named_and_strict_refuses_it(release, tmp_path):
    runs = _runs(tmp_path / "mine", {"xqa-ja.trec": XQA_JA, "xqa-ja-pivot.trec": ""})
    r = _evaluate(release, runs, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert ("    xqa-ja-pivot.trec -> xqa/ja pivot: 0 lines, 0 queries; is empty (0 bytes): the run retrieved nothing, "
            "so every query of xqa/ja pivot scores 0") in r.output.splitlines()
    assert "    xqa-ja.trec -> xqa/ja: 3 lines, 2 queries" in r.output.splitlines()
    r = _evaluate(release, runs, tmp_path / "strict", "--strict")
    assert r.exit_code == 2 and r.output.splitlines() == [
        f"error: {runs}/xqa-ja-pivot.trec: field '--run mine': is empty (0 bytes): the run retrieved nothing, so every "
        "query of xqa/ja pivot scores 0 (--strict)"], r.output


def test_a_query_of_another_split_is_the_releases(release, tmp_path):
    """xqa-en-4 is a dev query: scoring test, its line is not a stranger."""
    runs = _runs(tmp_path / "mine", {"xqa-en.trec": "xqa-en-1 Q0 p1 1 1 mine\nxqa-en-4 Q0 p4 1 1 mine\n"})
    r = _evaluate(release, runs, tmp_path / "out", "--strict")
    assert r.exit_code == 0, r.output
    assert "    xqa-en.trec -> xqa/en: 2 lines, 2 queries" in r.output.splitlines()


@pytest.mark.parametrize("kind", ["fifo", "folder", "dangling"])
def test_a_run_file_that_is_no_file_is_one_line(release, tmp_path, kind):
    runs = _runs(tmp_path / "mine", {"cd-en.trec": "cd-en-C0000001 Q0 C0000001 1 1 mine\n"})
    odd = runs / "xqa-ja.trec"
    {"fifo": lambda: os.mkfifo(odd), "folder": odd.mkdir, "dangling": lambda: odd.symlink_to(tmp_path / "gone")}[kind]()
    r = _evaluate(release, runs, tmp_path / "out")
    expected = {"fifo": "is a FIFO (named pipe); expected a regular run file", "folder": "is a folder; expected a run file",
                "dangling": f"is a symbolic link to {tmp_path}/gone, which does not exist"}[kind]
    assert (r.exit_code, r.output.splitlines()) == (2, [f"error: {odd}: field '--run': {expected}"])


# ----------------------------------------------------------------------------- pure
def test_the_report_counts_lines_and_distinct_ids():
    data = b"a Q0 d1 1 1 t\nb Q0 d9 1 1 t\n\nb Q0 d8 2 1 t\nc Q0 d9 1 1 t\n"
    rep = report_run_file("x.trec", "xqa/en", data, parse_run_lines(data, "x.trec"), {"a", "c"}, {"d1", "d8"})
    assert (rep.lines, rep.queries, rep.empty) == (4, 3, False)
    assert rep.unknown_queries == Unknown(lines=2, ids=1, first_line=2, first_id="b")
    assert rep.unknown_documents == Unknown(lines=2, ids=1, first_line=2, first_id="d9")
    blank = report_run_file("y.trec", "xqa/en", b"\n \n", parse_run_lines(b"\n \n", "y.trec"), {"a"}, {"d1"})
    assert blank.empty and blank.problems() == ["is empty (only blank lines): the run retrieved nothing, so every query of "
                                                "xqa/en scores 0"]


# ----------------------------------------------------------------------------- fuzz: malformed lines
TOKEN = st.text(alphabet=string.ascii_letters + string.digits + "-_.", min_size=1, max_size=6)
NUMBER = st.one_of(st.integers(-5, 5).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr), TOKEN)
GOOD = st.tuples(st.sampled_from(["q1", "q2", "q3"]), st.just("Q0"), st.sampled_from(["d1", "d2", "d3"]),
                 st.integers(0, 9).map(str), st.floats(-10, 10, allow_nan=False).map(repr), st.just("t")).map(" ".join)
BAD = st.one_of(
    st.lists(TOKEN, min_size=0, max_size=9).map(" ".join),  # any number of fields
    st.tuples(TOKEN, TOKEN, TOKEN, NUMBER, NUMBER, TOKEN).map(" ".join),  # rank and score of any kind
    st.binary(max_size=12).map(lambda b: b.decode("latin-1")),  # bytes that may not be UTF-8 once re-encoded below
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.one_of(GOOD, BAD), max_size=12), raw=st.booleans())
def test_any_run_file_is_parsed_and_reported_or_one_line_at_its_line(lines, raw):
    """trec_eval refuses a malformed line rather than guess: so do we, at the right line,
    one line, never another exception; what parses is reported against the release."""
    text = "\n".join(lines)
    data = text.encode("latin-1" if raw else "utf-8", "replace")
    try:
        parsed = parse_run_lines(data, "r.trec")
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("r.trec:") and exc.line is not None
        assert 1 <= exc.line <= max(1, data.count(b"\n") + 1)
        return
    rep = report_run_file("r.trec", "xqa/en", data, parsed, {"q1", "q2"}, {"d1", "d2"})
    named = [l.split() for l in text.split("\n") if l.split()]
    assert rep.lines == len(named) and rep.queries == len({f[0] for f in named})
    strangers = [f for f in named if f[0] not in {"q1", "q2"}]
    assert (rep.unknown_queries.lines if rep.unknown_queries else 0) == len(strangers)
    if strangers:
        assert rep.unknown_queries.first_id == strangers[0][0]
    assert rep.empty == (not named)
