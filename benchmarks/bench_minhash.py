"""MinHash signature throughput: datasketch (update / bulk), rensa, and tasks.dedup.minhash.

One run over the same deterministically generated short medical-style questions
(10-30 words, no downloads). Every implementation is timed with time.perf_counter over
the whole path *text -> signature*, so each pays for shingling: the same
common.text.char_shingles (character 5-grams) for all, except mmedbench_texts, whose
whole point is shingling differently (to the same sets). Prints exactly one line per
implementation, then the ratio of ours to rensa's (both from the same shingle sets):

    <name> texts_per_s=<N> cpu_texts_per_s=<N>
    mmedbench_vs_rensa wall=<x> cpu=<x>

Usage (what `make bench-minhash` runs):

    python benchmarks/bench_minhash.py [--texts 20000] [--seed 7] [--num-perm 128] [--md docs/minhash.md]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from common.text import char_shingles  # noqa: E402

SHINGLE_N = 5
MINHASH_SEED = 1

# --- deterministic question generator (word lists written here, no downloads) ---------

_CONDITIONS = [
    "hypertension", "type 2 diabetes", "type 1 diabetes", "chronic kidney disease", "heart failure",
    "atrial fibrillation", "asthma", "chronic obstructive pulmonary disease", "pneumonia", "sepsis",
    "iron deficiency anaemia", "hypothyroidism", "hyperthyroidism", "rheumatoid arthritis", "gout",
    "osteoporosis", "migraine", "epilepsy", "parkinson disease", "multiple sclerosis", "stroke",
    "deep vein thrombosis", "pulmonary embolism", "myocardial infarction", "stable angina",
    "tuberculosis", "malaria", "hiv infection", "hepatitis b", "hepatitis c", "cirrhosis",
    "acute pancreatitis", "peptic ulcer disease", "crohn disease", "ulcerative colitis",
    "coeliac disease", "urinary tract infection", "acute kidney injury", "nephrotic syndrome",
    "preeclampsia", "gestational diabetes", "major depressive disorder", "bipolar disorder",
    "schizophrenia", "generalised anxiety disorder", "psoriasis", "atopic dermatitis",
    "melanoma", "breast cancer", "prostate cancer", "colorectal cancer", "lung cancer",
    "lymphoma", "acute myeloid leukaemia", "sickle cell disease", "thalassaemia",
    "systemic lupus erythematosus", "giant cell arteritis", "bacterial meningitis", "cellulitis",
]
_DRUGS = [
    "metformin", "insulin glargine", "lisinopril", "ramipril", "losartan", "amlodipine",
    "bisoprolol", "furosemide", "spironolactone", "atorvastatin", "warfarin", "apixaban",
    "aspirin", "clopidogrel", "levothyroxine", "methotrexate", "prednisolone", "salbutamol",
    "tiotropium", "amoxicillin", "ceftriaxone", "vancomycin", "rifampicin", "isoniazid",
    "omeprazole", "lithium", "sertraline", "valproate", "levetiracetam", "allopurinol",
    "alendronate", "heparin", "morphine", "paracetamol", "ibuprofen", "dexamethasone",
]
_FINDINGS = [
    "fever", "chest pain", "shortness of breath", "weight loss", "night sweats", "haematuria",
    "proteinuria", "jaundice", "ascites", "oedema of both legs", "a productive cough",
    "palpitations", "syncope", "confusion", "a new murmur", "a petechial rash", "joint swelling",
    "abdominal pain", "vomiting", "diarrhoea", "headache", "neck stiffness", "low serum sodium",
    "raised troponin", "a low platelet count", "an elevated creatinine", "hypoglycaemia",
    "blurred vision", "fatigue", "polyuria",
]
_POPULATIONS = [
    "adults", "elderly patients", "children", "pregnant women", "adolescents", "neonates",
    "outpatients", "patients in intensive care", "patients with renal impairment",
    "patients with liver failure", "smokers", "postmenopausal women", "immunocompromised patients",
]
_TESTS = [
    "serum ferritin", "hba1c", "a chest radiograph", "an electrocardiogram", "echocardiography",
    "a lumbar puncture", "blood cultures", "a d-dimer", "ct pulmonary angiography",
    "thyroid function tests", "a liver biopsy", "urine microscopy", "spirometry",
    "a colonoscopy", "mri of the brain", "bone densitometry",
]
_TEMPLATES = [
    "What is the first-line treatment for {c} in {p}?",
    "Which drug is recommended for long term control of {c} in {p} with {f}?",
    "What are the most common adverse effects of {d} in {p}?",
    "Which investigation best confirms {c} in a patient presenting with {f}?",
    "How should {d} be dosed in {p} with {c}?",
    "What is the mechanism of action of {d} and why is it used in {c}?",
    "A patient with {c} develops {f} after starting {d}; what is the most likely cause?",
    "When is {t} indicated in {p} with suspected {c}?",
    "Which findings distinguish {c} from {c2} in {p} presenting with {f}?",
    "What monitoring is required for {p} taking {d} for {c}?",
    "Is {d} safe in {p} with {c} and {f}?",
    "What is the prognosis of {c} in {p} who present with {f} and {f2}?",
    "Which complication of {c} is suggested by {f} and an abnormal {t}?",
    "Should {d} be stopped before {t} in {p} with {c}?",
]


# Drug names are where real question banks are most diverse: half the drugs mentioned are
# made-up names built from real INN stems, so the shingle vocabulary is not tiny.
_SYLLABLES = ["ba", "ce", "da", "fe", "go", "ki", "la", "me", "no", "pa", "ri", "sa", "te", "vo",
              "xa", "zi", "bro", "cla", "dro", "fle", "gra", "pro", "tra", "vel", "mor", "nal"]
_STEMS = ["pril", "sartan", "olol", "dipine", "statin", "mab", "tinib", "cillin", "floxacin",
          "azole", "vir", "prazole", "gliptin", "gliflozin", "parin", "xaban", "setron", "tidine"]


def _made_up_drugs(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3))) + rng.choice(_STEMS)
            for _ in range(n)]


_SEXES = ["man", "woman", "boy", "girl", "patient"]
_SETTINGS = ["in the emergency department", "in primary care", "on the ward", "after surgery",
             "at a routine visit", "during pregnancy", "after a long flight", "while travelling abroad"]


def _vignette(rng: random.Random) -> str:
    sex = rng.choice(_SEXES)
    age = rng.randint(1, 17) if sex in ("boy", "girl") else rng.randint(18, 95)
    return (f"A {age}-year-old {sex} with {rng.choice(_CONDITIONS)} "
            f"presents {rng.choice(_SETTINGS)} with {rng.choice(_FINDINGS)} for {rng.randint(2, 21)} days.")


def make_questions(n: int, seed: int) -> list[str]:
    """n short medical-style questions of 10-30 words, deterministic in (n, seed):
    a template question, half of them after a one-sentence clinical vignette."""
    rng = random.Random(seed)
    made_up = _made_up_drugs(rng, 3000)
    out = []
    while len(out) < n:
        q = rng.choice(_TEMPLATES).format(
            c=rng.choice(_CONDITIONS), c2=rng.choice(_CONDITIONS),
            d=rng.choice(_DRUGS if rng.random() < 0.5 else made_up),
            f=rng.choice(_FINDINGS), f2=rng.choice(_FINDINGS), p=rng.choice(_POPULATIONS),
            t=rng.choice(_TESTS),
        )
        if rng.random() < 0.5:
            q = f"{_vignette(rng)} {q}"
        if 10 <= len(q.split()) <= 30:
            out.append(q)
    return out


# --- implementations: texts -> signatures, each including its own shingling -------------


def _datasketch_per_text(texts, num_perm, seed, add):
    """One datasketch MinHash per text; add(m, shingles) puts the text's shingles into m."""
    from datasketch import MinHash

    out = []
    for t in texts:
        m = MinHash(num_perm=num_perm, seed=seed)
        add(m, char_shingles(t, SHINGLE_N))
        out.append(m)
    return out


