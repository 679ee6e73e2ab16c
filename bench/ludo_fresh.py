"""A fresh, independent race solver written only from the written rules and the board file.

Shares no code with strongsolve (its own board reader, move rule, state index and sweep), to check
the first mover's win probability of the two-sided race under the old move rule
(``pass_by_overshoot: false``).

Choices made where the rule text is silent (each marked C1..C9 in the code):

C1  a piece at cell 0 leaves the start with any roll (no six needed); cell 0 is not a jump source.
C2  two pieces of one side may share a cell (no blocking, no stacking effect); the pieces of a side
    are interchangeable, so a side's state is the sorted tuple of its cells.
C3  a piece is moved by exactly the roll; landing exactly on the goal (cell L) finishes it; a roll
    past the goal cannot be used for that piece (overshoot: stay); a piece at the goal never moves.
C4  jumps apply to the cell where the roll ends, repeatedly while chain_jumps is true (no jump
    source is a jump target on the classic board, so the chain never matters there); a jump target
    past the goal is not handled (none exists).
C5  a capture looks only at the final cell of the move (after all jumps), never at a jump source or
    a cell walked past; it sends back ALL opponent pieces on that cell (one or two), never the
    mover's own pieces; no capture on safe cells, at cell 0 or at the goal.
C6  the mover wins the moment all its pieces are at the goal (checked right after its move); the
    opponent cannot have all pieces home when it is the mover's turn.
C7  no bonus roll (roll_again_on: null): after each move or pass the turn goes to the other player.
C8  under the old rule a pass happens only when no piece can use the roll; with one piece at the
    goal the mover must move the other if it can.
C9  optimal play: the mover picks the move maximising its own win probability; value of a
    position = win probability of the player to move, V = mean over rolls of max over moves of
    (1 if the move wins else 1 - V(next position seen by the opponent)).

Alternatives to those choices (``--variants``, comma separated): ``first_home`` (C6: the first
piece home wins), ``goal_pass`` (C3/C8: a piece at the goal may be picked, a no-op that passes),
``voluntary_pass`` (C8: the mover may always pass), ``six_to_leave`` (C1: a piece leaves cell 0 only
with the die's top face), ``ordered`` (C2: pieces told apart, every tuple of cells; same rule, a
separate code path), ``new_rule`` (``pass_by_overshoot: true``: a piece not at the goal whose roll
overshoots may be picked, which passes). Numerical checks: ``--start`` (initial value of every
position), ``--jacobi`` (Jacobi instead of Gauss-Seidel sweeps), ``--float32``.

Usage::

    nice python bench/ludo_fresh.py workflow/boards/classic60.yaml --pieces 1 2 --tol 1e-14
    nice python bench/ludo_fresh.py workflow/boards/classic60.yaml --pieces 2 --start 0 --jacobi --tol 1e-13

The board file's ``pass_by_overshoot`` is ignored: the old rule is solved unless ``new_rule`` is asked.
``die`` must be a face count (uniform die); ``roll_again_on`` must be null.
"""
from __future__ import annotations

import argparse
import itertools
import time

import numba
import numpy as np
import yaml


def read_board(path: str) -> dict:
    with open(path) as fh:
        board = yaml.safe_load(fh)
    return board


def landing_cells(board: dict, variants=frozenset()) -> np.ndarray:
    """land[p, r-1] = final cell of a piece at p rolling r, or -1 if the roll cannot be used (C3, C4)."""
    length = int(board["length"])
    die = int(board.get("die", 6))
    jumps = {int(k): int(v) for k, v in (board.get("jumps") or {}).items()}
    chain = bool(board.get("chain_jumps", False))
    if board.get("overshoot", "stay") != "stay" or not isinstance(board.get("die", 6), int) \
            or board.get("roll_again_on") is not None:
        raise ValueError("bench/ludo_fresh.py solves only overshoot: stay, an integer die and "
                         "roll_again_on: null")
    land = np.full((length + 1, die), -1, dtype=np.int64)
    for p in range(length):  # a piece at the goal never moves (C3)
        for r in range(1, die + 1):
            q = p + r
            if p == 0 and r != die and "six_to_leave" in variants:  # alternative to C1
                continue
            if q > length:
                continue
            if q < length and q in jumps:
                q = jumps[q]
                seen = {q}
                while chain and q in jumps:
                    q = jumps[q]
                    assert q not in seen, "jump cycle"
                    seen.add(q)
            land[p, r - 1] = q
    return land


