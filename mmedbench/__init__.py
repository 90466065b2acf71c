"""MMed-Bench-IR builder: builds, versions and audits a multilingual medical retrieval benchmark.

This package is what users touch: the command line (`mmedbench.cli`) and the public Python
API (`mmedbench.mteb.release_tasks`, `mmedbench.evaluate.evaluate_release`,
`mmedbench.audit.audit_release`). The pipeline is `flows/` (Prefect) over `tasks/` (stages);
import those only through this package."""
from common.version import __version__  # noqa: F401
