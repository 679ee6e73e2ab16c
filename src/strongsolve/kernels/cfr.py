"""Discounted CFR over a tabular two-player zero-sum extensive-form game, and its exact best response.

The game is a tree stored as arrays (``TabularGame``), nodes in topological order (parent before
child, root 0):

- ``node_type``  int8[N]: 0 terminal, 1 chance, 2 decision
- ``node_player`` int8[N]: 0 or 1 at decision nodes, -1 elsewhere
- ``node_infoset`` int32[N]: information set of a decision node, -1 elsewhere
- ``child_ptr`` int64[N+1], ``child`` int64[E]: children of ``n`` are ``child[child_ptr[n]:child_ptr[n+1]]``;
  at a decision node the k-th child follows action k of its information set
- ``child_prob`` float64[E]: probability of each chance edge (ignored on decision edges)
- ``utility`` float64[N]: player 0's utility at terminals (player 1 gets its negative)
- ``infoset_ptr`` int64[I+1]: action slots of information set ``i`` are ``infoset_ptr[i]:infoset_ptr[i+1]``
- ``node_depth`` int32[N]: grows from parent to child, and every node of an information set has one
  depth (both checked), which lets the best response run level by level.

Solver: discounted CFR (Brown and Sandholm, "Solving imperfect-information games via discounted
regret minimization", AAAI 2019) with alternating updates; defaults alpha = 1.5, beta = 0, gamma = 2.
Exploitability follows OpenSpiel's NashConv: ``nash_conv = BR_0(avg_1) - BR_1(avg_0)`` in player 0's
utility (the sum of both players' gains from deviating), ``exploitability = nash_conv / 2``.
"""

import time
from dataclasses import dataclass

import numba
import numpy as np

from .options import njit, njit_parallel

TERMINAL, CHANCE, DECISION = 0, 1, 2


@dataclass
class TabularGame:
    """A two-player zero-sum game tree as arrays (see the module docstring for shapes and dtypes)."""

    node_type: np.ndarray
    node_player: np.ndarray
    node_infoset: np.ndarray
    child_ptr: np.ndarray
    child: np.ndarray
    child_prob: np.ndarray
    utility: np.ndarray
    infoset_ptr: np.ndarray
    node_depth: np.ndarray

    def __post_init__(self):
        self.level_order = np.argsort(self.node_depth, kind="stable").astype(np.int64)
        n_levels = int(self.node_depth.max()) + 1 if len(self.node_depth) else 0
        self.level_ptr = np.searchsorted(self.node_depth[self.level_order],
                                         np.arange(n_levels + 1)).astype(np.int64)

    @property
    def n_nodes(self):
        return len(self.node_type)

    @property
    def n_infosets(self):
        return len(self.infoset_ptr) - 1

    def validate(self):
        """Check shapes, topological order, action counts, chance sums and depths (ValueError)."""
        n = self.n_nodes
        for name, dtype in [("node_type", np.int8), ("node_player", np.int8),
                            ("node_infoset", np.int32), ("child_ptr", np.int64), ("child", np.int64),
                            ("child_prob", np.float64), ("utility", np.float64),
                            ("infoset_ptr", np.int64), ("node_depth", np.int32)]:
            arr = getattr(self, name)
            if arr.dtype != dtype:
                raise ValueError(f"{name} has dtype {arr.dtype}; expected {np.dtype(dtype)}")
        if len(self.child_ptr) != n + 1 or len(self.child_prob) != len(self.child):
            raise ValueError("child_ptr must have N+1 entries and child_prob one per child")
        parent = np.repeat(np.arange(n), np.diff(self.child_ptr))
        if np.any(self.child <= parent):
            raise ValueError("nodes must be in topological order (every child after its parent)")
        if np.any(self.node_depth[self.child] <= self.node_depth[parent]):
            raise ValueError("node_depth must grow from parent to child")
        nkids = np.diff(self.child_ptr)
        dec = self.node_type == DECISION
        iset = self.node_infoset[dec]
        if np.any(nkids[dec] != np.diff(self.infoset_ptr)[iset]):
            raise ValueError("a decision node's child count differs from its information set's actions")
        for arr in (self.node_player, self.node_depth):
            first = np.full(self.n_infosets, -1, np.int64)
            first[iset] = arr[dec]
            if np.any(first[iset] != arr[dec]):
                raise ValueError("nodes of one information set differ in player or depth")
        ch = self.node_type == CHANCE
        sums = np.add.reduceat(self.child_prob, self.child_ptr[:-1][ch]) if ch.any() else np.ones(0)
        if np.any(np.abs(sums - 1.0) > 1e-9):
            raise ValueError("chance probabilities must sum to 1 at every chance node")
        if np.any(nkids[self.node_type == TERMINAL] != 0):
            raise ValueError("terminal nodes must have no children")


