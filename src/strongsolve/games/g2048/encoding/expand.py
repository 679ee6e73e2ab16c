"""numba kernels that expand 2048 layers: spawns (chance) and moves (decision).

The forward pass uses :func:`spawn_states` and :func:`move_successors` to enumerate layers; the
backward pass uses :func:`expand_afterstates` to build the two-level CSR expansion that the shared
Bellman backup (:mod:`strongsolve.kernels.bellman`) consumes. Every kernel is deterministic: outputs
are written to slots fixed by prefix sums. Kernels are serial and release the GIL: the stage drivers
run them on chunks of a layer in parallel through :mod:`strongsolve.parallel` (dask).

Objectives: ``target_exp == 0`` is the score objective (reward = merge points). With
``target_exp = k > 0`` (reach-a-tile, as in twenty48) a move that makes a tile of 2^k or more ends the
position with reward 1 and no afterstate; every other move has reward 0, so values are probabilities.
"""

import numpy as np
from numba import types
from numba.extending import overload

from ....codecs.eliasfano import ef_index_of_increasing
from ....kernels.hashindex import lookup_into
from ....kernels.options import njit
from ....kernels.sort import distinct_index, radix_argsort
from .afterstate_code import CompactLayer, compact_index_of_increasing
from ..rules.board import (MAX_LINES, base_moves, canonical_id, canonicalize, count_empty,
                           empty_cells, moves, moves_after_spawn)

_U15 = np.uint64(15)

# error codes returned by the kernels (the drivers turn them into exceptions)
OK = 0
OVERFLOW = 1
MISSING_SUCCESSOR = 2


_NIBBLES_LOW = np.uint64(0x0F0F0F0F0F0F0F0F)
_BYTES_ONE = np.uint64(0x0101010101010101)
_BYTES_CARRY = np.uint64(0x1010101010101010)


@njit
def has_tile(b, exponent):
    """True if board ``b`` holds a tile of 2^exponent or more (``exponent`` in 1..15).

    Branch-free: the even and the odd cells go to one byte each, and ``cell + 16 - exponent``
    carries into bit 4 of its byte iff ``cell >= exponent``."""
    add = np.uint64(16 - exponent) * _BYTES_ONE
    even = b & _NIBBLES_LOW
    odd = (b >> np.uint64(4)) & _NIBBLES_LOW
    return (((even + add) | (odd + add)) & _BYTES_CARRY) != 0


@njit
def spawn_states(afterstates, exponent, rows, cols, sym):
    """Canonical states made by spawning tile 2^exponent on each empty cell of each afterstate.

    Parameters
    ----------
    afterstates : uint64[A]
    exponent : int
        1 (a 2) or 2 (a 4).

    Returns
    -------
    uint64[sum of empty cells]
        Canonical state IDs, unsorted, with repeats.
    """
    cells = rows * cols
    n = afterstates.shape[0]
    offsets = np.empty(n + 1, np.int64)
    offsets[0] = 0
    for k in range(n):
        offsets[k + 1] = offsets[k] + count_empty(afterstates[k], cells)
    out = np.empty(offsets[n], np.uint64)
    e = np.uint64(exponent)
    for k in range(n):
        a = afterstates[k]
        j = offsets[k]
        free = empty_cells(a, cells)  # bit 4i per empty cell i, taken lowest first
        while free:
            lowest = free & (~free + np.uint64(1))  # 1 << 4i
            out[j] = a | (lowest * e)
            j += 1
            free ^= lowest
    canonicalize(out, rows, cols, sym)
    return out


@njit
def move_successors(states, rows, cols, line_result, line_reward, sym, target_exp):
    """Canonical afterstates of every legal move of every state (a move reaching the target tile
    ends the position: it is legal but yields no afterstate).

    Returns
    -------
    afterstates : uint64[M], M <= 4*S
        Canonical results of the legal moves, state by state in direction order (unsorted, with
        repeats).
    terminal : int64
        Number of states with no legal move.
    error : int
        :data:`OK` or :data:`OVERFLOW`.
    """
    n = states.shape[0]
    out = np.empty(4 * n, np.uint64)
    after = np.empty(4, np.uint64)
    rewards = np.empty(4, np.int64)
    m = 0
    terminal = 0
    error = OK
    for k in range(n):
        s = states[k]
        moves(s, rows, cols, line_result, line_reward, sym, after, rewards)
        any_legal = False
        for d in range(4):
            if rewards[d] < 0:
                error = OVERFLOW
            elif after[d] != s:
                any_legal = True
                out[m] = after[d]
                m += 1
        if not any_legal:
            terminal += 1
    # the target tile, checked apart from the hot loop above, which the check slowed down by a third
    if target_exp > 0:
        kept = 0
        for j in range(m):
            if not has_tile(out[j], target_exp):
                out[kept] = out[j]
                kept += 1
        m = kept
    canonicalize(out[:m], rows, cols, sym)
    return out[:m], terminal, error


