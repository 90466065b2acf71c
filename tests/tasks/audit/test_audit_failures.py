"""Every audit check can fail: tamper with a copy of the sample release, re-sign the
manifest (so only the targeted check trips), and expect exactly that set of checks to fail.
And tampering nobody re-signs (issue 29): an edited audit report, a manifest whose version
was changed, a parquet file cut short or replaced: exit 1, the file named."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.audit.checks import _short
from tasks.audit.stage import audit_release
from tasks.release.stage import release_entries
from tests.card_figures import card_figures_drawn_once

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def figures_drawn_once():
    """Each re-signing and each audit writes the card again: its pictures are drawn once per
    distinct data (tests/card_figures.py)."""
    with card_figures_drawn_once() as drawn:
        yield drawn


def test_a_picture_drawn_once_is_the_picture_drawn_afresh(figures_drawn_once, tmp_path):
    """The same data twice is one drawing, written as the bytes matplotlib draws for it;
    other data is drawn afresh (a tampered release's pictures are never another's)."""
    import tasks.release.card as card
    from tasks.release import figures

    cells = {"cd/en": {"queries": 3, "documents": 9, "provenance": {"native": 3}}}
    other = {"cd/en": {"queries": 3, "documents": 9, "provenance": {"native": 2, "machine-translated": 1}}}
    before = len(figures_drawn_once)
    for data, name in ((cells, "a"), (cells, "b"), (other, "c")):
        card.provenance_figure(data, tmp_path / f"{name}.png")
        figures.provenance_figure(data, tmp_path / f"real-{name}.png")
    assert len(figures_drawn_once) == before + 2
    png = {p.stem: p.read_bytes() for p in tmp_path.glob("*.png")}
    assert png["a"] == png["b"] == png["real-a"] == png["real-b"] and png["c"] == png["real-c"] != png["a"]


def _rows(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines()]


def _write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def _manifest(release: Path) -> dict:
    return json.loads((release / "manifest.json").read_text())


def _derive_pivots(cell_dir: Path, task: str, lang: str) -> None:
    """Re-derive a cell's pivot files from its (tampered) queries and qrels, keeping each
    pivot query's provenance (a query new to the cell: an English item's)."""
    from tasks.release.writers import write_pivot_files

    old = {r["_id"]: r["provenance"] for r in _rows(cell_dir / "pivot-queries.jsonl")} if (cell_dir / "pivot-queries.jsonl").exists() else {}
    item_langs = {q["_id"]: "en" for q in _rows(cell_dir / "queries.jsonl")}
    item_langs.update({i: "en" if p == "native" else "xx" for i, p in old.items()})
    write_pivot_files(cell_dir, task, lang, item_langs)


def _resign(release: Path, manifest: dict | None = None, recount: bool = True, derive: bool = True,
            derive_pivots: bool = True) -> None:
    """Re-sign the manifest; with `derive`, first re-derive the per-split parquet files (and, with
    `derive_pivots`, the pivot controls) from the (tampered) BEIR files, as a consistent forger would."""
    from tasks.release.hub import write_split_files
    from tasks.release.writers import pivot_count

    m = manifest or _manifest(release)
    if derive:
        sets = _rows(release / "cd" / "confusion_sets.jsonl")
        for cell in m["cells"]:
            task, lang = cell.split("/")
            if derive_pivots:
                _derive_pivots(release / task / lang, task, lang)
            write_split_files(release / task / lang, task, [s for s in sets if s["lang"] == lang])
        _derive_twins(release, m)
    if recount:
        for cell in m["cells"]:
            task, lang = cell.split("/")
            d = release / task / lang
            m["cells"][cell]["queries"] = len(_rows(d / "queries.jsonl"))
            m["cells"][cell]["documents"] = len(_rows(d / "corpus.jsonl"))
            m["cells"][cell]["qrels"] = sum(len(p.read_text().splitlines()) - 1 for p in (d / "qrels").glob("*.tsv"))
            m["cells"][cell].pop("pivots", None)
            if (block := pivot_count(d, lang)) is not None:
                m["cells"][cell]["pivots"] = block
    if derive:
        _rewrite_card(release, m)
    m["files"] = release_entries(release)
    (release / "manifest.json").write_text(json.dumps(m, ensure_ascii=False, sort_keys=True, indent=2) + "\n")


def _rewrite_card(release: Path, manifest: dict) -> None:
    """The card and its pictures written again from the (tampered) release, as a consistent
    forger would (the audit's `card` check compares the card with exactly this)."""
    from tasks.audit.card_check import source_items_on_card
    from tasks.release.card import write_card

    card = (release / "README.md").read_text(encoding="utf-8")
    report = json.loads((release / "build_report.json").read_text(encoding="utf-8"))
    try:
        write_card(manifest, report, release, source_items_on_card(card, manifest))
    except (OSError, ValueError, KeyError, TypeError):
        pass  # a release the card cannot be made from: `card` fails too


def _derive_twins(release: Path, manifest: dict) -> None:
    """Re-derive each cell's parquet twins (corpus, queries, pivot queries, qrels) and the
    confusion sets' from the (tampered) JSONL/TSV files, as a consistent forger would; a
    file whose rows break the parquet schema is left as it was (`twins` then fails too)."""
    import pyarrow as pa

    from common.parquet import write_parquet
    from schemas.records import CONFUSION_SET_ARROW, DOCUMENT_ARROW, QUERY_ARROW

    def derive(rows, schema, path):
        try:
            write_parquet(pa.Table.from_pylist(rows, schema=schema), path)
        except (pa.ArrowException, ValueError, TypeError):
            pass

    for cell in manifest["cells"]:
        d = release / cell
        for name, schema in (("corpus", DOCUMENT_ARROW), ("queries", QUERY_ARROW), ("pivot-queries", QUERY_ARROW)):
            if (d / f"{name}.jsonl").exists():
                derive([{k: r.get(k) for k in schema.names} for r in _rows(d / f"{name}.jsonl")], schema, d / f"{name}.parquet")
        qrels = sorted((*line.split("\t"), p.stem) for p in sorted((d / "qrels").glob("*.tsv"))
                       for line in p.read_text(encoding="utf-8").splitlines()[1:] if line)
        try:
            table = pa.table({"query-id": [q[0] for q in qrels], "corpus-id": [q[1] for q in qrels],
                              "score": pa.array([int(q[2]) for q in qrels], pa.int32()), "split": [q[-1] for q in qrels]})
        except (ValueError, IndexError):
            continue
        write_parquet(table, d / "qrels.parquet")
    derive([{k: r.get(k) for k in CONFUSION_SET_ARROW.names} for r in _rows(release / "cd" / "confusion_sets.jsonl")],
           CONFUSION_SET_ARROW, release / "cd" / "confusion_sets.parquet")


def _without_stored_report(checks) -> list:
    """The checks but `audit_report`, which fails exactly when another does: the stored
    report (every check passed) no longer matches what the audit finds."""
    failed = {c.name for c in checks if not c.passed}
    assert ("audit_report" in failed) == bool(failed - {"audit_report"}), failed
    return [c for c in checks if c.name != "audit_report"]


def _failed(release: Path) -> set[str]:
    return {c.name for c in _without_stored_report(audit_release(release).checks) if not c.passed}


def _failures(release: Path) -> dict[str, list[str]]:
    return {c.name: c.failures for c in _without_stored_report(audit_release(release).checks) if not c.passed}


def test_untouched_copy_passes(release_copy):
    assert _failed(release_copy) == set()


def test_hashes_fail_on_a_tampered_file(release_copy):
    p = release_copy / "xqa" / "en" / "corpus.jsonl"
    rows = _rows(p)
    rows[0]["text"] += " Tampered."
    _write_rows(p, rows)
    failures = _failures(release_copy)
    assert failures.pop("hashes") == ["xqa/en/corpus.jsonl: sha256 differs from the manifest"]
    # nobody re-derived its parquet twin: the release contradicts itself, too
    assert failures == {"twins": ["xqa/en/corpus.parquet: differs from xqa/en/corpus.jsonl: row 1, field 'text': "
                                  f"{_short(rows[0]['text'][:-len(' Tampered.')])}, its twin {_short(rows[0]['text'])}"]}


def test_hashes_fail_on_an_unlisted_file(release_copy):
    (release_copy / "xqa" / "en" / "extra.jsonl").write_text("{}\n")
    assert _failures(release_copy) == {"hashes": ["xqa/en/extra.jsonl: not listed in the manifest"],
                                       "file_kinds": ["xqa/en/extra.jsonl: not a kind of file a release holds"]}


def test_schemas_fail_on_a_bad_cui(release_copy):
    p = release_copy / "xqa" / "fr" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["cuis"] = ["X123"]
    _write_rows(p, rows)
    _resign(release_copy)
    assert _failed(release_copy) == {"schemas"}


def test_concept_overlap_fails_when_a_cui_is_in_two_cells(release_copy):
    en = _rows(release_copy / "xqa" / "en" / "queries.jsonl")
    p = release_copy / "evidence" / "fr" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["cuis"] = rows[0]["cuis"] + [en[0]["cuis"][0]]
    _write_rows(p, rows)
    _resign(release_copy)
    assert _failed(release_copy) == {"concept_overlap"}


def _inject_query(release: Path, cell: str, query: dict) -> None:
    task, lang = cell.split("/")
    d = release / task / lang
    rows = _rows(d / "queries.jsonl") + [query]
    _write_rows(d / "queries.jsonl", sorted(rows, key=lambda r: r["_id"]))
    doc = _rows(d / "corpus.jsonl")[0]["_id"]
    with (d / "qrels" / "test.tsv").open("a") as fh:
        fh.write(f"{query['_id']}\t{doc}\t1\n")
    _resign(release)


def test_query_overlap_fails_on_a_near_duplicate_pivot(release_copy):
    """The same question in another language: caught through its English pivot."""
    src = _rows(release_copy / "xqa" / "en" / "queries.jsonl")[0]
    words = src["pivot_text"].split()
    words[-2] = "quickly " + words[-2]
    fr = _rows(release_copy / "xqa" / "fr" / "queries.jsonl")[0]
    _inject_query(release_copy, "xqa/fr", {**fr, "_id": "zz-injected", "cuis": ["C9999991"], "pivot_text": " ".join(words),
                                            "text": fr["text"] + " (bis, autre formulation de la question)"})
    assert _failed(release_copy) == {"query_overlap"}


def test_query_overlap_fails_on_an_exact_duplicate_text(release_copy):
    ja = _rows(release_copy / "xqa" / "ja" / "queries.jsonl")[0]
    _inject_query(release_copy, "evidence/ja", {**ja, "_id": "zz-copy", "cuis": ["C9999992"],
                                                "pivot_text": "An unrelated English pivot about something else entirely."})
    assert _failed(release_copy) == {"query_overlap"}


def test_qrels_fail_on_a_missing_document(release_copy):
    p = release_copy / "xqa" / "es" / "qrels" / "test.tsv"
    q = _rows(release_copy / "xqa" / "es" / "queries.jsonl")[0]["_id"]
    p.write_text(p.read_text() + f"{q}\tno-such-doc\t1\n")
    _resign(release_copy)
    assert _failed(release_copy) == {"qrels_integrity"}


def test_qrels_fail_when_a_query_has_no_relevant_document(release_copy):
    p = release_copy / "evidence" / "ru" / "qrels" / "test.tsv"
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0]] + lines[2:]) + "\n")
    _resign(release_copy)
    assert _failed(release_copy) == {"qrels_integrity"}


