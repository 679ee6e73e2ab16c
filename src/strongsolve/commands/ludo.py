"""``strongsolve ludo``: exact expected rolls of one piece, optimal two-player races (issue 7)."""

import json
import math
import sys
from pathlib import Path

from . import emit


def register(subparsers):
    p = subparsers.add_parser("ludo", help="solve Ludo / aeroplane chess boards",
                              description="Solve a Ludo / aeroplane chess board given as YAML "
                                          "(length, jumps, chain_jumps, overshoot, die, safe, "
                                          "roll_again_on, pass_by_overshoot).")
    sub = p.add_subparsers(dest="ludo_command", required=True, metavar="{rolls,race,advise}")

    rolls = sub.add_parser("rolls", help="expected rolls of one piece from every cell")
    rolls.add_argument("board", help="board YAML file")
    _die_options(rolls)
    rolls.add_argument("--json", action="store_true", help="print JSON")
    rolls.add_argument("--output", "-o", help="write the JSON to this file (atomically) as well")
    rolls.set_defaults(handler=run_rolls)

    race = sub.add_parser("race", help="two players, optimal play: win probability of the mover")
    race.add_argument("board", help="board YAML file")
    _die_options(race)
    race.add_argument("--pieces", type=int, default=2, help="pieces per player (default 2)")
    race.add_argument("--pass-by-overshoot", choices=["true", "false"],
                      help="override the board's move rule: true (the board default) lets the "
                           "mover pick any piece not at the goal, and an overshooting piece stays, "
                           "which passes the turn; false lets them pick only a piece that can move, "
                           "and the turn passes only when none can")
    race.add_argument("--tol", type=float, default=1e-12,
                      help="value iteration stops when no win probability changes by more")
    race.add_argument("--against", nargs="*", default=["leading", "trailing"],
                      choices=["leading", "trailing"],
                      help="simple policies to match the optimal one against (default both)")
    race.add_argument("--position", action="append", default=[], metavar="OWN/OPP",
                      help="print the optimal piece per roll, e.g. 3,10/0,22 (own cells/opponent "
                           "cells, player to move first); repeatable")
    race.add_argument("--policy-out", metavar="FILE.npz",
                      help="save the value and the optimal piece per position and roll")
    race.add_argument("--json", action="store_true", help="print JSON")
    race.add_argument("--output", "-o", help="write the JSON to this file (atomically) as well")
    race.set_defaults(handler=run_race)

    advise = sub.add_parser("advise", help="every choice after a roll, valued from a saved race",
                            description="Read a race solution saved by `ludo race --policy-out` "
                                        "(no re-solve) and print each legal choice after the roll "
                                        "with the mover's win probability, the best marked.")
    advise.add_argument("result", help="the .npz written by `ludo race --policy-out`")
    advise.add_argument("--position", required=True, metavar="OWN/OPP",
                        help="own cells/opponent cells, player to move first, e.g. 3,10/0,22")
    advise.add_argument("--roll", type=int, required=True, help="the face rolled")
    advise.add_argument("--json", action="store_true", help="print JSON")
    advise.add_argument("--output", "-o", help="write the JSON to this file (atomically) as well")
    advise.set_defaults(handler=run_advise)


def _die_options(p):
    p.add_argument("--die", metavar="P1,P2,...",
                   help="override the board's die: face probabilities (fractions allowed, e.g. "
                        "2/7,1/7,1/7,1/7,1/7,1/7) or a face count")


def _board(args):
    import yaml

    from ..games.ludo import Board

    with open(args.board) as f:
        try:
            data = yaml.safe_load(f)
        except yaml.YAMLError as err:
            raise ValueError(f"{args.board}: not valid YAML: {err}") from None
    if args.die:
        parts = args.die.split(",")
        data = dict(data or {}, die=int(parts[0]) if len(parts) == 1 and parts[0].isdigit()
                    else parts)
    if getattr(args, "pass_by_overshoot", None) is not None:
        data = dict(data or {}, pass_by_overshoot=args.pass_by_overshoot == "true")
    try:
        return Board.from_mapping(data)
    except ValueError as err:
        raise ValueError(f"{args.board}: {err}") from None


def _finite(x):
    # JSON has no infinity: unreachable goals are reported as the string "inf"
    return x if math.isfinite(x) else "inf"


def _board_json(board):
    return {"length": board.length, "jumps": {str(k): v for k, v in sorted(board.jumps.items())},
            "chain_jumps": board.chain_jumps, "overshoot": board.overshoot,
            "die": [str(p) for p in board.die], "safe": sorted(board.safe),
            "roll_again_on": board.roll_again_on, "pass_by_overshoot": board.pass_by_overshoot}


