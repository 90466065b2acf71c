"""Audit a release folder using nothing but the folder.

Each check is a small function returning an AuditCheck; `audit_release` runs them all.
A check lists its failures (capped) so that a broken release says exactly what broke.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

from pydantic import ValidationError

from schemas.config import Language
from common.jsonio import sha256_file
from common.text import char_shingles, jaccard, normalize
from schemas.records import TIERS, AuditCheck, AuditReport, ConfusionSet, Document, Qrel, Query, ReleaseManifest
from tasks.dedup.near_duplicates import NearDuplicateIndex
from tasks.translation.gates import text_gates
from tasks.release.writers import UNHASHED, file_entries

MAX_FAILURES = 20


def _check(name: str, failures: list[str], ok_detail: str) -> AuditCheck:
    detail = ok_detail if not failures else f"{len(failures)} failure(s)"
    return AuditCheck(name=name, passed=not failures, detail=detail, failures=failures[:MAX_FAILURES])


class Release:
    """The release loaded into memory (releases are small enough; paper scale is ~15k queries)."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.manifest_raw = json.loads((self.root / "manifest.json").read_text(encoding="utf-8"))
        self.cells: dict[str, dict] = {}
        self.errors: list[str] = []
        for cell in sorted(self.manifest_raw.get("cells", {})):
            task, lang = cell.split("/")
            d = self.root / task / lang
            self.cells[cell] = {
                "task": task, "lang": lang,
                "corpus": self._jsonl(d / "corpus.jsonl"),
                "queries": self._jsonl(d / "queries.jsonl"),
                "qrels": self._qrels(d / "qrels"),
            }
        self.confusion = self._jsonl(self.root / "cd" / "confusion_sets.jsonl")

    def _jsonl(self, path: Path) -> list[tuple[int, dict]]:
        rows = []
        if not path.exists():
            self.errors.append(f"{path.relative_to(self.root)}: missing")
            return rows
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                try:
                    rows.append((n, json.loads(line)))
                except json.JSONDecodeError as exc:
                    self.errors.append(f"{path.relative_to(self.root)}:{n}: invalid JSON ({exc.msg})")
        return rows

    def _qrels(self, folder: Path) -> list[tuple[str, int, list[str]]]:
        out = []
        for path in sorted(folder.glob("*.tsv")):
            lines = path.read_text(encoding="utf-8").split("\n")
            if lines[0] != "query-id\tcorpus-id\tscore":
                self.errors.append(f"{path.relative_to(self.root)}:1: expected header 'query-id<TAB>corpus-id<TAB>score'")
            for n, line in enumerate(lines[1:], start=2):
                if line:
                    out.append((path.relative_to(self.root).as_posix(), n, line.split("\t")))
        return out


# ----------------------------------------------------------------------------- checks
def check_hashes(rel: Release) -> AuditCheck:
    failures = []
    listed = rel.manifest_raw.get("files", {})
    actual = {p.relative_to(rel.root).as_posix() for p in rel.root.rglob("*") if p.is_file()} - UNHASHED
    for name in sorted(actual - listed.keys()):
        failures.append(f"{name}: not listed in the manifest")
    for name, entry in sorted(listed.items()):
        p = rel.root / name
        if not p.exists():
            failures.append(f"{name}: listed in the manifest but missing")
        elif sha256_file(p) != entry.get("sha256"):
            failures.append(f"{name}: sha256 differs from the manifest")
    return _check("hashes", failures, f"{len(listed)} files match their sha256")


