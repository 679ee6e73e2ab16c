"""All stages of a 2048 solve in one process, in the order the Snakemake workflow runs them.

The workflow (``workflow/rules/g2048.smk``) runs the same stage functions, one job per block of ages;
this module is for tests, notebooks and the CLI's ``solve`` command.
"""

import sys

from .backward import run_backward
from .forward import run_forward
from .report import run_report
from .run import DEFAULT_P2, Run


def blocks(ages, ages_per_job):
    """Split a list of ages into consecutive blocks of at most ``ages_per_job`` ages."""
    return [ages[i:i + ages_per_job] for i in range(0, len(ages), ages_per_job)]


def solve(results_dir, rows, cols, p2=DEFAULT_P2, target_tile=0, max_age=None, ages_per_job=64,
          log=sys.stderr, **options):
    """Strongly solve 2048 on a ``rows x cols`` board, writing every layer under ``results_dir``.

    Parameters
    ----------
    results_dir : str or Path
        The run directory (e.g. ``results/2048_2x3``).
    rows, cols : int
        1..4 each.
    p2 : float
        Probability that a spawn is a 2.
    target_tile : int
        0 for the score objective, else the tile to reach (issue 6).
    max_age : int, optional
        Stop after the forward pass at this age (no values, no solution.json).
    options
        ``chunk``, ``memory_limit`` (bytes) and ``client`` (a dask.distributed Client) for the
        stages; the results are the same whatever they are.

    Returns
    -------
    dict or None
        The ``solution.json`` document (None when ``max_age`` stops the run early).
    """
    run = Run(results_dir, rows, cols, p2, target_tile)
    ages = run.ages(max_age)
    for block in blocks(ages, ages_per_job):
        run_forward(run, block, log, **options)
    if max_age is None or max_age >= run.last_age:
        for block in reversed(blocks(ages, ages_per_job)):
            run_backward(run, block, log, **options)
    return run_report(run, max_age)
