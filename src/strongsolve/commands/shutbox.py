"""``strongsolve shutbox``: solve a Shut the Box variant exactly.

JSON output (``--json``, ``--output``) is strict JSON: a number that is infinite (a goal the dice
cannot reach, e.g. ``--faces 1``: the expected rolls are infinite) or NaN is written as ``null``;
the text output prints it as ``inf``.
"""

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
    p.add_argument("--exact", action="store_true",
                   help="also solve in exact rationals (fractions) and print the value as a "
                        "fraction (key 'value_exact', e.g. \"8936/1575\"); small boxes only: "
                        "flip-one up to 10 cards, standard up to 14")
    p.add_argument("--json", action="store_true",
                   help="print JSON instead of text (an infinite value, an unreachable goal, is null)")
    p.add_argument("--output", "-o", help="write the JSON to this file (atomically) as well")
    p.set_defaults(handler=run)
    sub = p.add_subparsers(dest="shutbox_command", metavar="{advise}")
    advise = sub.add_parser("advise", help="every choice after a roll, from a saved solution",
                            description="Read a solution written by `strongsolve shutbox ... "
                                        "--policy --output FILE` (no re-solve) and print each "
                                        "legal choice after the roll with its value, the best "
                                        "marked.")
    advise.add_argument("result", help="JSON written by `strongsolve shutbox ... --policy --output`")
    advise.add_argument("--open", required=True, metavar='"1 3 5"',
                        help="flip-one: the cards not yet set; standard: the open tiles")
    advise.add_argument("--roll", required=True, metavar="X,Y",
                        help="the dice, e.g. 3,5 (one face when one die is rolled)")
    advise.add_argument("--json", action="store_true", help="print JSON")
    advise.add_argument("--output", "-o", help="write the JSON to this file (atomically) as well")
    advise.set_defaults(handler=run_advise)


def _check_output(path):
    """Refuse an ``--output`` that cannot be a file before the solve (ValueError naming it)."""
    if path and Path(path).is_dir():
        raise ValueError(f"--output {path} is a directory; allowed: a file name, e.g. "
                         f"{Path(path) / 'shutbox.json'}")


def _emit(args, out, text, write=None):
    """:func:`emit`, with a failed ``--output`` write explained for this command (the store's
    message is about the workflow's layers)."""
    from ..games.shutbox.saved import finite_or_none
    from ..store.errors import StoreWriteError

    try:
        emit(args, finite_or_none(out), text, write)
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
    from ..games.shutbox import saved, stages

    _check_output(args.output)
    objective = args.objective or ("min-rolls" if args.rule == "flip-one" else "max-shut")
    if args.exact:  # the exact solve starts from the float one and returns it
        rational = stages.solve_exact(args.cards, args.faces, args.rule, objective, args.one_die,
                                  args.method, args.tol)
        sol = rational.float_solution
    else:
        rational = None
        sol = stages.solve(args.cards, args.faces, args.rule, objective, args.one_die, args.method,
                       args.tol)
    out = {"game": "shutbox", "rule": args.rule, "objective": objective, "cards": args.cards,
           "faces": args.faces, "one_die": args.one_die, "method": args.method,
           "value": sol.value_start,
           "unit": UNITS[objective],
           "iterations": sol.iterations, "sweeps": sol.sweeps, "residual": sol.residual}
    if args.check:
        vi = stages.solve(args.cards, args.faces, args.rule, objective, args.one_die,
                      "value-iteration" if args.method == "policy-iteration" else
                      "policy-iteration", args.tol)
        start = 0 if args.rule == "flip-one" else (1 << args.cards) - 1
        exact = float(stages.exact_policy_value(sol)[start])
        out["checks"] = {"other_method": vi.value_start, "exact_policy_value": exact,
                         "max_relative_difference": max(abs(vi.value_start - sol.value_start),
                                                        abs(exact - sol.value_start))
                         / max(abs(sol.value_start), 1e-300)}
    if rational is not None:
        out["value_exact"] = _fraction_text(rational.value_start)
        out["exact_policies_evaluated"] = rational.steps
    if args.policy:
        if args.rule == "flip-one":
            rolls, flip = stages.flip_one_policy_table(args.cards, args.faces, sol.policy)
            out["policy"] = {"node": "mask of set cards, bit c-1 for card c",
                             "rolls": rolls.tolist(), "flip": flip.tolist(),
                             "value_per_mask": sol.value.tolist()}
        else:
            table = stages.standard_policy_table(args.cards, args.faces, args.one_die, sol.policy,
                                             sol.expansion)
            out["policy"] = {"node": "mask of open tiles, bit t-1 for tile t; entry: mask of the "
                                     "tiles to shut per roll total, 0 = game over",
                             "shut": {str(m): {str(t): s for t, s in row.items()}
                                      for m, row in table.items()},
                             "value_per_mask": sol.value[:1 << args.cards].tolist()}
    if rational is not None and args.policy:
        n_masks = 1 << args.cards
        out["policy"]["value_per_mask_exact"] = [_fraction_text(rational.value[m])
                                                 for m in range(n_masks)]
    text = (f"shutbox {args.rule} n={args.cards} f={args.faces} {objective}"
            f"{' one-die' if args.one_die else ''}: value {sol.value_start:.12g} {out['unit']} "
            f"({args.method}, {sol.iterations} iterations, residual {sol.residual:.2g})")
    if rational is not None:
        text += (f"\n  exact: {_fraction_text(rational.value_start) or 'inf'} {out['unit']} "
                 f"(policy iteration in fractions, {rational.steps} "
                 f"polic{'y' if rational.steps == 1 else 'ies'} evaluated)")
    if args.check:
        c = out["checks"]
        text += (f"\n  check: other method {c['other_method']:.12g}, exact policy value "
                 f"{c['exact_policy_value']:.12g}")
    _emit(args, out, text, saved.write_result)
    return 0