def check_schemas(rel: Release) -> AuditCheck:
    failures = list(rel.errors)
    try:
        ReleaseManifest.model_validate(rel.manifest_raw)
    except ValidationError as exc:
        e = exc.errors()[0]
        failures.append(f"manifest.json: field {'.'.join(map(str, e['loc']))}: {e['msg']}")
    n = 0
    for cell, c in rel.cells.items():
        for kind, model in (("corpus", Document), ("queries", Query)):
            for line, row in c[kind]:
                n += 1
                try:
                    obj = model.model_validate(row)
                except ValidationError as exc:
                    e = exc.errors()[0]
                    failures.append(f"{cell}/{kind}.jsonl:{line}: field {'.'.join(map(str, e['loc']))}: {e['msg']}")
                    continue
                if kind == "queries" and obj.lang != c["lang"]:
                    failures.append(f"{cell}/queries.jsonl:{line}: field 'lang': {obj.lang!r} in the {c['lang']} cell")
        for path, line, fields in c["qrels"]:
            n += 1
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                failures.append(f"{path}:{line}: expected 'query-id<TAB>corpus-id<TAB>integer score'")
                continue
            try:
                Qrel(query_id=fields[0], corpus_id=fields[1], score=int(fields[2]))
            except ValidationError as exc:
                failures.append(f"{path}:{line}: {exc.errors()[0]['msg']}")
    for line, row in rel.confusion:
        n += 1
        try:
            ConfusionSet.model_validate(row)
        except ValidationError as exc:
            e = exc.errors()[0]
            failures.append(f"cd/confusion_sets.jsonl:{line}: field {'.'.join(map(str, e['loc']))}: {e['msg']}")
    return _check("schemas", failures, f"{n} records valid")


def check_concept_overlap(rel: Release) -> AuditCheck:
    owner: dict[str, str] = {}
    failures = []
    for cell, c in sorted(rel.cells.items()):
        for _, q in c["queries"]:
            for cui in q.get("cuis", []):
                if cui in owner and owner[cui] != cell:
                    failures.append(f"{cui}: key concept of {owner[cui]} and {cell} (query {q.get('_id')})")
                owner.setdefault(cui, cell)
    return _check("concept_overlap", failures, f"{len(owner)} key concepts, each in one cell")


def check_query_overlap(rel: Release, languages: dict[str, Language], dedup: dict, seed: int) -> AuditCheck:
    failures = []
    seen_exact: dict[tuple[str, str], str] = {}
    index = NearDuplicateIndex(dedup["threshold"], dedup["num_perm"], seed)
    seen_ids: dict[str, str] = {}
    queries = sorted((q.get("_id", ""), cell, q) for cell, c in rel.cells.items() for _, q in c["queries"])
    for qid, cell, q in queries:
        if qid in seen_ids:
            failures.append(f"{qid}: query id in {seen_ids[qid]} and {cell}")
            continue
        seen_ids[qid] = cell
        lang = q.get("lang", "en")
        n = languages[lang].shingle_n if lang in languages else 5
        for ns, text, k in ((f"text:{lang}", q.get("text") or "", n), ("pivot", q.get("pivot_text") or "", languages["en"].shingle_n)):
            if not text:
                continue
            key = (ns, normalize(text))
            if key in seen_exact:
                failures.append(f"{qid} ({cell}): same {ns} text as {seen_exact[key]}")
                continue
            seen_exact[key] = qid
            dup = index.find(qid, ns, text, k)
            if dup is not None:
                failures.append(f"{qid} ({cell}): {dup.reason}")
            index.add(qid, ns, text, k)
    return _check("query_overlap", failures, f"{len(queries)} queries, no exact or near-duplicate (native and pivot)")


def check_qrels(rel: Release) -> AuditCheck:
    failures = []
    for cell, c in sorted(rel.cells.items()):
        docs = {d.get("_id") for _, d in c["corpus"]}
        queries = {q.get("_id") for _, q in c["queries"]}
        relevant = Counter()
        for path, line, fields in c["qrels"]:
            if len(fields) != 3:
                continue
            q, d, s = fields
            if q not in queries:
                failures.append(f"{path}:{line}: query {q!r} not in queries.jsonl")
            if d not in docs:
                failures.append(f"{path}:{line}: document {d!r} not in corpus.jsonl")
            if s.isdigit() and int(s) > 0:
                relevant[q] += 1
        for q in sorted(queries - relevant.keys()):
            failures.append(f"{cell}: query {q!r} has no relevant document")
    return _check("qrels_integrity", failures, "every qrel resolves; every query has a relevant document")


