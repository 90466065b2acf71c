"""Russian grounding on held-out inflected mentions: which morphology, by measurement.

    .venv/bin/python benchmarks/ru_grounding_eval.py [--config configs/shared-real.toml] [--data FILE]

The mentions are `benchmarks/data/ru_grounding_heldout.jsonl`: short clinical sentences written
for this project (Apache-2.0, none taken from ../shared), one inflected disease mention each
with its span and gold CUI, every gold CUI a concept of the open vocabulary the config builds.
A mention counts as grounded when `mmedbench ground` returns a match overlapping its span with
the gold CUI.

Each morphology the registry can name for Russian (`none`, `snowball`, `pymorphy3`) is run by
the CLI as a user runs it, `mmedbench ground --lang ru --config ...`, on a copy of the config
whose registry differs from the project's only in ru's `morphology`; then the config as it
stands. Prints one line per run and the share grounded.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "ru_grounding_heldout.jsonl"
MORPHOLOGIES = ("none", "snowball", "pymorphy3")


def read_items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def ground(config: Path, texts: list[str]) -> list[list[dict]]:
    """`mmedbench ground --lang ru` on the texts, one JSON line of mentions each."""
    exe = Path(sys.executable).with_name("mmedbench")
    out = subprocess.run([str(exe), "ground", "--lang", "ru", "--config", str(config)], input="\n".join(texts) + "\n",
                         capture_output=True, text=True, check=True, cwd=ROOT)
    lines = out.stdout.splitlines()
    if len(lines) != len(texts):
        raise SystemExit(f"error: expected {len(texts)} output lines, got {len(lines)}")
    return [json.loads(line)["mentions"] for line in lines]


def score(items: list[dict], found: list[list[dict]]) -> tuple[int, int]:
    hit = total = 0
    for item, mentions in zip(items, found):
        for gold in item["mentions"]:
            total += 1
            hit += any(m["cui"] == gold["cui"] and m["start"] < gold["end"] and gold["start"] < m["end"] for m in mentions)
    return hit, total


def config_with_morphology(config: Path, morphology: str, tmp: Path) -> Path:
    """A copy of the config beside it (its relative paths unchanged) whose registry sets ru's
    morphology; the copy's registry is written into `tmp` and named by absolute path."""
    registry_line = re.compile(r'^registry\s*=.*$', re.M)
    text = config.read_text(encoding="utf-8")
    base_registry = config.parent / (re.search(r'^registry\s*=\s*"([^"]+)"', text, re.M) or [None, "languages.toml"])[1]
    reg = base_registry.read_text(encoding="utf-8")
    section = re.search(r"(?ms)^\[languages\.ru\]\n(.*?)(?=^\[|\Z)", reg)
    body = re.sub(r"(?m)^morphology\s*=.*\n", "", section.group(1))
    reg = reg[:section.start(1)] + f'morphology = "{morphology}"\n' + body + reg[section.end(1):]
    (tmp / "languages.toml").write_text(reg, encoding="utf-8")
    copy = config.with_name(f".ru-eval-{morphology}-{config.name}")
    copy.write_text(registry_line.sub(f'registry = "{(tmp / "languages.toml").as_posix()}"', text), encoding="utf-8")
    return copy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "shared-real.toml")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    items = read_items(args.data)
    texts = [i["text"] for i in items]
    for morphology in MORPHOLOGIES:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = config_with_morphology(args.config.resolve(), morphology, Path(tmp))
            try:
                hit, total = score(items, ground(cfg, texts))
            finally:
                cfg.unlink()
        print(f"morphology={morphology:10s} grounded to the gold CUI: {hit}/{total} = {hit / total:.1%}")
    hit, total = score(items, ground(args.config.resolve(), texts))
    print(f"as configured ({args.config.name}):    {hit}/{total} = {hit / total:.1%}")


if __name__ == "__main__":
    main()
