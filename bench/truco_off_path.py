"""Cost of the off-path refinement (kernels/off_path.py) of a stored full-deck raise subgame, and a
check that it gives the stored policy again.

Reads a subgame of the grid that kept its CFR accumulators (``truco.keep_accumulators: true``),
rebuilds its per-deal forest (its raise caps, three-ties rule and utility table), takes the solve's
average strategy from the kept strategy sums, and runs the refinement as the grid driver does
(``groups._off_path``: the beliefs once, then the ladder's rungs by bisection, each refined profile
evaluated). Prints JSON: counts, the forest build, the beliefs, each rung tried (wall and CPU
seconds of the refinement and of its evaluation, sets refined, the check), the rung taken, peak RSS,
and whether the refined policy and mask equal the stored ones bit for bit.

    .venv/bin/python bench/truco_off_path.py --subgame results/truco/grid/t1/s10-10_v0.zarr \\
        --threads 2
"""

import argparse
import json
import time

import numba
import numpy as np

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.forest import build_raise_forest
from strongsolve.games.truco.rules import N_STRENGTHS
from strongsolve.games.truco.saved import read_accumulators, read_subgame
from strongsolve.games.truco.stages.groups import LADDER, _off_path
from strongsolve.kernels import forest_cfr
from strongsolve.kernels.off_path import forest_refiner

from truco_subgame import peak_mib


def _timed(fn, log, **what):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    log.append(dict(what, seconds=time.perf_counter() - t, cpu_seconds=time.process_time() - c))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--subgame", required=True, help="a stored grid subgame (.zarr) with its "
                    "accumulators kept beside it")
    ap.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    args = ap.parse_args()
    numba.set_num_threads(args.threads)
    attrs, data = read_subgame(args.subgame)
    _, strat_sum, _, _ = read_accumulators(args.subgame)
    log = []
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(attrs["vira_class"]))
    forest = _timed(lambda: build_raise_forest(
        np.arange(N_STRENGTHS), np.array(hands), pairs, weights,
        three_ties=attrs["params"]["three_ties"], raise_caps=tuple(attrs["raise_caps"])),
        log, step="forest build")
    if not np.array_equal(forest.infoset_key, data["infoset_key"]):
        raise SystemExit(f"{args.subgame}: the rebuilt forest lays out other information sets")
    forest.set_utilities(np.asarray(attrs["utility"], np.float64))
    strategy = forest_cfr.average_strategy(forest, np.asarray(strat_sum))

    class Result:  # what _off_path reads of a solve
        pass

    res = Result()
    res.strategy, res.value, res.nash_conv = strategy, attrs["value"], attrs["nash_conv"]
    refine = _timed(lambda: forest_refiner(forest, strategy), log, step="beliefs")

    def rung(tau, unreached):
        return _timed(lambda: refine(tau, unreached), log, step="refine", reach=tau,
                      unreached=unreached)

    def evaluate(policy):
        ev = _timed(lambda: forest_cfr.evaluate(forest, policy), log, step="evaluate")
        log[-1].update(value=ev["value"], nash_conv=ev["nash_conv"])
        return ev

    rec = _off_path(tuple(attrs["score"]), attrs["vira_class"], res, rung, evaluate,
                    attrs["params"]["target_nash_conv"])
    print(json.dumps(dict(
        subgame=str(args.subgame), threads=args.threads, nodes=forest.n_nodes,
        decision_nodes=int((forest.node_code >= 0).sum()), infosets=forest.n_infosets,
        slots=forest.n_slots, steps=log, rung=LADDER.index((rec["off_path_unreached"],
                                                            rec["off_path_reach"])),
        rungs_tried=rec["off_path_rungs"], off_path_sets=rec["off_path_sets"],
        refine_seconds=rec["off_path_seconds"], check_seconds=rec["off_path_check_seconds"],
        same_policy=bool(np.array_equal(rec["policy"], data["policy"])),
        same_mask=bool(np.array_equal(rec["off_path"], data["off_path"])),
        peak_mib=peak_mib())))


if __name__ == "__main__":
    main()
