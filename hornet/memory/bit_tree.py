"""Bit trees: find free blocks in O(log_64 n).

One tree per block array. Level 0 has one bit per block (1 = free); the bit ``i`` of a word at
level ``l + 1`` is the OR of word ``i`` at level ``l`` (1 = some free block below). All levels
live in one ``uint64`` array, level 0 first; ``level_offsets[l]`` is where level ``l`` starts and
the last level is a single root word. Bits past the last block are 0 (never free).

Finding a free block descends from the root with count-trailing-zeros, as in Hornet's vectorized
bit tree; taking ``m`` blocks at once takes every free bit of a leaf word before descending again.
All functions are Numba kernels working in place.
"""
from __future__ import annotations

import weakref
from itertools import chain

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..core.jit import PARALLEL_MIN, ix, njit, split_kernel
from ..core.pointers import view
from ..core.search import array_in_directory

WORD_BITS = 64
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)   # a leaf word whose 64 blocks are all free
_WORD = np.zeros(1, dtype=np.uint64)     # dtype carrier for views of tree words


@intrinsic
def _cttz(typingctx, x):
    """Count trailing zeros of a uint64 (LLVM cttz)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64, ir.IntType(1)])
        fn = builder.module.declare_intrinsic("llvm.cttz", [i64], fnty)
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM ctpop)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = builder.module.declare_intrinsic("llvm.ctpop", [i64], ir.FunctionType(i64, [i64]))
        return builder.call(fn, [args[0]])

    return sig, codegen


@njit
def tree_offsets(num_blocks):
    """Start of every level in the flat word array, plus the total length at the end
    (int64; compiled, for callers that build trees inside a kernel)."""
    words = max(1, (num_blocks + WORD_BITS - 1) // WORD_BITS)
    levels = 1
    n = words
    while n > 1:
        n = (n + WORD_BITS - 1) // WORD_BITS
        levels += 1
    offsets = np.zeros(levels + 1, dtype=np.int64)
    n = words
    for level in range(levels):
        offsets[level + 1] = offsets[level] + n
        n = (n + WORD_BITS - 1) // WORD_BITS
    return offsets


def tree_layout(num_blocks: int) -> np.ndarray:
    """Start of every level in the flat word array, plus the total length at the end."""
    return tree_offsets(int(num_blocks))


def new_tree(num_blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """A tree with every block free: (words uint64, level_offsets int64)."""
    offsets = tree_layout(num_blocks)
    words = np.zeros(int(offsets[-1]), dtype=np.uint64)
    _fill_free(words, offsets, num_blocks)
    return words, offsets


@njit
def _fill_free(words, offsets, num_blocks):
    n = num_blocks
    for level in range(offsets.shape[0] - 1):
        start = offsets[level]
        full = n // 64
        for w in range(full):
            words[start + w] = ~np.uint64(0)
        rest = n - full * 64
        if rest:
            words[start + full] = (_ONE << np.uint64(rest)) - _ONE
            full += 1
        n = full


@njit
def _clear_up(words, offsets, level, index):
    """Word ``index`` of ``level`` became 0: clear its bit in the ancestors that empty too."""
    while level + 1 < offsets.shape[0] - 1:
        parent = index >> 6
        pos = offsets[level + 1] + parent
        words[pos] &= ~(_ONE << np.uint64(index & 63))
        if words[pos] != 0:
            return
        level += 1
        index = parent


@njit
def take_free(words, offsets, count, out, out_start):
    """Mark up to ``count`` free blocks used, lowest index first; write them to ``out[out_start:]``.

    Returns how many were taken (fewer than ``count`` only when the tree runs out).
    """
    top = offsets.shape[0] - 2
    taken = 0
    while taken < count:
        if words[offsets[top]] == 0:
            break
        index = 0
        for level in range(top, 0, -1):
            word = words[offsets[level] + index]
            index = index * 64 + np.int64(_cttz(word))
        pos = offsets[0] + index
        word = words[pos]
        if word == _ALL and count - taken >= 64:      # a whole free word: no bit scan
            for bit in range(64):
                out[out_start + taken + bit] = index * 64 + bit
            taken += 64
            word = _ZERO
        while word != 0 and taken < count:
            bit = np.int64(_cttz(word))
            word &= word - _ONE
            out[out_start + taken] = index * 64 + bit
            taken += 1
        words[pos] = word
        if word == 0:
            _clear_up(words, offsets, 0, index)
    return taken


@njit
def give_back(words, offsets, blocks):
    """Mark ``blocks`` free again (each must be in use) and set their ancestors' bits."""
    levels = offsets.shape[0] - 1
    for i in range(blocks.shape[0]):
        index = np.int64(blocks[i])
        for level in range(levels):
            pos = offsets[level] + (index >> 6)
            was = words[pos]
            words[pos] = was | (_ONE << np.uint64(index & 63))
            if was != 0:
                break  # ancestors already show this word as non-empty
            index >>= 6


