"""Shut the Box: rules, encoding and the CSR expansion for the shared Bellman kernels.

Two rule sets (issue 7):

``flip-one``
    Cards 1..n, all clear at the start. Two dice with faces 1..f are rolled; after seeing the roll
    (x, y) the player flips exactly one existing card among x, y and x + y (a bit toggle: it can
    close or reopen a card). If none of the three is a card (possible when f > n), the roll passes.
    The game ends when every card is set; objective ``min-rolls``: minimise the expected number of
    rolls. The ordered rolls (x, y) and (y, x) offer the same cards, so they are merged into one
    outcome of probability 2/f^2 (1/f^2 for doubles).
    Node = mask of set cards (bit c-1 for card c); start 0, goal ``2^n - 1``.

``standard``
    Tiles 1..n, all open. Roll two f-faced dice and shut any set of open tiles whose sum equals the
    total; when no such set exists the game ends (Wikipedia, "Shut the box"; D. Butler,
    http://www.durangobill.com/ShutTheBox.html). Objectives ``max-shut`` (probability of shutting
    every tile) and ``min-sum`` (expected sum of the tiles left open). Option ``one_die``: a single
    die is rolled whenever the open tiles sum to 6 or less (Butler's standard game). Node = mask of
    open tiles (bit t-1 for tile t); start ``2^n - 1``; node ``2^n`` is the absorbing end. Every
    game end is a candidate into it whose reward is the final utility: 1 for shutting the box
    (``max-shut``), the open sum (``min-sum``), 0 otherwise; so node 0 (all shut) has one sure
    outcome paying that utility.
"""

from typing import NamedTuple

import numpy as np

from ..kernels.exact import exact_policy_iteration, exact_probabilities
from ..kernels.iteration import Expansion, evaluate_policy, policy_iteration, value_iteration
from ..kernels.options import njit

RULES = ("flip-one", "standard")
OBJECTIVES = {"flip-one": ("min-rolls",), "standard": ("max-shut", "min-sum")}
ONE_DIE_SUM = 6  # open tiles summing to this or less roll one die (Butler's standard game)
MAX_CARDS = 20  # 2^20 nodes: about a gigabyte of expansion
# Largest sizes solved in fractions by ``--exact`` (measured on 2 shared cores, f = 6, see
# README): flip-one is cyclic, so its exact elimination fills in (n = 10: about 5 s, each card
# more about 4.7 times that); standard is acyclic, one substitution per candidate.
MAX_EXACT_CARDS = {"flip-one": 10, "standard": 14}


def check_params(cards, faces, rule="flip-one", objective="min-rolls", one_die=False):
    """Validate a Shut the Box variant.

    Raises
    ------
    ValueError
        Naming the bad value: ``cards`` outside 1..20, ``faces`` < 1, an unknown rule, an objective
        the rule does not have, or ``one_die`` with the flip-one rule.
    """
    if isinstance(cards, bool) or not isinstance(cards, (int, np.integer)) \
            or not 1 <= cards <= MAX_CARDS:
        raise ValueError(f"cards must be an integer in 1..{MAX_CARDS}, got {cards!r}")
    if isinstance(faces, bool) or not isinstance(faces, (int, np.integer)) or not 1 <= faces <= 100:
        raise ValueError(f"faces must be an integer in 1..100, got {faces!r}")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if objective not in OBJECTIVES[rule]:
        raise ValueError(f"objective {objective!r} does not apply to rule {rule!r}; "
                         f"allowed: {', '.join(OBJECTIVES[rule])}")
    if one_die and rule != "standard":
        raise ValueError("one_die applies only to the standard rule")


def unordered_rolls(faces):
    """The rolls of two f-faced dice up to order.

    Returns
    -------
    rolls : int64[R, 2]
        ``(x, y)`` with ``x <= y``, in lexicographic order; R = f (f + 1) / 2.
    prob : float64[R]
        2/f^2 if x < y, else 1/f^2.
    """
    rolls = np.array([(x, y) for x in range(1, faces + 1) for y in range(x, faces + 1)], np.int64)
    prob = np.where(rolls[:, 0] < rolls[:, 1], 2.0, 1.0) / faces ** 2
    return rolls, prob


