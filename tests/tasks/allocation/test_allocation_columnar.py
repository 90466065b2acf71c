"""The allocation stage's columnar structures hold exactly what the per-object ones held:
entry parts, entry words (down to set iteration order), realizer names, hierarchy links,
and confusion sets computed on demand."""
from __future__ import annotations

import itertools

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

from common.text import word_tokens
from tasks.allocation.concept_entries import EntryParts, entry_parts
import numpy as np

from tasks.allocation.allocator import seeded_order
from tasks.allocation.confusion import build_candidates, lazy_candidates
from tasks.allocation.hierarchy import Hierarchy
from tasks.allocation.lexicon import Lexicon
from tasks.allocation.tiers import ConceptInfo, TierPools, first_sorted
from tasks.allocation.stage import ranked_names


def test_ranked_names_sorts_preferred_then_source_rank_then_text_and_keeps_rank_duplicates():
    atoms = pa.table({
        "cui": ["C2", "C1", "C1", "C1", "C1", "C1", "C2"],
        "str": ["zeta", "beta", "alpha", "beta", "Émile", "beta", "eta"],
        "ispref": [False, False, False, True, False, False, True],
        "sab": ["MSH", "MSH", "OTHER", "MDR", "MSH", "MSH", "OTHER"],
    })
    spans, texts = ranked_names(atoms, ["MDR", "MSH"])
    got = {c: texts.slice(a, b - a).to_pylist() for c, (a, b) in spans.items()}
    # C1: (False, 0, beta) first; then rank 1 (MSH) beta, Émile (code-point order); then rank 2;
    # the two identical (C1, MSH, beta) atoms are one
    assert got == {"C1": ["beta", "beta", "Émile", "alpha"], "C2": ["eta", "zeta"]}


def test_ranked_names_of_no_atoms():
    empty = pa.table({"cui": pa.array([], pa.string()), "str": pa.array([], pa.string()),
                      "ispref": pa.array([], pa.bool_()), "sab": pa.array([], pa.string())})
    spans, texts = ranked_names(empty, ["MSH"])
    assert spans == {} and len(texts) == 0


def test_entry_table_keeps_atom_order_and_skips_unnamed_concepts():
    concepts = pa.table({"cui": ["C1", "C2", "C3"], "name_en": ["Heart", "", "Lung"],
                         "definition": ["An organ.", "x", None]})
    atoms = pa.table({"cui": ["C3", "C1", "C2", "C1", "C9"], "lang": ["en", "en", "en", "fr", "en"],
                      "str": ["Lung", "Cardiac", "Two", "Coeur", "Orphan"]})
    entries = entry_parts(concepts, atoms)
    assert sorted(entries) == ["C1", "C3"] and len(entries) == 2 and "C2" not in entries
    assert entries["C1"] == EntryParts("C1", "Heart", "An organ.", ("Cardiac",))
    assert entries["C3"] == EntryParts("C3", "Lung", "", ("Lung",))
    owner, texts = entries.entry_texts()
    assert list(zip(owner.tolist(), texts.to_pylist())) == [
        (0, "Heart"), (0, "Cardiac"), (0, "An organ."), (1, "Lung"), (1, "Lung"), (1, "")]
    assert entries.names_of("C1") == ["Heart", "Cardiac"] and entries.names_of("C9") == []


def test_an_entrys_name_without_its_parts():
    concepts = pa.table({"cui": ["C1", "C2", "C3"], "name_en": ["Heart", "", "Lung"],
                         "definition": ["An organ.", "x", None]})
    atoms = pa.table({"cui": ["C3", "C1"], "lang": ["en", "en"], "str": ["Pulmo", "Cardiac"]})
    entries = entry_parts(concepts, atoms)
    assert (entries.name("C3"), entries.name("C1")) == ("Lung", "Heart")
    assert entries._made == {}  # named without making (and keeping) the parts
    assert entries.name("C1") == entries["C1"].name == "Heart"
    with pytest.raises(KeyError):  # an unnamed concept has no entry, as entries["C2"]
        entries.name("C2")


def _reference_entry_words(texts: list[str], stopwords: frozenset[str]) -> frozenset[str]:
    """The per-object rule the columnar Lexicon replaces."""
    return frozenset(w for t in texts for w in word_tokens(t) if w not in stopwords and not w.isdigit())