def _update_each(m, shingles):
    for s in shingles:
        m.update(s.encode("utf-8"))


def _update_batch(m, shingles):
    m.update_batch([s.encode("utf-8") for s in shingles])


def run_datasketch_update(texts, num_perm, seed):
    return _datasketch_per_text(texts, num_perm, seed, _update_each)


def run_datasketch_update_batch(texts, num_perm, seed):
    """What tasks/dedup/near_duplicates.py did before tasks.dedup.minhash: one update_batch per text."""
    return _datasketch_per_text(texts, num_perm, seed, _update_batch)


def run_datasketch_bulk(texts, num_perm, seed):
    from datasketch import MinHash

    return MinHash.bulk(([s.encode("utf-8") for s in char_shingles(t, SHINGLE_N)] for t in texts),
                        num_perm=num_perm, seed=seed)


def run_rensa(texts, num_perm, seed):
    # rensa's RMinHash is NOT bit-identical to datasketch (its own hash function and
    # permutations), so its signatures cannot be mixed with datasketch's in one LSH
    # index; it is here as the speed reference only.
    from rensa import RMinHash

    out = []
    for t in texts:
        m = RMinHash(num_perm=num_perm, seed=seed)
        m.update(list(char_shingles(t, SHINGLE_N)))
        out.append(m.digest())
    return out


