"""Audit a release folder using nothing but the folder.

Each check is a small function returning an AuditCheck; `audit_release` runs them all.
A check lists its failures (capped) so that a broken release says exactly what broke.
"""
from __future__ import annotations

import io
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from pydantic import ValidationError

from schemas.config import Language
from common.jsonio import file_digest
from common.text import char_shingles, jaccard, normalize
from schemas.records import TASKS, TIERS, AuditCheck, ConfusionSet, Document, PivotQuery, Qrel, Query, ReleaseManifest
from tasks.allocation.concept_entries import gives_away
from tasks.dedup.near_duplicates import NearDuplicateIndex
from tasks.translation import langid
from tasks.translation.gates import detect_languages, text_gates
from tasks.release.hub import PIVOT_QUERIES
from tasks.release.writers import file_rows, release_files
from tasks.audit import tier_readings
from tasks.audit.integrity import hash_problems, identity_problems

MAX_FAILURES = 20
_LANG = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")  # schemas.records.LangCode


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
        # a task's corpus is the same file in every language (hundreds of thousands of
        # passages): parsed once per distinct content, its rows shared (read-only)
        self._parsed: dict[bytes, tuple[list[tuple[int, dict]], list[tuple[int, str]]]] = {}
        self.sha256: dict[str, str] = {}  # relative path -> hex digest of the files read here
        for cell in sorted(self.manifest_raw.get("cells", {})):
            task, _, lang = cell.partition("/")
            if task not in TASKS or not _LANG.match(lang):  # never a path outside the release
                self.errors.append(f"manifest.json: cell {cell!r}: expected '<task>/<language code>'")
                continue
            d = self.root / task / lang
            self.cells[cell] = {
                "task": task, "lang": lang,
                "corpus": self._jsonl(d / "corpus.jsonl"),
                "queries": self._jsonl(d / "queries.jsonl"),
                "qrels": self._qrels(d / "qrels"),
                # the pivot control (None: the cell has no pivot-queries.jsonl)
                "pivot_queries": self._jsonl(d / PIVOT_QUERIES) if (d / PIVOT_QUERIES).exists() else None,
                "pivot_qrels": self._qrels(d / "pivot-qrels"),
            }
        self.confusion = self._jsonl(self.root / "cd" / "confusion_sets.jsonl")

    def _jsonl(self, path: Path) -> list[tuple[int, dict]]:
        if not path.exists():
            self.errors.append(f"{path.relative_to(self.root)}: missing")
            return []
        data = path.read_bytes()
        # the build that just wrote the release hashed it for the manifest (file_digest)
        hexdigest = self.sha256[path.relative_to(self.root).as_posix()] = file_digest(path)
        digest = bytes.fromhex(hexdigest)
        if digest not in self._parsed:
            rows, bad = [], []
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:  # a tampered or damaged file is a failed check, not a crash
                text = data.decode("utf-8", "replace")
                bad.append((data.count(b"\n", 0, exc.start) + 1, f"expected UTF-8 text, found byte 0x{data[exc.start]:02x}"))
            # universal newlines, as reading the file in text mode
            for n, line in enumerate(io.StringIO(text, newline=None), start=1):
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    bad.append((n, f"invalid JSON ({exc.msg})"))
                    continue
                if isinstance(row, dict):
                    rows.append((n, row))
                else:
                    bad.append((n, f"expected a JSON object, found {type(row).__name__}"))
            self._parsed[digest] = (rows, bad)
        rows, bad = self._parsed[digest]
        self.errors += [f"{path.relative_to(self.root)}:{n}: {msg}" for n, msg in bad]
        return rows

    def _qrels(self, folder: Path) -> list[tuple[str, int, list[str]]]:
        out = []
        for path in sorted(folder.glob("*.tsv")):
            data = path.read_bytes()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = data.count(b"\n", 0, exc.start) + 1
                self.errors.append(f"{path.relative_to(self.root)}:{line}: expected UTF-8 text, found byte 0x{data[exc.start]:02x}")
                continue
            lines = text.split("\n")
            if lines[0] != "query-id\tcorpus-id\tscore":
                self.errors.append(f"{path.relative_to(self.root)}:1: expected header 'query-id<TAB>corpus-id<TAB>score'")
            for n, line in enumerate(lines[1:], start=2):
                if line:
                    out.append((path.relative_to(self.root).as_posix(), n, line.split("\t")))
        return out


# ----------------------------------------------------------------------------- checks
def check_hashes(rel: Release) -> AuditCheck:
    listed = rel.manifest_raw.get("files", {})
    failures = hash_problems(rel.root, rel.manifest_raw, rel.sha256)  # the JSONL files were hashed when read
    # counted without the audit reports: the build's audit, which writes them, finds the
    # same figure as an audit of the published release (`audit_report` compares the two)
    data = [n for n in listed if n not in ("audit_report.json", "audit_report.md")] if isinstance(listed, dict) else []
    return _check("hashes", failures, f"{len(data)} files match their sha256 (the audit reports aside)")


def check_identity(rel: Release, name: str | None = None) -> AuditCheck:
    failures = identity_problems(rel.root, rel.manifest_raw, name)
    return _check("manifest_identity", failures,
                  f"version {rel.manifest_raw.get('version')} and build {str(rel.manifest_raw.get('build_id'))[:12]} "
                  "as the folder and the card name them")


