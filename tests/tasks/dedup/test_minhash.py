"""tasks.dedup.minhash: batched signatures bit-identical to datasketch, and LSH fed by them."""
from __future__ import annotations

import numpy as np
import pytest
from datasketch import LeanMinHash, MinHash, MinHashLSH
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.text import char_shingles
from tasks.dedup import minhash as mh
from tasks.dedup.minhash import (
    MinHasher,
    default_scheme,
    lsh_insert_many,
    signatures,
    text_signatures,
    to_lean,
    to_leans,
)

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Letters that exercise normalisation and UTF-8 widths: Latin with accents, Greek,
# Cyrillic, Han, hiragana/katakana with precomposed and combining voicing marks
# (U+3099/U+309A), half-width katakana with its own voicing mark (U+FF9E), Hangul,
# full-width Latin, ligatures, emoji (4-byte UTF-8), and all kinds of whitespace.
_CHARS = (
    "abcdefghijklmnopqrstuvwxyz ABCXYZ 0123456789 .,;:?!-'()"
    "éèêàçñüößÆœ ﬁ αβγΩ абвгдЖЯ 心筋梗塞症状何高齢者糖尿病"
    "がぎぐげござじばぱ か\u3099は\u309a ガギグパピ カ\u3099ハ\u309a ｶﾞｷﾞﾊﾟ ｶ\uff9e ー々"
    "한국어의학 ＡＢＣ１２３ 🫀💊 \t\n\u00a0\u3000\u2003"
)
texts_st = st.one_of(
    st.text(alphabet=st.sampled_from(_CHARS), max_size=80),
    st.text(alphabet=st.sampled_from(_CHARS), min_size=1, max_size=3),  # short: one shingle
    st.just(""),
    st.just("   \t "),  # normalises to empty
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),  # any unicode
)
corpus_st = st.lists(texts_st, min_size=1, max_size=30)  # >8 sets: the batched path
seed_st = st.one_of(st.sampled_from([0, 1, 42, 20261122]), st.integers(0, 2**32 - 1))
num_perm_st = st.sampled_from([16, 128, 256])
scheme_st = st.sampled_from(["affine32", "legacy", "affine64"])
n_st = st.sampled_from([1, 3, 5])


def reference(shingles, num_perm: int, seed: int, scheme: str | None = None) -> MinHash:
    """What tasks/dedup/near_duplicates.py builds: datasketch, one update_batch of UTF-8 bytes."""
    kwargs = {} if scheme is None else {"scheme": scheme}
    m = MinHash(num_perm=num_perm, seed=seed, **kwargs)
    m.update_batch([s.encode("utf-8") if isinstance(s, str) else s for s in sorted(shingles, key=repr)])
    return m


def reference_matrix(sets, num_perm, seed, scheme=None) -> np.ndarray:
    return np.stack([reference(s, num_perm, seed, scheme).hashvalues for s in sets])


def assert_identical(ours: np.ndarray, ref: np.ndarray) -> None:
    assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
    assert ours.shape == ref.shape
    assert np.array_equal(ours, ref)


# -- signatures are datasketch's, bit for bit ----------------------------------------


@SETTINGS
@given(corpus=corpus_st, num_perm=num_perm_st, seed=seed_st, n=n_st)
def test_signatures_equal_datasketch_default_scheme(corpus, num_perm, seed, n):
    sets = [char_shingles(t, n) for t in corpus]
    ref = reference_matrix(sets, num_perm, seed)  # MinHash(num_perm, seed): datasketch's default
    assert_identical(signatures(sets, num_perm, seed), ref)
    assert_identical(MinHasher(num_perm, seed).signatures(iter(sets)), ref)  # a generator too
    assert_identical(text_signatures(corpus, n, num_perm, seed), ref)


@SETTINGS
@given(corpus=corpus_st, num_perm=num_perm_st, seed=seed_st, scheme=scheme_st)
def test_signatures_equal_datasketch_every_scheme(corpus, num_perm, seed, scheme):
    sets = [char_shingles(t, 5) for t in corpus]
    ref = reference_matrix(sets, num_perm, seed, scheme)
    hasher = MinHasher(num_perm, seed, scheme)
    assert_identical(hasher.signatures(sets), ref)
    assert_identical(hasher.text_signatures(corpus, 5), ref)
    # bytes shingles (list[list[bytes]]) hash exactly as datasketch hashes them
    byte_sets = [[s.encode("utf-8") for s in sh] for sh in sets]
    assert_identical(hasher.signatures(byte_sets), ref)