def run_mmedbench(texts, num_perm, seed):
    """tasks.dedup.minhash: the (n, num_perm) matrix of datasketch hashvalues, bit-identical.
    A fresh MinHasher per run, so no shingle is cached from an earlier run; the shingle
    sets are streamed (a generator), as tasks.dedup.minhash recommends."""
    from tasks.dedup.minhash import MinHasher

    return MinHasher(num_perm, seed).signatures(char_shingles(t, SHINGLE_N) for t in texts)


def run_mmedbench_texts(texts, num_perm, seed):
    """tasks.dedup.minhash from the texts: shingles each text itself, identically to
    char_shingles (normalize, then n-grams covered by one cached piece per word)."""
    from tasks.dedup.minhash import MinHasher

    return MinHasher(num_perm, seed).text_signatures(texts, SHINGLE_N)


IMPLEMENTATIONS = [
    ("datasketch_update", run_datasketch_update),
    ("datasketch_update_batch", run_datasketch_update_batch),
    ("datasketch_bulk", run_datasketch_bulk),
    ("rensa", run_rensa),
    ("mmedbench", run_mmedbench),
    ("mmedbench_texts", run_mmedbench_texts),
]


def _rensa_available() -> bool:
    try:
        import rensa  # noqa: F401
    except ImportError:
        return False
    return True


def measure(impls, texts, num_perm, seed, repeat: int, budget_s: float):
    """texts/s of each implementation, by wall clock and by CPU time (user+sys of this
    process): the best of `repeat` rounds, taken round-robin (so a burst of other work on
    the machine hits every implementation alike); an implementation whose run takes
    longer than budget_s runs once."""
    best = {name: float("inf") for name, _ in impls}
    best_cpu = dict(best)
    results = {}
    for round_ in range(repeat):
        for name, fn in impls:
            if round_ and best[name] > budget_s:
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            results[name] = fn(texts, num_perm, seed)
            best[name] = min(best[name], time.perf_counter() - t0)
            best_cpu[name] = min(best_cpu[name], time.process_time() - c0)
    return ({name: len(texts) / t for name, t in best.items()},
            {name: len(texts) / max(t, 1e-9) for name, t in best_cpu.items()}, results)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=7, help="seed of the question generator")
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=5, help="best of N rounds per implementation")
    ap.add_argument("--md", type=Path, default=None, help="also write the table to this Markdown file")
    args = ap.parse_args(argv)

    texts = make_questions(args.texts, args.seed)
    n_shingles = sum(len(char_shingles(t, SHINGLE_N)) for t in texts)
    impls = [(name, fn) for name, fn in IMPLEMENTATIONS if name != "rensa" or _rensa_available()]
    measured, measured_cpu, results = measure(impls, texts, args.num_perm, MINHASH_SEED, args.repeat, budget_s=10.0)
    rates: dict[str, float | None] = {name: measured.get(name) for name, _ in IMPLEMENTATIONS}
    cpu_rates: dict[str, float | None] = {name: measured_cpu.get(name) for name, _ in IMPLEMENTATIONS}
    for name, rate in rates.items():
        # rensa is not in requirements.lock: NA when it is not installed
        cpu = cpu_rates[name]
        print(f"{name} texts_per_s={'NA' if rate is None else f'{rate:.0f}'} "
              f"cpu_texts_per_s={'NA' if cpu is None else f'{cpu:.0f}'}", flush=True)
    if rates["rensa"] is not None:
        print(f"mmedbench_vs_rensa wall={rates['mmedbench'] / rates['rensa']:.2f} "
              f"cpu={cpu_rates['mmedbench'] / cpu_rates['rensa']:.2f}", flush=True)

    # Not timed: ours must equal datasketch's hash values bit for bit, on every text.
    ref = np.stack([m.hashvalues for m in results["datasketch_bulk"]])
    for name in ("datasketch_update", "datasketch_update_batch"):
        if not np.array_equal(np.stack([m.hashvalues for m in results[name]]), ref):
            print(f"ERROR: {name} differs from datasketch_bulk", file=sys.stderr)
            return 1
    for name in ("mmedbench", "mmedbench_texts"):
        ours = results[name]
        if ours.dtype != ref.dtype or not np.array_equal(ours, ref):
            print(f"ERROR: {name} signatures differ from datasketch", file=sys.stderr)
            return 1
    if args.md is not None:
        write_markdown(args.md, args, texts, n_shingles, rates, cpu_rates)
    return 0


