"""Plain-Python reference of Shut the Box: flip-one solved exactly in fractions, the standard
game by recursion, simulations."""

from fractions import Fraction as _F
from naive.linear import _solve_linear


def flip_one_options(mask, x, y, n):
    """Masks reachable after roll (x, y) from ``mask`` (bit c-1 = card c set); [mask] to pass."""
    cards = sorted({c for c in (x, y, x + y) if c <= n})
    return [mask ^ (1 << (c - 1)) for c in cards] or [mask]


def flip_one_exact(n, f):
    """Exact optimal expected rolls of flip-one Shut the Box: {mask: Fraction, or None where the
    goal cannot be reached} (goal = 2^n - 1, value 0).

    Exact policy iteration: start from the policy "flip a clear card if one is offered" when it is
    proper, evaluate by elimination, switch to strictly better options, repeat."""
    goal = (1 << n) - 1
    rolls = [(x, y) for x in range(1, f + 1) for y in range(1, f + 1)]
    p = _F(1, f * f)
    masks = [m for m in range(goal)]
    # a proper start: move toward the goal along shortest paths of the option graph
    dist = {goal: 0}
    frontier = [goal]
    while frontier:
        nxt = []
        for m in masks:
            if m in dist:
                continue
            for x, y in rolls:
                if any(o in dist and dist[o] == dist[frontier[0]] for o in flip_one_options(m, x, y, n)):
                    dist[m] = dist[frontier[0]] + 1
                    nxt.append(m)
                    break
        frontier = nxt
    # toggles are reversible, so masks that cannot reach the goal never mix with those that can:
    # they have infinite expected rolls (None) and drop out of the linear system
    infinite = {m: None for m in masks if m not in dist}
    masks = [m for m in masks if m in dist]
    policy = {}
    for m in masks:
        for x, y in rolls:
            opts = flip_one_options(m, x, y, n)
            policy[m, x, y] = min(opts, key=lambda o: dist.get(o, 10 ** 9))
    while True:
        eqs = {}
        for m in masks:
            coefs = {}
            for x, y in rolls:
                o = policy[m, x, y]
                if o != goal:
                    coefs[o] = coefs.get(o, 0) + p
            eqs[m] = (1, coefs)
        value = _solve_linear(masks, eqs) if masks else {}
        value[goal] = _F(0)
        changed = False
        for m in masks:
            for x, y in rolls:
                best = min(flip_one_options(m, x, y, n), key=lambda o: value[o])
                if value[best] < value[policy[m, x, y]]:
                    policy[m, x, y] = best
                    changed = True
        if not changed:
            return {**value, **infinite}


def standard_value(n, f, objective, one_die=False):
    """Exact optimal value of standard Shut the Box from all tiles open (Fraction).

    objective "max-shut": probability of shutting every tile; "min-sum": expected open sum."""
    from functools import lru_cache
    from itertools import combinations

    def totals(open_tiles):
        if one_die and sum(open_tiles) <= 6:
            return {t: _F(1, f) for t in range(1, f + 1)}
        dist = {}
        for x in range(1, f + 1):
            for y in range(1, f + 1):
                dist[x + y] = dist.get(x + y, 0) + _F(1, f * f)
        return dist

    @lru_cache(maxsize=None)
    def value(open_tiles):
        if not open_tiles:
            return _F(1) if objective == "max-shut" else _F(0)
        total = _F(0)
        for t, p in totals(open_tiles).items():
            options = [open_tiles - frozenset(c) for k in range(1, len(open_tiles) + 1)
                       for c in combinations(sorted(open_tiles), k) if sum(c) == t]
            if not options:
                end = _F(0) if objective == "max-shut" else _F(sum(open_tiles))
                total += p * end
            elif objective == "max-shut":
                total += p * max(value(o) for o in options)
            else:
                total += p * min(value(o) for o in options)
        return total

    return value(frozenset(range(1, n + 1)))


def simulate_flip_one(n, f, choose, rng, games):
    """Rolls per game of flip-one Shut the Box; ``choose(mask, x, y, options)`` returns the next
    mask among ``options`` (from :func:`flip_one_options`)."""
    goal = (1 << n) - 1
    out = []
    for _ in range(games):
        mask, rolls = 0, 0
        while mask != goal:
            x, y = rng.randint(1, f), rng.randint(1, f)
            rolls += 1
            mask = choose(mask, x, y, flip_one_options(mask, x, y, n))
        out.append(rolls)
    return out


def simulate_standard(n, f, one_die, choose, rng, games):
    """Final open-tile sets of standard Shut the Box games; ``choose(open_tiles, total, options)``
    returns one of the frozensets ``options`` (tiles left open after the move)."""
    from itertools import combinations

    out = []
    for _ in range(games):
        open_tiles = frozenset(range(1, n + 1))
        while open_tiles:
            if one_die and sum(open_tiles) <= 6:
                total = rng.randint(1, f)
            else:
                total = rng.randint(1, f) + rng.randint(1, f)
            options = [open_tiles - frozenset(c) for k in range(1, len(open_tiles) + 1)
                       for c in combinations(sorted(open_tiles), k) if sum(c) == total]
            if not options:
                break
            open_tiles = choose(open_tiles, total, options)
        out.append(open_tiles)
    return out