def _invalid(rows: list[tuple[int, dict]], model) -> list[tuple[int, str]]:
    """(line, "field <loc>: <message>") of each row the model rejects (its first error)."""
    out = []
    for line, row in rows:
        try:
            model.model_validate(row)
        except ValidationError as exc:
            e = exc.errors()[0]
            out.append((line, f"field {'.'.join(map(str, e['loc']))}: {e['msg']}"))
    return out


def check_schemas(rel: Release) -> AuditCheck:
    failures = list(rel.errors)
    try:
        ReleaseManifest.model_validate(rel.manifest_raw)
    except ValidationError as exc:
        e = exc.errors()[0]
        failures.append(f"manifest.json: field {'.'.join(map(str, e['loc']))}: {e['msg']}")
    n = 0
    corpus_failures: dict[int, list[str]] = {}  # a corpus shared by cells (Release) is validated once
    for cell, c in rel.cells.items():
        n += len(c["corpus"])
        if id(c["corpus"]) not in corpus_failures:
            corpus_failures[id(c["corpus"])] = [f"{line}: {msg}" for line, msg in _invalid(c["corpus"], Document)]
        failures += [f"{cell}/corpus.jsonl:{f}" for f in corpus_failures[id(c["corpus"])]]
        n += len(c["queries"])
        bad = dict(_invalid(c["queries"], Query))
        for line, row in c["queries"]:
            if line in bad:
                failures.append(f"{cell}/queries.jsonl:{line}: {bad[line]}")
            elif row.get("lang") != c["lang"]:
                failures.append(f"{cell}/queries.jsonl:{line}: field 'lang': {row.get('lang')!r} in the {c['lang']} cell")
        n += len(c["qrels"])
        failures += _qrel_failures(c["qrels"])
    pivot_n, pivot_failures = _pivot_schema_failures(rel)
    n += pivot_n
    failures += pivot_failures
    for line, row in rel.confusion:
        n += 1
        try:
            ConfusionSet.model_validate(row)
        except ValidationError as exc:
            e = exc.errors()[0]
            failures.append(f"cd/confusion_sets.jsonl:{line}: field {'.'.join(map(str, e['loc']))}: {e['msg']}")
    return _check("schemas", failures, f"{n} records valid")


def _pivot_schema_failures(rel: Release) -> tuple[int, list[str]]:
    """(records, failures) of the cells' pivot-queries.jsonl (PivotQuery) and pivot-qrels/*.tsv."""
    n, failures = 0, []
    for cell, c in rel.cells.items():
        rows = c["pivot_queries"] or []
        n += len(rows) + len(c["pivot_qrels"])
        failures += [f"{cell}/{PIVOT_QUERIES}:{line}: {msg}" for line, msg in _invalid(rows, PivotQuery)]
        failures += _qrel_failures(c["pivot_qrels"])
    return n, failures


def _qrel_failures(rows: list) -> list[str]:
    """(path, line, fields) of BEIR qrels rows that are not 'query-id corpus-id integer score'."""
    failures = []
    for path, line, fields in rows:
        if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
            failures.append(f"{path}:{line}: expected 'query-id<TAB>corpus-id<TAB>integer score'")
            continue
        try:
            Qrel(query_id=fields[0], corpus_id=fields[1], score=int(fields[2]))
        except ValidationError as exc:
            failures.append(f"{path}:{line}: {exc.errors()[0]['msg']}")
    return failures


def concept_roles(rel: Release) -> dict[str, set[str]]:
    """Every concept's cells, by role: "key" (a query's key concept; a cd set's target) and
    "all" (key, or a confusion set's distractor)."""
    key: dict[str, set[str]] = defaultdict(set)
    for cell, c in rel.cells.items():
        for _, q in c["queries"]:
            for cui in q.get("cuis", []):
                key[cui].add(cell)
    every = defaultdict(set, {c: set(v) for c, v in key.items()})
    for _, s in rel.confusion:
        for cui in s.get("distractor_cuis", []):
            every[cui].add(f"cd/{s.get('lang')}")
    return {"key": key, "all": every}


def overlap_scope(rel: Release) -> str:
    return rel.manifest_raw.get("config", {}).get("overlap", {}).get("scope", "key")


def check_concept_overlap(rel: Release) -> AuditCheck:
    """Zero overlap in the scope the manifest declares; the other scope's figure is reported."""
    scope = overlap_scope(rel)
    roles = concept_roles(rel)
    shared = {k: sorted(c for c, cells in v.items() if len(cells) > 1) for k, v in roles.items()}
    failures = [f"{cui}: in cells {' and '.join(sorted(roles[scope][cui]))} ({'any role' if scope == 'all' else 'key concept'})"
                for cui in shared[scope]]
    other = "all" if scope == "key" else "key"
    detail = (f"scope {scope}: {len(roles[scope])} concepts, each in one cell; "
              f"scope {other}: {len(shared[other])} of {len(roles[other])} concepts in two or more cells")
    return _check("concept_overlap", failures, detail)


