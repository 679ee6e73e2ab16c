"""Repair commands of a Ludo race's saved files: the ``strongsolve ludo race`` command that writes
each again (the store's ``hint`` callables)."""

from pathlib import Path


def values_command(attrs, path):
    """The command that solves the race of a values layer's attributes again into ``path``
    (``--values-out``), removing what is there."""
    board = attrs.get("board_file") or "BOARD.yaml"
    return (f"rm -rf {path} && strongsolve ludo race {board} --pieces {attrs.get('pieces', 'P')} "
            f"--values-out {path}")


def policy_command(path, pieces="P"):
    """The command that writes a race's policy file ``path`` (``--policy-out``)."""
    return f"strongsolve ludo race BOARD.yaml --pieces {pieces} --policy-out {path}"


def policy_hint(path):
    """The store's ``hint`` for a damaged policy file: :func:`policy_command`."""
    return policy_command(Path(path))
