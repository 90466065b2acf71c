"""The compiled simstring reader against quickumls_simstring's C++ reader: the same strings
in the same order, on databases the C++ writer wrote (tasks/grounding/simstring_reader.py,
tasks/grounding/simstring_kernels.py)."""
from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from quickumls.toolbox import SimstringDBReader, SimstringDBWriter, get_similarity, safe_unicode

from tasks.grounding import simstring_kernels as kernels
from tasks.grounding.simstring_reader import SimstringReader, UnsupportedDatabase

MEASURES = ["jaccard", "cosine", "dice", "overlap", "exact"]


def _vocabulary() -> list[str]:
    """Strings that share many n-grams (so queries have long, tied posting lists), repeat
    n-grams, are shorter than three characters, or leave the Basic Multilingual Plane."""
    rng = random.Random(11)
    stems = ["aorta", "aortic", "stenosis", "insufficiency", "valve", "mitral", "disease", "syndrome",
             "banana", "ananas", "organism", "corgamonas", "algamonas", "radiation", "induced", "poly"]
    words = set(stems)
    for _ in range(1500):
        k = rng.randint(1, 4)
        words.add(" ".join(rng.choice(stems) for _ in range(k)))
    for _ in range(300):
        w = list(rng.choice(stems))
        w[rng.randrange(len(w))] = rng.choice("aeiourstnlé")
        words.add("".join(w))
    words |= {"aaa", "aaaa", "aaaaaaaaaa", "ab", "x", "ééé", "naïve", "crème brûlée", "почечная недостаточность",
              "高血圧症", "\U0001f600 smile", "a\U0001f600b", "insuffisance aortique"}
    return sorted(words)


VOCABULARY = _vocabulary()


