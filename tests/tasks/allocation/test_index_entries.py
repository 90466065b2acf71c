"""The index_entries stage writes the lexicon allocation would otherwise build itself, byte
for byte the same on every run, and the build's allocation reads it from there."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from tasks.allocation.concept_entries import entry_parts
from tasks.allocation.lexicon import Lexicon
from tasks.allocation.stage import _NamesOf, english_stop_words, index_entries, read_atoms


def _one_where(folder: Path, keep) -> Path:
    found = sorted(p for p in folder.iterdir() if p.is_dir() and keep(p))
    assert len(found) == 1, found
    return found[0]


def test_index_entries_writes_the_lexicon_allocation_would_build(sample_build, tmp_path):
    from schemas.config import load_config
    from tests.conftest import SAMPLE_CONFIG

    work = sample_build["base"] / "work"
    # the sample build's vocabulary (other tests may have added one with another language)
    languages = sorted(load_config(SAMPLE_CONFIG).config.languages)
    vocab_dir = _one_where(work / "load_vocabulary",
                           lambda d: sorted(p.stem.split("-", 1)[1] for p in d.glob("atoms-*.parquet")) == languages)
    vocab = {"concepts": str(vocab_dir / "concepts.parquet"), "atoms_by_lang": {"en": str(vocab_dir / "atoms-en.parquet")}}
    paths = index_entries(vocab, str(tmp_path))
    assert sorted(Path(p).name for p in paths.values()) == ["concepts.parquet", "entry_words.parquet", "stop_words.parquet",
                                                           "words.parquet"]

    entries = entry_parts(pq.read_table(vocab["concepts"]), read_atoms(vocab, "en", ["cui", "str"]))
    owner, texts = entries.entry_texts()
    built = Lexicon.from_texts(entries.cuis, owner, texts, _NamesOf(entries), english_stop_words())
    loaded = Lexicon.load(paths, _NamesOf(entries))
    assert loaded.cuis == built.cuis and len(built.cuis) == pq.ParquetFile(paths["concepts"]).metadata.num_rows > 100
    assert np.array_equal(loaded._ent_c, built._ent_c) and np.array_equal(loaded._ent_w, built._ent_w)
    assert loaded.idf == built.idf and loaded.stopwords == built.stopwords and "the" in loaded.stopwords
    for cui in built.cuis:
        assert list(loaded.entry_words(cui)) == list(built.entry_words(cui))
        assert loaded.name_words(cui) == built.name_words(cui)

    # the sample build ran the same stage and handed its files to allocation: the same bytes
    stage = _one_where(work / "index_entries", lambda d: (d / "_complete.json").exists())
    complete = json.loads((stage / "_complete.json").read_text())
    assert sorted(complete["files"]) == [f"lexicon/{Path(p).name}" for p in sorted(paths.values())]
    for p in paths.values():
        assert (stage / "lexicon" / Path(p).name).read_bytes() == Path(p).read_bytes()
