"""Optimal-play store: the best move of every reachable non-terminal state, without the state IDs
.

For every age ``n`` the states of the forward pass (start states, spawns of a 2 into the
afterstates of ``n - 2`` and of a 4 into those of ``n - 4``; canonical, sorted) get the rank of
their best move among their legal moves in direction order (``0..3``, as :func:`backward.state_values`
chooses it: the first best). A **binary fuse retrieval** (the 3-wise binary fuse construction of
Graf & Lemire 2022, "Binary Fuse Filters: Fast and Smaller Than Xor Filters", with 2-bit values
instead of fingerprints) stores these ranks: an array ``B`` of ``L ~ 1.125 n`` 2-bit slots such
that ``rank(s) = B[h0(s)] ^ B[h1(s)] ^ B[h2(s)]`` for three slots in consecutive segments given by
a seeded hash of the state ID. So about ``2 * 1.125 = 2.25`` bits per state, and no state ID is
stored.

As for any retrieval structure, a board outside the reachable set gets an arbitrary (but legal)
answer: :class:`PolicyStore` cannot tell it apart and does not check. A caller that holds the
afterstate layers can check reachability first (:meth:`solution.Solution.best_move` does when they
exist).

The store stands alone: a run directory holding only ``policy/`` answers ``play --policy`` and
``query --best-only``. The run's parameters are in every layer's attributes, and so is the exact
value of each start state of the layer's age, from which :meth:`PolicyStore.expected_score` gives
the run's exact expected score (the same sum as :meth:`solution.Solution.expected_score`).

A query board ``b`` need not be canonical: the rank is that of its canonical board ``c``; the
chosen move of ``c`` gives a canonical afterstate and reward, and ``b`` plays its first legal move
with the same canonical afterstate and reward (the same move up to the symmetry), so its value is the
optimal one.

Layout: ``<run>/policy/age_<n>.zarr`` (a layer of :mod:`strongsolve.store.layers`: array ``slots``,
uint8, four 2-bit slots per byte, slot ``s`` in bits ``2 (s % 4)`` of byte ``s // 4``; attributes
the run's parameters, ``age``, ``num_states`` (non-terminal states stored), ``seed``,
``segment_length``, ``segment_count_length``, ``array_length``, ``policy_format`` 1, and
``start_values``: ``[[id, value], ...]`` for the canonical start states of the age, empty past age
8). Like every layer it is written atomically, with checksums of its array and attributes
(:mod:`strongsolve.store.layers`).
"""

import math
import sys
import time

import numpy as np

from ....kernels.options import njit
from ....store.atomic import write_json_atomic
from ....store.errors import CorruptLayerError
from ....store.lock import holding_run_lock
from ....store.layers import read_layer, remove_stale_temporaries, write_layer
from .backward import state_values
from ..rules.board import age, canonical_id, moves, start_states
from ..encoding.expand import spawn_states
from .forward import starts_of_age
from ..hints import foreign_store_command, policy_command, repair_command
from ..rules.spawn import expected_value

POLICY_FORMAT = 1
MAX_SEEDS = 1000  # construction attempts per age; one fails with probability < 1e-3 for large n

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_U32 = np.uint64(32)
_U33 = np.uint64(33)
_U18 = np.uint64(18)


def fuse_layout(n):
    """``(segment_length, segment_count_length, array_length)`` of the binary fuse of ``n`` keys
    (the sizing of the reference implementation, binary_fuse8_allocate, arity 3)."""
    if n == 0:
        return 1, 0, 0
    seg_len = 4 if n <= 1 else min(1 << int(math.log(n) / math.log(3.33) + 2.25), 1 << 18)
    factor = 0.0 if n <= 1 else max(1.125, 0.875 + 0.25 * math.log(1e6) / math.log(n))
    capacity = round(n * factor) if n > 1 else 0
    segments = (capacity + seg_len - 1) // seg_len - 2
    length = (segments + 2) * seg_len
    segments = (length + seg_len - 1) // seg_len
    segments = 1 if segments <= 2 else segments - 2
    return seg_len, segments * seg_len, (segments + 2) * seg_len


