"""Grounding's two passes against gold, per language: string only, dense only, both.

    .venv/bin/python benchmarks/grounding_eval.py --passes [--config configs/shared-real.toml] [--calibrate]
    (the `ground` command's vocabulary for the config; ../shared/data's gold; docs/grounding.md's
    "Dense pass" section is rewritten)

Two protocols (the pure scoring functions below; tests/benchmarks/test_grounding_passes.py):

    whole     a gold mention's text read as a whole, as an exam option is: string = the concept
              the string grounder's mentions name covering the text (tasks/grounding/keys.py
              `option_concept`, min_score 0.8); dense = the nearest concept at the option gates;
              both = string, else dense. Distinct (language, text, gold CUIs) pairs are counted
              once. A prediction is right when it is one of the gold CUIs; every prediction
              counts for precision, also on a mention whose concept the vocabulary lacks (an
              option linked there would be a wrong gold passage); recall is over the mentions
              whose concept has a name in English or the language (what the dense space holds).
              "P, as answers": the same over the links to a concept a build may make an exam
              answer's gold passage (a key group, a definition); a link to another concept drops
              its item instead. Beside it, the string links by where the linked name came from:
              a terminology, only a gold corpus's annotated mentions, or no exact name (fuzzy).
    spans     running text (Mantra, NCBI-disease: the sets that ship their text): string = the
              string grounder's mentions at min_score; dense = the dense pass over every span
              of up to three tokens (span gates); both = string, then dense on spans no string
              mention overlaps. A prediction is right when it overlaps a gold mention with its
              CUI (one-to-one, as benchmarks/grounding_eval.py); unlike that table's rule, a
              prediction on a mention whose concept the vocabulary lacks is a false positive.
              The build is more sparing than "both" here: it runs the dense pass only on texts
              where string matching found no key concept.

Gold and splits (read where they lie; no text is printed or written, only counts and rates):
    QUAERO (fr)        whole; calibrate on dev, report test (brat .ann only: no running text)
    NEREL-BIO (ru)     whole; report dev (its test files carry no CUIs)
    RuCCoN (ru)        whole; report test
    Mantra GSC (en fr es)  whole and spans; no split ships: documents split by sha256 of their
                       path, the first hex digit 0-7 dev, 8-f test
    NCBI-disease (en)  whole and spans; calibrate on develop, report test; gold MeSH/OMIM ids
                       reach CUIs through Disease Ontology's xrefs
The Russian sets are not calibrated on (the vocabulary may read their training names).
Intervals: 95% percentile bootstrap over the counted units (1,000 resamples, seed 0).
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tasks.grounding.dense import Link, select_links

GRID_T = [round(0.60 + 0.01 * i, 2) for i in range(39)]  # 0.60 .. 0.98
GRID_M = [0.0, 0.02, 0.04, 0.06, 0.08, 0.10, 0.15]
OPTION_PRECISION = 0.90  # what whole-option linking must reach in every language
CALIBRATION_PRECISION = 0.93  # what the dense option links must reach on the dev sets (headroom for test)


@dataclass(frozen=True)
class WholeItem:
    lang: str
    text: str
    gold: frozenset[str]
    in_vocab: bool  # one gold CUI has a name in English or the language


@dataclass(frozen=True)
class SpanDoc:
    lang: str
    doc_id: str
    text: str
    gold: tuple[tuple[int, int, frozenset[str]], ...]


def doc_split(doc_id: str) -> str:
    """Pure: Mantra's documented hash split: dev or test by the first hex digit of sha256(id)."""
    return "dev" if hashlib.sha256(doc_id.encode()).hexdigest()[0] in "01234567" else "test"


