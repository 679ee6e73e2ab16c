"""Repair commands of Shut the Box result files: the ``strongsolve shutbox`` command that writes
each again (the store's ``hint`` callables)."""

import json
from pathlib import Path


def solve_command(path, variant=None):
    """The command that writes the result file ``path`` with its policy and values, for the
    ``variant`` (dict with ``rule``, ``objective``, ``cards``, ``faces``, ``one_die``) when known."""
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
