"""Grounding on forked worker processes: the same bytes whatever the worker count, the
worker count from the environment, and QuickUMLS' matching reproduced exactly."""
from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from common.errors import InputError
from schemas.config import load_config
from schemas.parameters import GroundingParameters
from tasks.grounding import grounders, isolated, pool, prebuild, stage
from tasks.grounding.normalize import fold_term
from tests.conftest import ROOT, SAMPLE_CONFIG


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The sample's vocabulary and source shards, as the build makes them."""
    from tasks.sources.stage import load_sources
    from umls.configured import build_configured_vocabulary

    out = tmp_path_factory.mktemp("ground-pool")
    loaded = load_config(SAMPLE_CONFIG)
    cfg = loaded.config
    langs = {l.code: l.model_dump(mode="json") for l in loaded.languages}
    vocab = build_configured_vocabulary(cfg.vocabulary.format, loaded.resolve(cfg.vocabulary.path), out / "vocab",
                                        {l.umls_lat: l.code for l in loaded.languages}, cfg.vocabulary.max_srl,
                                        loaded.registry["en"].preferred_sources, cfg.vocabulary.roots)
    src = load_sources([{"format": s.format, "path": str(loaded.resolve(s.path)), "options": s.options} for s in cfg.sources],
                       [{"task": b.task, "path": str(loaded.resolve(b.path))} for b in cfg.background],
                       cfg.languages, cfg.build.shard_size, out / "sources")
    g = cfg.grounding
    return {"out": out, "vocab": vocab, "src": src, "langs": langs, "g": g, "cache": str(out / "indexes")}


def _ground_all(sample, dest: Path) -> dict[str, str]:
    s, g = sample, sample["g"]
    hashes = {}
    for shard, native in zip(s["src"]["shards"], s["src"]["shard_langs"]):
        needed = sorted(set(native) | {"en"})
        vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {c: s["vocab"]["atoms_by_lang"][c] for c in needed}}
        params = GroundingParameters.of({c: s["langs"][c] for c in needed}, g.key_groups, g.min_score,
                                        g.quickumls_threshold, g.quickumls_window)
        path = stage.ground_shard(shard, s["src"]["corpora"], vocab, params, s["cache"], str(dest / Path(shard).name))
        hashes[Path(path).name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return hashes


def test_one_and_two_workers_write_identical_shards(sample, monkeypatch):
    runs = {}
    forks = []
    real = pool._pool_ground
    monkeypatch.setattr(pool, "_pool_ground", lambda *a: forks.append(a[2]) or real(*a))
    for workers in (1, 2):
        monkeypatch.setenv(isolated.WORKERS_ENV, str(workers))
        runs[workers] = _ground_all(sample, sample["out"] / f"w{workers}")
    assert forks and set(forks) == {2}  # the 2-worker run did fork, the 1-worker run did not
    assert runs[1] == runs[2]
    rows = pq.read_table(sample["out"] / "w2" / next(iter(runs[2]))).to_pylist()
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "sources" / "sample").glob("[xe]*.jsonl")
                if "background" not in p.name)
    assert len(rows) == sample["src"]["items"] == lines  # every item of the sample's xqa and evidence files
    assert any(json.loads(r["mentions"])["native"] for r in rows)


def test_ground_texts_grounds_each_distinct_text_once_in_request_order(sample):
    s, g = sample, sample["g"]
    needed = ["en", "fr"]
    vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {c: s["vocab"]["atoms_by_lang"][c] for c in needed}}
    texts = [("en", "Type 2 diabetes mellitus and hypertension."), ("fr", "Diabète de type 2 et hypertension."),
             ("en", "Asthma in children."), ("en", "Type 2 diabetes mellitus and hypertension.")] * 20
    texts += [("en", f"Case {i}: pneumonia with sepsis.") for i in range(40)]
    one = pool.ground_texts(texts, vocab, {c: s["langs"][c] for c in needed}, g.quickumls_threshold,
                             g.quickumls_window, s["cache"], workers=1)
    two = pool.ground_texts(texts, vocab, {c: s["langs"][c] for c in needed}, g.quickumls_threshold,
                             g.quickumls_window, s["cache"], workers=2)
    assert list(one) == list(dict.fromkeys(texts)) == list(two)
    assert one == two
    assert len(one) == 3 + 40  # three distinct texts repeated, forty distinct cases
    assert {m["text"] for m in one[("en", "Asthma in children.")]} == {"Asthma"}