@SETTINGS
@given(corpus=corpus_st, seed=seed_st, scheme=scheme_st, cache_rows=st.sampled_from([2, 3, 17, 64]),
       group=st.sampled_from([1, 2, 5]), chunk=st.sampled_from([1, 3, 1000]))
def test_tiny_caches_and_chunks_change_nothing(corpus, seed, scheme, cache_rows, group, chunk):
    """Cache evictions, oversized batches and chunk boundaries never change a result."""
    sets = [char_shingles(t, 5) for t in corpus]
    ref = reference_matrix(sets, 16, seed, scheme)
    item = 8 if scheme == "affine64" else 4
    hasher = MinHasher(16, seed, scheme, chunk=chunk, group=group, cache_bytes=cache_rows * 16 * item)
    for _ in range(2):  # second round: whatever the caches kept
        assert_identical(hasher.signatures(sets), ref)
        assert_identical(hasher.text_signatures(corpus, 5), ref)


def test_empty_set_is_an_empty_datasketch_minhash():
    for scheme in ("affine32", "legacy", "affine64"):
        empty = MinHash(num_perm=128, seed=3, scheme=scheme)
        empty.update_batch([])
        hasher = MinHasher(128, 3, scheme)
        assert_identical(hasher.signatures([set(), {"abcde"}, set()])[[0, 2]], np.stack([empty.hashvalues] * 2))
        assert_identical(hasher.text_signatures(["", " \n "], 5), np.stack([empty.hashvalues] * 2))
        assert hasher.signatures([]).shape == (0, 128)
        assert to_lean(hasher.signatures([set()])[0], 3, scheme).is_empty()


def test_default_scheme_is_what_dedup_uses():
    assert default_scheme() == MinHash(num_perm=8, seed=1).scheme == "affine32"
    assert signatures([{"abcde"}], 8, 1).dtype == MinHash(num_perm=8, seed=1).hashvalues.dtype


def test_to_lean_equals_datasketch_lean():
    sets = [char_shingles(t, 5) for t in ["Heart attack symptoms", "心筋梗塞の症状", "ab"]]
    sigs = signatures(sets, 128, 7)
    for row, lean, sh in zip(sigs, to_leans(sigs, 7), sets):
        ref = LeanMinHash(reference(sh, 128, 7))
        assert to_lean(row, 7) == ref and lean == ref
        assert lean.jaccard(ref) == 1.0


# -- MinHashLSH gives the same answers ---------------------------------------------------

_WORDS = ["heart", "attack", "symptoms", "elderly", "patients", "心筋梗塞", "症状", "高齢者", "ガス",
          "fever", "chest", "pain", "diabetes", "insulin", "dose"]
question_st = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12).map(" ".join)


def _edits(draw_texts):
    """Each question plus a one-word edit of it, so that LSH has near-duplicates to find."""
    out = []
    for i, t in enumerate(draw_texts):
        out.append(t)
        words = t.split()
        words[i % len(words)] = _WORDS[i % len(_WORDS)]
        out.append(" ".join(words))
    return out


@SETTINGS
@given(questions=st.lists(question_st, min_size=1, max_size=15), seed=seed_st,
       num_perm=st.sampled_from([128, 256]), threshold=st.sampled_from([0.3, 0.5, 0.7, 0.9]),
       extra=st.lists(texts_st, max_size=4))
def test_lsh_answers_identical(questions, seed, num_perm, threshold, extra):
    texts = _edits(questions) + extra
    keys = [f"k{i}" for i in range(len(texts))]
    sets = [char_shingles(t, 5) for t in texts]
    theirs = MinHashLSH(threshold=threshold, num_perm=num_perm)
    for key, sh in zip(keys, sets):
        theirs.insert(key, reference(sh, num_perm, seed))
    sigs = MinHasher(num_perm, seed).text_signatures(texts, 5)
    ours_fast = MinHashLSH(threshold=threshold, num_perm=num_perm)
    lsh_insert_many(ours_fast, keys, sigs, seed)  # in-memory: filled directly
    ours_session = MinHashLSH(threshold=threshold, num_perm=num_perm, prepickle=True)
    lsh_insert_many(ours_session, keys, sigs, seed)  # other storage: insertion_session
    ours_plain = MinHashLSH(threshold=threshold, num_perm=num_perm)
    for key, row in zip(keys, sigs):
        ours_plain.insert(key, to_lean(row, seed))
    # the same buckets ...
    for lsh in (ours_fast, ours_plain):
        assert lsh.keys._dict == theirs.keys._dict
        assert [t._dict for t in lsh.hashtables] == [t._dict for t in theirs.hashtables]
    # ... and the same answers, whichever side the query MinHash comes from
    for sh, row in zip(sets, sigs):
        expected = sorted(theirs.query(reference(sh, num_perm, seed)))
        for lsh in (theirs, ours_fast, ours_session, ours_plain):
            assert sorted(lsh.query(to_lean(row, seed))) == expected
        assert sorted(ours_fast.query(reference(sh, num_perm, seed))) == expected


