# Truco Paulista (issue 9): abstraction sizes, and the 11 row of the subgame grid by discounted CFR.
# One job per group of the 11 row: group 11 is the 11-11 hand, group x (0..10) the two hands of
# eleven 11-x and x-11, which depend on each other through three tied tricks (the roles swap, no
# points) and are iterated to a fixed point inside the job. Group x needs the groups x + 1 and x + 3
# (the scores after a fold and after a lost hand of eleven), so the jobs form a chain 11, 10, ..., 0.
# Each group is a directory of zarr subgames (s<a>-<b>_v<c>.zarr), renamed into place when complete.
# Globals from the Snakefile: RESULTS (results directory), config["truco"].
import json

from strongsolve.games.truco.subgames import group_dependencies

TRUCO = config["truco"]
TRUCO_DIR = f"{RESULTS}/truco"
TRUCO_PARAMS = json.dumps({k: TRUCO[k] for k in ("target_nash_conv", "max_iterations", "check_every",
                                                 "fixed_point_tol", "max_fixed_point_rounds",
                                                 "three_ties", "eleven_eleven", "workers")})
TRUCO_GROUPS = [str(x) for x in range(11, -1, -1)]

TRUCO_TARGETS = [f"{TRUCO_DIR}/abstraction_sizes.csv"]
if TRUCO["solve_row11"]:
    TRUCO_TARGETS.append(f"{TRUCO_DIR}/row11_summary.csv")


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
