"""Shut the Box as a CSR expansion for the shared Bellman kernels: nodes are masks of cards or
tiles (the rules and node numbering are in :mod:`.rules`)."""

import numpy as np

from ...kernels.iteration import Expansion
from ...kernels.options import njit
from .rules import ONE_DIE_SUM, check_params, roll_totals, unordered_rolls


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


def expansion(cards, faces, rule="flip-one", objective="min-rolls", one_die=False):
    """The expansion of a variant, its start node and whether it maximises."""
    check_params(cards, faces, rule, objective, one_die)
    if rule == "flip-one":
        return flip_one_expansion(cards, faces), 0, False
    return standard_expansion(cards, faces, objective, one_die), (1 << cards) - 1, \
        objective == "max-shut"
