"""Stages: write the release folder from the allocation, then (after evaluate) its card,
then (after audit) publish it: `write_release`, `write_card_stage`, `publish_release`.

Written into a temporary sibling folder `.tmp-<version>-<pid>` and renamed only after the
audit passes, so a release is never half-written. An existing release is never
overwritten: rebuilding the same version with identical content is a no-op ("unchanged"),
different content is an error. Runs of one version take turns on a lock file
(`.<version>.lock`); a build folder left by a killed run is removed by the next one; a
full disk removes the build folder and says so in one line.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from common.version import code_fingerprint, code_version
from schemas.config import LoadedConfig
from schemas.parameters import CardParameters, PublishParameters, WriteParameters
from common.errors import ConflictError, InputError, disk_full, is_disk_full
from common.interrupts import removed_if_interrupted
from common.jsonio import atomic_write, file_digest, fsync_tree, read_json_object
from common.testhooks import hold
from tasks.release.card import source_items_by_cell, write_card
from tasks.release.croissant import write_croissant
from tasks.release.hub import cell_splits, has_pivots, split_files, write_split_files
from tasks.release.writers import (file_entries, item_languages, pivot_count, write_build_report, write_cells,
                                   write_confusion_sets, write_pivot_files)
from umls.rrf import read_rrf_table


def sources_srl(rrf_dir: Path, atoms_path: str) -> dict[str, int]:
    used = set(pc.unique(pq.read_table(atoms_path, columns=["sab"])["sab"]).to_pylist())  # millions of atoms, tens of sources
    if not (rrf_dir / "MRCONSO.RRF").exists():  # an OBO vocabulary: open ontologies, SRL 0
        from umls.obo_vocabulary import sources_srl as obo_srl

        levels = obo_srl()
        return {sab: levels.get(sab, 0) for sab in sorted(used)}
    mrsab = rrf_dir / "MRSAB.RRF"
    if not mrsab.exists():
        return {sab: 0 for sab in sorted(used)}
    tb = read_rrf_table(mrsab, ["RSAB", "SRL"])
    levels = dict(zip(tb["RSAB"].to_pylist(), (int(x) for x in tb["SRL"].to_pylist())))
    return {sab: levels.get(sab, 9) for sab in sorted(used)}


def _realization_note(cell: str, counts: dict, quota: int) -> str:
    c = counts[cell]
    prov = ", ".join(f"{k}" for k in c["provenance"]) or "nothing"
    if c["queries"] >= quota:
        return f"full ({c['queries']}/{quota}) from {prov}"
    if c["queries"] == 0:
        return f"empty (0/{quota}): no native source, vocabulary atom or translation for this cell offline"
    return f"short ({c['queries']}/{quota}): only {prov} available offline"


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link where the file system allows one (a release is never written to in place:
    every writer replaces a file by renaming a new one over it), else a copy."""
    try:
        os.link(src, dst)
    except OSError:  # another file system, no links there (EXDEV, EPERM), too many links
        shutil.copy2(src, dst)


def carried_file_problems(base: Path, base_manifest: dict, cells: list[str]) -> list[tuple[str, str]]:
    """The carried cells' files that do not match the base release's manifest (sha256, or
    a file on one side only): carrying them would publish them under a new manifest that
    vouches for them."""
    listed = base_manifest.get("files", {})
    problems = []
    for cell in cells:
        on_disk = {p.relative_to(base).as_posix(): p for p in sorted((base / cell).rglob("*")) if p.is_file()}
        for name in sorted(on_disk.keys() | {n for n in listed if n.startswith(cell + "/")}):
            if name not in listed:
                problems.append((name, "not listed in the base release's manifest"))
            elif name not in on_disk:
                problems.append((name, "listed in the base release's manifest but missing"))
            elif file_digest(on_disk[name]) != listed[name].get("sha256"):
                problems.append((name, "sha256 differs from the base release's manifest"))
    return problems