def flip_cards(x, y, cards):
    """The cards the flip-one rule offers after the roll (x, y): distinct cards among x, y, x + y
    that exist, in that order (the order of the candidates in the expansion)."""
    out = []
    for c in (x, y, x + y):
        if c <= cards and c not in out:
            out.append(c)
    return out


@njit
def _flip_one(cards, roll_x, roll_y, roll_p):
    n_nodes = 1 << cards
    goal = n_nodes - 1
    n_rolls = roll_x.shape[0]
    node_ptr = np.zeros(n_nodes + 1, np.int64)
    out_prob = np.empty(goal * n_rolls, np.float64)
    out_ptr = np.zeros(goal * n_rolls + 1, np.int64)
    nxt = np.empty(goal * n_rolls * 3, np.int64)
    o = 0
    a = 0
    flips = np.empty(3, np.int64)
    for mask in range(n_nodes):
        if mask != goal:
            for r in range(n_rolls):
                flips[0] = roll_x[r]
                flips[1] = roll_y[r]
                flips[2] = roll_x[r] + roll_y[r]
                start = a
                for i in range(3):
                    c = flips[i]
                    if c > cards or (i >= 1 and c == flips[0]) or (i == 2 and c == flips[1]):
                        continue
                    nxt[a] = mask ^ (1 << (c - 1))
                    a += 1
                if a == start:  # no card to flip: the roll passes
                    nxt[a] = mask
                    a += 1
                out_prob[o] = roll_p[r]
                o += 1
                out_ptr[o] = a
        node_ptr[mask + 1] = o
    return node_ptr, out_prob, out_ptr, nxt[:a].copy()


def flip_one_expansion(cards, faces):
    """CSR expansion of the flip-one game (reward 1 roll per candidate, sign +1; minimise).

    Parameters
    ----------
    cards : int
        n, cards 1..n (1 <= n <= 20).
    faces : int
        f, faces of each die.

    Returns
    -------
    Expansion
        ``2^n`` nodes indexed by the mask of set cards; the goal ``2^n - 1`` has no outcome.
        Outcomes of every other node follow :func:`unordered_rolls`; candidates follow
        :func:`flip_cards` (a single "pass" candidate back to the same node if it is empty).
    """
    check_params(cards, faces)
    rolls, prob = unordered_rolls(faces)
    node_ptr, out_prob, out_ptr, nxt = _flip_one(cards, rolls[:, 0].copy(), rolls[:, 1].copy(),
                                                 prob)
    ones = np.ones(nxt.size)
    return Expansion(node_ptr, out_prob, out_ptr, ones, nxt, ones.copy())


def roll_totals(faces, dice):
    """Distribution of the total of ``dice`` (1 or 2) f-faced dice: (totals int64[T], prob[T])."""
    if dice == 1:
        return np.arange(1, faces + 1), np.full(faces, 1.0 / faces)
    totals = np.arange(2, 2 * faces + 1)
    ways = faces - np.abs(totals - (faces + 1))
    return totals, ways / faces ** 2


@njit
def _push(reward, nxt, a, r, y):
    # append one candidate, doubling the buffers when full
    if a == reward.shape[0]:
        reward = np.concatenate((reward, np.empty(a, np.float64)))
        nxt = np.concatenate((nxt, np.empty(a, np.int64)))
    reward[a] = r
    nxt[a] = y
    return reward, nxt, a + 1


@njit
def _standard(cards, max_shut, one_die, t1, p1, t2, p2):
    n_masks = 1 << cards
    end = n_masks
    tile_sum = np.zeros(n_masks, np.int64)
    for m in range(1, n_masks):
        low = m & -m
        t = 0
        while (1 << t) != low:
            t += 1
        tile_sum[m] = tile_sum[m ^ low] + t + 1
    n_out = 1 + (n_masks - 1) * max(t1.shape[0], t2.shape[0])
    node_ptr = np.zeros(n_masks + 2, np.int64)
    out_prob = np.empty(n_out, np.float64)
    out_ptr = np.zeros(n_out + 1, np.int64)
    reward = np.empty(1024, np.float64)
    nxt = np.empty(1024, np.int64)
    o = 0
    a = 0
    # all shut: one sure outcome, the game ends with utility 1 (max-shut) or 0 (min-sum)
    reward, nxt, a = _push(reward, nxt, a, 1.0 if max_shut else 0.0, end)
    out_prob[0] = 1.0
    o = 1
    out_ptr[1] = a
    node_ptr[1] = 1
    for mask in range(1, n_masks):
        one = one_die and tile_sum[mask] <= ONE_DIE_SUM
        totals = t1 if one else t2
        probs = p1 if one else p2
        for r in range(totals.shape[0]):
            start = a
            s = mask
            while s > 0:
                if tile_sum[s] == totals[r]:
                    reward, nxt, a = _push(reward, nxt, a, 0.0, mask ^ s)
                s = (s - 1) & mask
            if a == start:  # no set sums to the roll: the game ends
                reward, nxt, a = _push(reward, nxt, a, 0.0 if max_shut else float(tile_sum[mask]),
                                       end)
            out_prob[o] = probs[r]
            o += 1
            out_ptr[o] = a
        node_ptr[mask + 1] = o
    node_ptr[n_masks + 1] = o
    return node_ptr, out_prob[:o].copy(), out_ptr[:o + 1].copy(), reward[:a].copy(), nxt[:a].copy()


