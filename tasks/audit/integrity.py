"""What ties a release folder to its manifest: every file listed with its sha256, and the
manifest naming the release the folder and the card name. Light (no parsing of the data),
so `mmedbench evaluate` checks it before scoring; the audit's `hashes` and
`manifest_identity` checks are these."""
from __future__ import annotations

import re
from pathlib import Path

from common.jsonio import file_digest
from schemas.config import VERSION_PATTERN

MANIFEST = "manifest.json"  # the one file the manifest cannot list; `manifest_identity` ties it to the card


def hash_problems(root: Path, manifest: dict, known: dict[str, str] | None = None) -> list[str]:
    """Every file of the release folder but the manifest, the audit reports included, must be
    listed in the manifest with its sha256; every listed file must be there. `known`: digests
    already taken (relative name -> hex)."""
    known = known or {}
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        return [f"{MANIFEST}: lists no files (field 'files')"]
    failures = []
    actual = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - {MANIFEST}
    for name in sorted(actual - listed.keys()):
        failures.append(f"{name}: not listed in the manifest")
    for name, entry in sorted(listed.items()):
        p = root / name
        if not p.is_file():
            failures.append(f"{name}: listed in the manifest but missing")
        elif (known.get(name) or file_digest(p)) != (entry.get("sha256") if isinstance(entry, dict) else None):
            failures.append(f"{name}: sha256 differs from the manifest")
    return failures


VERSION_SHAPE = re.compile(VERSION_PATTERN)
CARD = "README.md"


def identity_problems(root: Path, manifest: dict, name: str | None = None) -> list[str]:
    """The manifest names the release the folder and the card name: its version is the
    folder's name (when that is a version: a copy under another name is not checked by
    name) and the card's, its build id the card's. The manifest cannot list its own hash,
    so this is what ties it to the hashed files."""
    version, build_id = str(manifest.get("version", "")), str(manifest.get("build_id", ""))
    folder = name or Path(root).name
    failures = []
    if VERSION_SHAPE.match(folder) and folder != version:
        failures.append(f"{MANIFEST}: version {version!r} but the release folder is {folder!r}")
    card = Path(root) / CARD
    if not card.is_file():
        return failures  # a missing card fails `hashes`
    text = card.read_bytes().decode("utf-8", "replace")
    named = set(re.findall(r"^pretty_name: MMed-Bench-IR (\S+)\s*$", text, re.M)) | \
        set(re.findall(r"^# MMed-Bench-IR release (\S+)\s*$", text, re.M))
    if not named:
        failures.append(f"{CARD}: names no release version")
    elif named != {version}:
        failures.append(f"{MANIFEST}: version {version!r} but {CARD} names {', '.join(sorted(map(repr, named)))}")
    builds = set(re.findall(r"build `([0-9a-f]{12})`", text))
    if builds and builds != {build_id[:12]}:
        failures.append(f"{MANIFEST}: build id {build_id[:12]!r} but {CARD} names {', '.join(sorted(map(repr, builds)))}")
    return failures
