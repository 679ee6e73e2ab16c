"""Report stage: ``summary.csv`` (one row per age) and ``solution.json``.

Both carry a SHA-256 checksum (:mod:`store.checksums`): ``solution.json`` under its ``"checksum"``
key, ``summary.csv`` in ``summary.csv.sha256``. :func:`read_solution` and :func:`read_summary` verify
it and name the file and the command that rebuilds it (the report rule, forced) when it fails.
"""

import csv
import io
from pathlib import Path

import numpy as np

from ....store.checksums import (read_json_checked, read_text_checked, write_json_checked,
                                 write_text_checked)
from ....store.layers import layer_bytes
from ....store.lock import holding_run_lock
from ....rerun import is_snakemake_command
from ..hints import base_command, file_hint
from ..rules.spawn import expected_value

# The kernels (.backward, .board: numba) are imported by solution(), which values the start states:
# the workflow's Snakefile reads a run's report through this module (its closing lines) and should
# not load numba.

SUMMARY_COLUMNS = ["age", "states", "afterstates", "terminal_states", "bytes", "bits_per_afterstate"]


def summary_rows(run, max_age=None):
    """Per-age counts from the forward layers' attributes (verified complete).

    Returns
    -------
    list of dict with keys :data:`SUMMARY_COLUMNS`; ``bytes`` is the afterstate layer's size on disk
    (zarr files), ``bits_per_afterstate`` the Elias-Fano code's serialized bits per ID.
    """
    rows = []
    for n in run.ages(max_age):
        attrs = run.layer_attrs("afterstates", n)
        rows.append({"age": n, "states": attrs["num_states"], "afterstates": attrs["num_afterstates"],
                     "terminal_states": attrs["num_terminal"],
                     "bytes": layer_bytes(run.afterstate_path(n)),
                     "bits_per_afterstate": round(attrs["bits_per_afterstate"], 4),
                     "code_bytes": -(-attrs["eliasfano"]["size_in_bits"] // 8)})
    return rows


def write_summary(run, max_age=None):
    """Write ``summary.csv`` and its checksum ``summary.csv.sha256`` atomically; return its rows."""
    rows = summary_rows(run, max_age)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SUMMARY_COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_text_checked(run.directory / "summary.csv", buf.getvalue())
    return rows


def read_summary(run_dir):
    """The rows of a run's ``summary.csv``, verified against ``summary.csv.sha256``.

    Parameters
    ----------
    run_dir : str or Path
        A run directory, e.g. ``results/2048_3x3``.

    Returns
    -------
    list of dict
        One per age, keys :data:`SUMMARY_COLUMNS`; ``bits_per_afterstate`` a float, the others int.

    Raises
    ------
    FileNotFoundError
        If the run has no ``summary.csv``.
    CorruptResultError
        If it or its checksum file is damaged or edited; the message names the file and the command
        that rebuilds it.
    """
    path = Path(run_dir) / "summary.csv"
    text = read_text_checked(path, file_hint)
    return [{k: (float(v) if k == "bits_per_afterstate" else int(v)) for k, v in row.items()}
            for row in csv.DictReader(io.StringIO(text))]


def read_solution(run_dir):
    """A run's ``solution.json``, verified against its ``"checksum"`` key.

    Parameters
    ----------
    run_dir : str or Path
        A solved run directory, e.g. ``results/2048_3x3``.

    Returns
    -------
    dict
        The document :func:`solution` made (without the checksum).

    Raises
    ------
    FileNotFoundError
        If the run has no ``solution.json``.
    CorruptResultError
        If it is truncated, not JSON, has no checksum or does not match it (a value edited); the
        message names the file and the command that rebuilds it from the layers.
    """
    path = Path(run_dir) / "solution.json"
    return read_json_checked(path, file_hint)


def solution(run, rows):
    """The solution document: counts, and the value of each start state and of the random start.

    Parameters
    ----------
    rows : list of dict
        Output of :func:`summary_rows` over every age.

    Returns
    -------
    dict with keys ``rows, cols, p2, objective, target_tile, num_states, num_afterstates,
    num_terminal_states, afterstate_bytes, max_age, expected_score, start_states`` (a list of
    ``{board, probability, value}``; board as rows of tile values), ``rerun``. ``afterstate_bytes`` is the size
    of the Elias-Fano coded afterstate IDs of all ages. ``expected_score`` is in points (score objective) or is
    the probability of reaching the target tile (then also given as ``reach_probability``).
    ``rerun`` is the Snakemake command that reruns the run as it was made, with its config files and
    values (:func:`.hints.base_command`), from which repair hints are built; None for a run
    made outside the workflow (``strongsolve 2048 solve``: its hints name that command with the run
    directory as it is then given, so a moved directory still gets the right one).
    """
    from .backward import state_values
    from ..rules.board import age, decode, start_states
    ids, probs = start_states(run.rows, run.cols, run.p2)
    values = np.empty(ids.size)
    for n in sorted({age(s) for s in ids}):
        mask = np.array([age(s) == n for s in ids])
        layer_ids = run.load_afterstates(n)[0]
        values[mask], _ = state_values(ids[mask], run.tables, run.target_exp, layer_ids,
                                       run.load_values(n, layer_ids))
    expected = expected_value(probs, values)  # at most 1 for a probability (spawn.py)
    doc = {
        "rows": run.rows,
        "cols": run.cols,
        "p2": run.p2,
        "objective": "reach_tile" if run.target_tile else "score",
        "target_tile": run.target_tile or None,
        "num_states": int(sum(r["states"] for r in rows)),
        "num_afterstates": int(sum(r["afterstates"] for r in rows)),
        "num_terminal_states": int(sum(r["terminal_states"] for r in rows)),
        "afterstate_bytes": int(sum(r["code_bytes"] for r in rows)),
        "max_age": max((r["age"] for r in rows if r["states"]), default=0),
        "expected_score": expected,
        "start_states": [{"board": decode(s, run.rows, run.cols).tolist(), "probability": float(p),
                          "value": float(v)} for s, p, v in zip(ids, probs, values)],
        "rerun": _snakemake_rerun(run),
    }
    if run.target_tile:
        doc["reach_probability"] = expected
    return doc


def _snakemake_rerun(run):
    command = base_command(run.directory)
    return command if command and is_snakemake_command(command) else None


@holding_run_lock("2048 report")
def run_report(run, max_age=None):
    """Report stage: always ``summary.csv``; ``solution.json`` too when the run is solved to the
    last age (``max_age`` None), since values need every layer. Each with its checksum.

    Returns
    -------
    dict or None
        The solution document (without the checksum stored with it), or None for a forward-only run.
    """
    rows = write_summary(run, max_age)
    if max_age is not None and max_age < run.last_age:
        return None
    doc = solution(run, rows)
    write_json_checked(run.directory / "solution.json", doc)
    return doc
