"""Entry points a grounding process of its own calls (flows/prefect_tasks.py).

Kept apart from tasks.grounding.stage so that the build's process can name them (a spawned
child imports a function by its module) without importing spaCy, QuickUMLS and nltk itself.
"""
from __future__ import annotations


def ground_shard(*args) -> str:
    from tasks.grounding.stage import ground_shard as run

    return run(*args)
