"""Every process that runs stages uses the batch collector schedule (common.gcpolicy)."""
from __future__ import annotations

import gc
import subprocess
import sys

from common.gcpolicy import BATCH_THRESHOLDS, DEFAULT_THRESHOLDS
from common.workers import IsolatedProcess
from tests.conftest import ROOT


def test_the_cli_collects_on_the_batch_schedule():
    # the CLI's entry point, then a command that reports nothing else: `main` sets it first
    code = ("import gc, sys; import mmedbench.cli as c; c.app = lambda: print(gc.get_threshold()); c.main()")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(BATCH_THRESHOLDS)
    assert BATCH_THRESHOLDS != DEFAULT_THRESHOLDS


def test_a_spawned_child_collects_on_the_batch_schedule():
    proc = IsolatedProcess()
    try:
        assert tuple(proc.call(gc.get_threshold)) == BATCH_THRESHOLDS
    finally:
        proc.close()
