"""All stages of a 2048 solve in one process, in the order the Snakemake workflow runs them.

The workflow (``workflow/rules/g2048.smk``) runs the same stage functions, one job per block of ages
and stage; a run whose ages make one block (every 3x3 run) is solved by one job instead
(:func:`solve_block`, the ``g2048_solve`` rule: one process start-up fewer, and the afterstates
stay in memory for the backward pass). This module is also for tests, notebooks and the CLI's
``solve`` command.
"""

import sys

from .backward import run_backward
from .forward import run_forward
from .kept import KEEP_BYTES, KeptLayers
from .report import run_report
from ..saved import DEFAULT_P2, Run, blocks


def keep_budget(memory_limit=None, keep_bytes=KEEP_BYTES):
    """Bytes of afterstate IDs :func:`solve_block` keeps in memory: ``keep_bytes``, and at most
    the run's ``memory_limit`` when one is set."""
    return keep_bytes if memory_limit is None else min(keep_bytes, int(memory_limit))


def solve_block(run, ages, log=sys.stderr, keep_bytes=KEEP_BYTES, **options):
    """Forward, then backward stage of one block of ages in this process (the ``g2048_solve`` rule).

    The same as :func:`.forward.run_forward` followed by :func:`.backward.run_backward` on
    ``ages`` (same layers, manifests and resume after a kill), except that the afterstate IDs the
    forward stage computes or verifies stay in memory up to ``keep_bytes`` (and the
    ``memory_limit`` option: :func:`keep_budget`) for the backward stage, which reads back only the
    ages not kept.

    Parameters
    ----------
    run : run.Run
    ages : list of int
        Consecutive even ages, increasing; the inputs of both stages must exist (for the whole run
        as one block: none).
    keep_bytes : int
        Budget of the IDs kept in memory (8 bytes per afterstate).
    options
        ``chunk``, ``memory_limit``, ``client`` of both stages.

    Returns
    -------
    forward_rows, backward_rows : list of dict
        What the two stages return (their manifests' rows).
    """
    kept = KeptLayers(keep_budget(options.get("memory_limit"), keep_bytes))
    forward_rows = run_forward(run, ages, log, keep=kept, **options)
    return forward_rows, run_backward(run, ages, log, kept=kept, **options)


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
        0 for the score objective, else the tile to reach.
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
    solved = max_age is None or max_age >= run.last_age
    if solved and len(ages) <= ages_per_job:  # one block: as the workflow's g2048_solve job
        solve_block(run, ages, log, **options)
        return run_report(run, max_age)
    for block in blocks(ages, ages_per_job):
        run_forward(run, block, log, **options)
    if solved:
        for block in reversed(blocks(ages, ages_per_job)):
            run_backward(run, block, log, **options)
    return run_report(run, max_age)
