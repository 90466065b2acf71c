"""The CLI starts Prefect's temporary API server before importing the flow and points the
flow at it (mmedbench.cli._start_prefect_server / _prefect_server); a configured server is
left alone."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import os
from pathlib import Path
import mmedbench.cli as cli
cli._start_prefect_server()
proc = cli._SERVER.get("proc")
print("started", proc is not None)
if proc is not None:
    url = cli._SERVER["url"]
    from prefect.settings import PREFECT_API_URL
    with cli._prefect_server():
        print("inside", PREFECT_API_URL.value() == url)
        import httpx
        print("health", httpx.get(url + "/health").status_code)
    print("after", PREFECT_API_URL.value())
"""


def _probe(tmp_path, **env):
    base = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    base.update(PYTHONPATH=str(ROOT), PREFECT_HOME=str(tmp_path / "prefect-home"), **env)
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=base, capture_output=True, text=True,
                          timeout=180, check=True).stdout.split("\n")


def test_the_flow_runs_against_the_server_started_early(tmp_path):
    assert _probe(tmp_path)[:4] == ["started True", "inside True", "health 200", "after None"]


def test_a_configured_server_is_left_alone(tmp_path):
    assert _probe(tmp_path, PREFECT_API_URL="http://127.0.0.1:9/api")[:1] == ["started False"]
