"""Repair and solve commands of Truco's files, made from the run at hand.

Every subgame a workflow job writes records the command that reruns the job's configuration
(:func:`strongsolve.rerun.job_record`, under the attribute ``rerun``: its ``--config`` with
``games``, ``results``, the deck, the scores' region, the solver). A hint reads it from the subgame
named, or from another subgame of the same folder when that one cannot be read, and forces the one
job that writes the subgame, named as its output so that nothing downstream runs:

- a subgame of the score grid (``<root>/truco/grid/s<a>-<b>_v<c>.zarr``): its tier's job, whose
  output is ``<root>/truco/grid/<tier>_min<m>.csv`` (``stages/grid.py``); the job solves again the
  subgames of its tier that are missing or damaged and keeps the others;
- a subgame of the 11 row's groups (``<results>/truco/row11/group_<x>/...``): the group's job, whose
  output is the group directory.

Inside the workflow the jobs' own rerun command (:data:`strongsolve.rerun.RERUN_VARIABLE`) is used;
with no record at all, ``snakemake --cores all --forcerun <rule>`` (config.yaml's run).
"""

import json
import os
import re
from pathlib import Path

from ...rerun import (RECORD_KEY, RERUN_VARIABLE, config_entry, recorded, shown_path, snakemake_command,
                      target_command, with_config, workflow_rerun_command)
from .subgames import in_row11
from .tiers import TIER_LOWEST_MIN, score_tier, tier_csv

GROUP_RULE = "truco_row11_group"
"""The Snakemake rule whose jobs write the group directories (workflow/rules/truco.smk)."""

GRID_RULE = "truco_grid_tier"
"""The Snakemake rule whose jobs write the score grid's subgames (``<root>/truco/grid``); a job
of it solves again a damaged subgame of its tier (grid.solve_tier)."""

DECK_PREFIX = "truco_deck_"
"""A small deck's results root is ``<results>/truco_deck_<cards>`` (stages/grid.py, deck_root)."""

_NAME = re.compile(r"s(\d+)-(\d+)_v(\d+)\.zarr")


def rebuild_rule(path):
    """The rule that rebuilds the subgame stored at ``path``: the grid's tier jobs or the 11
    row's group jobs, by the folder it is in."""
    return GRID_RULE if Path(path).parent.name == "grid" else GROUP_RULE


def _subgame_record(path):
    """The rerun command recorded in one subgame's ``zarr.json`` (read as plain JSON, unverified:
    it only names a command), or None."""
    try:
        doc = json.loads((Path(path) / "zarr.json").read_text())
    except (OSError, ValueError):
        return None
    attrs = doc.get("attributes") if isinstance(doc, dict) else None
    return recorded(attrs.get(RECORD_KEY)) if isinstance(attrs, dict) else None


def recorded_command(root, near=None):
    """The rerun command recorded by the subgames under a deck's results root ``root`` (the grid
    and the 11 row's groups), the subgame ``near`` and its folder first; None when none records one
    (made outside the workflow, or before subgames recorded it)."""
    root = Path(root)
    candidates = []
    if near is not None:
        near = Path(near)
        candidates += [near] + sorted(near.parent.glob("s*_v*.zarr"))
    candidates += sorted(root.joinpath("truco", "grid").glob("s*_v*.zarr"))
    candidates += sorted(root.joinpath("truco", "row11").glob("group_*/s*_v*.zarr"))
    for p in candidates:
        command = _subgame_record(p)
        if command:
            return command
    return None


def _min_score(command):
    truco = config_entry(command, "truco") if command else None
    scores = truco.get("scores") if isinstance(truco, dict) else None
    return scores.get("min_score", 0) if isinstance(scores, dict) else None