def _fraction_text(value):
    """A Fraction as "p/q" ("p" when whole), None (infinite) as None."""
    return None if value is None else str(value)


def _ints(text, what):
    try:
        return [int(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise ValueError(f"{what} must be whole numbers, got {text!r}") from None


def _tiles(text, what):
    """The tiles written in ``text``, each once (ValueError naming a repeated one); the advice
    checks that each is a tile of the game."""
    tiles = _ints(text, what)
    repeated = sorted({t for t in tiles if tiles.count(t) > 1})
    if repeated:
        raise ValueError(f"{what} {text!r} names tile {repeated[0]} more than once; each tile is "
                         f"open once, e.g. --open \"{' '.join(map(str, sorted(set(tiles))))}\"")
    return tiles


def run_advise(args):
    from ..games.shutbox import advice, saved

    _check_output(args.output)
    if args.output and Path(args.output).resolve() == Path(args.result).resolve():
        raise ValueError(f"--output {args.output} is the result it reads; write the advice to "
                         "another file")
    variant, value = saved.load_values(args.result)
    open_tiles = _tiles(args.open, "--open")
    roll = _ints(args.roll, "--roll")
    for face in roll:
        if not 1 <= face <= variant["faces"]:
            raise ValueError(f"--roll {args.roll}: face {face} is not on a die of "
                             f"{variant['faces']} faces")
    choices = advice.advise(variant["rule"], variant["objective"], variant["cards"],
                            variant["one_die"], value, open_tiles, tuple(roll))
    unit = UNITS[variant["objective"]]
    out = {"game": "shutbox-advise", "result": args.result, **variant, "unit": unit,
           "open": sorted(open_tiles), "roll": roll, "choices": choices}
    lines = [f"open {' '.join(map(str, out['open']))}, roll {args.roll} ({variant['rule']}, "
             f"{variant['objective']}): value ({unit}) after each choice"]
    for c in choices:
        if variant["rule"] == "flip-one":
            what = "pass" if c["flip"] is None else f"flip {c['flip']}"
        else:
            what = "game over" if not c["shut"] else "shut " + " ".join(map(str, c["shut"]))
        lines.append(f"  {'*' if c['best'] else ' '} {what:<14} open after: "
                     f"{' '.join(map(str, c['open_after'])) or '-':<20} {c['value']:.10g}")
    _emit(args, out, "\n".join(lines))
    return 0
