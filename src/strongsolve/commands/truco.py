"""``strongsolve truco``: equilibrium policies of solved Truco subgames and the state of the grid.

- ``strongsolve truco policy --score 11-8 --dealer 0 --vira 7c --hand "Ac 3h 4s" [--json]`` prints
  the action probabilities of the hand's first decision: the play/fold decision of the player at 11
  (hand of eleven), or mano's first card at 11-11. ``--score`` is player 0's and player 1's points,
  ``--dealer`` the player who deals (the other is mano and leads), ``--hand`` the deciding player's
  cards; with ``--line``, the three cards of whoever acts after the line, those played included.
  At a decision off the equilibrium path (after a move the player's own equilibrium never makes)
  the mix is a best response to the opponent's strategy, and the output says so.
- ``strongsolve truco grid [--json]`` lists the solved subgames of the 1296 (role-ordered score x
  vira class) with their values and exploitability.
- ``strongsolve truco sizes [--tiers 1,2] [--classes 0,8] [--no-infosets] [--face-down] [--json]``
  counts the raise trees per tier of the pruned ladder (pruning.py) and vira class, deal group by
  deal group (games/truco/sizes.py), with the memory the CFR solvers would need; ``--face-down``
  with the face-down rule (rules.py).
- ``strongsolve truco compare 11-10:3 11-10:4 [--threshold 0.1] [--deck full] [--json]`` measures
  the share of real play (reach under the equilibrium) where two solved subgames' policies differ,
  by cards played and kind of decision (games/truco/compare.py); ``--neighbours`` does it for every
  pair of neighbouring solved subgames (vira classes c and c + 1, scores one point apart).

The workflow's Truco jobs (workflow/rules/truco.smk) run these too:

- ``strongsolve truco abstraction-sizes --out CSV``: the abstraction sizes per vira class;
- ``strongsolve truco solve-group --x X --results DIR [--params JSON] [--workers N]``: one group of
  the 11 row (games/truco/stages/groups.py); ``strongsolve truco row11-summary --results DIR --out CSV``;
- ``strongsolve truco grid-tier --tier T --results DIR --out CSV [--min-score M] [--deck JSON]
  [--params JSON] [--workers N]``: one tier of the score grid (games/truco/stages/grid.py);
  ``strongsolve truco grid-summary --results DIR --out CSV [--min-score M] [--deck JSON]``.
"""

import json
import sys


