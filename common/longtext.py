"""Texts longer than a library takes at once, cut into pieces it does take.

spaCy refuses a text over `nlp.max_length` characters (1,000,000 by default; error E088)
and its memory grows with the text; `mmedbench ground` reads one text a line from a user,
so a line may be any length. `pieces` cuts a text into consecutive pieces of at most
`limit` characters, each ending after the last sentence end (". ", "。", "! ", "? ") in its
window, else after the last whitespace, else at the limit; joined they are the text, so a
mention found in a piece is re-offset by the piece's start. Only a mention spanning a cut
can be lost, and cuts fall between sentences or words wherever the text has them.
"""
from __future__ import annotations

import re

PIECE_CHARS = 100_000  # well under spaCy's max_length, and its memory per call stays small

_SENTENCE_END = re.compile(r"[.!?;][\s\u3000]+|[。！？；]")
_SPACE = re.compile(r"\s+")


def _cut(window: str) -> int:
    """Where to end a piece within `window` (characters kept): after the last sentence end,
    else the last whitespace, else the whole window."""
    ends = [m.end() for m in _SENTENCE_END.finditer(window, len(window) // 2)]
    if ends:
        return ends[-1]
    spaces = [m.end() for m in _SPACE.finditer(window, len(window) // 2)]
    return spaces[-1] if spaces else len(window)


def pieces(text: str, limit: int = PIECE_CHARS) -> list[tuple[int, str]]:
    """(start offset, piece) covering `text` in order, each at most `limit` characters."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    out: list[tuple[int, str]] = []
    start = 0
    while len(text) - start > limit:
        n = _cut(text[start:start + limit])
        out.append((start, text[start:start + n]))
        start += n
    out.append((start, text[start:]))
    return out
