"""Compiled simstring search (numba): the C++ reader's ``retrieve`` (quickumls_simstring
1.1.5, simstring.h ``ngramdb_reader_base::overlapjoin``) over the same database files,
step for step, so that it returns the same strings in the same order.

Why: QuickUMLS asks simstring for every n-gram of every text, and that search was 65% of
English grounding CPU (110 us a search in the build, 58 us replayed alone). What the
difference goes to is memory: the C++ looks every query feature up once per candidate
size through a CDB++ hash table, about 400 scattered reads a query. A port of the same
look-ups was no faster (75 us), so here each feature is looked up once, in a directory of
its posting lists by size (``build_directory``), and the lists are read from the same
memory-mapped files.

What must match the C++ exactly, since it decides the order of the results:
- the query's n-grams: simstring's ``ngrams`` (a std::map of the n-grams, in code-point
  order; each repeat of an n-gram emitted once more). The writer numbers repeats ("abc",
  "abc2", "abc3") through a wide stringstream; the reader's query is a
  ``basic_string<uint32_t>``, whose stringstream has no num_put facet, so ``ss << i``
  fails silently and a repeat is emitted as the n-gram itself. Its posting list is then
  counted once per repeat. Measured, not guessed: with numbered repeats this port missed
  37 of 5,000 queries' results that the C++ returns;
- which strings each feature's posting list holds for each size: read here from the
  CDB++ images' records, not looked up through their hash tables (``build_directory``);
- the candidate sizes and minimum overlaps, in double precision, as measure.h has them;
- ``std::sort`` of the posting lists by length: libstdc++'s introsort (median of three,
  unguarded partition, heap sort past the depth limit, then insertion sort), which is not
  stable, and which lists go first decides which results come out first;
- the two CPMerge steps, results appended in the order the C++ appends them.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# simstring's measure ids (simstring.h): exact, dice, cosine, jaccard, overlap
EXACT, DICE, COSINE, JACCARD, OVERLAP = 0, 1, 2, 3, 4

_INT_MAX = 2147483647
_MARK = 1  # simstring pads strings shorter than n with 0x01
_THRESHOLD = 16  # libstdc++ _S_threshold
_STACK = 2 * 64 + 2  # std_sort's pending ranges: the depth limit, 2 log2(n), plus one


@njit(cache=True, nogil=True)
def _min_size(measure, q, alpha):
    if measure == DICE:
        # measure.h divides by 2 - q: zero or negative from q = 2 on, so the C++ bound
        # (a cast of -inf or of a negative number, then max(., 1)) is 1
        return int(math.ceil(alpha * q / (2.0 - q))) if q < 2 else 1
    if measure == COSINE:
        return int(math.ceil(alpha * alpha * q))
    if measure == JACCARD:
        return int(math.ceil(alpha * q))
    if measure == OVERLAP:
        return 1
    return q


@njit(cache=True, nogil=True)
def _max_size(measure, q, alpha):
    if measure == DICE:
        return int(math.floor((2.0 - alpha) * q / alpha))
    if measure == COSINE:
        return int(math.floor(q / (alpha * alpha)))
    if measure == JACCARD:
        return int(math.floor(q / alpha))
    if measure == OVERLAP:
        return _INT_MAX
    return q


@njit(cache=True, nogil=True)
def _min_match(measure, q, r, alpha):
    if measure == DICE:
        return int(math.ceil(0.5 * alpha * (q + r)))
    if measure == COSINE:
        return int(math.ceil(alpha * math.sqrt(float(q) * r)))
    if measure == JACCARD:
        return int(math.ceil(alpha * (q + r) / (1 + alpha)))
    if measure == OVERLAP:
        return int(math.ceil(alpha * min(q, r)))
    return q


@njit(cache=True, nogil=True)
def _gram_less(src, a, b, n):
    for k in range(n):
        if src[a + k] != src[b + k]:
            return src[a + k] < src[b + k]
    return False


@njit(cache=True, nogil=True)
def features(query, n, be, numbered):
    """simstring's n-gram features of ``query`` (uint32 code points), as uint32 keys in a
    flat array: feature i is ``keys[ends[i - 1]:ends[i]]`` (``ends[-1]`` taken as 0).
    ``numbered``: repeats numbered as the writer numbers them; else repeated as they are,
    as the reader's query has them (see the module docstring)."""
    if be:
        src = np.empty(len(query) + 2 * (n - 1), dtype=np.uint32)
        src[:n - 1] = _MARK
        src[n - 1:n - 1 + len(query)] = query
        src[n - 1 + len(query):] = _MARK
    elif len(query) < n:
        src = np.empty(n, dtype=np.uint32)
        src[:len(query)] = query
        src[len(query):] = _MARK
    else:
        src = query
    m = len(src) - n + 1
    # windows in std::map order
    if n <= 3:  # code points take 21 bits: three pack into an integer that orders like the n-gram
        packed = np.zeros(m, dtype=np.uint64)
        for i in range(m):
            for k in range(n):
                packed[i] = (packed[i] << np.uint64(21)) | np.uint64(src[i + k])
        order = np.argsort(packed)
    else:  # insertion sort: m is a few dozen
        order = np.arange(m)
        for i in range(1, m):
            v = order[i]
            j = i - 1
            while j >= 0 and _gram_less(src, v, order[j], n):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = v
    keys = np.empty(m * (n + 10), dtype=np.uint32)
    ends = np.empty(m, dtype=np.int64)
    digits = np.empty(20, dtype=np.uint32)
    nk = 0
    nf = 0
    i = 0
    while i < m:
        j = i + 1
        while j < m and not _gram_less(src, order[i], order[j], n):
            j += 1
        start = order[i]
        for c in range(1, j - i + 1):
            keys[nk:nk + n] = src[start:start + n]
            nk += n
            if c >= 2 and numbered:  # "abc" then "abc2", "abc3"...
                nd = 0
                x = c
                while x > 0:
                    digits[nd] = 48 + x % 10
                    x //= 10
                    nd += 1
                for d in range(nd - 1, -1, -1):
                    keys[nk] = digits[d]
                    nk += 1
            ends[nf] = nk
            nf += 1
        i = j
    return keys[:nk], ends[:nf]