# ----------------------------------------------------------------------------- readers
def read_quaero(root: Path, split: str) -> list[tuple[str, frozenset[str]]]:
    """(mention text, CUIs) of QUAERO's brat files of a split (MEDLINE and EMEA)."""
    out = []
    for ann in sorted((Path(root) / "CLEF_2017" / "dataset" / "corpus" / split).glob("*/*.ann")):
        texts, notes = {}, {}
        for line in ann.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if line.startswith("T") and len(parts) >= 3:
                texts[parts[0]] = parts[2]
            elif line.startswith("#") and len(parts) >= 3 and parts[1].startswith("AnnotatorNotes"):
                notes[parts[1].split()[1]] = frozenset(c for c in _cuis(parts[2]))
        out += [(texts[t], notes[t]) for t in sorted(texts) if notes.get(t)]
    return out


def _cuis(field: str) -> list[str]:
    import re

    return re.findall(r"C\d{7}", field)


def read_nerel(root: Path, split: str) -> list[tuple[str, frozenset[str]]]:
    path = Path(root) / "BioNNE-L_Shared_Task" / "data" / "tsv" / "ru" / f"bionnel_ru_{split}.tsv"
    out = []
    with path.open(encoding="utf-8") as fh:
        header = next(fh).rstrip("\n").split("\t")
        ti, ci = header.index("text"), header.index("UMLS_CUI")
        for line in fh:
            row = line.rstrip("\n").split("\t")
            if len(row) > ci and _cuis(row[ci]):
                out.append((row[ti], frozenset(_cuis(row[ci]))))
    return out


def read_ruccon(root: Path, split: str) -> list[tuple[str, frozenset[str]]]:
    out = []
    for f in sorted((Path(root) / "processed_data" / split).glob("*.concept")):
        for line in f.read_text(encoding="utf-8").splitlines():
            parts = line.split("||")
            if len(parts) >= 5 and _cuis(parts[4]):
                out.append((parts[3], frozenset(_cuis(parts[4]))))
    return out


# ----------------------------------------------------------------------------- scoring (pure)
@dataclass
class Tally:
    right: int = 0
    predicted: int = 0
    gold: int = 0  # in-vocabulary gold
    predicted_in: int = 0  # predictions on in-vocabulary gold (whole mentions)

    def prf(self) -> tuple[float, float, float]:
        """Precision over the in-vocabulary mentions (where a right answer exists), recall, F1."""
        p = self.right / self.predicted_in if self.predicted_in else 0.0
        r = self.right / self.gold if self.gold else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    def strict_precision(self) -> float:
        """Precision over every prediction, also on mentions whose concept the vocabulary lacks."""
        return self.right / self.predicted if self.predicted else 0.0


def gate(link: Link | None, threshold: float, margin: float) -> str | None:
    return link.cui if link is not None and link.score >= threshold and link.margin >= margin else None


def whole_outcomes(items: list[WholeItem], predicted: list[str | None]) -> list[tuple[int, int, int, int]]:
    """Pure: (right, predicted, in-vocabulary gold, predicted on in-vocabulary gold) per item."""
    return [(int(p is not None and p in it.gold), int(p is not None), int(it.in_vocab), int(p is not None and it.in_vocab))
            for it, p in zip(items, predicted)]


def tally(outcomes: Iterable[tuple]) -> Tally:
    t = Tally()
    for o in outcomes:
        t.right += o[0]
        t.predicted += o[1]
        t.gold += o[2]
        t.predicted_in += o[3] if len(o) > 3 else o[1]  # spans: every prediction counts
    return t


def as_answers(predicted: list[str | None], answerable: frozenset[str]) -> list[str | None]:
    """Pure: the links a build would keep as answers; a link to any other concept is no link
    (its item is dropped, not given a wrong gold passage)."""
    return [p if p in answerable else None for p in predicted]


def both(string: list[str | None], dense: list[str | None]) -> list[str | None]:
    return [s if s is not None else d for s, d in zip(string, dense)]