_IDENTICAL = {"rensa": "no (own hash and permutations)"}


def write_markdown(path: Path, args, texts, n_shingles: int, rates: dict, cpu_rates: dict) -> None:
    base, rensa, rensa_cpu = rates["datasketch_bulk"], rates["rensa"], cpu_rates["rensa"]

    def ratio(r, ref):
        return "" if r is None or not ref else f"{r / ref:.2f}x"

    rows = "\n".join(
        f"| `{name}` | {'n/a (not installed)' if r is None else f'{r:,.0f}'} | "
        f"{'' if cpu_rates[name] is None else f'{cpu_rates[name]:,.0f}'} | {ratio(r, base)} | "
        f"{ratio(r, rensa)} | {ratio(cpu_rates[name], rensa_cpu)} | {_IDENTICAL.get(name, 'yes')} |"
        for name, r in rates.items()
    )
    argv = " ".join(f"--{k} {v}" for k, v in (("texts", args.texts), ("seed", args.seed),
                                                ("num-perm", args.num_perm), ("repeat", args.repeat)))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MARKDOWN.format(
        rows=rows, argv=argv, md=path.as_posix(), n=len(texts),
        words=np.mean([len(t.split()) for t in texts]), shingles=n_shingles / len(texts),
        num_perm=args.num_perm, cpus=os.cpu_count(), load=load,
        machine=f"{platform.machine()} ({_cpu()}); Python {platform.python_version()}, "
                f"numpy {np.__version__}, datasketch {_version('datasketch')}, numba {_version('numba')}, rensa {_version('rensa')}",
    ), encoding="utf-8")


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


