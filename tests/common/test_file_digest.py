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


def test_a_hard_link_or_a_renamed_folder_is_the_same_file(tmp_path, monkeypatch):
    """A release is hashed in its build folder, published by renaming the folder, and its
    carried cells are hard links to the base release's files: none is hashed twice."""
    calls = _fresh(monkeypatch)
    build = tmp_path / ".tmp-1.0"
    build.mkdir()
    f = build / "corpus.jsonl"
    f.write_bytes(b'{"_id": "d1"}\n')
    os.link(f, tmp_path / "base-corpus.jsonl")  # (linking changes the file's change time)
    digest = jsonio.file_digest(f)
    build.rename(tmp_path / "1.0")
    assert jsonio.file_digest(tmp_path / "1.0" / "corpus.jsonl") == digest
    assert jsonio.file_digest(tmp_path / "base-corpus.jsonl") == digest
    assert len(calls) == 1
    os.link(tmp_path / "base-corpus.jsonl", tmp_path / "third.jsonl")  # a new link: hashed again
    assert jsonio.file_digest(tmp_path / "1.0" / "corpus.jsonl") == digest and len(calls) == 2
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes((tmp_path / "1.0" / "corpus.jsonl").read_bytes())  # the same bytes in another file: hashed on its own
    assert jsonio.file_digest(copy) == digest and len(calls) == 3


def _fresh(monkeypatch):
    monkeypatch.setattr(jsonio, "_DIGESTS", {})  # as a new process starts
    calls = []
    real = jsonio.sha256_file
    monkeypatch.setattr(jsonio, "sha256_file", lambda p, *a: calls.append(p) or real(p, *a))
    return calls


def test_a_later_run_takes_recorded_digests_of_unchanged_files_only(tmp_path, monkeypatch):
    old, new, gone = tmp_path / "old.RRF", tmp_path / "new.RRF", tmp_path / "gone.RRF"
    for f in (old, new, gone):
        f.write_bytes(f.name.encode())
    record = tmp_path / "work" / "file-digests.json"
    calls = _fresh(monkeypatch)
    digests = {f.name: jsonio.file_digest(f) for f in (old, new, gone)}
    assert len(calls) == 3
    # the digests were taken as the files were written: back-date the record's times so that
    # old.RRF's digest was taken RACY_NS + 1 ns after its last change, new.RRF's exactly RACY_NS after
    for key, (digest, _at, real) in list(jsonio._DIGESTS.items()):
        jsonio._DIGESTS[key] = (digest, key[4] + jsonio.RACY_NS + (1 if real.endswith("old.RRF") else 0), real)
    gone.unlink()
    jsonio.save_digests(record)
    rows = __import__("json").loads(record.read_text())["digests"]
    assert [r[0].rsplit("/", 1)[1] for r in rows] == ["new.RRF", "old.RRF"]  # sorted; a deleted file is not kept

    calls = _fresh(monkeypatch)
    assert jsonio.load_digests(record) == 1  # new.RRF's digest may predate a rewrite in its tick
    assert jsonio.file_digest(old) == digests["old.RRF"] and calls == []
    assert jsonio.file_digest(new) == digests["new.RRF"] and calls == [new]

    calls = _fresh(monkeypatch)
    jsonio.load_digests(record)
    st = old.stat()
    old.write_bytes(b"OLD.RRF")  # rewritten, same size, its modification time put back (as cp -p or touch -r
    os.utime(old, ns=(st.st_atime_ns, st.st_mtime_ns))  # would): only the change time tells
    assert old.stat().st_mtime_ns == st.st_mtime_ns and old.stat().st_size == st.st_size
    assert jsonio.file_digest(old) == hashlib.sha256(b"OLD.RRF").hexdigest() and calls == [old]


def test_a_damaged_record_is_no_record(tmp_path, monkeypatch):
    _fresh(monkeypatch)
    record = tmp_path / "file-digests.json"
    assert jsonio.load_digests(record) == 0  # none yet
    for text in ("{", '{"digests": 3}', '{"digests": [[1, 2], "x", [null, 1, 2, 3, 4, "d", 9]]}', "[]"):
        record.write_text(text)
        assert jsonio.load_digests(record) == 0, text
    assert jsonio._DIGESTS == {}
