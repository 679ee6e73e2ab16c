"""Repair commands of Shut the Box result files, made from the run at hand.

A result written by a workflow job (``results/shutbox_<cards>/<variant>.json``) records the command
that reruns the job's configuration (:func:`strongsolve.rerun.job_record`, key ``rerun``); a hint
forces that one job, named as its output (the file itself). Inside a job the workflow's own command
is used. A file made by ``strongsolve shutbox --output`` outside the workflow gets the
``strongsolve shutbox`` command that writes it again.
"""

import json
import os
from pathlib import Path

from ...rerun import RECORD_KEY, RERUN_VARIABLE, recorded, target_command


def recorded_command(path):
    """The rerun command recorded in the result ``path`` (read unverified: it only names a
    command), else in another result of its folder (the same run); None if none records one."""
    path = Path(path)
    for p in [path] + sorted(path.parent.glob("*.json")):
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        command = recorded(doc.get(RECORD_KEY)) if isinstance(doc, dict) else None
        if command:
            return command
    return None


def solve_command(path, variant=None):
    """The command that writes the result file ``path`` with its policy and values: the job of the
    run that made it (:func:`recorded_command`, forced by name) when known; else ``strongsolve
    shutbox`` for the ``variant`` (dict with ``rule``, ``objective``, ``cards``, ``faces``,
    ``one_die``) when known."""
    command = os.environ.get(RERUN_VARIABLE) or recorded_command(path)
    if command:
        return target_command(command, Path(path))
    if not variant:
        return (f"strongsolve shutbox --cards N --faces F --rule R --policy --output {path}")
    words = [f"strongsolve shutbox --rule {variant['rule']} --objective {variant['objective']}",
             f"--cards {variant['cards']} --faces {variant['faces']}"]
    if variant.get("one_die"):
        words.append("--one-die")
    return " ".join(words + [f"--policy --output {path}"])


def result_hint(path):
    """The store's ``hint`` for a damaged result file: :func:`solve_command`, with the variant the
    file names when its text still says it."""
    try:
        doc = json.loads(Path(path).read_text())
        variant = {k: doc[k] for k in ("rule", "objective", "cards", "faces", "one_die")}
    except (OSError, ValueError, KeyError, TypeError):
        variant = None
    return solve_command(path, variant)
