"""A solved 2048 run, read back: the value and best move of any board (the 2048 ``advice``).

:class:`Solution` opens ``results/<run>/`` (its parameters from ``solution.json``, else from the
attributes of the first afterstate layer) and answers questions about single boards: a state's value
and best move, an afterstate's value, every legal move with its reward and afterstate value. It reads
the verified layers through :class:`run.Run` and computes a state's value with the backward pass's
own kernel (:func:`backward.state_values`), so a query and the solve cannot disagree.

Values are in the run's objective: expected future merge points (score), or the probability of
making the target tile (reach-a-tile).
"""

import shlex
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ...store.layers import read_attrs
from .hints import inferred_command, repair_command
from .stages.backward import state_values, value_stats
from .rules.board import DIRECTIONS, age, canonical, encode, move, start_states
from .rules.boardtext import format_board
from .stages.report import read_solution, summary_rows
from .saved import Run
from .rules.spawn import expected_value

def format_value(value, objective):
    """A value as text, as the CLI and the lab print it: points to 6 decimals, probabilities to 12
    (moves can differ by 1e-10)."""
    return f"{value:.6f}" if objective == "score" else f"{value:.12f}"


CACHE_ENTRIES = 1 << 23
"""Afterstates kept in memory across queries (IDs + values: 16 bytes each, 128 MiB at most)."""


def open_run(results_dir):
    """The :class:`run.Run` of a results directory.

    The parameters (rows, cols, p2, target tile) come from ``solution.json`` when the run is solved
    (verified against its checksum), else from the attributes of its age-4 afterstate layer (a
    forward-only run), else from those of its age-4 policy layer (a directory holding only the
    optimal-play store).

    Raises
    ------
    ValueError
        If the directory holds none of these (not a 2048 run directory).
    CorruptResultError
        If ``solution.json`` is damaged or edited (names it and the command that rebuilds it).
    """
    directory = Path(results_dir)
    first = directory / "afterstates" / "age_000004.zarr"
    if (directory / "solution.json").is_file():
        params = read_solution(directory)
    elif first.is_dir():
        params = read_attrs(first, repair_command)
    elif (directory / "policy" / first.name).is_dir():
        params = read_attrs(directory / "policy" / first.name, repair_command)
    else:
        raise ValueError(f"{directory} is not a 2048 run directory: it has no solution.json, "
                         "afterstates/age_000004.zarr nor policy/age_000004.zarr; give a directory "
                         "written by `strongsolve 2048 solve` or the Snakemake workflow, e.g. "
                         "results/2048_3x3")
    return Run(directory, int(params["rows"]), int(params["cols"]), float(params["p2"]),
               int(params["target_tile"] or 0))


UNREACHABLE_CAVEAT = (  # what a best move from a store without its layers says (CLI and lab)
    "caveat: this run holds only the optimal-play store, which keeps the best move of every "
    "reachable state but not the states themselves, so it cannot tell whether this board is "
    "reachable; for a board optimal play never reaches (or no play reaches), the move shown is an "
    "arbitrary legal one. The solved layers tell; they are built by")


