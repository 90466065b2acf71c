"""An append-only, crash-safe translation-memory store, and the resumable translate loop.

The store is a JSON-lines file of `schemas.records.Translation` objects (exactly its
fields, so `tasks.translation.memory.TranslationMemory.from_files` reads it as any other memory).
Each entry is appended with one write() + flush() + os.fsync(): an entry that was
reported saved survives a crash or a killed process. A crash can at worst leave an
incomplete last line; opening the store drops it (and truncates the file back to the
last complete line) before anything is appended. Lines are never rewritten.

Entries are keyed by (sha256 of the NFC-normalised, stripped source text, source
language, target language, engine). `translate_texts` sends only texts without an entry
for their key, so a run that was killed resumes where it stopped and sends no text twice.
Translations the gates reject are journalled beside the store
(`<name>.rejected.jsonl`, same crash safety) so a rerun does not pay for them again.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from schemas.config import Language
from schemas.gates import GateFailure
from common.errors import InputError
from common.jsonio import dumps, loads_located
from schemas.records import Translation
from tasks.translation.memory import source_key

try:  # one writer per store: two concurrent runs would both send the same texts
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None


class StoreKey(NamedTuple):
    source_sha256: str
    source_lang: str
    target_lang: str
    engine: str


def store_key(source: str, source_lang: str, target_lang: str, engine: str) -> StoreKey:
    return StoreKey(source_key(source), source_lang, target_lang, engine)


def rejected_path_for(path: Path) -> Path:
    name = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(f"{name}.rejected.jsonl")


@dataclass(frozen=True)
class Rejection:
    """A translation the gates refused, kept so it is not requested (and paid for) again."""

    source_lang: str
    target_lang: str
    source: str
    target: str
    engine: str
    reasons: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"source_lang": self.source_lang, "target_lang": self.target_lang, "source": self.source,
                "target": self.target, "engine": self.engine, "reasons": list(self.reasons)}


def _parse_entry(obj: object) -> Translation:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    return Translation(**obj)


def _parse_rejection(obj: object) -> Rejection:
    if not isinstance(obj, dict) or set(obj) != {"source_lang", "target_lang", "source", "target", "engine", "reasons"}:
        raise ValueError("expected a rejection record")
    return Rejection(**{**obj, "reasons": tuple(obj["reasons"])})


def _scan(path: Path, parse, data: bytes) -> tuple[list, int, bool]:
    """Parse complete lines; returns (records, length of the valid prefix, tail_is_record).

    An incomplete last line (no newline) that does not parse is a crash's leftover; one
    that parses (a hand-edited file without a final newline) is kept."""
    records = []
    end = data.rfind(b"\n") + 1
    body, tail = data[:end], data[end:]
    for line_no, raw in enumerate(body.split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        records.append(_parse_line(path, parse, raw, line_no))
    if tail.strip():
        try:
            records.append(parse(loads_located(path, tail.decode("utf-8"))))
            return records, len(data), True
        except (ValueError, TypeError, ValidationError, InputError):  # UnicodeDecodeError is a ValueError
            return records, end, False
    return records, len(data) if not tail else end, False


def _parse_line(path: Path, parse, raw: bytes, line_no: int):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"expected UTF-8 text, found byte 0x{raw[exc.start]:02x} at column "
                               f"{len(raw[:exc.start].decode('utf-8')) + 1}", line_no) from None
    obj = loads_located(path, text, line_no)
    try:
        return parse(obj)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(path, err["msg"], line=line_no, field=".".join(map(str, err["loc"])) or None) from None
    except (ValueError, TypeError) as exc:
        raise InputError(path, str(exc), line=line_no) from None


def read_entries(path: Path) -> list[Translation]:
    """Entries of a store (or any TM file) without opening it for writing: an incomplete
    last line is ignored, not repaired."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    records, _, _ = _scan(path, _parse_entry, path.read_bytes())
    return records