def span_outcome(gold: Iterable[tuple[int, int, frozenset[str]]], preds: list[tuple[int, int, str]],
                 vocab: set[str]) -> tuple[int, int, int]:
    """Pure: (right, predicted, in-vocabulary gold) of one document: a prediction is right when
    it overlaps a gold mention naming its CUI, one-to-one, gold in text order, the prediction
    with the largest overlap first."""
    used: set[int] = set()
    right = 0
    gold = sorted(gold, key=lambda g: (g[0], g[1], sorted(g[2])))
    for g0, g1, cuis in gold:
        best = None
        for i, (p0, p1, cui) in enumerate(preds):
            ov = min(g1, p1) - max(g0, p0)
            if i in used or cui not in cuis or ov <= 0:
                continue
            key = (-ov, p0, p1, cui)
            if best is None or key < best[0]:
                best = (key, i)
        if best is not None:
            used.add(best[1])
            right += 1
    return right, len(preds), sum(1 for g in gold if g[2] & vocab)


def bootstrap(outcomes: list[tuple], metric: str, n: int = 1000, seed: int = 0) -> tuple[float, float]:
    """Pure: 95% percentile interval of precision ("p") or recall ("r") over resampled units."""
    rng = random.Random(seed)
    vals = []
    k = len(outcomes)
    if k == 0:
        return 0.0, 0.0
    for _ in range(n):
        t = tally(outcomes[rng.randrange(k)] for _ in range(k))
        vals.append(t.prf()[0 if metric == "p" else 1])
    vals.sort()
    return vals[int(0.025 * n)], vals[int(0.975 * n) - 1]


ORIGINS = ("terminology", "mentions", "no exact name")  # where a linked name came from


def name_origin(text: str, cui: str, kinds: dict[tuple[str, str], set[str]], fold) -> str:
    """Pure: where the name that links `text` to `cui` came from: "terminology" (an
    ontology's or thesaurus's own name, a translation table, a glossary), "mentions" (only a
    gold corpus's annotated mentions, `text = "mentions"` name lists), or "no exact name"
    (the link is fuzzy: the concept has no name spelled as the text, after `fold`).
    `kinds`: (CUI, folded name) -> the kinds of the sources that give the concept that name."""
    found = kinds.get((cui, fold(text)), set())
    if "terminology" in found:
        return "terminology"
    return "mentions" if found else "no exact name"


def origin_outcomes(items: list[WholeItem], predicted: list[str | None], kinds: dict[tuple[str, str], set[str]],
                    fold) -> dict[str, tuple[int, int]]:
    """Pure: (right, linked) per name origin, over the links made on in-vocabulary mentions
    (precision's denominator)."""
    out = {o: (0, 0) for o in ORIGINS}
    for it, p in zip(items, predicted):
        if p is None or not it.in_vocab:
            continue
        o = name_origin(it.text, p, kinds, fold)
        r, n = out[o]
        out[o] = (r + int(p in it.gold), n + 1)
    return out


def name_kinds(rows: Iterable[tuple[str, str, str]], mention_sabs: set[str], fold) -> dict[tuple[str, str], set[str]]:
    """Pure: (CUI, folded name) -> {"terminology", "mentions"} from vocabulary atoms (cui, str,
    sab); `fold` folds names and texts alike (one fold for every language: a name may serve
    a text of another language, as an English name serves every grounder)."""
    kinds: dict[tuple[str, str], set[str]] = {}
    for cui, text, sab in rows:
        kinds.setdefault((cui, fold(text)), set()).add("mentions" if sab in mention_sabs else "terminology")
    return kinds


def calibrate_option(dev: dict[str, tuple[list[WholeItem], list[str | None], list[Link | None]]],
                     floor: float = CALIBRATION_PRECISION) -> tuple[float, float]:
    """Pure: the option gates (threshold, margin) under which the dense pass links the most dev
    mentions string matching left, while its own links keep precision (over in-vocabulary
    mentions, pooled over the dev sets: a set gives it a handful of links) >= `floor`. Ties: the
    higher threshold, then margin. None reaching the floor: the strictest gates of the grid."""
    best = None
    for t in GRID_T:
        for m in GRID_M:
            outs = []
            for items, string, links in dev.values():
                dense = [gate(link, t, m) for link in links]
                outs += whole_outcomes(items, [d if s is None else None for s, d in zip(string, dense)])
            d_only = tally(outs)
            if d_only.predicted_in and d_only.prf()[0] < floor:
                continue
            key = (d_only.right, t, m)
            if best is None or key > best:
                best = key
    return (best[1], best[2]) if best else (GRID_T[-1], GRID_M[-1])


