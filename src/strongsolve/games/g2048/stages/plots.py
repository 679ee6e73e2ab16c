"""Plots of a 2048 run, per age: written to ``results/<run>/plots/``.

- ``layers_per_age.png``: canonical states and afterstates per age (log scale); below it, the
  Elias-Fano bits per afterstate ID (``bits_per_afterstate``).
- ``values_per_age.png`` (solved runs only): mean afterstate value per age, with the min..max band;
  points for the score objective, probability of making the target tile for reach-a-tile.

matplotlib runs with the Agg backend (no display needed); every file is written under a temporary
name and renamed.
"""

import os
import sys
import uuid
from pathlib import Path

LAYERS_PLOT = "layers_per_age.png"
VALUES_PLOT = "values_per_age.png"


def plot_names(solved):
    """File names :func:`write_plots` writes: the values plot only for a solved run."""
    return [LAYERS_PLOT] + ([VALUES_PLOT] if solved else [])


def _save(fig, path):
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        fig.savefig(tmp, format="png", dpi=120)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_plots(results_dir, log=sys.stderr):
    """Write the plots of a run into ``<results_dir>/plots/``.

    Parameters
    ----------
    results_dir : str or Path
        A run directory (solved or forward-only).

    Returns
    -------
    list of Path
        The files written (see :func:`plot_names`).

    Raises
    ------
    ValueError
        If ``results_dir`` is not a 2048 run directory.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..advice import Solution

    solution = Solution(results_dir)
    solved = solution.solved
    table = [r for r in solution.age_table(values=solved) if r["states"] or r["afterstates"]]
    out_dir = Path(results_dir) / "plots"
    out_dir.mkdir(parents=True, exist_ok=True)
    title = Path(results_dir).name
    ages = [r["age"] for r in table]
    written = []

    ef = [r for r in table if r["afterstates"]]
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True, squeeze=False)
    ax = axes[0, 0]
    for key in ("states", "afterstates"):  # an empty layer leaves a gap (log scale has no 0)
        ax.plot(ages, [r[key] or float("nan") for r in table], label=key)
    ax.set_yscale("log")
    ax.set_ylabel("canonical positions")
    ax.set_title(f"{title}: positions per age")
    ax.legend()
    ax = axes[1, 0]
    ax.plot([r["age"] for r in ef], [r["bits_per_afterstate"] for r in ef], color="C2")
    ax.set_ylabel("bits per afterstate (Elias-Fano)")
    axes[-1, 0].set_xlabel("age (sum of tiles)")
    fig.tight_layout()
    written.append(out_dir / LAYERS_PLOT)
    _save(fig, written[-1])
    plt.close(fig)

    if solved:
        rows = [r for r in table if r["afterstates"]]
        fig, ax = plt.subplots(figsize=(8, 4.5))
        x = [r["age"] for r in rows]
        ax.fill_between(x, [r["value_min"] for r in rows], [r["value_max"] for r in rows],
                        alpha=0.25, label="min..max")
        ax.plot(x, [r["value_mean"] for r in rows], label="mean")
        ax.set_xlabel("age (sum of tiles)")
        ax.set_ylabel("expected future points" if solution.objective == "score"
                      else f"P(make {solution.target_tile})")
        ax.set_title(f"{title}: afterstate values per age")
        ax.legend()
        fig.tight_layout()
        written.append(out_dir / VALUES_PLOT)
        _save(fig, written[-1])
        plt.close(fig)
    for path in written:
        print(f"plots: wrote {path}", file=log, flush=True)
    return written