# The per-slot arithmetic of DCFR, shared with kernels/forest_cfr.py so that both solvers compute
# the same bits. The loops over information sets are ``prange``: a serial compile runs them as
# ``range``, a parallel one (the forest's large games) splits them over threads.


def _regret_matching_py(regret, infoset_ptr, out):
    """Regret matching at every information set.

    Parameters
    ----------
    regret : float64[M]
        Cumulative regret of each action slot.
    infoset_ptr : int64[I+1]
        Slots of information set ``i`` are ``infoset_ptr[i]:infoset_ptr[i+1]``.
    out : float64[M]
        Receives the current strategy: each slot's positive regret over its set's sum of positive
        regrets, uniform over the set where none is positive (Hart and Mas-Colell 2000).
    """
    for i in numba.prange(infoset_ptr.shape[0] - 1):
        lo, hi = infoset_ptr[i], infoset_ptr[i + 1]
        s = 0.0
        for k in range(lo, hi):
            if regret[k] > 0.0:
                s += regret[k]
        for k in range(lo, hi):
            out[k] = (regret[k] / s if regret[k] > 0.0 else 0.0) if s > 0.0 else 1.0 / (hi - lo)


regret_matching = njit(_regret_matching_py)
regret_matching_parallel = njit_parallel(_regret_matching_py)


def _normalise_sums_py(strat_sum, infoset_ptr, out):
    """The average strategy from the strategy sums.

    Parameters
    ----------
    strat_sum : float64[M]
        Reach-weighted strategy sums of each action slot.
    infoset_ptr : int64[I+1]
        As in ``regret_matching``.
    out : float64[M]
        Receives each slot's sum over its information set's total, uniform where the total is 0
        (a set never reached).
    """
    for i in numba.prange(infoset_ptr.shape[0] - 1):
        lo, hi = infoset_ptr[i], infoset_ptr[i + 1]
        s = 0.0
        for k in range(lo, hi):
            s += strat_sum[k]
        for k in range(lo, hi):
            out[k] = strat_sum[k] / s if s > 0.0 else 1.0 / (hi - lo)


normalise_sums = njit(_normalise_sums_py)
normalise_sums_parallel = njit_parallel(_normalise_sums_py)


@njit
def dcfr_weights(t, alpha, beta, gamma):
    """DCFR's discounts at iteration ``t`` (float, from 1; Brown and Sandholm 2019): the factors
    (pos, neg, avg) of positive regrets, negative regrets and the strategy sum."""
    pos = t ** alpha / (t ** alpha + 1.0)
    neg = t ** beta / (t ** beta + 1.0)
    avg = (t / (t + 1.0)) ** gamma
    return pos, neg, avg


@njit
def discount_and_add(regret, strat_sum, lo, hi, regret_new, strat_new, new_lo, pos, neg, avg):
    """One information set's DCFR update of slots ``lo:hi`` of ``regret`` and ``strat_sum``
    (float64[M], in place): regrets scaled by ``pos`` if positive else ``neg``, the sums by ``avg``,
    then the iteration's ``regret_new`` / ``strat_new`` from slot ``new_lo`` on added."""
    for k in range(lo, hi):
        j = new_lo + k - lo
        r = regret[k]
        r *= pos if r > 0.0 else neg
        regret[k] = r + regret_new[j]
        strat_sum[k] = strat_sum[k] * avg + strat_new[j]


