"""Scale benchmark: build a release from generated paper-scale inputs and report, per
stage, wall time, CPU time and peak RSS; then the whole build through the CLI (cold,
and a rebuild with nothing changed). Writes docs/performance.md.

    python benchmarks/generate_scale.py --preset paper --out benchmarks/out/scale-paper
    python benchmarks/run_bench.py --config benchmarks/out/scale-paper/config.toml

Stages run here in-process and one after another, without Prefect, so that each one's
numbers are its own; the CLI runs measure the real thing, orchestration included.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from contextlib import contextmanager
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class Meter:
    def __init__(self):
        self.rows: list[dict] = []

    @contextmanager
    def stage(self, name: str, **extra):
        proc = psutil.Process()
        peak = [proc.memory_info().rss]
        stop = threading.Event()

        def sample():
            while not stop.wait(0.05):
                peak[0] = max(peak[0], proc.memory_info().rss)

        t = threading.Thread(target=sample, daemon=True)
        t.start()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        info: dict = dict(extra)
        try:
            yield info
        finally:
            stop.set()
            t.join()
            peak[0] = max(peak[0], proc.memory_info().rss)
            row = {"stage": name, "wall_s": round(time.perf_counter() - wall0, 2), "cpu_s": round(time.process_time() - cpu0, 2),
                   "peak_rss_mb": round(peak[0] / 2**20), **info}
            self.rows.append(row)
            print(json.dumps(row), flush=True)


def run_stages(config: Path, work: Path, meter: Meter) -> dict:
    from schemas.config import load_config
    from flows.inputs import input_files
    from tasks.allocation.stage import allocate_cells
    from tasks.release.stage import assemble_release
    from tasks.grounding.stage import ground_shard
    from tasks.sources.stage import load_sources
    from tasks.translation.stage import realize_shard, split_memory
    from umls.vocabulary import build_vocabulary, load_atoms

    loaded = load_config(config)
    cfg = loaded.config
    inputs = input_files(loaded)
    langs = {l.code: l.model_dump(mode="json") for l in loaded.languages}
    lat = {l.umls_lat: l.code for l in loaded.languages}
    rrf = loaded.resolve(cfg.vocabulary.path)
    mrconso_rows = sum(1 for _ in open(rrf / "MRCONSO.RRF", "rb")) if (rrf / "MRCONSO.RRF").exists() else 0
    for attempt in (1, 2, 3):  # the first read also pays for pyarrow's thread pool and allocator warm-up
        with meter.stage(f"read MRCONSO (atoms only), read {attempt}", rows=mrconso_rows):
            atoms = load_atoms(rrf, lat, cfg.vocabulary.max_srl, [])
        meter.rows[-1]["rows_per_s"] = round(mrconso_rows / max(1e-9, meter.rows[-1]["wall_s"]))
        del atoms
    with meter.stage("load_vocabulary", rows=mrconso_rows):
        vocab = build_vocabulary(rrf, work / "vocab", lat, cfg.vocabulary.max_srl, loaded.registry["en"].preferred_sources)
    with meter.stage("load_sources") as info:
        src = load_sources([{"format": s.format, "path": str(loaded.resolve(s.path)), "options": s.options} for s in cfg.sources],
                           [{"task": b.task, "path": str(loaded.resolve(b.path))} for b in cfg.background],
                           cfg.languages, cfg.build.shard_size, work / "sources")
        info["items"] = src["items"]
    memory = [str(loaded.resolve(m)) for m in cfg.translation.memory]
    with meter.stage("split_memory"):
        mem = split_memory(memory, cfg.languages, str(work / "memory"))
    grounded, realized = [], []
    g = cfg.grounding
    with meter.stage("ground", shards=len(src["shards"]), items=src["items"]):
        for shard, native in zip(src["shards"], src["shard_langs"]):
            needed = sorted(set(native) | {"en"})
            grounded.append(ground_shard(shard, src["corpora"], {"concepts": vocab["concepts"], "atoms_by_lang": vocab["atoms_by_lang"]},
                                         {c: langs[c] for c in needed}, g.key_groups, g.min_score, g.quickumls_threshold,
                                         g.quickumls_window, str(work / "indexes"), str(work / "ground" / Path(shard).name)))
    from tasks.grounding.stage import drop_grounders

    drop_grounders()  # as the flow does once every shard is grounded
    with meter.stage("realize", tasks=len(src["shards"]) * len(cfg.languages)):
        for shard in src["shards"]:
            for target in cfg.languages:
                realized.append(realize_shard(shard, target, langs, [mem[target]], str(work / "realize" / f"{Path(shard).stem}-{target}.parquet"), cfg.langid_backend))
    with meter.stage("allocate (items + confusion sets)"):
        alloc = allocate_cells(src["shards"], grounded, realized, vocab, langs, memory,
                               {"xqa": cfg.tasks.xqa.quota, "evidence": cfg.tasks.evidence.quota, "cd": cfg.tasks.cd.quota},
                               cfg.tasks.cd.distractors, g.key_groups, cfg.dedup.model_dump(), cfg.seed, str(work / "allocate"),
                               langid_backend=cfg.langid_backend)
    with meter.stage("write + audit release") as info:
        result = assemble_release(loaded, inputs, vocab, src, alloc, cfg.version, work / "releases")
        info["queries"] = sum(c["queries"] for c in result["cells"].values())
    return result


def timed_cli(args: list[str], env: dict) -> dict:
    """Whole-process wall time and peak RSS of a CLI run (GNU time)."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M %U %S", *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(args)}\n{out.stderr[-2000:]}")
    wall, rss_kb, user, sys_ = out.stderr.strip().splitlines()[-1].split()
    return {"wall_s": float(wall), "cpu_s": round(float(user) + float(sys_), 1), "peak_rss_mb": round(int(rss_kb) / 1024),
            "summary": out.stdout.splitlines()[0] if out.stdout else ""}


