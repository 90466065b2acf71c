"""Audit check `card`: the release's card (README.md) and its pictures are the ones the
release's own files produce.

The card is a function of the release: the manifest (cells, counts, provenance, pivots,
config, licences, build id), build_report.json (dropped items, gate rejections), the cells'
folders (splits, sources, gold kinds), the confusion sets (tier similarities) and the
build's own evaluation/ (the family table). So the check writes the card again with the
same code (tasks/release/card.py `write_card`) into a scratch folder that sees the
release's files through links, and compares it with the card line by line, and each
picture byte by byte. A sentence appended to the card, a figure edited, a picture swapped,
all with the manifest re-hashed, fail it, naming the card's line.

One fact on the card is not in the release: how many source items an empty cell could
have drawn on ("its 12 Russian xqa source items were all dropped"), counted from the
sources at build time. It is read back from the card's own row of that cell, so that
figure alone is taken on trust; every other byte is checked.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from schemas.records import AuditCheck, TASKS

CARD = "README.md"
ASSETS = "assets"
REPORT = "build_report.json"
MAX_SHOWN = 80  # characters of a differing line quoted in a failure


def quote_line(text: str) -> str:
    return repr(text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "...")


def source_items_on_card(card: str, manifest: dict) -> dict[str, int] | None:
    """The empty cells' source-item counts as the card states them (the one figure the
    release does not hold); None when the card says the build did not count them."""
    out: dict[str, int] = {}
    for cell, c in sorted(manifest.get("cells", {}).items()):
        task = cell.split("/")[0]
        if c.get("queries", 0) != 0 or task == "cd":
            continue
        row = next((line for line in card.splitlines() if line.startswith(f"| {cell} | nothing: empty |")), None)
        if row is None:
            continue
        if " source item in " in row and " was placed" in row:
            return None
        m = re.search(r"empty: its (\d+) ", row)
        out[cell] = int(m.group(1)) if m else 0
    return out


def expected_card(root: Path, scratch: Path, card: str) -> tuple[str, dict[str, bytes]]:
    """The card and pictures `write_card` makes from the release at `root`, written in
    `scratch` (the release is only read)."""
    from tasks.release.card import write_card

    # the links must name the release absolutely: a relative target resolves from the scratch
    # folder, not from where the user stands (`mmedbench audit releases/0.1.0` found no cells)
    root = Path(os.path.abspath(root))
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    report = json.loads((root / REPORT).read_text(encoding="utf-8"))
    view = scratch / root.name
    view.mkdir()
    for entry in sorted(os.listdir(root)):
        if entry not in (CARD, ASSETS):
            (view / entry).symlink_to(root / entry)
    write_card(manifest, report, view, source_items_on_card(card, manifest))
    pictures = {p.relative_to(view).as_posix(): p.read_bytes() for p in sorted((view / ASSETS).glob("*.png"))}
    return (view / CARD).read_text(encoding="utf-8"), pictures


def card_differences(card: str, expected: str) -> list[str]:
    """Where the card differs from the expected one, line by line (difflib's alignment, so an
    added sentence is one line, not every line after it)."""
    import difflib

    have, want = card.split("\n"), expected.split("\n")
    out = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, have, want, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        for k in range(max(a1 - a0, b1 - b0)):
            a = have[a0 + k] if a0 + k < a1 else None
            b = want[b0 + k] if b0 + k < b1 else None
            if b is None:
                out.append(f"{CARD}:{a0 + k + 1}: {quote_line(a)} is not on the card the release's files give")
            elif a is None:
                out.append(f"{CARD}:{a1 + 1}: {quote_line(b)} is missing, which the release's files give")
            else:
                out.append(f"{CARD}:{a0 + k + 1}: {quote_line(a)}; the release's files give {quote_line(b)}")
    return out


def _check(failures: list[str], ok_detail: str) -> AuditCheck:
    return AuditCheck(name="card", passed=not failures, detail=ok_detail if not failures else f"{len(failures)} failure(s)",
                      failures=failures)


def check_card(rel) -> AuditCheck:
    """`rel`: tasks/audit/checks.Release. Fails naming the card's line (or picture) that is
    not what the release's files give."""
    from tasks.audit.checks import MAX_FAILURES

    root = rel.root
    path = root / CARD
    if not path.is_file():
        return _check([f"{CARD}: missing"], "")
    if not (root / REPORT).is_file():
        return _check([f"{REPORT}: missing (the card's dropped items come from it)"], "")
    try:
        card = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return _check([f"{CARD}: expected UTF-8 text, found byte 0x{exc.object[exc.start]:02x}"], "")
    try:
        with tempfile.TemporaryDirectory(prefix="mmedbench-card-") as scratch:
            expected, pictures = expected_card(root, Path(scratch), card)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a release file the card is made from is unreadable
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        return _check([f"{CARD}: cannot be written again from the release, so it cannot be checked "
                       f"({type(exc).__name__}{where}: {str(exc)[:160]})"], "")
    failures = card_differences(card, expected)
    shown = failures[:MAX_FAILURES]
    if len(failures) > len(shown):
        shown[-1] = f"... and {len(failures) - len(shown) + 1} more lines of {CARD} differ"
    for name, data in sorted(pictures.items()):
        have = root / name
        if not have.is_file():
            shown.append(f"{name}: missing (the card shows it)")
        elif have.read_bytes() != data:
            shown.append(f"{name}: not the picture the release's files give")
    cells = len(rel.manifest_raw.get("cells", {}))
    return _check(shown, f"{CARD} ({expected.count(chr(10)) + 1} lines, {cells} cells of {len(TASKS)} tasks) "
                                 f"and its {len(pictures)} pictures are what the release's files give")