def test_language_check_fails_on_english_in_the_chinese_cell(release_copy):
    p = release_copy / "xqa" / "zh" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["text"] = "Which treatment is recommended first for adults with this heart condition today?"
    _write_rows(p, rows)
    _resign(release_copy)
    assert _failed(release_copy) == {"language_and_script"}


def test_tier_ordering_fails_when_tiers_are_swapped(release_copy):
    p = release_copy / "cd" / "confusion_sets.jsonl"
    swap = {"easy": "hard", "hard": "easy", "medium": "medium"}
    _write_rows(p, [{**r, "tier": swap[r["tier"]]} for r in _rows(p)])
    _resign(release_copy)
    assert _failed(release_copy) == {"tier_ordering"}


def test_confusion_sets_fail_when_a_target_disagrees_with_its_query(release_copy):
    p = release_copy / "cd" / "confusion_sets.jsonl"
    rows = _rows(p)
    rows[0]["target_cui"] = rows[0]["distractor_cuis"][0]
    _write_rows(p, rows)
    _resign(release_copy)
    assert _failed(release_copy) == {"confusion_sets"}


def test_counts_fail_when_the_manifest_lies(release_copy):
    m = _manifest(release_copy)
    m["cells"]["cd/ja"]["queries"] += 1
    _resign(release_copy, m, recount=False)
    assert _failed(release_copy) == {"counts"}


