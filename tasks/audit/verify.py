"""Before a release is used (scored by `mmedbench evaluate`): its files are the ones its
manifest vouches for. The audit's `hashes` and `manifest_identity` checks, without the
others' minutes: a file edited after publishing (a qrels score, say) would otherwise be
scored as if it were the release."""
from __future__ import annotations

import json
from pathlib import Path

from common.errors import AuditFailedError, InputError
from tasks.audit.integrity import MANIFEST, hash_problems, identity_problems


def verify_release(root: Path) -> None:
    """Raise AuditFailedError (exit 1, one line naming the first file at fault) unless
    every file of `root` is listed in its manifest with its sha256 and the manifest's
    version agrees with the folder and the card. A folder without a manifest is left to
    the caller: `build --evaluate` scores its own release before its manifest is written
    (and audits it after), and a user's folder without one is refused when it is read."""
    root = Path(root)
    path = root / MANIFEST
    if not path.is_file():
        return
    try:
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except ValueError as exc:
        raise InputError(path, f"unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict):
        raise InputError(path, "expected a JSON object")
    problems = hash_problems(root, manifest) + identity_problems(root, manifest)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise AuditFailedError(root, f"does not match its manifest, so it is not used: {problems[0]}{more}; "
                                     "run mmedbench audit on it")
