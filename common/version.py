"""What code built a release: the package version, the git commit, and a fingerprint of
the builder's own sources (stage code, not the CLI or the flows that only wire stages)."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

__version__ = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
# the packages whose code decides a release's bytes; the CLI and the flows only wire stages
FINGERPRINTED = ("common", "schemas", "umls", "tasks")

_CODE: list[str] = []


def code_fingerprint() -> str:
    """sha256 over the builder's own Python sources. A stage's output depends on the pure
    functions it calls in other modules, not only on its wrapper's source, so any code
    change invalidates the cache: conservative, and never stale."""
    if not _CODE:
        h = hashlib.sha256()
        for pkg in FINGERPRINTED:
            for f in sorted((ROOT / pkg).rglob("*.py")):
                h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes())
        _CODE.append(h.hexdigest())
    return _CODE[0]


def code_version() -> str:
    """The package version plus the git commit when the sources are a checkout."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        return f"{__version__}+g{commit[:12]}"
    except (OSError, subprocess.SubprocessError):
        return __version__
