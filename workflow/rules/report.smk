# Report plots of the 2048 run (issue 6): positions per age (log scale), bits per afterstate when the
# layers carry the Elias-Fano size, afterstate values per age (solved runs only).
# Needs common.smk and g2048.smk (G2048_DIR, G2048_OUTPUTS, G2048_SOLVED).

from strongsolve.games.g2048.plots import plot_names

REPORT_TARGETS = [f"{G2048_DIR}/plots/{name}" for name in plot_names(G2048_SOLVED)]


rule g2048_plots:
    input:
        G2048_OUTPUTS,
    output:
        REPORT_TARGETS,
    log:
        f"{G2048_DIR}/logs/plots.log",
    priority: G2048_PRIORITY
    params:
        run=lambda wildcards, input: os.path.dirname(input[0]),  # the run directory of summary.csv
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("strongsolve 2048 plots {params.run}")
