# Shared helpers: validated config, run directory, age blocks.
import sys
from pathlib import Path

from strongsolve.config import ConfigError, apply_preset, validate
from strongsolve.games.g2048.pipeline import blocks
from strongsolve.games.g2048.run import Run, run_name

PYTHON = sys.executable  # the interpreter running Snakemake: the project's .venv

try:
    config.update(validate(apply_preset(config, Path(workflow.basedir) / "workflow/presets"),
                           Path(workflow.basedir) / "workflow/schemas"))
except ConfigError as err:
    sys.exit(f"strongsolve: config error: {err}")

RESULTS = config["results"]
G = config["g2048"]
G2048_RUN = Run(
    Path(RESULTS) / run_name(G["rows"], G["cols"], G["spawn"]["p2"],
                             G["target_tile"] if G["objective"] == "reach_tile" else 0),
    G["rows"], G["cols"], G["spawn"]["p2"],
    G["target_tile"] if G["objective"] == "reach_tile" else 0,
)
G2048_DIR = str(G2048_RUN.directory)
MAX_AGE = config["max_age"]
G2048_SOLVED = MAX_AGE is None or MAX_AGE >= G2048_RUN.last_age
G2048_BLOCKS = blocks(G2048_RUN.ages(None if G2048_SOLVED else MAX_AGE), G["ages_per_job"])


def block_of(age):
    """The (first, last) block holding ``age``, or None outside the solved ages."""
    for b in G2048_BLOCKS:
        if b[0] <= age <= b[-1]:
            return b
    return None


def block_name(b):
    return f"{b[0]:06d}-{b[-1]:06d}"
