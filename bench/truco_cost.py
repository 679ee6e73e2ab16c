"""Cost map of the whole Truco grid, projected from measured numbers.

Inputs, all measured here:

- the tree size of each tier of the pruned raise ladder (nodes, information sets, action slots,
  deals per vira class): ``games/truco/sizes.py`` ``FULL_DECK_TIERS`` (``strongsolve truco sizes``);
- the solved subgames of a tier (``results/truco/grid_summary.csv``: CPU seconds, iterations, nodes,
  peak RSS of every subgame, fixed-point rounds included), from which the CPU seconds per node of a
  subgame solved to its target are taken;
- the stored subgames' bytes on disk per action slot (``du`` of the solved tier's zarr stores);
- the solver's peak memory per job (``games/truco/sizes.py``: ``public_peak_mib`` for the
  public-tree CFR, measured in t1 and t2 and extrapolated below, or ``forest_peak_bytes``), or the
  off-path refinement's (``refinement_peak_bytes``) where larger.

The projection scales the measured CPU seconds per node by each tier's nodes. Assumptions (printed
with the table): every tier needs as many CFR iterations as the measured one (``--iteration-factor``
scales the deeper tiers, e.g. from a measured slice); a job runs ``--threads`` numba threads at the
measured speed-up; a machine runs as many jobs as its cores and memory allow; the scores of one
total a + b are independent (the grid's dependency order), so a tier's wall time is at least its
levels times one subgame's wall time.

The CPU per node is that of the solver the measured tier ran (``--solver``); projecting it to t3 and
t4 assumes that solver there too (``truco.solver: auto`` takes the forest there today).

    python bench/truco_cost.py --summary results/truco/grid_summary.csv --tier t1 --speedup 1.8
"""

import argparse
import csv
import json
import math
import subprocess

from strongsolve.games.truco.stages.grid import TIERS, grid_path, tier_groups
from strongsolve.games.truco.sizes import (FULL_DECK_TIERS, forest_peak_bytes, public_peak_mib,
                                          refinement_peak_bytes)

MACHINES = {  # name: (cores, memory GiB, nodes)
    "workstation 64 cores / 256 GiB": (64, 256, 1),
    "SLURM, 16 nodes of 32 cores / 192 GiB": (32, 192, 16),
}


def measured_tier(summary, tier, results):
    """CPU seconds per node per subgame, mean iterations, peak RSS and disk bytes per slot of the
    solved subgames of ``tier`` in ``summary``."""
    with open(summary) as f:
        rows = [r for r in csv.DictReader(f) if r["tier"] == tier]
    if not rows:
        raise SystemExit(f"no subgame of tier {tier} in {summary}: solve it first "
                         f"(snakemake --cores all --config games='[truco]' truco='{{scores: {{min_score: 9}}}}')")
    cpu = sum(float(r["cpu_seconds"]) for r in rows)
    nodes = sum(int(r["n_nodes"]) for r in rows)
    disk = sum(int(subprocess.run(["du", "-sb", str(grid_path(results, int(r["mano"]), int(r["pe"]),
                                                                   int(r["vira_class"])))],
                                  capture_output=True, text=True, check=True).stdout.split()[0])
               for r in rows)
    return dict(subgames=len(rows), cpu_s_per_node=cpu / nodes, cpu_s=cpu, nodes=nodes,
                iterations_mean=sum(int(r["iterations"]) for r in rows) / len(rows),
                nash_conv_max=max(float(r["nash_conv"]) for r in rows),
                peak_rss_mib_max=max(float(r["max_rss_mib"]) for r in rows), disk_bytes=disk)


def job_gib(tier, solver):
    """Peak memory of one job of ``tier`` ("t1".."t4") with ``solver`` ("public" or "forest"): the
    solve's or the off-path refinement's, the larger."""
    nodes, infosets, slots, deals = FULL_DECK_TIERS[int(tier[1:])]
    if solver == "public":
        solve = public_peak_mib(int(tier[1:])) * 2 ** 20
    else:
        solve = forest_peak_bytes(nodes, slots, infosets, deals)
    return max(solve, refinement_peak_bytes(int(tier[1:]))) / 2 ** 30


