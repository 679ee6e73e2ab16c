"""``strongsolve ludo``: exact expected rolls of one piece, optimal two-player races."""

import math
import os
import sys
import time
from pathlib import Path

from ..progress import Task
from . import emit

MAX_RACE_NODES = 10_000_000  # games.ludo.encoding.MAX_RACE_NODES, without importing numba for --help


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
    race.add_argument("--against", nargs="*", default=None, choices=["leading", "trailing"],
                      help="simple policies to match the optimal one against (default both; "
                           "expansion solver only)")
    race.add_argument("--position", action="append", default=[], metavar="OWN/OPP",
                      help="print the optimal piece per roll, e.g. 3,10/0,22 (own cells/opponent "
                           "cells, player to move first); repeatable")
    race.add_argument("--policy-out", metavar="FILE.npz",
                      help="save the value and the optimal piece per position and roll")
    race.add_argument("--solver", choices=["auto", "expansion", "values"], default="auto",
                      help="expansion: every candidate in memory (about 1.6 kB per position; gives "
                           "--policy-out and --against); values: one float64 per position, "
                           "successors computed each sweep, checkpointed (three pieces); auto "
                           f"(default): values when --values-out is given or the race has more "
                           f"than {MAX_RACE_NODES:,} positions")
    race.add_argument("--values-out", metavar="DIR.zarr",
                      help="values solver: save the value of every position here (read by `ludo "
                           "advise`); checkpoints go to DIR.zarr.checkpoints and a rerun of the "
                           "same command resumes from the last one")
    race.add_argument("--checkpoint-minutes", type=float, default=30.0,
                      help="values solver: save a checkpoint this often (default 30)")
    race.add_argument("--checkpoint-sweeps", type=int,
                      help="values solver: save a checkpoint every this many sweeps as well")
    race.add_argument("--max-memory-gb", type=float,
                      help="values solver: the most memory the values may take (default 80%% of "
                           "this machine's)")
    race.add_argument("--threads", type=int,
                      help="values solver: numba threads (default: numba's, all CPUs)")
    race.add_argument("--no-extrapolation", action="store_true",
                      help="values solver: plain sweeps only, 8 bytes per position instead of 16 "
                           "(default: reduced rank extrapolation of the sweeps, which takes fewer "
                           "sweeps to the same values; docs/ludo.md)")
    race.add_argument("--json", action="store_true", help="print JSON")
    race.add_argument("--output", "-o", help="write the JSON to this file (atomically) as well")
    race.set_defaults(handler=run_race)

    advise = sub.add_parser("advise", help="every choice after a roll, valued from a saved race",
                            description="Read a race solution saved by `ludo race --policy-out` "
                                        "or --values-out (no re-solve) and print each legal "
                                        "choice after the roll with the mover's win probability, "
                                        "the best marked.")
    advise.add_argument("result", help="the .npz written by `ludo race --policy-out`, or the "
                                       "DIR.zarr written by `ludo race --values-out`")
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

    from ..games.ludo.rules import Board

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
    return board.to_mapping()


def run_rolls(args):
    from ..games.ludo.rules import cells_without_goal, expected_rolls, unreachable_goal_text

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
    emit(args, out, text, _summary_writer())
    return 0


def _parse_position(text, pieces):
    try:
        own, opp = text.split("/")
        return (tuple(int(c) for c in own.split(",")), tuple(int(c) for c in opp.split(",")))
    except ValueError:
        raise ValueError(f"position must look like {','.join(['3'] * pieces)}/"
                         f"{','.join(['0'] * pieces)} (own cells/opponent cells), got {text!r}")


def _progress(line):
    print(line, file=sys.stderr, flush=True)