def test_counts_fail_when_a_split_file_disagrees_with_the_beir_files(release_copy):
    """The `datasets` configs' per-split files must hold the cell's rows."""
    import pyarrow.parquet as pq

    p = release_copy / "cd" / "fr" / "top_ranked" / "test.parquet"
    pq.write_table(pq.read_table(p).slice(1), p)
    _resign(release_copy, derive=False)
    assert _failures(release_copy) == {
        "counts": ["cd/fr/top_ranked/test.parquet: 8 rows, the cell's BEIR files have 9"],
        "twins": ["cd/fr/top_ranked/test.parquet: differs from cd/fr/queries.jsonl and cd/confusion_sets.jsonl: 8 rows, its twin 9"]}


def test_licence_fails_on_a_restricted_source(release_copy):
    m = _manifest(release_copy)
    m["sources_srl"]["HPO"] = 3
    _resign(release_copy, m)
    assert _failed(release_copy) == {"licence_policy"}


def test_cli_audit_exit_codes(release_copy):
    from typer.testing import CliRunner

    from mmedbench.cli import app

    ok = CliRunner().invoke(app, ["audit", str(release_copy)])
    assert ok.exit_code == 0 and "PASSED" in ok.output
    p = release_copy / "xqa" / "en" / "queries.jsonl"
    p.write_text(p.read_text().replace('"lang":"en"', '"lang":"fr"', 1))
    bad = CliRunner().invoke(app, ["audit", str(release_copy)])
    assert bad.exit_code == 1 and "FAILED" in bad.output