class _AppendFile:
    """One JSON-lines file opened for appending after repairing a crash's leftover."""

    def __init__(self, path: Path, parse, lock: bool):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        created = not path.exists()
        self._fh = open(path, "a+b")
        try:
            if lock and fcntl is not None:
                try:
                    fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise InputError(path, "in use by another run (the file is locked)") from None
            self._fh.seek(0)
            data = self._fh.read()
            self.records, keep, tail_is_record = _scan(path, _parse_entry if parse is None else parse, data)
            self.dropped_bytes = len(data) - keep
            if self.dropped_bytes:
                self._fh.truncate(keep)
            if tail_is_record:
                self._fh.write(b"\n")  # complete the hand-edited last line before appending
            if self.dropped_bytes or tail_is_record:
                self._fh.flush()
                os.fsync(self._fh.fileno())
            if created:
                _fsync_dir(path.parent)
        except BaseException:
            self._fh.close()
            raise

    def append(self, obj: dict) -> None:
        line = (dumps(obj) + "\n").encode("utf-8")
        self._fh.write(line)  # "a" mode: always at the end, whatever the position
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()  # closing releases the flock


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class TMStore:
    """The translation memory a `translate` run appends to. Open it with a `with` block:

        with TMStore(Path("translations/memory.jsonl")) as store:
            counts = translate_texts(store, engine, texts, "en", "fr", registry)
    """

    def __init__(self, path: Path | str, *, lock: bool = True):
        self.path = Path(path)
        self.rejected_path = rejected_path_for(self.path)
        self._main = _AppendFile(self.path, _parse_entry, lock)
        try:
            self._rej = _AppendFile(self.rejected_path, _parse_rejection, lock=False) if self.rejected_path.exists() else None
        except BaseException:
            self._main.close()
            raise
        self._lock = lock
        self._entries: dict[StoreKey, list[Translation]] = {}
        for e in self._main.records:
            self._index(e)
        self._main.records = []
        self._rejected: set[StoreKey] = set()
        if self._rej is not None:
            self._rejected = {store_key(r.source, r.source_lang, r.target_lang, r.engine) for r in self._rej.records}
            self._rej.records = []

    @property
    def dropped_bytes(self) -> int:
        """Bytes of an incomplete last line dropped on open (left by an interrupted run)."""
        return self._main.dropped_bytes + (self._rej.dropped_bytes if self._rej else 0)

    def _index(self, entry: Translation) -> None:
        self._entries.setdefault(store_key(entry.source, entry.source_lang, entry.target_lang, entry.engine), []).append(entry)

    def __contains__(self, key: StoreKey) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return sum(map(len, self._entries.values()))

    def get(self, key: StoreKey) -> list[Translation]:
        """Every entry with this key, oldest first."""
        return list(self._entries.get(key, ()))

    def entries(self) -> Iterator[Translation]:
        for group in self._entries.values():
            yield from group

    def append(self, entry: Translation) -> None:
        """Append and fsync one entry; when this returns, the entry is on disk."""
        self._main.append(entry.model_dump(mode="json"))
        self._index(entry)

    def was_rejected(self, key: StoreKey) -> bool:
        return key in self._rejected

    def add_rejection(self, rejection: Rejection) -> None:
        if self._rej is None:
            self._rej = _AppendFile(self.rejected_path, _parse_rejection, lock=False)
            self._rej.records = []
        self._rej.append(rejection.as_dict())
        self._rejected.add(store_key(rejection.source, rejection.source_lang, rejection.target_lang, rejection.engine))

    def close(self) -> None:
        self._main.close()
        if self._rej is not None:
            self._rej.close()

    def __enter__(self) -> "TMStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- the resumable translate loop ----------------------------------------------------------------


@dataclass
class TranslateCounts:
    texts: int = 0  # non-blank input texts
    blank: int = 0
    duplicates: int = 0  # same key as an earlier input text
    reused: int = 0  # an entry for the key was already in the store
    skipped_rejected: int = 0  # rejected by the gates in an earlier run (journal)
    sent: int = 0  # texts sent to the engine
    requests: int = 0  # calls to the engine, retries included
    accepted: int = 0
    rejected: int = 0
    rejected_by_reason: Counter = field(default_factory=Counter)  # a text counts under each gate (GateName) it failed
    failed: int = 0
    failed_by_reason: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if not isinstance(v, Counter)}
        d["rejected_by_reason"] = dict(sorted(self.rejected_by_reason.items()))
        d["failed_by_reason"] = dict(sorted(self.failed_by_reason.items()))
        return d

    def summary(self) -> str:
        def by(c: Counter) -> str:
            return " (" + ", ".join(f"{r}: {n}" for r, n in sorted(c.items())) + ")" if c else ""

        extra = f", {self.skipped_rejected} rejected earlier" if self.skipped_rejected else ""
        extra += f", {self.duplicates} duplicates" if self.duplicates else ""
        return (f"{self.texts} texts: {self.reused} reused{extra}, {self.sent} sent ({self.requests} requests), "
                f"{self.accepted} accepted, {self.rejected} rejected{by(self.rejected_by_reason)}, "
                f"{self.failed} failed{by(self.failed_by_reason)}")


