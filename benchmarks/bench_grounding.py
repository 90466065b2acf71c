"""Grounding throughput: the ground stage (tasks.grounding.stage.ground_shard) over every
shard of a build, with 1 and 2 worker processes, and what it costs.

    python benchmarks/bench_grounding.py --config benchmarks/out/scale-paper/config.toml
    python benchmarks/bench_grounding.py --config configs/sample.toml --workers 1 2 --md /tmp/ground.md
    python benchmarks/bench_grounding.py --config ... --profile /tmp/ground.prof --workers 1

The vocabulary and the source shards are prepared once (in-process, like
benchmarks/run_bench.py) under --out and reused; the QuickUMLS indexes are built once
before any timed run. Then each worker count runs in a fresh Python process (so that its
grounders are built from nothing and its peak memory is its own), with the garbage
collector's schedule the CLI gives a build (common.gcpolicy): grounders built for the
shards' languages, then every shard grounded. Reported per run:

- texts: grounding calls the stage makes (native texts, English pivots, options), and
  how many distinct (language, text) pairs were actually grounded;
- wall and CPU time (user+sys of the process and its worker processes) of building the
  grounders and of grounding; texts/s in total (texts / wall) and per core (texts per
  CPU second);
- peak RSS summed over the process and its workers, and peak PSS (proportional set
  size: pages shared copy-on-write are split between the processes that share them),
  sampled every 0.5 s from /proc/<pid>/smaps_rollup by the driving process, not the
  measured one: reading smaps_rollup walks every page table of the process tree, and
  the kernel charges that to the reader (1.4 of the 36 CPU s of a 2-worker paper run,
  by perf, when the sampler was a thread of the measured process);
- sha256 of every grounded shard: the runs must agree byte for byte;
- with 1 worker (grounding in this process), where the grounding CPU goes: inside
  ``Grounder.ground`` and, within it, in simstring's search (QuickUMLS'
  ``tasks.grounding.simstring_reader.SimstringReader.get``), by ``time.process_time`` around
  those two calls only (cProfile inflates the Python around them three- to fourfold).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def prepare(config: Path, out: Path) -> dict:
    """Vocabulary and source shards, built once per --out (prep.json marks them done)."""
    done = out / "prep.json"
    if done.exists():
        return json.loads(done.read_text())
    from schemas.config import load_config
    from tasks.sources.stage import load_sources
    from umls.configured import build_configured_vocabulary

    loaded = load_config(config)
    cfg = loaded.config
    langs = {l.code: l.model_dump(mode="json") for l in loaded.languages}
    vocab = build_configured_vocabulary(cfg.vocabulary.format, loaded.resolve(cfg.vocabulary.path), out / "vocab",
                                        {l.umls_lat: l.code for l in loaded.languages}, cfg.vocabulary.max_srl,
                                        loaded.registry["en"].preferred_sources, cfg.vocabulary.roots)
    src = load_sources([{"format": s.format, "path": str(loaded.resolve(s.path)), "options": s.options} for s in cfg.sources],
                       [{"task": b.task, "path": str(loaded.resolve(b.path))} for b in cfg.background],
                       cfg.languages, cfg.build.shard_size, out / "sources")
    g = cfg.grounding
    shards = []
    for shard, native in zip(src["shards"], src["shard_langs"]):
        needed = sorted(set(native) | {"en"})  # as flows/build_release.py submits them
        shards.append({"shard": shard, "corpus": src["corpora"], "languages": {c: langs[c] for c in needed},
                       "vocab": {"concepts": vocab["concepts"], "atoms_by_lang": {c: vocab["atoms_by_lang"][c] for c in needed}}})
    prep = {"shards": shards, "items": src["items"], "key_groups": g.key_groups, "min_score": g.min_score,
            "threshold": g.quickumls_threshold, "window": g.quickumls_window, "cache_root": str(out / "indexes")}
    done.write_text(json.dumps(prep, indent=1))
    return prep


class Peak:
    """Peak RSS and PSS summed over a process (`pid`) and its children, sampled on a thread
    of the process that asks (so that the sampling is not counted in the measured one)."""

    def __init__(self, pid: int, every: float = 0.5):
        self.pid = pid
        self.rss = self.pss = 0
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        try:
            me = psutil.Process(self.pid)
            procs = [me, *me.children(recursive=True)]
        except psutil.NoSuchProcess:  # it has exited
            return
        rss = pss = 0
        for p in procs:
            # smaps_rollup: the kernel sums the mappings (psutil's memory_full_info parses every
            # mapping in Python-visible time, which showed up in the measured CPU)
            try:
                with open(f"/proc/{p.pid}/smaps_rollup") as f:
                    fields = dict(line.split(":", 1) for line in f if line[:4] in ("Rss:", "Pss:"))
            except OSError:
                continue
            rss += int(fields["Rss"].split()[0]) * 1024
            pss += int(fields["Pss"].split()[0]) * 1024
        self.rss, self.pss = max(self.rss, rss), max(self.pss, pss)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def __enter__(self):
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.sample()


def cpu_seconds() -> float:
    """user+sys of this process and its waited-for children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextmanager
def timed(row: dict, name: str):
    w0, c0 = time.perf_counter(), cpu_seconds()
    yield
    row[f"{name}_wall_s"] = round(time.perf_counter() - w0, 2)
    row[f"{name}_cpu_s"] = round(cpu_seconds() - c0, 2)


class CpuSplit:
    """process_time spent inside some functions (patched on their classes), for a run that
    grounds in this process: the first entry of a nested call is counted, not its repeats."""

    def __init__(self):
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._undo: list = []

    def watch(self, cls, name: str, label: str) -> None:
        fn = getattr(cls, name)
        self.cpu[label], self.calls[label] = 0.0, 0
        clock = time.process_time

        def timed_call(*a, **k):
            t0 = clock()
            try:
                return fn(*a, **k)
            finally:
                self.cpu[label] += clock() - t0
                self.calls[label] += 1

        setattr(cls, name, timed_call)
        self._undo.append((cls, name, fn))

    def restore(self) -> None:
        for cls, name, fn in reversed(self._undo):
            setattr(cls, name, fn)
        self._undo.clear()


def run_once(prep: dict, out: Path, workers: int, profile: Path | None) -> dict:
    """One timed run in this process: build the grounders, ground every shard."""
    from schemas.parameters import GroundingParameters
    from tasks.grounding import grounders, stage

    os.environ["MMEDBENCH_GROUND_WORKERS"] = str(workers)
    row: dict = {"workers": workers}
    dest = out / f"grounded-w{workers}"
    dest.mkdir(parents=True, exist_ok=True)
    prof = None
    if profile is not None:
        import cProfile

        prof = cProfile.Profile()
    with timed(row, "build"):
        for sh in prep["shards"]:
            grounders.prepare_grounders(sh["vocab"], sh["languages"], prep["threshold"], prep["window"], prep["cache_root"])
    stats = {"texts": 0, "unique": 0}
    split = None
    if workers == 1:  # grounding runs in this process: the patched calls are counted here
        from tasks.grounding.grounder import Grounder
        from tasks.grounding.simstring_reader import SimstringReader

        split = CpuSplit()
        split.watch(Grounder, "ground", "ground_calls")
        split.watch(SimstringReader, "get", "simstring")
    if prof is not None:
        prof.enable()
    with timed(row, "ground"):
        paths = []
        for sh in prep["shards"]:
            params = GroundingParameters.of(sh["languages"], prep["key_groups"], prep["min_score"], prep["threshold"],
                                            prep["window"])
            paths.append(stage.ground_shard(sh["shard"], sh["corpus"], sh["vocab"], params, prep["cache_root"],
                                            str(dest / Path(sh["shard"]).name), stats=stats))
    if prof is not None:
        prof.disable()
        prof.dump_stats(str(profile))
    if split is not None:
        split.restore()
        row.update(ground_calls_cpu_s=round(split.cpu["ground_calls"], 2), simstring_cpu_s=round(split.cpu["simstring"], 2),
                   simstring_searches=split.calls["simstring"])
    row.update(texts=stats["texts"], unique_texts=stats["unique"], items=prep["items"])
    row["texts_per_s"] = round(row["texts"] / row["ground_wall_s"], 1)
    row["texts_per_cpu_s"] = round(row["texts"] / max(1e-9, row["ground_cpu_s"]), 1)
    row["sha256"] = {Path(p).name: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}
    return row


