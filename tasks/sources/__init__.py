"""Stage 1, sources: every configured source (adapters/) read into sharded item tables and per-task corpora."""