FOREST_LEVELS = 8   # room for the level offsets of any tree in a forest table


def forest_table(trees, address) -> tuple[np.ndarray, np.ndarray]:
    """Several trees described for one kernel: (word addresses int64 (A,), level offsets int64
    (A, FOREST_LEVELS + 1) padded with the total, host). ``trees``: [(words, level_offsets)];
    ``address``: array -> int.

    A tree's row is computed once and remembered for as long as its word array lives (the
    manager rebuilds the table whenever a block array comes or goes, hundreds of trees each
    time)."""
    rows = []
    for words, off in trees:
        key = id(words)
        hit = _ROWS.get(key)
        if hit is None or hit[0]() is not words:
            if len(off) > FOREST_LEVELS + 1:
                raise ValueError("bit tree deeper than FOREST_LEVELS")
            off = [int(x) for x in off]
            row = [address(words)] + off + off[-1:] * (FOREST_LEVELS + 1 - len(off))
            try:
                hit = (weakref.ref(words, lambda _, key=key: _ROWS.pop(key, None)), row)
                _ROWS[key] = hit
            except TypeError:                   # an array type without weak references
                hit = (None, row)
        rows.append(hit[1])
    table = np.fromiter(chain.from_iterable(rows), dtype=np.int64,
                        count=len(rows) * (FOREST_LEVELS + 2)).reshape(len(rows),
                                                                       FOREST_LEVELS + 2)
    return np.ascontiguousarray(table[:, 0]), np.ascontiguousarray(table[:, 1:])


_ROWS: dict = {}   # id(words) -> (weak reference to words, [address, padded level offsets])


@njit
def release_forest(word_addrs, table, bases, directory, shifts, pointers, counts):
    """Give back the blocks at ``pointers`` (int64 addresses; 0 = none, skipped) in trees described by
    :func:`forest_table`, whose block arrays start at ``bases`` (int64 (A,), ascending;
    ``directory``: :func:`hornet.core.search.array_directory` of them) and have blocks of
    ``2**shifts`` bytes; adds to ``counts[a]`` (int64 (A,)) the blocks given back in tree
    ``a``. (Find the array, free and count in one pass: :func:`give_back` per pointer.)

    One thread: split by address over two threads, each skipping the other's pointers, the
    skip mispredicts and costs more than the second thread saves."""
    for i in range(pointers.shape[0]):
        p = pointers[i]
        if p == 0:                         # no block
            continue
        a = ix(array_in_directory(directory, bases, p))
        counts[a] += 1
        words = view(word_addrs[a], table[a, FOREST_LEVELS], _WORD)
        b = (p - bases[a]) >> shifts[a]
        for level in range(FOREST_LEVELS):
            if table[a, level + 1] == table[a, level]:
                break
            pos = ix(table[a, level] + (b >> 6))
            was = words[pos]
            words[pos] = was | (_ONE << np.uint64(b & 63))
            if was != 0:
                break
            b >>= 6


@njit
def count_free(words, offsets):
    total = 0
    for w in range(offsets[0], offsets[1]):
        total += np.int64(_popcount(words[w]))
    return total


@njit
def used_blocks(words, offsets, num_blocks):
    """Indices of blocks in use (leaf bit 0), ascending."""
    out = np.empty(num_blocks - count_free(words, offsets), dtype=np.int64)
    k = 0
    for b in range(num_blocks):
        if not (words[offsets[0] + (b >> 6)] >> np.uint64(b & 63)) & _ONE:
            out[k] = b
            k += 1
    return out


@njit
def is_free(words, offsets, blocks):
    """Per block: True where its leaf bit says free."""
    out = np.empty(blocks.shape[0], dtype=np.bool_)
    for i in range(blocks.shape[0]):
        b = np.int64(blocks[i])
        out[i] = (words[offsets[0] + (b >> 6)] >> np.uint64(b & 63)) & _ONE
    return out


