"""Compare the language-ID backends of tasks.translation.langid on native medical exam questions.

    /tmp/venv1/bin/python benchmarks/langid_eval.py [--data ../shared/data/qa] [--limit N] [--no-write]

Texts (read from ../shared/data/qa; a missing corpus is skipped with a message):
    ja  IgakuQA questions (problem_text)          en  IgakuQA's English versions (problem_text_en)
    fr  FrenchMedMCQA questions (train/dev/test)   ru  RuMedDaNet questions (train/dev/test)
    zh  CNMLEQA-3k questions                       es  no native corpus in ../shared/data/qa
Exact duplicates within a language are counted once.

For every backend and language it reports, over the full questions and over short texts
(the first 5 words; for ja/zh, which have no spaces, the first 10 characters):
    acc        the answer is one of the language's registry detector_codes
    then the gate's script rule: an answer whose script (gates.DETECTED_SCRIPTS) is not
    the text's majority script is discarded and counts as no decision:
    undecided  no answer, or the answer discarded by the rule
    wrong      still wrong after the rule: what the rule cannot save
    dec. acc   accuracy over the decided texts, correct / (correct + wrong)
    gate rej   how many the actual tasks.translation.gates.langid_gate rejects with this backend
               (length thresholds, script rule and the all-kanji exception included):
               on native text every rejection is a false rejection
    texts/s    warm single-thread throughput (models loaded; cold start reported apart),
               over the first 300 texts, each chunk of 20 timed 3 times, fastest kept

Only codes, counts and rates are printed or written, never question text. The tables go
to docs/langid.md between the generated-section markers; the rest of the file is kept.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from schemas.config import load_registry  # noqa: E402
from common.text import script_profile  # noqa: E402
from tasks.translation import gates, langid  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "qa"
DOC = ROOT / "docs" / "langid.md"
BEGIN, END = "<!-- langid-eval:begin -->", "<!-- langid-eval:end -->"
LANGS = ("en", "zh", "ja", "fr", "ru", "es")
CJK = ("zh", "ja")
SHORT_WORDS, SHORT_CJK_CHARS = 5, 10
TIMING_SAMPLE, TIMING_CHUNK, TIMING_RUNS = 300, 20, 3
COMMAND = "/tmp/venv1/bin/python benchmarks/langid_eval.py"


# --- corpora --------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _json(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def _igakuqa(data: Path, english: bool) -> list[str]:
    files = sorted((data / "igakuqa" / "data").glob("*/*.jsonl"))
    if english:
        return [r["problem_text_en"] for f in files if f.stem.endswith("_translate") for r in _jsonl(f)]
    return [r["problem_text"] for f in files if not f.stem.endswith(("_translate", "_metadata")) for r in _jsonl(f)]


def _frenchmedmcqa(data: Path) -> list[str]:
    files = sorted((data / "frenchmedmcqa").glob("*.json"))
    return [r["question"] for f in files for r in _json(f)]


def _rumeddanet(data: Path) -> list[str]:
    files = sorted((data / "rumedbench" / "RuMedDaNet").glob("*.jsonl"))
    return [r["question"] for f in files for r in _jsonl(f)]


def _cnmleqa(data: Path) -> list[str]:
    path = data / "cnmleqa" / "CNMLEQA-3k.json"
    return [r["question"] for r in _json(path)] if path.exists() else []


SOURCES = {
    "en": ("IgakuQA *_translate.jsonl problem_text_en", lambda d: _igakuqa(d, english=True)),
    "zh": ("CNMLEQA-3k question", _cnmleqa),
    "ja": ("IgakuQA problem_text", lambda d: _igakuqa(d, english=False)),
    "fr": ("FrenchMedMCQA train/dev/test question", _frenchmedmcqa),
    "ru": ("RuMedDaNet train/dev/test question", _rumeddanet),
}


def load_texts(data: Path, limit: int | None = None) -> tuple[dict[str, list[str]], list[str]]:
    """Native questions per language (deduplicated, order kept) and messages for what is missing."""
    texts, notes = {}, []
    for lang in LANGS:
        if lang not in SOURCES:
            notes.append(f"{lang}: no native questions in {data.name}/ (not measured)")
            continue
        what, read = SOURCES[lang]
        try:
            got = [t.strip() for t in read(data) if isinstance(t, str) and t.strip()]
        except (OSError, ValueError, KeyError) as exc:
            notes.append(f"{lang}: {what} unreadable ({type(exc).__name__}: {exc}); skipped")
            continue
        got = list(dict.fromkeys(got))
        if not got:
            notes.append(f"{lang}: {what} not found under {data}; skipped")
            continue
        texts[lang] = got[:limit] if limit else got
    return texts, notes


def shorten(text: str, lang: str) -> str:
    if lang in CJK:
        return "".join(text.split())[:SHORT_CJK_CHARS]
    return " ".join(text.split()[:SHORT_WORDS])


# --- measurement ----------------------------------------------------------------------------


@dataclass
class Cell:
    n: int = 0
    timed: int = 0
    correct: int = 0
    undecided: int = 0
    wrong_script: int = 0
    gate_rejects: int = 0
    seconds: float = 0.0
    confusions: Counter = field(default_factory=Counter)

    def add(self, other: "Cell") -> None:
        for name in ("n", "timed", "correct", "undecided", "wrong_script", "gate_rejects", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.confusions.update(other.confusions)


def survives_script_rule(text: str, code: str) -> bool:
    """The gate's rule: keep an answer only if its script holds at least half the letters."""
    prof = script_profile(text)
    implied = gates.DETECTED_SCRIPTS.get(code, {"Latin"})
    return sum(prof.get(s, 0) for s in implied) * 2 >= sum(prof.values())