def test_trivial_match_fails_when_a_cd_query_is_its_entry_title(release_copy):
    p = release_copy / "cd" / "fr" / "queries.jsonl"
    rows = _rows(p)
    corpus = {d["_id"]: d for d in _rows(release_copy / "cd" / "fr" / "corpus.jsonl")}
    rows[0]["text"] = corpus[rows[0]["cuis"][0]]["title"].upper()  # case does not hide it
    _write_rows(p, rows)
    _resign(release_copy)
    assert _failed(release_copy) == {"trivial_match"}


def test_trivial_match_fails_when_a_cd_query_stands_in_its_entry_text(release_copy):
    p = release_copy / "cd" / "en" / "queries.jsonl"
    rows = _rows(p)
    c = release_copy / "cd" / "en" / "corpus.jsonl"
    corpus = _rows(c)
    target = next(d for d in corpus if d["_id"] == rows[0]["cuis"][0])
    target["text"] += f" Also called {rows[0]['text']}."
    _write_rows(c, corpus)
    _resign(release_copy)
    assert _failed(release_copy) == {"trivial_match"}


def test_concept_overlap_in_scope_all_fails_on_a_distractor_that_is_a_key_concept_elsewhere(release_copy):
    keys = {c for q in release_copy.glob("*/*/queries.jsonl") for r in _rows(q) for c in r["cuis"]}
    s = next(s for s in _rows(release_copy / "cd" / "confusion_sets.jsonl") if set(s["distractor_cuis"]) - keys)
    distractor = sorted(set(s["distractor_cuis"]) - keys)[0]
    p = release_copy / "xqa" / "en" / "queries.jsonl"
    rows = _rows(p)
    rows[0]["cuis"] = sorted(set(rows[0]["cuis"]) | {distractor})
    _write_rows(p, rows)
    _resign(release_copy)
    assert _manifest(release_copy)["config"]["overlap"] == {"scope": "all"}  # the default
    assert _failed(release_copy) == {"concept_overlap"}
    m = _manifest(release_copy)
    m["config"]["overlap"] = {"scope": "key"}  # a distractor is no key concept
    _resign(release_copy, m)
    # every check passes; the stored report (the build's) gave other figures, so it alone fails
    assert {c.name for c in audit_release(release_copy).checks if not c.passed} == {"audit_report"}
    m["config"]["overlap"] = {"scope": "all"}
    _resign(release_copy, m)
    check = next(c for c in audit_release(release_copy).checks if c.name == "concept_overlap")
    assert any(f.startswith(f"{distractor}: in cells ") for f in check.failures)


