"""Ludo races with only the values in memory: P pieces each, successors computed on the fly
.

The game is the race of :mod:`..rules` (its module docstring has the rules). One piece's move
(:func:`..encoding._move_table`), the choices after a roll (:func:`..encoding._after_roll`) and captures
(:func:`..encoding.captured`) come from there, so this solver and the expansion solver play the same
game; only the storage differs: the expansion holds every candidate (about 1.6 kB per position),
this solver holds one float64 per position (8 bytes; 12 with the extrapolation below) and
recomputes the candidates each sweep.

**Index.** A side's pieces are a sorted tuple of rest-cell indices. The M tuples are ranked by
progress (the sum of the pieces' cells), then lexicographically. ``value[a, b]`` (float64[M, M]) is
the win probability of the player to move holding tuple a against tuple b; 0 at ended games (a side
with every piece at N), which are never read.

**Successors.** After face d the mover with tuple a may move each of its pieces on distinct cells
(to a tuple and a landing cell that depend on a alone: :class:`ValueRace` tables ``succ``, ``land``)
or, where the rule allows, pass (``can_pass``); a capture changes the opponent's tuple b to
``capture[b, landing cell]``. A move that brings every piece home is worth 1; a bonus roll
(``roll_again_on``) is worth ``value[a', b']``; any other choice ``1 - value[b', a']``.

**Order.** A position (a, b) and its mirror (b, a) form a pair; pairs are grouped in blocks of
their two progresses (P, Q) = (max, min) of progress(a) and progress(b), and a sweep visits the
blocks by P from the highest down, and inside one P by Q from P down. A move without a capture adds
progress to the mover, so it reads a block that comes earlier in the sweep, already updated
(Gauss-Seidel between blocks). So does a capture made by the side ahead (or one that puts the
capturer ahead): only a capture that leaves the capturer behind reads a block not yet updated. Under
the order by total progress every capture did, and the error that travels through chains of
captures shrank by a factor of 0.64 a sweep at the end instead of 0.46: 77 plain sweeps to 1e-12
for the three-piece race on ``bench/data/ludo_half30.yaml`` against 49 (bench/RECORD.md). Inside a
block, every value is computed from the values as they were when the block began, into a buffer
written back at its end (Jacobi inside a block): threads never read what another thread writes, so
the values are the same bit for bit on any number of threads, and a checkpointed solve resumes to the
values of an unbroken one. A pass leads from a position to its mirror (or, on a bonus roll, to
itself): the pair's two equations are iterated with every other value fixed until they settle, so a
pass loop (a piece one cell before N passes with probability 5/6) costs no sweeps. Each update
applies the Bellman equation of the race to current values, so the sweeps reach the fixed point of
the expansion solver's Gauss-Seidel iteration (the race's unique one); only the path differs.
A task prefetches the scattered values of the column it computes next but one, every move's
(:mod:`strongsolve.kernels.prefetch`): a hint, so the values do not change. The sweep reads the
move and capture tables as uint32: unsigned indices spare each read numba's test for a negative
index, which lay on its chain of dependent loads (table, capture, value).

**Extrapolation** (:mod:`.acceleration`, on by default): the sweep also keeps each position's change
of the last two sweeps (float32: 8 bytes beside the value's 8, 16 per position, which
:func:`check_memory` counts) and, every third sweep, jumps to the combination of the last three
sweeps that least changes (reduced rank extrapolation, :class:`.acceleration.ReducedRank`): 30
sweeps to 1e-12 against 40 plain on the three-piece race of ``bench/data/ludo_half30.yaml``.
``extrapolation="tail"`` keeps one change (12 bytes per position) and jumps along the geometric tail
of the largest changes when they shrink by a steady ratio (37 sweeps there). The last sweeps are
plain, so the stop rule is unchanged.

**Start** (:mod:`.initial`): the sweeps start from the race without captures, not from zeros (30
sweeps there instead of 36).

Why one module of more than 500 lines: the solver's numba kernels (choice and capture tables,
the sweep by blocks of progress) and its driver (memory check, threads, checkpoints) share the
index of the value matrix described above.
"""

import math
import os
import time
from typing import NamedTuple

import numba
import numpy as np
from numba import prange

from ....kernels.options import njit, njit_parallel
from ....kernels.prefetch import prefetch
from .. import encoding, rules
from . import acceleration, initial

