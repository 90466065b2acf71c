"""generate(): every input of a build under one folder, and the counts (generation.json)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

from .config_file import REGISTRY, write_config
from .presets import Preset
from .source_model import SAB_INFO
from .sources import write_sources
from .vocabulary import Vocabulary


def vocabulary_counts(vocab: Vocabulary) -> dict:
    return {"concepts": vocab.concepts, "rows": dict(sorted(vocab.w.rows.items())),
            "concepts_by_group": dict(sorted(vocab.by_group.items())),
            "concepts_by_depth": {str(k): v for k, v in sorted(vocab.by_depth.items())},
            "atoms_by_lat": dict(sorted(vocab.by_lat.items(), key=lambda kv: -kv[1])),
            "suppressed_atoms": vocab.suppressed, "concepts_with_two_parents": vocab.multi_parent,
            "sources_above_srl_0": sorted(s for s, i in SAB_INFO.items() if i[1] > 0)}


def generate(preset: Preset, out: Path, seed: int = 0) -> dict:
    """Generate every input of a build under `out`; return the counts (no clock time)."""
    out.mkdir(parents=True, exist_ok=True)
    with REGISTRY.open("rb") as fh:
        registry = tomllib.load(fh)["languages"]
    vocab = Vocabulary(out / "umls", preset, seed, registry)
    vocab.run()
    counts = {"preset": preset.name, "seed": seed, "umls": vocabulary_counts(vocab)}
    counts.update(write_sources(vocab, out, preset, seed, registry))
    write_config(out, preset, seed)
    (out / "generation.json").write_text(json.dumps(counts, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return counts
