"""No module of the builder reaches into another module's `_private` names: a helper two
modules share is public in the module that owns it. Read with `ast`, not by importing: an
import inside a function counts as much as one at the top."""
from __future__ import annotations

from pathlib import Path
import ast

import pytest


ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tasks", "flows", "umls", "common", "schemas", "mmedbench")

def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_project_module(dotted: str, root: Path) -> bool:
    """Is `dotted` a module (or package) of the project under `root`?"""
    base = root.joinpath(*dotted.split("."))
    return dotted.split(".")[0] in PACKAGES and (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file())


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module an ImportFrom reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def private_uses(path: Path, here: str, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, "module._name") for every private name of another project module that the file
    (module `here`) imports (`from m import _x`) or reads as an attribute of a module it
    imported (`m._x`, `pkg.m._x`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    modules: dict[str, str] = {}  # local name -> the project module it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    modules[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, here, path.name == "__init__.py")
            for alias in node.names:
                if _private(alias.name) and source != here and _is_project_module(source, root):
                    found.append((node.lineno, f"{source}.{alias.name}"))
                elif _is_project_module(f"{source}.{alias.name}", root):
                    modules[alias.asname or alias.name] = f"{source}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = _dotted(node.value, modules)
            if owner is not None and owner != here and _is_project_module(owner, root):
                found.append((node.lineno, f"{owner}.{node.attr}"))
    return sorted(set(found))


def _dotted(node: ast.expr, modules: dict[str, str]) -> str | None:
    """The dotted module path an expression names (`m`, `pkg.m`), through the file's imports."""
    if isinstance(node, ast.Name):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, modules)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def _project_files() -> list[tuple[Path, str, str]]:
    """(path, its module, its name in reports) of every module of the project's packages."""
    return [(path, _module_of(path, ROOT), path.relative_to(ROOT).as_posix())
            for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


def _all_uses(files: list[tuple[Path, str, str]]) -> set[tuple[str, str]]:
    return {(shown, name) for path, module, shown in files for _line, name in private_uses(path, module)}


def test_no_module_reaches_into_another_modules_private_names(files=None):
    uses = _all_uses(files if files is not None else _project_files())
    assert sorted(uses) == [], f"private names used across modules (make them public where they belong): {sorted(uses)}"


@pytest.mark.parametrize("source, expected", [
    ("from tasks.grounding.spans import WORD\n", []),
    ("from tasks.grounding.quickumls_index import _stopwords\n", [(1, "tasks.grounding.quickumls_index._stopwords")]),
    ("import tasks.grounding.runtime\nx = tasks.grounding.runtime._SUDACHI_LOCK\n",
     [(2, "tasks.grounding.runtime._SUDACHI_LOCK")]),
    ("import tasks.grounding.runtime as rt\nx = rt._MORPH_LOCK\n", [(2, "tasks.grounding.runtime._MORPH_LOCK")]),
    ("def f():\n    from tasks.grounding import matchers\n    matchers._X = 1\n", [(3, "tasks.grounding.matchers._X")]),
    ("from . import spans\nspans._helper()\n", [(2, "tasks.grounding.spans._helper")]),
    ("from .spans import _helper\n", [(1, "tasks.grounding.spans._helper")]),
    ("from umls.obo_vocabulary import _read\n", [(1, "umls.obo_vocabulary._read")]),
    # not a project module's: the standard library's and third parties' are their business
    ("import os\nos._exit(0)\n", []),
    ("from collections import _OrderedDictKeysView\n", []),
    # dunders are not private; an object's private attribute is not a module's
    ("from common.version import __version__\n", []),
    ("def f(m):\n    return m._stem\n", []),
])
def test_a_crafted_module_reaching_into_private_names_is_caught(tmp_path, source, expected):
    """Each way of reaching a private name is found, with its line; public names, other
    libraries' and dunders are not. The crafted module reads as tasks.grounding.crafted
    (written outside the tree: the build's code fingerprint hashes the tree)."""
    crafted = tmp_path / "crafted.py"
    crafted.write_text(source, encoding="utf-8")
    assert private_uses(crafted, "tasks.grounding.crafted") == expected


def test_the_whole_tree_check_fails_on_a_crafted_module(tmp_path):
    crafted = tmp_path / "crafted.py"
    crafted.write_text("from tasks.grounding.runtime import _sudachi\n", encoding="utf-8")
    files = _project_files() + [(crafted, "common.crafted", "common/crafted.py")]
    assert _all_uses(files) == {("common/crafted.py", "tasks.grounding.runtime._sudachi")}
    with pytest.raises(AssertionError, match="private names used across modules"):
        test_no_module_reaches_into_another_modules_private_names(files)

