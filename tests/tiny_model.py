"""A tiny random-weight SentenceTransformer for tests: a 2-layer BERT (hidden size 32) with a
small WordPiece vocabulary written here, mean pooling. Nothing is downloaded; the weights are
seeded, so its embeddings (and any score computed with it) are the same on every run.

    path = tiny_model(tmp_path)           # a folder SentenceTransformer(path) loads
"""
from __future__ import annotations

from pathlib import Path

# the WordPiece vocabulary: BERT's special tokens, Latin letters and digits, a few medical
# words, and a few CJK / Cyrillic characters so that every sample language has known tokens
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "of", "and", "is", "what", "which", "heart", "blood", "pressure", "hypertension", "diabetes",
         "disease", "patient", "treatment", "lung", "asthma", "syndrome", "failure", "acute", "chronic"]
CHARS = list("abcdefghijklmnopqrstuvwxyz0123456789.,?-()") + list("心血压病肺高糖尿患者") + list("абвгдеиклмнопрст")


def tiny_model(folder: Path, seed: int = 0) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = Path(folder)
    hf = folder / "bert"
    hf.mkdir(parents=True, exist_ok=True)
    vocab = SPECIAL + WORDS + CHARS + ["##" + c for c in CHARS]
    (hf / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(hf / "vocab.txt"), do_lower_case=True).save_pretrained(hf)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(hf)
    word = models.Transformer(str(hf), max_seq_length=128)
    pooling = models.Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    out = folder / "tiny-sentence-transformer"
    SentenceTransformer(modules=[word, pooling], device="cpu").save(str(out))
    return out
