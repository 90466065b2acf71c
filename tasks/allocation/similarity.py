"""Character-trigram similarity of concept names (the confusion sets' name similarity):
`lexical_similarity` for a handful of names, integer-encoded trigrams in numpy for more,
the same floats either way."""
from __future__ import annotations

import numpy as np

from common.text import char_shingles, jaccard, lexical_similarity, normalize


_PAD = 0x1FFFFF  # above every code point: pads a name of 1 or 2 characters to its one shingle


SMALL_BATCH = 8  # fewer names than this: Python sets (numpy's fixed cost per call is more)


def name_similarities(target: str, names: list[str]) -> list[float]:
    """`[lexical_similarity(target, n) for n in names]`, the character-trigram Jaccard: for
    a handful of names (a hard set's covering siblings) with Python sets, for more with
    `numpy_similarities`."""
    if len(names) < SMALL_BATCH:
        return [lexical_similarity(target, n) for n in names]
    return numpy_similarities(target, names)


def numpy_similarities(target: str, names: list[str]) -> list[float]:
    """`name_similarities` with each name's trigrams as integers in numpy (three 21-bit code
    points) instead of a Python set of strings: a medium set ranks ~300 candidates by it,
    most of them new to the build. The shares are int/int divisions in float64, as in
    `jaccard`: the same floats."""
    if not names:
        return []
    texts = [normalize(target), *map(normalize, names)]
    lens = np.fromiter(map(len, texts), np.int64, len(texts))
    cp = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), np.uint32).astype(np.int64)
    # two pads after each text: a text of 1 or 2 characters is one padded shingle, as
    # `char_shingles` makes it one shingle; a longer text's trigrams never reach its pads
    ext = np.insert(cp, np.repeat(np.cumsum(lens), 2), _PAD)
    counts = np.where(lens >= 3, lens - 2, (lens > 0).astype(np.int64))
    starts = np.cumsum(lens + 2) - (lens + 2)
    at = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    code = (ext[at] << 42) | (ext[at + 1] << 21) | ext[at + 2]
    owner = np.repeat(np.arange(len(texts)), counts)
    order = np.lexsort((code, owner))
    owner, code = owner[order], code[order]
    first = np.ones(len(code), bool)
    first[1:] = (owner[1:] != owner[:-1]) | (code[1:] != code[:-1])
    owner, code = owner[first], code[first]  # each text's distinct trigrams
    sizes = np.bincount(owner, minlength=len(texts))
    mine = code[owner == 0]
    shared = np.bincount(owner[np.isin(code, mine)], minlength=len(texts))[1:]
    union = sizes[0] + sizes[1:] - shared
    sims = np.divide(shared, union, out=np.ones(len(names)), where=union > 0)  # two empty names: 1.0
    return sims.tolist()


def mean_similarity(sets: list[tuple[str, list[str]]]) -> float:
    """Mean target-distractor trigram Jaccard over (target_name, distractor_names) pairs."""
    vals = [jaccard(char_shingles(t, 3), char_shingles(d, 3)) for t, ds in sets for d in ds]
    return sum(vals) / len(vals) if vals else 0.0