def test_lsh_insert_many_rejects_what_insert_rejects():
    sigs = signatures([{"abcde"}, {"fghij"}], 128, 1)
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    with pytest.raises(ValueError, match="already exists"):
        lsh_insert_many(lsh, ["a", "a"], sigs, 1)
    assert lsh.is_empty()  # nothing half-inserted
    lsh_insert_many(lsh, ["a", "b"], sigs, 1)
    with pytest.raises(ValueError, match="already exists"):
        lsh_insert_many(lsh, ["b"], sigs[:1], 1)
    with pytest.raises(ValueError, match="length"):
        lsh_insert_many(MinHashLSH(threshold=0.5, num_perm=64), ["a"], sigs[:1], 1)
    with pytest.raises(ValueError, match="scheme"):
        lsh_insert_many(lsh, ["c"], signatures([{"abcde"}], 128, 1, scheme="legacy"), 1, scheme="legacy")
    with pytest.raises(ValueError, match="keys for"):
        lsh_insert_many(lsh, ["c"], sigs, 1)
    lsh_insert_many(lsh, ["b"], sigs[:1], 1, check_duplication=False)  # as lsh.insert allows


def test_a_failed_call_leaves_the_caches_consistent():
    """A shingle datasketch cannot hash (a lone surrogate: not UTF-8 encodable) raises as
    datasketch does; shingles numbered before the error get no stale row."""
    hasher = MinHasher(16, 1)
    with pytest.raises(UnicodeEncodeError):
        MinHash(num_perm=16, seed=1).update_batch(["x\ud800y".encode("utf-8")])
    for bad in ([{"abcde", "bcdef"}, {"x\ud800y"}], [{"abcde"}, {"bcdef", "x\ud800y"}]):
        with pytest.raises(UnicodeEncodeError):
            hasher.signatures(bad)
    sets = [{"abcde"}, {"abcde", "bcdef"}, {"bcdef"}]
    assert_identical(hasher.signatures(sets), reference_matrix(sets, 16, 1))


@pytest.mark.parametrize("scheme", ["affine32", "legacy", "affine64"])
@pytest.mark.parametrize("chunk", [1, 4, 2048])
def test_edge_shapes_of_the_batched_path(scheme, chunk):
    """Every branch of the chunked reduction against datasketch: empty sets, one-shingle
    sets, a set far larger than the others (the long tail finished set by set) and than
    the chunk, repeated sets (the same object and equal copies), sets without len(), and
    a cache so small that every chunk overflows it and is cleared (twice over)."""
    rng = np.random.default_rng(14)
    vocab = [f"s{i:05d}" for i in range(3000)]
    big = set(rng.choice(vocab, 2500, replace=False).tolist())
    small = [set(rng.choice(vocab, int(k), replace=False).tolist()) for k in rng.integers(2, 40, 30)]
    sets = [set(), {"abcde"}, big, *small[:10], set(), small[0], set(small[0]), {"abcde"}, {"zz"},
            *small[10:], big, set(), {"é"}]
    ref = reference_matrix(sets, 32, 5, scheme)
    item = 8 if scheme == "affine64" else 4
    for cache_rows in (2, 50, 1 << 16):  # overflow on nearly every set / every few chunks / never
        hasher = MinHasher(32, 5, scheme, chunk=chunk, cache_bytes=cache_rows * 32 * item)
        for _ in range(2):  # second round: whatever the caches kept
            assert_identical(hasher.signatures(sets), ref)
            assert_identical(hasher.signatures(iter(sets)), ref)
            assert_identical(hasher.signatures(iter(s) for s in sets), ref)  # sets without len()
            assert hasher._shingles.known <= max(2, cache_rows)  # the memory bound holds between calls
        assert_identical(hasher.signatures([big] * 20), np.stack([ref[2]] * 20))
        assert_identical(hasher.signatures([{"abcde"}] * 20 + [set()] * 20), np.stack([ref[1]] * 20 + [ref[0]] * 20))