def run_race(args):
    from ..games.ludo import encoding, rules, saved
    from ..games.ludo.stages import expansion

    if not 1 <= args.pieces <= 4:
        raise ValueError(f"--pieces must be in 1..4, got {args.pieces}")
    board = _board(args)
    stuck = rules.cells_without_goal(board)  # before the expansion: value iteration would never settle
    if stuck:
        raise ValueError(rules.unreachable_goal_message(board, stuck, args.board))
    if args.solver == "values" or (args.solver == "auto" and (
            args.values_out or encoding.race_positions(board, args.pieces) > encoding.MAX_RACE_NODES)):
        return _run_race_values(args, board)
    if args.values_out:
        raise ValueError("--values-out is written by the values solver; drop --solver expansion "
                         "(or use --policy-out, the expansion solver's file)")
    if args.against is None:
        args.against = ["leading", "trailing"]
    # a two-piece race runs for minutes: a line on stderr, one line per sweep on stdout (a workflow
    # job's log; stderr with --json, whose stdout is the JSON), the status line with the sweeps left
    # (strongsolve/progress.py)
    detail = sys.stderr if args.json else sys.stdout
    _progress(f"race of {args.pieces} piece(s) each on {args.board}: listing the positions, then "
              f"value iteration until no win probability changes by more than {args.tol:g}")
    with Task(f"ludo race, {args.pieces} piece(s)") as task:
        task.update("listing the positions")
        sol = expansion.solve_race(board, args.pieces, tol=args.tol, progress=_expansion_progress(
            args.tol, task, "optimal play", detail))
        out = {"game": "ludo-race", "board_file": args.board, "board": _board_json(board),
               "pieces": args.pieces, "positions": sol.race.expansion.n_nodes,
               "win_probability": sol.win_probability, "sweeps": sol.sweeps,
               "residual": sol.residual, "against": {}, "positions_queried": []}
        rule = ("any piece not at the goal may be picked; an overshooting one stays"
                if board.pass_by_overshoot else "only a piece that can move may be picked")
        lines = [f"{args.pieces} piece(s) each, optimal play ({rule}): the first player wins with "
                 f"probability {sol.win_probability:.10f}"]
        print(f"  optimal play solved in {sol.sweeps} sweeps", file=detail, flush=True)
        for kind in args.against:
            print(f"  matching it against move-the-{kind}-piece", file=detail, flush=True)
            task.update(f"matching it against move-the-{kind}-piece")
            first, second = expansion.match_win_probability(
                sol.race, sol.policy, expansion.simple_policy(sol.race, kind), tol=args.tol,
                progress=_expansion_progress(args.tol, task, f"against move-the-{kind}-piece"))
            out["against"][kind] = {"optimal_moves_first": first, "optimal_moves_second": second}
            lines.append(f"  optimal vs move-the-{kind}-piece: wins {first:.10f} moving first, "
                         f"{second:.10f} moving second")
    for text in args.position:
        own, opp = _parse_position(text, args.pieces)
        moves = expansion.best_moves(sol, own, opp)
        out["positions_queried"].append({"own": list(own), "opponent": list(opp), "moves": moves})
        lines.append(f"  position {text}: " + ", ".join(
            f"roll {m['face']}: "
            f"{'pass' if m['move_from'] is None else 'move ' + str(m['move_from'])}"
            f" ({m['win_probability']:.4f})" for m in moves))
    if args.policy_out:
        saved.save_policy(args.policy_out, sol)
        out["policy_file"] = args.policy_out
    emit(args, out, "\n".join(lines), _summary_writer())
    return 0


def _run_race_values(args, board):
    """``ludo race`` by the values solver (:mod:`..games.ludo.stages.values`)."""
    from ..games.ludo import encoding
    from ..games.ludo.stages import values as ludo_values

    positions = encoding.race_positions(board, args.pieces)
    if args.policy_out:
        raise ValueError(f"--policy-out holds the expansion solver's policy, which {positions:,} "
                         "positions do not fit; the values solver saves the values with "
                         "--values-out DIR.zarr, and `strongsolve ludo advise DIR.zarr` reads them")
    if args.against:
        raise ValueError("--against plays the expansion solver's policy against simple ones; "
                         f"{positions:,} positions are solved by values only: drop --against")
    limit = (ludo_values.default_memory_limit() if args.max_memory_gb is None
             else int(args.max_memory_gb * 1e9))
    ludo_values.check_memory(board, args.pieces, limit, extrapolation=not args.no_extrapolation)
    threads = ludo_values.set_threads(args.threads)
    if not args.values_out:
        return _solve_values(args, board, positions, threads, limit)
    # one writer at a time; the holder may remove what a killed solve left half-written
    from ..store.layers import remove_stale_temporaries
    from ..store.lock import writer_lock

    out_dir = Path(args.values_out).resolve().parent
    with writer_lock(out_dir, f"ludo race {args.values_out} (pid {os.getpid()})"):
        remove_stale_temporaries([args.values_out])
        saved = Path(args.values_out)
        if saved.is_dir() and not any(saved.iterdir()):  # made by a workflow manager: nothing yet
            saved.rmdir()
        if saved.exists():
            return _report_saved_values(args, board, positions)
        return _solve_values(args, board, positions, threads, limit)


