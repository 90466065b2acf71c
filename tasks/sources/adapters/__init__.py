"""Source adapters: one module per source format, each a generator

    read_<format>(path: Path, languages: set[str], **options) -> Iterator[SourceItem]

yielding validated `schemas.records.SourceItem`s (task, lang, text, pivot, passages). A
malformed record raises `InputError` naming the file, the line (JSON files: the line where
the record starts) and the field (JSON files: its JSON path, e.g. `[12].question`). An
unknown option is an InputError too. Formats and their options: docs/sources.md.

Items of a non-English source with no English text (frenchmedmcqa, rumeddanet, cnmleqa,
mmedbench-jsonl with require_pivot = false, beir queries without pivot_text) have
pivot=None.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from schemas.records import SourceItem
from tasks.sources.adapters._common import adapter
from tasks.sources.adapters.beir import read_beir, read_beir_corpus
from tasks.sources.adapters.casimedicos import read_casimedicos, read_casimedicos_cases
from tasks.sources.adapters.cnmleqa import cnmleqa_tags, read_cnmleqa
from tasks.sources.adapters.frenchmedmcqa import read_frenchmedmcqa
from tasks.sources.adapters.igakuqa import read_igakuqa
from tasks.sources.adapters.mmedbench_jsonl import read_mmedbench_jsonl
from tasks.sources.adapters.pubmedqa import read_pubmedqa
from tasks.sources.adapters.rumeddanet import read_rumeddanet
from tasks.sources.passages import read_sample_jsonl


@adapter
def _sample_jsonl(path: Path, languages: set[str]) -> Iterator[SourceItem]:
    return read_sample_jsonl(path, languages)


_sample_jsonl.__doc__ = read_sample_jsonl.__doc__

Adapter = Callable[..., Iterator[SourceItem]]

ADAPTERS: dict[str, Adapter] = {
    "sample-jsonl": _sample_jsonl,
    "mmedbench-jsonl": read_mmedbench_jsonl,
    "pubmedqa": read_pubmedqa,
    "igakuqa": read_igakuqa,
    "frenchmedmcqa": read_frenchmedmcqa,
    "rumeddanet": read_rumeddanet,
    "cnmleqa": read_cnmleqa,
    "beir": read_beir,
    "casimedicos": read_casimedicos,
}

# formats that drop some of their records while reading them (a parallel source's cases whose
# languages cannot be paired): `(path, languages, **options) -> .items, .drops`; the sources
# stage reads these, once, instead of ADAPTERS[format], and counts the drops (stage "sources")
READERS_WITH_DROPS: dict[str, Callable] = {"casimedicos": read_casimedicos_cases}

__all__ = [
    "ADAPTERS", "READERS_WITH_DROPS", "cnmleqa_tags", "read_beir", "read_beir_corpus", "read_casimedicos", "read_casimedicos_cases",
    "read_cnmleqa", "read_frenchmedmcqa",
    "read_igakuqa", "read_mmedbench_jsonl", "read_pubmedqa", "read_rumeddanet",
]