@njit
def _reach(node_type, node_player, node_infoset, child_ptr, child, child_prob, infoset_ptr,
           strategy, p, reach_other, reach_own):
    """Top-down: chance x opponent-of-p reach, and p's own reach."""
    reach_other[0] = 1.0
    reach_own[0] = 1.0
    for n in range(node_type.shape[0]):
        t = node_type[n]
        if t == TERMINAL:
            continue
        lo = child_ptr[n]
        if t == CHANCE:
            for e in range(lo, child_ptr[n + 1]):
                c = child[e]
                reach_other[c] = reach_other[n] * child_prob[e]
                reach_own[c] = reach_own[n]
        else:
            base = infoset_ptr[node_infoset[n]]
            mine = node_player[n] == p
            for e in range(lo, child_ptr[n + 1]):
                c = child[e]
                s = strategy[base + e - lo]
                if mine:
                    reach_other[c] = reach_other[n]
                    reach_own[c] = reach_own[n] * s
                else:
                    reach_other[c] = reach_other[n] * s
                    reach_own[c] = reach_own[n]


@njit
def _values_and_regrets(node_type, node_player, node_infoset, child_ptr, child, child_prob, utility,
                        infoset_ptr, strategy, p, reach_other, reach_own, value, regret_new,
                        strat_new):
    """Bottom-up: player-0 values under ``strategy``; instantaneous regrets and reach-weighted
    strategy for player p."""
    sign = 1.0 if p == 0 else -1.0
    for n in range(node_type.shape[0] - 1, -1, -1):
        t = node_type[n]
        if t == TERMINAL:
            value[n] = utility[n]
            continue
        lo = child_ptr[n]
        v = 0.0
        if t == CHANCE:
            for e in range(lo, child_ptr[n + 1]):
                v += child_prob[e] * value[child[e]]
            value[n] = v
            continue
        base = infoset_ptr[node_infoset[n]]
        for e in range(lo, child_ptr[n + 1]):
            v += strategy[base + e - lo] * value[child[e]]
        value[n] = v
        if node_player[n] == p:
            w = reach_other[n] * sign
            for e in range(lo, child_ptr[n + 1]):
                k = base + e - lo
                regret_new[k] += w * (value[child[e]] - v)
                strat_new[k] += reach_own[n] * strategy[k]


@njit
def _dcfr_iterations(node_type, node_player, node_infoset, child_ptr, child, child_prob, utility,
                     infoset_ptr, infoset_player, regret, strat_sum, t0, iters, alpha, beta, gamma):
    n = node_type.shape[0]
    m = regret.shape[0]
    reach_other = np.empty(n)
    reach_own = np.empty(n)
    value = np.empty(n)
    strategy = np.empty(m)
    regret_new = np.empty(m)
    strat_new = np.empty(m)
    n_is = infoset_ptr.shape[0] - 1
    for it in range(iters):
        pos, neg, avg = dcfr_weights(float(t0 + it + 1), alpha, beta, gamma)
        for p in range(2):
            regret_matching(regret, infoset_ptr, strategy)
            _reach(node_type, node_player, node_infoset, child_ptr, child, child_prob, infoset_ptr,
                   strategy, p, reach_other, reach_own)
            regret_new[:] = 0.0
            strat_new[:] = 0.0
            _values_and_regrets(node_type, node_player, node_infoset, child_ptr, child, child_prob,
                                utility, infoset_ptr, strategy, p, reach_other, reach_own, value,
                                regret_new, strat_new)
            for i in range(n_is):
                if infoset_player[i] == p:
                    discount_and_add(regret, strat_sum, infoset_ptr[i], infoset_ptr[i + 1],
                                     regret_new, strat_new, infoset_ptr[i], pos, neg, avg)


