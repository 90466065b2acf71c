"""Ctrl-C and SIGTERM of add-language and evaluate (build's are in test_interrupts.py, whose
helpers these use; a file of their own so that the slow suite's two workers share them)."""
from __future__ import annotations

import signal

import pytest

from tests.evaluation_release import make_tiny_release
from tests.cli.test_interrupts import BUILD_LINE, cli, finish, held_cli, stop, tree
from tests.conftest import warm_env

pytestmark = pytest.mark.slow


def test_sigterm_stops_add_language(sample_build, tmp_path):
    from tests.flows.test_add_language import german_config

    releases = tmp_path / "releases"
    # on the session's warm work dir: the stages the sample build ran come from the cache
    proc = held_cli("release:written", tmp_path, "add-language", str(sample_build["release"]), "--config",
                    str(german_config(tmp_path)), "--release-dir", str(releases), "--work-dir", str(sample_build["base"] / "work"),
                    "-q", env=warm_env())
    rc, out, err = stop(proc, signal.SIGTERM, group=False)
    assert (rc, out, err.splitlines()) == (143, "", [f"interrupted (SIGTERM): {BUILD_LINE}"])
    assert list(releases.iterdir()) == []


def test_ctrl_c_while_evaluate_moves_its_results_in(tmp_path):
    release, out = make_tiny_release(tmp_path / "release"), tmp_path / "results"
    assert finish(cli("evaluate", str(release), "-r", "bm25", "--out", str(out), "-q"))[0] == 0
    first = tree(out)
    # the second run is stopped with the first one's results removed and its own not yet in
    rc, stdout, err = stop(held_cli("evaluate:moving", tmp_path, "evaluate", str(release), "-r", "bm25", "--out", str(out), "-q"),
                           signal.SIGINT, group=True)
    assert (rc, stdout, err.splitlines()) == (130, "", [f"interrupted (SIGINT): {out} holds no complete new results; run the same command again"])
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no build folder, no lock
    assert not (out / "results.json").exists()  # what is left does not look complete
    rc, _o, err = finish(cli("evaluate", str(release), "-r", "bm25", "--out", str(out), "-q"))
    assert rc == 0, err
    assert tree(out) == first
