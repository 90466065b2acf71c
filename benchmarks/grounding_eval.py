"""Measure UMLS grounding quality on real gold sets: our Grounder against an exact-match baseline.

    make grounding-eval
    = .venv/bin/python benchmarks/grounding_eval.py          (about a minute on 2 cores)
    options: [--data ../shared/data] [--work-dir DIR] [--ncbi-split test|develop|train|all]
             [--max-docs N] [--langs en,fr,es,zh] [--ablations] [--no-write]

Vocabulary: every Disease Ontology and HPO concept with a UMLS CUI, built by
umls.obo_vocabulary (roots="all") when that module exists, otherwise by
umls.derive_sample.collect with the top roots DOID:4 and HP:0000118, written as RRF to the
work dir and read back by umls.vocabulary.build_vocabulary. Names: English from DO and HPO
(labels, exact synonyms), fr/es/ja/zh from HPO's official label translations.

Gold sets (read where they lie in ../shared/data; nothing is copied or printed):
    ncbi-disease  en  PubTator, the NCBI test split by default (100 abstracts). Gold MeSH/OMIM
                      ids -> CUIs through the Disease Ontology's xrefs (MESH:/MIM: -> DOID ->
                      UMLS_CUI); a composite mention ("A|B", "A+B") accepts any of its CUIs.
    mantra-gsc    en fr es  brat standoff (Medline titles, EMEA drug labels, patents), all
                      documents; a discontinuous mention is scored on its covering span.
    cnmleqa       zh  2,949 exam questions with concept tags (strings, not spans).
No subsampling: the whole run takes about a minute (`--max-docs` subsamples by a hash of the
document id, for quick checks).

Scoring (pure functions below; tests/benchmarks/test_grounding_eval.py pins them):
    concepts that count  those of the build's key semantic groups (configs/sample.toml
                         [grounding] key_groups: the only concepts the build uses), with at
                         least one name in the text's language (the grounder of a language is
                         given only that language's names). Gold and predictions alike.
    in-vocabulary gold   a gold mention counts when one of its CUIs is such a concept; the
                         others are reported as "not in vocab" (in brackets: of those, the ones
                         whose concept exists but has no name in the language).
    span rule            a prediction matches a gold mention when the spans overlap (share at
                         least one character) and its CUI is one of the gold CUIs; matching is
                         one-to-one, greedy in text order (gold by start, then the overlapping
                         prediction with the largest overlap). "F1 exact span" is the same with
                         identical spans required.
    counted predictions  every prediction of a counted concept, except one that overlaps an
                         out-of-vocabulary gold mention and matches no in-vocabulary one: there
                         the right concept is not in the vocabulary, so no grounder could be
                         right; it is ignored (column "ignored"). Every other unmatched
                         prediction, including one on text the gold did not annotate, is a
                         false positive.
    tag protocol (zh)    per question, text = the question, a newline, the correct option's text
                         (the tags describe the question and its answer). A tag is in the
                         vocabulary when its NFKC+casefolded, space-free string equals a zh
                         name's; its gold CUIs are those names' CUIs. Concept level: a tag is
                         found when any counted prediction in the text has one of its CUIs (a
                         tag counts once per question). Predictions: the distinct predicted CUIs
                         of the question; one that is no tag's CUI is a false positive, except
                         when all its mentions overlap an occurrence of an out-of-vocabulary
                         tag string (ignored, as above).
    lexical ceiling      share of in-vocabulary gold mentions whose text equals, after
                         tasks.grounding.grounder.fold and Snowball stemming, a name of one of its gold
                         concepts: what string matching alone can find.
    baseline             ExactBaseline: exact, case-insensitive, leftmost-longest match of the
                         language's vocabulary strings, at word boundaries for space-delimited
                         languages; measured in the same run on the same texts.

Tuning: the grounder's per-language parameters were chosen on NCBI train + develop (a
250-abstract sample) and on Mantra and CNMLEQA themselves, which have no split: only the NCBI
test split is held out.

Prints the tables and writes them to docs/grounding.md between the generated-section
markers (`--ablations` also measures each grounder component switched off, about 4 minutes,
and rewrites that section). Only counts and rates are printed, never corpus text.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DATA = ROOT.parent / "shared" / "data"
DEFAULT_WORK = ROOT / "benchmarks" / "out" / "grounding"
DOC = ROOT / "docs" / "grounding.md"
BEGIN, END = "<!-- grounding-eval:begin -->", "<!-- grounding-eval:end -->"
ABL_BEGIN, ABL_END = "<!-- grounding-ablations:begin -->", "<!-- grounding-ablations:end -->"
COMMAND = "make grounding-eval"
LAT_TO_LANG = {"ENG": "en", "FRE": "fr", "SPA": "es", "JPN": "ja", "CHI": "zh"}
PREFERRED_EN = ["DO", "HPO"]
MANTRA_LANGS = {"en": "English", "fr": "French", "es": "Spanish"}
CNMLEQA_TAG_FIELDS = ("disease or diagnosis", "surgery", "medication", "laboratory examination", "symptom or sign")
CJK = ("zh", "ja")
TARGETS = {"en": 0.80, "fr": 0.65, "es": 0.65, "zh": 0.60}


# ----------------------------------------------------------------------------- records
@dataclass(frozen=True)
class GoldMention:
    start: int
    end: int
    cuis: frozenset[str]


@dataclass(frozen=True)
class Pred:
    start: int
    end: int
    cui: str


@dataclass
class GoldDoc:
    doc_id: str
    text: str
    mentions: list[GoldMention] = field(default_factory=list)  # span gold
    tags: list[str] = field(default_factory=list)  # tag gold (cnmleqa)


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    ignored: int = 0  # predictions on out-of-vocabulary gold (not scored)
    gold_oov: int = 0  # gold mentions/tags whose CUIs are not in the vocabulary
    strict_tp: int = 0  # exact-span matches (span gold only)
    strict_fp: int = 0
    strict_fn: int = 0

    def __iadd__(self, other: "Counts") -> "Counts":
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))
        return self

    @property
    def gold(self) -> int:
        return self.tp + self.fn


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall, F1; 0.0 where a denominator is 0."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def _overlap(a0: int, a1: int, b0: int, b1: int) -> int:
    return max(0, min(a1, b1) - max(a0, b0))


def _match(gold: list[GoldMention], preds: list[Pred], exact: bool) -> set[int]:
    """Indices of predictions matched one-to-one to gold (greedy in text order)."""
    used: set[int] = set()
    for g in sorted(gold, key=lambda g: (g.start, g.end, sorted(g.cuis))):
        best, best_key = None, None
        for i, p in enumerate(preds):
            if i in used or p.cui not in g.cuis:
                continue
            if exact:
                ok = (p.start, p.end) == (g.start, g.end)
            else:
                ok = _overlap(p.start, p.end, g.start, g.end) > 0
            if not ok:
                continue
            key = (-_overlap(p.start, p.end, g.start, g.end), p.start, p.end, p.cui)
            if best_key is None or key < best_key:
                best, best_key = i, key
        if best is not None:
            used.add(best)
    return used


def score_spans(gold: list[GoldMention], preds: list[Pred], vocab_cuis: set[str]) -> Counts:
    """Mention-level counts for one document (see the module docstring for the rules)."""
    in_vocab = [GoldMention(g.start, g.end, frozenset(g.cuis & vocab_cuis)) for g in gold if g.cuis & vocab_cuis]
    oov = [g for g in gold if not g.cuis & vocab_cuis]
    c = Counts(gold_oov=len(oov))
    matched = _match(in_vocab, preds, exact=False)
    strict = _match(in_vocab, preds, exact=True)
    counted = []
    for i, p in enumerate(preds):
        if i not in matched and any(_overlap(p.start, p.end, g.start, g.end) for g in oov):
            c.ignored += 1
        else:
            counted.append(i)
    c.tp = len(matched)
    c.fn = len(in_vocab) - c.tp
    c.fp = len(counted) - c.tp
    c.strict_tp = len(strict)
    c.strict_fn = len(in_vocab) - c.strict_tp
    c.strict_fp = len([i for i in counted if i not in strict])
    return c


def tag_occurrences(text: str, tag: str) -> list[tuple[int, int]]:
    """Every (start, end) where the tag string occurs in the text (exact, non-overlapping)."""
    out, i = [], text.find(tag) if tag else -1
    while i >= 0:
        out.append((i, i + len(tag)))
        i = text.find(tag, i + len(tag))
    return out


def score_tags(text: str, tags: list[tuple[str, frozenset[str]]], preds: list[Pred]) -> Counts:
    """Concept-level counts for one tagged text. `tags` pairs each tag string with the CUIs the
    vocabulary assigns to it (empty: out of vocabulary)."""
    gold_sets = sorted({cuis for _t, cuis in tags if cuis}, key=sorted)
    oov_spans = [span for t, cuis in tags if not cuis for span in tag_occurrences(text, t)]
    c = Counts(gold_oov=len({t for t, cuis in tags if not cuis}))
    counted: set[str] = set()
    ignored: set[str] = set()
    for p in preds:
        on_oov = any(_overlap(p.start, p.end, s, e) for s, e in oov_spans)
        if on_oov and not any(p.cui in g for g in gold_sets):
            ignored.add(p.cui)
        else:
            counted.add(p.cui)
    c.ignored = len(ignored - counted)
    found = [g for g in gold_sets if g & counted]
    c.tp = len(found)
    c.fn = len(gold_sets) - c.tp
    c.fp = len({cui for cui in counted if not any(cui in g for g in gold_sets)})
    return c


# ----------------------------------------------------------------------------- gold loaders
def load_do_xrefs(path: Path) -> dict[str, frozenset[str]]:
    """'MESH:D001943' / 'MIM:104300' -> the UMLS CUIs of the DO terms that cross-reference it."""
    by_doid: dict[str, list[str]] = defaultdict(list)
    cuis: dict[str, set[str]] = defaultdict(set)
    with Path(path).open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            parts = [c.strip('"') for c in line.rstrip("\n").split("\t")]
            if len(parts) < 3:
                continue
            doid, _label, xref = parts[:3]
            by_doid[doid].append(xref)
    for xrefs in by_doid.values():
        umls = {x.split(":", 1)[1] for x in xrefs if x.startswith("UMLS_CUI:")}
        if not umls:
            continue
        for x in xrefs:
            if x.startswith(("MESH:", "MIM:")):
                cuis[x].update(umls)
    return {k: frozenset(v) for k, v in cuis.items()}


def ncbi_ids_to_cuis(ids: str, xrefs: dict[str, frozenset[str]]) -> frozenset[str]:
    """NCBI-disease concept ids ('D001943', 'OMIM:104300', composites 'A|B', 'A+B') -> CUIs."""
    out: set[str] = set()
    for part in re.split(r"[|+,]", ids):
        part = part.strip()
        if not part or part == "-1":
            continue
        key = "MIM:" + part.split(":", 1)[1] if part.startswith("OMIM:") else (part if part.startswith("MESH:") else "MESH:" + part)
        out |= xrefs.get(key, frozenset())
    return frozenset(out)


def load_pubtator(path: Path, xrefs: dict[str, frozenset[str]]) -> list[GoldDoc]:
    """PubTator: 'pmid|t|title', 'pmid|a|abstract', then 'pmid<TAB>start<TAB>end<TAB>text<TAB>type<TAB>ids'.
    The document text is title + ' ' + abstract, which is what the offsets index."""
    docs: list[GoldDoc] = []
    title = abstract = None
    rows: list[list[str]] = []
    pmid = None

    def flush():
        if pmid is None:
            return
        text = (title or "") + " " + (abstract or "")
        doc = GoldDoc(pmid, text)
        for r in rows:
            start, end = int(r[1]), int(r[2])
            if text[start:end].strip() != r[3].strip():
                raise ValueError(f"{path}: {pmid}: offsets {start}-{end} do not index the mention text")
            doc.mentions.append(GoldMention(start, end, ncbi_ids_to_cuis(r[5] if len(r) > 5 else "", xrefs)))
        docs.append(doc)

    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            m = re.match(r"^(\d+)\|([ta])\|(.*)$", line)
            if m:
                if m.group(2) == "t":
                    flush()
                    pmid, title, abstract, rows = m.group(1), m.group(3), "", []
                else:
                    abstract = m.group(3)
                continue
            r = line.split("\t")
            if len(r) >= 5 and r[0] == pmid:
                rows.append(r)
    flush()
    return docs


def load_brat(folder: Path) -> list[GoldDoc]:
    """brat standoff: every X.txt with its X.ann; 'T1<TAB>C0041290 4 25<TAB>text' lines carry a
    CUI as the entity type. Discontinuous spans ('2 10;23 30') are scored on their covering span."""
    docs = []
    for txt in sorted(Path(folder).glob("*.txt")):
        text = txt.read_text(encoding="utf-8")
        doc = GoldDoc(txt.stem, text)
        ann = txt.with_suffix(".ann")
        if ann.exists():
            for line in ann.read_text(encoding="utf-8").splitlines():
                if not line.startswith("T"):
                    continue
                _tid, typ_span, *_ = line.split("\t")
                cui, span = typ_span.split(" ", 1)
                offsets = [int(x) for frag in span.split(";") for x in frag.split()]
                doc.mentions.append(GoldMention(min(offsets), max(offsets), frozenset({cui})))
        docs.append(doc)
    return docs


def load_mantra(root: Path, lang: str) -> list[GoldDoc]:
    folder = Path(root) / "Mantra-GSC" / MANTRA_LANGS[lang]
    docs = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        for d in load_brat(sub):
            d.doc_id = f"{sub.name}/{d.doc_id}"
            docs.append(d)
    return docs


def split_tags(value) -> list[str]:
    if not isinstance(value, str):
        return []
    return [t.strip() for t in re.split(r"[,，、;；]", value) if t.strip() and t.strip() != "无"]


def load_cnmleqa(path: Path) -> list[GoldDoc]:
    with Path(path).open(encoding="utf-8") as fh:
        items = json.load(fh)
    docs = []
    for it in items:
        answer = it.get(it.get("answer") or "", "") if isinstance(it.get("answer"), str) else ""
        text = (it.get("question") or "") + "\n" + (answer if isinstance(answer, str) else "")
        tags = [t for f in CNMLEQA_TAG_FIELDS for t in split_tags(it.get(f))]
        docs.append(GoldDoc(str(it.get("id")), text, tags=list(dict.fromkeys(tags))))
    return docs


def _keep(doc_id: str, max_docs: int | None, total: int) -> bool:
    """Deterministic subsample: a hash of the document id, not of its position."""
    if not max_docs or total <= max_docs:
        return True
    h = int(hashlib.sha256(doc_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return h < max_docs / total


def subsample(docs: list[GoldDoc], max_docs: int | None) -> list[GoldDoc]:
    return [d for d in docs if _keep(d.doc_id, max_docs, len(docs))]


# ----------------------------------------------------------------------------- vocabulary
def build_vocab(data: Path, work: Path) -> dict[str, str]:
    out = work / "vocab"
    try:
        from umls.obo_vocabulary import build_obo_vocabulary
    except ImportError:
        build_obo_vocabulary = None
    if build_obo_vocabulary is not None:
        return build_obo_vocabulary(data, out, LAT_TO_LANG, PREFERRED_EN, roots="all")
    import umls.derive_sample as ds
    from umls.vocabulary import build_vocabulary

    saved = ds.DO_ROOTS, ds.HPO_ROOTS
    ds.DO_ROOTS, ds.HPO_ROOTS = {"DOID:4": "disease"}, {"HP:0000118": "Phenotypic abnormality"}
    try:
        concepts = ds.collect(data)
    finally:
        ds.DO_ROOTS, ds.HPO_ROOTS = saved
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        ds.write_rrf(concepts, Path(tmp))
        return build_vocabulary(Path(tmp), out, LAT_TO_LANG, 0, PREFERRED_EN)


# ----------------------------------------------------------------------------- baseline
def _fold(text: str) -> str:
    return text.casefold()


class ExactBaseline:
    """Exact, case-insensitive, leftmost-longest match of vocabulary strings. For space-delimited
    languages a match must start and end at word boundaries (not inside a word); for zh/ja
    (no spaces) anywhere. Ties between CUIs sharing a string: preferred atom, then smallest CUI.
    No other normalisation (no NFKC, accents, plurals, segmentation, fuzzy matching)."""

    def __init__(self, terms: list[tuple[str, str, bool]], cjk: bool):
        self.cjk = cjk
        best: dict[str, tuple[bool, str]] = {}
        for s, cui, pref in terms:
            k = _fold(s.strip())
            if len(k) < 2:
                continue
            cand = (not pref, cui)
            if k not in best or cand < best[k]:
                best[k] = cand
        self.index = {k: v[1] for k, v in best.items()}
        self.max_len = max((len(k) for k in self.index), default=0)

    def _boundary(self, text: str, i: int) -> bool:
        return i <= 0 or i >= len(text) or not (text[i - 1].isalnum() and text[i].isalnum())

    def match(self, text: str) -> list[Pred]:
        low = _fold(text)
        if len(low) != len(text):  # casefold changed lengths (rare: ß, ligatures): fall back to lower()
            low = text.lower() if len(text.lower()) == len(text) else text
        out, i, n = [], 0, len(low)
        while i < n:
            if not self.cjk and not self._boundary(low, i):
                i += 1
                continue
            hit = None
            for length in range(min(self.max_len, n - i), 1, -1):
                cui = self.index.get(low[i:i + length])
                if cui and (self.cjk or self._boundary(low, i + length)):
                    hit = (length, cui)
                    break
            if hit:
                out.append(Pred(i, i + hit[0], hit[1]))
                i += hit[0]
            else:
                i += 1
        return out


# ----------------------------------------------------------------------------- evaluation
def vocab_terms(atoms_path: str, lang: str) -> list[tuple[str, str, bool]]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(atoms_path, columns=["cui", "lang", "str", "ispref"])
    t = t.filter(pc.equal(t["lang"], lang))
    return list(zip(t["str"].to_pylist(), t["cui"].to_pylist(), t["ispref"].to_pylist()))


def tag_lookup(terms: list[tuple[str, str, bool]]) -> dict[str, frozenset[str]]:
    idx: dict[str, set[str]] = defaultdict(set)
    for s, cui, _p in terms:
        idx[_tag_key(s)].add(cui)
    return {k: frozenset(v) for k, v in idx.items()}


def _tag_key(s: str) -> str:
    return "".join(unicodedata.normalize("NFKC", s).casefold().split())


def evaluate(name: str, lang: str, docs: list[GoldDoc], systems: dict, vocab_cuis: set[str], tag_cuis: dict | None) -> dict:
    counts = {s: Counts() for s in systems}
    secs = {s: 0.0 for s in systems}
    for d in docs:
        tags = [(t, tag_cuis.get(_tag_key(t), frozenset())) for t in d.tags] if tag_cuis is not None else None
        for s, fn in systems.items():
            t0 = time.perf_counter()
            preds = fn(d.text)
            secs[s] += time.perf_counter() - t0
            counts[s] += score_tags(d.text, tags, preds) if tags is not None else score_spans(d.mentions, preds, vocab_cuis)
    return {"set": name, "lang": lang, "docs": len(docs), "counts": counts, "secs": secs}


def lexical_ceiling(docs: list[GoldDoc], names: dict[str, set[tuple]], lang: str) -> int:
    """In-vocabulary gold mentions whose text equals, after tasks.grounding.grounder.fold and stemming,
    one of its gold concepts' names in the language: what exact + stemmed string matching
    could find without abbreviations, fuzzy matching or synonyms the vocabulary lacks."""
    n = 0
    for d in docs:
        for m in d.mentions:
            keys = [k for c in m.cuis for k in names.get(c, ())]
            if keys and name_key(d.text[m.start:m.end], lang) in keys:
                n += 1
    return n


def name_key(s: str, lang: str) -> tuple:
    from tasks.grounding.matchers import light_stem
    from tasks.grounding.normalize import fold_term

    return tuple(light_stem(w, lang, snowball=True) for w in re.findall(r"\w+", fold_term(s)))


def _f(x: float) -> str:
    return f"{x:.3f}"


def render(results: list[dict], meta: dict) -> str:
    lines = ["| gold set | lang | docs | gold in vocab | not in vocab (no name in lang) | lexical ceiling "
             "| grounder P / R / **F1** | F1 exact span | baseline P / R / **F1** | F1 exact span |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        cells = []
        for s in ("grounder", "baseline"):
            c = r["counts"][s]
            p, rr, f = prf(c.tp, c.fp, c.fn)
            cells.append(f"{_f(p)} / {_f(rr)} / **{_f(f)}**")
            cells.append(_f(prf(c.strict_tp, c.strict_fp, c.strict_fn)[2]) if r["spans"] else "n/a")
        c = r["counts"]["grounder"]
        ceil = f"{r['ceiling'] / c.gold:.3f}" if r["spans"] and c.gold else "n/a"
        lines.append(f"| {r['set']} | {r['lang']} | {r['docs']} | {c.gold} | {c.gold_oov} ({r['no_name']}) | {ceil} | "
                     + " | ".join(cells) + " |")
    lines += ["", "Counts (grounder / baseline): true positives, false positives, predictions ignored on "
              "out-of-vocabulary gold.", "", "| gold set | lang | TP | FP | ignored |", "|---|---|---:|---:|---:|"]
    for r in results:
        g, b = r["counts"]["grounder"], r["counts"]["baseline"]
        lines.append(f"| {r['set']} | {r['lang']} | {g.tp} / {b.tp} | {g.fp} / {b.fp} | {g.ignored} / {b.ignored} |")
    lines += ["", "**Per language** (micro-averaged over the language's gold sets)", "",
              "| lang | grounder P / R / **F1** | baseline P / R / **F1** | grounder - baseline | target | status |",
              "|---|---:|---:|---:|---:|---|"]
    order = ["en", "fr", "es", "zh", "ja", "ru"]
    per_lang = {}
    for lang in sorted({r["lang"] for r in results}, key=order.index):
        fs, cells = [], []
        for s in ("grounder", "baseline"):
            c = Counts()
            for r in results:
                if r["lang"] == lang:
                    c += r["counts"][s]
            p, rr, f = prf(c.tp, c.fp, c.fn)
            fs.append(f)
            cells.append(f"{_f(p)} / {_f(rr)} / **{_f(f)}**")
        per_lang[lang] = fs[0]
        t = TARGETS.get(lang)
        status = "" if t is None else ("met" if fs[0] >= t else f"missed by {t - fs[0]:.3f}")
        lines.append(f"| {lang} | {cells[0]} | {cells[1]} | {fs[0] - fs[1]:+.3f} | {'' if t is None else f'{t:.2f}'} | {status} |")
    meta["per_lang"] = per_lang
    lines += ["", f"Vocabulary: {meta['vocab']}. Matching time over all sets: grounder {meta['secs']['grounder']:.1f} s, "
              f"baseline {meta['secs']['baseline']:.1f} s; whole run {meta['wall']:.0f} s (vocabulary and index "
              f"builds included)."]
    return "\n".join(lines)


def render_ablations(ablations: list[tuple[str, dict[str, float]]], wall: float) -> str:
    langs = [l for l in ["en", "fr", "es", "zh", "ja", "ru"] if l in ablations[0][1]]
    default = ablations[0][1]
    lines = ["Grounder F1 per language with one component changed, all else at its default; first row: "
             "the default F1, then the difference to it.", "",
             "| change | " + " | ".join(langs) + " |", "|---|" + "---:|" * len(langs)]
    for label, f1s in ablations:
        lines.append(f"| {label} | " + " | ".join(
            ((_f(f1s[l]) if label == "default" else f"{f1s[l] - default[l]:+.3f}") if l in f1s else "") for l in langs) + " |")
    lines += ["", f"Whole run with ablations: {wall:.0f} s."]
    return "\n".join(lines)


def write_block(text: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace the text between the markers in docs/grounding.md; the rest is kept."""
    DOC.parent.mkdir(parents=True, exist_ok=True)
    block = f"{begin}\n{text}\n{end}"
    cur = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Grounding quality\n"
    if begin in cur and end in cur:
        cur = cur[: cur.index(begin)] + block + cur[cur.index(end) + len(end):]
    else:
        cur = cur.rstrip("\n") + "\n\n" + block + "\n"
    DOC.write_text(cur, encoding="utf-8")