def side_states(length: int, pieces: int, ordered: bool) -> list[tuple[int, ...]]:
    if ordered:  # pieces told apart: every tuple of cells (same values, a separate code path)
        return list(itertools.product(range(length + 1), repeat=pieces))
    return list(itertools.combinations_with_replacement(range(length + 1), pieces))  # C2


def tables(board: dict, pieces: int, variants=frozenset()):
    length = int(board["length"])
    die = int(board.get("die", 6))
    safe = set(int(s) for s in (board.get("safe") or []))
    land = landing_cells(board, variants)
    ordered = "ordered" in variants
    canon = tuple if ordered else (lambda t: tuple(sorted(t)))
    states = side_states(length, pieces, ordered)
    index = {s: i for i, s in enumerate(states)}
    n = len(states)
    # move_cell[s, r, j]: landing cell of piece slot j of side state s with roll r+1, -1 if unusable
    # move_next[s, r, j]: the side state after that move
    move_cell = np.full((n, die, pieces), -1, dtype=np.int64)
    move_next = np.full((n, die, pieces), -1, dtype=np.int64)
    for i, s in enumerate(states):
        for r in range(die):
            for j in range(pieces):
                q = land[s[j], r]
                if q < 0:
                    continue
                t = list(s)
                t[j] = q
                move_cell[i, r, j] = q
                move_next[i, r, j] = index[canon(t)]
    # capture[o, c]: opponent state o after a mover's piece ends its move on cell c (C5)
    capture = np.tile(np.arange(n, dtype=np.int64)[:, None], (1, length + 1))
    for i, s in enumerate(states):
        for c in range(1, length):
            if c in safe:
                continue
            if c in s:
                capture[i, c] = index[canon([0 if x == c else x for x in s])]
    won = np.array([all(x == length for x in st) for st in states])
    pass_ok = np.zeros((n, die), dtype=np.bool_)
    if "first_home" in variants:  # alternative to C6: the first piece home wins
        won = np.array([any(x == length for x in st) for st in states])
    if "goal_pass" in variants:  # alternative to C3/C8: a piece at the goal may be picked, a no-op
        pass_ok[:] = np.array([any(x == length for x in st) for st in states])[:, None]
    if "voluntary_pass" in variants:  # alternative to C8: the mover may always decline to move
        pass_ok[:] = True
    if "new_rule" in variants:  # pass_by_overshoot true: a piece not home whose roll overshoots
        for i, st in enumerate(states):
            for r in range(die):
                pass_ok[i, r] = any(x < length and land[x, r] < 0 for x in st)
    return states, move_cell, move_next, capture, won, pass_ok


@numba.njit(cache=True)
def bellman(value, a, o, move_cell, move_next, capture, won, pass_ok):
    """Bellman backup of position (a to move, o waiting): C6, C8, C9."""
    die = move_cell.shape[1]
    pieces = move_cell.shape[2]
    total = 0.0
    for r in range(die):
        best = -1.0
        for j in range(pieces):
            c = move_cell[a, r, j]
            if c < 0:
                continue
            a2 = move_next[a, r, j]
            if won[a2]:
                v = 1.0
            else:
                v = 1.0 - value[capture[o, c], a2]
            if v > best:
                best = v
        if best < 0.0 or pass_ok[a, r]:  # forced pass (C8), or a pass the variant allows
            v = 1.0 - value[o, a]
            if v > best:
                best = v
        total += best
    return total / die