def measure(backend: str, lang: str, texts: list[str], registry) -> Cell:
    accept = set(registry[lang].detector_codes)
    cell = Cell(n=len(texts))
    answers = [langid.detect(t, backend) for t in texts]
    sample = texts[:TIMING_SAMPLE]
    for i in range(0, len(sample), TIMING_CHUNK):  # best of runs per chunk: robust to load spikes
        chunk, runs = sample[i : i + TIMING_CHUNK], []
        for _ in range(TIMING_RUNS):
            start = time.perf_counter()
            for t in chunk:
                langid.detect(t, backend)
            runs.append(time.perf_counter() - start)
        cell.seconds += min(runs)
    cell.timed = len(sample)
    for text, got in zip(texts, answers):
        if got in accept:
            cell.correct += 1
            continue
        cell.confusions[got or "none"] += 1
        if got is not None and survives_script_rule(text, got):
            cell.wrong_script += 1
        else:
            cell.undecided += 1
    # The real gate, with this backend's answers: replays the answers computed above.
    cached = dict(zip(texts, answers))
    original = gates.detect_language
    def replay(t: str, expected: str | None = None, *_, **__) -> str | None:  # either gate signature
        return cached[t] if t in cached else langid.detect(t, backend, languages=(expected,) if expected else ())

    gates.detect_language = replay
    try:
        cell.gate_rejects = sum(1 for t in texts if gates.langid_gate(t, registry[lang]))
    finally:
        gates.detect_language = original
    return cell


def cold_start(backend: str) -> tuple[float, float] | None:
    """Seconds for a fresh interpreter to import, build and answer once per benchmark script,
    and that interpreter's peak memory (MiB) afterwards."""
    probe = (
        "import resource, sys, time; sys.path.insert(0, sys.argv[1]); t = time.perf_counter()\n"
        "from tasks.translation.langid import detect\n"
        "for s in ('the patient', 'le patient', 'пациент', '患者の症状', '患者症状'): detect(s, sys.argv[2])\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    try:
        out = subprocess.run([sys.executable, "-c", probe, str(ROOT), backend], capture_output=True, text=True, check=True, timeout=300)
        seconds, mib = map(float, out.stdout.split())
        return seconds, mib
    except (subprocess.SubprocessError, ValueError):
        return None


# --- report ---------------------------------------------------------------------------------


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f}" if den else "-"