ENTRIES = {
    "C3": ["Thyroid Gland Nodule", "nodule of the thyroid", "A lump in the thyroid gland; 2 cm."],
    "C1": ["Café-au-lait spots", "CAFE AU LAIT macules", "Ｆｕｌｌｗｉｄｔｈ text", "x_y 42 ²"],
    "C2": ["Синдром Марфана", "Marfan syndrome", "马凡综合征", ""],
    "C4": ["the of and"],
    **{f"D{i:02d}": [f"word{i} common thyroid", "filler text"] for i in range(60)},
}
STOP = frozenset({"the", "of", "and", "a", "in"})


@pytest.fixture(scope="module")
def lexicon():
    return Lexicon(ENTRIES, {c: t[:2] for c, t in ENTRIES.items()}, STOP)


def test_entry_words_equal_the_per_object_sets_in_iteration_order(lexicon):
    for cui, texts in ENTRIES.items():
        ref = _reference_entry_words(texts, STOP)
        got = lexicon.entry_words(cui)
        assert got == ref and list(got) == list(ref), cui
    assert lexicon.entry_words("C1") >= {"cafe", "au", "lait", "fullwidth", "x_y"} and "café" not in lexicon.entry_words("C1")
    assert "42" not in lexicon.entry_words("C1") and "²" not in lexicon.entry_words("C1")  # digits never count
    assert lexicon.entry_words("C4") == frozenset() and lexicon.entry_words("nope") == frozenset()


def test_idf_and_look_alikes_match_the_per_object_rule(lexicon):
    ref = {c: _reference_entry_words(t, STOP) for c, t in ENTRIES.items()}
    df = {}
    for words in ref.values():
        for w in words:
            df[w] = df.get(w, 0) + 1
    import math

    assert lexicon.idf == {w: math.log(1 + len(ENTRIES) / c) for w, c in df.items()}
    # "thyroid" is in 61 of 64 entries: over the 50-entry cap, never a look-alike word
    assert lexicon.look_alikes("C3") == []
    assert lexicon.look_alikes("D07") == []  # word7 is its own; common/thyroid/filler are capped
    assert lexicon.look_alikes("C1", limit=10) == []
    two = Lexicon({"A": ["marfan syndrome"], "B": ["syndrome x"], "C": ["marfan"]}, {"A": ["marfan syndrome"]})
    assert two.look_alikes("A") == ["B", "C"]
    assert two.coverage("A", "C") == pytest.approx(two.idf["marfan"] / (two.idf["marfan"] + two.idf["syndrome"]))


def test_hierarchy_links_siblings_and_nearness():
    h = Hierarchy([("B", "A"), ("C", "A"), ("D", "B"), ("D", "B"), ("E", "C"), ("F", "Z")])
    assert h.ancestors_within("D", 1) == {"D": 0, "B": 1}
    assert h.ancestors_within("D", 5) == {"D": 0, "B": 1, "A": 2}
    assert h.ancestors_within("Q", 3) == {"Q": 0}  # in no link
    assert h.siblings("B") == {"C"} and h.siblings("D") == set() and h.siblings("Q") == set()
    assert h.near("D", "E", 2) and not h.near("D", "E", 1)
    assert h.near("D", "B", 1) and not h.near("D", "F", 5)
    assert h.near("Q", "Q", 1) and not h.near("Q", "A", 3)
    assert Hierarchy([]).ancestors_within("A", 2) == {"A": 0}
    table = pa.table({"cui": ["B", "C"], "parent": ["A", "A"]})
    assert Hierarchy(table=table).siblings("B") == {"C"}


def _vocab():
    concepts, parents = {}, []
    for i, (grp, tui) in enumerate(itertools.product(["DISO", "CHEM"], ["T1", "T2", "T3"])):
        for j in range(12):
            cui = f"C{i}{j:02d}"
            concepts[cui] = ConceptInfo(cui, tui, grp, f"{tui} thing {j % 4} part {j}")
            parents.append((cui, f"P{i}{j % 3}"))
            parents.append((f"P{i}{j % 3}", f"R{i % 2}"))
    return concepts, Hierarchy(parents)


