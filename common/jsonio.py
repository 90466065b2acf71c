"""Deterministic file I/O: canonical JSON lines, sha256, atomic writes; and the located readers
(lines of UTF-8 text, JSON lines, a JSON file) that turn any malformed byte into one InputError."""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from common.errors import InputError


def dumps(obj: Any) -> str:
    """Canonical JSON: sorted keys, no ASCII escaping, compact separators."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def write_jsonl(path: Path, records: Iterable[dict]) -> int:
    n = 0
    with atomic_write(path) as fh:
        for rec in records:
            fh.write(dumps(rec) + "\n")
            n += 1
    return n


def undecodable(path: Path | str, line_start: bytes, bad: int, line_no: int) -> InputError:
    """`line_start`: the line's bytes before the first one that is not UTF-8 (`bad`)."""
    column = len(line_start.decode("utf-8", "replace")) + 1
    return InputError(path, f"expected UTF-8 text, found byte 0x{bad:02x} at column {column}", line_no)


def open_input(path: Path, what: str = "") -> BinaryIO:
    """Open an input file for reading (binary); a missing or unreadable one is an InputError."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found" + (f" ({what})" if what else ""))
    if path.is_dir():
        raise InputError(path, "expected a file, found a folder" + (f" ({what})" if what else ""))
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None


def iter_lines(path: Path, what: str = "") -> Iterator[tuple[int, str]]:
    """(line number, line) of a UTF-8 text file, each line with its end ("\n"; a CRLF ends as
    "\n" too). Lines break at LF only. A leading byte-order mark is dropped. Bytes that are
    not UTF-8 raise InputError naming the line and column."""
    path = Path(path)
    with open_input(path, what) as fh:
        try:
            for line_no, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise undecodable(path, raw[: exc.start], raw[exc.start], line_no) from None
                if line_no == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                if line.endswith("\r\n"):
                    line = line[:-2] + "\n"
                yield line_no, line
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None


def decode_text(path: Path, raw: bytes) -> str:
    """A whole file's bytes as text; bytes that are not UTF-8 are an InputError naming the line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = raw.rfind(b"\n", 0, exc.start) + 1
        raise undecodable(path, raw[start : exc.start], raw[exc.start], raw.count(b"\n", 0, exc.start) + 1) from None
    return text[1:] if text.startswith("\ufeff") else text


_SURROGATE_ESCAPE = re.compile(r"\\[uU][dD][89a-fA-F]")


def _has_surrogate(obj: Any) -> bool:
    if isinstance(obj, str):
        return any("\ud800" <= ch <= "\udfff" for ch in obj)
    if isinstance(obj, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_has_surrogate(v) for v in obj)
    return False