_DATA_BEGIN = (16 + 8 * 256) // 4  # CDB++: a 16-byte header and 256 table references, then records
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def _records_end(db):
    """The word where a CDB++ image's records end: its first hash table."""
    end = len(db)
    for t in range(256):
        offset, num = np.int64(db[_DATA_BEGIN - 512 + 2 * t]), np.int64(db[_DATA_BEGIN - 512 + 2 * t + 1])
        if num != 0 and offset != 0 and offset // 4 < end:
            end = offset // 4
    return end


@njit(cache=True, nogil=True)
def _key_hash(words, a, b):
    h = _FNV_OFFSET
    for i in range(a, b):
        h = (h ^ np.uint64(words[i])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def _count_records(dbs):
    """(records, words of their keys) in all the CDB++ images."""
    nrec = nwords = 0
    for db in dbs:
        pos = _DATA_BEGIN
        end = _records_end(db) if len(db) else pos
        while pos < end:  # a record: key size, key, value size, values (sizes in bytes)
            klen = np.int64(db[pos]) // 4
            nrec, nwords = nrec + 1, nwords + klen
            pos += 2 + klen + np.int64(db[pos + 1 + klen]) // 4
    return nrec, nwords


@njit(cache=True, nogil=True)
def build_directory(dbs):
    """Where every feature's posting list is, for every string size, from the records of
    the CDB++ images ``dbs`` (``dbs[s - 1]``: strings of s features; empty: no file).

    The C++ reader looks each query feature up once per candidate size: a hash, a bucket
    and a key in a different image each time, about 400 scattered reads a query (measured
    on the paper build's English n-grams), which is where its time goes once the rest of
    grounding has the CPU caches. Here a feature is looked up once, and its sizes sit next
    to each other. Returns (slot_id, slot_hash, key_end, arena, dir_start, ent_size,
    ent_start, ent_count): an open-addressing table of the features' keys (feature f is
    ``arena[key_end[f]:key_end[f + 1]]``); feature f's lists are entries
    ``dir_start[f]:dir_start[f + 1]``, by ascending size, each a (size, first word, count)
    of the values in ``dbs[size - 1]``."""
    nrec, nwords = _count_records(dbs)
    cap = 16
    while cap < 2 * nrec:
        cap *= 2
    slot_id = np.full(cap, -1, dtype=np.int64)
    slot_hash = np.zeros(cap, dtype=np.uint64)
    key_end = np.zeros(nrec + 1, dtype=np.int64)
    arena = np.empty(nwords, dtype=np.uint32)
    rec_feat = np.empty(nrec, dtype=np.int64)
    rec_size = np.empty(nrec, dtype=np.int32)
    rec_start = np.empty(nrec, dtype=np.int64)
    rec_count = np.empty(nrec, dtype=np.int64)
    nf = 0
    r = 0
    for s in range(len(dbs)):
        db = dbs[s]
        if len(db) == 0:
            continue
        pos, end = _DATA_BEGIN, _records_end(db)
        while pos < end:
            klen = np.int64(db[pos]) // 4
            vlen = np.int64(db[pos + 1 + klen]) // 4
            h = _key_hash(db, pos + 1, pos + 1 + klen)
            f, k = _probe(db, pos + 1, pos + 1 + klen, h, slot_id, slot_hash, key_end, arena)
            if f == -1:
                f = nf
                slot_id[k], slot_hash[k] = f, h
                arena[key_end[f]:key_end[f] + klen] = db[pos + 1:pos + 1 + klen]
                key_end[f + 1] = key_end[f] + klen
                nf += 1
            rec_feat[r], rec_size[r], rec_start[r], rec_count[r] = f, s + 1, pos + 2 + klen, vlen
            r += 1
            pos += 2 + klen + vlen
    # by feature, keeping the images' (ascending size) order within one
    dir_start = np.zeros(nf + 1, dtype=np.int64)
    for i in range(nrec):
        dir_start[rec_feat[i] + 1] += 1
    for f in range(nf):
        dir_start[f + 1] += dir_start[f]
    fill = dir_start[:nf].copy()
    ent_size = np.empty(nrec, dtype=np.int32)
    ent_start = np.empty(nrec, dtype=np.int64)
    ent_count = np.empty(nrec, dtype=np.int64)
    for i in range(nrec):
        j = fill[rec_feat[i]]
        fill[rec_feat[i]] += 1
        ent_size[j], ent_start[j], ent_count[j] = rec_size[i], rec_start[i], rec_count[i]
    return slot_id, slot_hash, key_end[:nf + 1].copy(), arena[:key_end[nf]].copy(), dir_start, ent_size, ent_start, ent_count


@njit(cache=True, nogil=True)
def _probe(words, a, b, h, slot_id, slot_hash, key_end, arena):
    """(feature id, slot) of key ``words[a:b]`` (hash ``h``) in the features' table; id -1
    and the free slot where it would go when absent."""
    mask = len(slot_id) - 1
    k = np.int64(h & np.uint64(mask))
    klen = b - a
    while slot_id[k] != -1:
        g = slot_id[k]
        if slot_hash[k] == h and key_end[g + 1] - key_end[g] == klen:
            same = True
            for i in range(klen):
                if arena[key_end[g] + i] != words[a + i]:
                    same = False
                    break
            if same:
                return g, k
        k = (k + 1) & mask
    return -1, k


@njit(cache=True, nogil=True)
def _feature_id(keys, a, b, slot_id, slot_hash, key_end, arena):
    return _probe(keys, a, b, _key_hash(keys, a, b), slot_id, slot_hash, key_end, arena)[0]


# std::sort, libstdc++ style, on (num, start) pairs compared by num alone ---------------------

@njit(cache=True, nogil=True)
def _swap(nums, starts, i, j):
    nums[i], nums[j] = nums[j], nums[i]
    starts[i], starts[j] = starts[j], starts[i]


@njit(cache=True, nogil=True)
def _move_median_to_first(nums, starts, result, a, b, c):
    if nums[a] < nums[b]:
        if nums[b] < nums[c]:
            _swap(nums, starts, result, b)
        elif nums[a] < nums[c]:
            _swap(nums, starts, result, c)
        else:
            _swap(nums, starts, result, a)
    elif nums[a] < nums[c]:
        _swap(nums, starts, result, a)
    elif nums[b] < nums[c]:
        _swap(nums, starts, result, c)
    else:
        _swap(nums, starts, result, b)


@njit(cache=True, nogil=True)
def _unguarded_partition_pivot(nums, starts, first, last):
    mid = first + (last - first) // 2
    _move_median_to_first(nums, starts, first, first + 1, mid, last - 1)
    pivot = nums[first]
    lo, hi = first + 1, last
    while True:
        while nums[lo] < pivot:
            lo += 1
        hi -= 1
        while pivot < nums[hi]:
            hi -= 1
        if not lo < hi:
            return lo
        _swap(nums, starts, lo, hi)
        lo += 1


@njit(cache=True, nogil=True)
def _adjust_heap(nums, starts, first, hole, length, vnum, vstart):
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if nums[first + second] < nums[first + second - 1]:
            second -= 1
        nums[first + hole], starts[first + hole] = nums[first + second], starts[first + second]
        hole = second
    if length & 1 == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        nums[first + hole], starts[first + hole] = nums[first + second - 1], starts[first + second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and nums[first + parent] < vnum:
        nums[first + hole], starts[first + hole] = nums[first + parent], starts[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    nums[first + hole], starts[first + hole] = vnum, vstart


@njit(cache=True, nogil=True)
def _heap_sort(nums, starts, first, last):
    length = last - first
    if length >= 2:
        parent = (length - 2) // 2
        while True:
            _adjust_heap(nums, starts, first, parent, length, nums[first + parent], starts[first + parent])
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        vnum, vstart = nums[last], starts[last]
        nums[last], starts[last] = nums[first], starts[first]
        _adjust_heap(nums, starts, first, 0, last - first, vnum, vstart)


@njit(cache=True, nogil=True)
def _unguarded_linear_insert(nums, starts, i):
    vnum, vstart = nums[i], starts[i]
    j = i - 1
    while vnum < nums[j]:
        nums[i], starts[i] = nums[j], starts[j]
        i = j
        j -= 1
    nums[i], starts[i] = vnum, vstart


@njit(cache=True, nogil=True)
def _insertion_sort(nums, starts, first, last):
    for i in range(first + 1, last):
        if nums[i] < nums[first]:
            vnum, vstart = nums[i], starts[i]
            for j in range(i, first, -1):
                nums[j], starts[j] = nums[j - 1], starts[j - 1]
            nums[first], starts[first] = vnum, vstart
        else:
            _unguarded_linear_insert(nums, starts, i)


@njit(cache=True, nogil=True)
def std_sort(nums, starts, stack):
    """``std::sort`` as libstdc++ does it, on parallel arrays compared by ``nums``;
    ``stack``: int64 (_STACK, 3), scratch."""
    n = len(nums)
    if n == 0:
        return
    # __introsort_loop; its ranges are disjoint, so a stack in place of the recursion
    # leaves every element where the recursion would (one pending range per level: at
    # most 2 log2(n) + 1)
    depth0 = 0
    x = n
    while x > 1:
        x >>= 1
        depth0 += 1
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 2 * depth0
    top = 1
    while top > 0:
        top -= 1
        first, last, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        while last - first > _THRESHOLD:
            if depth == 0:
                _heap_sort(nums, starts, first, last)
                break
            depth -= 1
            cut = _unguarded_partition_pivot(nums, starts, first, last)
            stack[top, 0], stack[top, 1], stack[top, 2] = cut, last, depth
            top += 1
            last = cut
    # __final_insertion_sort
    if n > _THRESHOLD:
        _insertion_sort(nums, starts, 0, _THRESHOLD)
        for i in range(_THRESHOLD, n):
            _unguarded_linear_insert(nums, starts, i)
    else:
        _insertion_sort(nums, starts, 0, n)


# the search ------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _gallop(db, lo, last, v):
    """The first position in ``db[lo:last]`` (ascending) holding ``v`` or more (``last`` if
    none), found by doubling steps from ``lo`` then halving: a few nearby reads where a
    binary search over the whole list makes about ten scattered ones."""
    step = 1
    hi = lo
    while hi < last and db[hi] < v:
        lo = hi + 1
        hi = lo + step
        step *= 2
    return _lower_bound(db, lo, min(hi, last), v)


@njit(cache=True, nogil=True)
def _lower_bound(a, lo, hi, v):
    """The first position in ``a[lo:hi]`` (ascending) holding ``v`` or more (``hi`` if none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _append(out, n, value):
    """``out`` with ``value`` at position n, grown when full."""
    if n == len(out):
        grown = np.empty(2 * len(out), dtype=np.int64)
        grown[:n] = out[:n]
        out = grown
    out[n] = value
    return out


@njit(cache=True, nogil=True)
def retrieve(query, n, be, measure, alpha, max_size, dbs, slot_id, slot_hash, key_end, arena, dir_start, ent_size,
             ent_start, ent_count):
    """Master-file offsets of the strings simstring's ``retrieve`` returns for ``query``
    (uint32 code points), in its order. ``dbs[s - 1]``: the CDB++ image of strings with s
    features, as uint32 words (empty where simstring wrote no file); the rest is
    ``build_directory(dbs)``."""
    keys, ends = features(query, n, be, False)
    qsize = len(ends)
    out = np.empty(16, dtype=np.int64)
    nout = 0
    xmin = max(_min_size(measure, qsize, alpha), 1)
    xmax = min(_max_size(measure, qsize, alpha), max_size)
    nums = np.empty(qsize, dtype=np.int64)
    starts = np.empty(qsize, dtype=np.int64)
    # each feature's entries, from the first of size xmin or more
    ptr = np.zeros(qsize, dtype=np.int64)
    dir_end = np.zeros(qsize, dtype=np.int64)
    a = 0
    for i in range(qsize):
        f = _feature_id(keys, a, ends[i], slot_id, slot_hash, key_end, arena)
        a = ends[i]
        if f >= 0:
            dir_end[i] = dir_start[f + 1]
            ptr[i] = _lower_bound(ent_size, dir_start[f], dir_start[f + 1], xmin)
    stack = np.empty((_STACK, 3), dtype=np.int64)
    cv = np.empty(64, dtype=np.int64)
    cn = np.empty(64, dtype=np.int64)
    tv = np.empty(64, dtype=np.int64)
    tn = np.empty(64, dtype=np.int64)
    for xsize in range(xmin, xmax + 1):
        db = dbs[xsize - 1]
        if len(db) == 0:
            continue
        absent = 0
        for i in range(qsize):
            p, e = ptr[i], dir_end[i]
            while p < e and ent_size[p] < xsize:
                p += 1
            ptr[i] = p
            if p < e and ent_size[p] == xsize:
                starts[i], nums[i] = ent_start[p], ent_count[p]
            else:
                starts[i], nums[i] = 0, 0
                absent += 1
        mmin = _min_match(measure, qsize, xsize, alpha)
        min_queries = qsize - mmin + 1
        if absent >= min_queries:
            continue  # sorted, the lists step 1 merges would all be empty: no candidate
        std_sort(nums, starts, stack)
        # step 1: merge the shortest lists
        cap = 0
        for i in range(min(min_queries, qsize)):
            cap += nums[i]
        if cap > len(cv):  # candidate buffers, kept across sizes
            cv = np.empty(2 * cap, dtype=np.int64)
            cn = np.empty(2 * cap, dtype=np.int64)
            tv = np.empty(2 * cap, dtype=np.int64)
            tn = np.empty(2 * cap, dtype=np.int64)
        nc = 0
        i = 0
        while i < min(min_queries, qsize):
            p, last = starts[i], starts[i] + nums[i]
            it = 0
            nt = 0
            while it < nc and p < last:
                v, w = cv[it], np.int64(db[p])
                if w < v:
                    tv[nt], tn[nt] = w, 1
                    p += 1
                elif v < w:
                    tv[nt], tn[nt] = v, cn[it]
                    it += 1
                else:
                    tv[nt], tn[nt] = v, cn[it] + 1
                    it += 1
                    p += 1
                nt += 1
            while it < nc:
                tv[nt], tn[nt] = cv[it], cn[it]
                it += 1
                nt += 1
            while p < last:
                tv[nt], tn[nt] = db[p], 1
                p += 1
                nt += 1
            cv, tv = tv, cv
            cn, tn = tn, cn
            nc = nt
            i += 1
        if nc == 0:
            continue
        # step 2: count the remaining lists' matches
        while i < qsize:
            nt = 0
            lo, last = starts[i], starts[i] + nums[i]
            for j in range(nc):
                num = cn[j]
                # std::binary_search's answer; candidates ascend, so each search resumes
                # where the previous one stopped
                lo = _gallop(db, lo, last, cv[j])
                if lo < last and db[lo] == cv[j]:
                    num += 1
                if mmin <= num:
                    out = _append(out, nout, cv[j])
                    nout += 1
                elif num + (qsize - i - 1) >= mmin:
                    tv[nt], tn[nt] = cv[j], num
                    nt += 1
            cv, tv = tv, cv
            cn, tn = tn, cn
            nc = nt
            i += 1
            if nc == 0:
                break
        for j in range(nc):  # step 2 was not performed
            if mmin <= cn[j]:
                out = _append(out, nout, cv[j])
                nout += 1
    return out[:nout]


@njit(cache=True, nogil=True)
def string_lengths(master, offsets):
    """Code points of each NUL-terminated string at these byte offsets of the master file
    (viewed as uint32 words)."""
    lens = np.empty(len(offsets), dtype=np.int64)
    for i in range(len(offsets)):
        w = offsets[i] // 4
        e = w
        while master[e] != 0:
            e += 1
        lens[i] = e - w
    return lens
