"""``strongsolve 2048 ...``: the stages of the 2048 solve (run by Snakemake) and an in-process solve."""

import argparse
import json
import sys


def _add_run_args(p):
    p.add_argument("run_dir", help="run directory, e.g. results/2048_3x3")
    p.add_argument("--rows", type=int, required=True, help="board rows, 1..4")
    p.add_argument("--cols", type=int, required=True, help="board columns, 1..4")
    p.add_argument("--p2", type=float, default=0.9, help="probability that a spawn is a 2 (default 0.9)")
    p.add_argument("--target-tile", type=int, default=0,
                   help="0 for the score objective, else the tile to reach (reach-a-tile objective)")


def _add_stage_args(p):
    p.add_argument("--chunk", type=int, default=None,
                   help="layer positions per dask task (default: the stage's own)")
    p.add_argument("--scheduler-address", default=None,
                   help="dask.distributed scheduler to run the chunks on (default: local threads)")
    p.add_argument("--memory-limit", type=int, default=None,
                   help="bytes of working memory (forward: sorted runs before spilling to disk; "
                        "backward: the expansions of the chunks in flight)")


def _ages(text):
    """``FIRST-LAST`` (even ages, inclusive) -> list of ages."""
    try:
        first, last = (int(x) for x in text.split("-"))
    except ValueError:
        raise ValueError(f"--ages {text!r} is not allowed; allowed: FIRST-LAST, two even ages >= 4") from None
    if first < 4 or first % 2 or last % 2 or last < first:
        raise ValueError(f"--ages {text!r} is not allowed; allowed: FIRST-LAST, even ages, 4 <= FIRST <= LAST")
    return list(range(first, last + 1, 2))


def _max_age(text):
    """``--max-age``, checked as the workflow's schema checks ``max_age``: an even age >= 4."""
    try:
        age = int(text)
    except ValueError:
        age = None
    if age is None or age < 4 or age % 2:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not allowed; allowed: an even age >= 4 (the last age of the forward "
            "pass), or no --max-age to solve every age")
    return age


def _run(args):
    from ..games.g2048.saved import Run, check_run_directory
    run = Run(args.run_dir, args.rows, args.cols, args.p2, args.target_tile)
    check_run_directory(run)  # before a stage removes or writes anything
    return run


def _stage_options(args):
    """Chunking, memory limit and dask client of a stage (the client is made here, by the caller)."""
    from ..parallel import client_for
    options = {"client": client_for(args.scheduler_address)}
    if args.chunk is not None:
        options["chunk"] = args.chunk
    return options


# The stage commands write their per-age lines to stdout, which the workflow's jobs send to their
# log file only (workflow/scripts/logged.sh); stderr gets the status line (strongsolve/progress.py).
def _forward(args):
    from ..games.g2048.stages.forward import run_forward
    run_forward(_run(args), _ages(args.ages), sys.stdout, memory_limit=args.memory_limit,
                **_stage_options(args))


def _backward(args):
    from ..games.g2048.stages.backward import run_backward
    run_backward(_run(args), _ages(args.ages), sys.stdout, memory_limit=args.memory_limit,
                 **_stage_options(args))


def _solve_block(args):
    from ..games.g2048.stages.pipeline import solve_block
    run = _run(args)
    ages = _ages(args.ages)
    if args.report and ages != run.ages():
        every = run.ages()
        raise ValueError(f"--report needs every age of the run in the block, --ages "
                         f"{every[0]}-{every[-1]}; --ages {args.ages} leaves the report to "
                         "`strongsolve 2048 report` once every block is solved")
    solve_block(run, ages, sys.stdout, memory_limit=args.memory_limit, **_stage_options(args))
    if args.report:  # in this process: its imports and JIT are warm
        from ..games.g2048.stages.plots import write_plots
        from ..games.g2048.stages.report import run_report
        _print_report(run, run_report(run), None)
        write_plots(run.directory, sys.stdout)  # the files written: the job's log


def _report(args):
    from ..games.g2048.stages.report import run_report
    run = _run(args)
    _print_report(run, run_report(run, args.max_age), args.max_age)