def standard_expansion(cards, faces, objective, one_die=False):
    """CSR expansion of the standard game (sign +1).

    Parameters
    ----------
    cards : int
        n, tiles 1..n.
    faces : int
        f, faces of each die.
    objective : {"max-shut", "min-sum"}
        Maximise the probability of shutting every tile, or minimise the expected open sum (points).
    one_die : bool
        Roll one die when the open tiles sum to 6 or less.

    Returns
    -------
    Expansion
        ``2^n + 1`` nodes: masks of open tiles, then the end node (no outcome). Outcomes are roll
        totals (ascending); candidates are the subsets summing to the total, in decreasing mask
        order, or one game-end candidate paying the final utility.
    """
    check_params(cards, faces, "standard", objective, one_die)
    t1, p1 = roll_totals(faces, 1)
    t2, p2 = roll_totals(faces, 2)
    node_ptr, out_prob, out_ptr, reward, nxt = _standard(cards, objective == "max-shut", one_die,
                                                         t1, p1, t2, p2)
    return Expansion(node_ptr, out_prob, out_ptr, reward, nxt, np.ones(nxt.size))


class ShutboxSolution(NamedTuple):
    """A solved Shut the Box variant.

    Attributes
    ----------
    value_start : float
        Rolls (min-rolls), probability (max-shut) or points (min-sum) from the start.
    value : float64[X]
        Per node (see the module docstring for the node encoding).
    policy : int64[O]
        Best candidate per outcome (position within the outcome).
    expansion : Expansion
    iterations, sweeps : int
    residual : float
        Bellman residual of ``value``.
    """

    value_start: float
    value: np.ndarray
    policy: np.ndarray
    expansion: Expansion
    iterations: int
    sweeps: int
    residual: float


def expansion(cards, faces, rule="flip-one", objective="min-rolls", one_die=False):
    """The expansion of a variant, its start node and whether it maximises."""
    check_params(cards, faces, rule, objective, one_die)
    if rule == "flip-one":
        return flip_one_expansion(cards, faces), 0, False
    return standard_expansion(cards, faces, objective, one_die), (1 << cards) - 1, \
        objective == "max-shut"


def solve(cards, faces, rule="flip-one", objective="min-rolls", one_die=False,
          method="policy-iteration", tol=1e-13):
    """Solve a Shut the Box variant exactly (to ``tol``).

    Parameters
    ----------
    cards, faces, rule, objective, one_die
        See :func:`check_params` and the module docstring.
    method : {"policy-iteration", "value-iteration", "value-iteration-jacobi"}
        Policy iteration, or value iteration with Gauss-Seidel or Jacobi sweeps.
    tol : float
        Final tolerance on a sweep's largest change (value units).

    Returns
    -------
    ShutboxSolution

    Raises
    ------
    ValueError
        Bad parameters (naming the value) or method.
    """
    exp, start, maximize = expansion(cards, faces, rule, objective, one_die)
    if method == "policy-iteration":
        sol = policy_iteration(exp, maximize=maximize, tol=tol)
    elif method in ("value-iteration", "value-iteration-jacobi"):
        sol = value_iteration(exp, maximize=maximize, tol=tol,
                              method="jacobi" if method.endswith("jacobi") else "gauss-seidel")
    else:
        raise ValueError("method must be policy-iteration, value-iteration or "
                         f"value-iteration-jacobi, got {method!r}")
    return ShutboxSolution(float(sol.value[start]), sol.value, sol.policy, exp, sol.iterations,
                           sol.sweeps, sol.residual)


