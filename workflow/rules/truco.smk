# Truco Paulista (issue 9): abstraction sizes, and the 11 row of the subgame grid by discounted CFR.
# One job per group of the 11 row: group 11 is the 11-11 hand, group x (0..10) the two hands of
# eleven 11-x and x-11, which depend on each other through three tied tricks (the roles swap, no
# points) and are iterated to a fixed point inside the job. Group x needs the groups x + 1 and x + 3
# (the scores after a fold and after a lost hand of eleven), so the jobs form a chain 11, 10, ..., 0.
# Each group is a directory of zarr subgames (s<a>-<b>_v<c>.zarr), renamed into place when complete.
# Globals from the Snakefile: RESULTS (results directory), config["truco"].
# The rest of the score grid (issue 21): `truco.scores: {min_score: m}` solves every score with
# min(a, b) >= m, one job per tier of the pruned raise ladder (row11 for a small deck, t1: min score
# 9-10, t2: 6-8, t3: 3-5, t4: 0-2), each needing the tier above; a job skips the groups whose
# subgames are all stored (resumable per group, each subgame renamed into place) and writes
# <root>/truco/grid/<tier>_min<m>.csv. For the full deck the 11 row comes from the jobs above;
# `truco.deck: [cards]` solves a small deck under results/truco_deck_<cards>.
import json

from strongsolve.games.truco.grid import (TIERS, TIER_LOWEST_MIN, deck_from_config, deck_root, tier_csv,
                                          tier_inputs)
from strongsolve.games.truco.subgames import group_dependencies

TRUCO = config["truco"]
TRUCO_DIR = f"{RESULTS}/truco"
TRUCO_PARAMS = json.dumps({k: TRUCO[k] for k in ("target_nash_conv", "max_iterations", "check_every",
                                                 "fixed_point_tol", "max_fixed_point_rounds",
                                                 "three_ties", "eleven_eleven", "workers", "prune",
                                                 "face_down")})
TRUCO_GROUPS = [str(x) for x in range(11, -1, -1)]
TRUCO_DECK = deck_from_config(TRUCO["deck"])
TRUCO_DECK_JSON = json.dumps(TRUCO["deck"])
TRUCO_GRID = f"{deck_root(RESULTS, TRUCO_DECK)}/truco/grid"
TRUCO_MIN = None if TRUCO["scores"] is None else TRUCO["scores"].get("min_score", 0)


TRUCO_ROW11_SUMMARY = f"{TRUCO_DIR}/row11_summary.csv" if TRUCO_DECK.name == "full" else None


TRUCO_TARGETS = [f"{TRUCO_DIR}/abstraction_sizes.csv"]
if TRUCO["solve_row11"]:
    TRUCO_TARGETS.append(f"{TRUCO_DIR}/row11_summary.csv")
elif TRUCO_DECK.name == "full":  # a few groups only (config.yaml's default: the 11-11 hand, so the
    # lab's atlas is not empty); a small deck's 11 row is its tier job's (below), not these
    TRUCO_TARGETS += [f"{TRUCO_DIR}/row11/group_{x}" for x in TRUCO["row11_groups"]]
if TRUCO_MIN is not None:
    # every tier holding a score with min(a, b) >= TRUCO_MIN (a tier's highest minimum is 2 above
    # its lowest; the 11 row's is 11); the full deck's 11 row comes from the row-11 jobs
    TRUCO_TARGETS += [tier_csv(TRUCO_GRID, t, TRUCO_MIN) for t in TIERS[1 if TRUCO_DECK.name == "full" else 0:]
                      if (11 if t == "row11" else TIER_LOWEST_MIN[t] + 2) >= TRUCO_MIN]


rule truco_abstraction_sizes:
    output:
        f"{TRUCO_DIR}/abstraction_sizes.csv",
    log:
        f"{TRUCO_DIR}/logs/abstraction_sizes.log",
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("python -m strongsolve.games.truco.solve sizes --out {output}")


rule truco_row11_group:
    input:
        lambda wc: [f"{TRUCO_DIR}/row11/group_{d}" for d in group_dependencies(int(wc.x))],
    output:
        directory(f"{TRUCO_DIR}/row11/group_{{x}}"),
    log:
        f"{TRUCO_DIR}/logs/row11_group_{{x}}.log",
    benchmark:
        f"{TRUCO_DIR}/benchmarks/row11_group_{{x}}.tsv"
    wildcard_constraints:
        x=r"\d+",
    threads: TRUCO["workers"]
    resources:
        mem_mb=TRUCO["mem_mb"] * TRUCO["workers"],
    params:
        solver=TRUCO_PARAMS,
        results=lambda wildcards, output: Path(output[0]).parents[2],  # <results>/truco/row11/group_x
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged(
            "python -m strongsolve.games.truco.solve group --x {wildcards.x} --results {params.results} "
            "--params '{params.solver}'"
        )


rule truco_row11_summary:
    input:
        expand(f"{TRUCO_DIR}/row11/group_{{x}}", x=TRUCO_GROUPS),
    output:
        f"{TRUCO_DIR}/row11_summary.csv",
    log:
        f"{TRUCO_DIR}/logs/row11_summary.log",
    params:
        results=lambda wildcards, output: Path(output[0]).parents[1],  # <results>/truco/row11_summary.csv
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("python -m strongsolve.games.truco.solve summary --results {params.results} --out {output}")


rule truco_grid_tier:
    input:
        lambda wildcards: tier_inputs(TRUCO_GRID, wildcards.tier, TRUCO_MIN, TRUCO_ROW11_SUMMARY),
    output:
        f"{TRUCO_GRID}/{{tier}}_min{{lo}}.csv",
    log:
        f"{TRUCO_GRID}/logs/{{tier}}_min{{lo}}.log",
    benchmark:
        f"{TRUCO_GRID}/benchmarks/{{tier}}_min{{lo}}.tsv"
    wildcard_constraints:
        tier="row11|t1|t2|t3|t4",
        lo=r"\d+",
    threads: TRUCO["workers"]
    resources:
        mem_mb=TRUCO["mem_mb"] * TRUCO["workers"],
    params:
        solver=TRUCO_PARAMS,
        deck=TRUCO_DECK_JSON,
        # the results directory: <results>/truco/grid/<tier>.csv, or <results>/truco_<deck>/truco/grid/..
        results=lambda wildcards, output: Path(output[0]).parents[2 if TRUCO_DECK.name == "full" else 3],
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("python -m strongsolve.games.truco.grid tier --tier {wildcards.tier} "
               "--min-score {wildcards.lo} --results {params.results} --deck '{params.deck}' "
               "--params '{params.solver}' --out {output}")
