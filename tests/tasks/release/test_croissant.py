"""croissant.json of the built sample through mlcroissant itself: it validates (Python API and the
`mlcroissant validate` CLI), every record set loads offline with the same rows as the release's
own files, a wrong field type or a wrong hash fails, the file is listed, hashed, audited and
byte-identical when generated again, the RAI fields carry the build's numbers, pivot-query
record sets follow `pivot-queries.jsonl`, and an add-language release gets its own."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from schemas.records import TASKS
from tests.conftest import ROOT, SAMPLE_CELLS, SAMPLE_LANGUAGES, SAMPLE_PIVOT_CELLS, SAMPLE_QUOTAS

pytestmark = pytest.mark.slow
mlc = pytest.importorskip("mlcroissant")

DATE_WARNING = '[Metadata(MMed-Bench-IR)] Property "https://schema.org/datePublished" is recommended, but does not exist.'

# Loads every record set of a croissant.json with the network cut (any connection attempt
# raises) and mlcroissant's download cache in a fresh folder; prints the records as JSON.
LOADER = r"""
import json, socket, sys

def no_network(*args, **kwargs):
    raise OSError("network access attempted")

socket.socket.connect = socket.socket.connect_ex = no_network
socket.create_connection = socket.getaddrinfo = no_network

import mlcroissant as mlc

def plain(v):
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v

ds = mlc.Dataset(sys.argv[1])
out = {}
for rs in ds.metadata.record_sets:
    out[rs.uuid] = [{k.split("/", 1)[1]: plain(v) for k, v in r.items()} for r in ds.records(rs.uuid)]
