"""TMX 1.4b export of translation memories, and import of a post-edited TMX.

Export writes one <tu> per distinct entry, sorted, with no dates, so the same memory
gives the same bytes:

    <tu tuid="<sha256 of the entry>" srclang="en">
      <prop type="x-engine">libre</prop>
      <prop type="x-origin">machine</prop>
      <prop type="x-status">machine-translated</prop>
      <prop type="x-target-sha256">...</prop>
      <tuv xml:lang="en"><seg>source</seg></tuv>
      <tuv xml:lang="fr"><seg>target</seg></tuv>
    </tu>

Import reads a TMX a translator has post-edited in a CAT tool. A unit whose target text
changed, or that is marked reviewed (x-status set to "machine-translated and verified"
or "verified", or <prop type="x-verified">yes</prop>), is appended to the store as
status 'machine-translated and verified' under the same key (source, languages, engine),
which `TranslationMemory` ranks above the machine entry. The original is found by
`tuid` in the store; a unit exported elsewhere is compared with its x-target-sha256.
Importing the same file twice appends nothing the second time.
"""
from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from common.errors import InputError
from common.jsonio import atomic_write, dumps, open_input
from schemas.records import Translation
from tasks.translation.memory import STATUS_RANK
from tasks.translation.tm_store import TMStore, read_entries, store_key

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
VERIFIED = "machine-translated and verified"
_MARKED_STATUS = {VERIFIED, "verified", "approved", "reviewed"}
_YES = {"yes", "true", "1"}
# XML 1.0 cannot carry these characters at all, escaped or not.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def entry_id(entry: Translation) -> str:
    """The tuid: sha256 of the entry's canonical JSON."""
    return hashlib.sha256(dumps(entry.model_dump(mode="json")).encode("utf-8")).hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sort_key(e: Translation):
    return (e.source_lang, e.target_lang, e.source, e.engine, STATUS_RANK[e.status], e.target, e.origin)


@dataclass
class ExportCounts:
    written: int = 0
    duplicates: int = 0
    skipped: Counter = field(default_factory=Counter)


def tmx_bytes(entries: Iterable[Translation], counts: ExportCounts | None = None) -> bytes:
    """A TMX 1.4b document for the entries: distinct entries, sorted, deterministic."""
    counts = counts if counts is not None else ExportCounts()
    unique: dict[str, Translation] = {}
    for e in entries:
        if _NOT_XML.search(e.source) or _NOT_XML.search(e.target):
            counts.skipped["contains characters XML 1.0 cannot carry"] += 1
            continue
        tuid = entry_id(e)
        if tuid in unique:
            counts.duplicates += 1
        unique[tuid] = e
    ordered = sorted(unique.items(), key=lambda kv: (_sort_key(kv[1]), kv[0]))
    src_langs = {e.source_lang for e in unique.values()}
    root = ET.Element("tmx", {"version": "1.4"})
    ET.SubElement(root, "header", {
        "creationtool": "mmedbench", "creationtoolversion": "1", "segtype": "sentence",
        "o-tmf": "mmedbench-jsonl", "adminlang": "en",
        "srclang": src_langs.pop() if len(src_langs) == 1 else "*all*", "datatype": "plaintext",
    })
    body = ET.SubElement(root, "body")
    for tuid, e in ordered:
        tu = ET.SubElement(body, "tu", {"tuid": tuid, "srclang": e.source_lang})
        for ptype, value in (("x-engine", e.engine), ("x-origin", e.origin), ("x-status", e.status),
                             ("x-target-sha256", _sha(e.target))):
            ET.SubElement(tu, "prop", {"type": ptype}).text = value
        for lang, text in ((e.source_lang, e.source), (e.target_lang, e.target)):
            tuv = ET.SubElement(tu, "tuv", {XML_LANG: lang})
            ET.SubElement(tuv, "seg").text = text
        counts.written += 1
    ET.indent(root, space="  ")
    xml = ET.tostring(root, encoding="unicode")
    # A parser turns a literal CR into LF; a character reference survives the round trip.
    xml = xml.replace("\r", "&#13;")
    head = '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE tmx SYSTEM "tmx14.dtd">\n'
    return (head + xml + "\n").encode("utf-8")


def export_tmx(paths: Sequence[Path], out: Path) -> ExportCounts:
    """Export the entries of TM files (stores or any JSON-lines memory) to one TMX file,
    written atomically."""
    counts = ExportCounts()
    entries: list[Translation] = []
    for p in paths:
        entries.extend(read_entries(Path(p)))
    data = tmx_bytes(entries, counts)
    with atomic_write(Path(out), "wb") as fh:
        fh.write(data)
    return counts


# --- import ----------------------------------------------------------------------------------------


