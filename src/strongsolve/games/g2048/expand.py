"""numba kernels that expand 2048 layers: spawns (chance) and moves (decision).

The forward pass uses :func:`spawn_states` and :func:`move_successors` to enumerate layers; the
backward pass uses :func:`expand_afterstates` to build the two-level CSR expansion that the shared
Bellman backup (:mod:`strongsolve.kernels.bellman`) consumes. Every kernel is deterministic: outputs
are written to slots fixed by prefix sums. Kernels are serial and release the GIL: the stage drivers
run them on chunks of a layer in parallel through :mod:`strongsolve.parallel` (dask).

Objectives (issue 6): ``target_exp == 0`` is the score objective (reward = merge points). With
``target_exp = k > 0`` (reach-a-tile, as in twenty48) a move that makes a tile of 2^k or more ends the
position with reward 1 and no afterstate; every other move has reward 0, so values are probabilities.
"""

import numpy as np
from numba import types
from numba.extending import overload

from ...codecs.eliasfano import ef_index_of
from ...kernels.options import njit
from .board import canonical_id, count_empty, moves

_U15 = np.uint64(15)

# error codes returned by the kernels (the drivers turn them into exceptions)
OK = 0
OVERFLOW = 1
MISSING_SUCCESSOR = 2


@njit
def has_tile(b, cells, exponent):
    """True if board ``b`` holds a tile of 2^exponent or more."""
    for i in range(cells):
        if ((b >> np.uint64(4 * i)) & _U15) >= exponent:
            return True
    return False


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
        for i in range(cells):
            sh = np.uint64(4 * i)
            if ((a >> sh) & _U15) == 0:
                out[j] = canonical_id(a | (e << sh), rows, cols, sym)
                j += 1
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
                if target_exp == 0 or not has_tile(after[d], rows * cols, target_exp):
                    out[m] = canonical_id(after[d], rows, cols, sym)
                    m += 1
        if not any_legal:
            terminal += 1
    return out[:m], terminal, error


def layer_index_of(layer, x):
    """Index of ID ``x`` in an afterstate layer, or -1. ``layer`` is either a sorted uint64 array or
    the Elias-Fano coded layer (:class:`strongsolve.codecs.eliasfano.EFArrays`) that the backward
    pass holds for its window; numba compiles the look-up that fits the type."""
    if isinstance(layer, np.ndarray):
        i = int(np.searchsorted(layer, x))
        return i if i < layer.shape[0] and layer[i] == x else -1
    return int(ef_index_of(layer, np.uint64(x)))


def layer_size(layer):
    """Number of IDs in an afterstate layer (sorted array or Elias-Fano coded)."""
    return layer.shape[0] if isinstance(layer, np.ndarray) else layer.n


@overload(layer_size, jit_options=dict(cache=True))
def _layer_size(layer):
    if isinstance(layer, types.Array):
        return lambda layer: layer.shape[0]
    return lambda layer: layer.n


@overload(layer_index_of, jit_options=dict(cache=True))
def _layer_index_of(layer, x):
    if isinstance(layer, types.Array):
        def sorted_array(layer, x):
            i = np.searchsorted(layer, x)
            if i < layer.shape[0] and layer[i] == x:
                return i
            return -1
        return sorted_array
    return lambda layer, x: ef_index_of(layer, x)


@njit
def _state_moves(s, rows, cols, line_result, line_reward, sym, target_exp, layer, offset, zero_index,
                 after, rewards, nexts):
    """Legal moves of state ``s``: fills ``rewards``/``nexts`` (length 4) and returns the count,
    or -1 (overflow) or -2 (a successor missing from ``layer``). ``after`` is scratch (uint64[4])."""
    moves(s, rows, cols, line_result, line_reward, sym, after, rewards)
    m = 0
    for d in range(4):
        t = after[d]
        r = rewards[d]
        if r < 0:
            return -1
        if t == s:
            continue
        if target_exp > 0:
            if has_tile(t, rows * cols, target_exp):
                rewards[m] = 1
                nexts[m] = zero_index
                m += 1
                continue
            r = 0
        j = layer_index_of(layer, canonical_id(t, rows, cols, sym))
        if j < 0:
            return -2
        rewards[m] = r
        nexts[m] = offset + j
        m += 1
    return m


