# Truco Paulista: abstraction sizes, and the 11 row of the subgame grid by discounted CFR.
# One job per group of the 11 row: group 11 is the 11-11 hand, group x (0..10) the two hands of
# eleven 11-x and x-11, which depend on each other through three tied tricks (the roles swap, no
# points) and are iterated to a fixed point inside the job. Group x needs the groups x + 1 and x + 3
# (the scores after a fold and after a lost hand of eleven), so the jobs form a chain 11, 10, ..., 0.
# Each group is a directory of zarr subgames (s<a>-<b>_v<c>.zarr), renamed into place when complete.
# Globals from the Snakefile: RESULTS (results directory), config["truco"].
# The rest of the score grid: `truco.scores: {min_score: m}` solves every score with
# min(a, b) >= m, one job per tier of the pruned raise ladder (row11 for a small deck, t1: min score
# 9-10, t2: 6-8, t3: 3-5, t4: 0-2), each needing the tier above; a job skips the groups whose
# subgames are all stored (resumable per group, each subgame renamed into place) and writes
# <root>/truco/grid/<tier>_min<m>.csv. For the full deck the 11 row comes from the jobs above;
# `truco.deck: [cards]` solves a small deck under results/truco_deck_<cards>.
import json

from strongsolve.games.truco.stages.grid import (TIERS, TIER_LOWEST_MIN, deck_from_config,
                                                 deck_root, tier_csv, tier_inputs)
from strongsolve.games.truco.sizes import tier_job_mb
from strongsolve.games.truco.subgames import group_dependencies

TRUCO = config["truco"]
TRUCO_DIR = f"{RESULTS}/truco"
TRUCO_PARAMS = json.dumps({k: TRUCO[k] for k in ("target_nash_conv", "max_iterations", "check_every",
                                                 "fixed_point_tol", "max_fixed_point_rounds",
                                                 "three_ties", "eleven_eleven", "prune",
                                                 "face_down")})
# not among them: `workers` (processes side by side, from each job's threads), which changes no value,
# so changing it re-solves nothing
# the grid's tier jobs add what only raise trees use (the solver) and the region's own precision
# (truco.scores), so the 11 row already solved is not re-solved when either changes
TRUCO_GRID_PARAMS = json.dumps({**json.loads(TRUCO_PARAMS), "solver": TRUCO["solver"],
                                **{k: v for k, v in (TRUCO["scores"] or {}).items()
                                   if k in ("target_nash_conv", "max_iterations") and v is not None}})
TRUCO_GROUPS = [str(x) for x in range(11, -1, -1)]
TRUCO_DECK = deck_from_config(TRUCO["deck"])
TRUCO_DECK_JSON = json.dumps(TRUCO["deck"])
TRUCO_GRID = f"{deck_root(RESULTS, TRUCO_DECK)}/truco/grid"
TRUCO_MIN = None if TRUCO["scores"] is None else TRUCO["scores"].get("min_score", 0)


# the full deck's 11 row comes from the row-11 group jobs; a tier job needs only the groups it reads
TRUCO_ROW11 = f"{TRUCO_DIR}/row11" if TRUCO_DECK.name == "full" else None


TRUCO_TARGETS = [f"{TRUCO_DIR}/abstraction_sizes.csv"]
if TRUCO["solve_row11"]:
    TRUCO_TARGETS.append(f"{TRUCO_DIR}/row11_summary.csv")
elif TRUCO_DECK.name == "full":  # a few groups only (config.yaml's default: the 11-11 hand, so the
    # lab's atlas is not empty); a small deck's 11 row is its tier job's (below), not these
    TRUCO_TARGETS += [f"{TRUCO_DIR}/row11/group_{x}" for x in TRUCO["row11_groups"]]
# every tier holding a score with min(a, b) >= TRUCO_MIN (a tier's highest minimum is 2 above its
# lowest; the 11 row's is 11); the full deck's 11 row comes from the row-11 jobs
TRUCO_TIER_CSVS = [] if TRUCO_MIN is None else [
    tier_csv(TRUCO_GRID, t, TRUCO_MIN) for t in TIERS[1 if TRUCO_DECK.name == "full" else 0:]
    if (11 if t == "row11" else TIER_LOWEST_MIN[t] + 2) >= TRUCO_MIN]
