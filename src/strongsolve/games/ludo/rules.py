"""Ludo / aeroplane chess on one shared track: board files, rules, encodings and CSR expansions.

Board (YAML): ``length`` N (start cell 0, goal cell N); ``jumps`` {cell: target} (forward
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
still cannot), and the turn passes only when none can. A piece whose jump brings it back to the
cell it left (c + d -> c by a chute) has moved: that choice is a move, not a pass, under both rules. The two rules differ only under ``stay``
(``bounce`` and ``finish`` always move). A capture happens only where a piece lands after moving:
the final landing cell (after jumps), if not 0, not N and not safe, sends every opponent piece there
back to 0; a piece that stays captures nothing. The first player with every piece at N wins. With ``roll_again_on`` the same player rolls
again after that face (unless they just won). A position is seen by the player to move: (own pieces,
opponent pieces), each a sorted tuple. Negamax: a candidate handing the turn over has reward 1, sign
-1 (``1 - V(opponent to move)``); a bonus roll has reward 0, sign +1; the value is the mover's win
probability under optimal play by both.
"""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...kernels.iteration import Expansion, evaluate_policy

OVERSHOOT = ("stay", "bounce", "finish")
BOARD_KEYS = ("length", "jumps", "chain_jumps", "overshoot", "die", "safe", "roll_again_on",
              "pass_by_overshoot")


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