def translate_texts(
    store: TMStore,
    engine,
    texts: Iterable[str],
    src: str,
    tgt: str,
    languages: Mapping[str, Language],
    *,
    retry_rejected: bool = False,
    back_translation_min: float = 0.0,
) -> TranslateCounts:
    """Translate the texts that have no entry for (text, src, tgt, engine) in the store,
    gate each translation, and append every accepted one at once (status
    'machine-translated', origin 'machine', engine = the engine's name).

    `engine` is a `tasks.translation.engines.Engine` (anything with `.name` and `iter_translate`).
    Texts whose translation was rejected by the gates in an earlier run are not sent
    again unless `retry_rejected`. Failed texts (timeouts, HTTP errors) are not recorded
    and are sent again by the next run.

    With `back_translation_min` > 0 every gated translation is translated back by the same
    engine and rejected when the character-trigram similarity of the round trip to the
    source is below it (a failed back-translation does not reject: it is counted)."""
    _check_pair(src, tgt, languages)
    src_lang, tgt_lang = languages[src], languages[tgt]
    counts = TranslateCounts()
    pending = _texts_to_send(store, texts, (src, tgt, engine.name), retry_rejected, counts)
    if not pending:
        return counts
    for res in engine.iter_translate(pending, src_lang, tgt_lang):
        counts.requests += res.attempts
        counts.sent += res.attempts > 0
        if not res.ok:
            counts.failed += 1
            counts.failed_by_reason[res.error] += 1
            continue
        failures = _gate_failures(res, engine, src_lang, tgt_lang, back_translation_min, counts)
        if failures:
            counts.rejected += 1
            counts.rejected_by_reason.update({f.gate for f in failures})
            store.add_rejection(Rejection(src, tgt, res.text, res.translation, engine.name, tuple(map(str, failures))))
            continue
        store.append(Translation(source_lang=src, target_lang=tgt, source=res.text, target=res.translation,
                                 origin="machine", engine=engine.name, status="machine-translated"))
        counts.accepted += 1
    return counts


def _check_pair(src: str, tgt: str, languages: Mapping[str, Language]) -> None:
    """Both codes in the registry, and not the same language (an InputError naming the option)."""
    for code, opt in ((src, "--source"), (tgt, "--target")):
        if code not in languages:
            raise InputError(opt, f"unknown language code {code!r} (registry has: {', '.join(sorted(languages))})")
    if src == tgt:
        raise InputError("--target", f"source and target are the same language ({src})")


def _texts_to_send(store: TMStore, texts: Iterable[str], pair: tuple[str, str, str], retry_rejected: bool,
                   counts: TranslateCounts) -> list[str]:
    """The texts to send, each once: not blank, not in the store for (src, tgt, engine) =
    `pair`, not rejected earlier unless `retry_rejected`; the others counted."""
    src, tgt, engine_name = pair
    pending: list[str] = []
    seen: set[StoreKey] = set()
    for text in texts:
        if not text.strip():
            counts.blank += 1
            continue
        counts.texts += 1
        key = store_key(text, src, tgt, engine_name)
        if key in seen:
            counts.duplicates += 1
            continue
        seen.add(key)
        if key in store:
            counts.reused += 1
        elif store.was_rejected(key) and not retry_rejected:
            counts.skipped_rejected += 1
        else:
            pending.append(text)
    return pending


def _gate_failures(res, engine, src_lang: Language, tgt_lang: Language, back_translation_min: float,
                   counts: TranslateCounts) -> list[GateFailure]:
    """Why a translation is rejected (none: accepted): the translation gates, then, when they
    pass and `back_translation_min` > 0, the round trip's similarity to the source."""
    from common.text import lexical_similarity
    from tasks.translation.gates import translation_gates

    failures = translation_gates(res.text, res.translation, src_lang, tgt_lang)
    if not failures and back_translation_min > 0:
        back = engine.translate(res.translation, tgt_lang, src_lang)
        counts.requests += back.attempts
        if back.ok:
            sim = lexical_similarity(res.text, back.translation)
            if sim < back_translation_min:
                failures = [GateFailure("back-translation", f"similarity {sim:.2f} below {back_translation_min}")]
        else:
            counts.failed_by_reason[f"back-translation: {back.error}"] += 1
    return failures