def table(results: dict[tuple[str, str], Cell], backends: list[str], langs: list[str]) -> list[str]:
    rows = [
        "| backend | lang | n | acc % | undecided % | wrong % | dec. acc % | gate rej | texts/s | top wrong answers |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for b in backends:
        total = Cell()
        for lang in langs + ["all"]:
            if lang == "all":
                cell = total
            else:
                cell = results[(b, lang)]
                total.add(cell)
            wrong = ", ".join(f"{c} {k}" for c, k in cell.confusions.most_common(3))
            rate = f"{cell.timed / cell.seconds:,.0f}" if cell.seconds else "-"
            name = f"**{lang}**" if lang == "all" else lang
            rows.append(
                f"| {b} | {name} | {cell.n} | {_pct(cell.correct, cell.n)} | {_pct(cell.undecided, cell.n)} "
                f"| {_pct(cell.wrong_script, cell.n)} | {_pct(cell.correct, cell.correct + cell.wrong_script)} "
                f"| {cell.gate_rejects} | {rate} | {wrong} |"
            )
    return rows


def report(texts, notes, full, short, backends, cold) -> str:
    langs = list(texts)
    lines = [
        f"Command: `{COMMAND}` (Python {sys.version.split()[0]}, "
        f"langdetect {_version('langdetect')}, lingua-language-detector {_version('lingua-language-detector')}).",
        "",
        "Texts: " + ", ".join(f"{lang} {len(texts[lang])} ({SOURCES[lang][0]})" for lang in langs) + ".",
    ]
    lines += [f"- {n}" for n in notes]
    lines += ["", "Cold start (fresh interpreter: import, build, one answer per script; peak memory): "
              + ", ".join(f"{b} {cold[b][0]:.1f} s, {cold[b][1]:,.0f} MiB" if cold.get(b) else f"{b} -" for b in backends) + ".", ""]
    lines += ["### Full questions", ""] + table(full, backends, langs)
    lines += ["", f"### Short texts (first {SHORT_WORDS} words; ja/zh first {SHORT_CJK_CHARS} characters)", ""]
    lines += table(short, backends, langs)
    lines += [
        "",
        "acc: answer in the language's registry `detector_codes`. The gate's script rule then "
        "discards answers whose script is not the text's majority script (no decision, never a "
        "rejection): undecided = no answer or discarded; wrong = still wrong after the rule; "
        "dec. acc = correct / (correct + wrong), accuracy over the texts the rule lets decide. "
        "gate rej: how many of these native texts `tasks.translation.gates.langid_gate` rejects with this "
        "backend (false rejections; short texts fall under LANGID_MIN_WORDS/LANGID_MIN_CHARS "
        f"and are not language-checked). texts/s: warm, one thread, over the first {TIMING_SAMPLE} texts, "
        f"each chunk of {TIMING_CHUNK} timed {TIMING_RUNS} times and its fastest run kept. Top wrong answers (before the rule): the "
        "backend's code and count (`none`: no answer).",
    ]
    return "\n".join(lines)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


DOC_TEMPLATE = f"""# Language identification: langdetect vs lingua

The langid gate (`tasks/translation/gates.py`) asks a detector which language a text is in; the
backends live in `tasks/translation/langid.py`. This page compares them on the native questions in
`../shared/data/qa`. Reproduce with

```
{COMMAND}
```

## Recommendation

(to be written from the numbers below)

## Measurements

{BEGIN}
{END}
"""


def write_doc(body: str, path: Path = DOC) -> None:
    doc = path.read_text(encoding="utf-8") if path.exists() else DOC_TEMPLATE
    if BEGIN not in doc or END not in doc:
        doc = doc.rstrip("\n") + f"\n\n{BEGIN}\n{END}\n"
    head, rest = doc.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{head}{BEGIN}\n{body}\n{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the qa directory of ../shared/data")
    ap.add_argument("--limit", type=int, default=None, help="at most N texts per language (quick runs)")
    ap.add_argument("--no-write", action="store_true", help=f"print only; leave {DOC.relative_to(ROOT)} alone")
    args = ap.parse_args(argv)

    if not args.data.exists():
        print(f"langid-eval: {args.data} not present; nothing to measure (the corpora live in ../shared/data/qa)")
        return 0
    texts, notes = load_texts(args.data, args.limit)
    for n in notes:
        print(f"langid-eval: {n}")
    if not texts:
        print("langid-eval: no corpus found; nothing to measure")
        return 0
    registry = load_registry(ROOT / "configs" / "languages.toml")
    backends = langid.available_backends()
    missing = sorted(set(langid.BACKENDS) - set(backends))
    if missing:
        print(f"langid-eval: backends not installed, skipped: {', '.join(missing)}")

    cold = {b: cold_start(b) for b in backends}
    short_texts = {lang: [shorten(t, lang) for t in ts] for lang, ts in texts.items()}
    full, short = {}, {}
    for b in backends:
        for lang, ts in texts.items():  # warm up: load every model this language needs
            for t in ts[:20]:
                langid.detect(t, b)
        for lang in texts:
            full[(b, lang)] = measure(b, lang, texts[lang], registry)
            short[(b, lang)] = measure(b, lang, short_texts[lang], registry)
        print(f"langid-eval: {b} done", file=sys.stderr)

    body = report(texts, notes, full, short, backends, cold)
    print(body)
    if not args.no_write and not args.limit:
        write_doc(body)
        print(f"\nlangid-eval: wrote {DOC.relative_to(ROOT)}")
    elif not args.no_write:
        print("\nlangid-eval: --limit run; docs/langid.md left alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