def test_the_parent_keeps_what_its_workers_searched(sample, monkeypatch):
    """A pool lives for one shard; the simstring answers its workers found are handed back,
    so the parent's n-gram cache ends as the in-process grounding leaves it, and the next
    pool's workers (forked from it) search none of those n-grams again."""
    from tasks.grounding.quickumls_matcher import QuickUMLSMatcher

    s, g = sample, sample["g"]
    langs = {"en": s["langs"]["en"]}
    vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {"en": s["vocab"]["atoms_by_lang"]["en"]}}
    texts = [("en", f"Case {i}: type 2 diabetes mellitus with pneumonia and sepsis in a child.") for i in range(40)]
    texts += [("en", "Asthma in children."), ("en", "Chronic kidney disease and hypertension.")] * 10
    spec = grounders.GrounderSpec.of(vocab, langs, "en", s["cache"], g.quickumls_threshold, g.quickumls_window)
    with grounders.GROUNDERS.use(spec, spec.build) as grounder:
        cache = grounder.quickumls._cache

    def cached_after(workers: int) -> set[str]:
        cache.clear()
        pool.ground_texts(texts, vocab, langs, g.quickumls_threshold, g.quickumls_window, s["cache"], workers=workers)
        return set(cache)

    in_process = cached_after(1)
    assert len(in_process) > 100
    absorbed = []
    real = QuickUMLSMatcher.absorb
    monkeypatch.setattr(QuickUMLSMatcher, "absorb", lambda self, found: absorbed.append(set(found)) or real(self, found))
    assert cached_after(2) == in_process
    assert set().union(*absorbed) == in_process  # (both workers search an n-gram their texts share)
    absorbed.clear()
    pool.ground_texts(texts, vocab, langs, g.quickumls_threshold, g.quickumls_window, s["cache"], workers=2)
    assert absorbed == []  # the next pool's workers inherited every answer: none searched again


def _killed_in_chunk(chunk):
    """A grounding worker the out-of-memory killer picks."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def test_a_grounding_worker_that_dies_stops_the_stage_with_one_line(sample, monkeypatch):
    """multiprocessing.Pool would start another worker and wait for ever for the chunk the
    dead one held; the stage fails with the line the CLI prints (exit 2)."""
    import threading

    from common.workers import WorkerDied

    s, g = sample, sample["g"]
    langs = {"en": s["langs"]["en"]}
    vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {"en": s["vocab"]["atoms_by_lang"]["en"]}}
    texts = [("en", f"Case {i}: pneumonia with sepsis.") for i in range(40)]
    monkeypatch.setattr(pool, "_ground_chunk", _killed_in_chunk)
    got = []
    t = threading.Thread(target=lambda: got.append(_raised(lambda: pool.ground_texts(
        texts, vocab, langs, g.quickumls_threshold, g.quickumls_window, s["cache"], workers=2))), daemon=True)
    t.start()
    t.join(120)
    assert not t.is_alive(), "the stage is still waiting on its dead worker"
    assert type(got[0]) is WorkerDied and got[0].exit_code == 2
    assert str(got[0]).startswith("grounding: a worker process died (killed by SIGKILL, which is what the kernel's "
                                  "out-of-memory killer sends); ")
    assert str(got[0]).endswith("(or MMEDBENCH_GROUND_WORKERS=1) and run the same command again")


def _raised(fn):
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001
        return exc
    return None


def test_worker_count_from_the_environment(monkeypatch):
    monkeypatch.setenv(isolated.WORKERS_ENV, "3")
    assert isolated.ground_workers() == 3
    monkeypatch.delenv(isolated.WORKERS_ENV)
    import os

    assert isolated.ground_workers() == len(os.sched_getaffinity(0))
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv(isolated.WORKERS_ENV, bad)
        with pytest.raises(InputError, match="MMEDBENCH_GROUND_WORKERS.*whole number"):
            isolated.ground_workers()


def test_a_daemonic_process_grounds_in_process(monkeypatch):
    """Dask's worker processes are daemonic, and daemonic processes may not have children."""
    monkeypatch.setenv(isolated.WORKERS_ENV, "2")
    monkeypatch.setattr(multiprocessing.current_process(), "_config", {**multiprocessing.current_process()._config,
                                                                         "daemon": True})
    assert isolated.ground_workers() == 1