def run_rolls(args):
    from ..games.ludo import cells_without_goal, expected_rolls, unreachable_goal_text

    board = _board(args)
    per_cell = expected_rolls(board)
    stuck = cells_without_goal(board)
    out = {"game": "ludo", "board_file": args.board, "board": _board_json(board),
           "expected_rolls": _finite(float(per_cell[0])),
           "per_cell": [_finite(float(v)) for v in per_cell],
           "unreachable_cells": [c for c, v in enumerate(per_cell) if not math.isfinite(v)],
           "goal_unreachable_from": stuck}
    text = f"expected rolls from cell 0: {per_cell[0]:.10g}"
    if stuck:
        text += (f"\n{unreachable_goal_text(board, stuck, args.board)}; the expected rolls are "
                 f"infinite from every cell that can get there: {out['unreachable_cells']}")
    elif out["unreachable_cells"]:  # only cells a piece never rests on (jump sources, skipped cells)
        text += f" (infinite from cells {out['unreachable_cells']}, where no piece rests)"
    emit(args, out, text)
    return 0


def _parse_position(text, pieces):
    try:
        own, opp = text.split("/")
        return (tuple(int(c) for c in own.split(",")), tuple(int(c) for c in opp.split(",")))
    except ValueError:
        raise ValueError(f"position must look like {','.join(['3'] * pieces)}/"
                         f"{','.join(['0'] * pieces)} (own cells/opponent cells), got {text!r}")


def _save_policy(path, solution):
    import os
    from pathlib import Path

    import numpy as np

    from ..store.atomic import temporary_name

    race = solution.race
    exp = race.expansion
    faces = [d for d, p in enumerate(race.board.die, 1) if p > 0]
    n = exp.n_nodes
    best = np.full((n, len(faces)), -2, np.int16)  # -2: ended game, -1: pass
    counts = np.diff(exp.node_ptr)
    live = counts > 0
    chosen = exp.out_ptr[:-1] + solution.policy
    piece = race.piece[chosen]
    cell = np.where(piece >= 0, race.encoding.cells[np.maximum(piece, 0)], -1)
    best[live] = cell.reshape(-1, len(faces))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        with open(tmp, "wb") as f:
            np.savez_compressed(
                f, cells=race.encoding.cells, tuples=race.encoding.tuples,
                board=np.array(json.dumps(_board_json(race.board))),
                faces=np.array(faces), value=solution.value, move_from=best,
                readme=np.array("node = rank(own) * M + rank(opponent), rank = row of tuples "
                                "(indices into cells); value = win probability of the player to "
                                "move; move_from[node, face] = cell of the piece to move, -1 pass, "
                                "-2 ended game"))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _progress(line):
    print(line, file=sys.stderr, flush=True)


def run_race(args):
    from ..games import ludo

    board = _board(args)
    stuck = ludo.cells_without_goal(board)  # before the expansion: value iteration would never settle
    if stuck:
        raise ValueError(ludo.unreachable_goal_message(board, stuck, args.board))
    # progress on stderr (the workflow shows it on the terminal): a two-piece race runs for minutes
    _progress(f"race of {args.pieces} piece(s) each on {args.board}: listing the positions, then "
              f"value iteration until no win probability changes by more than {args.tol:g}")
    sol = ludo.solve_race(board, args.pieces, tol=args.tol, progress=lambda sweep, delta: _progress(
        f"  sweep {sweep}: largest change {delta:.3g}"))
    out = {"game": "ludo-race", "board_file": args.board, "board": _board_json(board),
           "pieces": args.pieces, "positions": sol.race.expansion.n_nodes,
           "win_probability": sol.win_probability, "sweeps": sol.sweeps,
           "residual": sol.residual, "against": {}, "positions_queried": []}
    rule = ("any piece not at the goal may be picked; an overshooting one stays"
            if board.pass_by_overshoot else "only a piece that can move may be picked")
    lines = [f"{args.pieces} piece(s) each, optimal play ({rule}): the first player wins with "
             f"probability {sol.win_probability:.10f}"]
    _progress(f"  optimal play solved in {sol.sweeps} sweeps")
    for kind in args.against:
        _progress(f"  matching it against move-the-{kind}-piece")
        first, second = ludo.match_win_probability(sol.race, sol.policy,
                                                   ludo.simple_policy(sol.race, kind), tol=args.tol)
        out["against"][kind] = {"optimal_moves_first": first, "optimal_moves_second": second}
        lines.append(f"  optimal vs move-the-{kind}-piece: wins {first:.10f} moving first, "
                     f"{second:.10f} moving second")
    for text in args.position:
        own, opp = _parse_position(text, args.pieces)
        moves = ludo.best_moves(sol, own, opp)
        out["positions_queried"].append({"own": list(own), "opponent": list(opp), "moves": moves})
        lines.append(f"  position {text}: " + ", ".join(
            f"roll {m['face']}: "
            f"{'pass' if m['move_from'] is None else 'move ' + str(m['move_from'])}"
            f" ({m['win_probability']:.4f})" for m in moves))
    if args.policy_out:
        _save_policy(args.policy_out, sol)
        out["policy_file"] = args.policy_out
    emit(args, out, "\n".join(lines))
    return 0