def register(subparsers):
    p = subparsers.add_parser("truco", help="Truco Paulista: subgame policies and the solved grid")
    sub = p.add_subparsers(dest="truco_command", required=True, metavar="SUBCOMMAND")
    pol = sub.add_parser("policy", help="action probabilities at a hand's first decision")
    pol.add_argument("--score", required=True, help="player 0's and player 1's points, e.g. 11-8")
    pol.add_argument("--dealer", required=True, type=int, choices=(0, 1), help="the player who deals")
    pol.add_argument("--vira", required=True, help="the turned card, e.g. 7c (suits d s h c)")
    pol.add_argument("--hand", required=True,
                     help='the deciding player\'s three cards, e.g. "Ac 3h 4s"; with --line, the '
                          'hand of whoever acts after the line (mano or pé, as the line has it), '
                          'the cards that player already played included')
    pol.add_argument("--line", default=None,
                     help='the play so far, e.g. "7c Kd truco accept" (cards, truco/raise, accept; '
                          '"play" for a hand of eleven played; with the face-down rule "down:7c" '
                          'for a card played face down, "down" when its card is unknown, the '
                          'opponent\'s): the policy of the player to act')
    pol.add_argument("--results", default="results", help="results directory (default: results)")
    pol.add_argument("--json", action="store_true", help="print JSON")
    pol.set_defaults(handler=_policy)
    grid = sub.add_parser("grid", help="which of the 1296 subgames are solved")
    grid.add_argument("--results", default="results", help="results directory (default: results)")
    grid.add_argument("--json", action="store_true", help="print JSON")
    grid.set_defaults(handler=_grid)
    sz = sub.add_parser("sizes", help="raise-tree sizes per tier and vira class (full deck)")
    sz.add_argument("--tiers", default="1,2,3,4",
                    help="tiers by raise cap: 1 = ladder {1,3} (min score 9-10), 2 = {1,3,6} (6-8), "
                         "3 = {1,3,6,9} (3-5), 4 = the whole ladder (0-2); default 1,2,3,4")
    sz.add_argument("--classes", default="0,1,2,3,4,5,6,7,8", help="vira classes 0..8")
    sz.add_argument("--no-infosets", action="store_true",
                    help="count nodes only (one pass over the deals instead of two)")
    sz.add_argument("--hands-limit", type=int, default=None,
                    help="only the deals of the first N mano hands (a sample of the tree)")
    sz.add_argument("--face-down", action="store_true",
                    help="with the face-down rule (rules.py: a card may be played face down from "
                         "the second trick on)")
    sz.add_argument("--json", action="store_true", help="print JSON lines, one per row")
    sz.set_defaults(handler=_sizes)
    cmp = sub.add_parser("compare", help="share of real play where two solved subgames differ")
    cmp.add_argument("subgames", nargs="*", metavar="A-B:C",
                     help="two subgames, each the role-ordered score mano-pé and the vira class, "
                          "e.g. 11-10:3 11-10:4")
    cmp.add_argument("--neighbours", action="store_true",
                     help="instead: every pair of neighbouring solved subgames (vira classes c and "
                          "c + 1 of one score; scores one point apart, one class)")
    cmp.add_argument("--threshold", type=float, default=0.1,
                     help="a decision differs when the total variation distance of the two policies "
                          "exceeds this (default 0.1)")
    cmp.add_argument("--deck", default="full",
                     help='"full" (default) or a small deck\'s cards, e.g. "7d 7s 7h 7c Ad As Ah"')
    cmp.add_argument("--results", default="results", help="results directory (default: results)")
    cmp.add_argument("--json", action="store_true", help="print JSON")
    cmp.set_defaults(handler=_compare)
    _register_stages(sub)


def _register_stages(sub):
    """The subcommands of the workflow's Truco jobs."""
    z = sub.add_parser("abstraction-sizes", help="CSV of the abstraction sizes per vira class")
    z.add_argument("--out", required=True)
    z.set_defaults(handler=_abstraction_sizes)
    g = sub.add_parser("solve-group", help="solve one group of the 11 row")
    g.add_argument("--x", required=True, help="group: 11 (11-11) or 0..10 (11-x and x-11)")
    g.add_argument("--results", required=True)
    _solver_options(g)
    g.set_defaults(handler=_solve_group)
    s = sub.add_parser("row11-summary", help="CSV of every stored subgame of the 11 row")
    s.add_argument("--results", required=True)
    s.add_argument("--out", required=True)
    s.set_defaults(handler=_row11_summary)
    t = sub.add_parser("grid-tier", help="solve one tier of the score grid (the region of min_score)")
    t.add_argument("--tier", required=True, help="row11, t1, t2, t3 or t4 (games/truco/stages/grid.py)")
    _region_options(t)
    _solver_options(t)
    t.add_argument("--out", required=True, help="CSV of the tier's subgames, written at the end")
    t.add_argument("--keep-accumulators", action="store_true",
                   help="keep each subgame's CFR regrets and strategy sums beside it (16 bytes per "
                        "action slot, 91 MB per full-deck t1 subgame), so that a tighter target "
                        "continues the solve instead of starting over")
    t.set_defaults(handler=_grid_tier)
    m = sub.add_parser("grid-summary", help="CSV of every stored subgame of the region, with W per score")
    _region_options(m)
    m.add_argument("--out", required=True)
    m.set_defaults(handler=_grid_summary)


def _solver_options(p):
    p.add_argument("--params", default="{}", help="JSON overrides of the solver parameters")
    p.add_argument("--workers", type=int, help="processes side by side (overrides the parameters')")


def _region_options(p):
    p.add_argument("--results", required=True)
    p.add_argument("--min-score", type=int, default=0)
    p.add_argument("--deck", default='"full"', help='JSON: "full" or a list of cards')


