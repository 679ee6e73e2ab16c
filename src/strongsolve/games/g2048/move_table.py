"""A 2048 query's moves as people read them: ties named, values rounded to what tells them apart,
and a legend of the columns (used by ``strongsolve 2048 query`` and the lab's 2048 pages)."""

from ... import ties

TIE_REL, TIE_ABS = 1e-11, 1e-13
"""Two totals within this (relative, absolute) tolerance tie: float64 sums taken in different
orders differ by about 1e-13 relative, while distinct probabilities can differ by 1e-10."""

LEGEND = {
    "score": "reward: merge points the move scores; afterstate value: expected points after it "
             "(before the new tile), playing optimally; total: reward + afterstate value",
    "reach_tile": "reward: 1 if the move makes the target tile; afterstate value: probability of "
                  "making it after the move, playing optimally; total: reward + afterstate value",
}
"""One line per objective saying what each column of a move table is."""


def tie(a, b):
    """True when two values (float) are equal up to rounding (:data:`TIE_REL`, :data:`TIE_ABS`;
    the shared rule of strongsolve/ties.py)."""
    return ties.tie(a, b, TIE_REL, TIE_ABS)


def best_moves(moves):
    """Names of every move whose total ties the highest one, in the order of ``moves`` (the list
    of :meth:`Solution.moves`); empty when no move is legal."""
    return ties.best([m["move"] for m in moves], [m["total"] for m in moves], TIE_REL, TIE_ABS)


def distinguishing_decimals(columns, objective):
    """Fewest decimals at which, in every column, values that do not :func:`tie` print differently.

    Parameters
    ----------
    columns : list of list of float
        Each a column of values compared among themselves (e.g. afterstate values, totals).
    objective : str
        ``"score"`` (points: 1 to 10 decimals) or ``"reach_tile"`` (probabilities: 3 to 15).

    Returns
    -------
    int
        The decimals; the largest allowed when even those cannot tell two values apart.
    """
    low, high = (1, 10) if objective == "score" else (3, 15)
    for d in range(low, high + 1):
        if all(f"{a:.{d}f}" != f"{b:.{d}f}" for col in columns for i, a in enumerate(col)
               for b in col[i + 1:] if not tie(a, b)):
            return d
    return high


def move_table(q, objective):
    """A query's moves as the lab shows them: values rounded to what distinguishes them, ties named.

    Parameters
    ----------
    q : dict
        The result of :meth:`advice.Solution.query`.
    objective : str
        ``"score"`` or ``"reach_tile"``.

    Returns
    -------
    dict
        ``value`` (the state value, text), ``decimals`` (int), ``best`` (list of the names of the
        best moves: several when they tie), ``tie`` (text naming the tied moves, or None), ``legend``
        (:data:`LEGEND`), ``rows``: per move ``move, reward, afterstate_value, total`` (text) and
        ``best`` (bool).
    """
    moves = q["moves"]
    d = distinguishing_decimals([[m["afterstate_value"] for m in moves],
                                 [m["total"] for m in moves]], objective)
    best = best_moves(moves)
    note = None
    if len(best) > 1:
        note = ties.tie_note(best, f"{max(m['total'] for m in moves):.{d}f}") + ": each is optimal"
    rows = [{"move": m["move"], "reward": f"{m['reward']:g}", "afterstate_value":
             f"{m['afterstate_value']:.{d}f}", "total": f"{m['total']:.{d}f}",
             "best": m["move"] in best} for m in moves]
    return {"value": f"{q['value']:.{d}f}", "decimals": d, "best": best, "tie": note,
            "legend": LEGEND[objective], "rows": rows}