def calibrate_spans(dev: list[tuple[SpanDoc, list[tuple[int, int, str]], list[tuple[int, int, Link]], set[str]]]) -> tuple[float, float]:
    """Pure: the span gates (threshold, margin) with the best micro F1 of both passes on the dev
    documents (each: its gold, the string predictions, the dense candidates not overlapping
    them, the vocabulary's CUIs). Ties: the higher threshold, then margin."""
    best = None
    for t in GRID_T:
        for m in GRID_M:
            outs = []
            for doc, string, cands, vocab in dev:
                dense = [(s, e, l.cui) for s, e, l in select_links(cands, t, m)]
                outs.append(span_outcome(doc.gold, string + dense, vocab))
            f = tally(outs).prf()[2]
            key = (round(f, 6), t, m)
            if best is None or key > best:
                best = key
    return best[1], best[2]


# ----------------------------------------------------------------------------- the run (I/O)
PASSES_BEGIN, PASSES_END = "<!-- grounding-passes:begin -->", "<!-- grounding-passes:end -->"
SPAN_LANGS = {"mantra": ("en", "fr", "es"), "ncbi": ("en",)}


def _whole_sets(data: Path, xrefs) -> dict[tuple[str, str, str], list[tuple[str, frozenset[str]]]]:
    """(set, lang, split) -> (mention text, gold CUIs)."""
    from benchmarks.grounding_eval import load_mantra, load_pubtator

    sets = {("QUAERO", "fr", "dev"): read_quaero(data / "quaero", "dev"),
            ("QUAERO", "fr", "test"): read_quaero(data / "quaero", "test"),
            ("NEREL-BIO", "ru", "dev"): read_nerel(data / "nerel-bio", "dev"),
            ("RuCCoN", "ru", "test"): read_ruccon(data / "ruccon", "test")}
    for lang in SPAN_LANGS["mantra"]:
        for d in load_mantra(data / "mantra-gsc", lang):
            sets.setdefault(("Mantra", lang, doc_split(d.doc_id)), []).extend(
                (d.text[m.start:m.end], m.cuis) for m in d.mentions)
    for split, name in (("dev", "NCBIdevelopset_corpus.txt"), ("test", "NCBItestset_corpus.txt")):
        for d in load_pubtator(data / "ncbi-disease" / name, xrefs):
            sets.setdefault(("NCBI-disease", "en", split), []).extend((d.text[m.start:m.end], m.cuis) for m in d.mentions if m.cuis)
    return sets


def _span_docs(data: Path, xrefs) -> dict[tuple[str, str, str], list[SpanDoc]]:
    from benchmarks.grounding_eval import load_mantra, load_pubtator

    out: dict[tuple[str, str, str], list[SpanDoc]] = {}
    for lang in SPAN_LANGS["mantra"]:
        for d in load_mantra(data / "mantra-gsc", lang):
            out.setdefault(("Mantra", lang, doc_split(d.doc_id)), []).append(
                SpanDoc(lang, d.doc_id, d.text, tuple((m.start, m.end, m.cuis) for m in d.mentions)))
    for split, name in (("dev", "NCBIdevelopset_corpus.txt"), ("test", "NCBItestset_corpus.txt")):
        for d in load_pubtator(data / "ncbi-disease" / name, xrefs):
            out.setdefault(("NCBI-disease", "en", split), []).append(
                SpanDoc("en", d.doc_id, d.text, tuple((m.start, m.end, m.cuis) for m in d.mentions)))
    return out