def _solver_params(args):
    prm = json.loads(args.params)
    if args.workers:
        prm["workers"] = args.workers
    return prm


def _log(message):
    """A solve's line (a subgame solved, a fixed-point round) on stdout, a workflow job's log, and
    as the status line (strongsolve/progress.py): 18 lines for the 11-11 hand alone."""
    from ..progress import reporter

    print(message, flush=True)
    reporter().show(message.strip())


def _abstraction_sizes(args):
    from ..games.truco.stages.groups import write_abstraction_sizes

    write_abstraction_sizes(args.out)


def _solve_group(args):
    from ..games.truco.stages.groups import solve_group

    solve_group(args.x, args.results, _solver_params(args), log=_log)


def _row11_summary(args):
    from ..games.truco.stages.groups import write_summary

    write_summary(args.results, args.out)


def _grid_tier(args):
    from ..cli import UserError
    from ..games.truco.stages.grid import TIERS, deck_from_config, write_tier

    if args.tier not in TIERS:
        raise UserError(f"bad tier {args.tier!r}: expected one of {', '.join(TIERS)}")
    write_tier(args.tier, args.results, args.out, _solver_params(args),
               deck_from_config(json.loads(args.deck)), args.min_score, log=_log,
               keep_accumulators=args.keep_accumulators)


def _grid_summary(args):
    from ..games.truco.stages.grid import deck_from_config, write_grid_summary

    write_grid_summary(args.results, args.out, deck_from_config(json.loads(args.deck)),
                       args.min_score)


def _parse_score(text):
    from ..cli import UserError

    try:
        a, b = (int(t) for t in text.split("-"))
    except ValueError:
        raise UserError(f"bad score {text!r}: expected player 0's and player 1's points as A-B, e.g. 11-8")
    if not (0 <= a <= 11 and 0 <= b <= 11):
        raise UserError(f"bad score {text!r}: each player has 0..11 points before a hand")
    return a, b


def _policy(args):
    from ..games.truco.advice import policy, policy_line

    if args.line is not None:
        out = policy_line(_parse_score(args.score), args.dealer, args.vira, args.hand, args.line,
                          args.results)
        if args.json:
            print(json.dumps(out, indent=2))
            return 0
        print(f"score {args.score} (player 0-player 1), dealer {out['dealer']}, vira {out['vira']} "
              f"(class {out['vira_class']}), line: {args.line or '(start)'}")
        print(f"player {out['player']} to act, holding {' '.join(out['hand'])}"
              + (" (a raise the lossless pruning drops: accept)" if out["pruned_raise"] else ""))
        return _print_mix(out)
    out = policy(_parse_score(args.score), args.dealer, args.vira, args.hand, args.results)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"score {args.score} (player 0-player 1), dealer {out['dealer']}, mano {out['mano']}, "
          f"vira {out['vira']} (class {out['vira_class']})")
    what = "hand of eleven" if out["decision"] == "hand_of_eleven" else "first card at 11-11"
    print(f"player {out['player']} holds {' '.join(out['hand'])}: {what}")
    return _print_mix(out)


def _print_mix(out):
    """The equilibrium mix of a decision and the subgame's value, as text (exit status 0)."""
    from ..games.truco.advice import OFF_PATH_NOTE

    if out["off_path"]:
        print(OFF_PATH_NOTE)
    for act in out["actions"]:
        label = act["action"] + (" " + "/".join(act["cards"]) if act["cards"] else "")
        print(f"  {label:<14} {act['probability']:.6f}")
    print(f"subgame value for player 0 (before the deal): {out['value_player0']:.6f}; "
          f"exploitability {out['exploitability']:.2e} (match-win probability)")
    return 0


def _grid(args):
    from ..games.truco.advice import solved_grid

    out = solved_grid(args.results)
    rows, hint = out["subgames"], out["next_command"] or ""
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{len(rows)} of {out['total']} subgames solved (role-ordered score mano-pé x vira class)"
          + (f"; {hint}" if hint else ""))
    if rows:
        print(f"{'mano':>4} {'pé':>3} {'class':>5} {'value':>10} {'exploitability':>14} {'iterations':>10}")
    for r in rows:
        print(f"{r['mano']:>4} {r['pe']:>3} {r['vira_class']:>5} {r['value']:>10.6f} "
              f"{r['exploitability']:>14.2e} {r['iterations']:>10}")
    return 0