def _merge_base(base: Path, tmp: Path, new_languages: list[str], counts: dict) -> dict:
    """Carry the base release's cells over unchanged (hard links: hundreds of MB that are
    never written to) and merge its confusion sets."""
    base_manifest = json.loads((base / "manifest.json").read_text(encoding="utf-8"))
    for cell, c in base_manifest["cells"].items():
        task, lang = cell.split("/")
        shutil.copytree(base / task / lang, tmp / task / lang, copy_function=_link_or_copy)
        counts[cell] = {k: v for k, v in c.items() if k != "realization"}
    # checked after linking (a new link changes a file's change time, so its digest is
    # taken once, here, and reused by the manifest, the audit and the diff)
    problems = carried_file_problems(base, base_manifest, sorted(base_manifest["cells"]))
    if problems:
        name, what = problems[0]
        more = f" (and {len(problems) - 1} more file(s))" if len(problems) > 1 else ""
        raise InputError(base / name, f"{what}{more}: its cells cannot be carried over as they are; run mmedbench audit on it")
    new_sets = [json.loads(l) for l in (tmp / "cd" / "confusion_sets.jsonl").read_text(encoding="utf-8").splitlines()]
    old_sets = [json.loads(l) for l in (base / "cd" / "confusion_sets.jsonl").read_text(encoding="utf-8").splitlines()]
    merged = sorted(old_sets + new_sets, key=lambda r: r["set_id"])
    write_confusion_sets(merged, tmp / "cd")
    return {"base_version": base_manifest["version"], "base_build_id": base_manifest["build_id"],
            "added_languages": new_languages,
            "added_cells": sorted(f"{t}/{l}" for t in ("xqa", "cd", "evidence") for l in new_languages),
            "unchanged_cells": sorted(base_manifest["cells"])}


def _write_split_files(tmp: Path, counts: dict, carried: set[str], item_langs: dict[str, str] | None = None) -> None:
    """Per-split parquet files of every cell (the card's `datasets` configs). A cell carried over
    from a base release keeps its files; only a base made before they existed gets them added
    (and its pivot control, made from its queries as a new cell's is: `item_langs`)."""
    sets = [json.loads(l) for l in (tmp / "cd" / "confusion_sets.jsonl").read_text(encoding="utf-8").splitlines() if l]
    for cell in sorted(counts):
        task, lang = cell.split("/")
        d = tmp / cell
        if cell in carried:
            if not has_pivots(d):  # none, or a base from before pivot controls
                write_pivot_files(d, task, lang, item_langs or {})
            if all((d / p).exists() for by_split in split_files(task, cell_splits(d), has_pivots(d)).values() for p in by_split.values()):
                continue
        write_split_files(d, task, [s for s in sets if s["lang"] == lang])


def _add_pivot_counts(tmp: Path, counts: dict) -> None:
    """Each non-English cell's `pivots` block, counted from its files (a carried cell's too)."""
    for cell in counts:
        block = pivot_count(tmp / cell, cell.split("/")[1])
        counts[cell].pop("pivots", None)
        if block is not None:
            counts[cell]["pivots"] = block


def _published(final: Path, build_id: str) -> dict | None:
    """The published manifest of this version if it has this build id, else None. Its audit
    passed when it was published and the build is deterministic, so a rebuild with nothing
    changed only checks the published files against their manifest hashes instead of
    rewriting and re-auditing them (minutes at paper scale); `mmedbench audit` re-runs
    every check on demand."""
    try:
        manifest = read_json_object(final / "manifest.json")
    except InputError:
        return None
    return manifest if manifest.get("build_id") == build_id else None


@contextmanager
def _version_lock(release_root: Path, version: str) -> Iterator[bool]:
    """Held while one run decides about, writes and publishes `version`. A second run of the
    same version (a build, an add-language, in another process) waits here, then finds the
    first one's release: the same build id is "unchanged", another is a conflict. An flock
    dies with its process, so a killed run never leaves it held. Yields False where the file
    system has no locks: the atomic rename below still lets only one run publish."""
    path = release_root / f".{version}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            yield False
            return
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:  # the previous holder removed it as we got the lock
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield True
    finally:
        path.unlink(missing_ok=True)  # before unlocking: a waiter on this inode sees it is gone and retries
        os.close(fd)


