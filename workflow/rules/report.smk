# Report plots of the 2048 run: positions per age (log scale), bits per afterstate when the
# layers carry the Elias-Fano size, afterstate values per age (solved runs only).
# Needs common.smk and g2048.smk (G2048_DIR, G2048_STAGE, G2048_BLOCKS, G2048_PLOTS, G2048_ONE_JOB).
# The plots read the layers' attributes only (counts, and the values' min/mean/max), so they need
# the last stage's blocks, not the report: both jobs run side by side. A run of one block
# gets them from its one job (g2048_solve, in g2048.smk).

REPORT_TARGETS = G2048_PLOTS

if not G2048_ONE_JOB:

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