if TRUCO_MIN is not None:
    TRUCO_TARGETS += TRUCO_TIER_CSVS + [f"{deck_root(RESULTS, TRUCO_DECK)}/truco/grid_summary.csv"]


rule truco_abstraction_sizes:
    output:
        f"{TRUCO_DIR}/abstraction_sizes.csv",
    log:
        f"{TRUCO_DIR}/logs/abstraction_sizes.log",
    benchmark:
        f"{TRUCO_DIR}/benchmarks/abstraction_sizes.tsv"
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("strongsolve truco abstraction-sizes --out {output}")


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
            "strongsolve truco solve-group --x {wildcards.x} --results {params.results} "
            "--params '{params.solver}' --workers {threads}"
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
        logged("strongsolve truco row11-summary --results {params.results} --out {output}")


rule truco_grid_tier:
    input:
        lambda wildcards: tier_inputs(TRUCO_GRID, wildcards.tier, TRUCO_MIN, TRUCO_ROW11),
    output:
        f"{TRUCO_GRID}/{{tier}}_min{{lo}}.csv",
    log:
        f"{TRUCO_GRID}/logs/{{tier}}_min{{lo}}.log",
    benchmark:
        f"{TRUCO_GRID}/benchmarks/{{tier}}_min{{lo}}.tsv"
    wildcard_constraints:
        tier="row11|t1|t2|t3|t4",
        lo=r"\d+",
    # each worker process runs the forest CFR on `truco.threads` numba threads: NUMBA_NUM_THREADS is
    # the job's threads (which Snakemake may lower to --cores) shared by the workers
    threads: TRUCO["workers"] * TRUCO["threads"]
    resources:
        # the full deck: the peak of the tier's solver per worker (games/truco/sizes.py);
        # a small deck: truco.mem_mb
        mem_mb=lambda wildcards: TRUCO["workers"] * (
            tier_job_mb(wildcards.tier, TRUCO["solver"])
            if TRUCO_DECK.name == "full"
            and wildcards.tier != "row11" else TRUCO["mem_mb"]),
    params:
        solver=TRUCO_GRID_PARAMS,
        deck=TRUCO_DECK_JSON,
        # the results directory: <results>/truco/grid/<tier>.csv, or <results>/truco_<deck>/truco/grid/..
        results=lambda wildcards, output: Path(output[0]).parents[2 if TRUCO_DECK.name == "full" else 3],
        workers=lambda wildcards, threads: max(1, threads // TRUCO["threads"]),
        numba_threads=lambda wildcards, threads: max(1, threads // max(1, threads // TRUCO["threads"])),
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("env NUMBA_NUM_THREADS={params.numba_threads} strongsolve truco grid-tier --tier {wildcards.tier} "
               "--min-score {wildcards.lo} --results {params.results} --deck '{params.deck}' "
               "--params '{params.solver}' --workers {params.workers} --out {output}"
               + (" --keep-accumulators" if TRUCO["keep_accumulators"] else ""))


rule truco_grid_summary:
    input:
        TRUCO_TIER_CSVS,
        # the 11-row scores of the region, summarized with the rest (full deck: their group jobs')
        [] if TRUCO_ROW11 is None or TRUCO_MIN is None else
        [f"{TRUCO_ROW11}/group_{x}" for x in TRUCO_GROUPS if int(x) >= TRUCO_MIN],
    output:
        f"{deck_root(RESULTS, TRUCO_DECK)}/truco/grid_summary.csv",
    log:
        f"{TRUCO_GRID}/logs/grid_summary.log",
    params:
        deck=TRUCO_DECK_JSON,
        min_score=TRUCO_MIN,
        # <results>/truco/grid_summary.csv, or <results>/truco_<deck>/truco/grid_summary.csv
        results=lambda wildcards, output: Path(output[0]).parents[1 if TRUCO_DECK.name == "full" else 2],
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("strongsolve truco grid-summary --results {params.results} "
               "--min-score {params.min_score} --deck '{params.deck}' --out {output}")