def run_passes(config: Path, data: Path, calibrate: bool, write: bool) -> int:
    import os
    import time

    import pyarrow.parquet as pq

    from benchmarks.grounding_eval import load_do_xrefs, write_block
    from mmedbench.cli import ground_vocabulary
    from schemas.config import load_config
    from schemas.parameters import dense_gates
    from tasks.grounding.dense import encode, span_candidates
    from tasks.grounding.dense_pass import casefolded_stopwords, encoder, name_index, tokens
    from tasks.grounding.grounder import Grounder
    from tasks.grounding.keys import option_concept
    from tasks.grounding.normalize import fold_term
    from tasks.grounding.stopwords import language_stopwords
    from common.encoders import EmbeddingCache

    t0 = time.time()
    loaded = load_config(config)
    g = loaded.config.grounding
    gates = dense_gates(g)
    work = loaded.resolve(loaded.config.work_dir)
    vdir = ground_vocabulary(loaded, "en")
    atoms = str(vdir / "atoms.parquet")
    t = pq.read_table(atoms, columns=["cui", "lang"])
    named_in: dict[str, set[str]] = {}
    for cui, lang in zip(t["cui"].to_pylist(), t["lang"].to_pylist()):
        named_in.setdefault(lang, set()).add(cui)
    xrefs = load_do_xrefs(data / "disease-ontology" / "allXREFinDO.tsv")
    whole_sets = _whole_sets(data, xrefs)
    span_sets = _span_docs(data, xrefs)
    langs = sorted({k[1] for k in whole_sets} | {k[1] for k in span_sets})
    reg = {c: loaded.registry[c] for c in sorted(set(langs) | {"en"})}
    enc = encoder(os.cpu_count() or 1)
    index = name_index(enc, {c: atoms for c in reg}, reg, str(work / "indexes"),
                       progress=lambda c, d, n: print(f"  embedding {c} names {d}/{n}", flush=True) if d == n else None)
    cache = EmbeddingCache(work / "indexes" / "dense" / enc.fingerprint[:16])
    grounders = {c: Grounder(Path(atoms), reg[c], work / "indexes", g.quickumls_threshold, g.quickumls_window) for c in langs}
    stop = {c: ({fold_term(w, "Latin" in reg[c].scripts) for w in language_stopwords(reg[c])}
                if reg[c].grounder != "dictionary" else set()) for c in langs}

    def links_of(lang: str, texts: list[str]) -> list[Link | None]:
        distinct = sorted(set(texts))
        if not distinct:
            return []
        emb = encode(enc, distinct, cache, side="query")
        row = {x: i for i, x in enumerate(distinct)}
        found = index.nearest(lang, emb)
        return [found[row[x]] for x in texts]

    # whole mentions: distinct (text, gold) per set
    whole: dict[tuple[str, str, str], tuple[list[WholeItem], list[str | None], list[Link | None]]] = {}
    for key, pairs in sorted(whole_sets.items()):
        _name, lang, _split = key
        vocab = named_in.get(lang, set()) | named_in.get("en", set())
        items = [WholeItem(lang, x, cuis, bool(cuis & vocab)) for x, cuis in sorted(set((x.strip(), c) for x, c in pairs if x.strip()),
                                                                                      key=lambda p: (p[0], sorted(p[1])))]
        string = [option_concept(it.text, [m.as_dict() for m in grounders[lang].ground(it.text)], g.min_score, stop[lang]) for it in items]
        whole[key] = (items, string, links_of(lang, [it.text for it in items]))
        print(f"  whole {key}: {len(items)} mentions", flush=True)
    # running text: string mentions, every span's link, and the spans no string mention overlaps
    spans: dict[tuple[str, str, str], list] = {}
    for key, docs in sorted(span_sets.items()):
        _name, lang, _split = key
        vocab = named_in.get(lang, set()) | named_in.get("en", set())
        stopc = casefolded_stopwords(reg[lang].model_dump_json())
        rows = []
        for d in docs:
            string = [(m.start, m.end, m.cui) for m in grounders[lang].ground(d.text) if m.score >= g.min_score]
            toks = tokens(d.text, reg[lang])
            every = span_candidates(d.text, toks, stopc, 3)
            free = set(span_candidates(d.text, toks, stopc, 3, [(s, e) for s, e, _c in string]))
            rows.append((d, string, every, free, vocab))
        texts = [d.text[s:e] for d, _st, every, _f, _v in rows for s, e in every]
        found = links_of(lang, texts)
        k = 0
        out = []
        for d, string, every, free, vocab in rows:
            cands = [(s, e, l) for (s, e), l in zip(every, found[k:k + len(every)]) if l is not None]
            k += len(every)
            out.append((d, string, cands, [c for c in cands if (c[0], c[1]) in free], vocab))
        spans[key] = out
        print(f"  spans {key}: {len(docs)} documents, {len(texts)} spans", flush=True)
    import pickle

    with open(work / "grounding-passes.pkl", "wb") as fh:  # counts and links, for --rerender (never committed)
        pickle.dump((whole, spans), fh)
    return finish(whole, spans, gates, config, calibrate, write, time.time() - t0, vocabulary_facts(loaded))


