"""Real file-system faults for tests: a small tmpfs (a full disk) or one remounted read-only,
mounted where the test runs as root with the right to mount; elsewhere the test is skipped
with the reason (the in-process fault layer in tests/cli/test_disk_faults.py still runs)."""
from __future__ import annotations

import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True)


@contextmanager
def small_fs(where: Path, size: str = "1m"):
    """A tmpfs of `size` mounted at `where` (made), unmounted afterwards."""
    where.mkdir(parents=True, exist_ok=True)
    r = _run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where))
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): {r.stderr.strip() or r.returncode}")
    try:
        yield where
    finally:
        _run("umount", "-l", str(where))


def remount_read_only(where: Path) -> None:
    r = _run("mount", "-o", "remount,ro", str(where))
    if r.returncode != 0:
        pytest.skip(f"cannot remount {where} read-only: {r.stderr.strip()}")
