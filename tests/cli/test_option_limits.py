"""Every numeric option has a range checked before work starts, and a bad value is the same
one `error:` line as every other bad input, never click's usage box; a text beyond a
library's limit (spaCy's max_length) is grounded in pieces, line by line (issue 47, class 2)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from common.longtext import pieces
from mmedbench.cli import app
from tests.conftest import ROOT
from tests.evaluation_release import make_tiny_release

runner = CliRunner()
CORES = len(os.sched_getaffinity(0))


def _lines(*args: str) -> tuple[int, list[str]]:
    r = runner.invoke(app, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output.splitlines()


@pytest.mark.parametrize("value,message", [
    ("-1", f"expected 0 (the cores this process may use) or 1 to {4 * CORES} (4 x its {CORES} cores), got -1"),
    ("100000", f"expected 0 (the cores this process may use) or 1 to {4 * CORES} (4 x its {CORES} cores), got 100000"),
    (str(4 * CORES + 1), f"expected 0 (the cores this process may use) or 1 to {4 * CORES} (4 x its {CORES} cores), "
                         f"got {4 * CORES + 1}"),
    ("abc", "Input should be a valid integer, unable to parse string as an integer"),
])
def test_threads_out_of_range_is_one_line_before_any_model_loads(tmp_path, value, message):
    release = make_tiny_release(tmp_path / "release")
    code, lines = _lines("evaluate", str(release), "-r", "minilm", "--threads", value, "--out", str(tmp_path / "out"))
    assert (code, lines) == (2, [f"error: --threads: {message}"])
    assert not (tmp_path / "out").exists()


def test_threads_in_range_are_taken(tmp_path):
    release = make_tiny_release(tmp_path / "release")
    for value in ("0", "1", str(4 * CORES)):
        code, lines = _lines("evaluate", str(release), "-r", "bm25", "--threads", value, "--out", str(tmp_path / value), "-q")
        assert code == 0, lines


@pytest.mark.parametrize("option,value,message", [
    ("--max-attempts", "0", "expected an integer from 1 to 20, got 0"),
    ("--max-attempts", "21", "expected an integer from 1 to 20, got 21"),
    ("--timeout", "nan", "expected seconds from 0.1 to 600, got nan"),
    ("--timeout", "0", "expected seconds from 0.1 to 600, got 0"),
    ("--timeout", "1e9", "expected seconds from 0.1 to 600, got 1e+09"),
    ("--timeout", "inf", "expected seconds from 0.1 to 600, got inf"),
    ("--min-interval", "-1", "expected seconds from 0 to 3600, got -1"),
    ("--back-translation-min", "1.5", "expected a similarity from 0 to 1, got 1.5"),
    ("--back-translation-min", "nan", "expected a similarity from 0 to 1, got nan"),
])
def test_translates_numeric_options_are_one_line(tmp_path, option, value, message):
    texts = tmp_path / "t.txt"
    texts.write_text("fever\n")
    code, lines = _lines("translate", "--engine", "google", "--source", "en", "--target", "fr", str(texts),
                         "--memory", str(tmp_path / "m.jsonl"), option, value)
    assert (code, lines) == (2, [f"error: {option}: {message}"])
    assert not (tmp_path / "m.jsonl").exists()


# ----------------------------------------------------------------------------- long texts
@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab .。\t!?x"), max_size=400), limit=st.integers(1, 60))
def test_pieces_cover_the_text_in_order_each_within_the_limit(text, limit):
    got = pieces(text, limit)
    assert "".join(p for _start, p in got) == text
    assert all(len(p) <= limit for _start, p in got)
    assert [s for s, _p in got] == [sum(len(p) for _s, p in got[:i]) for i in range(len(got))]
    assert all(p for _s, p in got) or text == ""


def test_pieces_end_at_a_sentence_then_a_space():
    assert pieces("Fever. Cough now. Pain", 12) == [(0, "Fever. "), (7, "Cough now. "), (18, "Pain")]
    assert pieces("aaaa bbbb cccc", 7) == [(0, "aaaa "), (5, "bbbb "), (10, "cccc")]
    assert pieces("abcdefghij", 4) == [(0, "abcd"), (4, "efgh"), (8, "ij")]


def test_a_line_longer_than_a_piece_is_grounded_in_pieces_at_the_right_offsets(monkeypatch):
    """The same mentions, at the same offsets, as grounding the whole line at once (cut at
    sentence ends, no mention spans a cut)."""
    import common.longtext

    line = " ".join(["The patient has hypertension and asthma."] * 40)
    code, whole = _lines_in("ground", "--lang", "en", stdin=line + "\n")
    assert code == 0
    monkeypatch.setattr(common.longtext, "PIECE_CHARS", 100)
    code, cut = _lines_in("ground", "--lang", "en", stdin=line + "\nasthma\n")
    assert code == 0 and len(cut) == 2
    assert json.loads(cut[0]) == json.loads(whole[0]) and len(json.loads(cut[0])["mentions"]) >= 40
    assert [m["text"] for m in json.loads(cut[0])["mentions"]] == [line[m["start"]:m["end"]] for m in json.loads(cut[0])["mentions"]]


def _lines_in(*args: str, stdin: str) -> tuple[int, list[str]]:
    r = runner.invoke(app, list(args), input=stdin)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout.splitlines()


@pytest.mark.slow
def test_a_line_beyond_spacys_max_length_is_grounded_and_the_next_line_too():
    """The issue's probe (a line of 1.24M characters: exit 70, spaCy's E088), just past
    spaCy's 1,000,000: one JSON line per input line (the probe itself: 395 s on a loaded machine).
    A sentence every 1,000 characters, the rest one long token (a blob, as pasted logs carry):
    the same length and cuts as prose, a twentieth of the mentions (24 s of grounding -> 6 s)."""
    long_line = (("Fever and cough in a patient with asthma. " + "x" * 957 + " ") * 1_001)[:1_000_100]
    proc = subprocess.run([sys.executable, "-m", "mmedbench.cli", "ground", "--lang", "en"],
                          input=(long_line + "\nasthma\n").encode(), capture_output=True, timeout=900, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert b"Traceback" not in proc.stderr
    out = [json.loads(l) for l in proc.stdout.decode().splitlines()]
    assert len(out) == 2 and out[1]["mentions"] and out[1]["mentions"][0]["text"] == "asthma"
    first = out[0]["mentions"]
    assert first and max(m["end"] for m in first) > 999_000
    assert all(long_line[m["start"]:m["end"]] == m["text"] for m in first)