@njit
def expand_afterstates(afterstates, p2, rows, cols, line_result, line_reward, sym, target_exp, layer2,
                       layer4):
    """Two-level CSR expansion of afterstates for the Bellman backup.

    Node k is ``afterstates[k]``; its outcomes are the spawns (for each empty cell, a 2 with
    probability ``p2 / empty`` then a 4 with ``(1 - p2) / empty``); an outcome's candidates are the
    legal moves of the spawned state, each with its reward (points) and the index of its canonical
    afterstate (looked up in ``layer2``/``layer4``: sorted uint64 arrays or Elias-Fano coded layers) in ``concatenate([layer2, layer4, [0.0]])`` (the sorted afterstate layers of age + 2
    and + 4, then a zero slot for the moves that reach the target tile).

    Returns
    -------
    node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign : arrays of kernels.bellman
    error : int
        :data:`OK`, :data:`OVERFLOW` or :data:`MISSING_SUCCESSOR`.
    """
    cells = rows * cols
    n = afterstates.shape[0]
    node_ptr = np.empty(n + 1, np.int64)
    node_ptr[0] = 0
    for k in range(n):
        node_ptr[k + 1] = node_ptr[k] + 2 * count_empty(afterstates[k], cells)
    n_out = node_ptr[n]
    out_prob = np.empty(n_out, np.float64)
    counts = np.empty(n_out, np.int64)
    slot_reward = np.empty((n_out, 4), np.float64)
    slot_next = np.empty((n_out, 4), np.int64)
    errors = np.zeros(n, np.int64)
    after = np.empty(4, np.uint64)
    rewards = np.empty(4, np.int64)
    nexts = np.empty(4, np.int64)
    offset4 = layer_size(layer2)
    zero_index = layer_size(layer2) + layer_size(layer4)
    for k in range(n):
        a = afterstates[k]
        o = node_ptr[k]
        empty = (node_ptr[k + 1] - o) // 2
        for i in range(cells):
            sh = np.uint64(4 * i)
            if ((a >> sh) & _U15) != 0:
                continue
            for e in range(1, 3):
                s = a | (np.uint64(e) << sh)
                if e == 1:
                    out_prob[o] = p2 / empty
                    m = _state_moves(s, rows, cols, line_result, line_reward, sym, target_exp,
                                     layer2, 0, zero_index, after, rewards, nexts)
                else:
                    out_prob[o] = (1.0 - p2) / empty
                    m = _state_moves(s, rows, cols, line_result, line_reward, sym, target_exp,
                                     layer4, offset4, zero_index, after, rewards, nexts)
                if m < 0:
                    errors[k] = OVERFLOW if m == -1 else MISSING_SUCCESSOR
                    m = 0
                counts[o] = m
                for j in range(m):
                    slot_reward[o, j] = rewards[j]
                    slot_next[o, j] = nexts[j]
                o += 1
    out_ptr = np.empty(n_out + 1, np.int64)
    out_ptr[0] = 0
    for o in range(n_out):
        out_ptr[o + 1] = out_ptr[o] + counts[o]
    n_cand = out_ptr[n_out]
    cand_reward = np.empty(n_cand, np.float64)
    cand_next = np.empty(n_cand, np.int64)
    cand_sign = np.ones(n_cand, np.float64)
    for o in range(n_out):
        for j in range(counts[o]):
            cand_reward[out_ptr[o] + j] = slot_reward[o, j]
            cand_next[out_ptr[o] + j] = slot_next[o, j]
    return node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, errors.max()


@njit
def expand_states(states, rows, cols, line_result, line_reward, sym, target_exp, layer):
    """CSR expansion of states (no chance: one outcome of probability 1 each) whose moves lead into
    the sorted afterstate ``layer`` of the same age (successor values ``concatenate([values, [0.0]])``).
    Used for start states and single queries.

    Returns the same tuple as :func:`expand_afterstates`.
    """
    n = states.shape[0]
    node_ptr = np.arange(n + 1).astype(np.int64)
    out_prob = np.ones(n, np.float64)
    out_ptr = np.zeros(n + 1, np.int64)
    cand_reward = np.empty(4 * n, np.float64)
    cand_next = np.empty(4 * n, np.int64)
    after = np.empty(4, np.uint64)
    rewards = np.empty(4, np.int64)
    nexts = np.empty(4, np.int64)
    error = OK
    for k in range(n):
        m = _state_moves(states[k], rows, cols, line_result, line_reward, sym, target_exp, layer, 0,
                         layer_size(layer), after, rewards, nexts)
        if m < 0:
            error = OVERFLOW if m == -1 else MISSING_SUCCESSOR
            m = 0
        for j in range(m):
            cand_reward[out_ptr[k] + j] = rewards[j]
            cand_next[out_ptr[k] + j] = nexts[j]
        out_ptr[k + 1] = out_ptr[k] + m
    c = out_ptr[n]
    return (node_ptr, out_prob, out_ptr, cand_reward[:c].copy(), cand_next[:c].copy(),
            np.ones(c, np.float64), error)
