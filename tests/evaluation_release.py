"""A tiny release folder (en + ja, three tasks, one empty cell) whose BM25 scores are
worked out by hand in tests/tasks/evaluation/test_evaluation.py, and a tiny random-weight
sentence-transformers model built on the spot (nothing downloads)."""
from __future__ import annotations

import json
from pathlib import Path

from schemas.config import load_registry
from tests.conftest import ROOT

BUILD_ID = "ab" * 32
HEADER = "query-id\tcorpus-id\tscore\n"

XQA_CORPUS = [
    {"_id": "p1", "title": "Femoral hernia", "text": "A femoral hernia protrudes below the inguinal ligament."},
    {"_id": "p2", "title": "Appendicitis", "text": "Acute appendicitis causes right lower quadrant pain."},
    {"_id": "p3", "title": "大腿ヘルニア", "text": "大腿ヘルニアは女性に多い。"},
    {"_id": "p4", "title": "Asthma", "text": "Asthma is a chronic inflammation of the airways."},
]
CD_CORPUS = [
    {"_id": "C0000001", "title": "Femoral hernia", "text": "A hernia through the femoral canal."},
    {"_id": "C0000002", "title": "Inguinal hernia", "text": "A hernia through the inguinal canal."},
    {"_id": "C0000003", "title": "Appendicitis", "text": "Inflammation of the appendix."},
    {"_id": "C0000004", "title": "Asthma", "text": "Chronic airway inflammation."},
]
EVIDENCE_CORPUS = [
    {"_id": "e1", "title": "", "text": "Metformin lowers blood glucose."},
    {"_id": "e2", "title": "", "text": "Statins lower cholesterol."},
]


def _q(qid: str, text: str, lang: str, cui: str, split: str = "test") -> dict:
    return {"_id": qid, "text": text, "lang": lang, "cuis": [cui], "pivot_text": None, "provenance": "native", "split": split}


# cell -> (corpus, [(query, relevant doc ids)])
CELLS = {
    "xqa/en": (XQA_CORPUS, [(_q("xqa-en-1", "femoral hernia in women", "en", "C0000001"), ["p1"]),
                            (_q("xqa-en-2", "right lower quadrant pain", "en", "C0000003"), ["p2"]),
                            (_q("xqa-en-3", "kidney stones", "en", "C0000005"), ["p4"]),
                            (_q("xqa-en-4", "asthma airways", "en", "C0000004", "dev"), ["p4"])]),
    "xqa/ja": (XQA_CORPUS, [(_q("xqa-ja-1", "大腿ヘルニアの症状", "ja", "C0000006"), ["p3"]),
                            (_q("xqa-ja-2", "喘息", "ja", "C0000007"), ["p4"])]),
    "cd/en": (CD_CORPUS, [(_q("cd-en-C0000001", "femoral hernia", "en", "C0000001"), ["C0000001"]),
                          (_q("cd-en-C0000004", "asthma", "en", "C0000004"), ["C0000004"])]),
    "cd/ja": (CD_CORPUS, [(_q("cd-ja-C0000002", "鼡径ヘルニア", "ja", "C0000002"), ["C0000002"])]),
    "evidence/en": (EVIDENCE_CORPUS, [(_q("evidence-en-1", "metformin glucose", "en", "C0000008"), ["e1"])]),
    "evidence/ja": (EVIDENCE_CORPUS, []),
}
# pivot controls: the same items asked in English (same ids, so the cell's qrels apply)
PIVOTS = {
    # "femoral hernia" finds the English p1, not the Japanese p3 that answers xqa-ja-1;
    # "asthma airways" finds p4: per query (pivot - native) -1 and +1, gap 0
    "xqa/ja": {"xqa-ja-1": "femoral hernia symptoms", "xqa-ja-2": "asthma airways"},
    # the English name finds its own entry first: native 0, pivot 1, gap +1
    "cd/ja": {"cd-ja-C0000002": "inguinal hernia"},
}

SETS = [
    {"set_id": "cd-en-C0000001", "lang": "en", "tier": "hard", "target_cui": "C0000001", "distractor_cuis": ["C0000002", "C0000003"]},
    {"set_id": "cd-en-C0000004", "lang": "en", "tier": "easy", "target_cui": "C0000004", "distractor_cuis": ["C0000003"]},
    {"set_id": "cd-ja-C0000002", "lang": "ja", "tier": "medium", "target_cui": "C0000002", "distractor_cuis": ["C0000001", "C0000003"]},
]


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def make_tiny_release(root: Path) -> Path:
    registry = load_registry(ROOT / "configs" / "languages.toml")
    for cell, (corpus, items) in CELLS.items():
        d = root / cell
        _jsonl(d / "corpus.jsonl", corpus)
        _jsonl(d / "queries.jsonl", [q for q, _rel in items])
        for split in ("test", "dev"):
            rows = [f"{q['_id']}\t{doc}\t1\n" for q, rel in items if q["split"] == split for doc in rel]
            (d / "qrels").mkdir(parents=True, exist_ok=True)
            (d / "qrels" / f"{split}.tsv").write_text(HEADER + "".join(rows), encoding="utf-8")
    for cell, texts in PIVOTS.items():
        queries = {q["_id"]: q for q, _rel in CELLS[cell][1]}
        _jsonl(root / cell / "pivot-queries.jsonl",
               [queries[qid] | {"text": text, "lang": "en", "pivot_text": None, "provenance": "human-translated"}
                for qid, text in sorted(texts.items())])
    _jsonl(root / "cd" / "confusion_sets.jsonl", SETS)
    manifest = {"version": "0.0.1", "build_id": BUILD_ID, "config": {"languages": ["en", "ja"]},
                "languages": {c: registry[c].model_dump(mode="json") for c in ("en", "ja")},
                "cells": {c: {"queries": len(items), "documents": len(corpus), "qrels": len(items)}
                          for c, (corpus, items) in CELLS.items()}}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return reseal(root)


def reseal(root: Path) -> Path:
    """List every file with its sha256 in the manifest, as a build does (evaluate checks them)."""
    import hashlib

    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"] = {p.relative_to(root).as_posix(): {"sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                                                          "bytes": p.stat().st_size}
                         for p in sorted(root.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return root


TINY_VOCAB = sorted(set("femoral hernia appendicitis asthma pain right lower quadrant metformin glucose statins "
                        "cholesterol women kidney stones airways inguinal acute the a of".split()))


def make_tiny_model(folder: Path) -> Path:
    """A 2-layer, 32-dimensional BERT with random weights (seeded) and mean pooling, saved
    as a sentence-transformers folder."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + TINY_VOCAB + list(letters) + ["##" + c for c in letters]
             + list("大腿ヘルニア喘息鼡径の症状"))
    bert = folder / "bert"
    bert.mkdir(parents=True)
    (bert / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(bert / "vocab.txt"), do_lower_case=True).save_pretrained(str(bert))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(str(bert))
    transformer = models.Transformer(str(bert), max_seq_length=64)
    pooling = models.Pooling(transformer.get_embedding_dimension(), "mean")
    out = folder / "tiny-st"
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(out))
    return out
