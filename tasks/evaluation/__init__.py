"""Stage 7, evaluation: retrieval baselines scored on a release (placeholder room; see the evaluate branch)."""