def check_query_overlap(rel: Release, languages: dict[str, Language], dedup: dict, seed: int) -> AuditCheck:
    failures = []
    seen_exact: dict[tuple[str, str], str] = {}
    index = NearDuplicateIndex(dedup["threshold"], dedup["num_perm"], seed)
    seen_ids: dict[str, str] = {}
    queries = sorted((q.get("_id", ""), cell, q) for cell, c in rel.cells.items() for _, q in c["queries"])

    def n_of(lang: str) -> int:
        return languages[lang].shingle_n if lang in languages else 5

    # every text signed in one batch (the checks below are unchanged: only faster)
    index.prepare(pair for _, _, q in queries for pair in (
        (q.get("text") or "", n_of(q.get("lang", "en"))), (q.get("pivot_text") or "", languages["en"].shingle_n)))
    for qid, cell, q in queries:
        if qid in seen_ids:
            failures.append(f"{qid}: query id in {seen_ids[qid]} and {cell}")
            continue
        seen_ids[qid] = cell
        lang = q.get("lang", "en")
        n = n_of(lang)
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
    with langid.detected_in_batches():  # each cell's queries identified at once, on every core
        for cell, c in sorted(rel.cells.items()):
            lang = languages.get(c["lang"])
            if lang is None:
                failures.append(f"{cell}: language {c['lang']!r} not in the manifest's registry")
                continue
            detect_languages([q.get("text", "") for _, q in c["queries"]], lang.code, backend)
            for line, q in c["queries"]:
                n += 1
                for failure in text_gates(q.get("text", ""), lang, backend):  # its str(): the gate's sentence
                    failures.append(f"{cell}/queries.jsonl:{line}: {failure}")
    return _check("language_and_script", failures, f"{n} queries in their cell's language and script")


def check_trivial_match(rel: Release) -> AuditCheck:
    """No cd query gives its answer away: its words are never its relevant entry's title,
    and never stand in the entry's title or text (case, accents, spacing and punctuation
    ignored). Otherwise string matching, not discrimination, solves the set."""
    failures, n = [], 0
    for cell, c in sorted(rel.cells.items()):
        if c["task"] != "cd":
            continue
        docs = {d.get("_id"): d for _, d in c["corpus"]}
        relevant = defaultdict(list)
        for _, _n, row in c["qrels"]:
            if len(row) == 3 and row[2].strip() not in ("", "0"):
                relevant[row[0]].append(row[1])
        for line, q in c["queries"]:
            for did in relevant.get(q.get("_id"), []):
                n += 1
                d = docs.get(did)
                if d is not None and gives_away(q.get("text", ""), {"title": d.get("title", ""), "text": d.get("text", "")}):
                    failures.append(f"{cell}/queries.jsonl:{line}: query {q.get('text')!r} is found in its entry {did}")
    return _check("trivial_match", failures, f"{n} cd queries, none found in its relevant entry by string matching")


# tiers must be ordered for retrievers, not only by construction: read through the English
# pivots in every cd cell, and through the systems above chance on the cell's own queries
# (tasks/audit/tier_readings.py), on cells large enough for a difference to be more than noise
TIER_MIN_SETS = tier_readings.TIER_MIN_SETS
TIER_FALL_Z = tier_readings.TIER_FALL_Z
TIER_RISE_Z = tier_readings.TIER_RISE_Z


def _release_results(rel: Release) -> dict | None:
    """The build's own evaluation results, when the release holds them (listed and hashed by
    its manifest, `build_id` this build's); else None."""
    path = rel.root / "evaluation" / "results.json"
    if "evaluation/results.json" not in rel.manifest_raw.get("files", {}) or not path.is_file():
        return None
    try:
        results = json.loads(path.read_bytes())
    except ValueError:
        return None  # `hashes` and `file_kinds` judge the file; here it is no evidence
    if not isinstance(results, dict) or results.get("build_id") != rel.manifest_raw.get("build_id"):
        return None
    return results


def tier_statistics(rel: Release, languages: dict[str, Language]) -> dict[str, dict]:
    """Per tier, over every cd cell: sets and mean target-distractor title similarity; per cd
    cell: its readings (tasks/audit/tier_readings.py) and their verdict."""
    stats = {t: {"sets": 0, "similarity": []} for t in TIERS}
    for cell, c in sorted(rel.cells.items()):
        if c["task"] != "cd":
            continue
        docs = {d["_id"]: d for _, d in c["corpus"] if "_id" in d}
        for _, s in rel.confusion:
            if s.get("lang") != c["lang"] or s.get("tier") not in stats or s.get("target_cui") not in docs:
                continue
            members = [s["target_cui"]] + [d for d in s.get("distractor_cuis", []) if d in docs]
            t = stats[s["tier"]]
            t["sets"] += 1
            target_name = docs[s["target_cui"]]["title"]
            t["similarity"] += [jaccard(char_shingles(target_name, 3), char_shingles(docs[d]["title"], 3)) for d in members[1:]]
    cells = tier_readings.cd_cells((c["lang"], [d for _, d in c["corpus"]], [q for _, q in c["queries"]])
                                   for c in rel.cells.values() if c["task"] == "cd")
    confusion = [s for _, s in rel.confusion]
    readings = tier_readings.bm25_readings(cells, confusion, languages)
    readings += tier_readings.evaluation_readings(_release_results(rel), cells, confusion)
    return {"tiers": {t: {"sets": v["sets"],
                          "mean_similarity": round(sum(v["similarity"]) / len(v["similarity"]), 4) if v["similarity"] else None}
                      for t, v in stats.items()},
            "readings": readings, "verdicts": tier_readings.judge(readings)}