# ----------------------------------------------------------------------------- pivot controls
def _tamper_pivots(release: Path, cell: str, edit) -> None:
    """Edit a cell's pivot-queries.jsonl rows (edit(rows) -> rows), then re-sign as a consistent
    forger would: per-split files and the manifest's counts follow the tampered file."""
    import pyarrow as pa

    from common.parquet import write_parquet
    from schemas.records import QUERY_ARROW

    p = release / cell / "pivot-queries.jsonl"
    rows = edit(_rows(p))
    _write_rows(p, rows)
    write_parquet(pa.Table.from_pylist(rows, schema=QUERY_ARROW), p.with_suffix(".parquet"))
    _resign(release, derive_pivots=False)


def _pivot_failures(release: Path) -> list[str]:
    return next(c for c in audit_release(release).checks if c.name == "pivot_queries").failures


def test_pivot_queries_fail_on_an_id_that_is_no_query_of_the_cell(release_copy):
    def edit(rows):
        rows[0]["_id"] = "zz-no-such-query"
        return sorted(rows, key=lambda r: r["_id"])
    first = _rows(release_copy / "xqa" / "ja" / "pivot-queries.jsonl")[0]["_id"]
    _tamper_pivots(release_copy, "xqa/ja", edit)
    assert _failed(release_copy) == {"pivot_queries"}
    failures = _pivot_failures(release_copy)
    assert "xqa/ja/pivot-queries.jsonl:6: query 'zz-no-such-query': not a query of the cell" in failures
    assert f"xqa/ja/pivot-queries.jsonl: query {first!r} has a pivot_text and is missing" in failures


def test_pivot_queries_fail_when_a_split_differs(release_copy):
    def edit(rows):
        rows[1]["split"] = "dev"
        return rows
    _tamper_pivots(release_copy, "evidence/zh", edit)
    assert _failed(release_copy) == {"pivot_queries"}
    assert any(f.endswith("split 'dev', the query's is 'test'") for f in _pivot_failures(release_copy))


def test_pivot_queries_fail_when_a_text_differs_from_the_pivot_text(release_copy):
    def edit(rows):
        rows[0]["text"] = rows[0]["text"] + " And what else?"
        return rows
    _tamper_pivots(release_copy, "cd/fr", edit)
    assert _failed(release_copy) == {"pivot_queries"}
    assert [f.split(": ", 2)[-1] for f in _pivot_failures(release_copy)] == ["text differs from the query's pivot_text"]


def test_pivot_queries_fail_when_a_pivot_is_not_english(release_copy):
    def edit(rows):
        rows[0]["lang"] = "ru"
        return rows
    _tamper_pivots(release_copy, "xqa/ru", edit)
    assert _failed(release_copy) == {"pivot_queries"}
    assert [f.split(": ", 2)[-1] for f in _pivot_failures(release_copy)] == ["lang 'ru', expected 'en'"]


def test_pivot_queries_fail_when_a_query_with_a_pivot_is_missing(release_copy):
    dropped = _rows(release_copy / "evidence" / "es" / "pivot-queries.jsonl")[2]["_id"]
    _tamper_pivots(release_copy, "evidence/es", lambda rows: rows[:2] + rows[3:])
    assert _failed(release_copy) == {"pivot_queries"}
    failures = _pivot_failures(release_copy)
    assert failures[0] == f"evidence/es/pivot-queries.jsonl: query {dropped!r} has a pivot_text and is missing"
    assert len(failures) == 2 and failures[1].startswith("evidence/es/pivot-qrels/test.tsv: ")  # its qrel is no pivot query's