TASKS_PER_BLOCK = 64  # work split of a block (not the thread count), in whole rows
TILE = 16  # rows of one progress swept together, column by column (1, 16 and 64 measured alike)
PREFETCH_AHEAD = 2  # columns between a column's prefetch and its pairs (1, 2 and 4 measured alike)
SETTLE_LIMIT = 100_000  # iterations of a pass pair's two equations (they contract: a pass is < 1)


def _n_tuples(race):
    return race.tuples.shape[0]


def _index(race, own, opponent):
    """(row, column) of a position given as cells (any order) in the value matrix.

    Raises
    ------
    ValueError
        A cell no piece rests on, or a wrong piece count (as :meth:`encoding.RaceEncoding.node`).
    """
    enc = race.lex_encoding()
    lex = enc.node(own, opponent)
    return int(race.of_lex[lex // enc.n_tuples]), int(race.of_lex[lex % enc.n_tuples])


def _lex_encoding(race):
    """The :class:`encoding.RaceEncoding` (lexicographic ranks) of this race, as
    :func:`advice.advise` takes it."""
    return encoding.race_encoding(race.board, race.pieces, limit=None)


class RaceOrder(NamedTuple):
    """The index of a race's value matrix without its move tables: what reading saved values
    needs (:class:`..saved.SavedValues`), built with numpy alone (12 ms for three pieces on the
    classic board; :func:`race_tables` took 1.25 s in a fresh process, its numba kernels loaded).

    Attributes are those of :class:`ValueRace` of the same name; ``n_tuples``, ``index`` and
    ``lex_encoding`` too.
    """

    board: rules.Board
    pieces: int
    cells: np.ndarray
    tuples: np.ndarray
    progress: np.ndarray
    start: np.ndarray
    of_lex: np.ndarray

    n_tuples = property(_n_tuples)
    index = _index
    lex_encoding = _lex_encoding


class ValueRace(NamedTuple):
    """Tables of a race of P pieces each for :func:`solve_values`.

    Attributes
    ----------
    board : rules.Board
    pieces : int
    cells : int64[R]
        Rest cells (:meth:`rules.Board.rest_cells`).
    tuples : int64[M, P]
        Sorted tuples of rest-cell indices, by progress then lexicographic (the value's index).
    progress : int64[M]
        Sum of the cells of each tuple.
    start : int64[P*N + 2]
        Tuples of progress p are ``start[p]:start[p + 1]``.
    of_lex : int64[M]
        Rank here of each row of :func:`encoding.race_encoding`'s tuples.
    succ : int32[M, F, P]
        Tuple after each move of each face (moves in increasing cell order, ``n_moves`` of them).
    land : int32[M, F, P]
        Rest-cell index where that move lands (after jumps).
    n_moves : int32[M, F]
    can_pass : bool[M, F]
        Whether passing is a choice (no piece can move, or ``pass_by_overshoot`` and one
        overshoots).
    capture : int32[M, R]
        The opponent's tuple after a piece lands on each rest cell.
    home : int
        Rank of the tuple with every piece at N (the last).
    """

    board: rules.Board
    pieces: int
    cells: np.ndarray
    tuples: np.ndarray
    progress: np.ndarray
    start: np.ndarray
    of_lex: np.ndarray
    succ: np.ndarray
    land: np.ndarray
    n_moves: np.ndarray
    can_pass: np.ndarray
    capture: np.ndarray
    home: int

    n_tuples = property(_n_tuples)
    index = _index
    lex_encoding = _lex_encoding


CHANGE_BYTES = 4  # per position: the last sweep's change (float32) the extrapolation jumps from


def change_slots(extrapolation):
    """float32 change matrices an ``extrapolation`` setting of :func:`solve_values` keeps: 0 for
    False, :data:`.acceleration.HISTORY` for True or ``"rre"``, 1 for ``"tail"``.

    Raises
    ------
    ValueError
        Any other setting.
    """
    if extrapolation is False or extrapolation is None:
        return 0
    if extrapolation is True or extrapolation == "rre":
        return acceleration.HISTORY
    if extrapolation == "tail":
        return 1
    raise ValueError(f"extrapolation must be True, False, 'tail' or 'rre', got {extrapolation!r}")


def value_bytes(board, pieces, extrapolation=False):
    """Bytes the solve holds per race: 8 per position for the value (:func:`encoding.race_positions`),
    4 more per change slot of ``extrapolation`` (:func:`change_slots`: 2 for True or ``"rre"``, 1 for
    ``"tail"``; :mod:`.acceleration`)."""
    per = 8 + CHANGE_BYTES * change_slots(extrapolation)
    return per * encoding.race_positions(board, pieces)


def default_memory_limit():
    """Bytes the value matrix may take by default: 80% of this machine's physical memory."""
    return int(0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def check_memory(board, pieces, limit, option="--max-memory-gb", extrapolation=True):
    """Refuse a race whose value matrix (and, with ``extrapolation``, the float32 matrix of the last
    sweep's changes) would not fit in ``limit`` bytes.

    Raises
    ------
    ValueError
        Naming the positions, the memory needed and ``option``, the setting that raises the limit.
    """
    need = value_bytes(board, pieces, extrapolation)
    if need > limit:
        slots = change_slots(extrapolation)
        kept = "its last change" if slots == 1 else f"its last {slots} changes"
        each = (f"{8 + CHANGE_BYTES * slots} bytes each: 8 for the value, {CHANGE_BYTES * slots} for "
                f"{kept}, which the extrapolation keeps; --no-extrapolation needs 8" if slots
                else "8 bytes each")
        raise ValueError(
            f"{pieces} pieces each on this board give "
            f"{encoding.race_positions(board, pieces):,} positions: their values take "
            f"{need:,} bytes ({need / 1e9:.2f} GB, {each}), more than the memory limit "
            f"{limit:,} bytes ({limit / 1e9:.2f} GB); "
            f"raise it with {option} {math.ceil(need * 1.1 / 1e9)} on a machine with that much "
            "memory, or use fewer pieces")


def race_tables(board, pieces):
    """Build the :class:`ValueRace` of ``pieces`` per player (1..4).

    Raises
    ------
    ValueError
        ``pieces`` outside 1..4 (as :func:`encoding.race_encoding`).
    """
    enc = encoding.race_encoding(board, pieces, limit=None)
    order = _order(board, pieces, enc)
    cells, tuples, of_lex = order.cells, order.tuples, order.of_lex
    r = len(cells)
    rank = np.where(enc.rank >= 0, of_lex[np.maximum(enc.rank, 0)], -1)
    move, capture_ok = encoding._move_table(board, cells)
    goal = r - 1
    succ, land, n_moves, can_pass = _choice_tables(tuples, rank, r, move, capture_ok, goal,
                                                   board.pass_by_overshoot)
    capture = _capture_table(tuples, rank, r, capture_ok)
    return ValueRace(*order, succ, land, n_moves, can_pass, capture, int(tuples.shape[0] - 1))


def race_order(board, pieces):
    """The :class:`RaceOrder` of ``pieces`` per player (1..4): the index of :func:`race_tables`
    without its move tables.

    Raises
    ------
    ValueError
        ``pieces`` outside 1..4 (as :func:`encoding.race_encoding`).
    """
    return _order(board, pieces, encoding.race_encoding(board, pieces, limit=None))


def _order(board, pieces, enc):
    # tuples by progress, lexicographic inside a progress value
    progress_lex = enc.cells[enc.tuples].sum(axis=1)
    order = np.argsort(progress_lex, kind="stable")
    of_lex = np.empty_like(order)
    of_lex[order] = np.arange(order.size)
    progress = progress_lex[order]
    start = np.searchsorted(progress, np.arange(pieces * board.length + 2)).astype(np.int64)
    return RaceOrder(board, int(pieces), enc.cells, enc.tuples[order], progress, start, of_lex)


@njit
def _choice_tables(tuples, rank, r, move, capture_ok, goal, pass_by_overshoot):
    # the choices after each face from each tuple, by encoding._after_roll with an empty opponent
    m, p = tuples.shape
    faces = move.shape[1]
    succ = np.full((m, faces, p), -1, np.int32)
    land = np.full((m, faces, p), -1, np.int32)
    n_moves = np.zeros((m, faces), np.int32)
    can_pass = np.zeros((m, faces), np.bool_)
    own = np.empty((p + 1, p), np.int64)
    opp = np.empty((p + 1, p), np.int64)
    moved = np.empty(p + 1, np.int64)
    nobody = np.zeros(p, np.int64)
    for a in range(m):
        for d in range(faces):
            n = encoding._after_roll(tuples[a], nobody, d, move, capture_ok, goal, pass_by_overshoot,
                                 own, opp, moved)
            k = 0
            for c in range(n):
                if moved[c] < 0:
                    can_pass[a, d] = True
                else:
                    succ[a, d, k] = encoding._rank(own[c], r, rank)
                    land[a, d, k] = move[moved[c], d]
                    k += 1
            n_moves[a, d] = k
    return succ, land, n_moves, can_pass


@njit
def _capture_table(tuples, rank, r, capture_ok):
    m, p = tuples.shape
    out = np.empty((m, r), np.int32)
    after = np.empty(p, np.int64)
    for b in range(m):
        for t in range(r):
            encoding.captured(tuples[b], t, capture_ok, after)
            out[b, t] = encoding._rank(after, r, rank)
    return out


@njit
def _terms(value, a, b, succ, land, n_moves, can_pass, capture, home, probs, again, fixed, passes):
    # per face: the best move's value (-1 when none) and whether a pass is a choice
    any_pass = False
    for d in range(probs.shape[0]):
        best = -1.0
        passes[d] = False
        if probs[d] > 0:
            bonus = again == d + 1
            for j in range(n_moves[a, d]):
                a2 = succ[a, d, j]
                if a2 == home:
                    q = 1.0
                else:
                    b2 = capture[b, land[a, d, j]]
                    q = value[a2, b2] if bonus else 1.0 - value[b2, a2]
                if q > best:
                    best = q
            passes[d] = can_pass[a, d]
            any_pass = any_pass or passes[d]
        fixed[d] = best
    return any_pass


@njit
def _combine(fixed, passes, probs, again, own, mirror):
    # the Bellman value of a position from its terms; a pass is worth own (bonus roll) or
    # 1 - mirror (the opponent moves in the mirrored position)
    total = 0.0
    for d in range(probs.shape[0]):
        if probs[d] == 0:
            continue
        best = fixed[d]
        if passes[d]:
            q = own if again == d + 1 else 1.0 - mirror
            if q > best:
                best = q
        total += probs[d] * best
    return total


@njit
def _pair(value, a, b, succ, land, n_moves, can_pass, capture, home, probs, again, settle,
          fa, pa, fb, pb):
    # new values of (a, b) and its mirror (b, a), solved together (module docstring)
    if a == home or b == home:
        return 0.0, 0.0
    loop_a = _terms(value, a, b, succ, land, n_moves, can_pass, capture, home, probs, again, fa, pa)
    if a == b:
        x = value[a, b]
        for _ in range(SETTLE_LIMIT):
            nx = _combine(fa, pa, probs, again, x, x)
            if not loop_a or abs(nx - x) <= settle:
                return nx, nx
            x = nx
        return x, x
    loop_b = _terms(value, b, a, succ, land, n_moves, can_pass, capture, home, probs, again, fb, pb)
    x = value[a, b]
    y = value[b, a]
    for _ in range(SETTLE_LIMIT):
        nx = _combine(fa, pa, probs, again, x, y)
        ny = _combine(fb, pb, probs, again, y, nx)
        if not (loop_a or loop_b) or (abs(nx - x) <= settle and abs(ny - y) <= settle):
            return nx, ny
        x = nx
        y = ny
    return x, y


@njit
def _block_rows(big, small, start, offsets):
    # the pairs of block (big, small), big >= small: rows u of progress small, each against the
    # tuples v of progress big (v >= u when the two progresses are equal); offsets[i] = pairs before
    # row lo + i. Returns (lo, hi, pairs).
    lo = start[small]
    hi = start[small + 1]
    offsets[0] = 0
    for u in range(lo, hi):
        n = start[big + 1] - (u if big == small else start[big])
        offsets[u - lo + 1] = offsets[u - lo] + n
    return lo, hi, offsets[hi - lo]


@njit
def _task_rows(lo, hi, pairs, tasks, offsets, rows):
    # rows[t]:rows[t + 1] are task t's rows (offsets of lo + rows), about pairs / tasks pairs each
    n = hi - lo
    for t in range(tasks + 1):
        rows[t] = np.searchsorted(offsets[:n + 1], pairs * t // tasks, side="left")
    rows[tasks] = n


@njit
def _task(write, s, r0, r1, lo, value, progress, start, succ, land, n_moves, can_pass, capture,
          home, probs, again, settle, offsets, buf, record, change, reads, dest, prod):
    # task rows lo + r0 .. lo + r1 of a block of total progress s, in tiles of TILE rows, the columns
    # outermost: a tile reads the same stretch of each column's row and of its own rows for every
    # pair. write False: the new values into buf; True: buf into value, returning the largest change
    # and, when record, each change (new minus old, float32) into change[dest], with the sums over
    # the task's positions of that change times change[reads[i]] into prod[i] and of its square
    # into prod[reads.size] (read before change[dest] is written: dest may be one of reads)
    faces = probs.shape[0]
    fa = np.empty(faces)
    fb = np.empty(faces)
    pa = np.empty(faces, np.bool_)
    pb = np.empty(faces, np.bool_)
    worst = 0.0
    prod[:] = 0.0
    a0 = lo + r0
    while a0 < lo + r1:
        a1 = min(a0 + TILE, lo + r1, start[progress[a0] + 1])
        q = s - progress[a0]
        diagonal = q == progress[a0]
        end = start[q + 1]
        for v in range(start[q], end):
            if not write and v + PREFETCH_AHEAD < end:
                _prefetch_column(value, v + PREFETCH_AHEAD, a0, a1, succ, n_moves)
            for u in range(a0, a1):
                if diagonal and v < u:
                    break
                k = offsets[u - lo] + v - (u if diagonal else start[q])
                if write:
                    du = buf[2 * k] - value[u, v]
                    dv = buf[2 * k + 1] - value[v, u]
                    worst = max(worst, abs(du), abs(dv))
                    if record:
                        _record(change, reads, dest, prod, u, v, np.float32(du))
                        if v != u:  # the diagonal position is one, counted once
                            _record(change, reads, dest, prod, v, u, np.float32(dv))
                    value[u, v] = buf[2 * k]
                    value[v, u] = buf[2 * k + 1]
                else:
                    x, y = _pair(value, u, v, succ, land, n_moves, can_pass, capture, home, probs,
                                 again, settle, fa, pa, fb, pb)
                    buf[2 * k] = x
                    buf[2 * k + 1] = y
        a0 = a1
    return worst


@njit
def _prefetch_column(value, w, a0, a1, succ, n_moves):
    # the scattered values that column w's pairs with rows a0..a1 read: each row's moves after
    # each face, against w, and (mirrored) w's against each row; a hint, not a read
    for u in range(a0, a1):
        for d in range(n_moves.shape[1]):
            for j in range(n_moves[u, d]):
                prefetch(value, w, succ[u, d, j])
            for j in range(n_moves[w, d]):
                prefetch(value, u, succ[w, d, j])


@njit
def _record(change, reads, dest, prod, i, j, c):
    # position (i, j)'s change c: its products with the kept changes, then c kept in slot dest
    x = np.float64(c)
    for r in range(reads.size):
        prod[r] += x * np.float64(change[reads[r], i, j])
    prod[reads.size] += x * x
    change[dest, i, j] = c


@njit_parallel
def _sweep(value, progress, start, succ, land, n_moves, can_pass, capture, home, probs, again,
           settle, offsets, buf, rows, task_delta, record, change, reads, dest, task_prod, prod):
    # one sweep over the blocks (module docstring); the largest change (when record: each
    # position's change into change[dest] and, into prod, the sums of its products with
    # change[reads[i]] and of its square, added task by task in task order so that they do not
    # depend on the thread count)
    delta = 0.0
    prod[:] = 0.0
    top = start.shape[0] - 2
    for big in range(top, -1, -1):
        for small in range(big, -1, -1):
            lo, hi, pairs = _block_rows(big, small, start, offsets)
            if pairs == 0:
                continue
            s = big + small
            tasks = min(TASKS_PER_BLOCK, hi - lo)
            _task_rows(lo, hi, pairs, tasks, offsets, rows)
            for t in prange(tasks):
                _task(False, s, rows[t], rows[t + 1], lo, value, progress, start, succ, land,
                      n_moves, can_pass, capture, home, probs, again, settle, offsets, buf, record,
                      change, reads, dest, task_prod[t])
            for t in prange(tasks):
                task_delta[t] = _task(True, s, rows[t], rows[t + 1], lo, value, progress, start,
                                      succ, land, n_moves, can_pass, capture, home, probs, again,
                                      settle, offsets, buf, record, change, reads, dest,
                                      task_prod[t])
            for t in range(tasks):
                delta = max(delta, task_delta[t])
                if record:
                    for i in range(prod.size):
                        prod[i] += task_prod[t, i]
    return delta


def block_pairs(race):
    """Pairs (a position and its mirror) of the largest block: the buffer :func:`sweep` needs."""
    counts = np.sort(np.diff(race.start))
    across = int(counts[-1] * counts[-2]) if counts.size > 1 else 0  # two progresses
    return max(across, int(counts[-1] * (counts[-1] + 1) // 2))  # one progress: v >= u


class Sweeper:
    """One sweep at a time over a race's value matrix (:func:`_sweep`), with its work buffers.

    Parameters
    ----------
    race : ValueRace
    tol : float
        The convergence threshold; a pass pair's equations settle to ``tol / 1000``.
    record : bool or int
        Keep each position's change of a sweep in :attr:`change` (float32[K, M, M], 4 bytes per
        position and slot; :mod:`.acceleration` jumps from them): True or 1 keeps the last sweep's
        (K = 1), an int K > 1 keeps K sweeps' in slots the caller names; False or 0 leaves
        :attr:`change` empty.
    """

    def __init__(self, race, tol, record=False):
        self.race = race
        self.probs = np.array([float(p) for p in race.board.die])
        self.again = 0 if race.board.roll_again_on is None else int(race.board.roll_again_on)
        self.settle = tol / 1000.0
        self.offsets = np.zeros(race.n_tuples + 1, np.int64)
        self.buf = np.empty(2 * max(1, block_pairs(race)))
        self.rows = np.zeros(TASKS_PER_BLOCK + 1, np.int64)
        self.task_delta = np.zeros(TASKS_PER_BLOCK)
        self.slots = int(record)
        self.record = self.slots > 0
        m = race.n_tuples if self.record else 0
        self.change = np.zeros((self.slots, m, m), np.float32)
        self.products = np.zeros(0)
        # the same tables, unsigned (module docstring); a missing move's -1 is never read
        self.tables = (race.succ.view(np.uint32), race.land.view(np.uint32), race.n_moves,
                       race.can_pass, race.capture.view(np.uint32), np.uint32(race.home))

    def __call__(self, value, reads=(), dest=0):
        """Sweep ``value`` (float64[M, M], C order) in place; return the largest change.

        When recording, the sweep's change goes to slot ``dest`` of :attr:`change`, and
        :attr:`products` becomes its dot product with each slot of ``reads`` (as they were before
        the sweep), then with itself (float64[len(reads) + 1], summed in float64 in an order that
        does not depend on the thread count).
        """
        r = self.race
        reads = np.asarray(reads, np.int64)
        if self.record and not (0 <= dest < self.slots and np.all((reads >= 0) & (reads < self.slots))):
            raise ValueError(f"slots must be in 0..{self.slots - 1}, got reads {reads}, dest {dest}")
        self.products = np.zeros(reads.size + 1)
        return float(_sweep(value, r.progress, r.start, *self.tables, self.probs, self.again,
                            self.settle, self.offsets, self.buf, self.rows, self.task_delta,
                            self.record, self.change, reads, int(dest),
                            np.zeros((TASKS_PER_BLOCK, reads.size + 1)), self.products))


class ValueSolution(NamedTuple):
    """A race solved by :func:`solve_values`.

    Attributes
    ----------
    race : ValueRace
    value : float64[M, M]
        Win probability of the player to move (index: :attr:`ValueRace.tuples`).
    win_probability : float
        Of the first mover from the start.
    sweeps : int
        Counted from zero values, a resumed run's earlier sweeps included.
    residual : float
        The largest change of the last sweep.
    resumed_from : int
        The checkpoint's sweep count (0: solved from the start).
    jumps : int
        Extrapolation jumps made (:mod:`.acceleration`; 0 without it), a resumed run's earlier
        ones included.
    """

    race: ValueRace
    value: np.ndarray
    win_probability: float
    sweeps: int
    residual: float
    resumed_from: int
    jumps: int = 0


STARTS = ("independent", "zero")  # solve_values's start settings


def solve_values(board, pieces, tol=1e-12, max_sweeps=100_000, memory_limit=None,
                 checkpoints=None, progress=None, extrapolation=True, start="independent"):
    """Win probability of every race position under optimal play by both, values only in memory.

    Parameters
    ----------
    board : rules.Board
    pieces : int
        Pieces per player, 1..4.
    tol : float
        Stop after a sweep that changes no value by more than ``tol``.
    max_sweeps : int
    memory_limit : int, optional
        Bytes the value matrix may take (default :func:`default_memory_limit`).
    checkpoints : saved.Checkpoints, optional
        Where the values are saved during the solve and resumed from (``latest()``, ``due(sweeps)``,
        ``save(value, sweeps, delta, state)``).
    progress : callable, optional
        ``progress(sweep, delta, seconds)`` after each sweep.
    extrapolation : bool or str
        True or ``"rre"`` (the default): reduced rank extrapolation in cycles of three sweeps
        (:class:`.acceleration.ReducedRank`; 8 more bytes per position, 30 sweeps to 1e-12 against
        40 plain for the three-piece race on ``bench/data/ludo_half30.yaml``); ``"tail"``: jump
        along the sweeps' geometric tail (:class:`.acceleration.Extrapolation`; 4 more bytes per
        position, 37 sweeps there); False: plain sweeps. All stop after a
        plain sweep that changes no value by more than tol.
    start : str
        The values the first sweep starts from (a resumed solve starts from its checkpoint):
        ``"independent"`` (the default), the race without captures
        (:func:`.initial.fill_independent_race`: 30 sweeps instead of 36 with reduced rank
        extrapolation on the three-piece race of ``bench/data/ludo_half30.yaml``); ``"zero"``.

    Returns
    -------
    ValueSolution

    Raises
    ------
    ValueError
        ``pieces`` outside 1..4, ``tol`` <= 0, a ``start`` not in :data:`STARTS`, a value matrix
        (with the change matrix of the extrapolation) above ``memory_limit``, a goal some rest cell
        cannot reach (:func:`rules.cells_without_goal`: the race would never end).
    RuntimeError
        If ``max_sweeps`` sweeps do not reach ``tol``.
    """
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    if start not in STARTS:
        raise ValueError(f"start must be one of {', '.join(STARTS)}, got {start!r}")
    pieces = rules._int(pieces, "pieces")
    if not 1 <= pieces <= 4:
        raise ValueError(f"pieces must be in 1..4, got {pieces}")
    stuck = rules.cells_without_goal(board)
    if stuck:
        raise ValueError(rules.unreachable_goal_message(board, stuck))
    check_memory(board, pieces, default_memory_limit() if memory_limit is None else memory_limit,
                 extrapolation=extrapolation)
    race = race_tables(board, pieces)
    m = race.n_tuples
    sweeps, delta, resumed, state = 0, math.inf, 0, None
    saved = checkpoints.latest() if checkpoints is not None else None
    if saved is not None:
        flat, sweeps, delta, state = saved
        value = flat.reshape(m, m)
        resumed = sweeps
    elif start == "zero":
        value = np.zeros((m, m))
    else:
        value = np.empty((m, m))
        initial.fill_independent_race(race, value)
    slots = change_slots(extrapolation)
    sweep = Sweeper(race, tol, record=slots)
    rre = extrapolation is True or extrapolation == "rre"
    jumper = (None if not slots else acceleration.ReducedRank(tol, state) if rre
              else acceleration.Extrapolation(tol, state))
    while delta > tol:
        if sweeps >= max_sweeps:
            raise RuntimeError(f"value iteration did not reach tol={tol} in {max_sweeps} sweeps "
                               f"(last change {delta})")
        began = time.perf_counter()
        reads, dest = jumper.slots_for(sweeps) if rre else ((), 0)
        delta = sweep(value, reads, dest)
        sweeps += 1
        if jumper is not None and delta > tol:
            if rre:
                jumper.after_sweep(value, sweep.change, delta, sweep.products, sweeps)
            else:
                jumper.after_sweep(value, sweep.change[0], delta)
        if progress is not None:
            progress(sweeps, delta, time.perf_counter() - began)
        # a reduced rank cycle holds changes no checkpoint keeps: save between cycles
        if (checkpoints is not None and delta > tol and checkpoints.due(sweeps)
                and (not rre or jumper.can_checkpoint())):
            checkpoints.save(value.reshape(-1), sweeps, delta,
                             None if jumper is None else jumper.state())
    start = race.index((0,) * pieces, (0,) * pieces)
    return ValueSolution(race, value, float(value[start]), sweeps, float(delta), resumed,
                         0 if jumper is None else jumper.jumps)


def set_threads(threads):
    """Use ``threads`` numba threads (None: leave numba's setting); returns the count in use."""
    if threads is not None:
        if threads < 1 or threads > numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"threads must be in 1..{numba.config.NUMBA_NUM_THREADS}, got "
                             f"{threads}")
        numba.set_num_threads(threads)
    return numba.get_num_threads()
