"""Report stage: ``summary.csv`` (one row per age) and ``solution.json`` (issue 2, item 6)."""

import csv
import io

import numpy as np

from ...store.atomic import write_json_atomic, write_text_atomic
from ...store.layers import layer_bytes
from .backward import state_values
from .board import age, decode, start_states
from .spawn import expected_value

SUMMARY_COLUMNS = ["age", "states", "afterstates", "terminal_states", "bytes", "bits_per_afterstate"]


def summary_rows(run, max_age=None):
    """Per-age counts from the forward layers' attributes (verified complete).

    Returns
    -------
    list of dict with keys :data:`SUMMARY_COLUMNS`; ``bytes`` is the afterstate layer's size on disk
    (zarr files), ``bits_per_afterstate`` the Elias-Fano code's serialized bits per ID (issue 3).
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
    """Write ``summary.csv`` atomically and return its rows."""
    rows = summary_rows(run, max_age)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SUMMARY_COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(run.directory / "summary.csv", buf.getvalue())
    return rows


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
    ``{board, probability, value}``; board as rows of tile values). ``afterstate_bytes`` is the size
    of the Elias-Fano coded afterstate IDs of all ages (issue 3). ``expected_score`` is in points (score objective) or is
    the probability of reaching the target tile (then also given as ``reach_probability``).
    """
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
    }
    if run.target_tile:
        doc["reach_probability"] = expected
    return doc


def run_report(run, max_age=None):
    """Report stage: always ``summary.csv``; ``solution.json`` too when the run is solved to the
    last age (``max_age`` None), since values need every layer.

    Returns
    -------
    dict or None
        The solution document, or None for a forward-only run.
    """
    rows = write_summary(run, max_age)
    if max_age is not None and max_age < run.last_age:
        return None
    doc = solution(run, rows)
    write_json_atomic(run.directory / "solution.json", doc)
    return doc