def project(sizes, measured, factor, threads, speedup, levels, solver="forest"):
    """Per tier: subgames, CPU hours, memory per job (GiB), disk (GB), one subgame's wall hours."""
    out = {}
    for t in TIERS[1:]:
        nodes, infosets, slots, deals = sizes[t]
        s = dict(nodes=nodes, infosets=infosets, action_slots=slots, deals=deals)
        n_sub = sum(len(g) for g in tier_groups(t)) * 9
        cpu_sub = measured["cpu_s_per_node"] * s["nodes"] * factor.get(t, 1.0)
        out[t] = dict(subgames=n_sub, nodes_per_subgame=s["nodes"],
                      cpu_hours=n_sub * cpu_sub / 3600,
                      job_gib=job_gib(t, solver),
                      disk_gb=n_sub * s["action_slots"] * measured["disk_bytes_per_slot"] / 1e9,
                      subgame_wall_hours=cpu_sub / speedup / 3600, levels=levels[t])
    return out


def wall_hours(tiers, cores, mem_gib, nodes, threads):
    """Tiers run one after another; within a tier the jobs fill the machine, and the tier takes at
    least its levels (totals a + b) times one subgame's wall time."""
    total = 0.0
    for t in tiers.values():
        per_node = max(1, min(cores // threads, math.floor(mem_gib / t["job_gib"])))
        slots = per_node * nodes
        throughput = t["cpu_hours"] / (slots * threads) if t["job_gib"] <= mem_gib else math.inf
        total += max(throughput, t["levels"] * t["subgame_wall_hours"])
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--summary", required=True, help="grid_summary.csv with a solved tier")
    ap.add_argument("--results", default="results")
    ap.add_argument("--tier", default="t1", help="the measured tier")
    ap.add_argument("--threads", type=int, default=2, help="numba threads per job")
    ap.add_argument("--speedup", type=float, required=True, help="measured speed-up of --threads")
    ap.add_argument("--iteration-factor", default="",
                    help="e.g. t2=1.5,t3=2: iterations of a tier relative to the measured one")
    ap.add_argument("--solver", choices=("public", "forest"), default="public",
                    help="the solver the measured tier ran (its memory per job is projected)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sizes = {f"t{k}": v for k, v in FULL_DECK_TIERS.items()}
    factor = {k: float(v) for k, v in (p.split("=") for p in args.iteration_factor.split(",") if p)}
    m = measured_tier(args.summary, args.tier, args.results)
    slots = sizes[args.tier][2]
    m["disk_bytes_per_slot"] = m["disk_bytes"] / (m["subgames"] * slots)
    levels = {t: len({a + b for g in tier_groups(t) for a, b in g}) for t in TIERS[1:]}
    tiers = project(sizes, m, factor, args.threads, args.speedup, levels, args.solver)
    machines = {name: wall_hours(tiers, *spec, args.threads) for name, spec in MACHINES.items()}
    result = dict(measured=m, tiers=tiers, wall_hours=machines, threads=args.threads, solver=args.solver,
                  speedup=args.speedup, iteration_factor=factor)
    if args.json:
        print(json.dumps(result))
        return
    print("| tier | subgames | nodes per subgame | memory per job | CPU hours | disk |")
    print("|---|---|---|---|---|---|")
    for t, r in tiers.items():
        print(f"| {t} | {r['subgames']} | {r['nodes_per_subgame']:,} | {r['job_gib']:.1f} GiB | "
              f"{r['cpu_hours']:,.0f} | {r['disk_gb']:.1f} GB |")
    tot = sum(r["cpu_hours"] for r in tiers.values())
    print(f"| all | {sum(r['subgames'] for r in tiers.values())} | | | {tot:,.0f} | "
          f"{sum(r['disk_gb'] for r in tiers.values()):.1f} GB |")
    for name, h in machines.items():
        print(f"{name}: {h:,.1f} h wall")


if __name__ == "__main__":
    main()