def test_pivot_queries_fail_on_a_pivot_file_in_an_english_cell(release_copy):
    fr = _rows(release_copy / "xqa" / "fr" / "pivot-queries.jsonl")
    en = _rows(release_copy / "xqa" / "en" / "queries.jsonl")
    _write_rows(release_copy / "xqa" / "en" / "pivot-queries.jsonl",
                [{**fr[0], "_id": q["_id"], "text": q["pivot_text"], "cuis": q["cuis"], "split": q["split"]} for q in en])
    (release_copy / "xqa" / "en" / "pivot-qrels").mkdir()
    (release_copy / "xqa" / "en" / "pivot-qrels" / "test.tsv").write_text((release_copy / "xqa" / "en" / "qrels" / "test.tsv").read_text())
    _resign(release_copy, derive_pivots=False)
    assert "pivots" not in _manifest(release_copy)["cells"]["xqa/en"]
    assert _failed(release_copy) == {"pivot_queries"}
    assert _pivot_failures(release_copy) == ["xqa/en/pivot-queries.jsonl: an English cell has no pivot control (its queries are English)"]


def test_pivot_queries_fail_when_pivot_qrels_lose_a_row(release_copy):
    p = release_copy / "cd" / "ja" / "pivot-qrels" / "test.tsv"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    _resign(release_copy, derive_pivots=False)
    assert _failed(release_copy) == {"pivot_queries"}
    assert _pivot_failures(release_copy) == [f"cd/ja/pivot-qrels/test.tsv: missing the cell's qrel {lines[1]!r}"]


def test_pivot_queries_fail_on_an_impossible_provenance(release_copy):
    """A query written in Japanese has no English of its own; terminology is a cd concept's name."""
    written_in_ja = next(q["_id"] for q in _rows(release_copy / "xqa" / "ja" / "queries.jsonl") if q["provenance"] == "native")
    translated = next(q["_id"] for q in _rows(release_copy / "xqa" / "ja" / "queries.jsonl") if q["provenance"] != "native")

    def edit(rows):
        for r in rows:
            r["provenance"] = {written_in_ja: "native", translated: "terminology"}.get(r["_id"], r["provenance"])
        return rows
    _tamper_pivots(release_copy, "xqa/ja", edit)
    assert _failed(release_copy) == {"pivot_queries"}
    assert sorted(f.split(": ", 2)[-1].split(" (")[0] for f in _pivot_failures(release_copy)) == [
        "provenance 'native' for a query written in ja", "provenance 'terminology' in a xqa cell"]


def test_schemas_fail_on_a_pivot_query_with_a_pivot_text(release_copy):
    def edit(rows):
        rows[0]["pivot_text"] = rows[0]["text"]
        return rows
    _tamper_pivots(release_copy, "cd/zh", edit)
    assert _failed(release_copy) == {"schemas"}


def test_counts_fail_when_the_manifest_misstates_a_pivot_control(release_copy):
    m = _manifest(release_copy)
    m["cells"]["xqa/es"]["pivots"]["queries"] -= 1
    _resign(release_copy, m, recount=False)
    assert _failed(release_copy) == {"counts"}


def test_counts_fail_when_a_pivot_split_file_disagrees(release_copy):
    import pyarrow.parquet as pq

    p = release_copy / "cd" / "es" / "pivot-top_ranked" / "test.parquet"
    pq.write_table(pq.read_table(p).slice(1), p)
    _resign(release_copy, derive=False)
    assert _failed(release_copy) == {"counts", "twins"}


def test_query_overlap_reads_each_pivot_once(release_copy):
    """The pivot files repeat the queries' pivot_text: the zero-overlap check reads it from the
    queries alone (no pivot is its own duplicate, and no query is skipped)."""
    check = next(c for c in audit_release(release_copy).checks if c.name == "query_overlap")
    total = sum(c["queries"] for c in _manifest(release_copy)["cells"].values())
    assert check.passed and check.detail.startswith(f"{total} queries, ")


# --- tampering nobody re-signed (issue 29) ------------------------------------------------------

def _cli_audit(release: Path):
    from typer.testing import CliRunner

    from mmedbench.cli import app

    return CliRunner().invoke(app, ["audit", str(release)])


@pytest.mark.parametrize("name", ["audit_report.json", "audit_report.md"])
def test_an_edited_audit_report_fails_hashes(release_copy, name):
    p = release_copy / name
    p.write_text(p.read_text().replace("FAIL", "pass").replace("false", "true") + " ")
    assert _failures(release_copy) == {"hashes": [f"{name}: sha256 differs from the manifest"]}
    r = _cli_audit(release_copy)
    assert r.exit_code == 1 and f"{name}: sha256 differs from the manifest" in r.output