@numba.njit(cache=True)
def sweep(value, move_cell, move_next, capture, won, pass_ok, order):
    """One in-place Gauss-Seidel sweep; returns the largest change."""
    delta = 0.0
    for a in order:
        if won[a]:
            continue
        for o in order:
            if won[o]:
                continue
            new = bellman(value, a, o, move_cell, move_next, capture, won, pass_ok)
            d = abs(new - value[a, o])
            if d > delta:
                delta = d
            value[a, o] = new
    return delta


@numba.njit(cache=True)
def jacobi_sweep(value, new, move_cell, move_next, capture, won, pass_ok):
    """One Jacobi sweep: new = Bellman(value) for every position; returns the largest change."""
    n = value.shape[0]
    delta = 0.0
    for a in range(n):
        if won[a]:
            continue
        for o in range(n):
            if won[o]:
                continue
            v = bellman(value, a, o, move_cell, move_next, capture, won, pass_ok)
            d = abs(v - value[a, o])
            if d > delta:
                delta = d
            new[a, o] = v
    return delta


@numba.njit(cache=True)
def residual(value, move_cell, move_next, capture, won, pass_ok):
    """Largest |Bellman(V) - V| (a Jacobi evaluation, value unchanged)."""
    n = value.shape[0]
    worst = 0.0
    for a in range(n):
        if won[a]:
            continue
        for o in range(n):
            if won[o]:
                continue
            d = abs(bellman(value, a, o, move_cell, move_next, capture, won, pass_ok) - value[a, o])
            if d > worst:
                worst = d
    return worst


def solve(board: dict, pieces: int, tol: float, max_sweeps: int, start: float = 0.5,
          variants=frozenset(), dtype=np.float64, verbose=False,
          jacobi=False):
    states, move_cell, move_next, capture, won, pass_ok = tables(board, pieces, variants)
    n = len(states)
    value = np.full((n, n), start, dtype=dtype)
    # sweep the most advanced side states first: their values feed the less advanced ones
    order = np.array(sorted(range(n), key=lambda i: -sum(states[i])), dtype=np.int64)
    t0 = time.time()
    spare = value.copy()
    for k in range(1, max_sweeps + 1):
        if jacobi:
            delta = jacobi_sweep(value, spare, move_cell, move_next, capture, won, pass_ok)
            value, spare = spare, value
        else:
            delta = sweep(value, move_cell, move_next, capture, won, pass_ok, order)
        if delta < tol:
            break
        if verbose and k % 50 == 0:
            print(f"  sweep {k} delta {delta:.2e} start value {value[0, 0]:.13f}", flush=True)
    res = residual(value, move_cell, move_next, capture, won, pass_ok)
    start_state = 0  # all pieces at cell 0
    return value[start_state, start_state], k, delta, res, time.time() - t0, value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("board")
    ap.add_argument("--pieces", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--tol", type=float, default=1e-15)
    ap.add_argument("--max-sweeps", type=int, default=100000)
    ap.add_argument("--start", type=float, default=0.5, help="initial value of every position")
    ap.add_argument("--variants", default="", help="comma list: first_home, goal_pass, "
                    "voluntary_pass, new_rule, six_to_leave, ordered")
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--jacobi", action="store_true", help="Jacobi sweeps instead of Gauss-Seidel")
    ap.add_argument("--verbose", action="store_true", help="print progress every 50 sweeps")
    args = ap.parse_args()
    board = read_board(args.board)
    for k in args.pieces:
        variants = frozenset(v for v in args.variants.split(",") if v)
        v, sweeps, delta, res, secs, _ = solve(board, k, args.tol, args.max_sweeps, args.start,
                                               variants, np.float32 if args.float32 else np.float64,
                                               args.verbose, args.jacobi)
        print(f"variants={sorted(variants)} start={args.start} jacobi={args.jacobi} pieces={k} first mover {v:.13f} sweeps={sweeps} last_delta={delta:.1e} "
              f"residual={res:.1e} {secs:.1f}s", flush=True)


if __name__ == "__main__":
    main()