@njit(inline='always')
def _hash(key, seed):
    h = key + seed * _GOLDEN
    h ^= h >> _U33
    h *= _M1
    h ^= h >> _U33
    h *= _M2
    return h ^ (h >> _U33)


@njit(inline='always')
def _slot(h, j, seg_len, seg_count_len):
    """Slot ``j`` (0..2) of hash ``h``: segment ``h0 // seg_len`` and the two after it."""
    h0 = ((h >> _U32) * np.uint64(seg_count_len)) >> _U32
    mask = np.uint64(seg_len - 1)
    if j == 0:
        return np.int64(h0)
    if j == 1:
        return np.int64((h0 + np.uint64(seg_len)) ^ ((h >> _U18) & mask))
    return np.int64((h0 + np.uint64(2 * seg_len)) ^ (h & mask))


@njit
def _build(keys, values, seed, seg_len, seg_count_len, length):
    """Packed 2-bit slots (uint8[ceil(length / 4)]) and whether the peeling succeeded."""
    n = keys.shape[0]
    count = np.zeros(length, np.int32)
    xor_index = np.zeros(length, np.int64)
    hashes = np.empty(n, np.uint64)
    s = np.uint64(seed)
    for i in range(n):
        h = _hash(keys[i], s)
        hashes[i] = h
        for j in range(3):
            t = _slot(h, j, seg_len, seg_count_len)
            count[t] += 1
            xor_index[t] ^= i
    queue = np.empty(length, np.int64)
    top = 0
    for t in range(length):
        if count[t] == 1:
            queue[top] = t
            top += 1
    order_key = np.empty(n, np.int64)
    order_slot = np.empty(n, np.int64)
    done = 0
    while top > 0:
        top -= 1
        t = queue[top]
        if count[t] != 1:
            continue
        i = xor_index[t]
        order_key[done] = i
        order_slot[done] = t
        done += 1
        for j in range(3):
            u = _slot(hashes[i], j, seg_len, seg_count_len)
            count[u] -= 1
            xor_index[u] ^= i
            if count[u] == 1:
                queue[top] = u
                top += 1
    slots = np.zeros(length, np.uint8)
    if done != n:
        return np.zeros(0, np.uint8), False
    for k in range(n - 1, -1, -1):
        i = order_key[k]
        v = np.uint8(values[i])
        for j in range(3):
            v ^= slots[_slot(hashes[i], j, seg_len, seg_count_len)]  # its own slot is still 0
        slots[order_slot[k]] = v
    packed = np.zeros((length + 3) // 4, np.uint8)
    for t in range(length):
        packed[t >> 2] |= slots[t] << np.uint8(2 * (t & 3))
    return packed, True


@njit(inline='always')
def _get(packed, t):
    return (packed[t >> 2] >> np.uint8(2 * (t & 3))) & np.uint8(3)


@njit(inline='always')
def _retrieve(packed, key, seed, seg_len, seg_count_len):
    h = _hash(key, np.uint64(seed))
    return (_get(packed, _slot(h, 0, seg_len, seg_count_len))
            ^ _get(packed, _slot(h, 1, seg_len, seg_count_len))
            ^ _get(packed, _slot(h, 2, seg_len, seg_count_len)))


def build_fuse(keys, values):
    """Binary fuse retrieval of 2-bit ``values`` (uint8[n], 0..3) for distinct ``keys`` (uint64[n]).

    Returns
    -------
    packed : uint8[ceil(array_length / 4)]
    params : dict
        ``seed, segment_length, segment_count_length, array_length``.

    Raises
    ------
    RuntimeError
        If no seed of :data:`MAX_SEEDS` builds it (repeated keys, or bad luck beyond 1e-3 ** 1000).
    """
    keys = np.ascontiguousarray(keys, np.uint64)
    values = np.ascontiguousarray(values, np.uint8)
    seg_len, seg_count_len, length = fuse_layout(keys.size)
    for seed in range(MAX_SEEDS):
        packed, ok = _build(keys, values, seed, seg_len, seg_count_len, length)
        if ok:
            return packed, {"seed": seed, "segment_length": seg_len,
                            "segment_count_length": seg_count_len, "array_length": length}
    raise RuntimeError(f"no binary fuse of {keys.size} keys in {MAX_SEEDS} seeds; are the keys "
                       "distinct?")


@njit
def _retrieve_all(packed, keys, seed, seg_len, seg_count_len):
    out = np.zeros(keys.shape[0], np.uint8)
    if packed.shape[0]:
        for i in range(keys.shape[0]):
            out[i] = _retrieve(packed, keys[i], seed, seg_len, seg_count_len)
    return out


def fuse_retrieve(packed, params, keys):
    """The 2-bit values (uint8[k]) that a fuse of :func:`build_fuse` gives ``keys`` (uint64[k]); a
    key it was not built with gets an arbitrary value."""
    return _retrieve_all(packed, np.ascontiguousarray(keys, np.uint64), params["seed"],
                         params["segment_length"], params["segment_count_length"])


def states_of_age(run, n, prev2, prev4):
    """Sorted canonical states of age ``n`` (uint64[S]), as the forward pass makes them, from the
    afterstate IDs ``prev2``, ``prev4`` of ages ``n - 2`` and ``n - 4``."""
    rows, cols, _, _, sym = run.tables.kernel_args()
    parts = [starts_of_age(rows, cols, run.p2, n)]
    if run.p2 > 0.0 and prev2.size:
        parts.append(spawn_states(prev2, 1, rows, cols, sym))
    if run.p2 < 1.0 and prev4.size:
        parts.append(spawn_states(prev4, 2, rows, cols, sym))
    return np.unique(np.concatenate(parts).astype(np.uint64))


def policy_path(run, n):
    return run.directory / "policy" / f"age_{n:06d}.zarr"


@holding_run_lock("2048 policy")
def run_policy(run, ages=None, log=sys.stderr):
    """Policy stage: write ``policy/age_<n>.zarr`` for each age (all by default) from the solved
    layers; an age already written is kept. Writes ``policy/block_<first>-<last>.json``.

    Raises
    ------
    CorruptLayerError
        If an afterstate or value layer needed is missing or corrupt.
    """
    t0 = time.perf_counter()
    ages = ages or run.ages()
    remove_stale_temporaries([policy_path(run, n) for n in ages])
    empty = np.empty(0, np.uint64)

    def ids_of(n):
        return run.load_afterstates(n)[0] if 4 <= n <= run.last_age else empty

    done = []
    for n in ages:
        path = policy_path(run, n)
        if path.exists():
            continue
        ids = ids_of(n)
        states = states_of_age(run, n, ids_of(n - 2), ids_of(n - 4))
        value, best = state_values(states, run.tables, run.target_exp, ids,
                                   run.load_values(n, ids))
        live = best >= 0
        packed, params = build_fuse(states[live], best[live].astype(np.uint8))
        starts = starts_of_age(run.rows, run.cols, run.p2, n)
        start_values = [[int(s), float(value[np.searchsorted(states, s)])] for s in starts]
        write_layer(path, {"slots": packed},
                    dict(run.params(), age=n, num_states=int(live.sum()),
                         policy_format=POLICY_FORMAT, start_values=start_values, **params))
        done.append({"age": n, "num_states": int(live.sum()), "bytes": int(packed.nbytes)})
        print(f"policy age {n}: {int(live.sum())} states, {packed.nbytes} bytes", file=log,
              flush=True)
    write_json_atomic(run.directory / "policy" / f"block_{ages[0]:06d}-{ages[-1]:06d}.json",
                      {"stage": "policy", **run.params(), "ages": done,
                       "seconds": round(time.perf_counter() - t0, 3)})
    return done


@njit
def _best_positions(boards, packed, seed, seg_len, seg_count_len, rows, cols, line_result,
                    line_reward, sym):
    n = boards.shape[0]
    out = np.full(n, -1, np.int64)
    after_b = np.empty(4, np.uint64)
    reward_b = np.empty(4, np.int64)
    after_c = np.empty(4, np.uint64)
    reward_c = np.empty(4, np.int64)
    for k in range(n):
        b = boards[k]
        moves(b, rows, cols, line_result, line_reward, sym, after_b, reward_b)
        legal = 0
        for d in range(4):
            legal += after_b[d] != b
        if legal == 0:
            continue
        c = canonical_id(b, rows, cols, sym)
        rank = 0
        if packed.shape[0]:
            rank = np.int64(_retrieve(packed, c, seed, seg_len, seg_count_len))
        moves(c, rows, cols, line_result, line_reward, sym, after_c, reward_c)
        rank %= legal  # the same number of legal moves: c is b up to symmetry
        target = np.uint64(0)
        reward = np.int64(0)
        m = 0
        for d in range(4):
            if after_c[d] != c:
                if m == rank:
                    target = canonical_id(after_c[d], rows, cols, sym)
                    reward = reward_c[d]
                m += 1
        out[k] = 0
        m = 0
        for d in range(4):
            if after_b[d] != b:
                if reward_b[d] == reward and canonical_id(after_b[d], rows, cols, sym) == target:
                    out[k] = m
                    break
                m += 1
    return out


class PolicyStore:
    """The best move of any state of a run, from its ``policy/`` layers alone.

    Parameters
    ----------
    run : run.Run

    Raises
    ------
    FileNotFoundError
        If the run has no policy store (no ``policy/`` directory; a store built for some ages only,
        ``--ages``, answers those and names a missing layer as any layer): the message names the
        command that builds it from the solved layers
        (:func:`.hints.policy_command`).

    Notes
    -----
    A board outside the reachable set gets an arbitrary legal move (module docstring).
    """

    def __init__(self, run):
        self.run = run
        self._layers = {}
        if not policy_path(run, 4).parent.is_dir():
            raise FileNotFoundError(
                f"run {run.directory} has no policy store ({policy_path(run, 4).parent} is missing); "
                f"build it from the solved layers with: `{policy_command(run.directory)}`")

    def _layer(self, n):
        if n not in self._layers:
            arrays, attrs = read_layer(policy_path(self.run, n),
                                       dict(self.run.params(), age=n, policy_format=POLICY_FORMAT),
                                       repair_command, foreign_store_command)
            self._layers = {n: (arrays["slots"], attrs)}  # one age at a time, as play needs
        return self._layers[n]

    def best_positions(self, boards, n):
        """Position of the best move of each board of age ``n`` among its legal moves in direction
        order (int64[k]; -1 when no move is legal), as :func:`backward.state_values` gives it.

        Raises
        ------
        CorruptLayerError
            If the policy layer of age ``n`` is missing or corrupt.
        """
        packed, a = self._layer(n)
        rows, cols, line_result, line_reward, sym = self.run.tables.kernel_args()
        return _best_positions(np.ascontiguousarray(boards, np.uint64), packed, a["seed"],
                               a["segment_length"], a["segment_count_length"], rows, cols,
                               line_result, line_reward, sym)

    def expected_score(self):
        """The run's exact expected score (points, or the probability of making the target tile):
        the start states' values stored with the layers of their ages, weighted by the start
        distribution (:func:`board.start_states`) and added in its order
        (:func:`spawn.expected_value`), as :meth:`solution.Solution.expected_score` adds them.

        Raises
        ------
        CorruptLayerError
            If a layer of a start age (4, 6 or 8) is missing, corrupt, or lacks the value of one of
            its start states: the message names it and the command that rebuilds it.
        """
        ids, probs = start_states(self.run.rows, self.run.cols, self.run.p2)
        values = []
        for s in ids.tolist():
            n = age(s)
            stored = dict((k, v) for k, v in self._layer(n)[1].get("start_values", []))
            if s not in stored:
                path = policy_path(self.run, n)
                raise CorruptLayerError(
                    f"policy layer {path} has no value for the start state {s:#x}; rebuild it "
                    f"with: `{repair_command(path)}`")
            values.append(stored[s])
        return expected_value(probs, values)

    def bits_per_state(self):
        """Stored bits (the slot arrays) per stored state over every age."""
        bits = states = 0
        for n in self.run.ages():
            packed, a = self._layer(n)
            bits += 8 * packed.size
            states += a["num_states"]
        return bits / max(states, 1)