def exact_policy_value(solution):
    """Value of the solution's policy by one sparse linear solve (float64[X])."""
    return evaluate_policy(solution.expansion, solution.policy)


def flip_one_policy_table(cards, faces, policy):
    """The flip-one policy as a table: the card to flip per set-card mask and unordered roll.

    Returns
    -------
    rolls : int64[R, 2]
        As :func:`unordered_rolls`.
    flip : int64[2^n, R]
        Card to flip (1..n), 0 where the roll passes, -1 at the goal (no roll).
    """
    rolls, _ = unordered_rolls(faces)
    n_rolls = len(rolls)
    goal = (1 << cards) - 1
    offered = [flip_cards(int(x), int(y), cards) for x, y in rolls]
    flip = np.full((1 << cards, n_rolls), -1, np.int64)
    body = np.asarray(policy).reshape(goal, n_rolls)  # the goal has no outcome and comes last
    for r, cards_r in enumerate(offered):
        lookup = np.array(cards_r or [0], np.int64)
        flip[:goal, r] = lookup[body[:, r]]
    return rolls, flip


def standard_policy_table(cards, faces, one_die, policy, exp):
    """The standard-game policy: per open-tile mask and total, the mask of tiles to shut.

    Returns
    -------
    dict
        ``{mask: {total: shut_mask}}`` for masks 1..2^n-1 (``shut_mask`` 0 where the game ends).
    """
    t1, _ = roll_totals(faces, 1)
    t2, _ = roll_totals(faces, 2)
    table = {}
    for mask in range(1, 1 << cards):
        open_sum = sum(t + 1 for t in range(cards) if mask >> t & 1)
        totals = t1 if one_die and open_sum <= ONE_DIE_SUM else t2
        row = {}
        for k, total in enumerate(totals):
            o = exp.node_ptr[mask] + k
            a = exp.out_ptr[o] + policy[o]
            nxt = exp.cand_next[a]
            row[int(total)] = 0 if nxt == 1 << cards else int(mask ^ nxt)
        table[mask] = row
    return table


def advise(rule, objective, cards, one_die, value, open_cards, roll):
    """Every choice after a roll, valued from a solved variant's values (no re-solve).

    Parameters
    ----------
    rule, objective, cards, one_die
        The variant (module docstring).
    value : float64[2^n] or longer
        Value per mask as solved (``ShutboxSolution.value``; flip-one: mask of set cards,
        standard: mask of open tiles).
    open_cards : iterable of int
        flip-one: the cards not yet set; standard: the open tiles.
    roll : tuple of int
        The dice: two faces (x, y), or one face when ``one_die`` applies (open tiles summing to 6
        or less).

    Returns
    -------
    list of dict
        flip-one: ``flip`` (card, None for the pass) per card offered (order of
        :func:`flip_cards`); standard: ``shut`` (sorted tiles, empty when the game ends) per
        subset summing to the total, in decreasing mask order. Each with ``open_after`` (sorted)
        and ``value`` (expected rolls still to come, probability of shutting every tile, or
        expected open sum) and ``best`` (True on the first optimal choice).

    Raises
    ------
    ValueError
        A card outside 1..n, a finished game, or a roll of the wrong number of dice.
    """
    full = (1 << cards) - 1
    open_mask = 0
    for c in open_cards:
        if not 1 <= c <= cards:
            raise ValueError(f"card {c} is outside 1..{cards}")
        open_mask |= 1 << (c - 1)
    open_sum = sum(c + 1 for c in range(cards) if open_mask >> c & 1)
    dice = 1 if rule == "standard" and one_die and open_sum <= ONE_DIE_SUM else 2
    if len(roll) != dice:
        raise ValueError(f"this position rolls {dice} {'die' if dice == 1 else 'dice'}, got the "
                         f"roll {','.join(map(str, roll))}")

    def tiles(mask):
        return [c + 1 for c in range(cards) if mask >> c & 1]

    out = []
    if rule == "flip-one":
        if open_mask == 0:
            raise ValueError("every card is set: the game is over")
        mask = full ^ open_mask  # set cards
        for card in flip_cards(roll[0], roll[1], cards) or [None]:
            nxt = mask if card is None else mask ^ (1 << (card - 1))
            out.append({"flip": card, "open_after": tiles(full ^ nxt), "value": float(value[nxt])})
        pick = min
    else:
        if open_mask == 0:
            raise ValueError("every tile is shut: the game is over")
        total = sum(roll)
        for shut in range(open_mask, 0, -1):
            if shut & ~open_mask == 0 and sum(tiles(shut)) == total:
                out.append({"shut": tiles(shut), "open_after": tiles(open_mask ^ shut),
                            "value": float(value[open_mask ^ shut])})
        if not out:  # the game ends here
            final = 0.0 if objective == "max-shut" else float(open_sum)
            out.append({"shut": [], "open_after": tiles(open_mask), "value": final})
        pick = max if objective == "max-shut" else min
    best = pick(range(len(out)), key=lambda i: out[i]["value"])
    for i, choice in enumerate(out):
        choice["best"] = i == best
    return out