def check_tiers(rel: Release, languages: dict[str, Language]) -> tuple[AuditCheck, dict]:
    stats = tier_statistics(rel, languages)
    tiers = stats["tiers"]
    failures = []
    sims = [tiers[t]["mean_similarity"] for t in TIERS]
    if any(s is None for s in sims):
        failures.append("a tier has no confusion set: " + ", ".join(f"{t}={tiers[t]['sets']}" for t in TIERS))
    elif not sims[0] < sims[1] < sims[2]:
        failures.append(f"mean target-distractor similarity not increasing easy<medium<hard: {sims}")
    per_cell = []
    for v in stats["verdicts"]:
        failures += v.failures
        pivot = (f"pivots {v.pivot.ladder()}, nearest-distractor closeness {v.pivot.closeness_ladder()}"
                 if v.pivot is not None and v.pivot.sets() else "no pivots")
        per_cell.append(f"{v.cell} {pivot}; own queries {v.label()}")
    detail = ("; ".join(f"{t}: sets={tiers[t]['sets']} sim={tiers[t]['mean_similarity']}" for t in TIERS)
              + " | within-set accuracy@1 easy/medium/hard: " + (" | ".join(per_cell) or "no cd cell"))
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


def _rows(path: Path) -> int | str | None:
    """A file's rows as the manifest counts them, or why they cannot be counted."""
    try:
        return file_rows(path)
    except (OSError, ValueError) as exc:  # a damaged parquet (pyarrow's errors are ValueErrors), undecodable text
        return f"unreadable ({type(exc).__name__})"


def check_counts(rel: Release) -> AuditCheck:
    failures = []
    listed = rel.manifest_raw.get("files", {})
    actual = {name: {"rows": _rows(p)} for name, p in release_files(rel.root)}
    for name, entry in sorted(listed.items()):
        rows = actual.get(name, {}).get("rows")
        if isinstance(rows, str):
            failures.append(f"{name}: {rows}, manifest says {entry.get('rows')} rows")
        elif name in actual and entry.get("rows") != rows:
            failures.append(f"{name}: {rows} rows, manifest says {entry.get('rows')}")
    for cell, c in sorted(rel.cells.items()):
        m = rel.manifest_raw["cells"][cell]
        got = {"queries": len(c["queries"]), "documents": len(c["corpus"]), "qrels": len(c["qrels"])}
        for k, v in got.items():
            if m.get(k) != v:
                failures.append(f"{cell}: {v} {k}, manifest says {m.get(k)}")
        if got["queries"] == 0 and not rel.manifest_raw.get("config", {}).get("allow_empty_cells", False):
            failures.append(f"{cell}: empty cell")
        failures += _pivot_count_failures(rel, cell, c, actual)
        # the per-split files behind the card's `datasets` configs (releases that have them: the
        # manifest lists them) hold the same rows as the BEIR files
        if not any(name.startswith(f"{cell}/queries/") for name in listed):
            continue
        for split in sorted({q.get("split") for _, q in c["queries"]} | {Path(p).stem for p, _, _ in c["qrels"]}):
            expect = {f"queries/{split}.parquet": sum(1 for _, q in c["queries"] if q.get("split") == split),
                      f"qrels/{split}.parquet": sum(1 for p, _, _ in c["qrels"] if Path(p).stem == split)}
            if c["task"] == "cd":
                expect[f"top_ranked/{split}.parquet"] = expect[f"queries/{split}.parquet"]
            for name, n in expect.items():
                rows = actual.get(f"{cell}/{name}", {}).get("rows")
                if isinstance(rows, str):
                    continue  # unreadable: said above
                if rows != n:
                    failures.append(f"{cell}/{name}: {rows if rows is not None else 'missing'} rows, the cell's BEIR files have {n}")
    return _check("counts", failures, f"{len(rel.cells)} cells match the manifest")


def _pivot_count_failures(rel: Release, cell: str, c: dict, actual: dict[str, dict]) -> list[str]:
    """A cell's manifest `pivots` block and the pivot subset's files against its pivot files."""
    if not _has_pivot_controls(rel):
        return []
    failures = []
    block = rel.manifest_raw["cells"][cell].get("pivots")
    rows = [r for _, r in c["pivot_queries"] or []]
    if c["lang"] == "en":
        if block is not None:
            failures.append(f"{cell}: an English cell has no pivot control, the manifest gives it {block}")
        return failures
    got = {"queries": len(rows), "of": len(c["queries"]), "dev_queries": sum(1 for r in rows if r.get("split") == "dev"),
           "provenance": dict(sorted(Counter(str(r.get("provenance")) for r in rows).items()))}
    listed = {k: (block or {}).get(k) for k in got}
    if block is None or listed != got:
        failures.append(f"{cell}: pivots {got}, manifest says {listed if block is not None else 'nothing'}")
    if not rows:
        return failures
    splits = sorted({Path(p).stem for p, _, _ in c["qrels"]})
    expect = {PIVOT_QUERIES.replace(".jsonl", ".parquet"): len(rows)}
    for split in splits:
        expect[f"pivot-queries/{split}.parquet"] = sum(1 for r in rows if r.get("split") == split)
        expect[f"pivot-qrels/{split}.parquet"] = sum(1 for p, _, _ in c["pivot_qrels"] if Path(p).stem == split)
        if c["task"] == "cd":
            expect[f"pivot-top_ranked/{split}.parquet"] = expect[f"pivot-queries/{split}.parquet"]
    for name, n in expect.items():
        rows_on_disk = actual.get(f"{cell}/{name}", {}).get("rows")
        if rows_on_disk != n:
            failures.append(f"{cell}/{name}: {rows_on_disk if rows_on_disk is not None else 'missing'} rows, "
                            f"the cell's pivot files have {n}")
    return failures


