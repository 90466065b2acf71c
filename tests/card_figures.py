"""The card's three pictures drawn once per distinct data in a test process.

A test that tampers with a copy of the sample release re-signs it (writing the card again)
and audits it (whose card check writes the card again to compare): each draws the same three
matplotlib figures from the same data, about 0.4 s a card, most of the audit tests' time.
The figures' bytes are a function of their data and matplotlib's version
(tasks/release/figures.py), so a figure drawn once is written again as the same bytes
whenever the same data comes back; other data is drawn afresh by the real function.
"""
from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

FIGURES = ("counts_figure", "provenance_figure", "tiers_figure")


def _once(real, drawn: dict, name: str):
    from common.jsonio import atomic_write

    def draw(*args):
        *data, path = args
        key = (name, json.dumps(data, ensure_ascii=False))  # insertion order kept: only the very same data hits
        if key in drawn:
            with atomic_write(Path(path), "wb") as fh:
                fh.write(drawn[key])
            return
        real(*args)
        drawn[key] = Path(path).read_bytes()

    return draw


@contextlib.contextmanager
def card_figures_drawn_once() -> Iterator[dict]:
    """While open, tasks.release.card draws each distinct figure once (the dict: what was drawn)."""
    import tasks.release.card as card

    drawn: dict = {}
    with pytest.MonkeyPatch.context() as mp:
        for name in FIGURES:
            mp.setattr(card, name, _once(getattr(card, name), drawn, name))
        yield drawn