def test_quickumls_match_is_reproduced_exactly(sample):
    """`QuickUMLSMatcher._match` (cached, without spaCy indexing) = QuickUMLS' own `_match`,
    on every text and pivot of the sample."""
    s, g = sample, sample["g"]
    items = [it for shard in s["src"]["shards"] for it in pq.read_table(shard).to_pylist()]
    by_lang: dict[str, list[str]] = {}
    for it in items:
        by_lang.setdefault(it["lang"], []).append(it["text"])
        if it["pivot"]:
            by_lang.setdefault("en", []).append(it["pivot"])
    compared = 0
    for code, texts in sorted(by_lang.items()):
        spec = grounders.GrounderSpec.of({"atoms_by_lang": s["vocab"]["atoms_by_lang"]}, s["langs"], code, s["cache"],
                                     g.quickumls_threshold, g.quickumls_window)
        with grounders.GROUNDERS.use(spec, spec.build) as grounder:
            f = grounder.quickumls
            if f is None:
                continue
            assert f._exact_replica
            for text in texts:
                doc = f.nlp(fold_term(text, f.latin))
                old = [[{k: v for k, v in m.items() if k != "semtypes"} for m in grp] for grp in f.qu._match(doc)]
                assert f._match(doc) == old, text
                assert f._match(doc) == old, text  # and again, from the n-gram cache
                compared += bool(old)
    assert compared > 50


def test_by_default_a_small_shard_is_grounded_in_process(sample, monkeypatch):
    """Without an explicit worker count, a second worker needs 256 texts of its own."""
    forks = []
    real = pool._pool_ground
    monkeypatch.setattr(pool, "_pool_ground", lambda *a: forks.append(a[2]) or real(*a))
    monkeypatch.delenv(isolated.WORKERS_ENV, raising=False)
    from tasks.grounding import isolated as placement

    monkeypatch.setattr(placement, "ground_workers", lambda: 2)
    s, g = sample, sample["g"]
    vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {"en": s["vocab"]["atoms_by_lang"]["en"]}}
    small = [("en", f"Case {i}: pneumonia with sepsis.") for i in range(511)]
    pool.ground_texts(small, vocab, {"en": s["langs"]["en"]}, g.quickumls_threshold, g.quickumls_window, s["cache"])
    assert forks == []
    pool.ground_texts(small + [("en", "Asthma in children.")], vocab, {"en": s["langs"]["en"]},
                       g.quickumls_threshold, g.quickumls_window, s["cache"])
    assert forks == [2]  # 512 texts: 256 each



def _signal_handlers() -> tuple[bool, bool]:
    import signal

    return signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_workers_do_not_inherit_the_parents_sigterm_handler():
    """Prefect installs a SIGTERM handler that raises; a forked worker inherited it, and the
    pool's shutdown printed its traceback in the middle of a build's progress lines."""
    import signal

    def raising(signum, frame):
        raise RuntimeError("terminated")

    previous = signal.signal(signal.SIGTERM, raising)
    try:
        with multiprocessing.get_context("fork").Pool(1, initializer=pool._worker_init) as forked:
            assert forked.apply(_signal_handlers) == (True, True)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stderr_kind() -> tuple[str, bool]:
    import sys

    return type(getattr(sys.stderr, "buffer", None)).__name__, sys.stderr.write_through


def test_grounding_workers_write_through_streams_of_their_own(tmp_path, monkeypatch):
    """The grounding pool's initializer starts as every fork pool's does
    (common.workers.forked_child; tests/common/test_fork_pools.py has the hang it prevents)."""
    import sys

    buffered = open(tmp_path / "stderr.txt", "w")
    monkeypatch.setattr(sys, "stderr", buffered)
    with multiprocessing.get_context("fork").Pool(1, initializer=pool._worker_init) as forked:
        assert forked.apply(_stderr_kind) == ("FileIO", True)
    assert _stderr_kind() == ("BufferedWriter", False)  # the parent's own is left as it was