def _remove_stale(release_root: Path, version: str, locked: bool) -> None:
    """Build folders of this version that a killed run left behind. Under the version lock no
    other run is writing one; without a lock only this process' own name is certain."""
    for tmp in release_root.glob(f".tmp-{version}-*"):
        if tmp.is_dir() and (locked or tmp.name == f".tmp-{version}-{os.getpid()}"):
            shutil.rmtree(tmp, ignore_errors=True)


AUDIT_REPORTS = ("audit_report.json", "audit_report.md")


def release_entries(root: Path) -> dict[str, dict]:
    """The manifest's `files` of a written release: every file but the manifest itself, the
    audit reports included (written after the audit, then listed: an edited report fails
    `hashes` like any file)."""
    entries = file_entries(root)
    for name in AUDIT_REPORTS:
        if (root / name).is_file():
            entries[name] = {"sha256": file_digest(root / name), "bytes": (root / name).stat().st_size}
    return dict(sorted(entries.items()))


def _same_release(final: Path, build_id: str, files: dict) -> bool:
    published = _published(final, build_id)
    return published is not None and published["files"] == files == release_entries(final)


def make_world_readable(root: Path) -> None:
    """Every file 0644, every folder 0755, whatever the umask: a release is read by other
    users and web servers (atomic_write's temporary files are mkstemp's 0600, and a umask
    of 077 makes every folder private)."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        path.chmod(0o755 if path.is_dir() else 0o644)


def evaluation_retrievers(loaded: LoadedConfig, extra: list[str] | None) -> tuple[list[str], list]:
    """The build's retrievers: the config's (paths relative to it), then `--evaluate`'s."""
    from tasks.evaluation.retrievers import parse_retrievers

    listed = list(loaded.config.evaluation.retrievers)
    added = [r for r in dict.fromkeys(extra or []) if r not in listed]
    specs = parse_retrievers(listed, loaded.base) if listed else []
    specs += parse_retrievers(added, others=tuple(s.name for s in specs)) if added else []
    return listed + added, specs


class Draft:
    """A release being written: `.tmp-<version>-<pid>` beside the final folder, under the
    version's lock from `write_release` until `publish_release` renamed it into place. The
    flow holds it open (a context manager) through the release's stages; leaving it on an
    error removes the folder and the lock, and a full disk becomes the one line saying that
    nothing was published. `outcome` is set once the release is published, or found
    published already ("unchanged": the stages after `write_release` then have nothing to do)."""

    def __init__(self, release_root: Path, version: str):
        self.version, self.final = version, release_root / version
        self.tmp = release_root / f".tmp-{version}-{os.getpid()}"
        self._stack = ExitStack()
        self.build_id = ""
        self.manifest: dict = {}
        self.report: dict = {}
        self.counts: dict = {}
        self.outcome: dict | None = None

    @classmethod
    def open(cls, release_root: Path, version: str) -> "Draft":
        draft = cls(release_root, version)
        with draft.on_error():
            if not release_root.exists():  # a folder made for the release is as readable as the release
                release_root.mkdir(parents=True, exist_ok=True)
                release_root.chmod(0o755)
            # interrupted (Ctrl-C, SIGTERM: common/interrupts.py), the build folder and the lock file go
            locked = draft._stack.enter_context(_version_lock(release_root, version))
            draft._stack.enter_context(removed_if_interrupted(draft.tmp))
            draft._stack.enter_context(removed_if_interrupted(release_root / f".{version}.lock"))
            _remove_stale(release_root, version, locked)
            if draft.tmp.exists():
                shutil.rmtree(draft.tmp)
            draft.tmp.mkdir()
        return draft

    @contextmanager
    def on_error(self) -> Iterator[None]:
        """Closed (folder and lock gone) if the block raises; a full disk said in one line."""
        try:
            yield
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise

    def __enter__(self) -> "Draft":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        """The build folder goes (published, it was renamed away), then the lock."""
        try:
            shutil.rmtree(self.tmp, ignore_errors=True)
        finally:
            self._stack.close()
        if exc is not None and is_disk_full(exc):
            raise disk_full(exc, f"writing release {self.version} (nothing was published)", folder=self.final.parent) from None

    @property
    def done(self) -> bool:
        return self.outcome is not None