def _int_list(text, name, lo, hi):
    from ..cli import UserError

    try:
        vals = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        vals = []
    if not vals or any(not lo <= v <= hi for v in vals):
        raise UserError(f"bad {name} {text!r}: expected comma-separated integers {lo}..{hi}")
    return vals


def _sizes(args):
    from ..games.truco.sizes import forest_arithmetic, tier_sizes

    tiers = _int_list(args.tiers, "--tiers", 1, 4)
    classes = _int_list(args.classes, "--classes", 0, 8)
    if not args.json:
        cols = "tier class deals nodes decision_nodes infosets action_slots tabular_GiB forest_GiB"
        print(("full deck" if args.hands_limit is None else
               f"deals of the first {args.hands_limit} mano hands") + ", symmetric pruning"
              + (", face-down play" if args.face_down else ""))
        print(" ".join(f"{c:>14}" for c in cols.split()))

    def show(row):
        if args.json:
            print(json.dumps(row), flush=True)
            return
        gib = row.get("solver_bytes", float("nan")) / 2 ** 30
        forest = row.get("forest_bytes", float("nan")) / 2 ** 30
        print(" ".join(f"{v:>14}" for v in (row["tier"], row["vira_class"], row["deals"], row["nodes"],
                                             row["decision_nodes"], row.get("infosets", "-"),
                                             row.get("action_slots", "-"), f"{gib:.2f}",
                                             f"{forest:.2f}")), flush=True)
        if "forest_bytes" in row:
            print("    forest peak = " + forest_arithmetic(row["nodes"], row["action_slots"],
                                                          row["infosets"], row["deals"]), flush=True)

    tier_sizes(classes, tiers, infosets=not args.no_infosets, log=show, hands_limit=args.hands_limit,
               face_down=args.face_down)
    return 0


def _parse_deck(text):
    """``--deck``: "full", a JSON list of cards, or cards separated by spaces or commas."""
    from ..games.truco.stages.grid import deck_from_config

    t = text.strip()
    if t == "full":
        return deck_from_config("full")
    return deck_from_config(json.loads(t) if t.startswith("[") else t.replace(",", " ").split())


def _parse_subgame(text):
    from ..cli import UserError

    score, _, c = text.partition(":")
    try:
        a, b = _parse_score(score)
        return a, b, int(c)
    except (UserError, ValueError):
        raise UserError(f"bad subgame {text!r}: expected the role-ordered score mano-pé and the vira "
                        "class as A-B:C, e.g. 11-10:3") from None