def test_a_helper_process_builds_the_indexes_while_the_grounders_are_built(sample, tmp_path, monkeypatch):
    """With two workers and a fresh cache, the QuickUMLS indexes are built by a helper
    process, largest (English) first; this process waits for each on its builder lock and
    builds none itself; the mentions are those of a one-worker build, and the helper is gone."""
    from tasks.grounding import quickumls_index as qi

    s, g = sample, sample["g"]
    needed = ["en", "es", "fr"]
    vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {c: s["vocab"]["atoms_by_lang"][c] for c in needed}}
    langs = {c: s["langs"][c] for c in needed}
    texts = [("en", f"Case {i}: type 2 diabetes mellitus with pneumonia.") for i in range(40)]
    texts += [("fr", f"Cas {i} : diabète de type 2 et pneumonie.") for i in range(20)]
    monkeypatch.setattr(prebuild, "PREBUILD_MIN_ATOMS", 1)
    helpers = []
    real = pool.prebuild_indexes
    monkeypatch.setattr(pool, "prebuild_indexes", lambda *a, **k: helpers.append(real(*a, **k)) or helpers[-1])
    written_here = []
    write = qi.write_index
    monkeypatch.setattr(qi, "write_index", lambda *a, **k: written_here.append(a[1]) or write(*a, **k))
    two = pool.ground_texts(texts, vocab, langs, g.quickumls_threshold, g.quickumls_window, str(tmp_path / "two"), workers=2)
    (proc, codes), = helpers
    grounded = ["en", "fr"]  # the languages of the texts (es is in the vocabulary only)
    rows = {c: pq.ParquetFile(vocab["atoms_by_lang"][c]).metadata.num_rows for c in grounded}
    assert codes == tuple(sorted(grounded, key=lambda c: (-rows[c], c))) == ("en", "fr")
    assert written_here == []  # every index came from the helper
    assert proc.exitcode == 0 and not proc.is_alive()
    for c in grounded:
        lang = grounders.GrounderSpec.of(vocab, langs, c, str(tmp_path / "two"), g.quickumls_threshold,
                                     g.quickumls_window).language()
        assert qi.index_built(Path(vocab["atoms_by_lang"][c]), lang, tmp_path / "two")
    one = pool.ground_texts(texts, vocab, langs, g.quickumls_threshold, g.quickumls_window, str(tmp_path / "one"), workers=1)
    assert two == one
    assert written_here  # the one-worker build wrote its own indexes
    assert any(one[("en", texts[0][1])])
    # the grounders are built now: no helper the second time
    pool.ground_texts(texts, vocab, langs, g.quickumls_threshold, g.quickumls_window, str(tmp_path / "two"), workers=2)
    assert helpers[-1] == (None, ())


def test_prebuild_picks_nothing_below_the_threshold_or_with_one_worker(sample, tmp_path):
    s, g = sample, sample["g"]
    keys = {c: grounders.GrounderSpec.of(s["vocab"], s["langs"], c, str(tmp_path), g.quickumls_threshold, g.quickumls_window)
            for c in ("en", "fr", "zh")}
    assert prebuild.prebuild_indexes(keys, 1, min_atoms=1) == (None, ())
    en_rows = pq.ParquetFile(s["vocab"]["atoms_by_lang"]["en"]).metadata.num_rows
    assert prebuild.prebuild_indexes(keys, 2, min_atoms=en_rows + 1) == (None, ())
    proc, codes = prebuild.prebuild_indexes(keys, 2, min_atoms=en_rows)
    assert codes == ("en",)  # zh has a dictionary grounder, fr fewer atoms
    proc.join(300)
    assert proc.exitcode == 0


def test_an_index_being_built_elsewhere_is_waited_for_not_built_again(sample, tmp_path):
    """The builder lock: while another holder has it, quickumls_index waits (no half-built
    folder of its own), then takes the index it finds."""
    import threading

    from tasks.grounding import quickumls_index as qi

    s, g = sample, sample["g"]
    atoms = Path(s["vocab"]["atoms_by_lang"]["fr"])
    lang = grounders.GrounderSpec.of(s["vocab"], s["langs"], "fr", str(tmp_path), 0.7, 5).language()
    dest = qi.index_dir(atoms, lang, tmp_path)
    elsewhere = qi.quickumls_index(atoms, lang, tmp_path / "elsewhere")  # a real index, as another builder's
    got = []
    with qi._builder_lock(dest):
        t = threading.Thread(target=lambda: got.append(qi.quickumls_index(atoms, lang, tmp_path)))
        t.start()
        t.join(0.5)
        assert t.is_alive()
        assert not list(dest.parent.glob(dest.name + ".tmp*"))  # it has not started a build of its own
        import shutil

        shutil.copytree(elsewhere, dest)
        (dest / "done.flag").write_text("4321")  # an entry count this process never wrote
    t.join(300)
    assert not t.is_alive() and got == [dest]
    assert (dest / "done.flag").read_text() == "4321"