print(json.dumps(out, ensure_ascii=False))
"""


def _jsonl(path: Path) -> list[dict]:
    # lines end at "\n" only: a text may hold U+2028 or U+0085, where str.splitlines would cut it
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def _qrels(cell_dir: Path) -> list[dict]:
    rows = []
    for tsv in sorted((cell_dir / "qrels").glob("*.tsv")):
        for line in tsv.read_text(encoding="utf-8").split("\n")[1:]:
            if not line:
                continue
            q, d, s = line.split("\t")
            rows.append({"query-id": q, "corpus-id": d, "score": int(s), "split": tsv.stem})
    return rows


def _load_offline(croissant: Path, cache: Path) -> dict[str, list[dict]]:
    env = dict(os.environ, CROISSANT_CACHE=str(cache))
    done = subprocess.run([sys.executable, "-c", LOADER, str(croissant)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _by_id(rows: list[dict], key) -> list[dict]:
    return sorted(rows, key=key)


@pytest.fixture(scope="module")
def release(sample_build) -> Path:
    return sample_build["release"]


@pytest.fixture(scope="module")
def manifest(release) -> dict:
    return json.loads((release / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def meta(release) -> dict:
    return json.loads((release / "croissant.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def loaded(release, tmp_path_factory) -> dict[str, list[dict]]:
    cache = tmp_path_factory.mktemp("croissant-cache")
    records = _load_offline(release / "croissant.json", cache)
    assert not any(cache.rglob("*")), "mlcroissant downloaded or extracted something"
    return records


def _record_set(meta: dict, set_id: str) -> dict:
    return next(r for r in meta["recordSet"] if r["@id"] == set_id)


# ----------------------------------------------------------------------------- validation
def test_validates_with_the_mlcroissant_api(release):
    ds = mlc.Dataset(str(release / "croissant.json"))
    issues = ds.metadata.ctx.issues
    assert not issues.errors
    # the one recommendation left out on purpose: a publication date would be clock time in the release
    assert set(issues.warnings) == {DATE_WARNING}
    assert ds.metadata.ctx.conforms_to.value == "http://mlcommons.org/croissant/1.1"
    assert ds.metadata.version == "0.1.0"


def test_the_mlcroissant_cli_validates_it(release, tmp_path):
    cli = Path(sys.executable).parent / "mlcroissant"
    if not cli.exists():
        pytest.skip("no mlcroissant CLI in this environment")
    ok = subprocess.run([str(cli), "validate", "--jsonld", str(release / "croissant.json")], capture_output=True, text=True,
                        timeout=300, env=dict(os.environ, CROISSANT_CACHE=str(tmp_path / "cache")))
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "error" not in ok.stderr.lower()
    bad = json.loads((release / "croissant.json").read_text(encoding="utf-8"))
    bad["recordSet"][0]["field"][0]["dataType"] = "sc:NoSuchType"
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    failed = subprocess.run([str(cli), "validate", "--jsonld", str(tmp_path / "bad.json")], capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, CROISSANT_CACHE=str(tmp_path / "cache")))
    assert failed.returncode == 1 and "NoSuchType" in failed.stderr


# ----------------------------------------------------------------------------- records
def _pivot_cells(release: Path, cells) -> list[str]:
    return [c for c in sorted(cells) if (release / c / "pivot-queries.jsonl").exists()]


def test_record_sets_cover_every_cell(meta, manifest, release):
    ids = [r["@id"] for r in meta["recordSet"]]
    cells = sorted(manifest["cells"])
    pivots = _pivot_cells(release, cells)
    expected = [f"{c.replace('/', '-')}-{kind}" for c in cells
                for kind in ("corpus", "queries", "qrels") + (("pivot-queries",) if c in pivots else ())] + ["cd-confusion-sets"]
    assert ids == expected and len(ids) == 3 * len(cells) + len(pivots) + 1 >= len(cells)
    # every non-English cell of the sample has its pivot control: one record set each
    assert pivots == [c for c in cells if not c.endswith("/en")] and len(pivots) == SAMPLE_PIVOT_CELLS
    queries = _record_set(meta, "xqa-ja-queries")
    types = {f["name"]: (f["dataType"], f.get("isArray", False)) for f in queries["field"]}
    assert types == {"_id": ("sc:Text", False), "text": ("sc:Text", False), "lang": ("sc:Text", False),
                     "cuis": ("sc:Text", True), "pivot_text": ("sc:Text", False), "provenance": ("sc:Text", False),
                     "split": ("sc:Text", False)}
    assert {f["name"]: f["dataType"] for f in _record_set(meta, "xqa-ja-qrels")["field"]}["score"] == "sc:Integer"


def test_every_record_set_loads_with_the_rows_of_the_release_files(release, manifest, loaded):
    pivots = _pivot_cells(release, manifest["cells"])
    assert len(loaded) == 3 * len(manifest["cells"]) + len(pivots) + 1
    for cell in pivots:
        rows = _jsonl(release / cell / "pivot-queries.jsonl")
        assert len(loaded[f"{cell.replace('/', '-')}-pivot-queries"]) == len(rows) == manifest["cells"][cell]["pivots"]["queries"]
        assert _by_id(loaded[f"{cell.replace('/', '-')}-pivot-queries"], lambda r: r["_id"]) == _by_id(rows, lambda r: r["_id"])
    total_queries = 0
    for cell in sorted(manifest["cells"]):
        name, d = cell.replace("/", "-"), release / cell
        queries, corpus, qrels = _jsonl(d / "queries.jsonl"), _jsonl(d / "corpus.jsonl"), _qrels(d)
        assert len(loaded[f"{name}-queries"]) == len(queries) == manifest["cells"][cell]["queries"], cell
        assert len(loaded[f"{name}-corpus"]) == len(corpus) == manifest["cells"][cell]["documents"], cell
        assert len(loaded[f"{name}-qrels"]) == len(qrels) == manifest["cells"][cell]["qrels"], cell
        # the same values, typed: lists stay lists, scores are integers
        assert _by_id(loaded[f"{name}-queries"], lambda r: r["_id"]) == _by_id(queries, lambda r: r["_id"]), cell
        assert _by_id(loaded[f"{name}-corpus"], lambda r: r["_id"]) == _by_id(corpus, lambda r: r["_id"]), cell
        key = lambda r: (r["query-id"], r["corpus-id"])  # noqa: E731
        assert _by_id(loaded[f"{name}-qrels"], key) == _by_id(qrels, key), cell
        total_queries += len(loaded[f"{name}-queries"])
    lines = sum((release / c / "queries.jsonl").read_bytes().count(b"\n") for c in manifest["cells"])
    assert total_queries == lines == len(SAMPLE_LANGUAGES) * sum(SAMPLE_QUOTAS.values())  # every cell filled to its quota
    sets = _jsonl(release / "cd" / "confusion_sets.jsonl")
    assert _by_id(loaded["cd-confusion-sets"], lambda r: r["set_id"]) == sets and len(sets) == len(SAMPLE_LANGUAGES) * SAMPLE_QUOTAS["cd"]


def test_a_wrong_field_type_fails(release_copy):
    path = release_copy / "croissant.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    text = next(f for f in _record_set(meta, "xqa-en-queries")["field"] if f["name"] == "text")
    text["dataType"] = "sc:Integer"  # a valid type, wrong for the column: loading fails
    path.write_text(json.dumps(meta), encoding="utf-8")
    ds = mlc.Dataset(str(path))
    with pytest.raises(mlc.GenerationError):
        list(ds.records("xqa-en-queries"))
    assert len(list(ds.records("xqa-fr-queries"))) == 6  # the other record sets are untouched
    text["dataType"] = "sc:Sentence"  # no such type: validation fails
    path.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(mlc.ValidationError, match="Sentence"):
        mlc.Dataset(str(path))


def test_a_data_file_that_differs_from_its_sha256_fails_to_load(release_copy):
    with (release_copy / "xqa" / "en" / "queries.parquet").open("ab") as fh:
        fh.write(b"\0")
    ds = mlc.Dataset(str(release_copy / "croissant.json"))
    with pytest.raises(mlc.GenerationError):
        list(ds.records("xqa-en-queries"))


# ----------------------------------------------------------------------------- listed, hashed, audited, deterministic
def test_listed_hashed_and_audited_like_every_file(release, manifest, meta, release_copy):
    from common.jsonio import sha256_file
    from tasks.audit.stage import audit_release

    assert manifest["files"]["croissant.json"]["sha256"] == sha256_file(release / "croissant.json")
    assert audit_release(release).passed
    # croissant.json is written before the audit: it lists every file but itself and the audit
    # reports, which the manifest lists once they are written
    listed = {k for k in manifest["files"] if k not in ("croissant.json", "audit_report.json", "audit_report.md")}
    assert {d["contentUrl"] for d in meta["distribution"]} == listed
    for d in meta["distribution"]:
        assert d["sha256"] == manifest["files"][d["contentUrl"]]["sha256"]
        assert d["@id"] == d["contentUrl"] and not re.match(r"^[a-z]+:", d["contentUrl"])  # relative: the folder, no URL
    formats = {d["contentUrl"]: d["encodingFormat"] for d in meta["distribution"]}
    assert (formats["xqa/ja/queries.jsonl"], formats["xqa/ja/qrels/test.tsv"], formats["cd/confusion_sets.parquet"],
            formats["README.md"], formats["assets/counts.png"]) == (
        "application/jsonlines", "text/tab-separated-values", "application/x-parquet", "text/markdown", "image/png")
    # an edit to croissant.json is caught by the audit's hashes
    with (release_copy / "croissant.json").open("a", encoding="utf-8") as fh:
        fh.write(" ")
    report = audit_release(release_copy)
    hashes = next(c for c in report.checks if c.name == "hashes")
    assert not hashes.passed and hashes.failures == ["croissant.json: sha256 differs from the manifest"]


def test_generated_again_byte_for_byte(release, manifest, release_copy):
    from tasks.release.croissant import croissant_metadata, render, write_croissant
    from tasks.release.writers import file_entries

    published = (release / "croissant.json").read_bytes()
    files = {k: v for k, v in file_entries(release).items() if k != "croissant.json"}
    assert render(croissant_metadata(manifest, files)).encode("utf-8") == published
    # what the build passes: the manifest before its files are listed
    unlisted = {k: v for k, v in manifest.items() if k != "files"} | {"files": {}}
    (release_copy / "croissant.json").unlink()
    for _ in range(2):
        write_croissant(unlisted, release_copy)
        assert (release_copy / "croissant.json").read_bytes() == published
    text = published.decode("utf-8")
    assert text == json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True, indent=2) + "\n"  # sorted keys


# ----------------------------------------------------------------------------- what the build knows
def test_rai_fields_carry_the_builds_numbers(meta, manifest):
    from tasks.release.card import release_bibtex

    rai = {k: v for k, v in meta.items() if k.startswith("rai:")}
    assert sorted(rai) == ["rai:dataAnnotationProtocol", "rai:dataBiases", "rai:dataCollection", "rai:dataCollectionMissingData",
                           "rai:dataCollectionRawData", "rai:dataCollectionType", "rai:dataLimitations",
                           "rai:dataPreprocessingProtocol", "rai:dataReleaseMaintenancePlan", "rai:dataSocialImpact",
                           "rai:dataUseCases", "rai:machineAnnotationTools", "rai:personalSensitiveInformation"]
    assert all(rai.values())
    collection = rai["rai:dataCollection"]
    assert "Queries by provenance, all cells: native 38, terminology 45, human-translated 43." in collection
    assert "xqa/ja native 4, human-translated 2; " in collection and "cd/ru human-translated 9; " in collection
    assert "from 13 input files pinned by sha256" in collection
    assert rai["rai:dataCollectionMissingData"] == (
        "None missing: every cell reached its quota. Candidate items dropped while building, by reason: every cell it can "
        "be realized in is full: 31; key concept already in cell evidence/fr: 1; key concept already in cell xqa/en: 1; "
        "near-duplicate: 3 (each one is in build_report.json).")
    assert rai["rai:dataBiases"][:6] == [
        "en (English, Latin script): concept names from DO, HPO; queries: native 12, terminology 9.",
        "zh (Chinese, Han script): concept names from HPOCHI; queries: native 5, terminology 9, human-translated 7.",
        "ja (Japanese, Han / Hiragana / Katakana script): concept names from HPOJPN; queries: native 6, terminology 9, "
        "human-translated 6.",
        "fr (French, Latin script): concept names from HPOFRE; queries: native 5, terminology 9, human-translated 7.",
        "ru (Russian, Cyrillic script): no vocabulary names; queries: native 5, human-translated 16.",
        "es (Spanish, Latin script): concept names from HPOSPA; queries: native 5, terminology 9, human-translated 7."]
    assert rai["rai:dataLimitations"][4] == ("Vocabulary coverage, ru: no vocabulary source names concepts in it; cd/ru has "
                                             "9 of 9 queries (human-translated 9).")
    assert rai["rai:personalSensitiveInformation"][0].startswith("None about persons: the queries are exam items")
    assert rai["rai:personalSensitiveInformation"][1] == (
        "Question sources: sample-jsonl file: questions and passages written for the project's sample.")
    plan = rai["rai:dataReleaseMaintenancePlan"]
    assert f"(build {manifest['build_id'][:12]}) was built by mmedbench {manifest['code_version']} from the 13 inputs" in plan
    assert "`mmedbench diff OLD NEW`" in plan and "extends" not in plan
    assert rai["rai:machineAnnotationTools"] == ["dictionary grounder (UMLS concept linking)",
                                                 "quickumls grounder (UMLS concept linking)",
                                                 "language identification: lingua-subset",
                                                 "MinHash LSH near-duplicate detection (128 permutations)"]
    assert meta["citeAs"] == release_bibtex(manifest) and meta["version"] == "0.1.0"
    assert meta["conformsTo"] == ["http://mlcommons.org/croissant/1.1", "http://mlcommons.org/croissant/RAI/1.0"]
    assert [(l["name"], l.get("url")) for l in meta["license"]][-2:] == [
        ("CC0 1.0 (current Disease Ontology); CC BY 3.0 (the 2016 OBO's names, synonyms, definitions)", "https://disease-ontology.org"),
        ("HPO licence: free use, cite HPO and its version, term content not altered", "https://hpo.jax.org/app/license")]
    assert [l["name"] for l in meta["license"]][:4] == ["apache-2.0 (as the build configuration states)"] * 4
    assert meta["citation"][1].startswith("Schriml LM et al. The Human Disease Ontology")


def test_short_and_empty_cells_are_said_with_their_reason(manifest, release):
    from tasks.release.croissant import croissant_metadata
    from tasks.release.writers import file_entries

    changed = json.loads(json.dumps(manifest))
    changed["cells"]["evidence/ru"] |= {"queries": 0, "qrels": 0, "provenance": {},
                                        "realization": "empty (0/6): no native source, vocabulary atom or translation "
                                                       "for this cell offline"}
    changed["cells"]["xqa/zh"] |= {"queries": 4, "provenance": {"native": 4}, "realization": "short (4/6): only native available offline"}
    meta = croissant_metadata(changed, {k: v for k, v in file_entries(release).items() if k != "croissant.json"})
    assert meta["rai:dataCollectionMissingData"].startswith(
        "Cells below their quota, with the reason the build recorded: xqa/zh: short (4/6): only native available offline; "
        "evidence/ru: empty (0/6): no native source, vocabulary atom or translation for this cell offline.")
    assert meta["rai:dataLimitations"][6:8] == ["xqa/zh: short (4/6): only native available offline",
                                                "evidence/ru: empty (0/6): no native source, vocabulary atom or translation "
                                                "for this cell offline"]
    queries = sum(c["queries"] for c in changed["cells"].values())
    assert f"{SAMPLE_CELLS} cells (task x language; 1 empty), {queries} queries" in meta["description"]
    assert _record_set(meta, "evidence-ru-queries")["description"].startswith("evidence/ru queries (evidence retrieval, ru): 0 (0 dev)")


# ----------------------------------------------------------------------------- pivot queries
def _write_pivots(cell_dir: Path) -> int:
    """What a release with English pivot queries holds for a cell (same fields as queries.jsonl, lang en)."""
    from common.parquet import write_parquet
    from schemas.records import QUERY_ARROW as QUERY_SCHEMA

    rows = [{"_id": f"{q['_id']}-pivot", "text": q["pivot_text"], "lang": "en", "cuis": q["cuis"], "pivot_text": q["pivot_text"],
             "provenance": q["provenance"], "split": q["split"]} for q in _jsonl(cell_dir / "queries.jsonl")]
    (cell_dir / "pivot-queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    write_parquet(pa.Table.from_pylist(rows, schema=QUERY_SCHEMA), cell_dir / "pivot-queries.parquet")
    (cell_dir / "pivot-queries").mkdir()
    write_parquet(pa.Table.from_pylist(rows, schema=QUERY_SCHEMA), cell_dir / "pivot-queries" / "test.parquet")
    return len(rows)


def test_pivot_queries_get_a_record_set_where_the_cell_has_them(release_copy, manifest, tmp_path):
    from tasks.release.croissant import write_croissant

    for old in release_copy.glob("*/*/pivot-queries*"):  # a release without pivot controls, then two cells get them
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    n_ja, n_ru = _write_pivots(release_copy / "xqa" / "ja"), _write_pivots(release_copy / "cd" / "ru")
    meta = write_croissant(manifest, release_copy)
    pivots = [r["@id"] for r in meta["recordSet"] if "pivot" in r["@id"]]
    assert pivots == ["cd-ru-pivot-queries", "xqa-ja-pivot-queries"]
    assert "xqa/ja/pivot-queries/test.parquet" in {d["contentUrl"] for d in meta["distribution"]}
    loaded = _load_offline(release_copy / "croissant.json", tmp_path / "cache")
    assert len(loaded) == 3 * 18 + 1 + 2
    assert len(loaded["xqa-ja-pivot-queries"]) == n_ja == 6 and len(loaded["cd-ru-pivot-queries"]) == n_ru == 9
    assert {r["lang"] for r in loaded["xqa-ja-pivot-queries"]} == {"en"}
    assert _by_id(loaded["xqa-ja-pivot-queries"], lambda r: r["_id"]) == _jsonl(release_copy / "xqa" / "ja" / "pivot-queries.jsonl")


# ----------------------------------------------------------------------------- the one-line examples
def _one_liner(markdown: str) -> str:
    return re.search(r"`(import mlcroissant as mlc; [^`]+)`", markdown).group(1)


def _run(code: str, cwd: Path) -> str:
    out, old = io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
    finally:
        os.chdir(old)
    return out.getvalue()


def test_the_card_and_readme_one_liners_run(sample_build):
    card = (sample_build["release"] / "README.md").read_text(encoding="utf-8")
    assert _run(_one_liner(card), sample_build["base"]) == "6\n"  # xqa-en-queries
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _run(_one_liner(readme), sample_build["base"]) == "6\n"  # xqa-ja-queries


# ----------------------------------------------------------------------------- add-language
def test_an_add_language_release_describes_all_its_cells(sample_build, tmp_path):
    from flows.add_language import add_language_flow
    from tests.flows.test_add_language import german_config

    result = add_language_flow(str(sample_build["release"]), str(german_config(tmp_path)), release_dir=str(tmp_path / "releases"),
                               work_dir=str(sample_build["base"] / "work"))
    assert isinstance(result, dict), result
    new = Path(result["release"])
    manifest = json.loads((new / "manifest.json").read_text(encoding="utf-8"))
    meta = json.loads((new / "croissant.json").read_text(encoding="utf-8"))
    cells = len(TASKS) * (len(SAMPLE_LANGUAGES) + 1)  # German added to the sample's languages
    assert "croissant.json" in manifest["files"] and len(manifest["cells"]) == cells
    ds = mlc.Dataset(str(new / "croissant.json"))
    assert not ds.metadata.ctx.issues.errors and ds.metadata.version == "0.2.0"
    assert len(meta["recordSet"]) == 3 * cells + len(_pivot_cells(new, manifest["cells"])) + 1
    for cell in ("xqa/de", "cd/de", "evidence/de", "xqa/ja"):
        rows = list(ds.records(f"{cell.replace('/', '-')}-queries"))
        assert len(rows) == len(_jsonl(new / cell / "queries.jsonl")) == manifest["cells"][cell]["queries"] > 0, cell
    sets = list(ds.records("cd-confusion-sets"))
    base_sets = len(SAMPLE_LANGUAGES) * SAMPLE_QUOTAS["cd"]  # one per cd query of the base
    assert len(sets) == len(_jsonl(new / "cd" / "confusion_sets.jsonl")) == base_sets + manifest["cells"]["cd/de"]["queries"]
    assert "de (German, Latin script): concept names from MMBDE" in meta["rai:dataBiases"][6]
    assert meta["rai:dataReleaseMaintenancePlan"].endswith(
        f"This release extends 0.1.0 (build {manifest['changes']['base_build_id'][:12]}): added cd/de, evidence/de, xqa/de; "
        f"{SAMPLE_CELLS} cells carried over unchanged.")
    # the base's croissant.json is not carried over: the new one is the new release's
    assert (new / "croissant.json").read_bytes() != (sample_build["release"] / "croissant.json").read_bytes()
    shutil.rmtree(tmp_path / "releases")
