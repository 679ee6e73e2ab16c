# 2048 strong solve: forward pass by age, backward pass by decreasing age, report.
# One job per block of consecutive ages; each job writes one zarr layer per age and, last, a block
# manifest (the job's declared output). A killed job leaves complete layers (atomic renames) that
# the rerun verifies and keeps, so only missing ages are computed again.

from strongsolve.games.g2048.stages.plots import plot_names

G2048_ARGS = (f"{G2048_DIR} --rows {G['rows']} --cols {G['cols']} --p2 {G['spawn']['p2']!r} "
              f"--target-tile {G2048_RUN.target_tile}")
G2048_STAGE_ARGS = (f"--chunk {config['dask']['chunk']}" if config["dask"]["chunk"] else "") + (
    f" --memory-limit {config['memory_limit']}" if config["memory_limit"] else "") + (
    f" --scheduler-address {config['dask']['scheduler_address']}" if config["dask"]["scheduler_address"] else "")
# With a memory_limit, glibc must give freed arrays back at once: its mmap threshold otherwise grows
# to 32 MiB after the first large free, and the sort buffers below that stay in the heap (4x3 forward
# to age 200 with 256 MiB: peak RSS 702 MiB without this, 568 MiB with it; remeasured with
# it on 2026-12-01: 618 MiB, see memory_limit in workflow/schemas/config.schema.yaml).
G2048_ENV = "MALLOC_MMAP_THRESHOLD_=1048576 " if config["memory_limit"] else ""
# The 2048 solve is the main job of a run: its jobs go before the other games' (Snakemake starts the
# ready job of highest priority first), so its answer does not wait behind a Ludo race.
G2048_PRIORITY = 10


G2048_STAGE = "values" if G2048_SOLVED else "afterstates"
G2048_OUTPUTS = [f"{G2048_DIR}/summary.csv"] + ([f"{G2048_DIR}/solution.json"] if G2048_SOLVED else [])
G2048_PLOTS = [f"{G2048_DIR}/plots/{name}" for name in plot_names(G2048_SOLVED)]

# A run whose ages make one block (every 3x3 run: 1,021 ages, ages_per_job 1024) is solved by one
# job, forward, backward, report and plots in one process (`strongsolve 2048 solve-block --report`):
# no other start-up, and the afterstates stay in memory for the backward pass instead of being read
# back (3x3 in 44 s wall against 12.5 s of kernels; the report and plots as jobs of their
# own took 1.5 s more, mostly imports and JIT loads). Larger runs keep a job per block and stage, so
# a kill costs at most a block of one stage. Both ways write the same layers, manifests and report.
G2048_ONE_JOB = G2048_SOLVED and len(G2048_BLOCKS) == 1

if G2048_ONE_JOB:
    G2048_BLOCK = block_name(G2048_BLOCKS[0])

    rule g2048_solve:
        output:
            f"{G2048_DIR}/afterstates/block_{G2048_BLOCK}.json",
            f"{G2048_DIR}/values/block_{G2048_BLOCK}.json",
            G2048_OUTPUTS,
            G2048_PLOTS,
        log:
            f"{G2048_DIR}/logs/solve_{G2048_BLOCK}.log",
        threads: G["threads"]
        priority: G2048_PRIORITY
        resources:
            mem_mb=G["mem_mb"],
        params:
            run=G2048_ARGS,
            stage=G2048_STAGE_ARGS,
            env=G2048_ENV,
        conda:
            "../envs/strongsolve.yaml"
        shell:
            logged(
                "env {params.env}STRONGSOLVE_THREADS={threads} strongsolve 2048 solve-block {params.run} "
                f"{{params.stage}} --ages {G2048_BLOCK} --report"
            )

else:

    rule g2048_forward:
        input:
            forward_inputs,
        output:
            f"{G2048_DIR}/afterstates/block_{{first}}-{{last}}.json",
        log:
            f"{G2048_DIR}/logs/forward_{{first}}-{{last}}.log",
        wildcard_constraints:
            first=r"\d{6}",
            last=r"\d{6}",
        threads: G["threads"]
        priority: G2048_PRIORITY
        resources:
            mem_mb=G["mem_mb"],
        params:
            run=G2048_ARGS,
            stage=G2048_STAGE_ARGS,
            env=G2048_ENV,
        conda:
            "../envs/strongsolve.yaml"
        shell:
            logged(
                "env {params.env}STRONGSOLVE_THREADS={threads} strongsolve 2048 forward {params.run} "
                "{params.stage} --ages {wildcards.first}-{wildcards.last}"
            )


    rule g2048_backward:
        input:
            backward_inputs,
        output:
            f"{G2048_DIR}/values/block_{{first}}-{{last}}.json",
        log:
            f"{G2048_DIR}/logs/backward_{{first}}-{{last}}.log",
        wildcard_constraints:
            first=r"\d{6}",
            last=r"\d{6}",
        threads: G["threads"]
        priority: G2048_PRIORITY
        resources:
            mem_mb=G["mem_mb"],
        params:
            run=G2048_ARGS,
            stage=G2048_STAGE_ARGS,
            env=G2048_ENV,
        conda:
            "../envs/strongsolve.yaml"
        shell:
            logged(
                "env {params.env}STRONGSOLVE_THREADS={threads} strongsolve 2048 backward {params.run} "
                "{params.stage} --ages {wildcards.first}-{wildcards.last}"
            )


# Optimal-play store: not a default target; `snakemake --cores all g2048_policy_all`
rule g2048_policy:
    input:
        policy_inputs,
    output:
        f"{G2048_DIR}/policy/block_{{first}}-{{last}}.json",
    log:
        f"{G2048_DIR}/logs/policy_{{first}}-{{last}}.log",
    wildcard_constraints:
        first=r"\d{6}",
        last=r"\d{6}",
    threads: G["threads"]
    resources:
        mem_mb=G["mem_mb"],
    params:
        run=G2048_ARGS,
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("env STRONGSOLVE_THREADS={threads} strongsolve 2048 policy {params.run} "
               "--ages {wildcards.first}-{wildcards.last}")


rule g2048_policy_all:
    input:
        [f"{G2048_DIR}/policy/block_{block_name(b)}.json" for b in G2048_BLOCKS] if G2048_SOLVED else [],


if not G2048_ONE_JOB:

    rule g2048_report:
        input:
            [f"{G2048_DIR}/{G2048_STAGE}/block_{block_name(b)}.json" for b in G2048_BLOCKS],
        output:
            G2048_OUTPUTS,
        log:
            f"{G2048_DIR}/logs/report.log",
        priority: G2048_PRIORITY
        params:
            run=G2048_ARGS,
            max_age="" if G2048_SOLVED else f"--max-age {MAX_AGE}",
        conda:
            "../envs/strongsolve.yaml"
        shell:
            logged("strongsolve 2048 report {params.run} {params.max_age}")


# The report, and the block manifests of every stage run: a run whose manifest was deleted is made
# whole again by a plain rerun (Snakemake reruns a job for its requested outputs only, and in a run
# of one block no other job requests the manifests its one job writes).
G2048_STAGES = ["afterstates", "values"] if G2048_SOLVED else ["afterstates"]
G2048_TARGETS = G2048_OUTPUTS + [f"{G2048_DIR}/{stage}/block_{block_name(b)}.json"
                                 for b in G2048_BLOCKS for stage in G2048_STAGES]
