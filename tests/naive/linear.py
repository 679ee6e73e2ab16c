"""An exact linear solve in fractions, shared by the references that need one (Shut the Box
flip-one, one Ludo piece)."""

from fractions import Fraction as _F


# ---------------------------------------------------------------------------------------------
# Shut the Box and Ludo
#
# Flip-one Shut the Box: cards 1..n start clear; roll two f-faced dice (ordered roll (x, y) with
# probability 1/f^2), flip one existing card among x, y, x+y (toggle); if none exists the roll
# passes; minimise the expected rolls until all cards are set. Solved exactly with fractions:
# policy iteration whose evaluation is Gaussian elimination over rationals.
# Standard Shut the Box (Wikipedia "Shut the box"; D. Butler, durangobill.com/ShutTheBox.html):
# shut open tiles summing to the roll total; the game ends when no set fits. Memoised recursion
# over frozensets of open tiles, in fractions.
# Ludo (HDU 4405): one piece = a Markov chain over cells solved by Gaussian elimination
# in fractions; two-player race = dict-based negamax value iteration over (own, opponent) tuples.
# Monte Carlo simulators play any of these games with policy callbacks.
# ---------------------------------------------------------------------------------------------


def _solve_linear(unknowns, equations):
    """Gauss-Jordan elimination over fractions. ``equations[u] = (const, {v: coef})`` means
    ``x_u = const + sum coef * x_v``; returns {u: x_u}."""
    index = {u: i for i, u in enumerate(unknowns)}
    n = len(unknowns)
    rows = []
    for u in unknowns:
        const, coefs = equations[u]
        row = [_F(0)] * (n + 1)
        row[index[u]] += 1
        for v, c in coefs.items():
            row[index[v]] -= c
        row[n] = _F(const)
        rows.append(row)
    for col in range(n):
        pivot = next(r for r in range(col, n) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        p = rows[col][col]
        rows[col] = [v / p for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return {u: rows[index[u]][n] for u in unknowns}