def test_a_manifest_whose_version_was_changed_fails(release_copy, tmp_path):
    m = _manifest(release_copy)
    m["version"] = "0.1.1"
    (release_copy / "manifest.json").write_text(json.dumps(m, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    # the card names 0.1.0 where the manifest now gives 0.1.1 (`card`, issue 47)
    from tasks.audit.card_check import quote_line

    card = [f"README.md:{n}: {quote_line(old)}; the release's files give {quote_line(new)}"
            for n, old, new in _version_lines(release_copy)]
    assert _failures(release_copy) == {"manifest_identity": ["manifest.json: version '0.1.1' but README.md names '0.1.0'"],
                                       "card": card}
    named = release_copy.rename(tmp_path / "0.1.0")  # where a release lives: releases/<version>
    assert _failures(named) == {"manifest_identity": ["manifest.json: version '0.1.1' but the release folder is '0.1.0'",
                                                      "manifest.json: version '0.1.1' but README.md names '0.1.0'"],
                                "card": card}
    r = _cli_audit(named)
    assert r.exit_code == 1 and "manifest.json: version '0.1.1' but the release folder is '0.1.0'" in r.output


def _version_lines(release: Path) -> list[tuple[int, str, str]]:
    """The card's lines naming version 0.1.0, as (line, text, the text naming 0.1.1)."""
    def bumped(line: str) -> str:  # the release's version, not the code's ("mmedbench 0.1.0+g...")
        return line.replace("mmedbench 0.1.0", "\0").replace("0.1.0", "0.1.1").replace("0_1_0", "0_1_1").replace(
            "\0", "mmedbench 0.1.0")

    lines = (release / "README.md").read_text(encoding="utf-8").split("\n")
    return [(i + 1, l, bumped(l)) for i, l in enumerate(lines) if bumped(l) != l]


def test_a_release_under_its_own_version_passes(release_copy, tmp_path):
    assert _failed(release_copy.rename(tmp_path / "0.1.0")) == set()


@pytest.mark.parametrize("how", ["truncated", "other bytes"])
def test_a_damaged_parquet_fails_hashes_by_name_with_exit_1(release_copy, how):
    """It used to be `manifest.json: unreadable manifest`, exit 2."""
    name = "xqa/fr/corpus.parquet"
    p = release_copy / name
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2] if how == "truncated" else b"PAR1 not a parquet file PAR1")
    failures = _failures(release_copy)
    assert failures.keys() == {"hashes", "counts", "twins", "card"}
    assert failures["card"][0].startswith("README.md: cannot be written again from the release, so it cannot be checked (")
    assert failures["hashes"] == [f"{name}: sha256 differs from the manifest"]
    assert [f.split(" (")[0] for f in failures["counts"]] == [f"{name}: unreadable"]
    assert [f.split(" (")[0] for f in failures["twins"]] == [f"{name}: unreadable"]
    r = _cli_audit(release_copy)
    assert r.exit_code == 1, r.output
    assert f"{name}: sha256 differs from the manifest" in r.output and "unreadable manifest" not in r.output


def test_undecodable_bytes_in_a_jsonl_file_fail_the_audit_not_the_command(release_copy):
    p = release_copy / "xqa" / "en" / "queries.jsonl"
    p.write_bytes(p.read_bytes() + b"\xff\xfe\n")
    failures = _failures(release_copy)
    assert failures == {"hashes": ["xqa/en/queries.jsonl: sha256 differs from the manifest"],
                        "schemas": ["xqa/en/queries.jsonl:7: expected UTF-8 text, found byte 0xff",
                                    "xqa/en/queries.jsonl:7: invalid JSON (Expecting value)"],
                        "counts": ["xqa/en/queries.jsonl: 7 rows, manifest says 6"],
                        "card": ["README.md: cannot be written again from the release, so it cannot be checked "
                                 "(UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 2290: invalid "
                                 "start byte)"]}
    r = _cli_audit(release_copy)
    assert r.exit_code == 1 and "Traceback" not in r.output
