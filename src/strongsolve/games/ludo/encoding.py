"""Ludo races encoded: the positions of a race (ranked tuples of rest cells, a node per pair of
tuples) and the CSR expansion of every position's rolls and choices (:func:`race_expansion`), by
the rules of :mod:`.rules` (its docstring states them).
"""

import itertools
from math import comb
from typing import NamedTuple

import numpy as np

from ...kernels.iteration import Expansion
from ...kernels.options import njit

from .rules import Board, _int

MAX_RACE_NODES = 10_000_000  # about 16 GB at peak (6 faces, 2 pieces: 1.6 kB per position)


class RaceEncoding(NamedTuple):
    """Index of race positions.

    Attributes
    ----------
    cells : int64[R]
        Rest cells (:meth:`Board.rest_cells`); pieces are stored as indices into it.
    tuples : int64[M, P]
        Every sorted P-tuple of rest-cell indices, in lexicographic order; M = C(R + P - 1, P).
    rank : int64[R^P]
        Flattened lookup tuple -> row of ``tuples`` (-1 for unsorted tuples).

    Node of (own, opponent) = ``rank(own) * M + rank(opponent)``.
    """

    cells: np.ndarray
    tuples: np.ndarray
    rank: np.ndarray

    @property
    def n_tuples(self):
        return self.tuples.shape[0]

    def node(self, own, opponent):
        """Node index of a position given as cell tuples (any order)."""
        index = {c: i for i, c in enumerate(self.cells.tolist())}
        for c in (*own, *opponent):
            if c not in index:
                raise ValueError(f"cell {c} is not a cell a piece can rest on; allowed: "
                                 f"{self.cells.tolist()}")
        p = self.tuples.shape[1]
        if len(own) != p or len(opponent) != p:
            raise ValueError(f"each side needs {p} pieces, got {len(own)} and {len(opponent)}")

        def rank(cells):
            flat = 0
            for c in sorted(index[c] for c in cells):
                flat = flat * len(self.cells) + c
            return int(self.rank[flat])

        return rank(own) * self.n_tuples + rank(opponent)

    def position(self, node):
        """(own cells, opponent cells) of a node."""
        m = self.n_tuples
        return (tuple(self.cells[self.tuples[node // m]].tolist()),
                tuple(self.cells[self.tuples[node % m]].tolist()))


def race_positions(board, pieces):
    """Positions of a race of ``pieces`` per player on ``board`` (int): C(R + P - 1, P)^2, R the
    rest cells (each side's pieces are a multiset of rest cells)."""
    m = comb(len(board.rest_cells()) + pieces - 1, pieces)
    return m * m


def largest_race_pieces(board):
    """The most pieces per player (0..4) whose race this solver holds in memory on ``board``
    (at most ``MAX_RACE_NODES`` positions)."""
    return max([p for p in range(1, 5) if race_positions(board, p) <= MAX_RACE_NODES], default=0)


def race_encoding(board, pieces, limit=MAX_RACE_NODES):
    """Build the :class:`RaceEncoding` of ``pieces`` per player (1 <= pieces <= 4); ``limit`` is
    the most positions allowed (None: no limit; the value-only solver of :mod:`.stages.values`
    checks memory instead)."""
    pieces = _int(pieces, "pieces")
    if not 1 <= pieces <= 4:
        raise ValueError(f"pieces must be in 1..4, got {pieces}")
    cells = np.array(board.rest_cells(), np.int64)
    r = len(cells)
    positions = race_positions(board, pieces)
    if limit is not None and positions > limit:
        raise ValueError(f"{pieces} pieces on {r} rest cells give {positions:,} positions, more "
                         f"than the {MAX_RACE_NODES:,} this solver holds in memory; use fewer "
                         "pieces")
    tuples = np.array(list(itertools.combinations_with_replacement(range(r), pieces)), np.int64)
    flat = np.zeros(len(tuples), np.int64)
    for j in range(pieces):
        flat = flat * r + tuples[:, j]
    rank = np.full(r ** pieces, -1, np.int64)
    rank[flat] = np.arange(len(tuples))
    return RaceEncoding(cells, tuples, rank)


@njit
def _rank(t, r, rank):
    flat = 0
    for j in range(t.shape[0]):
        flat = flat * r + t[j]
    return rank[flat]


@njit
def captured(theirs, t, capture_ok, out):
    """The opponent's pieces (sorted rest-cell indices, int64[P]) after a piece lands on rest cell
    ``t``: every one there goes back to 0 unless ``capture_ok[t]`` is False (0, N, safe); written
    sorted into ``out``."""
    for i in range(theirs.shape[0]):
        out[i] = 0 if capture_ok[t] and theirs[i] == t else theirs[i]
    out.sort()


@njit
def _after_roll(mine, theirs, d, move, capture_ok, goal, pass_by_overshoot, own_out, opp_out,
                piece_out):
    # the mover's choices after face d + 1 (module docstring): rows 0..n-1 of own_out / opp_out
    # (int64[P + 1, P], sorted rest-cell indices) and piece_out (int64[P + 1]: the rest-cell index
    # of the piece moved, -1 for the pass); the moves in increasing cell order, then the pass
    p = mine.shape[0]
    n = 0
    may_stay = False  # a piece not at N that overshoots may be picked: it stays
    for j in range(p):
        c = mine[j]
        if move[c, d] < 0:
            may_stay = may_stay or (pass_by_overshoot and c != goal)
            continue
        if j > 0 and c == mine[j - 1]:
            continue
        t = move[c, d]
        for i in range(p):
            own_out[n, i] = mine[i]
            opp_out[n, i] = theirs[i]
        own_out[n, j] = t
        captured(theirs, t, capture_ok, opp_out[n])
        own_out[n].sort()
        piece_out[n] = c
        n += 1
    if n == 0 or may_stay:  # the turn passes (or the bonus roll comes)
        for i in range(p):
            own_out[n, i] = mine[i]
            opp_out[n, i] = theirs[i]
        piece_out[n] = -1
        n += 1
    return n


@njit
def _race(tuples, rank, r, move, prob, capture_ok, goal, again, pass_by_overshoot):
    m, p = tuples.shape
    n_nodes = m * m
    k = prob.shape[0]
    faces = 0
    for d in range(k):
        if prob[d] > 0:
            faces += 1
    node_ptr = np.zeros(n_nodes + 1, np.int64)
    out_prob = np.empty(n_nodes * faces, np.float64)
    out_ptr = np.zeros(n_nodes * faces + 1, np.int64)
    cap = n_nodes * faces * p
    reward = np.empty(cap, np.float64)
    nxt = np.empty(cap, np.int64)
    sign = np.empty(cap, np.float64)
    piece = np.empty(cap, np.int64)  # rest-cell index of the piece moved, -1 for a pass
    own = np.empty((p + 1, p), np.int64)
    opp = np.empty((p + 1, p), np.int64)
    moved = np.empty(p + 1, np.int64)
    o = 0
    a = 0
    for x in range(n_nodes):
        mine = tuples[x // m]
        theirs = tuples[x % m]
        done_mine = True
        done_theirs = True
        for j in range(p):
            done_mine = done_mine and mine[j] == goal
            done_theirs = done_theirs and theirs[j] == goal
        if not (done_mine or done_theirs):  # ended games have no outcome (value 0, unreachable)
            for d in range(k):
                if prob[d] == 0:
                    continue
                bonus = again == d + 1
                n = _after_roll(mine, theirs, d, move, capture_ok, goal, pass_by_overshoot, own,
                                opp, moved)
                for c in range(n):
                    won = True
                    for i in range(p):
                        won = won and own[c, i] == goal
                    if bonus and not won:
                        reward[a] = 0.0
                        sign[a] = 1.0
                        nxt[a] = _rank(own[c], r, rank) * m + _rank(opp[c], r, rank)
                    else:
                        reward[a] = 1.0
                        sign[a] = -1.0
                        nxt[a] = _rank(opp[c], r, rank) * m + _rank(own[c], r, rank)
                    piece[a] = moved[c]
                    a += 1
                out_prob[o] = prob[d]
                o += 1
                out_ptr[o] = a
        node_ptr[x + 1] = o
    return (node_ptr, out_prob[:o].copy(), out_ptr[:o + 1].copy(), reward[:a].copy(),
            nxt[:a].copy(), sign[:a].copy(), piece[:a].copy())


class Race(NamedTuple):
    """A race expansion with its encoding; ``piece`` int64[C] is the rest-cell index of the piece
    each candidate moves (-1 for a pass)."""

    board: Board
    encoding: RaceEncoding
    expansion: Expansion
    piece: np.ndarray


def race_expansion(board, pieces):
    """The negamax expansion of the two-player race (module docstring), under the board's
    ``pass_by_overshoot`` rule.

    Candidates of an outcome are the movable pieces in increasing cell order, then the pass (one
    candidate, ``piece`` -1) when no piece can move or, with ``pass_by_overshoot``, when some piece
    not at N overshoots and may stay.
    """
    enc = race_encoding(board, pieces)
    cells = enc.cells
    index = {c: i for i, c in enumerate(cells.tolist())}
    r = len(cells)
    move, capture_ok = _move_table(board, cells)
    again = 0 if board.roll_again_on is None else board.roll_again_on
    node_ptr, out_prob, out_ptr, reward, nxt, sign, piece = _race(
        enc.tuples, enc.rank, r, move, np.array([float(p) for p in board.die]), capture_ok,
        index[board.length], again, board.pass_by_overshoot)
    return Race(board, enc, Expansion(node_ptr, out_prob, out_ptr, reward, nxt, sign), piece)


def _move_table(board, cells):
    """int64[R, faces]: rest-cell index reached from each rest cell with each face, -1 when the
    piece cannot move; and bool[R]: captures allowed on each rest cell (not 0, N or safe)."""
    index = {c: i for i, c in enumerate(cells.tolist())}
    move = np.full((len(cells), board.faces), -1, np.int64)
    for i, c in enumerate(cells.tolist()):
        for d in range(board.faces):
            t = board.move(c, d + 1)
            if t is not None:
                move[i, d] = index[t]
    capture_ok = np.array([c not in board.safe and c not in (0, board.length)
                           for c in cells.tolist()])
    return move, capture_ok
