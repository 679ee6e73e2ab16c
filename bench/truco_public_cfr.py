"""Speed of the public-tree CFR (kernels/public_cfr.py) on a full-deck Truco raise subgame, beside
the per-deal forest CFR (kernels/forest_cfr.py) on the same subgame.

Builds the raise tree of one tier and vira class as a ``PublicGame`` (and with ``--compare-forest``
as a ``Forest``), runs ``--iterations`` DCFR iterations and one exact evaluation with each (one
thread), and with ``--target`` solves the subgame from nothing with the public tree to that
NashConv (checks as the grid driver's: ``check_every`` 10 and ``kernels.cfr.next_check``).
``--face-down`` builds the tree with face-down play from trick 2 on (rules.py; the forest has no
covered cards, so not with ``--compare-forest``). The
utility table is a stored subgame's (``--subgame``: its ``utility`` attribute, e.g. a solved 10-10
subgame) or a fixed ramp 0..1 over the 12 outcome codes. Prints JSON: counts, build, seconds and
CPU seconds per iteration and per evaluation of each solver, the ratio, peak RSS, and the solve's
checks.

    nice .venv/bin/python bench/truco_public_cfr.py --tier 1 --vira-class 0 --iterations 5 \\
        --compare-forest --target 1e-3 --subgame results/truco/grid/.../s10-10_v0.zarr
    .venv/bin/python bench/truco_public_cfr.py --tier 1 --vira-class 0 --iterations 3 --face-down
"""

import json
import time

import numba
import numpy as np

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.forest import build_raise_forest
from strongsolve.games.truco.public_tree import build_public_raise_tree
from strongsolve.games.truco.rules import N_STRENGTHS
from strongsolve.games.truco.saved import read_subgame
from strongsolve.kernels import forest_cfr as fc
from strongsolve.kernels import public_cfr as pc

from truco_subgame import peak_mib, subgame_parser


def _timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _per_iteration(kernel, game, iterations):
    m = game.n_slots
    regret, strat_sum, strategy = np.zeros(m), np.zeros(m), np.zeros(m)
    kernel.dcfr_iterations(game, regret, strat_sum, strategy, 0, 1)  # first touch of the arrays
    _, wall, cpu = _timed(lambda: kernel.dcfr_iterations(game, regret, strat_sum, strategy, 1,
                                                         iterations))
    avg = kernel.average_strategy(game, strat_sum)
    ev, ewall, ecpu = _timed(lambda: kernel.evaluate(game, avg))
    return dict(seconds_per_iteration=wall / iterations, cpu_per_iteration=cpu / iterations,
                evaluation_seconds=ewall, evaluation_cpu=ecpu, nash_conv=ev["nash_conv"],
                value=ev["value"])


def main():
    ap = subgame_parser(None, "unused here (the whole subgame)", 5)
    ap.add_argument("--subgame", help="a stored subgame (.zarr) whose utility table to use")
    ap.add_argument("--compare-forest", action="store_true")
    ap.add_argument("--target", type=float, help="also solve with the public tree to this NashConv")
    ap.add_argument("--face-down", action="store_true", help="face-down play from trick 2 on")
    args = ap.parse_args()
    if args.face_down and args.compare_forest:
        ap.error("--face-down with --compare-forest: the forest has no covered cards")
    numba.set_num_threads(1)
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(args.vira_class))
    hands = np.array(hands)
    caps = (args.tier, args.tier)
    table = (np.asarray(read_subgame(args.subgame, arrays=False)[0]["utility"], np.float64)
             if args.subgame else np.linspace(0.0, 1.0, 12))
    small = pairs[:, 0] < 1  # compile every kernel first
    g = build_public_raise_tree(np.arange(N_STRENGTHS), hands, pairs[small], weights[small],
                                raise_caps=caps, face_down=args.face_down)
    g.set_utilities(table)
    pc.solve(g, max_iterations=1, check_every=1)
    base = peak_mib()
    game, bwall, bcpu = _timed(lambda: build_public_raise_tree(
        np.arange(N_STRENGTHS), hands, pairs, weights, raise_caps=caps, face_down=args.face_down))
    game.set_utilities(table)
    out = dict(tier=args.tier, vira_class=args.vira_class, deals=len(pairs), face_down=args.face_down,
               utility=table.tolist(), utility_source=args.subgame or "ramp",
               public=dict(public_nodes=game.n_public_nodes, inner_nodes=game.n_nodes,
                           terminals=game.n_terminals, infosets=game.n_infosets,
                           deal_nodes=pc.deal_node_count(game),
                           slots=game.n_slots, array_mib=game.nbytes() / 2 ** 20,
                           build_seconds=bwall, build_cpu=bcpu,
                           peak_mib_after_imports=base, peak_mib_after_build=peak_mib()))
    out["public"].update(_per_iteration(pc, game, args.iterations))
    if args.target:
        res, wall, cpu = _timed(lambda: pc.solve(game, target_nash_conv=args.target,
                                                 check_every=10, max_iterations=5000))
        out["public_solve"] = dict(target=args.target, iterations=res.iterations,
                                   nash_conv=res.nash_conv, value=res.value, seconds=wall,
                                   cpu_seconds=cpu, checks=res.checks)
    out["public"]["peak_mib"] = peak_mib()
    if args.compare_forest:
        del game
        f = build_raise_forest(np.arange(N_STRENGTHS), hands, pairs[small], weights[small],
                               raise_caps=caps)
        f.set_utilities(table)
        fc.solve(f, max_iterations=1, check_every=1)
        forest, fwall, fcpu = _timed(lambda: build_raise_forest(
            np.arange(N_STRENGTHS), hands, pairs, weights, raise_caps=caps))
        forest.set_utilities(table)
        out["forest"] = dict(nodes=forest.n_nodes, infosets=forest.n_infosets,
                             slots=forest.n_slots, build_seconds=fwall, build_cpu=fcpu,
                             **_per_iteration(fc, forest, args.iterations))
        out["cpu_per_iteration_ratio"] = (out["forest"]["cpu_per_iteration"]
                                          / out["public"]["cpu_per_iteration"])
        out["evaluation_cpu_ratio"] = out["forest"]["evaluation_cpu"] / out["public"]["evaluation_cpu"]
        out["forest"]["peak_mib"] = peak_mib()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
