"""Synthetic, paper-scale inputs for an MMed-Bench-IR build: deterministic, streaming.

    python -m benchmarks.scale --preset paper --out DIR --seed 0     (from the project root)

Writes, under DIR (default benchmarks/out/scale-<preset>/):

  umls/MRCONSO.RRF MRSTY.RRF MRREL.RRF MRDEF.RRF MRSAB.RRF MRFILES.RRF   vocabulary.py
  sources/xqa.jsonl, sources/evidence.jsonl, sources/background.jsonl      sources.py
  tm/memory.jsonl                                                          sources.py
  tm/memory-de.jsonl, config-add-de.toml   (the seventh language)          addition.py
  config.toml, languages.toml                                              config_file.py
  generation.json   the counts (no clock time: two runs with the same seed give identical bytes)

The words, phrases, templates and source mix are data (data/*.tsv, data/*.toml, read by
data.py); names are composed from them in lexicon.py and heads.py; presets.py says how big.
Importing the package reads no data; importing benchmarks.scale.generate (generate) does.
"""