def _base_build_id(base: Path) -> str:
    manifest = read_json_object(base / "manifest.json", "the base release's manifest")
    return str(manifest.get("build_id", ""))


def _build_id(p: WriteParameters) -> str:
    """What the release's bytes are a function of: config, inputs, code and, for an
    add-language, the base release it extends (the same config adding languages to a base
    gives other cells than a full build of it: both must never pass for one another)."""
    input_hashes = {rel: file_digest(path) for rel, path in sorted(p.inputs.items())}  # hashed for the cache keys already
    what = [p.config_dump, input_hashes, code_version(), code_fingerprint()]
    if p.base is not None:
        what.append({"base_build_id": _base_build_id(p.base), "added": sorted(p.languages)})
    # the source fingerprint too: an uncommitted edit must not pass for the published build
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def _different(final: Path) -> ConflictError:
    return ConflictError(final, "a different release with this version exists; releases are never overwritten "
                                "(use --version)")


def refuse_a_different_release(p: WriteParameters) -> None:
    """Before any stage runs: a release of this version that was there at the start and is
    not this build (its manifest's build id differs, or it has none) is the conflict now, not
    after minutes of building. `write_release` decides again under the version lock."""
    final = p.release_root / p.version
    if p.existed_at_start and final.exists() and _published(final, _build_id(p)) is None:
        raise _different(final)


def _already_published(p: WriteParameters, draft: Draft) -> dict | None:
    """The outcome of a rebuild whose release is published already (None: write it). A
    different release under this version is an error, never overwritten."""
    if not draft.final.exists():
        return None
    published = _published(draft.final, draft.build_id)
    if published is None:
        if p.existed_at_start:
            raise _different(draft.final)
        raise ConflictError(draft.final, "another run published a different release with this version while this one was "
                                         "building; nothing was overwritten (use --version)")
    if release_entries(draft.final) != published["files"]:
        raise InputError(draft.final, "the published release no longer matches its own manifest "
                                      "(a file changed after publishing); run mmedbench audit on it")
    return {"release": str(draft.final), "status": "unchanged", "cells": published["cells"], "audit_passed": True}


def _check_no_empty_cell(p: WriteParameters, counts: dict) -> None:
    empty = sorted(c for c, v in counts.items() if v["queries"] == 0)
    if empty and not p.allow_empty_cells:
        task, lang = empty[0].split("/")
        raise InputError(p.empty_cell_blame, f"cell {empty[0]} is empty: no {task} item or concept can be realized in {lang!r} "
                         f"(translation-memory miss for every candidate, no native text, no vocabulary atom; "
                         f"add memory entries or configure an engine)")


def _write_cells_and_report(p: WriteParameters, draft: Draft, vocab: dict, src: dict, alloc: dict) -> dict | None:
    """The cells, the build report and the cells' counts; the base release's changes (or None)."""
    tmp = draft.tmp
    item_langs = item_languages(src["shards"])
    counts = write_cells(alloc["assignments"], src["corpora"], vocab, p.languages, p.dev_fraction, tmp, item_langs)
    changes = _merge_base(p.base, tmp, p.languages, counts) if p.base is not None else None
    code_names = read_json_object(Path(vocab["code_names_report"]), "the code-keyed names' report") if vocab.get("code_names_report") else None
    name_lists = read_json_object(Path(vocab["name_lists_report"]), "the name lists' report") if vocab.get("name_lists_report") else None
    draft.report = write_build_report(alloc["dropped"], alloc["gates"], alloc["unrealized"], counts, p.quotas, tmp,
                                      vocabulary_code_names=code_names, vocabulary_name_lists=name_lists)
    _check_no_empty_cell(p, counts)
    hold("release:written")  # tests only: stop with the cells written and nothing published
    for cell in counts:
        counts[cell]["realization"] = _realization_note(cell, counts, p.quotas[cell.split("/")[0]])
    _write_split_files(tmp, counts, carried=set(changes["unchanged_cells"]) if changes else set(), item_langs=item_langs)
    _add_pivot_counts(tmp, counts)
    draft.counts = counts
    return changes


