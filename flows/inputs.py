"""The build's input files, checked before anything runs (no Prefect import here)."""
from __future__ import annotations

from pathlib import Path

from schemas.config import LoadedConfig
from schemas.records import load_manifest
from common.errors import InputError


# the vocabulary's tables a build cannot do without: an empty one must be blamed, not the
# translation memory for the empty cells that follow from it
REQUIRED_RRF = {"MRCONSO.RRF": "the concepts' names", "MRSTY.RRF": "the concepts' semantic types: without them no concept is a key concept"}


def _blank(path: Path) -> bool:
    """No content but whitespace (read up to the first other byte)."""
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 16):
            if chunk.strip():
                return False
    return True


def input_files(loaded: LoadedConfig) -> dict[str, Path]:
    cfg = loaded.config
    files: dict[str, Path] = {cfg.registry: loaded.resolve(cfg.registry)}
    vdir = loaded.resolve(cfg.vocabulary.path)
    if not vdir.is_dir():
        raise InputError(loaded.path, f"vocabulary folder {cfg.vocabulary.path!r} not found", field="vocabulary.path")
    if cfg.vocabulary.format == "rrf":
        for p in sorted(vdir.glob("*.RRF")):
            files[f"{cfg.vocabulary.path}/{p.name}"] = p
        for name, holds in REQUIRED_RRF.items():
            p = vdir / name
            if p.is_file() and _blank(p):
                raise InputError(p, f"is empty; it holds {holds} (vocabulary.path in {loaded.path.name})")
    else:
        for p in sorted(vdir.glob("disease-ontology/*")) + sorted(vdir.glob("hpo/*")):
            if p.suffix in (".obo", ".tsv", ".hpoa"):
                files[f"{cfg.vocabulary.path}/{p.relative_to(vdir).as_posix()}"] = p
    # every file a vocabulary block names is an input too: pinned in the manifest, part of the build id
    for field, blocks in (("code_names", cfg.vocabulary.code_names), ("name_lists", cfg.vocabulary.name_lists),
                          ("glossaries", cfg.vocabulary.glossaries)):
        for i, block in enumerate(blocks):
            files.update(_vocabulary_block_files(loaded, block, f"vocabulary.{field}.{i}.path"))
    for i, s in enumerate(cfg.sources):
        path = loaded.resolve(s.path)
        if path.is_dir():  # folder sources (igakuqa, beir, ...): pin every file in them
            if not any(path.rglob("*")):
                raise InputError(path, f"source folder is empty (named in {loaded.path.name})", field=f"sources.{i}.path")
            for f in sorted(q for q in path.rglob("*") if q.is_file()):
                files[f"{s.path}/{f.relative_to(path).as_posix()}"] = f
        else:
            if path.is_file() and _blank(path):
                raise InputError(path, f"source file is empty: no items (sources.{i}.path in {loaded.path.name})")
            files[s.path] = path
    for b in cfg.background:
        files[b.path] = loaded.resolve(b.path)
    for m in cfg.translation.memory:
        files[m] = loaded.resolve(m)
    for rel, p in files.items():
        if not p.exists():
            raise InputError(p, f"input file not found (named in {loaded.path.name} as {rel!r})")
    return files


def _vocabulary_block_files(loaded: LoadedConfig, block, field: str) -> dict[str, Path]:
    """A vocabulary block's files by the name the config gives them: its file, or each file its
    `include` patterns select under its folder (umls/name_lists.list_files, which refuses a
    held-out split's file)."""
    from umls.name_lists import list_files

    path = loaded.resolve(block.path)
    if not path.exists():
        raise InputError(path, f"input file not found (named in {loaded.path.name} as {block.path!r})", field=field)
    if not path.is_dir():
        return {block.path: path}
    return {f"{block.path}/{f.relative_to(path).as_posix()}": f
            for f in list_files(block.model_copy(update={"path": str(path)}))}


def next_minor(version: str) -> str:
    major, minor, *_ = version.split(".")
    return f"{major}.{int(minor) + 1}.0"


def plan_addition(base: Path, languages: list[str]) -> tuple[dict, list[str]]:
    """The base manifest and the languages to add (pure checks, one-line errors)."""
    path = base / "manifest.json"
    if not path.exists():
        raise InputError(base, "not a release folder (no manifest.json)")
    manifest = load_manifest(path)
    old = manifest["config"]["languages"]
    missing = [l for l in old if l not in languages]
    if missing:
        raise InputError(base, f"the config drops languages of the base release ({', '.join(missing)}); "
                         "add-language only adds", field="languages")
    new = [l for l in languages if l not in old]
    if not new:
        raise InputError(base, f"the config adds no language to the base release (it has {', '.join(old)})", field="languages")
    return manifest, new
