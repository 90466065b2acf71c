"""flows/progress.py: the pure line formatter, the thread-safe counter and its heartbeat,
and the lines `mmedbench build` prints on the sample (counts, not times)."""
from __future__ import annotations

import io
import re
import threading

import pytest

from flows.progress import Progress, current, format_clock, format_line, reporting

LINE = re.compile(r"^\[ ?\d{2,}:\d{2}\] (\S+) +(\d+)/(\d+)( shards)?( \(running\))?$")
START = re.compile(r"^\[ ?\d{2,}:\d{2}\] start \(running\)$")


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_format_line_exact():
    assert format_line(133, "ground", 5, 7, "shards") == "[ 02:13] ground        5/7 shards"
    assert format_line(0.9, "vocabulary", 1, 1) == "[ 00:00] vocabulary    1/1"
    assert format_line(343, "allocate", 0, 1, note="running") == "[ 05:43] allocate      0/1 (running)"
    assert format_line(7507, "realize", 12, 42, "shards") == "[125:07] realize       12/42 shards"
    assert format_line(5, "a_very_long_stage", 1, 2) == "[ 00:05] a_very_long_stage 1/2"
    assert format_line(30, "start", None, None, note="running") == "[ 00:30] start (running)"


def test_format_clock():
    assert [format_clock(s) for s in (0, 59.99, 60, 3599, 3600, -1)] == ["00:00", "00:59", "01:00", "59:59", "60:00", "00:00"]


def test_lines_as_runs_finish_with_totals_of_what_was_submitted():
    out, clock = io.StringIO(), Clock()
    p = Progress(out, heartbeat=30, clock=clock)
    p.submitted("load_vocabulary", "v")
    p.submitted("ground", "g1")
    p.submitted("ground", "g2")
    clock.now += 3
    p.finished("v")
    clock.now += 130
    p.finished("g2")
    p.finished("g2")  # a second report of the same run counts once
    p.finished("unknown")  # not submitted through the reporter: ignored
    p.finished("g1")
    with p.step("release"):
        clock.now += 61
    assert out.getvalue().splitlines() == [
        "[ 00:03] vocabulary    1/1",
        "[ 02:13] ground        1/2 shards",
        "[ 02:13] ground        2/2 shards",
        "[ 03:14] release       1/1",
    ]


def test_heartbeat_only_after_silence_and_only_while_waiting():
    out, clock = io.StringIO(), Clock()
    p = Progress(out, heartbeat=30, clock=clock)
    clock.now += 29
    p.beat()
    assert out.getvalue() == ""
    clock.now += 1
    p.beat()  # nothing submitted yet: Prefect is starting
    assert out.getvalue() == "[ 00:30] start (running)\n"
    out.truncate(0), out.seek(0)
    p.submitted("allocate", "a")
    clock.now += 70
    p.beat()
    assert out.getvalue() == ""  # submitted, not yet waited on
    p.waiting("a")
    p.beat()
    clock.now += 29
    p.beat()  # 29 s since the last line: still silent
    clock.now += 1
    p.beat()
    clock.now += 10
    p.beat()
    clock.now += 20
    p.beat()
    p.finished("a")
    clock.now += 100
    p.beat()  # the stage is done: no heartbeat for it
    assert out.getvalue().splitlines() == [
        "[ 01:40] allocate      0/1 (running)",
        "[ 02:10] allocate      0/1 (running)",  # 30 s after the previous line
        "[ 02:40] allocate      0/1 (running)",  # not at 02:20: 10 s only since 02:10
        "[ 02:40] allocate      1/1",
    ]


def test_counts_are_exact_under_threads():
    out = io.StringIO()
    p = Progress(out)
    n_threads, per_thread = 8, 200
    for i in range(n_threads * per_thread):
        p.submitted("ground", i)

    def work(t):
        for i in range(t * per_thread, (t + 1) * per_thread):
            p.finished(i)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = n_threads * per_thread
    lines = out.getvalue().splitlines()
    assert [LINE.match(l).group(2, 3) for l in lines] == [(str(k), str(total)) for k in range(1, total + 1)]


def test_silent_unless_a_command_installs_a_reporter():
    assert current().stream is None
    out = io.StringIO()
    with reporting(Progress(out, heartbeat=3600)) as p:
        assert current() is p
        with current().step("write"):
            pass
    assert current().stream is None
    with current().step("write"):  # the silent reporter: nothing printed
        pass
    assert out.getvalue().splitlines()[0].endswith("write         1/1")
    assert len(out.getvalue().splitlines()) == 1


# -- the command line on the sample ------------------------------------------------------

SAMPLE_SHARDS = 1  # configs/sample.toml: the sample sources fit in one shard (11 task runs)
SAMPLE_LANGUAGES = 6


@pytest.mark.slow
def test_build_prints_stage_and_shard_counts(sample_build, tmp_path, monkeypatch):
    """`mmedbench build` on the sample (from the session's cache): one stderr line per
    finished task in flow order, in exactly this sequence; stdout and the release are
    untouched by it. --quiet prints none."""
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH
    from typer.testing import CliRunner

    from mmedbench.cli import app
    from tests.conftest import SAMPLE_CONFIG

    # the command sets these with setdefault: pin them to the session's, restored after
    monkeypatch.setenv("PREFECT_LOCAL_STORAGE_PATH", str(PREFECT_LOCAL_STORAGE_PATH.value()))
    monkeypatch.setenv("PREFECT_LOGGING_LEVEL", "WARNING")
    work = str(sample_build["base"] / "work")
    runner = CliRunner()
    result = runner.invoke(app, ["build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(tmp_path / "a"),
                                 "--work-dir", work])
    assert result.exit_code == 0, result.output
    lines = [l for l in result.stderr.splitlines() if LINE.match(l) and not l.endswith("(running)")]
    counts = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in map(LINE.match, lines)]
    shards, realize = SAMPLE_SHARDS, SAMPLE_SHARDS * SAMPLE_LANGUAGES
    assert counts == (
        [("vocabulary", 1, 1), ("sources", 1, 1), ("memory", 1, 1)]
        + [("ground", k, shards) for k in range(1, shards + 1)]
        + [("realize", k, realize) for k in range(1, realize + 1)]
        + [("lexicon", 1, 1), ("allocate", 1, 1)]
        + [(name, 1, 1) for name in ("write", "evaluate", "card", "audit", "publish")]
    )
    assert all(l.endswith(" shards") == (l.split()[2] in ("ground", "realize")) for l in lines)
    assert "[" not in result.stdout  # no elapsed time in what the command prints on stdout

    quiet = runner.invoke(app, ["build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(tmp_path / "b"),
                                "--work-dir", work, "--quiet"])
    assert quiet.exit_code == 0, quiet.output
    assert not any(LINE.match(l) or START.match(l) for l in quiet.stderr.splitlines())
    assert quiet.stdout.replace(str(tmp_path / "b"), "R") == result.stdout.replace(str(tmp_path / "a"), "R")