def _has_pivot_controls(rel: Release) -> bool:
    """A release from before pivot controls has no `pivots` block and no pivot file anywhere."""
    return any("pivots" in m for m in rel.manifest_raw.get("cells", {}).values()) or any(
        c["pivot_queries"] is not None or c["pivot_qrels"] for c in rel.cells.values())


def _pivot_row_failures(where: str, r: dict, q: dict, c: dict) -> list[str]:
    """What is wrong with one pivot query row `r` of cell `c`, against the cell's query `q`."""
    failures = []
    if r.get("text") != q.get("pivot_text"):
        failures.append(f"{where}: text differs from the query's pivot_text")
    if r.get("lang") != "en":
        failures.append(f"{where}: lang {r.get('lang')!r}, expected 'en'")
    if r.get("split") != q.get("split"):
        failures.append(f"{where}: split {r.get('split')!r}, the query's is {q.get('split')!r}")
    if r.get("cuis") != q.get("cuis"):
        failures.append(f"{where}: cuis differ from the query's")
    if (r.get("provenance") == "terminology") != (c["task"] == "cd"):
        failures.append(f"{where}: provenance {r.get('provenance')!r} in a {c['task']} cell "
                        f"(terminology: a cd concept's English name, and only that)")
    elif c["task"] != "cd" and q.get("provenance") == "native" and r.get("provenance") != "human-translated":
        failures.append(f"{where}: provenance {r.get('provenance')!r} for a query written in {c['lang']} "
                        f"(its English is its source's translation: human-translated)")
    return failures


def _pivot_qrels_failures(rel: Release, cell: str, c: dict, pivot_ids: set) -> list[str]:
    """BEIR reads pivot-qrels/<split>.tsv with the pivot queries: they must be the cell's qrels
    of exactly those queries, a file for each of the cell's qrels files and no other."""
    failures = []
    want = Counter((Path(p).name, tuple(f)) for p, _, f in c["qrels"] if f and f[0] in pivot_ids)
    have = Counter((Path(p).name, tuple(f)) for p, _, f in c["pivot_qrels"])
    for (split_file, fields), k in sorted((want - have).items()):
        failures.append(f"{cell}/pivot-qrels/{split_file}: missing the cell's qrel {chr(9).join(fields)!r}" + (f" ({k}x)" if k > 1 else ""))
    for (split_file, fields), k in sorted((have - want).items()):
        failures.append(f"{cell}/pivot-qrels/{split_file}: {chr(9).join(fields)!r} is not a qrel of a pivot query in "
                        f"the cell's qrels/{split_file}" + (f" ({k}x)" if k > 1 else ""))
    beir = {p.name for p in (rel.root / cell / "qrels").glob("*.tsv")}
    pivot = {p.name for p in (rel.root / cell / "pivot-qrels").glob("*.tsv")}
    failures += [f"{cell}/pivot-qrels/{f}: missing (the cell has qrels/{f})" for f in sorted(beir - pivot)]
    failures += [f"{cell}/pivot-qrels/{f}: the cell has no qrels/{f}" for f in sorted(pivot - beir)]
    return failures


