"""The dataset card: front matter the Hub and MTEB read, pictures, per-source licences."""
from __future__ import annotations

import json

import pytest
import yaml

from tasks.release.hub import hub_configs
from tasks.release.licences import hub_licence_ids, licence_rows
from tests.conftest import SAMPLE_CELLS, SAMPLE_LANGUAGES, SAMPLE_PIVOT_CELLS


def _front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def _cell(root, task: str, queries: list[tuple[str, str]], docs: list[str], sets: list[dict]) -> list[str]:
    """A BEIR cell folder (queries as (id, split)); returns its splits after writing the per-split files."""
    from tasks.release.hub import write_split_files

    (root / "qrels").mkdir(parents=True)
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": q, "lang": "fr", "cuis": ["C0000001"],
                                                            "pivot_text": None, "provenance": "native", "split": s}) + "\n"
                                                for q, s in queries))
    for split in ("test", "dev"):
        (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
            f"{q}\t{docs[0]}\t1\n" for q, s in queries if s == split))
    import pyarrow as pa

    from common.parquet import write_parquet

    write_parquet(pa.table({"_id": docs, "title": docs, "text": docs}), root / "corpus.parquet")
    return write_split_files(root, task, sets)


def test_hub_configs_layout(tmp_path):
    from tasks.release.hub import loadable_files

    sets = [{"set_id": "q1", "target_cui": "C1", "distractor_cuis": ["C3", "C2"]}, {"set_id": "q2", "target_cui": "C2", "distractor_cuis": ["C1"]}]
    assert _cell(tmp_path / "cd" / "fr", "cd", [("q1", "test"), ("q2", "dev")], ["C1", "C2", "C3"], sets) == ["test", "dev"]
    _cell(tmp_path / "xqa" / "en", "xqa", [("q3", "test")], ["d1"], [])  # no dev query: no dev split in its configs
    _cell(tmp_path / "xqa" / "es", "xqa", [], ["d1"], [])  # an empty cell: only its corpus loads
    files = {c: loadable_files(tmp_path / c, c.split("/")[0]) for c in ("cd/fr", "xqa/en", "xqa/es")}
    configs = hub_configs(files)
    assert [c["config_name"] for c in configs] == ["cd-fr-corpus", "cd-fr-queries", "cd-fr-qrels", "cd-fr-top_ranked",
                                                   "xqa-en-corpus", "xqa-en-queries", "xqa-en-qrels", "xqa-es-corpus"]
    assert configs[0]["data_files"] == [{"split": "test", "path": "cd/fr/corpus.parquet"}, {"split": "dev", "path": "cd/fr/corpus.parquet"}]
    assert configs[3]["data_files"][1] == {"split": "dev", "path": "cd/fr/top_ranked/dev.parquet"}
    assert configs[5]["data_files"] == [{"split": "test", "path": "xqa/en/queries/test.parquet"}]
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "cd/fr/top_ranked/test.parquet").to_pylist() == [{"query-id": "q1", "corpus-ids": ["C1", "C2", "C3"]}]
    assert pq.read_table(tmp_path / "cd/fr/qrels/dev.parquet").to_pylist() == [{"query-id": "q2", "corpus-id": "C1", "score": 1}]


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
    # every cell's corpus, queries, qrels + a cd top_ranked per language; the same for the
    # non-English cells' pivot subsets
    languages = len(SAMPLE_LANGUAGES)
    assert len(names) == SAMPLE_CELLS * 3 + languages + SAMPLE_PIVOT_CELLS * 3 + languages - 1 and len(set(names)) == len(names)
    assert {n for n in names if n.endswith("top_ranked") and "-pivot-" not in n} == {f"cd-{l}-top_ranked" for l in meta["language"]}
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
    # what each cell measures: the sample builds no evaluation and every cell is under 100 test queries
    assert ("| cell | measures | test queries | baseline (none: the build did not evaluate itself) | note |\n"
            "|---|---|---:|---:|---|\n"
            "| cd/en | telling a concept named in English from 3 look-alike concepts, among their English entries "
            "(queries: terminology 9) | 9 | - | **fewer than 100 test queries** |\n") in card
    for line in ["| cd/ru | telling a concept named in Russian from 3 look-alike concepts, among their English entries "
                 "(queries: human-translated 9) | 9 | - | **fewer than 100 test queries** |",
                 "| evidence/es | finding the English evidence passage that answers a question asked in Spanish "
                 "(queries: human-translated 4, native 2; gold: 6 source passages, 0 concept entries; English pivots: 6 of 6) "
                 "| 6 | - | **fewer than 100 test queries** |",
                 "| xqa/ja | finding the English answer passage of a question asked in Japanese (queries: human-translated 2, "
                 "native 4; gold: 6 source passages, 0 concept entries; English pivots: 6 of 6) | 6 | - | "
                 "**fewer than 100 test queries** |"]:
        assert f"\n{line}\n" in card, line
    assert "Gargano MA et al. The Human Phenotype Ontology in 2024" in card
    # the sample's memory lacks 21 pivots per language (20 in Japanese); no text fails a gate
    report = json.loads((release / "build_report.json").read_text())
    assert report["gate_rejections"] == {} and "Translation gate rejections:" not in card
    assert report["unrealized"] == {f"{l}: no translation in memory": 20 if l == "ja" else 21 for l in ("es", "fr", "ja", "ru", "zh")}
    assert "\n- es: no translation in memory: 21\n- fr: no translation in memory: 21\n- ja: no translation in memory: 20\n" in card


def test_dropped_section_lists_gate_rejections_and_texts_never_made_apart():
    from tasks.release.card import _dropped

    report = {"dropped_by_reason": {"near-duplicate": 2}, "gate_rejections": {"ja: script": 1, "fr: langid": 3},
              "unrealized": {"fr: no translation in memory": 2, "es: no English pivot": 7}}
    assert _dropped(report) == [
        "## Dropped items", "", "- near-duplicate: 2",
        "", "Translation gate rejections:", "", "- fr: langid: 3", "- ja: script: 1",
        "", "Texts never made, per source item and language (no English pivot to translate, or no translation of it "
            "in the translation memory: nothing reached the gates):", "",
        "- es: no English pivot: 7", "- fr: no translation in memory: 2",
        "", "Every dropped item and its reason is in `build_report.json`.", ""]
    assert _dropped({"dropped_by_reason": {}, "gate_rejections": {}, "unrealized": {}}) == [
        "## Dropped items", "", "", "Every dropped item and its reason is in `build_report.json`.", ""]
