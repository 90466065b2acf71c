"""Functions in tasks/ and flows/ over 60 lines or over 8 parameters (issue #32's bounds),
numba kernels aside (`@njit` / `@numba.jit`: their loops are written out on purpose).

    python benchmarks/code_shape.py            # one line per offender, then the counts
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES, MAX_PARAMS = 60, 8


def _is_kernel(fn: ast.AST) -> bool:
    for d in getattr(fn, "decorator_list", []):
        name = ast.unparse(d.func if isinstance(d, ast.Call) else d)
        if name.split(".")[-1] in ("njit", "jit", "vectorize", "guvectorize"):
            return True
    return False


def offenders(root: Path = ROOT) -> list[tuple[str, int, str, int, int]]:
    out = []
    for folder in ("tasks", "flows"):
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for fn in ast.walk(tree):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or _is_kernel(fn):
                    continue
                a = fn.args
                params = [p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]
                params += [p for p in (a.vararg, a.kwarg) if p is not None]
                lines = fn.end_lineno - fn.lineno + 1
                if lines > MAX_LINES or len(params) > MAX_PARAMS:
                    out.append((path.relative_to(root).as_posix(), fn.lineno, fn.name, lines, len(params)))
    return out


def main() -> int:
    found = offenders()
    for path, line, name, lines, params in found:
        print(f"{path}:{line}: {name}: {lines} lines, {params} parameters")
    print(f"{sum(1 for f in found if f[3] > MAX_LINES)} functions over {MAX_LINES} lines, "
          f"{sum(1 for f in found if f[4] > MAX_PARAMS)} over {MAX_PARAMS} parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