MARKDOWN = """# MinHash signatures: throughput

Written by `benchmarks/bench_minhash.py` (`make bench-minhash`); do not edit by hand.

```
python benchmarks/bench_minhash.py {argv} --md {md}
```

{n:,} generated short medical questions ({words:.1f} words, a set of {shingles:.0f} character
5-grams each on average; templates, clinical vignettes and made-up drug names,
deterministic in `--seed`, no downloads), {num_perm} permutations, seed 1. Each
implementation is timed with `time.perf_counter` from the texts to the signatures, so
each pays for its own shingling: `common.text.char_shingles` per text for all but
`mmedbench_texts`, which shingles the texts itself (same sets). Best of the rounds,
taken round-robin, by wall clock and by CPU time (user+sys of the process); a run
longer than 10 s is not repeated. After timing, every signature except rensa's is
checked equal to datasketch's, bit for bit.

| implementation | texts/s (wall) | texts/s (CPU) | vs `datasketch_bulk` | vs `rensa` (wall) | vs `rensa` (CPU) | bit-identical to datasketch |
|---|---:|---:|---:|---:|---:|---|
{rows}

`mmedbench` and `rensa` start from the same `char_shingles` sets in the same run: their
ratio is the figure of issue #14 (target: at least 1.0x).

Machine: {cpus} CPUs, {machine}. Load average when written: {load}. Other work
shares this machine, so absolute figures move by tens of percent between runs; the
ratios hold better.

## What is measured

* `datasketch_update`: `MinHash(num_perm, seed)`, then `update(shingle.encode())` per shingle.
* `datasketch_update_batch`: one `update_batch` per text (what `tasks/dedup/near_duplicates.py` did).
* `datasketch_bulk`: `MinHash.bulk` over the texts' shingle lists.
* `rensa`: `RMinHash(num_perm, seed).update(shingles)`; not interchangeable with
  datasketch (its own hash function and permutations), shown for speed only.
* `mmedbench`: `tasks.dedup.minhash.MinHasher(num_perm, seed).signatures(char_shingles(t, 5) for t in texts)`.
* `mmedbench_texts`: `tasks.dedup.minhash.MinHasher(num_perm, seed).text_signatures(texts, 5)`.

Both `mmedbench` rows start from empty caches (a new `MinHasher` per run) and return
the (texts, 128) uint32 matrix of datasketch `hashvalues`; `tasks.dedup.minhash.to_lean(row, seed)`
makes a `LeanMinHash` of a row for `MinHashLSH`, and `tasks.dedup.minhash.lsh_insert_many`
fills an in-memory `MinHashLSH` with a whole matrix (same buckets as `lsh.insert`).

## How `tasks.dedup.minhash` gets there

* Each distinct shingle is hashed (SHA-1, datasketch's `sha1_hash32`) and permuted
  (datasketch's own numpy expressions, same dtypes and wrap-around) once, into a row of
  a bounded table; a text's signature is the column-wise minimum of its shingles' rows.
* From shingle sets, the per-shingle work is compiled (numba, `tasks/dedup/kernels.py`,
  compiled once and cached beside the module). Each set is joined into one string as
  it is produced (`"\x1f".join(set)`, C-level, while its strings are in the CPU
  cache), a chunk's sets become one UTF-8 buffer, and one compiled pass numbers every
  shingle by its bytes in an open-addressing table (FNV-1a places it; a byte
  comparison decides, so a collision never gives a wrong row). A second pass takes
  each set's column-wise minimum over its rows with the accumulator in cache. Only the
  rows of shingles never seen before are computed in Python (SHA-1 is datasketch's).
  A set whose items are not all str, or whose shingles contain a separator
  (U+001F, U+001E), is hashed on its own, with the same result.
* From texts, a text's n-grams are covered by one piece per word (the word, its
  space, and the next n-1 characters); the signature is the minimum of the pieces'
  rows, and pieces repeat across texts far more than whole texts do, so each distinct
  piece is reduced once. Same sets, same minimum, same bits. Text without spaces (CJK)
  is one piece, and costs what the shingle-set path costs.
* What is left: for `mmedbench`, `char_shingles` itself (shared with rensa's row),
  one `join` per set, and gathering 128 values (512 bytes) per shingle for the
  minimum; rensa hashes each shingle and takes the minimum in registers. The gather is
  memory traffic, which is what other work on a shared machine slows most. For
  `mmedbench_texts`: normalising each text and one dict lookup per word.

## Where the `mmedbench` row's time goes (issue #14)

Measured on this benchmark's 20,000 sets (2,412,684 shingles, 10,401 distinct), CPU
time, best of 5 rounds. Building the sets with `char_shingles` costs both rows the
same; on top of it, from 20,000 sets built beforehand (so colder in cache than the
benchmark's streamed sets):

| step of `MinHasher.signatures` | CPU s | ns per shingle |
|---|---:|---:|
| numbering the shingles (`kernels.number_shingles`) | 0.048 | 20 |
| column-wise minimum (`kernels.column_minima`) | 0.052 | 22 |
| SHA-1 and permutation of the 10,401 distinct shingles | 0.009 | 4 |
| per set: `len`, `join`, the separator checks; per chunk: `join`, `encode`, result | 0.12 | 49 |
| total | 0.23 | 94 |

Before the compiled loops (`itemgetter(*set)` on a dict that numbers unseen keys,
`np.fromiter`, a position-major numpy `take` + `minimum`), the same steps took about
0.6 s (250 ns per shingle): the dict probe and string comparison alone (95 ns) cost
half of what rensa spends per shingle in all, and numpy could not fuse the gather with
the minimum. Tried in the compiled minimum and not kept: column blocks of 32 (9 times
slower) and a flat table with `fastmath` (4 times slower) against one accumulator
row per set. Chunks of 128 to 2,048 sets are within 3% of each other.
"""


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu n/a"


if __name__ == "__main__":
    sys.exit(main())