def test_sets_the_shingle_table_cannot_take_are_hashed_alone():
    """The compiled table reads a chunk's shingles separated by U+001F (within a set) and
    U+001E (between sets): a set whose shingles contain either, or that holds bytes
    beside str, is hashed on its own -- and its neighbours in the chunk are untouched."""
    sets = [{"abcde", "bcdef"}, {"ab\x1fcd"}, {"ab\x1fcd", "x"}, {"a\x1eb", "cdefg"}, {"\x1f", "\x1e"},
            {"abcde", b"bcdef"}, [b"abcde", b"zzz"], set(), {""}, {"", "a"}, {"bcdef", "abcde"}]
    for scheme in ("affine32", "legacy", "affine64"):
        ref = reference_matrix(sets, 16, 3, scheme)
        for chunk in (1, 4, 100):
            assert_identical(MinHasher(16, 3, scheme, chunk=chunk).signatures(sets), ref)
    # {""} is one (empty) shingle, not an empty set
    assert not np.array_equal(ref[7], ref[8])


def _fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for c in data:
        h = ((h ^ c) * 0x100000001B3) & (2**64 - 1)
    return h


def test_the_shingle_table_compares_bytes_not_only_hashes():
    """tasks.dedup.kernels.number_shingles: a slot whose stored hash equals the new
    shingle's but whose bytes differ (a 64-bit collision, crafted here) is another
    shingle; equal bytes of another length are too; equal bytes are the same."""
    from tasks.dedup import kernels

    size = 16
    slot_hash = np.zeros(size, dtype=np.uint64)
    slot_id = np.full(size, -1, dtype=np.int64)
    arena = np.zeros(64, dtype=np.uint8)
    arena_end = np.zeros(8, dtype=np.int64)
    # shingle 0 is "abc" and shingle 1 "xyzw", both stored with "xyz"'s hash, in the
    # slot where "xyz" lands and the next one
    h = _fnv1a(b"xyz")
    slot_hash[h % size], slot_id[h % size] = h, 0
    slot_hash[(h + 1) % size], slot_id[(h + 1) % size] = h, 1
    arena[:7] = np.frombuffer(b"abcxyzw", dtype=np.uint8)
    arena_end[1:3] = [3, 7]
    buf = np.frombuffer(b"xyz\x1fabc\x1exyz\x1fxyzw", dtype=np.uint8)
    lens = np.array([2, 2], dtype=np.intp)
    ids = np.full(4, -7, dtype=np.intp)
    state = np.array([0, 0, 0, 2], dtype=np.int64)
    assert kernels.number_shingles(buf, lens, state, slot_hash, slot_id, arena, arena_end, ids) == kernels.DONE
    # "xyz" is new (2); "abc" and "xyzw" are not in their own hash's slots, so they are
    # numbered anew (3, 4): the table never trusts a hash alone
    assert ids.tolist() == [2, 3, 2, 4]
    assert state.tolist() == [2, len(buf) + 1, 4, 5]
    assert arena[: arena_end[5]].tobytes() == b"abcxyzwxyzabcxyzw"


def test_the_shingle_table_asks_for_room_and_resumes():
    """A chunk that would fill the table past half returns NEEDS_ROOM before the set,
    with its state saved; after the table grows (rehash), the call resumes and numbers
    every shingle as one uninterrupted call would."""
    from tasks.dedup import kernels

    words = [f"w{i}".encode() for i in range(40)]
    buf = np.frombuffer(b"\x1e".join([b"\x1f".join(words[:3]), b"\x1f".join(words[3:40]), words[0]]), dtype=np.uint8)
    lens = np.array([3, 37, 1], dtype=np.intp)
    ids = np.empty(41, dtype=np.intp)
    slot_hash, slot_id = np.zeros(8, dtype=np.uint64), np.full(8, -1, dtype=np.int64)
    arena, arena_end = np.zeros(len(buf), dtype=np.uint8), np.zeros(64, dtype=np.int64)
    state = np.zeros(4, dtype=np.int64)
    assert kernels.number_shingles(buf, lens, state, slot_hash, slot_id, arena, arena_end, ids) == kernels.NEEDS_ROOM
    assert state.tolist() == [1, 9, 3, 3]  # before set 1, which would pass half of 8 slots
    grown_hash, grown_id = np.zeros(128, dtype=np.uint64), np.full(128, -1, dtype=np.int64)
    kernels.rehash(slot_hash, slot_id, grown_hash, grown_id)
    assert sorted(grown_id[grown_id >= 0].tolist()) == [0, 1, 2]
    assert kernels.number_shingles(buf, lens, state, grown_hash, grown_id, arena, arena_end, ids) == kernels.DONE
    assert ids.tolist() == list(range(40)) + [0]


