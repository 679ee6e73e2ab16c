"""``strongsolve 2048 ...``: the stages of the 2048 solve (run by Snakemake) and an in-process solve."""

import json
import sys


def _add_run_args(p):
    p.add_argument("run_dir", help="run directory, e.g. results/2048_3x3")
    p.add_argument("--rows", type=int, required=True, help="board rows, 1..4")
    p.add_argument("--cols", type=int, required=True, help="board columns, 1..4")
    p.add_argument("--p2", type=float, default=0.9, help="probability that a spawn is a 2 (default 0.9)")
    p.add_argument("--target-tile", type=int, default=0,
                   help="0 for the score objective, else the tile to reach (reach-a-tile objective)")


def _ages(text):
    """``FIRST-LAST`` (even ages, inclusive) -> list of ages."""
    try:
        first, last = (int(x) for x in text.split("-"))
    except ValueError:
        raise ValueError(f"--ages {text!r} is not allowed; allowed: FIRST-LAST, two even ages >= 4") from None
    if first < 4 or first % 2 or last % 2 or last < first:
        raise ValueError(f"--ages {text!r} is not allowed; allowed: FIRST-LAST, even ages, 4 <= FIRST <= LAST")
    return list(range(first, last + 1, 2))


def _run(args):
    from ..games.g2048.run import Run
    return Run(args.run_dir, args.rows, args.cols, args.p2, args.target_tile)


def _forward(args):
    from ..games.g2048.forward import run_forward
    run_forward(_run(args), _ages(args.ages))


def _backward(args):
    from ..games.g2048.backward import run_backward
    run_backward(_run(args), _ages(args.ages))


def _report(args):
    from ..games.g2048.report import run_report
    doc = run_report(_run(args), args.max_age)
    if doc is not None:
        print(f"expected score {doc['expected_score']!r} over {doc['num_states']} states", file=sys.stderr)


def _solve(args):
    from ..games.g2048.pipeline import solve
    doc = solve(args.run_dir, args.rows, args.cols, args.p2, args.target_tile, args.max_age)
    if doc is not None:
        print(json.dumps({k: v for k, v in doc.items() if k != "start_states"}, indent=2))


def register(subparsers):
    p = subparsers.add_parser("2048", help="2048 on small boards: solve, query, play")
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, handler, text in (
        ("forward", _forward, "forward stage: afterstate layers of a block of ages"),
        ("backward", _backward, "backward stage: value layers of a block of ages"),
    ):
        q = sub.add_parser(name, help=text)
        _add_run_args(q)
        q.add_argument("--ages", required=True, help="block of ages FIRST-LAST, e.g. 4-130")
        q.set_defaults(handler=handler)
    q = sub.add_parser("report", help="report stage: summary.csv and solution.json")
    _add_run_args(q)
    q.add_argument("--max-age", type=int, default=None, help="forward-only run: last age solved")
    q.set_defaults(handler=_report)
    q = sub.add_parser("solve", help="every stage in this process (small boards; Snakemake is the main way)")
    _add_run_args(q)
    q.add_argument("--max-age", type=int, default=None, help="stop after the forward pass at this age")
    q.set_defaults(handler=_solve)