def layer_size(layer):
    """Number of IDs in an afterstate layer: a sorted array, an Elias-Fano code of the raw IDs
    (``EFArrays``) or of the compact IDs (``afterstate_code.CompactLayer``)."""
    if isinstance(layer, np.ndarray):
        return layer.shape[0]
    return layer.ef.n if isinstance(layer, CompactLayer) else layer.n


def layer_index_of_increasing(layer, xs, out):
    """``out[t]`` = index of board ID ``xs[t]`` in ``layer`` (as :func:`layer_size`) or -1, for
    non-decreasing ``xs`` (one forward pass: galloping on a sorted array, a cursor on an Elias-Fano
    code; a compact code gets the queries coded the same way)."""
    if isinstance(layer, np.ndarray):
        i = np.searchsorted(layer, xs)
        hit = (i < layer.shape[0]) & (layer[np.minimum(i, layer.shape[0] - 1)] == xs)
        out[:] = np.where(hit, i, -1)
    elif isinstance(layer, CompactLayer):
        compact_index_of_increasing(layer, xs, out)
    else:
        ef_index_of_increasing(layer, xs, out)


def _is_compact(layer_type):
    return getattr(layer_type, "instance_class", None) is CompactLayer


@overload(layer_index_of_increasing, jit_options=dict(cache=True))
def _layer_index_of_increasing(layer, xs, out):
    if isinstance(layer, types.Array):
        def sorted_array(layer, xs, out):
            # galloping from the previous query's place: a merge walk would read the whole layer
            # for every batch, a binary search each would forget that the queries increase
            n = layer.shape[0]
            i = 0
            for t in range(xs.shape[0]):
                x = xs[t]
                step = 1
                while i + step <= n and layer[i + step - 1] < x:
                    step *= 2
                lo = i + step // 2
                hi = min(i + step, n)
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if layer[mid] < x:
                        lo = mid + 1
                    else:
                        hi = mid
                i = lo
                out[t] = i if i < n and layer[i] == x else -1
        return sorted_array
    if _is_compact(layer):
        return lambda layer, xs, out: compact_index_of_increasing(layer, xs, out)
    return lambda layer, xs, out: ef_index_of_increasing(layer, xs, out)


@overload(layer_size, jit_options=dict(cache=True))
def _layer_size(layer):
    if isinstance(layer, types.Array):
        return lambda layer: layer.shape[0]
    if _is_compact(layer):
        return lambda layer: layer.ef.n
    return lambda layer: layer.n


# Key of a move that reaches the target tile (reach objective only, so never confused with a board:
# the one board with this ID, sixteen 32768 tiles, holds the target already).
_REACHED = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit
def _state_keys(s, rows, cols, line_result, line_reward, sym, target_exp, after, rewards, keys):
    """Legal moves of state ``s``, in direction order: fills ``rewards`` and ``keys`` (length 4;
    the afterstate, not yet canonical, or :data:`_REACHED` for a move that reaches the target tile)
    and returns their count, or -1 (a merge above 2^15). ``after`` is scratch (uint64[4])."""
    moves(s, rows, cols, line_result, line_reward, sym, after, rewards)
    return _move_keys(s, rows, cols, sym, target_exp, after, rewards, keys)


@njit(inline='always')
def _move_keys(s, rows, cols, sym, target_exp, after, rewards, keys):
    """:func:`_state_keys` given the four moves of ``s`` (``after``, ``rewards`` as written by
    :func:`board.moves`; ``rewards`` is overwritten).

    Branch-free: every direction is written to the next free place, which only a legal
    move takes (whether a move is legal is unpredictable). The callers canonicalise the keys of a
    whole chunk at once (:func:`board.canonicalize`)."""
    m = 0
    overflow = False
    for d in range(4):
        t = after[d]
        r = rewards[d]  # read before rewards[m], m <= d, is written
        overflow |= r < 0
        key = t
        if target_exp > 0:
            reached = has_tile(t, target_exp)
            key = _REACHED if reached else key
            r = 1 if reached else 0
        rewards[m] = r
        keys[m] = key
        m += t != s
    return -1 if overflow else m


