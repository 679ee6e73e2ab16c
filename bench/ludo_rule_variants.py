"""Two-piece Ludo race under rule readings, by a value iteration that shares no code with the
solver (the reported 1.0e-5 difference).

A report gave 0.5017593511039 for the first mover of the two-piece race on the classic board under
the old move rule (``pass_by_overshoot: false``), against the solver's 0.5017696263665. This script
solves the race from scratch (its own board reader, move rule, state index and Gauss-Seidel sweeps;
numba only compiles the same Python loop) under each reading listed in ``VARIANTS`` and prints the
first mover's win probability, so that a reading giving the reported number can be found.

    python bench/ludo_rule_variants.py workflow/boards/classic60.yaml            # every reading
    python bench/ludo_rule_variants.py BOARD.yaml --variants base,stack_one --python  # no numba

On the classic board each reading takes 2 to 4 minutes on one core (about 150 sweeps over 1891^2
pairs of cell pairs, jump sources included though no piece rests there).

Readings (flags, all off in ``base``, which is the solver's rule):

``stack_one``     a capture sends back one piece of a two-piece stack, not both
``stack_immune``  a two-piece stack cannot be captured
``own_block``     a piece may not land on a cell holding its own piece
``block_land``    a piece may not land on a cell holding two opponent pieces (a blockade)
``block_pass``    a piece may not pass or land on a two-opponent-piece blockade (cells walked,
                  before any jump)
``goal_pass``     a piece at the goal may be picked, which passes the turn (both sides can then
                  stall, and the sweeps barely converge on the classic board: not measured there)
``stack_kills_mover`` a piece landing on a two-opponent-piece stack goes back to 0 itself; the stack
                  stays
``stack_trade``   a piece landing on a two-opponent-piece stack goes back to 0 with one of them
``capture_safe``  safe cells protect nothing
``no_jump_capture`` a piece that jumps captures nothing (only a plain landing captures)
``choose_first``  the mover picks the piece before rolling (a plain MDP over cell pairs: action =
                  piece, then the die); a picked piece that cannot move passes the turn
``choose_first_fallback`` ... and when the picked piece cannot move, the other one moves if it can
"""

import argparse
import sys
import time
from fractions import Fraction

import numpy as np
import yaml

FLAGS = ("stack_one", "stack_immune", "own_block", "block_land", "block_pass", "goal_pass",
         "capture_safe", "no_jump_capture", "stack_kills_mover", "stack_trade", "choose_first",
         "choose_first_fallback")
VARIANTS = {"base": ()} | {f: (f,) for f in FLAGS} | {
    "choose_first_fallback": ("choose_first", "choose_first_fallback")}


def read_board(path):
    """(N, jumps int64[N+1] (-1 none), chain, overshoot code, die float64[k], safe bool[N+1])."""
    with open(path) as f:
        data = yaml.safe_load(f)
    n = int(data["length"])
    jumps = np.full(n + 1, -1, np.int64)
    for s, t in (data.get("jumps") or {}).items():
        jumps[int(s)] = int(t)
    die = data.get("die", 6)
    probs = np.full(die, 1.0 / die) if isinstance(die, int) else \
        np.array([float(Fraction(str(p))) for p in die])
    safe = np.zeros(n + 1, np.bool_)
    for c in data.get("safe") or []:
        safe[int(c)] = True
    overshoot = {"stay": 0, "bounce": 1, "finish": 2}[data.get("overshoot", "stay")]
    if data.get("roll_again_on") is not None:
        sys.exit("bonus rolls are not modelled here")
    return n, jumps, bool(data.get("chain_jumps", False)), overshoot, probs, safe