def write_report(path: Path, config: Path, stages: list[dict], cli: dict, command: str) -> None:
    lines = ["# Performance", "",
             f"Measured on this project's machine ({os.cpu_count()} cores, "
             f"{round(psutil.virtual_memory().total / 2**30)} GiB, Python {platform.python_version()}) with:", "",
             "```", command, "```", "",
             f"Inputs: `{config}` (generated by `benchmarks/generate_scale.py`).", "",
             "## Per stage (in-process, sequential, no Prefect)", "",
             "| stage | wall s | CPU s | peak RSS MB | notes |", "|---|---|---|---|---|"]
    for r in stages:
        notes = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("stage", "wall_s", "cpu_s", "peak_rss_mb") and not k.startswith("_"))
        lines.append(f"| {r['stage']} | {r['wall_s']} | {r['cpu_s']} | {r['peak_rss_mb']} | {notes} |")
    lines += ["", "## Whole build through the CLI (Prefect, local task runner)", "",
              "| run | wall s | CPU s | peak RSS MB | share of the cold build |", "|---|---|---|---|---|"]
    for name, r in cli.items():
        lines.append(f"| {name} | {r['wall_s']} | {r['cpu_s']} | {r['peak_rss_mb']} | {r.get('share_of_cold', '')} |")
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "run")
    ap.add_argument("--report", type=Path, default=ROOT / "docs" / "performance-run.md")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--cli-only", action="store_true", help="only the CLI runs (cold, rebuild, add-language, audit)")
    args = ap.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    meter = Meter()
    if not args.cli_only:
        run_stages(args.config.resolve(), args.out / "stages", meter)
    cli: dict = {}
    if not args.skip_cli:
        env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
        base = [str(Path(sys.executable).parent / "mmedbench"), "build", "--config", str(args.config),
                "--work-dir", str(args.out / "cli-work"), "--release-dir", str(args.out / "cli-releases")]
        cli["cold build (empty cache)"] = timed_cli(base, env)
        cli["rebuild, nothing changed"] = timed_cli(base, env)
        full = cli["cold build (empty cache)"]["wall_s"]
        cli["rebuild, nothing changed"]["share_of_cold"] = round(cli["rebuild, nothing changed"]["wall_s"] / full, 3)
        version = tomllib.loads(args.config.read_text(encoding="utf-8"))["version"]
        addition = args.config.with_name("config-add-de.toml")
        if addition.exists():  # written by generate_scale.py: the six languages plus German
            cli["add-language de (same cache)"] = timed_cli(
                [base[0], "add-language", str(args.out / "cli-releases" / version), "--config", str(addition),
                 "--work-dir", str(args.out / "cli-work"), "--release-dir", str(args.out / "cli-releases")], env)
            cli["add-language de (same cache)"]["share_of_cold"] = round(cli["add-language de (same cache)"]["wall_s"] / full, 3)
        cli["audit (no Prefect)"] = timed_cli([base[0], "audit", str(args.out / "cli-releases" / version)], env)
    (args.out / "bench.json").write_text(json.dumps({"stages": meter.rows, "cli": cli}, indent=2))
    write_report(args.report, args.config, meter.rows, cli, f"python benchmarks/run_bench.py --config {args.config}")
    print(f"wrote {args.report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
