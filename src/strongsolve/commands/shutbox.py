"""``strongsolve shutbox``: solve a Shut the Box variant exactly (issue 7).

JSON output (``--json``, ``--output``) is strict JSON: a number that is infinite (a goal the dice
cannot reach, e.g. ``--faces 1``: the expected rolls are infinite) or NaN is written as ``null``;
the text output prints it as ``inf``.
"""

import math
from pathlib import Path

from . import emit

DESCRIPTION = """Solve Shut the Box. flip-one: after each roll (x, y) flip one card among x, y, x+y
(toggle); minimise the expected rolls until every card is set. standard: shut open tiles summing to
the roll; maximise P(all shut) or minimise the expected open sum."""


UNITS = {"min-rolls": "rolls", "max-shut": "probability", "min-sum": "points"}


def register(subparsers):
    p = subparsers.add_parser("shutbox", help="solve Shut the Box (flip-one or standard rules)",
                              description=DESCRIPTION)
    p.add_argument("--cards", type=int, default=12, help="cards/tiles 1..n (default 12)")
    p.add_argument("--faces", type=int, default=6, help="faces of each of the two dice (default 6)")
    p.add_argument("--rule", choices=["flip-one", "standard"], default="flip-one")
    p.add_argument("--objective", choices=["min-rolls", "max-shut", "min-sum"], default=None,
                   help="min-rolls (flip-one, default) or max-shut / min-sum (standard, default "
                        "max-shut)")
    p.add_argument("--one-die", action="store_true",
                   help="standard rule: roll one die when the open tiles sum to 6 or less")
    p.add_argument("--method", choices=["policy-iteration", "value-iteration",
                                        "value-iteration-jacobi"], default="policy-iteration")
    p.add_argument("--tol", type=float, default=1e-13,
                   help="final tolerance: largest change of a value in the last sweep")
    p.add_argument("--check", action="store_true",
                   help="also solve by value iteration and by an exact sparse solve of the final "
                        "policy, and report both (key 'checks')")
    p.add_argument("--policy", action="store_true", help="include the optimal policy table")
    p.add_argument("--json", action="store_true",
                   help="print JSON instead of text (an infinite value, an unreachable goal, is null)")
    p.add_argument("--output", "-o", help="write the JSON to this file (atomically) as well")
    p.set_defaults(handler=run)


def finite_or_none(value):
    """``value`` with every non-finite float (inf, NaN) replaced by None, in nested dicts and lists,
    so that it is written as strict JSON (``null``; Python's json writes ``Infinity``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def _check_output(path):
    """Refuse an ``--output`` that cannot be a file before the solve (ValueError naming it)."""
    if path and Path(path).is_dir():
        raise ValueError(f"--output {path} is a directory; allowed: a file name, e.g. "
                         f"{Path(path) / 'shutbox.json'}")


def _emit(args, out, text):
    """:func:`emit`, with a failed ``--output`` write explained for this command (the store's
    message is about the workflow's layers)."""
    from ..store.errors import StoreWriteError

    try:
        emit(args, finite_or_none(out), text)
    except StoreWriteError as err:
        # the store's reason (it names a file standing where a directory is needed), without its
        # advice; else the system's
        text, head = str(err), f"cannot write {Path(args.output)}: "
        reason = (text[len(head):].split("; nothing was written")[0] if text.startswith(head)
                  else getattr(err.__cause__, "strerror", None) or text)
        failed = StoreWriteError(f"cannot write --output {args.output}: {reason}; nothing was "
                                 "written. Free disk space or give a writable file, then run the same "
                                 "command again")
        failed.errno = err.errno
        raise failed from err


def run(args):
    from ..games import shutbox as sb

    _check_output(args.output)
    objective = args.objective or ("min-rolls" if args.rule == "flip-one" else "max-shut")
    sol = sb.solve(args.cards, args.faces, args.rule, objective, args.one_die, args.method,
                   args.tol)
    out = {"game": "shutbox", "rule": args.rule, "objective": objective, "cards": args.cards,
           "faces": args.faces, "one_die": args.one_die, "method": args.method,
           "value": sol.value_start,
           "unit": UNITS[objective],
           "iterations": sol.iterations, "sweeps": sol.sweeps, "residual": sol.residual}
    if args.check:
        vi = sb.solve(args.cards, args.faces, args.rule, objective, args.one_die,
                      "value-iteration" if args.method == "policy-iteration" else
                      "policy-iteration", args.tol)
        start = 0 if args.rule == "flip-one" else (1 << args.cards) - 1
        exact = float(sb.exact_policy_value(sol)[start])
        out["checks"] = {"other_method": vi.value_start, "exact_policy_value": exact,
                         "max_relative_difference": max(abs(vi.value_start - sol.value_start),
                                                        abs(exact - sol.value_start))
                         / max(abs(sol.value_start), 1e-300)}
    if args.policy:
        if args.rule == "flip-one":
            rolls, flip = sb.flip_one_policy_table(args.cards, args.faces, sol.policy)
            out["policy"] = {"node": "mask of set cards, bit c-1 for card c",
                             "rolls": rolls.tolist(), "flip": flip.tolist(),
                             "value_per_mask": sol.value.tolist()}
        else:
            table = sb.standard_policy_table(args.cards, args.faces, args.one_die, sol.policy,
                                             sol.expansion)
            out["policy"] = {"node": "mask of open tiles, bit t-1 for tile t; entry: mask of the "
                                     "tiles to shut per roll total, 0 = game over",
                             "shut": {str(m): {str(t): s for t, s in row.items()}
                                      for m, row in table.items()},
                             "value_per_mask": sol.value[:1 << args.cards].tolist()}
    text = (f"shutbox {args.rule} n={args.cards} f={args.faces} {objective}"
            f"{' one-die' if args.one_die else ''}: value {sol.value_start:.12g} {out['unit']} "
            f"({args.method}, {sol.iterations} iterations, residual {sol.residual:.2g})")
    if args.check:
        c = out["checks"]
        text += (f"\n  check: other method {c['other_method']:.12g}, exact policy value "
                 f"{c['exact_policy_value']:.12g}")
    _emit(args, out, text)
    return 0