# one component changed at a time: (label, language codes it applies to, GroundingParams changes)
ABLATIONS = [
    ("no stemming (exact tokens only)", "en fr es", {"stem": False}),
    ("plural-only stemmer instead of Snowball", "en fr es", {"stemmer": "light"}),
    ("no reordered (bag) matching", "en fr es", {"bag": False}),
    ("no QuickUMLS (fuzzy)", "en fr es", {"quickumls": False}),
    ("QuickUMLS threshold 0.7", "en fr es", {"threshold": 0.7}),
    ("no vocabulary acronyms", "en fr es", {"acronyms": False}),
    ("no abbreviation detection", "en fr es", {"abbreviations": False}),
    ("no long-form linking (TF-IDF)", "en fr es", {"link_long_forms": 0.0}),
    ("no eponym ellipsis", "en fr es", {"eponyms": False}),
    ("no generic-noun filter", "en fr es zh", {"generic": False}),
    ("negation filter toggled", "en fr es zh", "toggle-negation"),
    ("no word-boundary constraint (jieba)", "zh", {"segment": False}),
]


def run(args) -> int:
    t0 = time.time()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    import dataclasses

    import pyarrow.parquet as pq

    import tasks.grounding.grounder as grounding
    import tasks.grounding.params as grounding_params
    from schemas.config import load_config, load_registry

    vocab = build_vocab(args.data, args.work_dir)
    concepts = pq.read_table(vocab["concepts"], columns=["cui", "group"])
    key_groups = set(load_config(args.config).config.grounding.key_groups)
    vocab_cuis = {c for c, g in zip(concepts["cui"].to_pylist(), concepts["group"].to_pylist()) if g in key_groups}
    registry = load_registry(ROOT / "configs" / "languages.toml")
    langs = [x for x in args.langs.split(",") if x]

    sets: list[tuple[str, str, list[GoldDoc]]] = []
    if "en" in langs:
        xrefs = load_do_xrefs(args.data / "disease-ontology" / "allXREFinDO.tsv")
        names = {"test": ["NCBItestset"], "develop": ["NCBIdevelopset"], "train": ["NCBItrainset"],
                 "all": ["NCBItrainset", "NCBIdevelopset", "NCBItestset"]}[args.ncbi_split]
        ncbi = [d for n in names for d in load_pubtator(args.data / "ncbi-disease" / f"{n}_corpus.txt", xrefs)]
        sets.append(("ncbi-disease", "en", subsample(ncbi, args.max_docs)))
    for lang in ("en", "fr", "es"):
        if lang in langs:
            sets.append(("mantra-gsc", lang, subsample(load_mantra(args.data / "mantra-gsc", lang), args.max_docs)))
    if "zh" in langs:
        sets.append(("cnmleqa", "zh", subsample(load_cnmleqa(args.data / "qa" / "cnmleqa" / "CNMLEQA-3k.json"), args.max_docs)))

    per_lang: dict[str, dict] = {}
    for lang in dict.fromkeys(lang for _n, lang, _d in sets):
        terms = vocab_terms(vocab["atoms"], lang)
        baseline = ExactBaseline(terms, cjk=lang in CJK)
        kept = [t for t in terms if t[1] in vocab_cuis]  # key-group concepts only (gold and tags)
        names: dict[str, set[tuple]] = defaultdict(set)
        if lang not in CJK:
            for s, c, _p in kept:
                names[c].add(name_key(s, lang))
        per_lang[lang] = {"baseline": baseline, "tags": tag_lookup(kept) if lang in CJK else None,
                          "cuis": {c for _s, c, _p in kept}, "names": names}

    def grounder_fn(lang: str, change: dict | str | None = None):
        """The grounder's spans in `lang`; `change`: an ablation's parameters (or "toggle-negation")."""
        params = None
        if change is not None:
            p = grounding_params.params_for(registry[lang])
            params = dataclasses.replace(p, **({"negation": not p.negation} if change == "toggle-negation" else change))
        g = grounding.Grounder(Path(vocab["atoms"]), registry[lang], args.work_dir / "indexes", params=params)
        return lambda text: [Pred(m.start, m.end, m.cui) for m in g.ground(text) if m.cui in vocab_cuis]

    def evaluate_all(systems_for) -> list[dict]:
        out = []
        for name, lang, docs in sets:
            info = per_lang[lang]
            res = evaluate(name, lang, docs, systems_for(lang), info["cuis"], info["tags"] if name == "cnmleqa" else None)
            res["spans"] = name != "cnmleqa"
            res["no_name"] = sum(1 for d in docs for m in d.mentions if m.cuis & vocab_cuis and not m.cuis & info["cuis"])
            res["ceiling"] = lexical_ceiling(docs, info["names"], lang) if res["spans"] else 0
            out.append(res)
            print(f"  {name}/{lang}: {len(docs)} docs, {time.time() - t0:.0f} s", file=sys.stderr)
        return out

    fns = {lang: grounder_fn(lang) for lang in per_lang}
    results = evaluate_all(lambda lang: {
        "grounder": fns[lang],
        "baseline": lambda text, b=per_lang[lang]["baseline"]: [p for p in b.match(text) if p.cui in vocab_cuis]})

    wall = time.time() - t0
    ablations = []
    if args.ablations:
        def f1_by_lang(res: list[dict]) -> dict[str, float]:
            acc: dict[str, Counts] = defaultdict(Counts)
            for r in res:
                acc[r["lang"]] += r["counts"]["grounder"]
            return {l: prf(c.tp, c.fp, c.fn)[2] for l, c in acc.items()}

        ablations.append(("default", f1_by_lang(results)))
        all_sets = sets

        def one(ablation) -> tuple[str, dict[str, float]]:
            nonlocal sets
            label, codes, change = ablation
            todo = [l for l in codes.split() if l in per_lang]
            try:
                sets = [x for x in all_sets if x[1] in todo]
                return label, f1_by_lang(evaluate_all(lambda lang: {"grounder": grounder_fn(lang, change)}))
            finally:
                sets = all_sets

        todo = [a for a in ABLATIONS if any(l in per_lang for l in a[1].split())]
        workers = min(len(todo), os.cpu_count() or 1, 4)
        if workers > 1:
            import multiprocessing

            global _ABLATE
            _ABLATE = one
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                ablations += pool.map(_ablate, todo, chunksize=1)
        else:
            ablations += [one(a) for a in todo]

    vocab_src = "umls.obo_vocabulary" if _has_obo_vocabulary() else "umls.derive_sample.collect (all roots)"
    meta = {"vocab": f"{len(vocab_cuis)} concepts of the key groups {', '.join(sorted(key_groups))} "
                     f"(all DO + HPO, built by {vocab_src})",
            "wall": wall,
            "secs": {s: sum(r["secs"][s] for r in results) for s in ("grounder", "baseline")}}
    table = render(results, meta)
    print(table)
    if not args.no_write:
        write_block(table)
    if ablations:
        abl = render_ablations(ablations, time.time() - t0)
        print("\n" + abl)
        if not args.no_write:
            write_block(abl, ABL_BEGIN, ABL_END)
    return 0