def test_an_index_build_frees_its_terms_before_writing_the_index(sample, tmp_path, monkeypatch):
    """The terms and their folded forms were 300 of the 1,950 MB an English index build
    peaked at (paper scale): writing the index needs neither, so they are gone when it
    starts."""
    import weakref

    from tasks.grounding import quickumls_index as qi

    class Held(list):  # a list that can be referred to weakly
        pass

    s = sample
    atoms = Path(s["vocab"]["atoms_by_lang"]["fr"])
    lang = grounders.GrounderSpec.of(s["vocab"], s["langs"], "fr", str(tmp_path), 0.7, 5).language()
    weak, alive_at_write = {}, []

    def kept(name: str, value: Held) -> Held:
        weak[name] = weakref.ref(value)
        return value

    real_load, real_fold, real_write = qi.load_terms, qi.fold_terms, qi.write_index
    monkeypatch.setattr(qi, "load_terms", lambda *a: kept("terms", Held(real_load(*a))))
    monkeypatch.setattr(qi, "fold_terms", lambda *a: kept("folded", Held(real_fold(*a))))

    def write(entries, *dirs):
        alive_at_write.append(sorted(k for k, ref in weak.items() if ref() is not None))
        return real_write(entries, *dirs)

    monkeypatch.setattr(qi, "write_index", write)
    dest = qi.quickumls_index(atoms, lang, tmp_path)
    assert sorted(weak) == ["folded", "terms"] and alive_at_write == [[]]
    assert int((dest / "done.flag").read_text()) > 1000  # the entries, counted after the terms were freed


def test_a_large_vocabulary_is_grounded_in_a_process_of_its_own(sample, monkeypatch, tmp_path):
    """At scale the ground task grounds in tasks.grounding.isolated.GROUNDING_PROCESS, which
    exits (its grounders' memory with it) when the flow releases the grounders; same bytes."""
    import os

    from flows import prefect_tasks as pt
    from schemas.config import Language
    from schemas.parameters import GroundingParameters
    from tasks.grounding import isolated as placement

    s, g = sample, sample["g"]
    shard, native = s["src"]["shards"][0], s["src"]["shard_langs"][0]
    needed = sorted(set(native) | {"en"})
    vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {c: s["vocab"]["atoms_by_lang"][c] for c in needed}}
    paths = sorted(vocab["atoms_by_lang"].values())
    atoms = sum(pq.ParquetFile(p).metadata.num_rows for p in paths)
    monkeypatch.setenv(isolated.WORKERS_ENV, "2")
    monkeypatch.setattr(placement, "ISOLATE_GROUNDING_ATOMS", atoms + 1)
    assert not placement.isolate_grounding(paths)
    monkeypatch.setattr(placement, "ISOLATE_GROUNDING_ATOMS", atoms)
    assert placement.isolate_grounding(paths)
    monkeypatch.setenv(isolated.WORKERS_ENV, "1")  # one process asked for: no second one either
    assert not placement.isolate_grounding(paths)
    monkeypatch.setenv(isolated.WORKERS_ENV, "2")

    languages = {c: s["langs"][c] for c in needed}
    params = GroundingParameters(languages={c: Language.model_validate(v) for c, v in languages.items()},
                                 key_groups=g.key_groups, min_score=g.min_score, threshold=g.quickumls_threshold,
                                 window=g.quickumls_window)
    assert placement.GROUNDING_PROCESS.pid() is None
    try:
        there = Path(pt.ground_shard.fn(shard=shard, corpus=s["src"]["corpora"], vocab=vocab, params=params,
                                        work_dir=str(tmp_path / "work")))
        pid = placement.GROUNDING_PROCESS.pid()
        assert pid is not None and pid != os.getpid()
    finally:
        placement.release_grounders()
    assert placement.GROUNDING_PROCESS.pid() is None
    with pytest.raises(ProcessLookupError):  # exited and reaped
        os.kill(pid, 0)
    here = stage.ground_shard(shard, s["src"]["corpora"], vocab, params, s["cache"], str(tmp_path / "here.parquet"))
    assert there.read_bytes() == Path(here).read_bytes()
    assert pq.read_table(there).num_rows == pq.read_table(shard).num_rows > 0