@dataclass
class ImportCounts:
    units: int = 0
    verified: int = 0  # appended as 'machine-translated and verified'
    unchanged: int = 0
    already: int = 0  # the same verified entry is already in the store
    skipped: Counter = field(default_factory=Counter)


class _EntityDeclared(Exception):
    pass


def _parse(path: Path) -> ET.Element:
    """Parse untrusted XML: a first pass with expat refuses entity declarations (the
    billion-laughs family; TMX needs none) and reports where the XML is broken."""
    def no_entities(*_args):
        raise _EntityDeclared()

    # the namespace separator ElementTree uses: an unbound prefix fails here, not in ET.parse
    scan = expat.ParserCreate(namespace_separator="}")
    scan.EntityDeclHandler = no_entities
    try:
        with open_input(path, "a TMX file") as fh:
            scan.ParseFile(fh)
    except _EntityDeclared:
        raise InputError(path, "entity declarations are not allowed in a TMX file", scan.CurrentLineNumber) from None
    except expat.ExpatError as exc:
        raise InputError(path, f"not well-formed XML ({expat.ErrorString(exc.code)}, column {exc.offset + 1})", exc.lineno) from None
    except (OSError, RecursionError) as exc:
        raise InputError(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        with open_input(path, "a TMX file") as fh:
            return ET.parse(fh).getroot()
    except ET.ParseError as exc:
        line, column = exc.position
        raise InputError(path, f"not well-formed XML ({str(exc).split(':')[0]}, column {column + 1})", line) from None


def _seg_text(tuv: ET.Element) -> str | None:
    """The plain text of a tuv's seg, or None when it has inline markup we cannot map."""
    seg = tuv.find("seg")
    if seg is None or len(seg):
        return None
    return seg.text or ""


def import_tmx(tmx: Path, store: TMStore) -> ImportCounts:
    """Append the post-edited or marked units of a TMX to the store as verified entries."""
    tmx = Path(tmx)
    root = _parse(tmx)
    if root.tag != "tmx" or root.find("body") is None:
        raise InputError(tmx, "not a TMX document (expected <tmx> with a <body>)")
    header = root.find("header")
    default_src = header.get("srclang") if header is not None else None
    originals = {entry_id(e): e for e in store.entries()}
    counts = ImportCounts()
    for tu in root.find("body").iter("tu"):
        counts.units += 1
        reason = _import_unit(tu, default_src, originals, store, counts)
        if reason:
            counts.skipped[reason] += 1
    return counts


def _import_unit(tu: ET.Element, default_src: str | None, originals: dict[str, Translation], store: TMStore,
                 counts: ImportCounts) -> str | None:
    props = {p.get("type"): (p.text or "").strip() for p in tu.findall("prop")}
    tuvs = tu.findall("tuv")
    if len(tuvs) != 2:
        return "not exactly two languages"
    langs = [t.get(XML_LANG) or t.get("lang") or "" for t in tuvs]
    src_tag = (tu.get("srclang") or default_src or "").lower()
    if src_tag == langs[1].lower() != langs[0].lower():  # the source is whichever tuv srclang names
        tuvs, langs = tuvs[::-1], langs[::-1]
    source, target = _seg_text(tuvs[0]), _seg_text(tuvs[1])
    if source is None or target is None:
        return "segment with inline markup"
    if not target.strip():
        return "empty target"
    status = props.get("x-status", "").lower()
    marked = status in _MARKED_STATUS or props.get("x-verified", "").lower() in _YES
    original = originals.get(tu.get("tuid", ""))
    if original is not None:
        if source.strip() != original.source.strip():
            return "source text edited"
        changed = target.strip() != original.target.strip()
        if original.status == VERIFIED and not changed:
            counts.unchanged += 1
            return None
    else:
        if "x-target-sha256" not in props:
            if not marked:
                return "no original to compare with (not exported by mmedbench, not marked verified)"
            changed = False
        else:
            changed = _sha(target) != props["x-target-sha256"]
        try:
            original = Translation(source_lang=langs[0], target_lang=langs[1], source=source, target=target,
                                   origin=props.get("x-origin") or "machine", engine=props.get("x-engine") or "human",
                                   status="machine-translated")
        except ValidationError as exc:
            err = exc.errors()[0]
            return f"invalid unit ({'.'.join(map(str, err['loc']))}: {err['msg']})"
    if not (changed or marked):
        counts.unchanged += 1
        return None
    if original.origin != "machine":
        return "human translation edited (change it in its own TM file)"
    key = store_key(original.source, original.source_lang, original.target_lang, original.engine)
    if any(e.status == VERIFIED and e.target == target for e in store.get(key)):
        counts.already += 1
        return None
    store.append(Translation(source_lang=original.source_lang, target_lang=original.target_lang,
                             source=original.source, target=target, origin="machine",
                             engine=original.engine, status=VERIFIED))
    counts.verified += 1
    return None