@njit
def find_inconsistency(words, offsets, num_blocks):
    """-1 if the tree is consistent, else the flat index of the first word that is wrong.

    Checks that bits past the last block are 0 at every level and that every internal bit
    equals the OR of its child word.
    """
    n = num_blocks
    for level in range(offsets.shape[0] - 1):
        start = offsets[level]
        nwords = offsets[level + 1] - start
        for w in range(nwords):
            lo = w * 64
            valid = n - lo
            word = words[start + w]
            if valid < 64:
                mask = (_ONE << np.uint64(valid)) - _ONE if valid > 0 else np.uint64(0)
                if word & ~mask:
                    return start + w
            if level > 0:
                for bit in range(64):
                    child = lo + bit
                    if child >= n:
                        break
                    expect = words[offsets[level - 1] + child] != 0
                    if ((word >> np.uint64(bit)) & _ONE) != expect:
                        return start + w
        n = nwords
    return -1


@njit
def _take_request(word_addr, row, count, out, at, base, shift):
    """One request of :func:`take_forest_rows` (a compiled call of its own: the split kernel
    then holds no global array, which would keep it out of Numba's cache). Returns how many
    blocks it took."""
    levels = 0
    while levels < FOREST_LEVELS and row[levels + 1] != row[levels]:
        levels += 1
    words = view(word_addr, row[FOREST_LEVELS], _WORD)
    got = take_free(words, row[:levels + 1], count, out, at)
    for i in range(at, at + got):
        out[i] = base + (out[i] << shift)
    return got


@njit
def _by_count_descending(counts):
    """Indices of ``counts`` (int64 (R,): one request per block array, a few dozen) by
    descending count, ties in index order: an insertion sort, which compiles in a fraction
    of the time of NumPy's sort in a kernel."""
    n = counts.shape[0]
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        j = i
        while j > 0 and counts[order[j - 1]] < counts[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    return order


def take_forest_rows(word_addrs, table, counts, bases, shifts, threads):
    """Several :func:`take_free` requests in one call: request ``r`` takes the ``counts[r]``
    lowest free blocks of the tree at ``word_addrs[r]`` (level offsets ``table[r]``, padded as
    :func:`forest_table` pads them) and gives their pointers ``bases[r] + (block <<
    shifts[r])``. Returns every request's pointers, request after request (int64), and raises
    if a tree runs out (the caller plans the counts). The requests (one per block array:
    never two on one tree) are dealt to ``threads`` pieces (``numba.get_num_threads()``; 1:
    this thread serves them all) largest first, each to the least loaded: a batch's blocks
    are mostly of one or two classes."""
    start, owner = _deal_requests(counts, threads)
    out = np.empty(start[-1], dtype=np.int64)
    short = np.zeros(counts.shape[0], dtype=np.int64)
    args = (word_addrs, table, counts, bases, shifts, start, owner, out, short)
    if threads > 1:
        _take_rows.split(*args)
    else:
        _take_rows.kernel(*args, 0, 1)
    if short.any():
        raise AssertionError("a bit tree ran out of the blocks planned from it")
    return out


@njit
def _deal_requests(counts, threads):
    """(where each request's pointers start in the output, int64 (R + 1,); the piece that
    serves each request, int64 (R,)), as :func:`take_forest_rows` deals them."""
    nr = counts.shape[0]
    start = np.zeros(nr + 1, dtype=np.int64)
    for r in range(nr):
        start[r + 1] = start[r] + counts[r]
    parts = max(1, min(nr, threads))
    owner = np.zeros(nr, dtype=np.int64)
    load = np.zeros(parts, dtype=np.int64)
    for r in _by_count_descending(counts):
        p = 0                                   # the least loaded piece (a loop, not
        for q in range(1, parts):               # np.argmin: no NumPy kernel compiled in)
            if load[q] < load[p]:
                p = q
        owner[r] = p
        load[p] += counts[r]
    return start, owner


@split_kernel
def _take_rows(word_addrs, table, counts, bases, shifts, start, owner, out, short, part,
               parts):
    """The requests of the pieces ``p`` with ``p % parts == part``; ``short[r]``: the blocks
    request ``r`` lacked."""
    for r in range(counts.shape[0]):
        if owner[r] % parts != part:
            continue
        short[r] = counts[r] - _take_request(word_addrs[r], table[r], counts[r], out,
                                             start[r], bases[r], shifts[r])


def take_forest(word_addrs, table, counts, bases, shifts) -> np.ndarray:
    """:func:`take_forest_rows` over the requests (same arguments, less ``threads``), served
    by this thread where one thread serves them (a single block array, or fewer than
    ``PARALLEL_MIN`` blocks in all): handing a piece to another thread costs more than such
    a request, and a busy machine can keep a woken thread waiting for a core."""
    if counts.shape[0] < 2 or int(counts.sum()) < PARALLEL_MIN:
        return take_forest_rows(word_addrs, table, counts, bases, shifts, 1)
    return take_forest_rows(word_addrs, table, counts, bases, shifts, numba.get_num_threads())
