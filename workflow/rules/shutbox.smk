# Shut the Box: the flip-one game (cards 1..n, flip x, y or x+y; minimise rolls) solved by
# policy iteration and checked by value iteration and an exact sparse solve, with its policy table;
# and the standard game (shut tiles summing to the roll) for both objectives, with and without the
# one-die rule. Needs the global RESULTS and config["shutbox"] (schemas/shutbox.schema.yaml).

SHUTBOX = config["shutbox"]
SHUTBOX_DIR = f"{RESULTS}/shutbox_{SHUTBOX['cards']}"
SHUTBOX_STANDARD = [f"{objective}{'_one_die' if one_die else ''}"
                    for objective in SHUTBOX["standard_objectives"]
                    for one_die in SHUTBOX["standard_one_die"]]
SHUTBOX_TARGETS = [f"{SHUTBOX_DIR}/flip_one.json"] + [
    f"{SHUTBOX_DIR}/standard_{SHUTBOX['standard_cards']}_{variant}.json"
    for variant in SHUTBOX_STANDARD]


rule shutbox_flip_one:
    output:
        f"{SHUTBOX_DIR}/flip_one.json",
    log:
        f"{SHUTBOX_DIR}/logs/flip_one.log",
    params:
        cards=SHUTBOX["cards"],
        faces=SHUTBOX["faces"],
        method=SHUTBOX["method"],
        tol=SHUTBOX["tol"],
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged(
            "strongsolve shutbox --rule flip-one --objective min-rolls "
            "--cards {params.cards} --faces {params.faces} --method {params.method} --tol {params.tol} "
            "--check --policy --output {output}"
        )


rule shutbox_standard:
    output:
        f"{SHUTBOX_DIR}/standard_{{tiles}}_{{objective}}{{one_die,(_one_die)?}}.json",
    log:
        f"{SHUTBOX_DIR}/logs/standard_{{tiles}}_{{objective}}{{one_die}}.log",
    wildcard_constraints:
        tiles=r"\d+",
        objective="max-shut|min-sum",
    params:
        faces=SHUTBOX["faces"],
        tol=SHUTBOX["tol"],
        one_die=lambda wildcards: "--one-die" if wildcards.one_die else "",
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged(
            "strongsolve shutbox --rule standard --objective {wildcards.objective} "
            "--cards {wildcards.tiles} --faces {params.faces} {params.one_die} --tol {params.tol} "
            "--check --policy --output {output}"
        )