def write_release(p: WriteParameters, upstream: dict) -> Draft:
    """Stage: the release's cells, build report and manifest (its files not yet listed), in
    a Draft. With `p.base`, only `p.languages` are written from the allocation; every other
    cell is the base release's, byte for byte.

    `p.existed_at_start`: whether the release existed when the run began (the flow looks
    before its stages run). A release that appeared since is another run's: a different one
    is a conflict (ConflictError, exit 3), the same one is "unchanged"."""
    vocab, src, alloc = upstream["vocabulary"], upstream["sources"], upstream["allocate"]
    draft = Draft.open(p.release_root, p.version)
    with draft.on_error():
        draft.build_id = _build_id(p)
        draft.outcome = _already_published(p, draft)
        if draft.done:
            return draft
        changes = _write_cells_and_report(p, draft, vocab, src, alloc)
        draft.manifest = {
            "version": p.version, "build_id": draft.build_id, "code_version": code_version(), "config": p.config_dump,
            "inputs": {rel: file_digest(path) for rel, path in sorted(p.inputs.items())},
            "languages": p.manifest_languages,
            "sources_srl": {**(srl := sources_srl(p.vocabulary_dir, vocab["atoms"])),
                            **{sab: level for sab, level in p.code_name_srl.items() if sab in srl}},
            "cells": draft.counts, "dropped": draft.report["dropped_by_reason"], "files": {},
        }
        if changes is not None:
            draft.manifest["changes"] = changes
    return draft


def _write_manifest(draft: Draft) -> None:
    with atomic_write(draft.tmp / "manifest.json") as fh:
        fh.write(json.dumps(draft.manifest, ensure_ascii=False, sort_keys=True, indent=2) + "\n")


def write_card_stage(p: CardParameters, upstream: dict) -> None:
    """Stage: the card, the Croissant metadata and the manifest listing every file so far
    (after the evaluation: its results are listed, hashed and audited like every file)."""
    draft: Draft = upstream["write"]
    if draft.done:
        return
    with draft.on_error():
        write_card(draft.manifest, draft.report, draft.tmp, source_items_by_cell(upstream["sources"]["shards"]))
        write_croissant(draft.manifest, draft.tmp)  # before the hashing: croissant.json is listed and audited like every file
        draft.manifest["files"] = file_entries(draft.tmp)
        _write_manifest(draft)


def publish_release(p: PublishParameters, upstream: dict) -> dict:
    """Stage: the audited release, its reports listed in the manifest, renamed into place
    (atomic). Another run's identical release there already is "unchanged"; a different one
    is a conflict."""
    draft: Draft = upstream["write"]
    if draft.done:
        return draft.outcome
    with draft.on_error():
        draft.manifest["files"] = release_entries(draft.tmp)  # now with the audit reports' hashes
        _write_manifest(draft)
        make_world_readable(draft.tmp)
        fsync_tree(draft.tmp)
        outcome = {"release": str(draft.final), "status": "written", "cells": draft.counts, "audit_passed": True,
                   "dropped": dict(Counter(draft.report["dropped_by_reason"]))}
        try:
            draft.tmp.rename(draft.final)  # atomic; fails when another run's release is already there
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not draft.final.exists():
                raise
            if not _same_release(draft.final, draft.build_id, draft.manifest["files"]):
                raise ConflictError(draft.final, "another run published a different release with this version while this one "
                                                 "was building; nothing was overwritten (use --version)") from None
            outcome = {"release": str(draft.final), "status": "unchanged", "cells": draft.counts, "audit_passed": True}
        draft.outcome = outcome
    return outcome


def _sync_tree(root: Path) -> None:
    """fsync every file and folder of the release before the rename publishes it: a crash
    right after publishing must not leave a published folder of empty files."""
    for path in sorted(root.rglob("*"), reverse=True) + [root]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