def check_language(rel: Release, languages: dict[str, Language], backend: str | None = None) -> AuditCheck:
    failures = []
    n = 0
    for cell, c in sorted(rel.cells.items()):
        lang = languages.get(c["lang"])
        if lang is None:
            failures.append(f"{cell}: language {c['lang']!r} not in the manifest's registry")
            continue
        for line, q in c["queries"]:
            n += 1
            for reason in text_gates(q.get("text", ""), lang, backend):
                failures.append(f"{cell}/queries.jsonl:{line}: {reason}")
    return _check("language_and_script", failures, f"{n} queries in their cell's language and script")


_WORD = re.compile(r"\w+")


def bm25_rank_first(query: str, docs: dict[str, str], target: str, df: Counter, n_docs: int, avgdl: float) -> bool:
    q = _WORD.findall(normalize(query))
    scores = {}
    for did, text in docs.items():
        toks = _WORD.findall(normalize(text))
        tf = Counter(toks)
        s = 0.0
        for term in q:
            if tf[term]:
                idf = math.log(1 + (n_docs - df[term] + 0.5) / (df[term] + 0.5))
                s += idf * tf[term] * 2.2 / (tf[term] + 1.2 * (0.25 + 0.75 * len(toks) / avgdl))
        scores[did] = s
    best = scores[target]
    return best > 0 and all(best > v for k, v in scores.items() if k != target)


def tier_statistics(rel: Release) -> dict[str, dict]:
    stats = {t: {"sets": 0, "similarity": [], "bm25": []} for t in TIERS}
    for cell, c in rel.cells.items():
        if c["task"] != "cd":
            continue
        docs = {d["_id"]: d for _, d in c["corpus"] if "_id" in d}
        # BM25 baseline: can the target's English name pick its own entry's definition and
        # synonyms (titles left out) out of the set? Lexical look-alikes make that harder.
        texts = {k: d.get("text", "") for k, d in docs.items()}
        df = Counter(t for text in texts.values() for t in set(_WORD.findall(normalize(text))))
        avgdl = sum(len(_WORD.findall(normalize(t))) for t in texts.values()) / max(1, len(texts))
        queries = {q.get("_id"): q for _, q in c["queries"]}
        for _, s in rel.confusion:
            if s.get("lang") != c["lang"] or s.get("tier") not in stats or s.get("target_cui") not in docs:
                continue
            members = [s["target_cui"]] + [d for d in s.get("distractor_cuis", []) if d in docs]
            t = stats[s["tier"]]
            t["sets"] += 1
            target_name = docs[s["target_cui"]]["title"]
            t["similarity"] += [jaccard(char_shingles(target_name, 3), char_shingles(docs[d]["title"], 3)) for d in members[1:]]
            q = queries.get(s["set_id"])
            if q is not None:
                t["bm25"].append(bm25_rank_first(q.get("pivot_text") or "", {m: texts[m] for m in members}, s["target_cui"], df, len(texts), avgdl))
    return {t: {"sets": v["sets"],
                "mean_similarity": round(sum(v["similarity"]) / len(v["similarity"]), 4) if v["similarity"] else None,
                "bm25_accuracy": round(sum(v["bm25"]) / len(v["bm25"]), 4) if v["bm25"] else None,
                "bm25_n": len(v["bm25"])} for t, v in stats.items()}


