"""`mmedbench evaluate` and the folders it touches (issue 29): --out is the user's (only what
evaluate wrote there is replaced, anything else is refused with one line and kept),
concurrent runs take turns, and a release whose files no longer match its manifest is not
scored (exit 1, one line naming the file)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from typer.testing import CliRunner

from mmedbench.cli import app
from tasks.evaluation.outdir import INVENTORY, _lock
from tests.conftest import ROOT
from tests.evaluation_release import make_tiny_release

runner = CliRunner()


@pytest.fixture
def release(tmp_path):
    return make_tiny_release(tmp_path / "release")


def tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def evaluate(release, out, *extra):
    return runner.invoke(app, ["evaluate", str(release), "-r", "bm25", "--out", str(out), "-q", *extra])


def test_a_rerun_replaces_only_what_evaluate_wrote(release, tmp_path):
    out = tmp_path / "out"
    assert evaluate(release, out).exit_code == 0
    first = tree(out)
    assert INVENTORY in first and "results.json" in first and "runs/bm25/cd-ja.trec" in first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "release"]  # no build folder, no lock left
    r = evaluate(release, out)
    assert r.exit_code == 0, r.output
    assert tree(out) == first


@pytest.mark.parametrize("name", ["notes.txt", "runs/bm25/my.trec", "figures/mine/plot.png"])
def test_a_file_evaluate_did_not_write_is_refused_and_kept(release, tmp_path, name):
    out = tmp_path / "out"
    assert evaluate(release, out).exit_code == 0
    before = tree(out)
    (out / name).parent.mkdir(parents=True, exist_ok=True)
    (out / name).write_text("mine")
    r = evaluate(release, out)
    assert (r.exit_code, r.output.splitlines()) == (2, [
        f"error: {out}: holds files mmedbench evaluate did not write ({name}); "
        "nothing was deleted: choose an empty or new --out folder"])
    assert tree(out) == before | {name: b"mine"}


def test_a_result_the_user_edited_is_refused_and_kept(release, tmp_path):
    out = tmp_path / "out"
    assert evaluate(release, out).exit_code == 0
    (out / "results.md").write_text("my notes")
    r = evaluate(release, out)
    assert (r.exit_code, r.output.splitlines()) == (2, [
        f"error: {out / 'results.md'}: changed since mmedbench evaluate wrote it; nothing was deleted: "
        "move it away or choose another --out folder"])
    assert (out / "results.md").read_text() == "my notes"


def test_out_naming_a_file_is_one_line(release, tmp_path):
    (tmp_path / "f").write_text("x")
    r = evaluate(release, tmp_path / "f")
    assert (r.exit_code, r.output.splitlines()) == (2, [f"error: {tmp_path / 'f'}: field '--out': is a file; expected a folder"])


def test_a_tampered_release_is_not_scored(release, tmp_path):
    """An edited qrels score: exit 1, one line naming the file, nothing written."""
    p = release / "xqa" / "en" / "qrels" / "test.tsv"
    p.write_text(p.read_text().replace("\t1\n", "\t0\n", 1))
    r = evaluate(release, tmp_path / "out")
    assert (r.exit_code, r.output.splitlines()) == (1, [
        f"error: {release}: does not match its manifest, so it is not used: xqa/en/qrels/test.tsv: sha256 differs "
        "from the manifest; run mmedbench audit on it"])
    assert not (tmp_path / "out").exists()


def test_an_unlisted_file_in_the_release_is_not_scored(release, tmp_path):
    (release / "xqa" / "en" / "extra.jsonl").write_text("{}\n")
    r = evaluate(release, tmp_path / "out")
    assert r.exit_code == 1 and "xqa/en/extra.jsonl: not listed in the manifest" in r.output


def test_concurrent_runs_into_one_folder_take_turns(release, tmp_path):
    """A second run waits for the lock the first holds, then writes complete results."""
    out = tmp_path / "out"
    held, release_lock = threading.Event(), threading.Event()

    def hold_the_lock():
        with _lock(out):
            held.set()
            release_lock.wait(120)

    t = threading.Thread(target=hold_the_lock)
    t.start()
    held.wait(10)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "mmedbench.cli", "evaluate", str(release), "-r", "bm25", "--out", str(out), "-q"],
                                cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(8)  # long enough to have scored the tiny release, were it not waiting
        assert proc.poll() is None and not (out / "results.json").exists()
    finally:
        release_lock.set()
        t.join()
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert (out / "results.json").exists() and (out / INVENTORY).exists()