def _print_report(run, doc, max_age):
    """The report's answer on stderr: the expected score (or probability of the target tile) and
    the counts, or for a forward-only run (``doc`` None) the counts of summary.csv."""
    from ..games.g2048.stages.report import summary_rows
    if doc is None:  # forward-only: the counts of summary.csv
        rows = summary_rows(run, max_age)
        print(f"forward pass to age {rows[-1]['age']}: {sum(r['states'] for r in rows)} states "
              f"({sum(r['terminal_states'] for r in rows)} terminal), "
              f"{sum(r['afterstates'] for r in rows)} afterstates; no values (a forward-only run: "
              f"the backward pass needs every age, to {run.last_age})", file=sys.stderr)
        return
    counts = (f"over {doc['num_states']} states ({doc['num_terminal_states']} terminal), "
              f"{doc['num_afterstates']} afterstates")
    if run.target_tile:
        print(f"probability of making {run.target_tile}: {doc['reach_probability']!r} {counts}",
              file=sys.stderr)
    else:
        print(f"expected score {doc['expected_score']!r} points {counts}", file=sys.stderr)


def _solve(args):
    from ..games.g2048.stages.pipeline import solve
    doc = solve(args.run_dir, args.rows, args.cols, args.p2, args.target_tile, args.max_age,
                memory_limit=args.memory_limit, **_stage_options(args))
    if doc is not None:
        print(json.dumps({k: v for k, v in doc.items() if k != "start_states"}, indent=2))


def _query(args):
    from ..games.g2048.advice import Solution, format_value
    from .. import ties
    from ..games.g2048.move_table import best_moves
    from ..games.g2048.rules.boardtext import draw_board, parse_board

    sol = Solution(args.run_dir)
    board = parse_board(args.board, sol.rows, sol.cols)
    if args.best_only:
        from ..games.g2048.rules.board import age
        from ..games.g2048.stages.policy import PolicyStore

        best = sol.best_move(board, policy=PolicyStore(sol.run))
        caveat = sol.unreachable_caveat()  # the store alone cannot refuse an unreachable board
        if args.json:
            doc = {"board": sol.grid(board), "age": age(board), "best": best}
            print(json.dumps(dict(doc, caveat=caveat) if caveat else doc, indent=2))
        else:
            print(best if best is not None else "none: no legal move, the game is over")
            if caveat:
                print(caveat)
        return
    q = sol.query(board)
    if args.json:
        print(json.dumps(q, indent=2))
        return
    unit = "expected future points" if sol.objective == "score" else f"P(make {sol.target_tile})"
    print(f"{sol.run.directory.name}: state of age {q['age']}")
    print(draw_board(board, sol.rows, sol.cols))
    print(f"value {format_value(q['value'], sol.objective)} ({unit})")
    if not q["moves"]:
        print("no legal move: the game is over")
        return
    best = best_moves(q["moves"])
    print(f"{'move':<6} {'reward':>8} {'afterstate value':>18} {'total':>18}")
    for m in q["moves"]:
        mark = ("  <- tie" if len(best) > 1 else "  <- best") if m["move"] in best else ""
        print(f"{m['move']:<6} {m['reward']:>8g} {format_value(m['afterstate_value'], sol.objective):>18} "
              f"{format_value(m['total'], sol.objective):>18}{mark}")
    if len(best) > 1:
        print(ties.tie_note(best) + ": each is optimal")


def _play(args):
    from ..games.g2048.advice import Solution, format_value
    from ..games.g2048.play import check_games, play

    check_games(args.games)  # before any file is read: a bad count is named first
    sol = Solution(args.run_dir)
    policy = None
    if args.policy:
        from ..games.g2048.stages.policy import PolicyStore
        policy = PolicyStore(sol.run)
    result = play(sol, args.games, args.seed, progress=not args.json, policy=policy)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return
    f = lambda v: format_value(v, sol.objective)  # noqa: E731
    lo, hi = result.ci95
    what = "score" if sol.objective == "score" else f"fraction reaching {sol.target_tile}"
    inside = "inside" if lo <= result.expected_score <= hi else "OUTSIDE"
    print(f"{sol.run.directory.name}: {result.games} games from random starts, seed {result.seed}, "
          "optimal policy" + (" (from the policy store)" if args.policy else ""))
    print(f"mean {what} {f(result.mean_score)}, 95% interval [{f(lo)}, {f(hi)}]")
    print(f"exact expected {'score' if sol.objective == 'score' else 'P(reach)'} "
          f"{f(result.expected_score)} ({inside} the interval)")
    if sol.objective != "score":
        print(f"mean merge points {result.mean_points:.2f}")
    print("largest tile: " + ", ".join(f"{t}: {c} ({100 * c / result.games:.2f}%)"
                                       for t, c in result.largest_tile.items()))


