"""flows/progress.py: the pure line formatter, the thread-safe counter and its heartbeat,
and the lines `mmedbench build` prints on the sample (counts, not times)."""
from __future__ import annotations

import io
import re
import threading

import pytest

from flows.progress import Progress, current, format_clock, format_line, reporting

LINE = re.compile(r"^\[ ?\d{2,}:\d{2}\] (\S+) +(\d+)/(\d+)( shards)?( \(running\))?$")
EVALUATE = re.compile(r"^\[ ?\d{2,}:\d{2}\] evaluate +(\d+)/(\d+) cells(?: \((.*)\))?$")
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


def test_a_stage_that_counts_its_own_work_prints_its_counts_and_notes_and_no_1_of_1():
    """The evaluate stage inside `build`: its total first, a line per cell scored and per
    note (texts encoded, a corpus indexed) with the count so far; the heartbeat repeats the
    count; its step's end adds no `1/1`. A stage after it counts as before."""
    out, clock = io.StringIO(), Clock()
    p = Progress(out, heartbeat=30, clock=clock)
    with p.step("evaluate"):
        counter = p.counter("evaluate")
        counter.start(4)
        clock.now += 2
        counter.note("minilm: encoded 128/300 documents of cd corpus")
        clock.now += 40
        p.beat()  # 40 s of silence: the count so far, running
        counter.count(1, 4, "minilm cd/fr: 20 queries over 300 documents")
        counter.note("minilm: encoded 20/20 cd/ja queries")
        counter.count(2, 4, "minilm cd/ja: 20 queries over 300 documents")
    with p.step("card"):
        clock.now += 1
    assert out.getvalue().splitlines() == [
        "[ 00:00] evaluate      0/4 cells",
        "[ 00:02] evaluate      0/4 cells (minilm: encoded 128/300 documents of cd corpus)",
        "[ 00:42] evaluate      0/4 cells (running)",
        "[ 00:42] evaluate      1/4 cells (minilm cd/fr: 20 queries over 300 documents)",
        "[ 00:42] evaluate      1/4 cells (minilm: encoded 20/20 cd/ja queries)",
        "[ 00:42] evaluate      2/4 cells (minilm cd/ja: 20 queries over 300 documents)",
        "[ 00:43] card          1/1",
    ]
    clock.now += 100
    p.beat()  # the stage is done: nothing waits on it
    assert len(out.getvalue().splitlines()) == 7


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


@pytest.mark.slow
def test_a_build_that_evaluates_prints_what_mmedbench_evaluate_prints(sample_build, tmp_path, monkeypatch):
    """`build --evaluate bm25 --evaluate dense:tiny=DIR` on the sample (its stages from the
    session's cache): the evaluate stage's lines are its total, then one line per cell each
    system scored (done/total cells) and per corpus indexed or chunk of texts encoded, in
    exactly the order and with exactly the counts and messages that `mmedbench evaluate`
    prints on the published release; never a bare `1/1`."""
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH
    from typer.testing import CliRunner

    from mmedbench.cli import app
    from tests.conftest import SAMPLE_CELLS, SAMPLE_CONFIG
    from tests.tiny_model import tiny_model

    monkeypatch.setenv("PREFECT_LOCAL_STORAGE_PATH", str(PREFECT_LOCAL_STORAGE_PATH.value()))
    monkeypatch.setenv("PREFECT_LOGGING_LEVEL", "WARNING")
    model = tiny_model(tmp_path / "model", seed=45)  # weights of its own: no other test's embeddings are cached
    systems = ["bm25", f"dense:tiny={model}"]
    runner = CliRunner()
    built = runner.invoke(app, ["build", "--config", str(SAMPLE_CONFIG), "--release-dir", str(tmp_path / "r"), "--work-dir",
                                str(sample_build["base"] / "work"), *(a for s in systems for a in ("--evaluate", s))])
    assert built.exit_code == 0, built.output
    lines = built.stderr.splitlines()
    stages = [LINE.match(l).group(1) for l in lines if LINE.match(l) and not l.endswith("(running)")]
    assert stages[-4:] == ["write", "card", "audit", "publish"]  # evaluate's own lines say cells, never 1/1
    ours = [l for l in lines if l.split("] ", 1)[-1].startswith("evaluate ")]
    assert [l for l in ours if not EVALUATE.match(l)] == []
    got = [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in map(EVALUATE.match, ours) if m.group(3) != "running"]
    first, last = lines.index(ours[0]), lines.index(ours[-1])
    assert [l for l in lines[first:last] if l not in ours] == []  # one run of lines, between write and card

    # what `mmedbench evaluate` prints on the release the build published, encoding afresh
    evaluated = runner.invoke(app, ["evaluate", str(tmp_path / "r" / "0.1.0"), *(a for s in systems for a in ("-r", s)),
                                    "--out", str(tmp_path / "res"), "--cache-dir", str(tmp_path / "cache")])
    assert evaluated.exit_code == 0, evaluated.output
    total = SAMPLE_CELLS * len(systems)
    expected, done = [(0, total, None)], 0
    for line in evaluated.stderr.splitlines():
        count = re.match(r"^\[(\d+)/(\d+)\] (.*)$", line)
        if count:
            done = int(count.group(1))
            expected.append((done, int(count.group(2)), count.group(3)))
        else:
            expected.append((done, total, line))
    assert got == expected
    cell_line = re.compile(r"^\S+ (xqa|cd|evidence)/[a-z]+: \d+ queries")
    assert [d for d, _t, m in got if m and cell_line.match(m)] == list(range(1, total + 1))
    notes = [m for _d, _t, m in got if m and not cell_line.match(m)]
    assert any(" indexing " in m for m in notes) and any(" encoded " in m for m in notes), notes
