"""A hook that lets tests stop a real build at a chosen point, and nothing else.

`hold("<point>")` does nothing unless the environment says MMEDBENCH_HOLD=<point>; then it
writes MMEDBENCH_HOLD_FILE (so the test knows the build got there) and waits to be killed.
tests/cli/test_interrupts.py uses it to SIGKILL a build while grounding, while allocating and
while writing a release, then proves that the rerun publishes the same bytes.
"""
from __future__ import annotations

import os
import time


def hold(point: str) -> None:
    if os.environ.get("MMEDBENCH_HOLD") != point:
        return
    marker = os.environ.get("MMEDBENCH_HOLD_FILE")
    if marker:
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write(f"{point} {os.getpid()}\n")
    while True:  # until the test kills the process
        time.sleep(0.5)
