"""Ranges of the numeric options, checked while the command line is read (before any work):
a value out of range is a `typer.BadParameter`, which the app prints as one line
`error: --option: expected ..., got VALUE` (mmedbench/cli.py `_OneLineErrors`), exit 2."""
from __future__ import annotations

import math

import typer


def _show(x: float) -> str:
    return f"{x:g}"


def number_in(low: float, high: float, what: str = "a number"):
    """A callback accepting a finite value from `low` to `high` (None: the option's unset default)."""

    def check(value):
        if value is None:
            return value
        if not math.isfinite(value) or not low <= value <= high:
            raise typer.BadParameter(f"expected {what} from {_show(low)} to {_show(high)}, got {_show(value)}")
        return value

    return check
