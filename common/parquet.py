"""Deterministic parquet writing, shared by every stage that writes tables."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

PARQUET_OPTS = dict(compression="zstd", use_dictionary=True, write_statistics=False)


def write_parquet(table: pa.Table, path: Path) -> None:
    """Deterministic parquet: no pandas metadata, fixed compression, atomic rename. The
    temporary name is unique per process and thread (two runs sharing a work dir may write
    the same file at once), and it is removed when writing fails (a full disk)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        pq.write_table(table.replace_schema_metadata(None), tmp, **PARQUET_OPTS)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
