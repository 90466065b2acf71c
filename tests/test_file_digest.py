"""common.jsonio.file_digest: sha256 of a file, hashed once per process while the file
stays as it was (the cache keys and the manifest both ask for the inputs' digests)."""
from __future__ import annotations

import hashlib
import os

from common import jsonio


def test_a_file_is_hashed_once_and_again_when_it_changes(tmp_path, monkeypatch):
    calls = []
    real = jsonio.sha256_file
    monkeypatch.setattr(jsonio, "sha256_file", lambda p, *a: calls.append(p) or real(p, *a))
    f = tmp_path / "MRCONSO.RRF"
    f.write_bytes(b"C0000001|ENG|\n")
    first = jsonio.file_digest(f)
    assert first == hashlib.sha256(b"C0000001|ENG|\n").hexdigest()
    link = tmp_path / "link.RRF"
    link.symlink_to(f)
    assert jsonio.file_digest(f) == jsonio.file_digest(link) == first
    assert len(calls) == 1  # the second name of the same file did not hash it again

    f.write_bytes(b"C0000002|ENG|\n")  # same size: the modification time tells
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert jsonio.file_digest(f) == hashlib.sha256(b"C0000002|ENG|\n").hexdigest() != first
    f.write_bytes(b"C0000002|ENG|X\n")  # a longer file: the size tells
    assert jsonio.file_digest(f) == hashlib.sha256(b"C0000002|ENG|X\n").hexdigest()
    assert len(calls) == 3
