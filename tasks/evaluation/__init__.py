"""Evaluation: a release scored by the built-in systems of every family and by any system's TREC runs (`mmedbench evaluate`, and the build's evaluate stage before card and audit)."""
