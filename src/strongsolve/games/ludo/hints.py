"""Repair commands of a Ludo run's saved files, made from the run at hand.

A file written by a workflow job (``results/ludo_<board>/race_p<k>.json`` and its policy file or
values, ``rolls_<die>.json``) belongs to the job whose output is the JSON; the JSON records the
command that reruns the job's configuration (:func:`strongsolve.rerun.job_record`, key ``rerun``),
and a hint forces that one job, named as its output. Inside a job the workflow's own command is used.
A file made by ``strongsolve ludo race`` outside the workflow gets the ``strongsolve`` command
that writes it again.
"""

import json
import os
import re
from pathlib import Path

from ...rerun import RECORD_KEY, RERUN_VARIABLE, recorded, target_command


def summary_of(path):
    """The result JSON of the job that writes ``path``: ``race_p<k>.json`` for the race's policy
    file ``race_p<k>_policy.npz``, its values ``race_p<k>_values.zarr`` (or a file inside it) and
    itself; ``path`` itself for any other JSON; None otherwise."""
    path = Path(path)
    for p in (path, *path.parents[:2]):
        m = re.fullmatch(r"(race_p\d+)(_policy\.npz|_values\.zarr|\.json)", p.name)
        if m:
            return p.with_name(m.group(1) + ".json")
    return path if path.suffix == ".json" else None


def recorded_command(summary):
    """The rerun command recorded in the JSON ``summary`` (read unverified: it only names a
    command), else in another result JSON of its folder (the same run); None if none records one."""
    summary = Path(summary)
    for p in [summary] + sorted(summary.parent.glob("*.json")):
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        command = recorded(doc.get(RECORD_KEY)) if isinstance(doc, dict) else None
        if command:
            return command
    return None


def run_command(path):
    """The command of the run that made ``path`` forcing the job that writes it (by its JSON
    output), or None when no run is known (a file made outside the workflow)."""
    summary = summary_of(path)
    if summary is None:
        return None
    command = os.environ.get(RERUN_VARIABLE) or recorded_command(summary)
    return target_command(command, summary) if command else None


def values_command(attrs, path):
    """The command that solves the race of a values layer's attributes again into ``path``
    (``--values-out``), removing what is there: the run's job (:func:`run_command`) when known."""
    command = run_command(path)
    if command:
        return f"rm -rf {path} && {command}"
    board = attrs.get("board_file") or "BOARD.yaml"
    return (f"rm -rf {path} && strongsolve ludo race {board} --pieces {attrs.get('pieces', 'P')} "
            f"--values-out {path}")


def policy_command(path, pieces="P"):
    """The command that writes a race's policy file ``path`` again: the run's job
    (:func:`run_command`) when known, else ``strongsolve ludo race --policy-out``."""
    return run_command(path) or f"strongsolve ludo race BOARD.yaml --pieces {pieces} --policy-out {path}"


def policy_hint(path):
    """The store's ``hint`` for a damaged policy file: :func:`policy_command`."""
    return policy_command(Path(path))


def summary_hint(path):
    """The store's ``hint`` for a damaged result JSON (``race_p<k>.json``, ``rolls_<die>.json``):
    the run's job (:func:`run_command`), else the ``strongsolve ludo`` command that writes it."""
    path = Path(path)
    command = run_command(path)
    if command:
        return command
    try:  # the board file the text still names, if it does
        board = json.loads(path.read_text()).get("board_file") or "BOARD.yaml"
    except (OSError, ValueError, AttributeError):
        board = "BOARD.yaml"
    m = re.fullmatch(r"race_p(\d+)\.json", path.name)
    if m:
        return (f"strongsolve ludo race {board} --pieces {m.group(1)} "
                f"--policy-out {path.with_name(path.stem + '_policy.npz')} --output {path}")
    return f"strongsolve ludo rolls {board} --output {path}"