def _solve_values(args, board, positions, threads, limit):
    from ..games.ludo import saved as store
    from ..games.ludo.stages import values as ludo_values

    extrapolate = not args.no_extrapolation
    checkpoints = None
    if args.values_out:
        checkpoints = store.Checkpoints(store.checkpoint_directory(args.values_out), board,
                                        args.pieces, every_minutes=args.checkpoint_minutes,
                                        every_sweeps=args.checkpoint_sweeps,
                                        log=lambda line: _progress(f"  {line}"))
    _progress(f"race of {args.pieces} piece(s) each on {args.board}: {positions:,} positions, "
              f"values only ({ludo_values.value_bytes(board, args.pieces, extrapolate) / 1e6:,.1f}"
              f" MB{' with the changes the extrapolation keeps' if extrapolate else ''}), "
              f"{threads} thread(s); sweeps until no win probability changes by more than "
              f"{args.tol:g}" + ("" if checkpoints else
                                 " (no --values-out: no checkpoints, a kill loses the sweeps)"))
    sol = ludo_values.solve_values(board, args.pieces, tol=args.tol, memory_limit=limit,
                                   checkpoints=checkpoints, progress=_sweep_progress(args.tol),
                                   extrapolation=extrapolate)
    _progress(f"  converged in {sol.sweeps} sweeps"
              + (f", {sol.jumps} extrapolation jump(s)" if extrapolate else "")
              + (f" (resumed after sweep {sol.resumed_from})" if sol.resumed_from else ""))
    if args.values_out:
        store.save_solution(args.values_out, sol, args.tol, board_file=args.board)
        checkpoints.clear()
    race = sol.race
    out = {"game": "ludo-race", "board_file": args.board, "board": _board_json(board),
           "pieces": args.pieces, "positions": positions, "solver": "values",
           "win_probability": sol.win_probability, "sweeps": sol.sweeps,
           "residual": sol.residual, "resumed_from_sweep": sol.resumed_from,
           "extrapolation": extrapolate, "jumps": sol.jumps,
           "values_file": args.values_out, "positions_queried": []}
    values = store.LexValues(race, lambda a: sol.value[a])
    return _finish_values_report(args, board, race, values, out)


RATE_SWEEPS = 5  # sweeps whose changes give the rate of the estimate (one sweep's ratio jumps)


def _expansion_progress(tol, task, label, detail=None):
    """A ``progress(sweep, delta)`` callback of the expansion solver's sweeps: the line
    ``  sweep <n>: largest change <x>`` to ``detail`` (when given), and ``task``'s status with the
    sweeps and seconds left to ``tol`` (:func:`_sweeps_left`)."""
    last = []  # (largest change, seconds) of the sweeps before, at most RATE_SWEEPS
    clock = [time.perf_counter()]

    def report(sweep, delta):
        now = time.perf_counter()
        seconds, clock[0] = now - clock[0], now
        if detail is not None:
            print(f"  sweep {sweep}: largest change {delta:.3g}", file=detail, flush=True)
        task.update(f"{label}, sweep {sweep}, largest change {delta:.3g}"
                    + _sweeps_left(last, delta, seconds, tol))
        last.append((delta, seconds))
        del last[:-RATE_SWEEPS]

    return report


def _sweeps_left(last, delta, seconds, tol):
    """``"; about <n> more sweep(s), <t> at this rate"`` once the changes shrink, else "": the
    sweeps left to ``tol`` at the geometric mean rate of ``last`` ((largest change, seconds) of the
    sweeps before, at most :data:`RATE_SWEEPS`) and this one, each taking their mean seconds."""
    if not (last and 0 < delta < last[0][0] and delta > tol):
        return ""
    rate = (delta / last[0][0]) ** (1.0 / len(last))
    left = math.ceil(math.log(tol / delta) / math.log(rate))
    eta = left * (sum(s for _, s in last[1:]) + seconds) / len(last)
    eta = f"{eta:.0f} s" if eta < 120 else f"{eta / 60:.0f} min"
    return f"; about {left} more sweep(s), {eta} at this rate"


