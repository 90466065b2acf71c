"""Shared helpers below every stage: input errors, deterministic JSON/parquet I/O, text utilities, code version."""
