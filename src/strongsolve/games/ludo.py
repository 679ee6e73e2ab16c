"""Ludo / aeroplane chess on one shared track: board files, rules, encodings and CSR expansions.

Board (YAML, issue 7): ``length`` N (start cell 0, goal cell N); ``jumps`` {cell: target} (forward
shortcuts and backward traps); ``chain_jumps`` (a jump landing on another jump source is followed
too); ``overshoot``: ``stay`` (a roll past N leaves the piece where it is), ``bounce`` (it walks
back from N by the excess) or ``finish`` (it reaches N; HDU 4405); ``die``: the number of faces of a
fair die, or the probabilities of faces 1..k (numbers or fraction strings such as "2/7"); ``safe``
cells; ``roll_again_on``: a face that grants another roll; ``pass_by_overshoot``: the move rule of
a race (below).

Move of one piece from cell c with face d: ``t = c + d``, overshoot applied when ``t > N``, then the
jump at ``t`` (and, with ``chain_jumps``, the jumps after it). A piece staying put (``stay``) does
not land, so it takes no jump. A piece rests only on the cells this rule can reach from 0.

**One piece** (:func:`expected_rolls`): the expected number of rolls from each cell to N, as the
exact solution of the linear system (a back-to-front recursion is wrong once a trap jumps backward,
and overshoot self-loops need the 1/(1 - p_self) correction the linear system contains). Cells from
which N cannot be reached surely get ``inf``. Every roll counts, a bonus roll too.

**Race** (:func:`race_expansion`): two players with P pieces each on the same track, alternating
turns. After the roll the mover picks one of their pieces (distinct cells only). With
``pass_by_overshoot: true`` (the default; the rule of the design this project follows, a Java MDP
solver for 飞行棋) any piece not at N may be picked, and a piece whose roll overshoots under
``stay`` stays where it is, so picking it passes the turn, even when another piece could move. With
``false`` only a piece that can move may be picked (a piece at N or one that ``stay`` would keep
still cannot), and the turn passes only when none can. The two rules differ only under ``stay``
(``bounce`` and ``finish`` always move). A capture happens only where a piece lands after moving:
the final landing cell (after jumps), if not 0, not N and not safe, sends every opponent piece there
back to 0; a piece that stays captures nothing. The first player with every piece at N wins. With ``roll_again_on`` the same player rolls
again after that face (unless they just won). A position is seen by the player to move: (own pieces,
opponent pieces), each a sorted tuple. Negamax: a candidate handing the turn over has reward 1, sign
-1 (``1 - V(opponent to move)``); a bonus roll has reward 0, sign +1; the value is the mover's win
probability under optimal play by both.
"""

import itertools
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import NamedTuple

import numpy as np

from ..kernels.iteration import (Expansion, alternate_policies, evaluate_policy, outcome_order,
                                 permute_expansion, value_iteration)
from ..kernels.options import njit

OVERSHOOT = ("stay", "bounce", "finish")
BOARD_KEYS = ("length", "jumps", "chain_jumps", "overshoot", "die", "safe", "roll_again_on",
              "pass_by_overshoot")
MAX_RACE_NODES = 10_000_000  # about 16 GB at peak (6 faces, 2 pieces: 1.6 kB per position)