def subgame_target(subgame, command=None):
    """The output of the job that writes ``subgame`` (Path): the group directory of an 11-row
    subgame; for a grid subgame, its tier's CSV for the region of the run's ``truco.scores.min_score``
    (from ``command``), else the one CSV of its tier in the folder whose region holds its score;
    None when neither tells."""
    subgame = Path(subgame)
    if subgame.parent.name != "grid":
        return subgame.parent
    m = _NAME.fullmatch(subgame.name)
    if m is None:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    tier = score_tier(a, b)
    lo = _min_score(command)
    if lo is not None and lo <= min(a, b):
        return Path(tier_csv(subgame.parent, tier, lo))
    found = [p for p in sorted(subgame.parent.glob(f"{tier}_min*.csv"))
             if (k := re.fullmatch(rf"{tier}_min(\d+)\.csv", p.name))
             and max(int(k.group(1)), TIER_LOWEST_MIN[tier]) <= min(a, b)]
    return found[-1] if found else None


def subgame_hint(path):
    """The store's ``hint`` for any file of the subgame stored at ``path`` (or a file inside it):
    the command of the run that made it (the workflow's, inside a job; else the one its subgames
    record) building the job that writes the subgame (:func:`subgame_target`), by name."""
    path = Path(path)
    subgame = path if path.suffix == ".zarr" else path.parent
    grid = subgame.parent.name == "grid"
    parents = subgame.absolute().parents
    root = parents[2] if grid else parents[3] if len(parents) > 3 else subgame.parent
    command = os.environ.get(RERUN_VARIABLE) or recorded_command(root, subgame)
    target = subgame_target(subgame, command) if command else None
    if target is None:  # no run known (made outside the workflow): the rule, on config.yaml's run
        return workflow_rerun_command(rebuild_rule(subgame))
    return target_command(command, target)


def split_root(results):
    """``(results directory, cards)`` of a folder given as ``--results``: a small deck's root
    ``<results>/truco_deck_<cards>`` gives its parent and its cards (list of str), any other folder
    itself and None (the full deck)."""
    results = Path(results)
    if results.name.startswith(DECK_PREFIX):
        text = results.name[len(DECK_PREFIX):]
        return results.parent, [text[i:i + 2] for i in range(0, len(text), 2)]
    return results, None


def _workflow_command(results, cards, truco):
    """The Snakemake command solving Truco with the ``truco`` settings ``truco`` (dict) into
    ``results`` for ``cards`` (None: the full deck), on the configuration the subgames already under
    it record when one does (its solver and options), else on config.yaml's."""
    root = Path(results) / f"{DECK_PREFIX}{''.join(cards)}" if cards else Path(results)
    command = recorded_command(root) or snakemake_command()
    recorded_truco = config_entry(command, "truco")
    settings = dict(recorded_truco) if isinstance(recorded_truco, dict) else {}
    settings.update(truco)
    if cards:
        settings["deck"] = list(cards)
    else:
        settings.pop("deck", None)
    command = with_config(command, "games", ["truco"])
    command = with_config(command, "truco", settings)
    shown = shown_path(results, os.getcwd())
    if shown != "results" or config_entry(command, "results") not in (None, "results"):
        command = with_config(command, "results", shown)
    return command


def unsolved_command(results, deck, a, b):
    """The command that solves score (a, b) of ``deck`` into ``results``: the row-11 jobs for the
    full deck's 11 row, else the region of the grid down to min(a, b)."""
    if in_row11(a, b) and deck.name == "full":
        return row11_command(results)
    return solve_command(results, deck, min(a, b))


def row11_command(results):
    """The command that solves the full deck's 11 row into ``results`` (the row-11 jobs); a small
    deck's root (``<results>/truco_deck_<cards>``) gets its whole grid (:func:`solve_command` from
    score 0), whose row-11 job solves the groups of its region only."""
    parent, cards = split_root(results)
    if cards:  # the grid's row-11 job solves the groups of the region only: all of them from 0
        return _workflow_command(parent, cards, {"scores": {"min_score": 0}})
    return _workflow_command(parent, None, {"solve_row11": True})


def solve_command(results, deck, min_score):
    """The command that solves the region of the grid with min(a, b) >= ``min_score`` for ``deck``
    (a ``Deck``, or None for the deck of the folder) into ``results`` (the results directory, or
    a small deck's root)."""
    parent, cards = split_root(results)
    if deck is not None and deck.name != "full":
        cards = list(deck.cards)
    return _workflow_command(parent, cards, {"scores": {"min_score": min_score}})