def check_pivot_queries(rel: Release) -> AuditCheck:
    """Each non-English cell's pivot control is its own queries asked in English: every query
    with a `pivot_text` is in pivot-queries.jsonl under its id and split, with that text, in
    English, with its key concepts; nothing else is; pivot-qrels/<split>.tsv holds exactly the
    cell's qrels of those queries. Its provenance is possible for the query: `terminology` in
    cd only (the concept's English name), and a query written in its cell's language has no
    English of its own (`human-translated`: its source's translation). English cells have none."""
    if not _has_pivot_controls(rel):
        return _check("pivot_queries", [], "no pivot control: a release from before pivot controls")
    failures, n, cells = [], 0, 0
    for cell, c in sorted(rel.cells.items()):
        name = f"{cell}/{PIVOT_QUERIES}"
        queries = {q.get("_id"): q for _, q in c["queries"]}
        expected = {} if c["lang"] == "en" else {i: q for i, q in queries.items() if q.get("pivot_text")}
        rows = c["pivot_queries"]
        if rows is None:
            if expected:
                failures.append(f"{cell}: {len(expected)} queries have a pivot_text, and there is no {PIVOT_QUERIES}")
            if c["pivot_qrels"]:
                failures.append(f"{cell}: pivot-qrels without {PIVOT_QUERIES}")
            continue
        cells += 1
        if c["lang"] == "en":
            failures.append(f"{name}: an English cell has no pivot control (its queries are English)")
            continue
        ids = [r.get("_id") for _, r in rows]
        if ids != sorted(ids, key=str):
            failures.append(f"{name}: not sorted by _id")
        seen: set = set()
        for line, r in rows:
            n += 1
            qid, q = r.get("_id"), queries.get(r.get("_id"))
            where = f"{name}:{line}: query {qid!r}"
            if qid in seen:
                failures.append(f"{where}: listed twice")
            seen.add(qid)
            if q is None:
                failures.append(f"{where}: not a query of the cell")
                continue
            if qid not in expected:
                failures.append(f"{where}: the cell's query has no pivot_text")
                continue
            failures += _pivot_row_failures(where, r, q, c)
        for qid in sorted(expected.keys() - seen, key=str):
            failures.append(f"{name}: query {qid!r} has a pivot_text and is missing")
        failures += _pivot_qrels_failures(rel, cell, c, set(ids))
    return _check("pivot_queries", failures, f"{n} pivot queries in {cells} cells, each its cell's query asked in English, "
                                             f"with the cell's qrels")


def check_licence(rel: Release) -> AuditCheck:
    cfg = rel.manifest_raw.get("config", {})
    max_srl = cfg.get("vocabulary", {}).get("max_srl", 0)
    srl = rel.manifest_raw.get("sources_srl", {})
    failures = [f"source {sab} has restriction level {lvl} > {max_srl}" for sab, lvl in sorted(srl.items()) if lvl > max_srl]
    if not srl:
        failures.append("manifest lists no vocabulary sources (sources_srl)")
    return _check("licence_policy", failures, f"{len(srl)} vocabulary sources at SRL <= {max_srl}")


# ------------------------------------------------- internal consistency (beyond hashes)
# A manifest can be re-hashed after an edit; what the release says about itself cannot all
# be made to agree by hand (git fsck, ir_datasets): each parquet file equals its JSONL/TSV
# twin, every file is of a kind the release format has, every file the card links is
# there, and the stored audit report is what the audit finds now.

def _parquet_rows(path: Path) -> list[dict] | str:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's errors are OSErrors and ValueErrors
        return f"unreadable ({type(exc).__name__})"


def _project(rows: list[dict], names: list[str]) -> list[dict]:
    return [{k: r.get(k) for k in names} for r in rows]


def _tsv_qrels(c_qrels: list, folder: str, split: str | None = None) -> list[dict]:
    """A cell's TSV qrels of one folder (qrels, pivot-qrels) as parquet rows; with `split`,
    that split's file only, else every split's with a `split` column (qrels.parquet)."""
    out = []
    for path, _line, fields in c_qrels:
        p = Path(path)
        if p.parent.name != folder or (split is not None and p.stem != split):
            continue
        score = int(fields[2]) if len(fields) == 3 and fields[2].lstrip("-").isdigit() else fields[2:]
        row = {"query-id": fields[0] if fields else None, "corpus-id": fields[1] if len(fields) > 1 else None, "score": score}
        if split is None:
            row["split"] = p.stem
        out.append(row)
    return out


def _expected_twin(rel: Release, name: str) -> tuple[str, list[dict]] | None:
    """(the twin it is derived from, the rows it must hold, in order) for a parquet file of
    the release; None for a parquet file the format derives from nothing."""
    from schemas.records import CONFUSION_SET_ARROW, DOCUMENT_ARROW, QUERY_ARROW

    if name == "cd/confusion_sets.parquet":
        return "cd/confusion_sets.jsonl", _project([r for _, r in rel.confusion], CONFUSION_SET_ARROW.names)
    m = re.fullmatch(r"([^/]+/[^/]+)/(.+)\.parquet", name)
    if not m or m.group(1) not in rel.cells:
        return None
    cell, rest = m.groups()
    c = rel.cells[cell]
    queries = [r for _, r in c["queries"]]
    pivots = [r for _, r in c["pivot_queries"] or []]
    if rest == "corpus":
        return f"{cell}/corpus.jsonl", _project([r for _, r in c["corpus"]], DOCUMENT_ARROW.names)
    if rest in ("queries", "pivot-queries"):
        return f"{cell}/{rest}.jsonl", _project(queries if rest == "queries" else pivots, QUERY_ARROW.names)
    if rest == "qrels":  # every split's, in the writer's order
        rows = sorted(_tsv_qrels(c["qrels"], "qrels"), key=lambda r: (str(r["query-id"]), str(r["corpus-id"]), str(r["score"])))
        return f"{cell}/qrels/*.tsv", rows
    m = re.fullmatch(r"(pivot-)?(queries|qrels|top_ranked)/([^/]+)", rest)
    if not m:
        return None
    pivot, kind, split = m.groups()
    asked = pivots if pivot else queries
    if kind == "qrels":
        folder = f"{pivot or ''}qrels"
        return f"{cell}/{folder}/{split}.tsv", _tsv_qrels(c["pivot_qrels"] if pivot else c["qrels"], folder, split)
    in_split = [q for q in asked if q.get("split") == split]
    source = f"{cell}/{'pivot-queries' if pivot else 'queries'}.jsonl"
    if kind == "queries":
        return source, _project(in_split, QUERY_ARROW.names)
    sets = {r.get("set_id"): r for _, r in rel.confusion}
    ranked = []
    for q in in_split:
        s = sets.get(q.get("_id"), {})
        ranked.append({"query-id": q.get("_id"),
                       "corpus-ids": sorted({s.get("target_cui"), *s.get("distractor_cuis", [])} - {None}) or None})
    return f"{source} and cd/confusion_sets.jsonl", ranked


