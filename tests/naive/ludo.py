"""Plain-Python reference of Ludo: one piece's expected rolls (an exact linear solve), races by
value iteration over ordered piece tuples, simulations."""

from fractions import Fraction as _F
from naive.linear import _solve_linear


def ludo_move(board, cell, face):
    """Cell reached by one piece, or None if it cannot move. ``board``: dict with the board-file
    keys (``die`` a list of Fractions of faces 1..k here)."""
    n = board["length"]
    if cell == n:
        return None
    t = cell + face
    if t > n:
        overshoot = board.get("overshoot", "stay")
        if overshoot == "stay":
            return None
        t = n if overshoot == "finish" else 2 * n - t
    jumps = board.get("jumps", {})
    if t in jumps:
        t = jumps[t]
        while board.get("chain_jumps", False) and t in jumps:
            t = jumps[t]
    return t


def ludo_expected_rolls(board):
    """Exact expected rolls of one piece from every cell 0..N: {cell: Fraction or None (infinite)}."""
    n = board["length"]
    die = board["die"]
    succ = {c: [(ludo_move(board, c, d) if ludo_move(board, c, d) is not None else c, p)
                for d, p in enumerate(die, 1) if p > 0] for c in range(n)}
    # cells from which the goal is reachable at all, then those that cannot drift into a dead cell
    can = {n}
    grew = True
    while grew:
        grew = False
        for c in range(n):
            if c not in can and any(t in can for t, _ in succ[c]):
                can.add(c)
                grew = True
    bad = set(range(n + 1)) - can
    grew = True
    while grew:
        grew = False
        for c in range(n):
            if c not in bad and any(t in bad for t, _ in succ[c]):
                bad.add(c)
                grew = True
    cells = [c for c in range(n) if c not in bad]
    eqs = {}
    for c in cells:
        coefs = {}
        for t, p in succ[c]:
            if t != n:
                coefs[t] = coefs.get(t, 0) + p
        eqs[c] = (1, coefs)
    value = _solve_linear(cells, eqs) if cells else {}
    value[n] = _F(0)
    return {c: value.get(c) for c in range(n + 1)}


def simulate_ludo_rolls(board, rng, games, start=0):
    """Rolls needed by one piece from ``start`` to N, per game (the die drawn with ``rng``)."""
    faces = list(range(1, len(board["die"]) + 1))
    weights = [float(p) for p in board["die"]]
    out = []
    for _ in range(games):
        cell, rolls = start, 0
        while cell != board["length"]:
            d = rng.choices(faces, weights)[0]
            rolls += 1
            t = ludo_move(board, cell, d)
            cell = cell if t is None else t
        out.append(rolls)
    return out


def race_moves(board, own, opp, face):
    """[(piece cell, own', opp', won)] for every distinct movable piece of the mover, in increasing
    cell order; captures send opponent pieces on the landing cell (not 0, N or safe) to 0."""
    n = board["length"]
    safe = set(board.get("safe", ()))
    out = []
    for c in sorted(set(own)):
        t = ludo_move(board, c, face)
        if t is None:
            continue
        new_own = list(own)
        new_own[new_own.index(c)] = t
        new_opp = [0 if (q == t and t not in safe and t not in (0, n)) else q for q in opp]
        new_own = tuple(sorted(new_own))
        out.append((c, new_own, tuple(sorted(new_opp)), all(q == n for q in new_own)))
    return out


def race_values(board, pieces, tol=1e-13):
    """Win probability of the player to move under optimal play, {(own, opp): float}, by
    dict-based negamax value iteration (Gauss-Seidel order of a plain dict) over every pair of
    sorted tuples of cells 0..N (ended games excluded)."""
    from itertools import combinations_with_replacement

    n = board["length"]
    again = board.get("roll_again_on")
    tuples = list(combinations_with_replacement(range(n + 1), pieces))
    done = tuple([n] * pieces)
    states = [(a, b) for a in tuples for b in tuples if a != done and b != done]
    value = {s: 0.0 for s in states}

    def q(own, opp, face):
        moves = race_moves(board, own, opp, face)
        if not moves:
            return value[own, opp] if face == again else 1.0 - value[opp, own]
        best = 0.0
        for _, o2, p2, won in moves:
            if won:
                v = 1.0
            elif face == again:
                v = value[o2, p2]
            else:
                v = 1.0 - value[p2, o2]
            best = max(best, v)
        return best

    while True:
        delta = 0.0
        for own, opp in states:
            v = sum(float(p) * q(own, opp, d) for d, p in enumerate(board["die"], 1) if p > 0)
            delta = max(delta, abs(v - value[own, opp]))
            value[own, opp] = v
        if delta <= tol:
            return value


def simulate_race(board, pieces, policy_a, policy_b, rng, games):
    """Games won by A (moving first) out of ``games``. A policy is called as
    ``policy(own, opp, face, moves)`` with ``moves`` from :func:`race_moves` and returns the index
    of the chosen move."""
    faces = list(range(1, len(board["die"]) + 1))
    weights = [float(p) for p in board["die"]]
    again = board.get("roll_again_on")
    wins = 0
    for _ in range(games):
        sides = [tuple([0] * pieces), tuple([0] * pieces)]
        policies = (policy_a, policy_b)
        turn = 0
        while True:
            face = rng.choices(faces, weights)[0]
            own, opp = sides[turn], sides[1 - turn]
            moves = race_moves(board, own, opp, face)
            if moves:
                _, own, opp, won = moves[policies[turn](own, opp, face, moves)]
                sides[turn], sides[1 - turn] = own, opp
                if won:
                    wins += turn == 0
                    break
            if face != again:
                turn = 1 - turn
    return wins