def test_a_grounding_pool_collects_only_the_youngest_generation_before_forking(sample, monkeypatch):
    """The grounding process's heap is its grounders: a full collection before each fork
    traversed all of them and freed nothing (ARCHITECTURE.md, "One grounder per language per
    process, shared by forked workers"), and under the build's
    schedule so did the middle generation's (0.62 of the paper build's 34 grounding CPU s).
    Other pools still collect everything first."""
    import common.workers as workers

    collected = []
    real = workers.gc.collect
    monkeypatch.setattr(workers.gc, "collect", lambda generation=2: collected.append(generation) or real(generation))
    monkeypatch.setenv(isolated.WORKERS_ENV, "2")
    _ground_all(sample, sample["out"] / "young")
    assert collected and set(collected) == {0}
    collected.clear()
    other = workers.fork_pool(1)
    other.close()
    other.join()
    assert collected == [2]


def test_a_failed_build_releases_grounders_while_a_shard_still_imports_the_stage(monkeypatch):
    # seen on a fresh clone: the memory stage failed on bad input while a grounding shard's
    # thread was still importing tasks.grounding.stage (and with it tasks.grounding.grounders);
    # the failed build's release of the grounders found the half-made module without
    # drop_grounders and crashed (exit 70, not 2)
    import sys
    import types

    half_made = types.ModuleType("tasks.grounding.grounders")
    monkeypatch.setitem(sys.modules, "tasks.grounding.grounders", half_made)
    isolated.release_grounders(failed=True)  # nothing to drop yet: no error
    dropped = []
    half_made.drop_grounders = lambda: dropped.append(True)
    isolated.release_grounders(failed=True)
    assert dropped == [True]


def _exam_shard(sample, dest: Path, option: str) -> str:
    """The sample's first shard with its first item made a French exam item (its options its
    gold) whose correct option is `option`."""
    import pyarrow as pa

    shard = sample["src"]["shards"][0]
    t = pq.read_table(shard)
    rows = t.to_pylist()
    rows[0] = {**rows[0], "lang": "fr", "passage_ids": [], "pivot": None, "text": "Quel est le diagnostic ?",
               "options": [{"text": option, "pivot": None, "correct": True},
                           {"text": "Insuffisance aortique", "pivot": None, "correct": False}]}
    out = dest / Path(shard).name
    dest.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), out)
    return str(out)


def test_the_dense_pass_answers_an_option_string_matching_cannot_name_on_any_worker_count(sample, monkeypatch, tmp_path):
    """End to end through ground_shard, with a tiny deterministic encoder in place of use-m: the
    misspelt answer names nothing by string (the item is dropped), the dense pass links it at
    the option gates, and the shard's bytes are the same on one worker and two."""
    from tasks.grounding import dense_pass
    from tests.tasks.grounding.test_dense_linker import TrigramEncoder

    monkeypatch.setattr(dense_pass, "encoder", lambda threads: TrigramEncoder())
    s, g = sample, sample["g"]
    shard = _exam_shard(sample, tmp_path / "in", "Anévysme de laorte")
    needed = sorted(set(s["src"]["shard_langs"][0]) | {"en", "fr"})
    vocab = {"concepts": s["vocab"]["concepts"], "atoms_by_lang": {c: s["vocab"]["atoms_by_lang"][c] for c in needed}}
    langs = {c: s["langs"][c] for c in needed}
    gates = {"span_threshold": 0.99, "span_margin": 0.5, "option_threshold": 0.6, "option_margin": 0.05}

    def run(passes, workers, name):
        monkeypatch.setenv(isolated.WORKERS_ENV, str(workers))
        params = GroundingParameters.of(langs, g.key_groups, g.min_score, g.quickumls_threshold, g.quickumls_window,
                                        passes=passes, dense=gates)
        path = Path(stage.ground_shard(shard, s["src"]["corpora"], vocab, params, str(tmp_path / "idx"),
                                       str(tmp_path / name / "out.parquet")))
        return path.read_bytes(), pq.read_table(path).to_pylist()[0]

    _b, string_only = run(["string"], 1, "s")
    assert string_only["no_passage"] == "no-answer-concept"
    one, row = run(["string", "dense"], 1, "d1")
    assert row["no_passage"] is None and row["answer_cuis"] == ["C0003486"]
    assert row["negative_cuis"] == ["C0003504"]
    two, _row = run(["string", "dense"], 2, "d2")
    assert one == two
    # an option gate above the link's cosine: no answer again
    gates["option_threshold"] = 0.99
    _b, strict = run(["string", "dense"], 1, "d3")
    assert strict["no_passage"] == "no-answer-concept"