class ExactShutboxSolution(NamedTuple):
    """A Shut the Box variant solved in rationals.

    Attributes
    ----------
    value_start : Fraction or None
        Rolls (min-rolls), probability (max-shut) or points (min-sum) from the start; None when
        infinite (the dice cannot set every card).
    value : dict
        ``{node: Fraction or None}`` per node (module docstring for the node encoding).
    policy : list of int
        An optimal policy, per outcome (as ``ShutboxSolution.policy``).
    steps : int
        Policies evaluated in fractions (1 when the float solver's policy is exactly optimal).
    float_solution : ShutboxSolution
        The float solve it started from.
    """

    value_start: object
    value: dict
    policy: list
    steps: int
    float_solution: ShutboxSolution


def float_command(cards, faces, rule, objective, one_die=False):
    """The ``strongsolve shutbox`` command that solves this variant in floats (str)."""
    return (f"strongsolve shutbox --cards {cards} --faces {faces} --rule {rule} --objective "
            f"{objective}{' --one-die' if one_die else ''}")


def solve_exact(cards, faces, rule="flip-one", objective="min-rolls", one_die=False,
                method="policy-iteration", tol=1e-13):
    """Solve a small Shut the Box variant exactly, in rationals (issue 19).

    The dice probabilities are multiples of 1/f^2 and the rewards whole numbers, so the optimal
    values are rationals; :func:`strongsolve.kernels.exact.exact_policy_iteration` finds them with
    :class:`fractions.Fraction`, starting from the float solution's policy and proving optimality
    by an exact improvement step that changes nothing.

    Parameters
    ----------
    cards, faces, rule, objective, one_die
        See :func:`check_params`; ``cards`` at most ``MAX_EXACT_CARDS[rule]``.
    method, tol
        The float solve that gives the starting policy (:func:`solve`).

    Returns
    -------
    ExactShutboxSolution

    Raises
    ------
    ValueError
        Bad parameters, or more cards than ``MAX_EXACT_CARDS[rule]`` (naming the size, the limit
        and the float command that solves the variant).
    """
    check_params(cards, faces, rule, objective, one_die)
    limit = MAX_EXACT_CARDS[rule]
    if cards > limit:
        raise ValueError(
            f"--exact solves the {rule} rule in fractions up to {limit} cards; {cards} cards would "
            f"take too long (2^{cards} positions; flip-one's exact elimination grows about 4.7 "
            f"times per card). For the float value, accurate to about 1e-13, run "
            f"`{float_command(cards, faces, rule, objective, one_die)}`")
    sol = solve(cards, faces, rule, objective, one_die, method, tol)
    exp = sol.expansion
    prob = exact_probabilities(exp.out_prob, faces * faces)  # one die: 1/f = f/f^2
    if rule == "flip-one":  # closest to the goal (more cards set) first
        order = sorted(range(exp.n_nodes), key=lambda m: (-bin(m).count("1"), m))
        start = 0
    else:  # shutting only clears bits: the end node, then masks upward, is successors first
        order = [exp.n_nodes - 1, *range(exp.n_nodes - 1)]
        start = (1 << cards) - 1
    value, policy, steps = exact_policy_iteration(exp, prob, sol.policy, sol.value,
                                                  maximize=objective == "max-shut",
                                                  elimination_order=order)
    return ExactShutboxSolution(value[start], value, policy, steps, sol)