@njit
def _resolve(layer, keys, reach, out, successors):
    """Look ``keys`` up in the sorted ``layer``: their distinct values, in increasing order, get the
    local indices 0, 1, ...; ``out[i]`` is the local index of ``keys[i]`` and ``successors[local]``
    the value's index in ``layer`` (the layer's size for :data:`_REACHED` when ``reach``, -1 when
    absent). Returns the number of distinct keys.

    The distinct keys (hash set) are sorted (radix) and looked up in one forward pass over the
    layer, which may be Elias-Fano coded (a query reads the layer from disk)."""
    values, index = distinct_index(keys)
    order = radix_argsort(values)
    u = values.shape[0]
    distinct = values[order]
    rank = np.empty(u, np.int64)
    rank[order] = np.arange(u)
    for j in range(keys.shape[0]):
        out[j] = rank[index[j]]
    found = successors[:u]
    layer_index_of_increasing(layer, distinct, found)
    for g in range(u):
        if reach and distinct[g] == _REACHED:
            found[g] = layer_size(layer)
    return u


@njit
def expand_afterstates(afterstates, p2, spawn_prob, rows, cols, line_result, line_reward, sym,
                       target_exp, index2, index4):
    """Two-level CSR expansion of afterstates for the Bellman backup, with the successor values.

    Node k is ``afterstates[k]``; its outcomes are the spawns (for each empty cell, a 2 with
    probability ``spawn_prob[empty, 0]`` (``p2 / empty``) then a 4 with ``spawn_prob[empty, 1]``
    (``(1 - p2) / empty``), rounded so that they sum to at most 1, ``spawn_prob`` being
    :func:`spawn.spawn_probabilities` (float64[cells + 1, 2]); a spawn of probability 0
    is left out: with ``p2`` 0 or 1 its states were never enumerated); an outcome's candidates
    are the legal moves of the spawned state, each with its reward (points) and its canonical
    afterstate, whose value is looked up in ``index2`` (a 2 was spawned: age + 2) or ``index4``
    (age + 4), hash indexes of the successor layers (:mod:`strongsolve.kernels.hashindex`).

    The moves of the whole chunk are made first and their successors looked up after, in one tight
    loop: looking each up as soon as it is made leaves one memory access in flight at a time
    instead of several (1250 against 680 ns per 4x3 afterstate at age 110).

    Returns
    -------
    node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign : arrays of kernels.bellman
        ``cand_next`` is ``arange(C)``: candidate c's successor value is ``next_value[c]``.
    next_value : float64[C]
        The successor value of each candidate (0 for a move that reaches the target tile).
    error : int
        :data:`OK`, :data:`OVERFLOW` or :data:`MISSING_SUCCESSOR`.
    """
    cells = rows * cols
    n = afterstates.shape[0]
    # spawned exponents: 1 (a 2) and 2 (a 4), leaving out a spawn of probability 0
    e_first = 1 if p2 > 0.0 else 2
    e_last = 2 if p2 < 1.0 else 1
    kinds = e_last - e_first + 1
    node_ptr = np.empty(n + 1, np.int64)
    node_ptr[0] = 0
    for k in range(n):
        node_ptr[k + 1] = node_ptr[k] + kinds * count_empty(afterstates[k], cells)
    n_out = node_ptr[n]
    out_prob = np.empty(n_out, np.float64)
    out_ptr = np.empty(n_out + 1, np.int64)
    out_ptr[0] = 0
    cand_reward = np.empty(4 * n_out, np.float64)
    next_value = np.zeros(4 * n_out, np.float64)  # 0: a move that reaches the target tile
    # the successors to look up, by layer (a 2 or a 4 was spawned), and their candidates
    per_layer = 4 * (n_out // kinds)
    keys2 = np.empty(per_layer if e_first == 1 else 0, np.uint64)
    where2 = np.empty(keys2.shape[0], np.int64)
    keys4 = np.empty(per_layer if e_last == 2 else 0, np.uint64)
    where4 = np.empty(keys4.shape[0], np.int64)
    c2 = 0
    c4 = 0
    error = OK
    after = np.empty(4, np.uint64)
    rewards = np.empty(4, np.int64)
    keys = np.empty(4, np.uint64)
    moved = np.empty(4, np.uint64)
    line_rewards = np.empty((4, MAX_LINES), np.int64)
    c = 0
    for k in range(n):
        a = afterstates[k]
        o = node_ptr[k]
        empty = (node_ptr[k + 1] - o) // kinds
        cm = base_moves(a, rows, cols, line_result, line_reward, sym, moved, line_rewards)
        for i in range(cells):
            sh = np.uint64(4 * i)
            if ((a >> sh) & _U15) != 0:
                continue
            for e in range(e_first, e_last + 1):
                out_prob[o] = spawn_prob[empty, e - 1]
                moves_after_spawn(a, cm, moved, line_rewards, i, e, rows, cols, line_result,
                                  line_reward, after, rewards)
                m = _move_keys(a | (np.uint64(e) << sh), rows, cols, sym, target_exp, after,
                               rewards, keys)
                if m < 0:
                    error = OVERFLOW
                    m = 0
                todo = keys2 if e == 1 else keys4
                where = where2 if e == 1 else where4
                t = c2 if e == 1 else c4
                if target_exp > 0:  # a move that reaches the target has no successor to look up
                    for j in range(m):
                        cand_reward[c + j] = rewards[j]
                        if keys[j] != _REACHED:
                            todo[t] = keys[j]
                            where[t] = c + j
                            t += 1
                else:
                    for j in range(4):  # all four (the next outcome overwrites the surplus)
                        cand_reward[c + j] = rewards[j]
                        todo[t + j] = keys[j]
                        where[t + j] = c + j
                    t += m
                if e == 1:
                    c2 = t
                else:
                    c4 = t
                c += m
                o += 1
                out_ptr[o] = c
    canonicalize(keys2[:c2], rows, cols, sym)
    canonicalize(keys4[:c4], rows, cols, sym)
    missing = (lookup_into(index2, keys2[:c2], where2[:c2], next_value)
               + lookup_into(index4, keys4[:c4], where4[:c4], next_value))
    if error == OK and missing > 0:
        error = MISSING_SUCCESSOR
    return (node_ptr, out_prob, out_ptr, cand_reward[:c], np.arange(c), np.ones(c, np.float64),
            next_value[:c], error)


@njit
def expand_states(states, rows, cols, line_result, line_reward, sym, target_exp, layer):
    """CSR expansion of states (no chance: one outcome of probability 1 each) whose moves lead into
    the sorted afterstate ``layer`` of the same age. Used for start states and single queries.

    ``layer`` is a sorted uint64 array or a stored layer's ``AfterstateLayer.arrays`` (read from
    disk, either format).

    Returns
    -------
    node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign : arrays of kernels.bellman
        ``cand_next`` indexes the distinct successors, ``successors``.
    successors : int64[U]
        Index of each distinct successor in ``concatenate([values, [0.0]])``, the layer's values
        then a zero slot for the moves that reach the target tile: back up with
        ``next_value[successors]`` as the successor values.
    error : int
        :data:`OK`, :data:`OVERFLOW` or :data:`MISSING_SUCCESSOR`.
    """
    n = states.shape[0]
    node_ptr = np.arange(n + 1).astype(np.int64)
    out_prob = np.ones(n, np.float64)
    out_ptr = np.zeros(n + 1, np.int64)
    cand_reward = np.empty(4 * n, np.float64)
    cand_key = np.empty(4 * n, np.uint64)
    after = np.empty(4, np.uint64)
    rewards = np.empty(4, np.int64)
    keys = np.empty(4, np.uint64)
    error = OK
    for k in range(n):
        m = _state_keys(states[k], rows, cols, line_result, line_reward, sym, target_exp, after,
                        rewards, keys)
        if m < 0:
            error = OVERFLOW
            m = 0
        for j in range(m):
            cand_reward[out_ptr[k] + j] = rewards[j]
            cand_key[out_ptr[k] + j] = keys[j]
        out_ptr[k + 1] = out_ptr[k] + m
    c = out_ptr[n]
    for j in range(c):
        if cand_key[j] != _REACHED:
            cand_key[j] = canonical_id(cand_key[j], rows, cols, sym)
    cand_next = np.empty(c, np.int64)
    successors = np.empty(c, np.int64)
    u = _resolve(layer, cand_key[:c], target_exp > 0, cand_next, successors)
    if error == OK and u > 0 and successors[:u].min() < 0:
        error = MISSING_SUCCESSOR
    return (node_ptr, out_prob, out_ptr, cand_reward[:c].copy(), cand_next, np.ones(c, np.float64),
            successors[:u].copy(), error)
