"""Memory and speed of the forest CFR (kernels/forest_cfr.py) on a full-deck Truco raise subgame.

Builds the raise tree of one tier and vira class as a ``Forest`` (all deals, or those of the first
N mano hands), then per thread count runs DCFR iterations and one exact evaluation (both best
responses, value, outcome probabilities), and prints JSON: counts, build seconds, wall and CPU
seconds per iteration and per evaluation for each thread count, the process's peak RSS after the imports (and
compilation), after the build and at the end, the measured bytes per node beside the forest's array
bytes and the in-memory solver's 122, and the projected peak of every tier (sizes.py).

    nice .venv/bin/python bench/truco_forest.py --tier 1 --vira-class 0 --threads 1,2
    nice .venv/bin/python bench/truco_forest.py --tier 1 --hands 40 --threads 1 --compare-tabular
"""

import json
import time

import numba
import numpy as np

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.forest import build_raise_forest
from strongsolve.games.truco.rules import N_STRENGTHS
from strongsolve.games.truco.sizes import FULL_DECK_TIERS, forest_peak_bytes
from strongsolve.games.truco.tree import build_hand_tree
from strongsolve.kernels import cfr
from strongsolve.kernels import forest_cfr as fc

from truco_subgame import peak_mib, subgame_parser

TABULAR_BYTES_PER_NODE = 122  # bench/truco_memory.py --tier 1 --hands 60 (bench/RECORD.md)


def main():
    ap = subgame_parser(None, "deals of the first N mano hands (all)", 5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--compare-tabular", action="store_true",
                    help="also time kernels/cfr.py's iterations and evaluation on the same tree "
                         "(it needs about 122 bytes per node: use --hands)")
    args = ap.parse_args()
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(args.vira_class))
    hands = np.array(hands)
    keep = np.ones(len(pairs), bool) if args.hands is None else pairs[:, 0] < args.hands
    caps = (args.tier, args.tier)
    table = np.linspace(0.0, 1.0, 12)
    small = pairs[:, 0] < 1  # compile every kernel first, so that the peaks below are the workload's
    f = build_raise_forest(np.arange(N_STRENGTHS), hands, pairs[small], weights[small], raise_caps=caps)
    f.set_utilities(table)
    fc.solve(f, max_iterations=1, check_every=1)  # the serial kernels
    small_limit, fc.PARALLEL_MIN_NODES = fc.PARALLEL_MIN_NODES, 0
    numba.set_num_threads(2)
    fc.solve(f, max_iterations=1, check_every=1)  # and the parallel ones
    fc.PARALLEL_MIN_NODES = small_limit
    base = peak_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    forest = build_raise_forest(np.arange(N_STRENGTHS), hands, pairs[keep], weights[keep],
                                raise_caps=caps)
    build_s = time.perf_counter() - t0
    build_cpu = time.process_time() - c0
    built = peak_mib()
    forest.set_utilities(table)
    m = forest.n_slots
    runs = {}
    for th in [int(t) for t in args.threads.split(",")]:
        numba.set_num_threads(th)
        regret, strat_sum, strategy = np.zeros(m), np.zeros(m), np.empty(m)
        t0, c0 = time.perf_counter(), time.process_time()
        fc.dcfr_iterations(forest, regret, strat_sum, strategy, 0, args.iterations)
        t1, c1 = time.perf_counter(), time.process_time()
        fc.average_strategy(forest, strat_sum, out=strategy)
        ev = fc.evaluate(forest, strategy)
        t2, c2 = time.perf_counter(), time.process_time()
        # CPU seconds (all threads) beside wall seconds: on a shared machine the wall time
        # measures the load as much as the solver
        runs[th] = dict(seconds_per_iteration=round((t1 - t0) / args.iterations, 3),
                        cpu_seconds_per_iteration=round((c1 - c0) / args.iterations, 3),
                        evaluation_seconds=round(t2 - t1, 3), evaluation_cpu_seconds=round(c2 - c1, 3),
                        nash_conv=ev["nash_conv"])
    end = peak_mib()
    tabular = None
    if args.compare_tabular:
        numba.set_num_threads(1)
        tree = build_hand_tree(np.arange(N_STRENGTHS), hands, pairs[keep], weights[keep],
                               raises=True, raise_caps=caps)
        tree.set_utilities(table)
        g = tree.game
        player = np.full(g.n_infosets, -1, np.int8)
        dec = g.node_type == cfr.DECISION
        player[g.node_infoset[dec]] = g.node_player[dec]
        regret, strat_sum = np.zeros(m), np.zeros(m)
        c0 = time.process_time()
        cfr._dcfr_iterations(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                             g.child_prob, g.utility, g.infoset_ptr, player, regret, strat_sum, 0,
                             args.iterations, 1.5, 0.0, 2.0)
        c1 = time.process_time()
        ev_t = cfr.evaluate(g, cfr.average_strategy(g, strat_sum))
        c2 = time.process_time()
        tabular = dict(cpu_seconds_per_iteration=round((c1 - c0) / args.iterations, 3),
                       evaluation_cpu_seconds=round(c2 - c1, 3), nash_conv=ev_t["nash_conv"])
    arrays = forest.nbytes() + 3 * 8 * m
    n = forest.n_nodes
    print(json.dumps(dict(
        tier=args.tier, vira_class=args.vira_class, hands=args.hands, deals=int(keep.sum()),
        nodes=n, infosets=forest.n_infosets, action_slots=m, build_seconds=round(build_s, 1),
        build_cpu_seconds=round(build_cpu, 1),
        iterations=args.iterations, threads=runs,
        peak_mib_after_imports=round(base, 1), peak_mib_after_build=round(built, 1),
        peak_mib_at_end=round(end, 1), array_bytes_per_node=round(arrays / n, 2),
        measured_bytes_per_node=round((end - base) * 2 ** 20 / n, 2),
        tabular_bytes_per_node=TABULAR_BYTES_PER_NODE,
        largest_hand_nodes=int(forest.hand_nodes.max()), tabular_same_tree=tabular,
        projected_peak_gib={f"t{t}": round(forest_peak_bytes(nn, s, i, d) / 2 ** 30, 2)
                            for t, (nn, i, s, d) in FULL_DECK_TIERS.items()})))


if __name__ == "__main__":
    main()
