# Ludo / aeroplane chess: expected rolls of one piece on a board file, with the board's die
# and with each extra die of the config; two-player races with 1.. pieces each under optimal play,
# matched against the simple policies. Needs the global RESULTS and config["ludo"]
# (schemas/ludo.schema.yaml). The results directory is named after the board file:
# workflow/boards/X.yaml -> results/ludo_X/.

import os

LUDO = config["ludo"]
LUDO_BOARD = LUDO["board"]
LUDO_DIR = f"{RESULTS}/ludo_{os.path.splitext(os.path.basename(LUDO_BOARD))[0]}"
LUDO_DICE = {"board": None, **LUDO["extra_dice"]}
# races solved by values only (strongsolve.games.ludo.stages.values; three pieces on the classic board):
# their values in race_p<P>_values.zarr, read by `strongsolve ludo advise`, instead of a policy file
LUDO_VALUES_PIECES = list(LUDO["race_values_pieces"])
LUDO_EXPANSION_PIECES = [p for p in LUDO["race_pieces"] if p not in LUDO_VALUES_PIECES]
LUDO_TARGETS = [f"{LUDO_DIR}/rolls_{name}.json" for name in LUDO_DICE] + [
    f"{LUDO_DIR}/race_p{pieces}.json" for pieces in LUDO_EXPANSION_PIECES + LUDO_VALUES_PIECES]
# wildcard patterns of the two race rules; (?!) matches nothing (a rule with no piece count)
LUDO_EXPANSION_PATTERN = "|".join(map(str, LUDO_EXPANSION_PIECES)) or "(?!)"
LUDO_VALUES_PATTERN = "|".join(map(str, LUDO_VALUES_PIECES)) or "(?!)"


rule ludo_rolls:
    input:
        LUDO_BOARD,
    output:
        f"{LUDO_DIR}/rolls_{{die}}.json",
    log:
        f"{LUDO_DIR}/logs/rolls_{{die}}.log",
    wildcard_constraints:
        die="|".join(LUDO_DICE),
    params:
        die=lambda wildcards: f"--die {LUDO_DICE[wildcards.die]}" if LUDO_DICE[wildcards.die] else "",
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("strongsolve ludo rolls {input} {params.die} --output {output}")


rule ludo_race:
    input:
        LUDO_BOARD,
    output:
        json=f"{LUDO_DIR}/race_p{{pieces}}.json",
        policy=f"{LUDO_DIR}/race_p{{pieces}}_policy.npz",
    log:
        f"{LUDO_DIR}/logs/race_p{{pieces}}.log",
    benchmark:
        f"{LUDO_DIR}/logs/race_p{{pieces}}.benchmark.tsv"
    wildcard_constraints:
        pieces=LUDO_EXPANSION_PATTERN,
    params:
        tol=LUDO["tol"],
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged(
            "strongsolve ludo race {input} --pieces {wildcards.pieces} --tol {params.tol} "
            "--policy-out {output.policy} --output {output.json}"
        )


# A killed job resumes from race_p<P>_values.zarr.checkpoints (not an output: Snakemake keeps it)
rule ludo_race_values:
    input:
        LUDO_BOARD,
    output:
        json=f"{LUDO_DIR}/race_p{{pieces}}.json",
        values=directory(f"{LUDO_DIR}/race_p{{pieces}}_values.zarr"),
    log:
        f"{LUDO_DIR}/logs/race_p{{pieces}}.log",
    benchmark:
        f"{LUDO_DIR}/logs/race_p{{pieces}}.benchmark.tsv"
    wildcard_constraints:
        pieces=LUDO_VALUES_PATTERN,
    threads: workflow.cores
    params:
        tol=LUDO["tol"],
        plain="" if LUDO["race_values_extrapolation"] else "--no-extrapolation",
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged(
            "strongsolve ludo race {input} --pieces {wildcards.pieces} --tol {params.tol} "
            "--values-out {output.values} --threads {threads} {params.plain} --output {output.json}"
        )