def json_problem(exc: Exception) -> str:
    """What a JSON parse failure means, in one line."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "invalid JSON (nested too deeply)"
    return "invalid JSON (a number too long to read)"  # int() refuses more than 4300 digits


def check_surrogates(path: Path, text: str, obj: Any, line: int | None, start: int = 0, end: int | None = None) -> None:
    """JSON can spell a lone surrogate (\\ud800), which is not a character and cannot be written
    back as UTF-8: refuse it where it is read, not where it is written. `obj` was decoded
    from text[start:end]; it is only walked when that text holds such an escape."""
    if _SURROGATE_ESCAPE.search(text, start, len(text) if end is None else end) and _has_surrogate(obj):
        raise InputError(path, "invalid JSON (a \\u escape encodes a lone surrogate, not a character)", line)


def loads_located(path: Path, text: str, line: int | None = None) -> Any:
    """json.loads whose every failure is an InputError at `line` (or at the decoder's line)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, json_problem(exc), line if line is not None else exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(path, json_problem(exc), line) from None
    check_surrogates(path, text, obj, line)
    return obj


def read_jsonl(path: Path, what: str = "") -> Iterator[tuple[int, dict]]:
    """Yield (line number, object); a malformed line raises InputError naming it."""
    path = Path(path)
    for line_no, line in iter_lines(path, what):
        if not line.strip():
            continue
        obj = loads_located(path, line, line_no)
        if not isinstance(obj, dict):
            raise InputError(path, "expected a JSON object", line_no)
        yield line_no, obj


def read_json_object(path: Path, what: str = "") -> dict:
    """A whole-file JSON object (a manifest, a report); any malformation is one InputError."""
    path = Path(path)
    with open_input(path, what) as fh:
        try:
            raw = fh.read()
        except OSError as exc:
            raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    obj = loads_located(path, decode_text(path, raw))
    if not isinstance(obj, dict):
        raise InputError(path, "expected a JSON object", 1)
    return obj


def current_umask() -> int:
    """The process's umask, read without changing it (Linux: /proc/self/status); elsewhere
    set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class atomic_write:
    """Write to a temporary file beside `path`, fsync, then rename: never half-written. The
    file gets the mode an ordinary `open` would give it (0666 less the umask), not mkstemp's 0600."""

    def __init__(self, path: Path, mode: str = "w"):
        self.path, self.mode = Path(path), mode

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp's 0600 would make the file private once renamed
        kwargs = {} if "b" in self.mode else {"encoding": "utf-8", "newline": "\n"}
        self.fh = os.fdopen(fd, self.mode, **kwargs)
        return self.fh

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.fh.flush()
                os.fsync(self.fh.fileno())
            self.fh.close()
            if exc_type is None:
                os.replace(self.tmp, self.path)
        except BaseException:
            _discard(self.fh, self.tmp)
            raise
        if exc_type is not None:
            _discard(self.fh, self.tmp)
        return False


def _discard(fh, tmp: str) -> None:
    """Never leave a half-written temporary file behind (a full disk fails close() too)."""
    try:
        fh.close()
    except OSError:
        pass
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


# (device, inode, size, mtime_ns, ctime_ns) -> (sha256, when it was taken (ns), a path to it).
# The file's identity, not its path: a hard link or a renamed folder reaches the same bytes
# (a release is hashed in its build folder, then published by renaming it, then compared
# with its base; add-language links the base's unchanged cells into the new release).
_DIGESTS: dict[tuple[int, int, int, int, int], tuple[str, int, str]] = {}
# a digest recorded by an earlier run is trusted only if it was taken this long after the
# file last changed: timestamps move in coarse ticks, so a file rewritten (same size) in the
# tick its digest was taken in would keep its stat ("racy git")
RACY_NS = 2_000_000_000


def _key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_digest(path: Path) -> str:
    """`sha256_file`, memoised by the file's device, inode, size, modification and change
    times: a build hashes its inputs for the task cache keys and again for the manifest, a
    release's files for its manifest, its audit and the diff against its base, and (with
    `load_digests`) a rebuild takes the digests of unchanged files from the last run instead
    of hashing gigabytes of inputs again. Any write, `touch`, `cp -p` or rename over the
    file changes its change time (or its inode), so it is hashed again."""
    key = _key(os.stat(path))
    hit = _DIGESTS.get(key)
    if hit is None:
        hit = _DIGESTS[key] = (sha256_file(path), time.time_ns(), os.path.realpath(path))
    return hit[0]


def load_digests(path: Path) -> int:
    """Take the digests an earlier run recorded in `path` (`save_digests`), those taken more
    than RACY_NS after their file's last change; a missing or unreadable record is no record
    (it is a cache: at worst files are hashed again). Returns how many were taken."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["digests"]
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    taken = 0
    for row in rows if isinstance(rows, list) else []:
        try:
            real, dev, ino, size, mtime, ctime, digest, at = row
            key = (int(dev), int(ino), int(size), int(mtime), int(ctime))
            if int(at) - key[4] > RACY_NS and isinstance(digest, str):
                _DIGESTS.setdefault(key, (digest, int(at), str(real)))
                taken += 1
        except (TypeError, ValueError):
            continue
    return taken


def _still(real: str, key: tuple) -> bool:
    try:
        st = os.stat(real)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == key[:2]


def save_digests(path: Path) -> None:
    """Record this process's digests of files that are still there, for the next run."""
    rows = sorted([real, *key, digest, at] for key, (digest, at, real) in list(_DIGESTS.items()) if _still(real, key))
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as fh:
        fh.write(json.dumps({"digests": rows}) + "\n")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fsync_tree(root: Path) -> None:
    """fsync every file and folder under `root`, deepest first, then `root` itself: what a
    rename is about to publish (a release, a cache entry) is on disk before it is visible, so
    a crash right after cannot leave a published folder of empty files."""
    for path in sorted(Path(root).rglob("*"), reverse=True) + [Path(root)]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