# --- contracts a one-token change would break (benchmarks/mutation.py) ---------------------------

def test_minhasher_defaults_are_datasketchs_and_num_perm_must_be_positive():
    from datasketch import MinHash

    m = mh.MinHasher()
    assert (m.num_perm, m.seed) == (128, 1) and m.scheme == MinHash(num_perm=1).scheme
    assert mh.MinHasher(num_perm=1).signatures([{"ab"}]).shape == (1, 1)
    with pytest.raises(ValueError, match="positive"):
        mh.MinHasher(num_perm=0)
    assert m.lean(m.signatures([{"ab"}])[0]) == mh.to_lean(m.signatures([{"ab"}])[0], 1)


def test_nothing_in_gives_no_rows_and_leans_carry_the_default_scheme():
    m = mh.MinHasher(16, 3)
    assert m.text_signatures([], 5).shape == (0, 16) and m.signatures([]).shape == (0, 16)
    lean = mh.to_lean(m.signatures([{"ab"}])[0], 3)
    assert lean.scheme == mh.default_scheme() and lean.seed == 3


def test_a_batch_larger_than_the_whole_cache_is_hashed_outside_it():
    texts = ["one two three four five six seven eight", "nine ten eleven twelve"]
    tiny = mh.MinHasher(16, 1, cache_bytes=2 * 16 * 4)  # room for one piece
    assert np.array_equal(tiny.text_signatures(texts, 5), mh.MinHasher(16, 1).signatures([char_shingles(t, 5) for t in texts]))


def test_lsh_insert_many_names_the_lengths_it_expected():
    from datasketch import MinHashLSH

    sigs = mh.signatures([{"abcde"}], 128, 1)
    with pytest.raises(ValueError, match="^Expecting minhash with length 64, got 128$"):
        mh.lsh_insert_many(MinHashLSH(threshold=0.5, num_perm=64), ["a"], sigs, 1)


def test_the_row_cache_computes_each_key_once_and_knows_its_capacity():
    calls: list[list[str]] = []

    def compute(keys):
        calls.append(list(keys))
        return np.array([[ord(k[0])] * 4 for k in keys], dtype=np.uint32)

    empty = (1 << 32) - 1
    cache = mh._RowCache(4, np.dtype(np.uint32), empty, max_rows=6)  # row 0 (empty) + 5 keys
    assert cache.ids(["a", "b", "a"], compute).tolist() == [1, 2, 1] and calls == [["a", "b"]]
    assert cache.ids(["b", "a"], compute).tolist() == [2, 1] and len(calls) == 1  # all cached: nothing computed
    assert cache.ids(["c", "a", "d"], compute).tolist() == [3, 1, 4] and calls[-1] == ["c", "d"]
    assert cache.ids(["e"], compute).tolist() == [5]  # the last row
    assert cache.table[0].tolist() == [empty] * 4 and cache.table[5].tolist() == [ord("e")] * 4
    before = (dict(cache.rows), cache.used, len(calls))
    assert cache.ids(["f", "a"], compute) is None and (dict(cache.rows), cache.used, len(calls)) == before  # full
    table, ids = cache.local(["x", "y", "x"], compute)
    assert ids.tolist() == [1, 2, 1] and table[0].tolist() == [empty] * 4 and table[2].tolist() == [ord("y")] * 4
    tiny = mh._RowCache(4, np.dtype(np.uint32), empty, max_rows=0)  # at least room for one key
    assert tiny.ids(["a"], compute).tolist() == [1] and tiny.ids(["b"], compute) is None