@pytest.mark.parametrize("one_tier", [True, False])
def test_lazy_candidates_are_build_candidates_read_in_any_interleaving(one_tier):
    concepts, h = _vocab()
    lex = Lexicon({c: [i.name] for c, i in concepts.items()}, {c: [i.name] for c, i in concepts.items()})
    targets = sorted(concepts)[::2]
    eager = build_candidates(concepts, h, 3, 5, targets, lex, one_tier_per_target=one_tier)
    assert sum(len(v) for v in eager.values()) > 10
    lazy = lazy_candidates(TierPools.build(concepts, h, lex, 3, 5), targets, one_tier_per_target=one_tier)
    # partial reads first (as the allocator stops once a cell is full), then whole lists, twice
    assert next(iter(lazy["hard"]), None) == (eager["hard"][:1] or [None])[0]
    assert list(itertools.islice(lazy["easy"], 2)) == eager["easy"][:2]
    for _ in range(2):
        assert {t: list(v) for t, v in lazy.items()} == eager


def test_look_alike_words_are_capped_at_an_absolute_document_frequency():
    """Past 25,000 concepts 2% of the entries exceeds LOOKALIKE_MAX_DF: a word in 501
    entries is then no look-alike word, one in 500 still is (at 30,000 concepts, 2% is 600)."""
    from tasks.allocation.lexicon import LOOKALIKE_MAX_DF

    assert LOOKALIKE_MAX_DF == 500
    n = 30_000
    entries = {f"C{i:05d}": [f"filler{i}"] for i in range(n)}
    for i in range(1, 500):
        entries[f"C{i:05d}"].append("rarish")  # in 500 entries with the target's
    for i in range(500, 1000):
        entries[f"C{i:05d}"].append("commonish")  # in 501 entries with the target's
    entries["C00000"] = ["rarish commonish"]
    lex = Lexicon(entries, {"C00000": ["rarish commonish"]})
    got = lex.look_alikes("C00000")
    assert got == [f"C{i:05d}" for i in range(1, 500)]
    assert lex.look_alikes("C00000") is got  # memoized: asked again for the medium tier


@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.5, 0.75, 1.0])
def test_covering_keeps_exactly_the_candidates_coverage_keeps_in_order(lexicon, threshold):
    cuis = sorted(ENTRIES) + ["nope"]
    for target in sorted(ENTRIES):
        cands = [c for c in reversed(cuis) if c != target]
        assert lexicon.covering(target, cands, threshold) == [c for c in cands if lexicon.coverage(target, c) >= threshold]
    two = Lexicon({"A": ["marfan syndrome"], "B": ["syndrome x"], "C": ["marfan"], "D": ["marfan syndrome type 2"],
                   "E": ["syndrome y"]}, {"A": ["marfan syndrome"]})
    share = two.idf["marfan"] / (two.idf["marfan"] + two.idf["syndrome"])  # marfan is the rarer word: share > 0.5
    assert share > 0.5
    assert two.covering("A", ["D", "C", "B", "F"], share) == ["D", "C"]  # at the threshold exactly: kept
    assert two.covering("A", ["D", "C", "B"], share + 1e-6) == ["D"]
    assert two.covering("A", [], 0.5) == [] and two.covering("B", ["A"], 0.0) == ["A"]
    # within the numpy pass's tolerance but below the threshold: the exact sum still says no
    assert two.covering("A", ["C"], share + 1e-10) == []
    # a name word in most entries has an IDF under 1: the pass must divide by the total, not multiply
    common = Lexicon({"A": ["fever"], "B": ["fever cough"], "C": ["fever rash"], "D": ["itch"]}, {"A": ["fever"]})
    assert common.idf["fever"] < 1
    assert common.covering("A", ["D", "C", "B"], 1.0) == ["C", "B"]


@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.5, 0.75, 1.0])
def test_not_covering_and_covering_ids_keep_exactly_what_coverage_decides(lexicon, threshold):
    cuis = sorted(ENTRIES) + ["nope"]
    for target in sorted(ENTRIES):
        cands = [c for c in reversed(cuis) if c != target]
        assert lexicon.not_covering(target, cands, threshold) == [c for c in cands if lexicon.coverage(target, c) < threshold]
        if threshold > 0:
            ids = np.array([lexicon._index[c] for c in cands if c in lexicon._index], np.int64)
            assert lexicon.covering_ids(target, ids, threshold) == lexicon.covering(target, cands, threshold)
    two = Lexicon({"A": ["marfan syndrome"], "B": ["syndrome x"], "C": ["marfan"], "D": ["marfan syndrome type 2"],
                   "E": ["syndrome y"]}, {"A": ["marfan syndrome"]})
    share = two.idf["marfan"] / (two.idf["marfan"] + two.idf["syndrome"])
    assert share > 0.5
    assert two.not_covering("A", ["D", "C", "B"], share) == ["B"]  # at the threshold exactly: covering
    assert two.not_covering("A", ["D", "C", "B"], share + 1e-10) == ["C", "B"]  # within numpy's tolerance: exact sum
    assert two.not_covering("A", ["D", "C", "B"], share - 1e-10) == ["B"]