@njit
def _best_response(node_type, node_player, node_infoset, child_ptr, child, child_prob, utility,
                   infoset_ptr, level_order, level_ptr, strategy, p):
    """Value (player 0's utility) of player p's best response to ``strategy`` of the other player."""
    n = node_type.shape[0]
    w = np.empty(n)
    w[0] = 1.0
    for x in range(n):
        if node_type[x] == TERMINAL:
            continue
        lo = child_ptr[x]
        for e in range(lo, child_ptr[x + 1]):
            c = child[e]
            if node_type[x] == CHANCE:
                w[c] = w[x] * child_prob[e]
            elif node_player[x] == p:
                w[c] = w[x]
            else:
                w[c] = w[x] * strategy[infoset_ptr[node_infoset[x]] + e - lo]
    q = np.zeros(strategy.shape[0])
    best = np.zeros(infoset_ptr.shape[0] - 1, np.int64)
    val = np.empty(n)
    for d in range(level_ptr.shape[0] - 2, -1, -1):
        a, b = level_ptr[d], level_ptr[d + 1]
        for j in range(a, b):  # gather action values of p's information sets at this depth
            x = level_order[j]
            if node_type[x] == DECISION and node_player[x] == p:
                lo = child_ptr[x]
                base = infoset_ptr[node_infoset[x]]
                for e in range(lo, child_ptr[x + 1]):
                    q[base + e - lo] += val[child[e]]
        for j in range(a, b):
            x = level_order[j]
            if node_type[x] == DECISION and node_player[x] == p:
                i = node_infoset[x]
                lo, hi = infoset_ptr[i], infoset_ptr[i + 1]
                arg = lo
                for k in range(lo + 1, hi):
                    if (q[k] > q[arg]) if p == 0 else (q[k] < q[arg]):
                        arg = k
                best[i] = arg - lo
        for j in range(a, b):
            x = level_order[j]
            t = node_type[x]
            if t == TERMINAL:
                val[x] = w[x] * utility[x]
            elif t == DECISION and node_player[x] == p:
                val[x] = val[child[child_ptr[x] + best[node_infoset[x]]]]
            else:
                s = 0.0
                for e in range(child_ptr[x], child_ptr[x + 1]):
                    s += val[child[e]]
                val[x] = s
    return val[0]


@njit
def _expected_value(node_type, node_infoset, child_ptr, child, child_prob, utility, infoset_ptr,
                    strategy):
    n = node_type.shape[0]
    value = np.empty(n)
    for x in range(n - 1, -1, -1):
        t = node_type[x]
        if t == TERMINAL:
            value[x] = utility[x]
            continue
        lo = child_ptr[x]
        v = 0.0
        for e in range(lo, child_ptr[x + 1]):
            pr = child_prob[e] if t == CHANCE else strategy[infoset_ptr[node_infoset[x]] + e - lo]
            v += pr * value[child[e]]
        value[x] = v
    return value[0]


@njit
def _reach_all(node_type, node_infoset, child_ptr, child, child_prob, infoset_ptr, strategy):
    n = node_type.shape[0]
    reach = np.empty(n)
    reach[0] = 1.0
    for x in range(n):
        t = node_type[x]
        if t == TERMINAL:
            continue
        lo = child_ptr[x]
        for e in range(lo, child_ptr[x + 1]):
            pr = child_prob[e] if t == CHANCE else strategy[infoset_ptr[node_infoset[x]] + e - lo]
            reach[child[e]] = reach[x] * pr
    return reach


def reach_probabilities(game, strategy):
    """float64[N]: probability of reaching each node when both players follow ``strategy``."""
    g = game
    return _reach_all(g.node_type, g.node_infoset, g.child_ptr, g.child, g.child_prob,
                      g.infoset_ptr, strategy)


def average_strategy(game, strat_sum):
    """float64[M]: the normalised average strategy (uniform where an information set was never reached)."""
    out = np.empty_like(strat_sum)
    normalise_sums(strat_sum, game.infoset_ptr, out)
    return out


def evaluate(game, strategy):
    """Player 0's expected utility, both best responses and NashConv of a profile ``strategy`` (float64[M]).

    Returns
    -------
    dict
        ``value``, ``br0`` (player 0 best-responding), ``br1`` (player 1 best-responding),
        ``nash_conv = br0 - br1`` and ``exploitability = nash_conv / 2``, all in player 0's utility units.
    """
    g = game
    args = (g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child, g.child_prob, g.utility,
            g.infoset_ptr, g.level_order, g.level_ptr, strategy)
    br0 = _best_response(*args, 0)
    br1 = _best_response(*args, 1)
    value = _expected_value(g.node_type, g.node_infoset, g.child_ptr, g.child, g.child_prob,
                            g.utility, g.infoset_ptr, strategy)
    return dict(value=value, br0=br0, br1=br1, nash_conv=br0 - br1, exploitability=(br0 - br1) / 2)


