# Report plots of the 2048 run (issue 6): positions per age (log scale), bits per afterstate when the
# layers carry the Elias-Fano size, afterstate values per age (solved runs only).
# Needs common.smk and g2048.smk (G2048_DIR, G2048_STAGE, G2048_BLOCKS, G2048_SOLVED).
# The plots read the layers' attributes only (counts, and the values' min/mean/max), so they need
# the last stage's blocks, not the report: both jobs run side by side (issue 20).

from strongsolve.games.g2048.plots import plot_names

REPORT_TARGETS = [f"{G2048_DIR}/plots/{name}" for name in plot_names(G2048_SOLVED)]


rule g2048_plots:
    input:
        [f"{G2048_DIR}/{G2048_STAGE}/block_{block_name(b)}.json" for b in G2048_BLOCKS],
    output:
        REPORT_TARGETS,
    log:
        f"{G2048_DIR}/logs/plots.log",
    priority: G2048_PRIORITY
    params:
        run=lambda wildcards, output: os.path.dirname(os.path.dirname(output[0])),  # <run>/plots/x.png
    conda:
        "../envs/strongsolve.yaml"
    shell:
        logged("strongsolve 2048 plots {params.run}")
