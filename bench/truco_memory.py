"""Peak memory of the in-memory Truco CFR per node of a raise tree (to plan a solver for the raise tiers).

Builds the raise tree of one tier and vira class on the deals of the first N mano hands, runs a few
discounted-CFR iterations with one exact best response, and prints JSON: nodes, information sets,
action slots, the process's peak RSS after the imports, after the build and after the solve, and the
bytes per node those give, beside games/truco/sizes.py's array-by-array estimate.

    .venv/bin/python bench/truco_memory.py --tier 1 --vira-class 0 --hands 60
"""

import json
import time

import numpy as np

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.rules import N_STRENGTHS
from strongsolve.games.truco.sizes import solver_bytes
from strongsolve.games.truco.tree import build_hand_tree
from strongsolve.kernels.cfr import solve

from truco_subgame import peak_mib, subgame_parser


def main():
    args = subgame_parser(60, "deals of the first N mano hands", 10).parse_args()
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(args.vira_class))
    keep = pairs[:, 0] < args.hands
    # compile on a few deals first, so that the peaks below are the workload's
    small = pairs[:, 0] < 1
    t = build_hand_tree(np.arange(N_STRENGTHS), np.array(hands), pairs[small], weights[small],
                        raises=True, raise_caps=(args.tier, args.tier))
    solve(t.game, max_iterations=2, check_every=1)
    base = peak_mib()
    t0 = time.process_time()
    tree = build_hand_tree(np.arange(N_STRENGTHS), np.array(hands), pairs[keep], weights[keep],
                           raises=True, raise_caps=(args.tier, args.tier))
    build_s = time.process_time() - t0
    built = peak_mib()
    g = tree.game
    tree.set_utilities(np.linspace(0.0, 1.0, 12))
    res = solve(g, target_nash_conv=1e-12, max_iterations=args.iterations,
                check_every=args.iterations, validate=False)
    solved = peak_mib()
    slots = int(g.infoset_ptr[-1])
    print(json.dumps(dict(
        tier=args.tier, vira_class=args.vira_class, hands=args.hands, deals=int(keep.sum()),
        nodes=g.n_nodes, infosets=g.n_infosets, action_slots=slots, build_cpu_s=round(build_s, 2),
        iterations=res.iterations, solve_cpu_s=round(res.cpu_seconds, 2),
        peak_mib_after_imports=round(base, 1), peak_mib_after_build=round(built, 1),
        peak_mib_after_solve=round(solved, 1),
        measured_bytes_per_node=round((solved - base) * 2 ** 20 / g.n_nodes, 1),
        estimated_bytes_per_node=round(solver_bytes(g.n_nodes, slots, g.n_infosets) / g.n_nodes, 1))))


if __name__ == "__main__":
    main()