def _load_solution(path):
    """(board, encoding, value) of a race saved by ``--policy-out``; errors name the file and the
    command that writes a readable one."""
    import numpy as np

    from ..games import ludo

    policy = Path(path).with_name(Path(path).stem + "_policy.npz")
    if Path(path).suffix == ".json" and policy.is_file():  # the race's JSON: its values are beside it
        raise ValueError(f"{path} is the race's summary; advise reads its saved solution: "
                         f"`strongsolve ludo advise {policy} ...`")
    try:
        saved = np.load(path)
        stored = {key: saved[key] for key in ("board", "cells", "tuples", "value")}
    except (OSError, ValueError, KeyError) as err:
        raise ValueError(f"{path}: not a race solution with its board ({err}); write one with "
                         "`strongsolve ludo race BOARD --pieces P --policy-out "
                         f"{path}`") from None
    board = ludo.Board.from_mapping(json.loads(str(stored["board"])))
    pieces = stored["tuples"].shape[1]
    enc = ludo.race_encoding(board, pieces)
    if not (np.array_equal(enc.cells, stored["cells"]) and np.array_equal(enc.tuples, stored["tuples"])
            and stored["value"].shape == (enc.n_tuples ** 2,)):
        raise ValueError(f"{path}: its positions do not match its board; write it again with "
                         f"`strongsolve ludo race BOARD --pieces {pieces} --policy-out {path}`")
    return board, enc, stored["value"]


def _piece_count_message(args, board, pieces, own, opp):
    """Why a position with another piece count than the saved race gets no advice, and the
    commands that answer what can be answered (issue 19: the design's four-piece example)."""
    from ..games import ludo

    if len(own) != len(opp):
        return (f"position {args.position}: both players need the same number of pieces, got "
                f"{len(own)} and {len(opp)}")
    k = len(own)
    text = (f"position {args.position} has {k} piece(s) each, but {args.result} holds the race "
            f"of {pieces} piece(s) each")
    rest = set(board.rest_cells())
    off = sorted({c for c in (*own, *opp) if c not in rest})
    if off:
        jumps = ", ".join(f"{c} -> {board.jumps[c]}" for c in off if c in board.jumps)
        many = len(off) > 1
        text += (f"; {'cells' if many else 'cell'} {', '.join(map(str, off))} "
                 f"{'are not cells' if many else 'is not a cell'} a piece can rest on in this "
                 "board"
                 + (f" (jump {'sources' if many else 'source'}: {jumps})" if jumps else ""))
    largest = ludo.largest_race_pieces(board)
    sibling = Path(args.result).with_name(f"race_p{k}_policy.npz")  # the workflow's name
    if k <= largest:
        if sibling.is_file():
            return text + (f"; advise from the {k}-piece race saved beside it: `strongsolve ludo "
                           f"advise {sibling} --position {args.position} --roll {args.roll}`")
        return text + (f"; solve the {k}-piece race first: `strongsolve ludo race BOARD.yaml "
                       f"--pieces {k} --policy-out {sibling}`, then run `strongsolve ludo advise "
                       f"{sibling} --position {args.position} --roll {args.roll}`")
    text += (f". The {k}-piece game is not solved exactly: {ludo.race_positions(board, k):,} "
             f"positions on this board, more than the {ludo.MAX_RACE_NODES:,} the race solver "
             f"holds; {largest} piece(s) each is the largest race it solves here")
    if k > pieces:  # a smaller race: advice on some of the pieces, in another game
        mine = [c for c in own if c in rest][:pieces]
        theirs = [c for c in opp if c in rest][:pieces]
        if len(mine) == pieces and len(theirs) == pieces:
            sub = f"{','.join(map(str, mine))}/{','.join(map(str, theirs))}"
            text += (f". Advice in the race of {pieces} piece(s) each, the other pieces left out "
                     f"(another game, not an answer for this position): `strongsolve ludo advise "
                     f"{args.result} --position {sub} --roll {args.roll}`")
    return text


def run_advise(args):
    from ..games import ludo

    board, enc, value = _load_solution(args.result)
    pieces = enc.tuples.shape[1]
    own, opp = _parse_position(args.position, pieces)
    if len(own) != pieces or len(opp) != pieces:
        raise ValueError(_piece_count_message(args, board, pieces, own, opp))
    choices = ludo.advise(board, enc, value, own, opp, args.roll)
    out = {"game": "ludo-advise", "result": args.result, "pieces": pieces,
           "pass_by_overshoot": board.pass_by_overshoot, "own": list(own), "opponent": list(opp),
           "roll": args.roll,
           "choices": [dict(c, own_after=list(c["own_after"]),
                            opponent_after=list(c["opponent_after"])) for c in choices]}
    lines = [f"position {args.position}, roll {args.roll} ({pieces} piece(s) each): win "
             "probability of the mover after each choice"]
    for c in choices:
        what = "pass" if c["move_from"] is None else f"move {c['move_from']}"
        after = (f"-> {','.join(map(str, c['own_after']))}/"
                 f"{','.join(map(str, c['opponent_after']))}")
        lines.append(f"  {'*' if c['best'] else ' '} {what:<8} {after:<16} "
                     f"{c['win_probability']:.10f}" + ("  (rolls again)" if c["bonus_roll"] else ""))
    emit(args, out, "\n".join(lines))
    return 0
