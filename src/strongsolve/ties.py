"""Ties between the values of a position's moves, found and named one way for every game: the 2048
move tables (games/g2048/move_table.py, ``strongsolve 2048 query``) and the Truco play page's
decisions (lab/truco_play.py) mark every move whose value ties the best one and say so in words."""

import math


def tie(a, b, rel_tol, abs_tol):
    """True when two values (float) are equal within the tolerances (``math.isclose``).

    Parameters
    ----------
    a, b : float
    rel_tol, abs_tol : float
        Relative and absolute tolerances (the caller's: float rounding for exact values, a solve's
        NashConv for approximate ones).
    """
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


def best(names, values, rel_tol, abs_tol):
    """Names of every move whose value ties the highest one, in the order given.

    Parameters
    ----------
    names : list of str
    values : list of float
        The moves' values, higher is better, one per name.
    rel_tol, abs_tol : float
        As :func:`tie`.

    Returns
    -------
    list of str
        Empty when ``names`` is.
    """
    if not values:
        return []
    top = max(values)
    return [n for n, v in zip(names, values) if tie(v, top, rel_tol, abs_tol)]


def tie_note(names, value=None):
    """Words naming tied moves: ``"a, b and c tie"``, plus ``" at <value>"`` when given (text)."""
    return f"{', '.join(names[:-1])} and {names[-1]} tie" + (f" at {value}" if value is not None else "")