def _compare(args):
    import sys

    from ..cli import UserError
    from ..games.truco.compare import compare, compare_neighbours, neighbour_summary

    deck = _parse_deck(args.deck)
    if args.neighbours:
        if args.subgames:
            raise UserError("give either two subgames or --neighbours, not both")
        rows = compare_neighbours(args.results, deck, args.threshold,
                                  log=lambda m: print(m, file=sys.stderr, flush=True))
        summary = neighbour_summary(rows)
        if args.json:
            print(json.dumps(dict(deck=deck.name, threshold=args.threshold, summary=summary,
                                  pairs=rows), indent=2))
            return 0
        return _print_neighbours(deck, args.threshold, rows, summary)
    if len(args.subgames) != 2:
        raise UserError(f"give two subgames A-B:C (got {len(args.subgames)}), or --neighbours")
    first, second = (_parse_subgame(t) for t in args.subgames)
    out = compare(args.results, deck, first, second, args.threshold)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"deck {deck.name}; a decision differs when the total variation distance of the two "
          f"policies exceeds {args.threshold}")
    for name in ("first", "second"):
        d = out[name]
        print(f"{name + ':':<8}{d['score'][0]}-{d['score'][1]} (mano-pé) vira class {d['vira_class']}"
              f"  {d['path']}")
    cols = ("play", "differ", "of all", "mean TV", "n/comp")
    print(f"{'':<16}" + " | ".join(f"{'weighed by the ' + w + ' reach':<44}" for w in ("first's", "second's")))
    print(f"{'where':<16}" + " | ".join(" ".join(f"{c:>8}" for c in cols) for _ in range(2)))
    w = out["weights"]
    buckets = [("whole hand", None, None)]
    buckets += [(f"{k} cards played", "by_cards_played", k) for k in range(6)]
    buckets += [(k, "by_kind", k) for k in ("card", "card_or_raise", "answer", "eleven")]
    for label, group, key in buckets:
        cells = []
        for name in ("first", "second"):
            d = w[name] if group is None else next(
                (x for x in w[name][group] if x.get("cards", x.get("kind")) == key), None)
            cells.append(_share_cells(d))
        if any(c.strip() for c in cells):
            print(f"{label:<16}" + " | ".join(cells))
    print(f"decisions per hand: {w['first']['decisions_per_hand']:.4f} (first), "
          f"{w['second']['decisions_per_hand']:.4f} (second); play = share of the decisions, differ and "
          "n/comp (not comparable) = share of the row's play, of all = share of the whole hand's play")
    return 0


def _share_cells(d):
    if d is None:
        return " " * 44
    tv = "-" if d["mean_tv"] is None else f"{d['mean_tv']:.4f}"
    return " ".join(f"{v:>8}" for v in (f"{d['share_of_play']:.4f}", f"{d['differ_share']:.4f}",
                                         f"{d['differ_share_of_all']:.4f}", tv,
                                         f"{d['not_comparable_share']:.4f}"))


def _print_neighbours(deck, threshold, rows, summary):
    """One line per neighbouring pair, then the means per kind of pair (exit status 0)."""
    print(f"deck {deck.name}; differ = share of real play where the total variation distance "
          f"exceeds {threshold}, weighed by the first / the second subgame's reach")
    print(f"{'pair':<6} {'first':>12} {'second':>12} {'differ 1st':>10} {'differ 2nd':>10} "
          f"{'mean TV':>8} {'n/comp':>8}")
    for r in rows:
        f, s, w = r["first"], r["second"], r["weights"]
        tv = w["first"]["mean_tv"]
        print(f"{r['pair']:<6} {'%d-%d:%d' % (*f['score'], f['vira_class']):>12} "
              f"{'%d-%d:%d' % (*s['score'], s['vira_class']):>12} {w['first']['differ_share']:>10.4f} "
              f"{w['second']['differ_share']:>10.4f} {'-' if tv is None else f'{tv:.4f}':>8} "
              f"{w['first']['not_comparable_share']:>8.4f}")
    for kind, m in summary.items():
        print(f"{kind} neighbours: {m['pairs']} pairs, differ {m['differ_share']:.4f} on average (at "
              f"most {m['max_differ_share']:.4f}), mean TV {m['mean_tv']:.4f}, not comparable "
              f"{m['not_comparable_share']:.4f}")
        for b in m["by_cards_played"] + m["by_kind"]:
            what = f"{b['cards']} cards played" if "cards" in b else b["kind"]
            print(f"  {what + ':':<16} {b['share_of_play']:.4f} of play, differ "
                  f"{b['differ_share']:.4f} there, {b['differ_share_of_all']:.4f} of all play")
        print(f"  {'scores':<13} {'pairs':>5} {'differ':>8} {'at most':>8} {'mean TV':>8} {'n/comp':>8}")
        for b in m["by_scores"]:
            what = ("%d-%d" % tuple(b["first"]) if kind == "vira"
                    else "%d-%d/%d-%d" % (*b["first"], *b["second"]))
            tv = "-" if b["mean_tv"] is None else f"{b['mean_tv']:.4f}"
            print(f"  {what:<13} {b['pairs']:>5} {b['differ_share']:>8.4f} {b['max_differ_share']:>8.4f} "
                  f"{tv:>8} {b['not_comparable_share']:>8.4f}")
    return 0