@dataclass(frozen=True)
class VocabularyFacts:
    """What the tables need of the vocabulary beyond the links: where each name came from
    (`name_kinds`) and which concepts an option may name as its answer."""
    kinds: dict[tuple[str, str], set[str]]
    answerable: frozenset[str]  # key group and a definition (tasks/grounding/keys.py answer_concepts)


def answerable_concepts(rows: Iterable[tuple[str, str, str | None]], key_groups: set[str]) -> frozenset[str]:
    """Pure: the concepts a build may make an exam answer's gold passage, from (cui, group,
    definition): a key group and a definition. An option linked to any other concept drops its
    item ("no definition", "not a key concept"); it never becomes a wrong gold passage."""
    return frozenset(c for c, g, d in rows if g in key_groups and d and d.strip())


def vocabulary_facts(loaded) -> VocabularyFacts:
    """`VocabularyFacts` of the config's grounding vocabulary (the `ground` command's, cached)."""
    import pyarrow.parquet as pq

    from mmedbench.cli import ground_vocabulary
    from tasks.grounding.normalize import fold_term

    vdir = ground_vocabulary(loaded, "en")
    t = pq.read_table(vdir / "atoms.parquet", columns=["cui", "str", "sab"])
    mention_sabs = {b.sab for b in loaded.config.vocabulary.name_lists if b.text == "mentions"}
    c = pq.read_table(vdir / "concepts.parquet", columns=["cui", "group", "definition"])
    return VocabularyFacts(
        name_kinds(zip(t["cui"].to_pylist(), t["str"].to_pylist(), t["sab"].to_pylist()), mention_sabs, fold_term),
        answerable_concepts(zip(c["cui"].to_pylist(), c["group"].to_pylist(), c["definition"].to_pylist()),
                            set(loaded.config.grounding.key_groups)))


def finish(whole, spans, gates, config, calibrate: bool, write: bool, wall: float,
           facts: VocabularyFacts | None = None) -> int:
    from benchmarks.grounding_eval import write_block

    if calibrate:
        dev_whole = {k: v for k, v in whole.items() if k[2] == "dev" and k[1] != "ru"}
        ot, om = calibrate_option(dev_whole)
        st, sm = calibrate_spans([(d, string, free, vocab) for k, rows in spans.items() if k[2] == "dev"
                                  for d, string, _all, free, vocab in rows])
        gates = {"span_threshold": st, "span_margin": sm, "option_threshold": ot, "option_margin": om}
        print(f"calibrated on dev: {gates}", flush=True)
    text = render_passes(whole, spans, gates, config, wall, facts)
    print(text)
    if write:
        write_block(text, PASSES_BEGIN, PASSES_END)
    return 0