@dataclass
class CFRResult:
    """Outcome of ``solve``: average strategy float64[M], its evaluation, iterations and seconds."""

    strategy: np.ndarray
    regret: np.ndarray
    strat_sum: np.ndarray
    value: float
    nash_conv: float
    exploitability: float
    iterations: int
    seconds: float
    cpu_seconds: float


def next_check(checks, start, check_every, target):
    """The iteration count (warm start's included) of a solve's next NashConv evaluation.

    An evaluation (both best responses) costs about one DCFR iteration (bench/RECORD.md: 2.77
    against 2.79 CPU s on a full-deck Truco t1 subgame), so checking every ``check_every``
    iterations of a 500-iteration solve spends a tenth of it on checks. The next check is instead
    halfway to where the last two checks' power law ``NashConv ~ t^-p`` (fitted locally; DCFR's
    runs fall with p from about 1.4 to 1.6) reaches ``target``, on the grid of ``check_every``
    iterations, at least one step of it, and at most twice the distance between the last two checks
    (so the gaps grow 10, 20, 40, ... and a bad fit costs little): the solve stops at the same grid
    point as checking every step would, unless the law overestimates the distance left more
    than twice. A 1e-4 t1 subgame then has about 10 checks instead of 50.

    Parameters
    ----------
    checks : list of (int, float)
        (iterations, NashConv) of this solve's checks so far, oldest first.
    start : int
        The iteration count the solve started from (no check yet: the first is one step on).
    check_every : int
        The grid, in iterations.
    target : float
        The NashConv the solve stops at (> 0).

    Returns
    -------
    int
    """
    if not checks:
        return start + check_every
    t = checks[-1][0]
    if len(checks) < 2:
        return t + check_every
    (t0, e0), (t1, e1) = checks[-2], checks[-1]
    step = check_every
    if 0 < e1 < e0 and t1 > t0 > 0:
        p = np.log(e0 / e1) / np.log(t1 / t0)
        ahead = t1 * (e1 / target) ** (1 / p) - t1
        step = max(check_every, int(min(ahead / 2, 2 * (t1 - t0)) // check_every) * check_every)
    return t + step


def run_checked(iterate, evaluate_average, done, checks, target_nash_conv, max_iterations,
                check_every, regret, strat_sum, progress=None, checkpoint=None, check_first=False):
    """The loop of both DCFR solvers: ``iterate(first, k)`` runs iterations first+1..first+k, in
    steps of ``check_every``; ``evaluate_average()`` evaluates the average strategy (a dict with
    ``nash_conv``) at the checks ``next_check`` schedules and after ``max_iterations``. With
    ``check_first`` it is evaluated before any iteration as well, and the solve ends there if it
    meets the target (a warm start from a solve of the same information sets whose utilities
    have moved a little, e.g. a fixed-point round's: its average strategy may already do).

    ``progress(iterations, nash_conv, seconds)`` is called after every step, with the NashConv of
    the last check (None before the first); ``checkpoint(regret, strat_sum, iterations, checks)``
    after every step that does not end the solve: a solve warm-started from those four continues
    exactly as this one does (the same iterations, checks and arrays, bit for bit).

    Returns
    -------
    (dict, int, list)
        The last evaluation, this call's iterations, the checks (``next_check``'s list).
    """
    checks = list(checks)
    start = time.perf_counter()
    iters = 0
    if check_first:
        ev = evaluate_average()
        checks.append((done, float(ev["nash_conv"])))
        if ev["nash_conv"] <= target_nash_conv:
            if progress is not None:
                progress(done, checks[-1][1], time.perf_counter() - start)
            return ev, 0, checks
    due = next_check(checks, done, check_every, target_nash_conv)
    while True:
        k = min(check_every, max_iterations - iters, due - done - iters)
        iterate(done + iters, k)
        iters += k
        finished = iters >= max_iterations
        if done + iters >= due or finished:
            ev = evaluate_average()
            checks.append((done + iters, float(ev["nash_conv"])))
            finished = finished or ev["nash_conv"] <= target_nash_conv
            due = next_check(checks, done, check_every, target_nash_conv)
        if checkpoint is not None and not finished:
            checkpoint(regret, strat_sum, done + iters, checks)
        if progress is not None:
            progress(done + iters, checks[-1][1] if checks else None, time.perf_counter() - start)
        if finished:
            return ev, iters, checks


def solve(game, target_nash_conv=1e-4, max_iterations=100_000, check_every=50, alpha=1.5, beta=0.0,
          gamma=2.0, warm_start=None, validate=True, progress=None, checkpoint=None,
          check_first=False):
    """Run discounted CFR until the average strategy's NashConv is at most ``target_nash_conv``.

    Parameters
    ----------
    game : TabularGame
    target_nash_conv : float
        Stop when ``BR_0 - BR_1 <= target`` (player 0's utility units), checked on a grid of
        ``check_every`` iterations at the points ``next_check`` schedules.
    max_iterations : int
        Stop there even if the target is not reached (the result reports the NashConv reached).
    alpha, beta, gamma : float
        DCFR discounting of positive regrets, negative regrets and the average strategy.
    warm_start : tuple (regret, strat_sum, iterations[, checks]) or None
        Accumulators of an earlier solve of a game with the same information sets and actions
        (e.g. the same tree with other terminal utilities); the iteration count continues from it.
        ``checks`` (a ``checkpoint``'s) continues the check schedule of a killed solve of the
        same game.
    progress : callable or None
        Called after every ``check_every`` iterations as ``progress(iterations, nash_conv,
        seconds)`` (iterations including a warm start's, the NashConv of the last check or None,
        wall seconds of this call), e.g. to show a long solve's progress.
    checkpoint : callable or None
        Called after every ``check_every`` iterations that do not end the solve as
        ``checkpoint(regret, strat_sum, iterations, checks)`` (``run_checked``).
    check_first : bool
        Evaluate the warm start's average strategy before iterating, and stop there if it meets
        the target (``run_checked``).

    Returns
    -------
    CFRResult
        With ``checks``: (iterations, NashConv) of every check.

    Raises
    ------
    ValueError
        If the tree is malformed (see ``TabularGame.validate``) or a parameter is out of range.
    """
    if target_nash_conv <= 0 or check_every < 1 or max_iterations < 1:
        raise ValueError("target_nash_conv must be > 0, check_every and max_iterations >= 1")
    if validate:
        game.validate()
    g = game
    m = int(g.infoset_ptr[-1])
    infoset_player = np.full(g.n_infosets, -1, np.int8)
    dec = g.node_type == DECISION
    infoset_player[g.node_infoset[dec]] = g.node_player[dec]
    regret, strat_sum, done, checks = warm_arrays(warm_start, m, copy=True)
    cpu_start = time.process_time()
    start = time.perf_counter()
    avg = {}

    def iterate(first, k):
        _dcfr_iterations(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                         g.child_prob, g.utility, g.infoset_ptr, infoset_player, regret, strat_sum,
                         first, k, alpha, beta, gamma)

    def evaluate_average():
        avg["strategy"] = average_strategy(g, strat_sum)
        return evaluate(g, avg["strategy"])

    ev, iters, checks = run_checked(iterate, evaluate_average, done, checks, target_nash_conv,
                                    max_iterations, check_every, regret, strat_sum, progress,
                                    checkpoint, check_first)
    res = CFRResult(avg["strategy"], regret, strat_sum, ev["value"], ev["nash_conv"],
                    ev["exploitability"], done + iters, time.perf_counter() - start,
                    time.process_time() - cpu_start)
    res.checks = checks
    return res


def warm_arrays(warm_start, m, copy):
    """(regret, strat_sum, iterations, checks) of a solve over ``m`` action slots: zeros, or a
    ``warm_start`` tuple's (float64[m] each; ``copy`` False keeps a writable float64 array itself).

    Raises
    ------
    ValueError
        If the warm start's arrays do not have ``m`` slots.
    """
    if warm_start is None:
        return np.zeros(m), np.zeros(m), 0, []

    def own(a):
        a = np.asarray(a, np.float64)
        return a if not copy and a.flags.writeable else a.copy()

    regret, strat_sum = own(warm_start[0]), own(warm_start[1])
    if regret.shape != (m,) or strat_sum.shape != (m,):
        raise ValueError(f"warm_start arrays must have {m} action slots; got {regret.shape} and "
                         f"{strat_sum.shape}")
    checks = [(int(t), float(e)) for t, e in warm_start[3]] if len(warm_start) > 3 else []
    return regret, strat_sum, int(warm_start[2]), checks