def _policy(args):
    from ..games.g2048.stages.policy import run_policy

    run = _run(args)
    run_policy(run, _ages(args.ages) if args.ages else run.ages())


def _plots(args):
    from ..games.g2048.stages.plots import write_plots
    write_plots(args.run_dir)


def register(subparsers):
    p = subparsers.add_parser("2048", help="2048 on small boards: solve, query, play")
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, handler, text in (
        ("forward", _forward, "forward stage: afterstate layers of a block of ages"),
        ("backward", _backward, "backward stage: value layers of a block of ages"),
        ("solve-block", _solve_block, "forward, then backward stage of a block of ages in one process "
                                      "(the g2048_solve rule: a run whose ages make one block)"),
    ):
        q = sub.add_parser(name, help=text, description=text + ". One line per age on stdout (a "
                           "workflow job's log); a status line with the rate and the time left on "
                           "stderr (redrawn on a terminal, else at most every 15 s).")
        _add_run_args(q)
        q.add_argument("--ages", required=True, help="block of ages FIRST-LAST, e.g. 4-130")
        _add_stage_args(q)
        if name == "solve-block":
            q.add_argument("--report", action="store_true",
                           help="then write the report (summary.csv, solution.json) and the plots, "
                                "as the report and plots actions do; needs every age of the run in "
                                "the block (the g2048_solve rule)")
        q.set_defaults(handler=handler)
    q = sub.add_parser("report", help="report stage: summary.csv and solution.json")
    _add_run_args(q)
    q.add_argument("--max-age", type=_max_age, default=None,
                   help="forward-only run: last age solved (even, >= 4)")
    q.set_defaults(handler=_report)
    q = sub.add_parser("solve", help="every stage in this process (small boards; Snakemake is the main way)")
    _add_run_args(q)
    q.add_argument("--max-age", type=_max_age, default=None,
                   help="stop after the forward pass at this age (even, >= 4)")
    _add_stage_args(q)
    q.set_defaults(handler=_solve)
    q = sub.add_parser("query", help="value and best move of a board in a solved run")
    q.add_argument("run_dir", help="solved run directory, e.g. results/2048_3x3")
    q.add_argument("board", metavar="BOARD",
                   help="rows separated by '/', tiles as numbers, '.' or 0 for empty, e.g. "
                        "\"2 4 . / . 8 . / . . 2\"")
    q.add_argument("--json", action="store_true", help="print JSON: value, best, moves")
    q.add_argument("--best-only", action="store_true",
                   help="print only the best move, from RUN_DIR/policy/ (built by `strongsolve "
                        "2048 policy` or the g2048_policy_all target); works from a directory "
                        "holding only policy/, where a board outside the reachable set gets an "
                        "arbitrary legal move (a retrieval store cannot tell); boards the afterstate "
                        "layers show unreachable are refused when the layers exist")
    q.set_defaults(handler=_query)
    q = sub.add_parser("play", help="Monte Carlo games with the solved policy from random starts")
    q.add_argument("run_dir", help="solved run directory, e.g. results/2048_3x3")
    q.add_argument("--games", type=int, default=10000,
                   help="number of games (default 10000, at most 10,000,000 per run)")
    q.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    q.add_argument("--json", action="store_true", help="print JSON instead of text")
    q.add_argument("--policy", action="store_true",
                   help="take the moves and the exact expected score from RUN_DIR/policy/ (written "
                        "by `strongsolve 2048 policy` or the g2048_policy_all target); needs no "
                        "other layer")
    q.set_defaults(handler=_play)
    q = sub.add_parser("policy", help="optimal-play store: the best move of every state, 2.1-2.5 "
                                      "bits per state, into RUN_DIR/policy/ (the g2048_policy rule)")
    _add_run_args(q)
    q.add_argument("--ages", default=None, help="block of ages FIRST-LAST (default: every age)")
    q.set_defaults(handler=_policy)
    q = sub.add_parser("plots", help="plots per age into RUN_DIR/plots/ (the g2048_plots rule runs it)")
    q.add_argument("run_dir", help="run directory, e.g. results/2048_3x3")
    q.set_defaults(handler=_plots)
