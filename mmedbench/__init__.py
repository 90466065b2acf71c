"""MMed-Bench-IR builder: builds, versions and audits a multilingual medical retrieval benchmark.

This package is the command line; the pipeline is `flows/` (Prefect) over `tasks/` (stages)."""
from common.version import __version__  # noqa: F401