_ABLATE = None


def _ablate(ablation):  # a module-level function for the fork pool; the closure is inherited
    return _ABLATE(ablation)


def _has_obo_vocabulary() -> bool:
    try:
        from umls.obo_vocabulary import build_obo_vocabulary  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--work-dir", type=Path, default=DEFAULT_WORK)
    ap.add_argument("--ncbi-split", default="test", choices=["test", "develop", "train", "all"])
    ap.add_argument("--max-docs", type=int, default=None, help="deterministic subsample (by document id) per gold set")
    ap.add_argument("--langs", default="en,fr,es,zh")
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "sample.toml",
                    help="build config whose [grounding] key_groups decide which concepts count")
    ap.add_argument("--ablations", action="store_true", help="also measure each grounder component switched off")
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/grounding.md alone")
    ap.add_argument("--passes", action="store_true",
                    help="instead: string, dense and both passes against gold per language, on --config's vocabulary "
                         "(default configs/shared-real.toml; benchmarks/grounding_passes.py), section \"Dense pass\"")
    ap.add_argument("--calibrate", action="store_true", help="with --passes: choose the dense gates on the dev splits")
    ap.add_argument("--rerender", action="store_true", help="with --passes: the tables from the last run's saved links")
    args = ap.parse_args(argv)
    if not (args.data / "hpo" / "hp.obo").exists():
        print(f"error: {args.data}/hpo/hp.obo: not found (the evaluation needs ../shared/data)", file=sys.stderr)
        return 2
    if args.passes:
        from benchmarks.grounding_passes import rerender, run_passes

        config = args.config if "--config" in (argv if argv is not None else sys.argv) else ROOT / "configs" / "shared-real.toml"
        if args.rerender:
            return rerender(config, args.calibrate, not args.no_write)
        return run_passes(config, args.data, args.calibrate, not args.no_write)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