class Solution:
    """Values and best moves of a solved 2048 run.

    Parameters
    ----------
    results_dir : str or Path
        A run directory, e.g. ``results/2048_3x3`` or ``results/2048_3x3_reach512``.

    Attributes
    ----------
    run : run.Run
    rows, cols : int
    p2 : float
        Probability that a spawn is a 2.
    target_tile : int
        0 for the score objective, else the tile to reach.
    objective : str
        ``"score"`` or ``"reach_tile"``.

    Notes
    -----
    Board IDs follow :mod:`board`: cell ``i = row*cols + col`` holds the exponent of its tile in bits
    ``4i..4i+3``. Every method accepts any board ID and canonicalises it; a board that cannot occur
    in the solved layers raises ``ValueError`` naming it: an afterstate absent from the layer of its
    age, or a state that is neither a start position nor a spawn into a solved afterstate (states
    are not stored, so this is how the forward pass made them). Layers are loaded (and verified) on first
    use and kept in an LRU cache of at most :data:`CACHE_ENTRIES` afterstates.
    """

    def __init__(self, results_dir):
        self.run = open_run(results_dir)
        self._cache = OrderedDict()
        self._cached = 0
        self._starts = None
        self._solved = False

    rows = property(lambda self: self.run.rows)
    cols = property(lambda self: self.run.cols)
    p2 = property(lambda self: self.run.p2)
    target_tile = property(lambda self: self.run.target_tile)
    objective = property(lambda self: "reach_tile" if self.run.target_tile else "score")

    def _layer_dirs(self, stage):
        """``{age: path}`` of the ``age_<n>.zarr`` directories of a stage (any number)."""
        out = {}
        for p in (self.run.directory / stage).glob("age_*.zarr"):
            if p.stem[4:].isdigit():
                out[int(p.stem[4:])] = p
        return out

    def ages(self):
        """Ages (sorted list of int) that have an afterstate layer on disk: even ages from 4 to the
        last age (:meth:`stray_layers` lists any other ``age_*.zarr`` directory)."""
        return sorted(n for n in self._layer_dirs("afterstates") if n in self._valid_ages())

    def _valid_ages(self):
        return range(4, self.run.last_age + 1, 2)

    def stray_layers(self):
        """Paths of ``age_*.zarr`` directories (both stages) whose age is not one of this run (odd,
        below 4 or beyond the last age): no stage writes them, and every command ignores them."""
        valid = self._valid_ages()
        return sorted(p for stage in ("afterstates", "values")
                      for n, p in self._layer_dirs(stage).items() if n not in valid)

    @property
    def solved(self):
        """True when every age up to the last has a value layer (a full backward pass)."""
        if not self._solved:  # remembered once true: value layers are never removed by a run
            self._solved = all(self.run.values_path(n).is_dir() for n in self.run.ages())
        return self._solved

    @property
    def has_values(self):
        """True when the backward pass has written anything (a value layer or block manifest, or
        solution.json): a run with values missing is then damaged or unfinished, not forward-only."""
        values = self.run.directory / "values"
        return ((self.run.directory / "solution.json").is_file()
                or any(values.glob("age_*.zarr")) or any(values.glob("block_*.json")))

    def missing_values(self):
        """Ages (sorted list) whose value layer is missing."""
        return [n for n in self.run.ages() if not self.run.values_path(n).is_dir()]

    def layer(self, n):
        """The afterstate layer of age ``n``: sorted canonical IDs (uint64[A]) and their values
        (float64[A]); empty arrays beyond the last age.

        Raises
        ------
        ValueError
            If the run has no values at all (forward-only), or ``n`` is not an even age >= 4.
        CorruptLayerError
            If a layer file is missing or corrupt: the message names it and the command that
            rebuilds it.
        """
        if n < 4 or n % 2:
            raise ValueError(f"age {n} has no layer; ages are even, from 4 to {self.run.last_age}")
        if n in self._cache:
            self._cache.move_to_end(n)
            return self._cache[n]
        if not self.solved and not self.has_values:
            if not self.ages() and (self.run.directory / "policy" / "age_000004.zarr").is_dir():
                d = shlex.quote(str(self.run.directory))
                raise ValueError(f"run {self.run.directory} holds only the optimal-play store "
                                 "(policy/), no values: it gives best moves only, with "
                                 f"`strongsolve 2048 query {d} BOARD --best-only` and "
                                 f"`strongsolve 2048 play {d} --policy`")
            raise ValueError(f"run {self.run.directory} has no values: it is a forward-only run "
                             "(or its backward pass has not started); solve it to the last age with "
                             f"`{inferred_command(self.run.directory, to_last_age=True)}`")
        ids = self.run.load_afterstates(n)[0]
        entry = (ids, self.run.load_values(n, ids))
        self._cache[n] = entry
        self._cached += ids.size
        while self._cached > CACHE_ENTRIES and len(self._cache) > 1:
            _, (old, _) = self._cache.popitem(last=False)
            self._cached -= old.size
        return entry

    # --- single boards ------------------------------------------------------------------------

    def describe(self, board_id):
        """One-line text of a board, for messages (``"2 4 . / . 8 ."``)."""
        return format_board(board_id, self.rows, self.cols)

    def _check(self, board_id):
        """Validate a board ID; return it as int and its age."""
        if isinstance(board_id, bool) or not isinstance(board_id, (int, np.integer)):
            raise ValueError(f"board ID {board_id!r} is not an integer")
        b = int(board_id)
        cells = self.rows * self.cols
        if not 0 <= b < 1 << (4 * cells):
            raise ValueError(f"board ID {b:#x} is impossible on a {self.rows}x{self.cols} board: "
                             f"allowed IDs hold {cells} cells of 4 bits, 0 <= ID < 2^{4 * cells}")
        if b == 0:
            raise ValueError(f"board {self.describe(b)} is empty: every position holds at least two "
                             "tiles (a start has two); give its tiles, e.g. '2 . . / . . 4'")
        n = age(b)
        if not 4 <= n <= self.run.last_age:
            raise ValueError(f"board {self.describe(b)} (tile sum {n}) is not in the solved layers: "
                             f"tile sums run from 4 (the start) to {self.run.last_age}")
        if self.target_tile and max(int(v) for v in self._tiles(b)) >= self.target_tile:
            raise ValueError(f"board {self.describe(b)} holds a tile >= the target {self.target_tile}: "
                             "in a reach-a-tile run the position ends when the target is made, so it "
                             "is not in the solved layers")
        return b, n

    def grid(self, board_id):
        """A board as rows of tile values (list of ``rows`` lists of ``cols`` int; 0 for empty)."""
        tiles = self._tiles(int(board_id))
        return [tiles[r * self.cols:(r + 1) * self.cols] for r in range(self.rows)]

    def _tiles(self, b):
        return [(1 << ((b >> (4 * i)) & 15)) if (b >> (4 * i)) & 15 else 0
                for i in range(self.rows * self.cols)]

    def _afterstate_index(self, b, n):
        """Position of board ``b`` (any orientation, age ``n``) in its layer, or -1."""
        ids, _ = self.layer(n)
        c = np.uint64(canonical(b, self.rows, self.cols))
        i = int(np.searchsorted(ids, c))
        return i if i < ids.size and ids[i] == c else -1

    def afterstate_value(self, board_id):
        """Value of an afterstate (the board after a move, before the spawn).

        Parameters
        ----------
        board_id : int
            Any orientation; canonicalised here.

        Returns
        -------
        float
            Expected future merge points (score objective) or probability of making the target tile.

        Raises
        ------
        ValueError
            If the ID is impossible for the board shape, or the board is not a reachable afterstate
            (not in the solved layer of its age).
        """
        b, n = self._check(board_id)
        i = self._afterstate_index(b, n)
        if i < 0:
            raise ValueError(f"board {self.describe(b)} is not in the solved layers: no move from a "
                             f"reachable position leads to it (afterstate layer of tile sum {n})")
        return float(self.layer(n)[1][i])

    def _check_reachable_state(self, b, n):
        """Raise unless state ``b`` (age ``n``) is a start position or a spawn into a solved
        afterstate: the states the forward pass enumerated (states are not stored)."""
        if self._starts is None:
            ids, probs = start_states(self.rows, self.cols, self.p2)
            self._starts = {int(s) for s, p in zip(ids, probs) if p > 0}
        if canonical(b, self.rows, self.cols) in self._starts:
            return
        spawn_p = {1: self.p2, 2: 1.0 - self.p2}
        for i in range(self.rows * self.cols):
            e = (b >> (4 * i)) & 15
            if e in spawn_p and spawn_p[e] > 0 and n - (1 << e) >= 4:
                if self._afterstate_index(b & ~(15 << (4 * i)), n - (1 << e)) >= 0:
                    return
        raise ValueError(f"board {self.describe(b)} is not in the solved layers: it is not a start "
                         "position, and no spawn into a reachable afterstate makes it")

    def moves(self, board_id):
        """Every legal move of a state with its reward and the value of its afterstate.

        Parameters
        ----------
        board_id : int
            A state (the board after the spawn, the player to move); any orientation.

        Returns
        -------
        list of dict
            In direction order (:data:`board.DIRECTIONS`), one per legal move:
            ``{"move": name, "reward": float, "afterstate_value": float, "total": float}``; ``total``
            is reward + afterstate value. Score objective: reward in merge points. Reach-a-tile:
            reward 1 for a move that makes the target tile (the position then ends, afterstate value
            0), else 0. Empty when no move is legal (the game is over).

        Raises
        ------
        ValueError
            If the ID is impossible, or the state is not in the solved layers: neither a start
            position nor a spawn into a solved afterstate.
        """
        b, n = self._check(board_id)
        self._check_reachable_state(b, n)
        out = []
        for d, name in enumerate(DIRECTIONS):
            after, reward, legal = move(b, d, self.rows, self.cols)
            if not legal:
                continue
            if self.target_tile:
                if max(self._tiles(after)) >= self.target_tile:
                    out.append({"move": name, "reward": 1.0, "afterstate_value": 0.0, "total": 1.0})
                    continue
                reward = 0
            i = self._afterstate_index(after, n)
            if i < 0:
                raise ValueError(f"board {self.describe(b)} is not in the solved layers: its move "
                                 f"{name} leads to {self.describe(after)}, which no reachable "
                                 "position leads to")
            value = float(self.layer(n)[1][i])
            out.append({"move": name, "reward": float(reward), "afterstate_value": value,
                        "total": float(reward) + value})
        return out

    def _value_and_best(self, board_id):
        moves = self.moves(board_id)  # validates the board, its reachability and its successors
        b, n = self._check(board_id)
        ids, values = self.layer(n)
        value, best = state_values(np.array([b], np.uint64), self.run.tables, self.run.target_exp,
                                   ids, values)
        return float(value[0]), (moves[best[0]]["move"] if best[0] >= 0 else None), moves

    def state_value(self, board_id):
        """Value of a state under optimal play: the best, over legal moves, of reward + afterstate
        value; 0 when no move is legal.

        Parameters
        ----------
        board_id : int
            Any orientation.

        Returns
        -------
        float
            Points (score objective) or probability of making the target tile (reach-a-tile).

        Raises
        ------
        ValueError
            As :meth:`moves`.
        """
        return self._value_and_best(board_id)[0]

    @property
    def policy_only(self):
        """True when the run holds the optimal-play store (``policy/``) and no layers: then nothing
        tells a reachable board from another (:data:`UNREACHABLE_CAVEAT`)."""
        return not self.ages() and (self.run.directory / "policy" / "age_000004.zarr").is_dir()

    def unreachable_caveat(self):
        """The caveat every best move read from a store alone carries (:data:`UNREACHABLE_CAVEAT`
        with the command that builds the layers that can tell), or None when the run's layers
        exist (an unreachable board is then refused)."""
        command = inferred_command(self.run.directory, to_last_age=True) or "snakemake --cores all"
        return f"{UNREACHABLE_CAVEAT} `{command}`" if self.policy_only else None

    def best_move(self, board_id, policy=None):
        """Name of the optimal move of a state (the first best in direction order), or None when no
        move is legal.

        Parameters
        ----------
        board_id : int
            A state; any orientation.
        policy : policy.PolicyStore, optional
            Take the move from this optimal-play store instead of the value layers. When
            the run's afterstate layers exist, the state must still be reachable in them (as
            :meth:`moves` checks); without them (a directory holding only the store) nothing can
            tell, and a state outside the reachable set gets an arbitrary legal move, as from any
            retrieval structure.

        Raises
        ------
        ValueError
            As :meth:`moves` (with ``policy``: an impossible ID always; an unreachable state when
            the afterstate layers exist).
        CorruptLayerError
            If a layer read is missing or corrupt (names it and the command that rebuilds it).
        """
        if policy is None:
            return self._value_and_best(board_id)[1]
        b, n = self._check(board_id)
        if self.ages():
            self._check_reachable_state(b, n)
        (position,) = policy.best_positions(np.array([b], np.uint64), n)
        legal = [name for d, name in enumerate(DIRECTIONS) if move(b, d, self.rows, self.cols)[2]]
        return legal[position] if position >= 0 else None

    def query(self, board_id):
        """Everything about one state: ``{"board", "age", "value", "best", "moves"}`` (board as rows of
        tile values; the rest as in :meth:`state_value`, :meth:`best_move`, :meth:`moves`)."""
        value, best, moves = self._value_and_best(board_id)
        b, n = self._check(board_id)
        return {"board": self.grid(b), "age": n, "value": value, "best": best, "moves": moves}

    # --- whole run ----------------------------------------------------------------------------

    def start_states(self):
        """The random start: canonical two-tile boards with their probabilities and values.

        Returns
        -------
        ids : uint64[S]
        probabilities : float64[S]
            Sum to 1.
        values : float64[S]
            The state value of each (points, or probability of making the target tile).
        """
        ids, probs = start_states(self.rows, self.cols, self.p2)
        return ids, probs, np.array([self.state_value(int(s)) for s in ids], np.float64)

    def expected_score(self):
        """Value of the random start: expected score in points, or P(make the target tile)."""
        _, probs, values = self.start_states()
        return expected_value(probs, values)  # at most 1 for a probability (spawn.py)

    def _value_stats(self, n, count):
        """``value_min, value_mean, value_max`` of the value layer of age ``n`` (``count``
        afterstates): from its verified attributes (written by the backward stage, when they belong to
        this run and layer), else from its values."""
        attrs = self.run.layer_attrs("values", n)
        keys = ("value_min", "value_mean", "value_max")
        if all(k in attrs for k in keys) and attrs.get("num_afterstates") == count and all(
                attrs.get(k) == v for k, v in dict(self.run.params(), age=n).items()):
            return {k: attrs[k] for k in keys}
        return value_stats(self.run.load_values(n, self.run.load_afterstates(n)[0]))

    def age_table(self, values=True):
        """One row per age with a forward layer: counts, storage and value statistics.

        Parameters
        ----------
        values : bool
            Give every value layer's min/mean/max (None when False or the run is forward-only): from
            its attributes, or read from its values for a layer written before they held them.

        Returns
        -------
        list of dict
            Keys ``age, states, afterstates, terminal_states, bytes, bits_per_afterstate`` (of
            :func:`report.summary_rows`: canonical counts, bytes of the afterstate layer on disk,
            Elias-Fano bits per ID, 0 for an empty layer), ``value_min, value_mean, value_max``.
        """
        ages = self.ages()
        read_values = values and self.solved
        rows = []
        for row in summary_rows(self.run, max(ages) if ages else 4):
            n, count = row["age"], row["afterstates"]
            row = dict(row, value_min=None, value_mean=None, value_max=None)
            if read_values and count:
                row.update(self._value_stats(n, count))
            rows.append(row)
        return rows


def advise_position(result, position):
    """The advice interface every game shares (``games.<game>.advice.advise_position``): a saved
    result and a position in, every choice with its value out.

    Parameters
    ----------
    result : str or Path
        A solved run directory (``results/2048_<r>x<c>...``).
    position : dict
        ``{"board": rows of tile values}`` (0 for an empty cell): a state, the player to move.

    Returns
    -------
    list of dict
        One per legal move in direction order: ``choice`` (the move), ``value`` (reward +
        afterstate value: points, or the probability of making the target tile) and ``best``
        (True on the optimal move, the first best in direction order).

    Raises
    ------
    ValueError
        A board of the wrong shape or not in the solved layers (as :meth:`Solution.moves`).
    """
    sol = Solution(result)
    board = [list(row) for row in position["board"]]
    if len(board) != sol.rows or any(len(row) != sol.cols for row in board):
        raise ValueError(f"board {board} is not {sol.rows}x{sol.cols}, the run's shape")
    q = sol.query(encode(board))
    return [{"choice": m["move"], "value": m["total"], "best": m["move"] == q["best"]}
            for m in q["moves"]]
