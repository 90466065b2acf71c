"""The dataset card: front matter the Hub and MTEB read, pictures, per-source licences."""
from __future__ import annotations

import json

import pytest
import yaml

from tasks.release.hub import hub_configs
from tasks.release.licences import hub_licence_ids, licence_rows


def _front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_hub_configs_layout():
    configs = hub_configs({"cd/fr": ["test", "dev"], "xqa/en": ["test"]})
    assert [c["config_name"] for c in configs] == ["cd-fr-corpus", "cd-fr-queries", "cd-fr-qrels", "cd-fr-top_ranked",
                                                   "xqa-en-corpus", "xqa-en-queries", "xqa-en-qrels"]
    assert configs[0]["data_files"] == [{"split": "test", "path": "cd/fr/corpus.parquet"}, {"split": "dev", "path": "cd/fr/corpus.parquet"}]
    assert configs[3]["data_files"][1] == {"split": "dev", "path": "cd/fr/top_ranked/dev.parquet"}


def test_licences_from_the_registry_and_the_config():
    config = {"sources": [{"format": "pubmedqa", "path": "p.json"}, {"format": "igakuqa", "path": "ig"},
                          {"format": "sample-jsonl", "path": "s.jsonl", "licence": "cc-by-4.0"},
                          {"format": "beir", "path": "b"}],
              "translation": {"memory": ["tm.jsonl"]}}
    rows = licence_rows(config, {"DO": 0, "HPO": 0, "HPOGER": 0, "MSH": 0})
    assert [(r["source"], r["licence"].ids) for r in rows] == [
        ("PubMedQA (`p.json`)", ("mit",)), ("IgakuQA (`ig`)", ("unknown",)), ("sample-jsonl file (`s.jsonl`)", ("cc-by-4.0",)),
        ("BEIR folder (`b`)", ("unknown",)), ("translation memory (`tm.jsonl`)", ("unknown",)),
        ("vocabulary: DO", ("cc0-1.0", "cc-by-3.0")), ("vocabulary: HPO, HPOGER", ("other",)), ("vocabulary: MSH", ("other",))]
    assert rows[1]["licence"].text.startswith("none stated: research use only")
    assert "UMLS Metathesaurus License" in rows[-1]["licence"].text
    assert hub_licence_ids(rows) == ["cc-by-3.0", "cc-by-4.0", "cc0-1.0", "mit", "other", "unknown"]


@pytest.mark.slow
def test_sample_card(sample_build):
    release = sample_build["release"]
    card = (release / "README.md").read_text(encoding="utf-8")
    meta = _front_matter(card)
    assert meta["license"] == ["apache-2.0", "cc-by-3.0", "cc0-1.0", "other"]  # sample sources, DO, HPO
    assert meta["language"] == ["en", "zh", "ja", "fr", "ru", "es"]
    names = [c["config_name"] for c in meta["configs"]]
    assert len(names) == 18 * 3 + 6 and len(set(names)) == len(names)
    assert {n for n in names if n.endswith("top_ranked")} == {f"cd-{l}-top_ranked" for l in meta["language"]}
    manifest = json.loads((release / "manifest.json").read_text())
    for c in meta["configs"]:
        for f in c["data_files"]:
            assert f["split"] == "test" and f["path"] in manifest["files"], f
    for png in ("counts", "provenance", "tiers"):
        path = f"assets/{png}.png"
        assert (release / path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path in manifest["files"]
        assert f"]({path})" in card
    for section in ("## Cells", "## Provenance", "## Confusion-set tiers (cd)", "## Loading", "## Sources and licences", "## Citation"):
        assert section in card
    assert "| cd/ru | 0 | 0 | 9 | 0 | 0 |" in card  # provenance per cell: Russian concept names from the memory
    assert "Gargano MA et al. The Human Phenotype Ontology in 2024" in card
