"""A release as MTEB tasks: the public entry point for users.

    import mteb
    from mmedbench.mteb import release_tasks
    results = mteb.evaluate(model, release_tasks("releases/0.1.0"), cache=None)

One MTEB task per benchmark task, one evaluation subset per filled cell (and per pivot
control); cd is scored as reranking of each query's confusion set.
"""
from __future__ import annotations

from tasks.loaders.mteb_tasks import release_tasks, task_metadata

__all__ = ["release_tasks", "task_metadata"]