def check_tiers(rel: Release) -> tuple[AuditCheck, dict]:
    stats = tier_statistics(rel)
    failures = []
    sims = [stats[t]["mean_similarity"] for t in TIERS]
    accs = [stats[t]["bm25_accuracy"] for t in TIERS]
    if any(s is None for s in sims):
        failures.append("a tier has no confusion set: " + ", ".join(f"{t}={stats[t]['sets']}" for t in TIERS))
    else:
        if not sims[0] < sims[1] < sims[2]:
            failures.append(f"mean target-distractor similarity not increasing easy<medium<hard: {sims}")
        for (a, b) in (("easy", "medium"), ("medium", "hard")):
            pa_, pb = stats[a]["bm25_accuracy"], stats[b]["bm25_accuracy"]
            if pa_ is None or pb is None:  # sets without queries: nothing measured (check_confusion_consistency says so)
                continue
            na, nb = max(1, stats[a]["bm25_n"]), max(1, stats[b]["bm25_n"])
            # a harder tier may not be *significantly* easier for BM25: two standard errors
            # of the difference, so that a few sets cannot fail a small release by chance
            margin = 2 * math.sqrt(pa_ * (1 - pa_) / na + pb * (1 - pb) / nb)
            if pb - pa_ > margin:
                failures.append(f"BM25 accuracy rises from {a} to {b} beyond noise: {accs} (margin {margin:.3f})")
    detail = "; ".join(f"{t}: sets={stats[t]['sets']} sim={stats[t]['mean_similarity']} bm25={stats[t]['bm25_accuracy']}" for t in TIERS)
    return _check("tier_ordering", failures, detail), stats


def check_confusion_consistency(rel: Release) -> AuditCheck:
    failures = []
    queries = {q.get("_id"): q for cell, c in rel.cells.items() if c["task"] == "cd" for _, q in c["queries"]}
    for line, s in rel.confusion:
        q = queries.get(s.get("set_id"))
        if q is None:
            failures.append(f"cd/confusion_sets.jsonl:{line}: set {s.get('set_id')!r} has no query")
        elif q.get("cuis") != [s.get("target_cui")] or q.get("lang") != s.get("lang"):
            failures.append(f"cd/confusion_sets.jsonl:{line}: set {s.get('set_id')!r} disagrees with its query's cuis or lang")
        if s.get("target_cui") in s.get("distractor_cuis", []):
            failures.append(f"cd/confusion_sets.jsonl:{line}: target is also a distractor")
    return _check("confusion_sets", failures, f"{len(rel.confusion)} sets match their queries")


def check_counts(rel: Release) -> AuditCheck:
    failures = []
    listed = rel.manifest_raw.get("files", {})
    actual = file_entries(rel.root)
    for name, entry in sorted(listed.items()):
        if name in actual and entry.get("rows") != actual[name].get("rows"):
            failures.append(f"{name}: {actual[name].get('rows')} rows, manifest says {entry.get('rows')}")
    for cell, c in sorted(rel.cells.items()):
        m = rel.manifest_raw["cells"][cell]
        got = {"queries": len(c["queries"]), "documents": len(c["corpus"]), "qrels": len(c["qrels"])}
        for k, v in got.items():
            if m.get(k) != v:
                failures.append(f"{cell}: {v} {k}, manifest says {m.get(k)}")
        if got["queries"] == 0 and not rel.manifest_raw.get("config", {}).get("allow_empty_cells", False):
            failures.append(f"{cell}: empty cell")
    return _check("counts", failures, f"{len(rel.cells)} cells match the manifest")


def check_licence(rel: Release) -> AuditCheck:
    cfg = rel.manifest_raw.get("config", {})
    max_srl = cfg.get("vocabulary", {}).get("max_srl", 0)
    srl = rel.manifest_raw.get("sources_srl", {})
    failures = [f"source {sab} has restriction level {lvl} > {max_srl}" for sab, lvl in sorted(srl.items()) if lvl > max_srl]
    if not srl:
        failures.append("manifest lists no vocabulary sources (sources_srl)")
    return _check("licence_policy", failures, f"{len(srl)} vocabulary sources at SRL <= {max_srl}")