def _sweep_progress(tol):
    """A progress line per sweep: the largest change, its seconds and, once the changes shrink,
    the sweeps left to ``tol`` at the geometric mean rate of the last :data:`RATE_SWEEPS` sweeps (on
    the three-piece classic race one sweep's ratio moved between 0.62 and 0.91, and the estimate
    with it between 37 and 250 sweeps) and the mean seconds of those sweeps."""
    last = []  # (largest change, seconds) of the sweeps before, at most RATE_SWEEPS

    def report(sweep, delta, seconds):
        line = f"  sweep {sweep}: largest change {delta:.3g}, {seconds:.1f} s"
        line += _sweeps_left(last, delta, seconds, tol)
        last.append((delta, seconds))
        del last[:-RATE_SWEEPS]
        _progress(line)

    return report


def _report_saved_values(args, board, positions):
    """A rerun after the solve finished: the saved values answer, if they are of this race."""
    from ..games.ludo import saved as store

    saved = store.SavedValues(args.values_out)
    attrs = saved.attrs
    if store.identity(board, args.pieces) != {k: attrs.get(k) for k in store.identity(board, 1)} \
            or attrs["tol"] > args.tol:
        raise FileExistsError(f"{args.values_out} holds another solve ({attrs['pieces']} piece(s), "
                              f"tolerance {attrs['tol']:g}, board {attrs['board']}); it is not "
                              f"overwritten: remove it (`rm -rf {args.values_out}`) or choose "
                              "another --values-out")
    _progress(f"{args.values_out} already holds this race, solved to {attrs['tol']:g}")
    out = {"game": "ludo-race", "board_file": args.board, "board": _board_json(board),
           "pieces": args.pieces, "positions": positions, "solver": "values",
           "win_probability": attrs["win_probability"], "sweeps": attrs["sweeps"],
           "residual": attrs["last_change"], "resumed_from_sweep": attrs["sweeps"],
           "values_file": args.values_out, "positions_queried": []}
    return _finish_values_report(args, board, saved.race, saved.lex_values(), out)


def _finish_values_report(args, board, race, values, out):
    from ..games.ludo import advice

    rule = ("any piece not at the goal may be picked; an overshooting one stays"
            if board.pass_by_overshoot else "only a piece that can move may be picked")
    lines = [f"{args.pieces} piece(s) each, optimal play ({rule}): the first player wins with "
             f"probability {out['win_probability']:.10f}"]
    enc = race.lex_encoding()
    for text in args.position:
        own, opp = _parse_position(text, args.pieces)
        moves = []
        for face, p in enumerate(board.die, 1):
            if p > 0:
                best = next(c for c in advice.advise(board, enc, values, own, opp, face) if c["best"])
                moves.append({"face": face, "move_from": best["move_from"],
                              "win_probability": best["win_probability"]})
        out["positions_queried"].append({"own": list(own), "opponent": list(opp), "moves": moves})
        lines.append(f"  position {text}: " + ", ".join(
            f"roll {m['face']}: "
            f"{'pass' if m['move_from'] is None else 'move ' + str(m['move_from'])}"
            f" ({m['win_probability']:.4f})" for m in moves))
    emit(args, out, "\n".join(lines), _summary_writer())
    return 0


def _summary_writer():
    """The writer of ``--output`` for ``ludo race`` and ``ludo rolls``: checksummed
    (games.ludo.saved.write_summary)."""
    from ..games.ludo.saved import write_summary

    return write_summary


def run_advise(args):
    from ..games.ludo import advice, saved

    if args.output and Path(args.output).resolve() == Path(args.result).resolve():
        raise ValueError(f"--output {args.output} is the race solution it reads; write the advice "
                         "to another file, e.g. --output advice.json")
    board, enc, value = saved.load_race(args.result)
    pieces = enc.tuples.shape[1]
    own, opp = _parse_position(args.position, pieces)
    if len(own) != pieces or len(opp) != pieces:
        raise ValueError(advice.piece_count_message(args.result, args.position, args.roll, board,
                                                     pieces, own, opp))
    choices = advice.advise(board, enc, value, own, opp, args.roll)
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