def markdown(name: str, rows: list[dict]) -> str:
    lines = [f"| {name}: workers | texts (distinct) | build grounders wall / CPU s | ground wall / CPU s | texts/s total | "
             "texts/s per core (per CPU s) | peak RSS sum MB | peak PSS MB |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['workers']} | {r['texts']:,} ({r['unique_texts']:,}) | {r['build_wall_s']} / {r['build_cpu_s']} | "
                     f"{r['ground_wall_s']} / {r['ground_cpu_s']} | {r['texts_per_s']:,.0f} | {r['texts_per_cpu_s']:,.0f} | "
                     f"{r['peak_rss_mb']:,} | {r['peak_pss_mb']:,} |")
    for r in rows:
        if "simstring_cpu_s" in r:
            g, ss = r["ground_calls_cpu_s"], r["simstring_cpu_s"]
            lines += ["", f"With {r['workers']} worker: of the grounding's {r['ground_cpu_s']} CPU s, `Grounder.ground` took {g} "
                          f"({r['texts'] / max(g, 1e-9):,.0f} texts per CPU s), and simstring's search {ss} of those "
                          f"({100 * ss / max(g, 1e-9):.0f}%, {r['simstring_searches']:,} searches, "
                          f"{1e6 * ss / max(r['simstring_searches'], 1):,.0f} us each). Were the search free, `ground` would "
                          f"run at {r['texts'] / max(g - ss, 1e-9):,.0f} texts per CPU s."]
    same = len({json.dumps(r["sha256"], sort_keys=True) for r in rows}) == 1
    lines += ["", f"Grounded shards byte-identical across worker counts: {'yes' if same else 'NO'} "
                  f"({len(rows[0]['sha256'])} shards)."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--out", type=Path, help="default: benchmarks/out/ground-<config folder name>")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--md", type=Path, help="write the markdown table here too")
    ap.add_argument("--profile", type=Path, help="cProfile the grounding of the (single) run into this file")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: one run with this worker count, JSON out
    args = ap.parse_args()
    out = (args.out or ROOT / "benchmarks" / "out" / f"ground-{args.config.resolve().parent.name}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    prep = prepare(args.config.resolve(), out)
    if args.one is not None:
        from common.gcpolicy import use_batch_schedule

        use_batch_schedule()  # the collector's schedule of a build (the CLI sets it), not CPython's
        print("RESULT " + json.dumps(run_once(prep, out, args.one, args.profile)), flush=True)
        return 0
    from tasks.grounding import grounders

    for sh in prep["shards"]:  # QuickUMLS indexes: built once, outside the timed runs
        grounders.prepare_grounders(sh["vocab"], sh["languages"], prep["threshold"], prep["window"], prep["cache_root"],
                                indexes_only=True)
    rows = []
    for w in args.workers:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--config", str(args.config), "--out", str(out), "--one", str(w)]
        if args.profile:
            cmd += ["--profile", str(args.profile)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        with Peak(proc.pid) as peak:
            stdout, stderr = proc.communicate()
        line = [l for l in stdout.splitlines() if l.startswith("RESULT ")]
        if proc.returncode != 0 or not line:
            raise SystemExit(f"run with {w} workers failed:\n{stderr[-3000:]}")
        rows.append({**json.loads(line[0][7:]), "peak_rss_mb": round(peak.rss / 2**20), "peak_pss_mb": round(peak.pss / 2**20)})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "sha256"}), flush=True)
    md = (f"Measured on {platform.node() and 'this machine'} ({len(os.sched_getaffinity(0))} cores, "
          f"{round(psutil.virtual_memory().total / 2**30)} GiB, Python {platform.python_version()}); "
          f"`python benchmarks/bench_grounding.py --config {args.config}`\n\n" + markdown(args.config.parent.name, rows))
    print(md)
    if args.md:
        args.md.write_text(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
