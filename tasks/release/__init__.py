"""Stage 5, release: the BEIR cells, confusion sets, card and manifest, written to a temporary folder, audited, published."""