def _twin_difference(got: list[dict], expected: list[dict]) -> str | None:
    if got == expected:
        return None
    if len(got) != len(expected):
        return f"{len(got)} rows, its twin {len(expected)}"
    i = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
    field = next((k for k in sorted(set(got[i]) | set(expected[i])) if got[i].get(k) != expected[i].get(k)), "?")
    return f"row {i + 1}, field {field!r}: {_short(got[i].get(field))}, its twin {_short(expected[i].get(field))}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:45] + "..." + text[-12:]


def check_twins(rel: Release) -> AuditCheck:
    """Each parquet file holds exactly the rows of the JSONL/TSV file it is made from."""
    failures, n = [], 0
    for name, path in release_files(rel.root):
        if not name.endswith(".parquet"):
            continue
        twin = _expected_twin(rel, name)
        if twin is None:
            continue  # not a kind the format has: `file_kinds` names it
        source, expected = twin
        got = _parquet_rows(path)
        n += 1
        if isinstance(got, str):
            failures.append(f"{name}: {got}")
            continue
        columns = list(got[0]) if got else []
        if expected and got and set(columns) != set(expected[0]):
            failures.append(f"{name}: columns {', '.join(columns)}, its twin {source} has {', '.join(expected[0])}")
            continue
        if (what := _twin_difference(got, expected)) is not None:
            failures.append(f"{name}: differs from {source}: {what}")
    return _check("twins", failures, f"{n} parquet files equal their JSONL/TSV twins")


# The kinds of file a release holds, by pattern (not by name: new cells, languages,
# evaluation systems and figures need no change here). What the writers make:
# tasks/release/writers.py and hub.py (cells), card.py and croissant.py, the build and
# audit reports, and tasks/evaluation (an evaluated build's evaluation/ folder).
_WORD = r"[A-Za-z0-9][A-Za-z0-9_.+=-]*"  # a figure's, a system's or a qrels file's name
_SPLIT = r"[a-z][a-z0-9_]*"
_CELL = r"(?P<task>[a-z][a-z0-9_]*)/(?P<lang>[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?)"
RELEASE_FILE_KINDS: tuple[tuple[str, re.Pattern], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("manifest", r"manifest\.json"),
    ("card", r"README\.md"),
    ("Croissant metadata", r"croissant\.json"),
    ("build report", r"build_report\.json"),
    ("audit report", r"audit_report\.(?:json|md)"),
    ("card picture", rf"assets/{_WORD}\.png"),
    ("confusion sets", r"cd/confusion_sets\.(?:jsonl|parquet)"),
    ("cell file", rf"{_CELL}/(?:corpus|queries|pivot-queries)\.(?:jsonl|parquet)"),
    ("cell qrels", rf"{_CELL}/qrels\.parquet"),
    ("cell qrels of a split", rf"{_CELL}/(?:pivot-)?qrels/{_SPLIT}\.(?:tsv|parquet)"),
    ("cell file of a split", rf"{_CELL}/(?:pivot-)?(?:queries|top_ranked)/{_SPLIT}\.parquet"),
    ("evaluation results", r"evaluation/results\.(?:json|md)"),
    ("evaluation run", rf"evaluation/runs/{_WORD}/(?P<run_task>[a-z][a-z0-9_]*)-"
                       rf"(?P<run_lang>[a-z]{{2,3}}(?:-(?!pivot\.trec$)[A-Za-z0-9]{{2,8}})?)(?:-pivot)?\.trec"),
    ("evaluation qrels", rf"evaluation/qrels/{_WORD}\.qrels"),
    ("evaluation figure", rf"evaluation/figures/{_WORD}\.png"),
))


def file_kind(name: str) -> tuple[str, str | None] | None:
    """(kind, the cell it belongs to or None) of a release file's relative name; None: not a
    kind of file the release format has."""
    for kind, pattern in RELEASE_FILE_KINDS:
        m = pattern.fullmatch(name)
        if m:
            groups = m.groupdict()
            task, lang = groups.get("task") or groups.get("run_task"), groups.get("lang") or groups.get("run_lang")
            return kind, f"{task}/{lang}" if task else None
    return None