def solve(n, jumps, chain, overshoot, die, safe, flags, tol=1e-13):
    """Mover's win probability from the start, two pieces each, old move rule plus ``flags``
    (bool[len(FLAGS)] in the order of FLAGS). Returns (two-piece value, one-piece value, sweeps):
    the one-piece race is the position with one piece of each side at the goal (a reading that
    changes it is ruled out by the one-piece agreement of the report; not so for ``goal_pass``,
    where the piece at home is a choice a one-piece race does not have)."""
    stack_one, stack_immune, own_block, block_land, block_pass, goal_pass, capture_safe, \
        no_jump_capture, stack_kills_mover, stack_trade, choose_first, choose_first_fallback = flags
    cells = n + 1
    # pair (a, b), a <= b -> index; V[own pair, opponent pair], mover to play
    pair = np.full((cells, cells), -1, np.int64)
    first = np.empty(cells * (cells + 1) // 2, np.int64)
    second = np.empty(cells * (cells + 1) // 2, np.int64)
    k = 0
    for a in range(cells):
        for b in range(a, cells):
            pair[a, b] = k
            pair[b, a] = k
            first[k] = a
            second[k] = b
            k += 1
    home = pair[n, n]
    value = np.zeros((k, k))
    faces = die.shape[0]
    piece_value = np.empty((2, faces))  # mover's value of moving piece j with face d; -1: cannot
    sweeps = 0
    while True:
        sweeps += 1
        delta = 0.0
        for x in range(k):
            if x == home:
                continue
            for y in range(k):
                if y == home:
                    continue
                mine = (first[x], second[x])
                theirs0 = first[y]
                theirs1 = second[y]
                piece_value[:] = -1.0
                for d in range(1, faces + 1):
                    for j in range(2):
                        c = mine[j]
                        other = mine[1 - j]
                        if j == 1 and mine[0] == mine[1]:
                            continue  # the same move as the first piece
                        if c == n:
                            if goal_pass:
                                piece_value[j, d - 1] = 1.0 - value[y, x]
                            continue
                        t = c + d
                        if t > n:
                            if overshoot == 0:
                                continue  # cannot move: not a choice under the old rule
                            t = n if overshoot == 2 else 2 * n - t
                        if block_pass and theirs0 == theirs1 and 0 < theirs0 < n \
                                and c < theirs0 <= min(t, n):
                            continue
                        jumped = False
                        while jumps[t] >= 0:
                            t = jumps[t]
                            jumped = True
                            if not chain:
                                break
                        if block_land and theirs0 == theirs1 and theirs0 == t and 0 < t < n:
                            continue
                        if own_block and other == t and 0 < t < n:
                            continue
                        o0 = theirs0
                        o1 = theirs1
                        hit = 0 < t < n and (capture_safe or not safe[t]) and not (
                            no_jump_capture and jumped)
                        if hit:
                            stack = o0 == t and o1 == t
                            if stack and stack_immune:
                                pass
                            elif stack and (stack_kills_mover or stack_trade):
                                t = 0
                                if stack_trade:
                                    o0 = 0
                            elif stack and stack_one:
                                o0 = 0
                            else:
                                if o0 == t:
                                    o0 = 0
                                if o1 == t:
                                    o1 = 0
                        own_after = pair[other, t]
                        opp_after = pair[o0, o1]
                        if own_after == home:
                            v = 1.0
                        else:
                            v = 1.0 - value[opp_after, own_after]
                        piece_value[j, d - 1] = v
                total = 0.0
                passed = 1.0 - value[y, x]
                if not choose_first:
                    for d in range(faces):
                        best = max(piece_value[0, d], piece_value[1, d])
                        if best < 0.0:  # no piece can move: the turn passes
                            best = passed
                        total += die[d] * best
                else:
                    total = -1.0
                    for j in range(2):
                        if mine[j] == n or (j == 1 and mine[0] == mine[1]):
                            continue  # not a piece to pick (at the goal, or the same move)
                        expected = 0.0
                        for d in range(faces):
                            v = piece_value[j, d]
                            if v < 0.0:
                                v = passed
                                if choose_first_fallback and piece_value[1 - j, d] >= 0.0:
                                    v = piece_value[1 - j, d]
                            expected += die[d] * v
                        total = max(total, expected)
                change = abs(total - value[x, y])
                if change > delta:
                    delta = change
                value[x, y] = total
        if delta <= tol:
            # with one piece of each side already home, the race is the one-piece race
            return value[pair[0, 0], pair[0, 0]], value[pair[0, n], pair[0, n]], sweeps


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("board")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--python", action="store_true", help="run the plain Python loop (no numba)")
    p.add_argument("--tol", type=float, default=1e-12)
    args = p.parse_args(argv)
    board = read_board(args.board)
    run = solve
    if not args.python:
        import numba

        run = numba.njit(cache=False)(solve)
    for name in args.variants.split(","):
        on = VARIANTS[name]
        flags = tuple(f in on for f in FLAGS)
        start = time.time()
        v, v1, sweeps = run(*board, flags, args.tol)
        print(f"{name:<24} two pieces {v:.13f}, one piece {v1:.13f}  ({sweeps} sweeps, "
              f"{time.time() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