def test_first_sorted_is_the_head_of_the_full_sort_and_hashes_only_the_candidates():
    items = [f"c{i}" for i in range(40)]
    keys = [-(i % 5) / 4 for i in range(40)]  # many ties: the tie-break decides among them
    hashed = []

    def tiebreak(x):
        hashed.append(x)
        return seeded_order(3, x)

    for m in (0, 1, 3, 8, 9, 40):
        hashed.clear()
        full = sorted(items, key=lambda x: (keys[items.index(x)], seeded_order(3, x)))
        assert first_sorted(items, keys, tiebreak, m) == full[:m]
        assert len(hashed) == (0 if m == 0 else 8 if m <= 8 else 16 if m <= 16 else 40)


def test_sibling_ids_are_the_siblings():
    h = Hierarchy([("B", "A"), ("C", "A"), ("D", "B"), ("E", "C"), ("E", "B"), ("F", "Z"), ("G", "B")])
    for c in ["A", "B", "C", "D", "E", "G", "Q"]:
        assert [h.cuis[i] for i in h.sibling_ids(c).tolist()] == sorted(h.siblings(c), key=h.cuis.index)
    assert [h.cuis[i] for i in h.sibling_ids("E").tolist()] == sorted(["D", "G"], key=h.cuis.index)  # two parents
    assert h.ids_of(["D", "Q", "B"]).tolist() == sorted([h.cuis.index("D"), h.cuis.index("B")])


_SEED_PROBE = """
import json
from tasks.allocation.lexicon import Lexicon
words = [f"w{i}" for i in range(12)]
entries = {"T": [" ".join(words)], "D": [" ".join(words)]}
for i, w in enumerate(words):  # every word a different document frequency: twelve distinct IDFs
    for j in range(i + 1):
        entries[f"F{i:02d}{j:02d}"] = [w]
lex = Lexicon(entries, {"T": [" ".join(words)]})
print(json.dumps([lex.coverage("T", "D").hex(), lex._totals["T"].hex()]))
"""


