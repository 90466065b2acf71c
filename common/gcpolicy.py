"""The cyclic garbage collector's schedule for a build, an audit or an evaluation.

CPython starts a collection every 700 net allocations of container objects and a full
one (every live object traversed) whenever the long-lived objects grew by a quarter since
the last. A build holds millions of small, long-lived, acyclic objects (parsed rows,
concept records, shingle sets, index buckets), so most of its full collections traverse
them only to free nothing: at paper scale they were 30% of `mmedbench audit`'s time
(docs/performance.md). Reference counting frees all of these objects; the collector is
only needed for cycles, which this code makes few of.

BATCH_THRESHOLDS keeps young collections (cheap: they traverse only new objects) but makes
them 70x rarer, and a full collection then needs 5,000 young ones (500 million net
allocations): cyclic garbage still goes, later. Every process that runs stages takes it:
the CLI, and the processes it spawns (common.workers).
"""
from __future__ import annotations

import gc

DEFAULT_THRESHOLDS = (700, 10, 10)  # CPython's
BATCH_THRESHOLDS = (50_000, 50, 100)


def use_batch_schedule() -> None:
    gc.set_threshold(*BATCH_THRESHOLDS)