def check_file_kinds(rel: Release) -> AuditCheck:
    """Every file is of a kind the release format has, and a cell's files belong to a cell
    the manifest lists: a stray file (notes.txt, a cell nobody built) is named."""
    failures, n = [], 0
    for p in sorted(rel.root.rglob("*")):
        if p.is_dir() and not p.is_symlink():
            continue
        name = p.relative_to(rel.root).as_posix()
        n += name not in ("audit_report.json", "audit_report.md")  # counted as the build's audit counts
        if p.is_symlink() or not p.is_file():
            failures.append(f"{name}: a link or special file, not a release file")
            continue
        kind = file_kind(name)
        if kind is None:
            failures.append(f"{name}: not a kind of file a release holds")
        elif kind[1] is not None and kind[1] not in rel.manifest_raw.get("cells", {}):
            failures.append(f"{name}: {kind[0]} of cell {kind[1]}, which the manifest does not list")
    return _check("file_kinds", failures, f"{n} files, each of a kind the release format has (the audit reports aside)")


_MD_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HTML_LINK = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")
_YAML_PATH = re.compile(r"^\s*(?:-\s+)?path:\s*(\S+)\s*$", re.M)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def card_links(text: str) -> list[str]:
    """The local files a card names: Markdown links and pictures, HTML src/href, and the
    front matter's `datasets` data_files paths (web addresses and #anchors are not files)."""
    front = ""
    if text.startswith("---\n") and (end := text.find("\n---", 4)) != -1:
        front = text[4:end]
    found = _MD_LINK.findall(text) + _HTML_LINK.findall(text) + _YAML_PATH.findall(front)
    out = []
    for target in found:
        target = target.split("#", 1)[0].split("?", 1)[0]
        if target and not _SCHEME.match(target) and not target.startswith("//"):
            out.append(target)
    return sorted(set(out))


def check_card_links(rel: Release) -> AuditCheck:
    """Every file the card (README.md) links is in the release (a picture, a config's data file)."""
    from urllib.parse import unquote

    card = rel.root / "README.md"
    if not card.is_file():
        return _check("card_links", ["README.md: missing (the card)"], "")
    links = card_links(card.read_bytes().decode("utf-8", "replace"))
    failures = []
    root = rel.root.resolve()
    for link in links:
        target = (rel.root / unquote(link)).resolve()
        if not target.is_relative_to(root):
            failures.append(f"README.md links {link}, outside the release")
        elif "*" in link:  # a data_files glob: some file must match it
            if not list(rel.root.glob(unquote(link))):
                failures.append(f"README.md links {link}, which matches no file")
        elif not target.is_file():
            failures.append(f"README.md links {link}, which is not in the release")
    return _check("card_links", failures, f"{len(links)} files the card links are there")


STORED_REPORT = "audit_report.json"
STORED_MARKDOWN = "audit_report.md"


def report_markdown(report) -> str:
    lines = [f"# Audit of release {report.version}", "", f"Result: {'PASSED' if report.passed else 'FAILED'}", "",
             "| check | result | detail |", "|---|---|---|"]
    for c in report.checks:
        lines.append(f"| {c.name} | {'pass' if c.passed else 'FAIL'} | {c.detail} |")
    for c in report.checks:
        if c.failures:
            lines += ["", f"## {c.name}", ""] + [f"- {f}" for f in c.failures]
    return "\n".join(lines) + "\n"


def check_stored_report(rel: Release, rerun: list[AuditCheck]) -> AuditCheck:
    """The audit report stored in the release is what the audit finds now (`rerun`: this
    audit's other checks), and its Markdown is that report's. A check the stored report
    does not have (newer than the release) is not held against it; one it has and the
    audit does not, or one whose result differs, is."""
    from schemas.records import AuditReport

    path = rel.root / STORED_REPORT
    if not path.is_file():
        return _check("audit_report", [f"{STORED_REPORT}: missing (a published release holds its audit report)"], "")
    try:
        stored = AuditReport.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        return _check("audit_report", [f"{STORED_REPORT}: not an audit report ({exc.errors()[0]['msg']})"], "")
    failures = []
    if stored.version != str(rel.manifest_raw.get("version")):
        failures.append(f"{STORED_REPORT}: audits version {stored.version!r}, the manifest's is {rel.manifest_raw.get('version')!r}")
    now = {c.name: c for c in rerun}
    kept = [c for c in stored.checks if c.name != "audit_report"]
    for c in kept:
        if c.name not in now:
            failures.append(f"{STORED_REPORT}: check {c.name!r} is not one the audit runs")
        elif c != now[c.name]:
            said = "pass" if c.passed else "FAIL"
            found = "pass" if now[c.name].passed else "FAIL"
            failures.append(f"{STORED_REPORT}: check {c.name!r} says {said} ({c.detail}), the audit now finds {found} "
                            f"({now[c.name].detail})")
    if stored.passed != all(c.passed for c in stored.checks):
        failures.append(f"{STORED_REPORT}: says {'passed' if stored.passed else 'failed'}, its own checks say otherwise")
    md = rel.root / STORED_MARKDOWN
    if not md.is_file():
        failures.append(f"{STORED_MARKDOWN}: missing")
    elif md.read_bytes() != report_markdown(stored).encode("utf-8"):
        failures.append(f"{STORED_MARKDOWN}: is not {STORED_REPORT} as Markdown")
    newer = len(now.keys() - {c.name for c in kept})
    extra = f" ({newer} newer check(s) not in it)" if newer else ""
    return _check("audit_report", failures, f"the stored report matches this audit's {len(kept)} checks{extra}")