def test_coverage_does_not_depend_on_the_hash_seed():
    """`mmedbench build` run without the Makefile's PYTHONHASHSEED must give the same sets:
    coverage's float sums may not follow a set's (hash-dependent) iteration order."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    outs = {subprocess.run([sys.executable, "-c", _SEED_PROBE], capture_output=True, text=True, check=True, cwd=root,
                           env={"PYTHONPATH": str(root), "PYTHONHASHSEED": seed}).stdout for seed in ("0", "1", "2", "3")}
    assert len(outs) == 1, outs


def test_a_language_can_name_a_concept_by_its_atoms_or_a_memory_entry_for_its_english_name():
    from schemas.config import load_config
    from schemas.records import Translation
    from tasks.allocation.stage import ConceptRealizer
    from tasks.translation.memory import TranslationMemory
    from tests.conftest import SAMPLE_CONFIG

    langs = {l.code: l for l in load_config(SAMPLE_CONFIG).languages if l.code in ("en", "fr")}
    concepts = pa.table({"cui": ["C1", "C2", "C3"], "name_en": ["Heart", "Kidney", "Lung"],
                         "definition": ["An organ.", "", ""]})
    entries = entry_parts(concepts, pa.table({"cui": ["C1"], "lang": ["en"], "str": ["Cardiac organ"]}))
    fr_atoms = pa.table({"cui": ["C2"], "str": ["Rein"], "ispref": [True], "sab": ["MSHFRE"]})
    tm = TranslationMemory([Translation(source_lang="en", target_lang="fr", source="Heart", target="Cœur")])
    realizer = ConceptRealizer({"fr": fr_atoms}, entries, langs, tm)
    # C1 by the memory entry for its English name, C2 by its atom, C3 by neither
    assert [realizer.can_name(c, "fr") for c in ("C1", "C2", "C3")] == [True, True, False]
    assert realizer.can_name("C1", "en") and not realizer.can_name("C3", "en")  # English: a synonym or a definition


def test_a_concept_is_named_once_per_language_and_its_rejection_counted_once():
    from schemas.config import load_config
    from schemas.records import Translation
    from tasks.allocation.stage import ConceptRealizer
    from tasks.translation.memory import TranslationMemory
    from tests.conftest import SAMPLE_CONFIG

    langs = {l.code: l for l in load_config(SAMPLE_CONFIG).languages if l.code in ("en", "fr")}
    concepts = pa.table({"cui": ["C1", "C2"], "name_en": ["Heart failure", "Kidney"], "definition": ["", ""]})
    entries = entry_parts(concepts, pa.table({"cui": [], "lang": [], "str": []}, schema=pa.schema(
        [("cui", pa.string()), ("lang", pa.string()), ("str", pa.string())])))
    # C1's memory entry copies its source (the copy gate rejects it), C2's is fine
    tm = TranslationMemory([Translation(source_lang="en", target_lang="fr", source="Heart failure", target="Heart failure"),
                            Translation(source_lang="en", target_lang="fr", source="Kidney", target="Rein")])
    realizer = ConceptRealizer({}, entries, langs, tm)
    for _ in range(3):  # the allocator asks again for every tier and every reading
        assert realizer("C1", "fr") is None
        assert realizer("C2", "fr").text == "Rein"
    assert dict(realizer.rejections) == {"fr: copy": 1}


def test_near_mask_is_near_for_each_candidate():
    h = Hierarchy([("B", "A"), ("C", "A"), ("D", "B"), ("D", "B"), ("E", "C"), ("F", "Z"), ("E", "B"), ("G", "E")])
    everyone = ["A", "B", "C", "D", "E", "F", "G", "Z", "Q", "R"]  # Q, R: in no link
    for a in everyone:
        for depth in (0, 1, 2, 3):
            assert h.near_mask(a, everyone, depth) == [h.near(a, b, depth) for b in everyone], (a, depth)
    assert h.near_mask("G", ["D", "F", "Q"], 2) == [True, False, False]  # G -> E -> B <- D
    assert h.near_mask("G", ["D"], 1) == [False] and h.near_mask("Q", ["Q", "A"], 3) == [True, False]
    assert h.near_mask("A", [], 2) == []


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=30), st.integers(0, 13),
       st.lists(st.integers(0, 13), max_size=12), st.integers(0, 4))
def test_near_mask_property(links, a, others, depth):
    name = lambda i: f"C{i:02d}"  # noqa: E731  (12 and 13: in no link)
    h = Hierarchy([(name(c), name(p)) for c, p in links if c != p])
    cands = [name(o) for o in others]
    assert h.near_mask(name(a), cands, depth) == [h.near(name(a), b, depth) for b in cands]


def test_a_saved_lexicon_loads_as_the_same_lexicon(lexicon, tmp_path):
    paths = lexicon.save(tmp_path / "lexicon")
    assert sorted(paths) == ["concepts", "entry_words", "stop_words", "words"]
    names = {c: t[:2] for c, t in ENTRIES.items()}
    loaded = Lexicon.load(paths, names)
    assert loaded.cuis == lexicon.cuis and loaded.stopwords == STOP and loaded.idf == lexicon.idf
    for cui in ENTRIES:
        assert list(loaded.entry_words(cui)) == list(lexicon.entry_words(cui)), cui
        assert loaded.name_words(cui) == lexicon.name_words(cui)
        assert loaded.look_alikes(cui, 10) == lexicon.look_alikes(cui, 10)
        assert [loaded.coverage(cui, o) for o in ENTRIES] == [lexicon.coverage(cui, o) for o in ENTRIES]
    assert loaded.words_of("The Marfan syndrome of 42") == frozenset({"marfan", "syndrome"})  # its stop-words
    assert loaded._ent_c.dtype == lexicon._ent_c.dtype == np.int64 and loaded._ent_w.dtype == np.int64


def test_a_saved_lexicon_writes_its_stop_words_in_sorted_order(lexicon, tmp_path):
    """The cached lexicon's files are the same bytes whatever a set's iteration order."""
    paths = lexicon.save(tmp_path / "lexicon")
    words = pq.read_table(paths["stop_words"])["word"].to_pylist()
    assert words == sorted(STOP) and len(words) > 1


def test_no_candidates_cover_nothing_and_leave_nothing(lexicon):
    cui = sorted(ENTRIES)[0]
    assert lexicon.covering(cui, [], 0.5) == [] and lexicon.not_covering(cui, [], 0.5) == []
