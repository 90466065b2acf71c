"""A simstring database reader for QuickUMLS' index, compiled: same files, same answers.

``SimstringReader`` stands in for ``quickumls.toolbox.SimstringDBReader`` (``get(term)``:
the database strings similar to the NFKD form of ``term``) and gives what the C++ reader
gives, in its order (tasks.grounding.simstring_kernels says how). It reads the database
quickumls_simstring wrote: the master file ``umls-terms.simstring`` (header, then every
string as NUL-terminated UTF-32) and one CDB++ file per feature count,
``umls-terms.simstring.<count>.cdb``, memory-mapped, so forked workers share its pages.

A database it cannot read as the C++ would (not written in unicode mode, or a header it
does not know) raises ``UnsupportedDatabase``, and QuickUMLS keeps its own reader.
"""
from __future__ import annotations

from pathlib import Path
import mmap
import os
import struct
import unicodedata

import numpy as np

_BYTEORDER_CHECK = 0x62445371
_STREAM_VERSION = 2
_MEASURES = {"exact": 0, "dice": 1, "cosine": 2, "jaccard": 3, "overlap": 4}


class UnsupportedDatabase(ValueError):
    pass


def _kernels():
    """tasks.grounding.simstring_kernels, imported on first use (numba takes a few tenths
    of a second to import)."""
    from tasks.grounding import simstring_kernels

    return simstring_kernels


def _no_words() -> np.ndarray:
    empty = np.empty(0, dtype=np.uint32)
    empty.flags.writeable = False  # typed like the memory-mapped images beside it
    return empty


def _words(path: Path) -> np.ndarray:
    """The file as uint32 words, memory-mapped read-only (an empty file: no words)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return _no_words()
        return np.frombuffer(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), dtype=np.uint32)


class SimstringReader:
    """``SimstringDBReader(path, similarity_name, threshold)`` without the C++ search."""

    def __init__(self, path: str | Path, similarity_name: str, threshold: float):
        from numba.typed import List

        self.path = Path(path)
        self.master_path = self.path / "umls-terms.simstring"
        if similarity_name not in _MEASURES:
            raise UnsupportedDatabase(f"similarity {similarity_name!r}: expected one of {sorted(_MEASURES)}")
        self.similarity_name = similarity_name
        self.measure = _MEASURES[similarity_name]
        self.threshold = float(threshold)
        # memory-mapped, as the CDB++ images are: a search reads only its results' strings,
        # and the C++ reader's copy of the whole file cost the grounding process 87 MB at
        # paper scale (English), at the build's peak
        with open(self.master_path, "rb") as f:
            raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(f.fileno()).st_size else b""
        if len(raw) < 36 or raw[:4] != b"SSDB":
            raise UnsupportedDatabase(f"{self.master_path}: not a simstring master file")
        order, version, size, char_size, n, be, _entries, max_size = struct.unpack_from("<8I", raw, 4)
        if order != _BYTEORDER_CHECK or version != _STREAM_VERSION or size != len(raw) or char_size != 4:
            raise UnsupportedDatabase(f"{self.master_path}: byte order {order:#x}, version {version}, "
                                      f"size {size} of {len(raw)}, {char_size}-byte characters; expected "
                                      f"{_BYTEORDER_CHECK:#x}, {_STREAM_VERSION}, the file's size, 4")
        self.n, self.be, self.max_size = int(n), bool(be), int(max_size)
        self._master = raw
        self._master_words = np.frombuffer(raw, dtype=np.uint32)
        dbs = List()
        for count in range(1, self.max_size + 1):
            cdb = Path(f"{self.master_path}.{count}.cdb")
            dbs.append(_words(cdb) if cdb.exists() else _no_words())
        if not len(dbs):
            dbs.append(_no_words())  # a typed List needs its item type
        self._dbs = dbs
        self._directory = _kernels().build_directory(dbs)
        # compiled (or loaded from numba's cache) here, once: a grounding worker forked from
        # this process inherits the machine code instead of loading it again per fork
        self.get("warm up")

    def get(self, term: str) -> tuple[str, ...]:
        """The strings the C++ reader's ``get(term)`` returns, in its order."""
        query = term if term.isascii() else unicodedata.normalize("NFKD", term)  # NFKD keeps ASCII as it is
        # a lone surrogate (which crashes the C++ binding) is one more code point that no
        # database string holds
        encoded = query.encode("utf-32-le", "surrogatepass")
        k = _kernels()
        offsets = k.retrieve(np.frombuffer(encoded, dtype=np.uint32), self.n, self.be, self.measure,
                             self.threshold, self.max_size, self._dbs, *self._directory)
        if not len(offsets):
            return ()
        lens = k.string_lengths(self._master_words, offsets)
        raw = self._master
        return tuple([raw[o:o + 4 * ln].decode("utf-32-le") for o, ln in zip(offsets.tolist(), lens.tolist())])
