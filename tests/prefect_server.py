"""One Prefect API server for a whole pytest run.

Every `mmedbench build` subprocess used to start Prefect's temporary server of its own
(about 5 s and 5.5 CPU s each, most of a bad-input test), and each pytest-xdist worker one
more. The run starts one (`pytest_configure` in tests/conftest.py, before the workers are
spawned) on a database of its own, and exports `PREFECT_API_URL`: the workers and every
command they start inherit it, and a command with a configured server leaves it alone
(`mmedbench.cli._start_prefect_server`). The tests about the command's own server (its start
racing a Ctrl-C, stopping with the command, a full disk under it) remove the variable.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

STARTUP_SECONDS = 120
FLAG = "MMEDBENCH_TEST_PREFECT_SERVER"  # set with PREFECT_API_URL when the run's server is in use


@dataclass
class RunServer:
    proc: subprocess.Popen
    url: str
    folder: Path

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_run_server() -> RunServer | None:
    """The server, answering on 127.0.0.1; None if it did not come up (each command then
    starts its own, as before)."""
    from mmedbench.cli import _dies_with, _healthy, prefect_server_argv

    # prefect's folder without importing it: Prefect reads its settings from the environment
    # once, at import, so this process must not import it before PREFECT_API_URL is set
    prefect_dir = Path(importlib.util.find_spec("prefect").origin).parent

    folder = Path(tempfile.mkdtemp(prefix="mmedbench-test-prefect-"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_SERVER_LOGGING_LEVEL": "CRITICAL",
           "PREFECT_SERVER_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{folder / 'prefect.db'}"}
    proc = subprocess.Popen(prefect_server_argv(prefect_dir, port), env=env, stdout=subprocess.DEVNULL,
                            preexec_fn=_dies_with(os.getpid()))
    server = RunServer(proc, f"http://127.0.0.1:{port}/api", folder)
    if not _healthy(server.url, proc, STARTUP_SECONDS):
        server.stop()
        return None
    return server


def without_run_server(env: dict[str, str]) -> dict[str, str]:
    """`env` for a command that must start its own server."""
    out = dict(env)
    if out.pop(FLAG, None):
        out.pop("PREFECT_API_URL", None)
    return out
