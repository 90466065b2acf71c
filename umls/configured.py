"""The build's vocabulary from its configuration, whatever the format: one entry point for the
build (flows/prefect_tasks.load_vocabulary) and `mmedbench ground`, so both read a vocabulary
the same way.

    format "rrf"  a UMLS release folder           -> umls.vocabulary.build_vocabulary
    format "obo"  Disease Ontology + HPO folders  -> umls.obo_vocabulary.build_obo_vocabulary
                  (+ code-keyed name lists, umls.code_names)
"""
from __future__ import annotations

from pathlib import Path

from common.errors import InputError


def vocabulary_files(fmt: str, path: Path) -> list[Path]:
    """The files a vocabulary of this format is read from (what a cache key must cover)."""
    path = Path(path)
    if fmt == "rrf":
        return sorted(path.glob("*.RRF"))
    if fmt == "obo":
        return sorted(p for sub in ("disease-ontology", "hpo") for p in (path / sub).glob("*")
                      if p.suffix in (".obo", ".tsv", ".hpoa") and p.is_file())
    raise InputError(path, f"unknown vocabulary format {fmt!r} (expected 'rrf' or 'obo')", field="vocabulary.format")


def build_configured_vocabulary(fmt: str, path: Path, out_dir: Path, lat_to_lang: dict[str, str], max_srl: int,
                                preferred_en: list[str], roots: str = "all", code_names: list | tuple = (),
                                name_lists: list | tuple = (), glossaries: list | tuple = (),
                                morphology: dict | None = None) -> dict:
    """Write atoms / concepts / parents (+ atoms per language) into `out_dir`; return their paths.
    `code_names`: code-keyed name lists (schemas.config.CodeNamesConfig, paths absolute; obo only),
    `name_lists` and `glossaries` (NameListConfig, GlossaryConfig: umls/name_lists.py), each kept
    when its restriction level is at most `max_srl`; `morphology`: each language's registry
    morphology (mentions in running text are lemmatised by it)."""
    def allowed(blocks):
        return [c for c in blocks if (c["srl"] if isinstance(c, dict) else c.srl) <= max_srl]

    if fmt == "obo":
        from umls.obo_vocabulary import build_obo_vocabulary

        return build_obo_vocabulary(Path(path), Path(out_dir), lat_to_lang, preferred_en, roots, allowed(code_names),
                                    allowed(name_lists), allowed(glossaries), morphology)
    if name_lists or glossaries:
        raise InputError(path, "name_lists and glossaries extend the open vocabulary: they need format 'obo'",
                         field="vocabulary.name_lists")
    if code_names:
        raise InputError(path, "code_names map codes through Disease Ontology's xrefs: they need format 'obo'",
                         field="vocabulary.code_names")
    if fmt == "rrf":
        from umls.vocabulary import build_vocabulary

        return build_vocabulary(Path(path), Path(out_dir), lat_to_lang, max_srl, preferred_en)
    raise InputError(path, f"unknown vocabulary format {fmt!r} (expected 'rrf' or 'obo')", field="vocabulary.format")