def render_passes(whole, spans, gates: dict[str, float], config: Path, wall: float,
                  facts: VocabularyFacts | None = None) -> str:
    lines = [f"Gates ({Path(config).name}, [grounding]): span threshold {gates['span_threshold']:.2f}, margin "
             f"{gates['span_margin']:.2f}; option threshold {gates['option_threshold']:.2f}, margin {gates['option_margin']:.2f}."
             + (f" Whole run {wall / 60:.1f} min on this machine." if wall else " Drawn from the last run's saved links (`--rerender`)."), "",
             "**Whole mentions** (read as an exam option is; distinct mentions; P's interval: 95% bootstrap; "
             "\"P, as answers\": precision of the links to a concept a build may make an answer's gold passage, "
             "a key group with a definition, with its interval):", "",
             "| set | lang | split | mentions | in vocab | pass | linked | P | P 95% | P, all mentions | R | F1 | P, as answers | 95% |",
             "|---|---|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for key, (items, string, links) in sorted(whole.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        dense = [gate(l, gates["option_threshold"], gates["option_margin"]) for l in links]
        for name, pred in (("string", string), ("dense", dense), ("both", both(string, dense))):
            outs = whole_outcomes(items, pred)
            t = tally(outs)
            p, r, f = t.prf()
            lo, hi = bootstrap(outs, "p")
            answers = "| – | – |"
            if facts is not None:
                outs = whole_outcomes(items, as_answers(pred, facts.answerable))
                alo, ahi = bootstrap(outs, "p")
                answers = f"| {tally(outs).prf()[0]:.3f} | {alo:.3f}-{ahi:.3f} |"
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(items):,} | {t.gold:,} | {name} | {t.predicted:,} | "
                         f"{p:.3f} | {lo:.3f}-{hi:.3f} | {t.strict_precision():.3f} | {r:.3f} | {f:.3f} " + answers)
    if facts is not None:
        lines += render_origins(whole, facts.kinds)
    lines += ["", "**Spans in running text** (overlap with a gold mention of the predicted CUI):", "",
              "| set | lang | split | documents | gold in vocab | pass | predicted | P | R | F1 |", "|---|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for key, rows in sorted(spans.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        for name in ("string", "dense", "both"):
            outs = []
            for d, string, cands, free, vocab in rows:
                dense_all = [(s, e, l.cui) for s, e, l in select_links(cands, gates["span_threshold"], gates["span_margin"])]
                dense_free = [(s, e, l.cui) for s, e, l in select_links(free, gates["span_threshold"], gates["span_margin"])]
                pred = {"string": string, "dense": dense_all, "both": string + dense_free}[name]
                outs.append(span_outcome(d.gold, pred, vocab))
            t = tally(outs)
            p, r, f = t.prf()
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(rows):,} | {t.gold:,} | {name} | {t.predicted:,} | "
                         f"{p:.3f} | {r:.3f} | {f:.3f} |")
    return "\n".join(lines)


def render_origins(whole, kinds: dict[tuple[str, str], set[str]]) -> list[str]:
    """The string pass's whole-mention links by where the linked name came from (`name_origin`):
    right / linked on in-vocabulary mentions, and that precision."""
    from tasks.grounding.normalize import fold_term

    lines = ["", "**Whole mentions, string pass, by where the linked name came from** (right / linked where a right "
             "answer exists, P): a terminology's own name, only a gold corpus's annotated mentions (`text = \"mentions\"` "
             "name lists, their training splits), or no name spelled as the mention (a fuzzy match):", "",
             "| set | lang | split | " + " | ".join(ORIGINS) + " |", "|---|---|---|" + "---:|" * len(ORIGINS)]
    for key, (items, string, _links) in sorted(whole.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        by = origin_outcomes(items, string, kinds, fold_term)
        cells = [f"{r}/{n} ({r / n:.2f})" if n else "0/0" for r, n in (by[o] for o in ORIGINS)]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
    return lines


def rerender(config: Path, calibrate: bool, write: bool) -> int:
    """The tables again from the last run's saved links (a new calibration or new gates)."""
    import pickle

    from schemas.config import load_config
    from schemas.parameters import dense_gates

    loaded = load_config(config)
    with open(loaded.resolve(loaded.config.work_dir) / "grounding-passes.pkl", "rb") as fh:
        whole, spans = pickle.load(fh)
    return finish(whole, spans, dense_gates(loaded.config.grounding), config, calibrate, write, 0.0,
                  vocabulary_facts(loaded))