def _write(path: Path, strings: list[str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    writer = SimstringDBWriter(str(path))
    for s in strings:
        writer.db.insert(safe_unicode(s))
    writer.db.close()
    return path


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return _write(tmp_path_factory.mktemp("simstring"), VOCABULARY)


_readers: dict = {}


def _pair(db: Path, measure: str, threshold: float):
    key = (str(db), measure, threshold)
    if key not in _readers:
        _readers[key] = (SimstringDBReader(str(db), measure, threshold), SimstringReader(db, measure, threshold))
    return _readers[key]


def _queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = rng.choice(VOCABULARY)
        r = rng.random()
        if r < 0.3:
            out.append(s)
        elif r < 0.6:
            w = list(s)
            for _ in range(rng.randint(1, 3)):
                w[rng.randrange(len(w))] = rng.choice("aeiou rstné")
            out.append("".join(w))
        elif r < 0.85:
            out.append(s + " " + rng.choice(VOCABULARY))
        else:
            out.append(s[:rng.randint(1, max(1, len(s)))])
    return out


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("threshold", [0.5, 0.7, 0.8, 0.85, 1.0])
def test_the_same_strings_in_the_same_order_as_the_cxx_reader(db, measure, threshold):
    cxx, ours = _pair(db, measure, threshold)
    queries = _queries(400, seed=hash((measure, threshold)) % 1000)
    got = [ours.get(q) for q in queries]
    assert got == [cxx.get(q) for q in queries]
    assert sum(map(len, got)) > 0  # not a comparison of empty answers


def test_the_order_is_the_cxx_readers_not_the_database_order(db):
    """Results come in the order CPMerge accepts them (per size, then by the step at which a
    candidate reaches its minimum overlap), not by string id: the sort of the posting
    lists and the verification order must both be the C++'s."""
    cxx, ours = _pair(db, "jaccard", 0.5)
    order = {s: i for i, s in enumerate(VOCABULARY)}  # inserted in this order
    shuffled = 0
    for q in _queries(600, seed=3):
        expected = cxx.get(q)
        assert ours.get(q) == expected
        # within one size, the C++ need not return database order
        ids = [order.get(s) for s in expected]
        shuffled += any(a is not None and b is not None and a > b for a, b in zip(ids, ids[1:]))
    assert shuffled > 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(alphabet=st.sampled_from(list("aortic stenosbanaé") + ["\U0001f600", "\x01"]), max_size=40),
       measure=st.sampled_from(MEASURES), threshold=st.sampled_from([0.6, 0.8, 0.9]))
def test_any_query_is_answered_as_the_cxx_reader_answers_it(db, query, measure, threshold):
    cxx, ours = _pair(db, measure, threshold)
    assert ours.get(query) == cxx.get(query)


def test_a_repeated_query_ngram_counts_its_list_once_per_repeat(tmp_path):
    """The C++ reader numbers no repeat on the query side (see simstring_kernels): the
    query's two "rga" count "algamonas (organism)"'s one "rga" twice, so it is returned at
    0.85 although the similarity QuickUMLS then computes for it is 16/19."""
    path = _write(tmp_path / "db", ["algamonas (organism)", "corgamonas (organism)"])
    query = "corgamonas (organism)"
    expected = ("algamonas (organism)", "corgamonas (organism)")
    assert SimstringDBReader(str(path), "jaccard", 0.85).get(query) == expected
    assert SimstringReader(path, "jaccard", 0.85).get(query) == expected
    assert get_similarity(query, "algamonas (organism)", 3, "jaccard") == 16 / 19 < 0.85


def test_features_number_repeats_only_as_the_writer_does():
    query = np.frombuffer("banana".encode("utf-32-le"), dtype=np.uint32)

    def grams(numbered: bool) -> list[str]:
        keys, ends = kernels.features(query, 3, False, numbered)
        return ["".join(map(chr, keys[a:b])) for a, b in zip([0, *ends[:-1]], ends)]

    assert grams(True) == ["ana", "ana2", "ban", "nan"]
    assert grams(False) == ["ana", "ana", "ban", "nan"]
    short = np.frombuffer("ab".encode("utf-32-le"), dtype=np.uint32)
    keys, ends = kernels.features(short, 3, False, False)
    assert keys.tolist() == [ord("a"), ord("b"), 1] and ends.tolist() == [3]  # padded with 0x01
    keys, ends = kernels.features(short, 3, True, False)
    assert ["".join(map(chr, keys[a:b])) for a, b in zip([0, *ends[:-1]], ends)] == ["\x01\x01a", "\x01ab", "ab\x01", "b\x01\x01"]


def test_the_directory_holds_every_string_under_every_feature(db):
    """build_directory: each database string is in the posting list of each of its
    (writer-numbered) features, at its own size, and nowhere else."""
    reader = SimstringReader(db, "jaccard", 0.8)
    slot_id, slot_hash, key_end, arena, dir_start, ent_size, ent_start, ent_count = reader._directory
    raw = reader._master
    offsets = {}
    pos = 36
    while pos < len(raw):
        end = pos
        while raw[end:end + 4] != b"\0\0\0\0":
            end += 4
        offsets[raw[pos:end].decode("utf-32-le")] = pos
        pos = end + 4
    assert set(offsets) == {safe_unicode(s) for s in VOCABULARY}
    found = 0
    for s, off in offsets.items():
        query = np.frombuffer(s.encode("utf-32-le"), dtype=np.uint32)
        keys, ends = kernels.features(query, 3, False, True)
        for a, b in zip([0, *ends[:-1]], ends):
            f = kernels._feature_id(keys, a, b, slot_id, slot_hash, key_end, arena)
            assert f >= 0
            sizes = ent_size[dir_start[f]:dir_start[f + 1]].tolist()
            assert sizes == sorted(set(sizes))
            e = dir_start[f] + sizes.index(len(ends))
            db_words = reader._dbs[len(ends) - 1]
            assert off in db_words[ent_start[e]:ent_start[e] + ent_count[e]].tolist()
            found += 1
    assert found == sum(max(len(s) - 2, 1) for s in offsets)
    assert kernels._feature_id(np.array([7, 7, 7], dtype=np.uint32), 0, 3, slot_id, slot_hash, key_end, arena) == -1


def test_an_empty_database_answers_nothing(tmp_path):
    path = _write(tmp_path / "empty", [])
    assert SimstringReader(path, "jaccard", 0.8).get("aorta") == () == SimstringDBReader(str(path), "jaccard", 0.8).get("aorta")


def test_a_database_it_cannot_read_is_refused(tmp_path):
    path = _write(tmp_path / "db", ["aorta"])
    master = path / "umls-terms.simstring"
    data = bytearray(master.read_bytes())
    data[16:20] = (1).to_bytes(4, "little")  # one-byte characters: not QuickUMLS' unicode mode
    master.write_bytes(bytes(data))
    with pytest.raises(UnsupportedDatabase, match="1-byte characters"):
        SimstringReader(path, "jaccard", 0.8)
    master.write_bytes(b"SSDX" + bytes(data[4:]))
    with pytest.raises(UnsupportedDatabase, match="not a simstring master file"):
        SimstringReader(path, "jaccard", 0.8)
    with pytest.raises(UnsupportedDatabase, match="similarity 'levenshtein'"):
        SimstringReader(path, "levenshtein", 0.8)


def test_a_lone_surrogate_is_one_more_code_point_no_string_holds(db):
    """The C++ binding crashes on it (a segmentation fault): here it is answered like any
    character the vocabulary lacks."""
    cxx, ours = _pair(db, "jaccard", 0.5)
    expected = cxx.get("aortic stenosis\x02x")
    assert expected  # something to compare
    assert ours.get("aortic stenosis\ud800x") == expected


# ------------------------------------------------------------------- libstdc++'s std::sort

_SORT_CPP = r"""
#include <algorithm>
#include <cstdio>
#include <vector>
struct post { int num; int id; friend bool operator<(const post& x, const post& y) { return x.num < y.num; } };
int main() {
    int heap, cases; if (scanf("%d %d", &heap, &cases) != 2) return 1;
    while (cases--) {
        int n; if (scanf("%d", &n) != 1) return 1;
        std::vector<post> v(n);
        for (int i = 0; i < n; ++i) { if (scanf("%d", &v[i].num) != 1) return 1; v[i].id = i; }
        if (heap) std::partial_sort(v.begin(), v.end(), v.end());  // introsort past its depth limit
        else std::sort(v.begin(), v.end());
        for (int i = 0; i < n; ++i) printf("%d ", v[i].id);
        printf("\n");
    }
    return 0;
}
"""


def _sort_cases() -> list[list[int]]:
    rng = random.Random(5)
    cases = [[], [3], [2, 1], [0] * 17, list(range(40, 0, -1)), [1, 0] * 30]
    for _ in range(400):
        n = rng.choice([rng.randint(2, 16), rng.randint(17, 80), rng.randint(81, 300)])
        hi = rng.choice([1, 3, 10, 1000])
        cases.append([rng.randint(0, hi) for _ in range(n)])
    return cases


def _ours(nums: list[int], heap: bool = False) -> list[int]:
    a = np.array(nums, dtype=np.int64)
    ids = np.arange(len(nums), dtype=np.int64)
    if heap:
        kernels._heap_sort(a, ids, 0, len(nums))
    else:
        kernels.std_sort(a, ids, np.empty((kernels._STACK, 3), dtype=np.int64))
    assert a.tolist() == sorted(nums)
    return ids.tolist()


def test_std_sort_sorts_and_is_stable_where_libstdcxx_is():
    """Up to 16 elements libstdc++ only insertion-sorts, which keeps ties in order."""
    for nums in _sort_cases():
        ids = _ours(nums)
        assert sorted(ids) == list(range(len(nums)))
        if len(nums) <= 16:
            assert ids == sorted(range(len(nums)), key=lambda i: nums[i])
    # past 16 it is not stable: the partition moves ties
    assert _ours([1, 0] * 30) != sorted(range(60), key=lambda i: [1, 0][i % 2])


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to compile libstdc++'s std::sort for comparison")
def test_std_sort_permutes_as_libstdcxx_does(tmp_path):
    source = tmp_path / "sort.cpp"
    source.write_text(_SORT_CPP)
    binary = tmp_path / "sort"
    subprocess.run(["g++", "-O2", "-o", str(binary), str(source)], check=True)
    cases = _sort_cases()
    for heap in (False, True):
        stdin = f"{int(heap)} {len(cases)}\n" + "".join(f"{len(c)} {' '.join(map(str, c))}\n" for c in cases)
        out = subprocess.run([str(binary)], input=stdin, capture_output=True, text=True, check=True).stdout.splitlines()
        assert len(out) == len(cases)
        for nums, line in zip(cases, out):
            assert _ours(nums, heap) == [int(x) for x in line.split()], (heap, nums)