def _int(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    return int(value)


def _prob(value, what):
    try:
        if isinstance(value, bool):
            raise TypeError
        p = Fraction(value) if isinstance(value, str) else Fraction(value).limit_denominator(10**12)
    except (TypeError, ValueError, ZeroDivisionError):
        raise ValueError(f"{what} must be a number or a fraction string like '1/6', got {value!r}")
    if p < 0:
        raise ValueError(f"{what} must be >= 0, got {value!r}")
    return p


@dataclass(frozen=True)
class Board:
    """A validated board (see the module docstring). Build it with :meth:`from_mapping`.

    Attributes
    ----------
    length : int
        N >= 1: cells 0..N.
    jumps : dict[int, int]
        Source (1..N-1) -> target (0..N, not the source).
    chain_jumps : bool
    overshoot : str
        "stay", "bounce" or "finish".
    die : tuple[Fraction, ...]
        Probabilities of faces 1..k, summing to 1.
    safe : frozenset[int]
    roll_again_on : int or None
    pass_by_overshoot : bool
        The race's move rule (module docstring); default True.
    """

    length: int
    jumps: dict
    chain_jumps: bool
    overshoot: str
    die: tuple
    safe: frozenset
    roll_again_on: object
    pass_by_overshoot: bool = True

    @classmethod
    def from_mapping(cls, data):
        """Validate a board mapping (as read from YAML).

        Raises
        ------
        ValueError
            Naming the bad value: an unknown key, ``length`` < 1, a jump source outside 1..N-1 or a
            target outside 0..N, a jump onto itself, a jump cycle with ``chain_jumps``, an unknown
            ``overshoot``, die probabilities that are negative or do not sum to 1, a face too large
            for ``bounce`` (> N + 1), a safe cell outside 0..N, ``roll_again_on`` not a face,
            ``pass_by_overshoot`` not true or false.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a board must be a mapping with keys {', '.join(BOARD_KEYS)}, "
                             f"got {type(data).__name__}")
        unknown = sorted(set(map(str, data)) - set(BOARD_KEYS))
        if unknown:
            raise ValueError(f"unknown board key {unknown[0]!r}; allowed: {', '.join(BOARD_KEYS)}")
        if "length" not in data:
            raise ValueError("the board needs 'length' (the goal cell N)")
        n = _int(data["length"], "length")
        if n < 1:
            raise ValueError(f"length must be >= 1, got {n}")
        jumps = {}
        for src, dst in (data.get("jumps") or {}).items():
            s = _int(int(src) if isinstance(src, str) and src.strip().isdigit() else src,
                     f"jump source {src!r}")
            d = _int(dst, f"jump target of {src!r}")
            if not 1 <= s <= n - 1:
                raise ValueError(f"jump source {s} is outside the board: sources must be in "
                                 f"1..{n - 1} (length {n})")
            if not 0 <= d <= n:
                raise ValueError(f"jump {s}->{d} leaves the board: targets must be in 0..{n}")
            if d == s:
                raise ValueError(f"jump {s}->{d} jumps onto itself")
            jumps[s] = d
        chain = data.get("chain_jumps", False)
        if not isinstance(chain, bool):
            raise ValueError(f"chain_jumps must be true or false, got {chain!r}")
        if chain:
            for s in jumps:
                seen = [s]
                t = jumps[s]
                while t in jumps:
                    if t in seen:
                        cycle = "->".join(map(str, seen[seen.index(t):] + [t]))
                        raise ValueError(f"jump cycle {cycle} with chain_jumps: a piece would fly "
                                         "forever")
                    seen.append(t)
                    t = jumps[t]
        overshoot = data.get("overshoot", "stay")
        if overshoot not in OVERSHOOT:
            raise ValueError(f"overshoot must be one of {', '.join(OVERSHOOT)}, got {overshoot!r}")
        die = data.get("die", 6)
        if isinstance(die, list):
            if not die:
                raise ValueError("die must list at least one face probability")
            probs = tuple(_prob(p, f"probability of face {i + 1}") for i, p in enumerate(die))
            total = sum(probs)
            if abs(total - 1) > Fraction(1, 10**9):
                raise ValueError(f"die probabilities sum to {float(total):.12g}, not 1: "
                                 f"{list(die)}")
            probs = tuple(p / total for p in probs)
        else:
            k = _int(die, "die (a face count or a list of probabilities)")
            if k < 1:
                raise ValueError(f"die must have at least 1 face, got {k}")
            probs = (Fraction(1, k),) * k
        top = max(i + 1 for i, p in enumerate(probs) if p > 0)
        if overshoot == "bounce" and top > n + 1:
            raise ValueError(f"overshoot bounce needs faces <= length + 1 = {n + 1} (a piece "
                             f"would bounce below 0), but face {top} has probability > 0")
        safe = frozenset(_int(c, "safe cell") for c in (data.get("safe") or []))
        for c in safe:
            if not 0 <= c <= n:
                raise ValueError(f"safe cell {c} is outside the board 0..{n}")
        again = data.get("roll_again_on")
        if again is not None:
            again = _int(again, "roll_again_on")
            if not 1 <= again <= len(probs) or probs[again - 1] == 0:
                raise ValueError(f"roll_again_on must be a face 1..{len(probs)} with probability "
                                 f"> 0, got {again}")
            if probs[again - 1] == 1:
                raise ValueError(f"roll_again_on {again} is the only face: the turn never ends")
        pass_by_overshoot = data.get("pass_by_overshoot", True)
        if not isinstance(pass_by_overshoot, bool):
            raise ValueError(f"pass_by_overshoot must be true (any piece not at the goal may be "
                             f"picked; an overshooting one stays and the turn passes) or false (only "
                             f"a piece that can move may be picked), got {pass_by_overshoot!r}")
        return cls(n, jumps, chain, overshoot, probs, safe, again, pass_by_overshoot)

    @property
    def faces(self):
        return len(self.die)

    def to_mapping(self):
        """The board as a JSON-able mapping that :meth:`from_mapping` reads back (die as fraction
        strings)."""
        return {"length": self.length, "jumps": {str(k): v for k, v in sorted(self.jumps.items())},
                "chain_jumps": self.chain_jumps, "overshoot": self.overshoot,
                "die": [str(p) for p in self.die], "safe": sorted(self.safe),
                "roll_again_on": self.roll_again_on, "pass_by_overshoot": self.pass_by_overshoot}

    def move(self, cell, face):
        """Cell reached from ``cell`` with ``face`` (overshoot and jumps applied); ``None`` when the
        piece cannot move (``stay`` past N, or already at N)."""
        n = self.length
        if cell == n:
            return None
        t = cell + face
        if t > n:
            if self.overshoot == "stay":
                return None
            t = n if self.overshoot == "finish" else 2 * n - t
        if t in self.jumps:
            t = self.jumps[t]
            while self.chain_jumps and t in self.jumps:
                t = self.jumps[t]
        return t

    def rest_cells(self):
        """Sorted cells a piece can rest on: reachable from 0 by moves (0 and N included)."""
        seen = {0, self.length}
        todo = [0]
        while todo:
            c = todo.pop()
            for d, p in enumerate(self.die, 1):
                t = self.move(c, d)
                if p > 0 and t is not None and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return sorted(seen)


def cells_without_goal(board):
    """Rest cells (:meth:`Board.rest_cells`) from which no sequence of rolls brings a piece to N.

    Graph reachability backwards from N over the moves of the faces with probability > 0. Empty
    exactly when a piece reaches N surely from every rest cell; otherwise a piece that gets to one
    of these cells (it can: they are reachable from 0) never finishes, and a race may never end.

    Returns
    -------
    list of int
        Sorted cells.
    """
    rest = board.rest_cells()
    into = {c: [] for c in rest}  # cell -> the rest cells one roll moves to it
    for c in rest:
        for d, p in enumerate(board.die, 1):
            t = board.move(c, d)
            if p > 0 and t is not None:
                into[t].append(c)
    reach = {board.length}
    todo = [board.length]
    while todo:
        for c in into[todo.pop()]:
            if c not in reach:
                reach.add(c)
                todo.append(c)
    return [c for c in rest if c not in reach]


def unreachable_goal_text(board, cells, source=None):
    """"<source>: the goal (cell N) cannot be reached from cells [...], where a piece can rest (the
    jumps s->t lead into them)": ``cells`` from :func:`cells_without_goal`, ``source`` the board
    file (None: not named)."""
    traps = [f"{s}->{t}" for s, t in sorted(board.jumps.items()) if t in cells]
    return ((f"{source}: " if source else "")
            + f"the goal (cell {board.length}) cannot be reached from cells {cells}, where a piece "
            + "can rest" + (f" (the jumps {', '.join(traps)} lead into them)" if traps else ""))


def unreachable_goal_message(board, cells, source=None):
    """Why a race on ``board`` is refused (see :func:`unreachable_goal_text`), and what to do."""
    rolls = f"`strongsolve ludo rolls {source}`" if source else "`strongsolve ludo rolls BOARD`"
    return (f"{unreachable_goal_text(board, cells, source)}: a race there could never end, so it "
            f"has no win probability. Change the board's jumps, die or overshoot so that every "
            f"cell can reach {board.length}; {rolls} gives the expected rolls from each cell (inf "
            "from these)")


def load_board(path):
    """Read and validate a YAML board file (:class:`Board`); errors name the file and the value."""
    import yaml

    with open(path) as f:
        try:
            data = yaml.safe_load(f)
        except yaml.YAMLError as err:
            raise ValueError(f"{path}: not valid YAML: {err}") from None
    try:
        return Board.from_mapping(data)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def rolls_expansion(board):
    """Single-piece expansion: node = cell 0..N, outcomes = faces with probability > 0, one
    candidate each (reward 1 roll, sign +1; the piece stays when it cannot move). Cell N has no
    outcome."""
    n = board.length
    node_ptr = [0]
    prob, nxt = [], []
    for c in range(n + 1):
        if c < n:
            for d, p in enumerate(board.die, 1):
                if p > 0:
                    t = board.move(c, d)
                    prob.append(float(p))
                    nxt.append(c if t is None else t)
        node_ptr.append(len(prob))
    k = len(prob)
    return Expansion(np.array(node_ptr, np.int64), np.array(prob), np.arange(k + 1, dtype=np.int64),
                     np.ones(k), np.array(nxt, np.int64), np.ones(k))


def expected_rolls(board):
    """Exact expected number of rolls to bring one piece from each cell to N.

    Returns
    -------
    float64[N+1]
        Rolls from each cell (``inf`` where N cannot be reached with probability 1; 0 at N).
    """
    exp = rolls_expansion(board)
    return evaluate_policy(exp, np.zeros(exp.out_prob.size, np.int64))


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
    the most positions allowed (None: no limit; the value-only solver of :mod:`.ludo_values`
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


class RaceSolution(NamedTuple):
    """Optimal play of a race.

    Attributes
    ----------
    race : Race
    value : float64[M*M]
        Win probability of the player to move (0 at ended games).
    policy : int64[O]
        Best candidate per outcome (see :func:`race_expansion` for the order).
    win_probability : float
        Of the first player to move from the start (every piece at 0).
    sweeps : int
    residual : float
    """

    race: Race
    value: np.ndarray
    policy: np.ndarray
    win_probability: float
    sweeps: int
    residual: float


def sweep_order(race):
    """Nodes by decreasing total progress (sum of every piece's cell), for Gauss-Seidel sweeps:
    a move adds progress unless it hits a trap or captures, so a sweep in this order is close to
    backward induction (int64[X])."""
    enc = race.encoding
    own = enc.cells[enc.tuples].sum(axis=1)
    m = enc.n_tuples
    progress = (own[:, None] + own[None, :]).reshape(m * m)
    return np.argsort(-progress, kind="stable")


def solve_race(board, pieces, tol=1e-12, max_iter=100_000, progress=None):
    """Win probability under optimal play by both (negamax Gauss-Seidel value iteration, nodes swept
    in :func:`sweep_order`); ``progress(sweep, delta)`` is called after each sweep when given.

    Raises
    ------
    ValueError
        Bad ``pieces``, a position count above ``MAX_RACE_NODES``, or a goal that some rest cell
        cannot reach (:func:`cells_without_goal`; checked first, since value iteration would never
        settle); ``RuntimeError`` if ``max_iter`` sweeps do not reach ``tol``.
    """
    stuck = cells_without_goal(board)
    if stuck:
        raise ValueError(unreachable_goal_message(board, stuck))
    race = race_expansion(board, pieces)
    order = sweep_order(race)
    sol = value_iteration(permute_expansion(race.expansion, order), maximize=True, tol=tol,
                          max_iter=max_iter, progress=progress)
    value = np.empty_like(sol.value)
    value[order] = sol.value
    policy = np.empty_like(sol.policy)
    policy[outcome_order(race.expansion, order)] = sol.policy
    start = race.encoding.node((0,) * pieces, (0,) * pieces)
    return RaceSolution(race, value, policy, float(value[start]), sol.sweeps, sol.residual)


def simple_policy(race, kind):
    """Candidate positions of a simple policy: ``leading`` moves the most advanced movable piece,
    ``trailing`` the least advanced; either passes only when no piece can move (int64[O])."""
    if kind not in ("leading", "trailing"):
        raise ValueError(f"simple policy must be 'leading' or 'trailing', got {kind!r}")
    sizes = np.diff(race.expansion.out_ptr)
    # the pass, when offered, is the last candidate; the moves come before it
    moves = sizes - (race.piece[race.expansion.out_ptr[1:] - 1] < 0)
    if kind == "leading":
        return np.maximum(moves - 1, 0)
    return np.zeros_like(sizes)


def match_win_probability(race, policy_a, policy_b, tol=1e-13):
    """Win probabilities of A (policy_a) against B (policy_b) from the start.

    Returns
    -------
    (float, float)
        P(A wins) when A moves first, and when B moves first.
    """
    n = race.expansion.n_nodes
    order = sweep_order(race)
    order = np.stack([order, order + n], axis=1).ravel()  # both players' copies of a position
    exp = permute_expansion(alternate_policies(race.expansion, policy_a, policy_b), order)
    new = evaluate_policy(exp, np.zeros(exp.out_prob.size, np.int64), method="gauss-seidel",
                          tol=tol)
    value = np.empty_like(new)
    value[order] = new
    p = race.encoding.tuples.shape[1]
    start = race.encoding.node((0,) * p, (0,) * p)
    return float(value[start]), float(1.0 - value[start + n])


def best_moves(solution, own, opponent):
    """The optimal piece for every roll in a position.

    Returns
    -------
    list of dict
        Per face with probability > 0: ``face``, ``move_from`` (cell of the piece to move, None for
        a pass) and ``win_probability`` after the choice (of the player to move).
    """
    race = solution.race
    exp = race.expansion
    x = race.encoding.node(own, opponent)
    out = []
    faces = [d for d, p in enumerate(race.board.die, 1) if p > 0]
    for o, face in zip(range(exp.node_ptr[x], exp.node_ptr[x + 1]), faces):
        a = exp.out_ptr[o] + solution.policy[o]
        q = exp.cand_reward[a] + exp.cand_sign[a] * solution.value[exp.cand_next[a]]
        cell = race.piece[a]
        out.append({"face": face, "move_from": None if cell < 0 else int(race.encoding.cells[cell]),
                    "win_probability": float(q)})
    return out


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


def advise(board, encoding, value, own, opponent, face):
    """Every legal choice of the player to move after rolling ``face``, valued from a solved race.

    Parameters
    ----------
    board : Board
    encoding : RaceEncoding
        Of the solved race (:func:`race_encoding` of the same board and piece count).
    value : float64[M*M]
        Win probability of the player to move at every node (:attr:`RaceSolution.value`).
    own, opponent : tuple of int
        Cells of the mover's and the opponent's pieces (any order).
    face : int
        The roll, 1..faces, with probability > 0.

    Returns
    -------
    list of dict
        Per choice, the moves in increasing cell order then the pass: ``move_from`` (cell of the
        piece moved, None for the pass), ``own_after``, ``opponent_after`` (cells), ``bonus_roll``
        and ``win_probability`` (of the mover, under optimal play afterwards); ``best`` is True on
        the first choice of highest win probability (the one the solver plays).

    Raises
    ------
    ValueError
        A cell a piece cannot rest on, a wrong piece count, a face not on the die, or a game
        already over.
    """
    x = encoding.node(own, opponent)
    if not 1 <= face <= board.faces or board.die[face - 1] == 0:
        raise ValueError(f"roll {face} is not a face of the die (faces 1..{board.faces} with "
                         f"probability > 0)")
    cells = encoding.cells
    goal = len(cells) - 1
    m = encoding.n_tuples
    mine, theirs = encoding.tuples[x // m], encoding.tuples[x % m]
    if (mine == goal).all() or (theirs == goal).all():
        raise ValueError(f"the game {tuple(own)}/{tuple(opponent)} is over: "
                         f"{'the mover' if (mine == goal).all() else 'the opponent'} has every "
                         "piece at the goal")
    move, capture_ok = _move_table(board, cells)
    p = mine.shape[0]
    own_out, opp_out = np.empty((p + 1, p), np.int64), np.empty((p + 1, p), np.int64)
    moved = np.empty(p + 1, np.int64)
    n = _after_roll(mine, theirs, face - 1, move, capture_ok, goal, board.pass_by_overshoot,
                    own_out, opp_out, moved)
    bonus = board.roll_again_on == face
    out = []
    for c in range(n):
        a, b = tuple(cells[own_out[c]].tolist()), tuple(cells[opp_out[c]].tolist())
        won = (own_out[c] == goal).all()
        if won:
            q = 1.0
        elif bonus:
            q = float(value[encoding.node(a, b)])
        else:
            q = 1.0 - float(value[encoding.node(b, a)])
        out.append({"move_from": None if moved[c] < 0 else int(cells[moved[c]]), "own_after": a,
                    "opponent_after": b, "bonus_roll": bool(bonus and not won),
                    "win_probability": q, "best": False})
    best = max(range(n), key=lambda i: out[i]["win_probability"])
    out[best]["best"] = True
    return out
