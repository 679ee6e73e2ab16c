# strongsolve: `snakemake --cores all` solves the games of config.yaml (see README.md).
# A preset replaces parts of config.yaml:  snakemake --cores all --configfile workflow/presets/2048_2x3.yaml
# Forward-only 4x3 to age 200:             snakemake --cores all --configfile workflow/presets/2048_4x3.yaml --config max_age=200

configfile: "config.yaml"


from strongsolve.headline import headline


include: "workflow/rules/common.smk"
include: "workflow/rules/g2048.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/shutbox.smk"
include: "workflow/rules/ludo.smk"


# Truco's rules only in a run that plays it: its modules load numba (its CFR kernels), which took
# 0.3 s of every snakemake command otherwise. Its targets and rules then do not exist.
if "truco" in config["games"]:

    include: "workflow/rules/truco.smk"

else:
    TRUCO_TARGETS = []


envvars:
    *JOB_ENVVARS,


DEFAULT_TARGETS = {"g2048": G2048_TARGETS + REPORT_TARGETS, "shutbox": SHUTBOX_TARGETS,
                   "ludo": LUDO_TARGETS, "truco": TRUCO_TARGETS}
DEFAULT_TARGETS = [t for g in config["games"] for t in DEFAULT_TARGETS[g]]


rule all:
    default_target: True
    input:
        DEFAULT_TARGETS,


# On a terminal, one live line per running job under Snakemake's lines (common.smk, start_display);
# onstart runs only when jobs do (not for a dry run).
onstart:
    start_display()


# The answers of the run on the terminal, after Snakemake's own lines: each game of config["games"]
# whose result files exist (strongsolve/headline.py). Either way the run ends, the process exits
# then, not a second later (common.smk, exit_promptly).
onsuccess:
    print(headline(config["games"], g2048_dir=G2048_DIR, shutbox=SHUTBOX_TARGETS, ludo=LUDO_TARGETS,
                   truco=TRUCO_TARGETS), end="")
    exit_promptly()


onerror:
    exit_promptly()