# Ludo race, second reference: written apart from race_moves / race_values above (no
# shared code): each player's pieces are an *ordered* tuple (piece identities kept), Jacobi value
# iteration from 0, both move rules. ``pass_by_overshoot`` True: any piece not at N may be picked,
# and one whose roll overshoots (overshoot "stay") stays where it is, which passes the turn; False:
# only pieces that can move may be picked, and the turn passes only when none can. A capture
# happens only on the cell where the moved piece ends (after its jumps), and sends every opponent
# piece there (not 0, N or a safe cell) back to 0.
# ---------------------------------------------------------------------------------------------

def ludo_step(board, cell, face):
    """(cell after the roll, moved?) for one piece not at N."""
    n = board["length"]
    t = cell + face
    if t > n:
        rule = board.get("overshoot", "stay")
        if rule == "stay":
            return cell, False
        t = n if rule == "finish" else n - (t - n)
    seen = 0
    jumps = board.get("jumps", {})
    while t in jumps and (seen == 0 or board.get("chain_jumps", False)):
        t = jumps[t]
        seen += 1
    return t, True


def ludo_race_options(board, own, opp, face, pass_by_overshoot):
    """[(own', opp', moved)] the mover may choose from after ``face`` (a pass keeps both)."""
    n = board["length"]
    safe = set(board.get("safe", ()))
    options = []
    for i, cell in enumerate(own):
        if cell == n:
            continue
        t, moved = ludo_step(board, cell, face)
        if not moved:
            if pass_by_overshoot:
                options.append((own, opp, False))
            continue
        new_own = own[:i] + (t,) + own[i + 1:]
        hit = t not in safe and 0 < t < n
        new_opp = tuple(0 if (hit and q == t) else q for q in opp)
        options.append((new_own, new_opp, True))
    return options or [(own, opp, False)]


def ludo_race_reference(board, pieces, pass_by_overshoot, tol=1e-13):
    """Win probability of the player to move under optimal play, {(own, opp): float} over ordered
    piece tuples of cells 0..N (games already won excluded), by Jacobi value iteration."""
    from itertools import product

    n = board["length"]
    again = board.get("roll_again_on")
    home = (n,) * pieces
    sides = [s for s in product(range(n + 1), repeat=pieces) if s != home]
    states = [(a, b) for a in sides for b in sides]
    faces = [(d, float(p)) for d, p in enumerate(board["die"], 1) if p > 0]
    table = {(s, d): ludo_race_options(board, s[0], s[1], d, pass_by_overshoot)
             for s in states for d, _ in faces}
    value = dict.fromkeys(states, 0.0)
    while True:
        new = {}
        for s in states:
            total = 0.0
            for d, p in faces:
                best = 0.0
                for own, opp, _ in table[s, d]:
                    if own == home:
                        v = 1.0
                    elif d == again:
                        v = value[own, opp]
                    else:
                        v = 1.0 - value[opp, own]
                    best = max(best, v)
                total += p * best
            new[s] = total
        delta = max(abs(new[s] - value[s]) for s in states)
        value = new
        if delta <= tol:
            return value


def solo_turns(board, pieces, pass_by_overshoot, tol=1e-13):
    """Mean and variance of the turns one side needs to bring ``pieces`` pieces from each ordered
    tuple of cells to N alone on the board (a bonus roll continues the turn), each roll taking the
    option of least mean turns (the first such in increasing cell order of the moved piece, a pass
    only when strictly less): ({tuple: mean}, {tuple: variance}), by Gauss-Seidel over a plain
    dict."""
    from itertools import product

    n = board["length"]
    again = board.get("roll_again_on")
    home = (n,) * pieces
    sides = [s for s in product(range(n + 1), repeat=pieces) if s != home]
    faces = [(d, float(p)) for d, p in enumerate(board["die"], 1) if p > 0]
    options = {}
    for s in sides:
        for d, _ in faces:
            opts = ludo_race_options(board, tuple(sorted(s)), (), d, pass_by_overshoot)
            moves = [o for o, _, moved in opts if moved]
            options[s, d] = (moves, any(not moved for _, _, moved in opts))
    mean = dict.fromkeys(sides, 0.0)
    mean[home] = 0.0
    square = dict(mean)

    def key(t):
        return tuple(sorted(t))

    while True:
        delta = 0.0
        for s in sides:
            first = second = 0.0
            for d, p in faces:
                moves, can_pass = options[s, d]
                best, least = None, float("inf")
                for t in moves:
                    m = 0.0 if key(t) == home else mean[key(t)]
                    if m < least:
                        best, least = key(t), m
                if can_pass and mean[key(s)] < least:
                    best = key(s)
                if best == home:
                    first, second = first + p, second + p
                elif d == again:
                    first, second = first + p * mean[best], second + p * square[best]
                else:
                    first += p * (1 + mean[best])
                    second += p * (1 + 2 * mean[best] + square[best])
            delta = max(delta, abs(first - mean[s]))
            mean[s], square[s] = first, second
        if delta <= tol:
            return mean, {s: square[s] - mean[s] ** 2 for s in mean}
