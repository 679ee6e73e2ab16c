"""Repair and solve commands of Truco's files: the Snakemake rule that rebuilds a stored subgame
(the store's ``hint``), and the commands that solve the 11 row or a region of the score grid."""

import json
from pathlib import Path

from ...rerun import workflow_rerun_command
from .subgames import in_row11


GROUP_RULE = "truco_row11_group"
"""The Snakemake rule whose jobs write the group directories (workflow/rules/truco.smk)."""

GRID_RULE = "truco_grid_tier"
"""The Snakemake rule whose jobs write the score grid's subgames (``<root>/truco/grid``); a job
of it solves again a damaged subgame of its tier (grid.solve_tier)."""


def rebuild_rule(path):
    """The rule that rebuilds the subgame stored at ``path``: the grid's tier jobs or the 11
    row's group jobs, by the folder it is in."""
    return GRID_RULE if Path(path).parent.name == "grid" else GROUP_RULE


def subgame_hint(path):
    """The store's ``hint`` for any file of the subgame stored at ``path`` (or a file inside it):
    the workflow's rerun command forcing :func:`rebuild_rule`."""
    path = Path(path)
    subgame = path if path.suffix == ".zarr" else path.parent
    return workflow_rerun_command(rebuild_rule(subgame))


def unsolved_command(results, deck, a, b):
    """The command that solves score (a, b) of ``deck`` into ``results``: the row-11 jobs for the
    full deck's 11 row, else the region of the grid down to min(a, b)."""
    if in_row11(a, b) and deck.name == "full":
        return row11_command(results)
    return solve_command(results, deck, min(a, b))


def row11_command(results):
    """The command that solves the full deck's 11 row into ``results`` (the row-11 jobs)."""
    extra = f" results={results}" if str(results) != "results" else ""
    return f"snakemake --cores all --config games='[truco]' truco='{{solve_row11: true}}'{extra}"


def solve_command(results, deck, min_score):
    """The command that solves a region of the grid for this deck and results directory."""
    truco = {"scores": {"min_score": min_score}}
    if deck.name != "full":
        truco["deck"] = list(deck.cards)
    text = json.dumps(truco).replace('"', "")
    extra = f" results={results}" if str(results) != "results" else ""
    return f"snakemake --cores all --config games='[truco]' truco='{text}'{extra}"
