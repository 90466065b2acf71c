"""Nothing in the builder parses a reason back out of its text (issue #32): a gate's failure is
counted by `GateFailure.gate`, an unrealized item by its code, a drop by `Drop.code`. Read with
`ast`: a split/partition of anything named like a reason, a rejection, a gate or a failure (or
of a loop variable drawn from one), or on "; " (how reasons are joined), is a parse."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tasks", "flows", "umls", "common", "schemas", "mmedbench")
REASON_LIKE = re.compile(r"reason|reject|gate|failure", re.IGNORECASE)
SPLITS = {"split", "rsplit", "partition", "rpartition"}
JOINED_REASONS = "; "


def _name(node: ast.expr) -> str | None:
    """What an expression is called: `x`, `a.x`, `r["x"]` are all "x"."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def _reason_like(node: ast.expr, drawn: set[str]) -> bool:
    name = _name(node)
    return name is not None and (bool(REASON_LIKE.search(name)) or name in drawn)


def reason_parses(source: str) -> list[tuple[int, str]]:
    """(line, call) for every split of reason-like text in `source`."""
    tree = ast.parse(source)
    drawn = set()  # loop variables over reason-like collections: `for r in reasons`
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name) and _reason_like(node.iter, set()):
            drawn.add(node.target.id)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SPLITS):
            continue
        sep = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        if _reason_like(node.func.value, drawn) or sep == JOINED_REASONS:
            found.append((node.lineno, ast.unparse(node)))
    return found


def _tree_parses() -> list[tuple[str, int, str]]:
    return [(path.relative_to(ROOT).as_posix(), line, call)
            for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
            for line, call in reason_parses(path.read_text(encoding="utf-8"))]


def test_no_module_parses_reason_text():
    assert _tree_parses() == []


@pytest.mark.parametrize("source, expected", [
    # what the allocation stage and the translate loop did before the gates were typed
    ('for r in rows:\n    parts = r["rejected"].split("; ")\n', [(2, "r['rejected'].split('; ')")]),
    ("for r in reasons:\n    key = r.split(':')[0]\n", [(2, "r.split(':')")]),
    ("def category(reason):\n    return reason.split(':', 1)[0]\n", [(2, "reason.split(':', 1)")]),
    ("g = [f.partition(':') for f in failures]\n", [(1, "f.partition(':')")]),
    ("head = self.rejected_text.rsplit(':')\n", [(1, "self.rejected_text.rsplit(':')")]),
    ("parts = line.split('; ')\n", [(1, "line.split('; ')")]),
    # not a reason: other text is split as it always was; joining reasons is writing them
    ("prefix, _, code = xref.partition(':')\n", []),
    ("msg = str(exc).split(':')[0]\n", []),
    ("text = '; '.join(map(str, failures))\n", []),
    ("counts = {f.gate for f in failures}\n", []),
])
def test_a_crafted_module_parsing_reasons_is_caught(source, expected):
    assert reason_parses(source) == expected
