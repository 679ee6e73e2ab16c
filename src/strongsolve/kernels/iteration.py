"""Game-agnostic solvers for cyclic chance-then-decision games, over the CSR expansion of
:mod:`strongsolve.kernels.bellman`.

- :func:`value_iteration`: repeated Bellman backups (Jacobi through :func:`~.bellman.backup` or
  Gauss-Seidel through :func:`~.bellman.backup_in_place`) until a sweep changes no value by more
  than ``tol``. A node with a candidate into itself (an overshoot or pass loop) is backed up again
  within the sweep until it settles, with the same node backup.
- :func:`policy_iteration`: in-place (Gauss-Seidel) evaluation of a fixed policy to ``eval_tol``,
  greedy improvement until no decision changes, then a tight final evaluation to ``tol``
  (Howard 1960; Bertsekas, *Dynamic Programming and Optimal Control* vol. II, ch. 2, for the
  stochastic shortest path case).
- :func:`evaluate_policy`: the exact value of a fixed policy by one sparse linear solve
  (``scipy.sparse.linalg.spsolve``), or in place to a tolerance for systems too large to factor.
- :func:`alternate_policies`: two fixed policies taking turns in a negamax game, as one expansion;
  :func:`permute_expansion`: relabel nodes so Gauss-Seidel sweeps them in a better order.

Stochastic shortest path (``maximize=False``, every ``cand_sign`` +1, rewards >= 0 as costs): a node
from which no policy ends the game with probability 1 has infinite optimal cost. Such nodes are
found first by graph reachability (:func:`proper_nodes`), candidates into them are dropped, and
their value is reported as ``inf`` instead of iterating forever. The game ends at a node with no
outcome (value 0) or on an outcome with no candidate (value ``empty_value``).

Maximisation (``maximize=True``), including negamax games (``cand_sign`` -1), assumes bounded
values: the game ends with probability 1 under every policy (true for the games solved here: each
roll has a positive chance of progress that the opponent cannot undo forever).
"""

from typing import NamedTuple

import numpy as np

from .bellman import _backup_node, backup, backup_in_place
from .options import njit


class Expansion(NamedTuple):
    """The two-level CSR expansion of :mod:`strongsolve.kernels.bellman` (same names and dtypes)."""

    node_ptr: np.ndarray
    out_prob: np.ndarray
    out_ptr: np.ndarray
    cand_reward: np.ndarray
    cand_next: np.ndarray
    cand_sign: np.ndarray

    @property
    def n_nodes(self):
        return self.node_ptr.shape[0] - 1


class Solution(NamedTuple):
    """Result of a solver.

    Attributes
    ----------
    value : float64[X]
        Value of every node (``inf`` where the goal cannot be reached surely, for minimisation).
    policy : int64[O]
        Per outcome, the position of the best candidate within the outcome (0-based, the order the
        game listed them), -1 for an outcome with no candidate or at a node of infinite value.
    iterations : int
        Value iteration: sweeps. Policy iteration: improvement steps (policies evaluated).
    sweeps : int
        Bellman sweeps in total (backups of every node), evaluation sweeps included.
    residual : float
        Largest ``|B V - V|`` over finite nodes, one Jacobi backup of the returned values.
    """

    value: np.ndarray
    policy: np.ndarray
    iterations: int
    sweeps: int
    residual: float


def check_expansion(exp):
    """Validate an expansion and return it with the kernel dtypes.

    Raises
    ------
    ValueError
        Naming the first inconsistency: pointer arrays not starting at 0 or decreasing, a successor
        index outside ``[0, X)``, a sign other than +1/-1, a negative probability or a node whose
        outcome probabilities do not sum to 1 (to 1e-9).
    """
    exp = Expansion(*(np.ascontiguousarray(a, dtype=t) for a, t in zip(
        exp, (np.int64, np.float64, np.int64, np.float64, np.int64, np.float64))))
    node_ptr, out_prob, out_ptr, reward, nxt, sign = exp
    n = exp.n_nodes
    if n < 0 or node_ptr[0] != 0 or np.any(np.diff(node_ptr) < 0) or node_ptr[-1] != out_prob.size:
        raise ValueError("node_ptr must start at 0, never decrease and end at len(out_prob)")
    if out_ptr.size != out_prob.size + 1 or out_ptr[0] != 0 or np.any(np.diff(out_ptr) < 0) \
            or out_ptr[-1] != reward.size or nxt.size != reward.size or sign.size != reward.size:
        raise ValueError("out_ptr must have len(out_prob)+1 entries, start at 0, never decrease "
                         "and end at the number of candidates (len of cand_reward/cand_next/"
                         "cand_sign)")
    if nxt.size and (nxt.min() < 0 or nxt.max() >= n):
        bad = nxt[(nxt < 0) | (nxt >= n)][0]
        raise ValueError(f"cand_next holds {bad}, outside the node range [0, {n})")
    if np.any((sign != 1.0) & (sign != -1.0)):
        bad = sign[(sign != 1.0) & (sign != -1.0)][0]
        raise ValueError(f"cand_sign must be +1 or -1, got {bad}")
    if np.any(out_prob < 0):
        raise ValueError(f"negative outcome probability {out_prob[out_prob < 0][0]}")
    has = np.diff(node_ptr) > 0
    sums = np.add.reduceat(out_prob, node_ptr[:-1][has]) if out_prob.size else np.zeros(0)
    if np.any(np.abs(sums - 1.0) > 1e-9):
        i = int(np.argmax(np.abs(sums - 1.0)))
        raise ValueError(f"outcome probabilities of node {np.flatnonzero(has)[i]} sum to "
                         f"{sums[i]}, not 1")
    return exp


@njit
def _proper_nodes(node_ptr, out_ptr, cand_next):
    # Almost-sure reachability of the end of the game (de Alfaro 1997): repeatedly keep the nodes
    # that can end the game with positive probability while every outcome keeps a candidate inside
    # the kept set. ``order`` records when a node joined, so that "move to an earlier node" is a
    # proper policy.
    n = node_ptr.shape[0] - 1
    keep = np.ones(n, np.bool_)
    order = np.full(n, -1, np.int64)
    while True:
        reach = np.zeros(n, np.bool_)
        order[:] = -1
        t = 0
        changed = True
        forward = True
        while changed:
            changed = False
            for i in range(n):
                x = i if forward else n - 1 - i
                if reach[x] or not keep[x]:
                    continue
                ok = True
                hit = node_ptr[x] == node_ptr[x + 1]  # no outcome: the game ends here
                for o in range(node_ptr[x], node_ptr[x + 1]):
                    lo = out_ptr[o]
                    hi = out_ptr[o + 1]
                    if lo == hi:
                        hit = True  # an outcome with no candidate ends the game
                        continue
                    inside = False
                    for a in range(lo, hi):
                        y = cand_next[a]
                        if keep[y]:
                            inside = True
                        if reach[y]:
                            hit = True
                    if not inside:
                        ok = False
                        break
                if ok and hit:
                    reach[x] = True
                    order[x] = t
                    t += 1
                    changed = True
            forward = not forward
        same = True
        for x in range(n):
            if reach[x] != keep[x]:
                same = False
                break
        if same:
            return keep, order
        keep = reach


def proper_nodes(exp):
    """Nodes from which some policy ends the game with probability 1.

    Parameters
    ----------
    exp : Expansion
        The expansion (nodes with no outcome and outcomes with no candidate end the game).

    Returns
    -------
    proper : bool[X]
        True where the game can be ended surely; elsewhere every policy has infinite expected cost.
    order : int64[X]
        For proper nodes, the step at which reachability found them (-1 elsewhere). Choosing in
        every outcome the candidate of smallest ``order`` is a proper policy.
    """
    return _proper_nodes(exp.node_ptr, exp.out_ptr, exp.cand_next)


@njit
def _restrict(node_ptr, out_ptr, cand_next, keep):
    # candidates of kept nodes that lead to kept nodes; nodes not kept lose their outcomes
    n = node_ptr.shape[0] - 1
    new_node_ptr = np.zeros(n + 1, np.int64)
    n_out = 0
    n_cand = 0
    for x in range(n):
        if keep[x]:
            n_out += node_ptr[x + 1] - node_ptr[x]
            for a in range(out_ptr[node_ptr[x]], out_ptr[node_ptr[x + 1]]):
                if keep[cand_next[a]]:
                    n_cand += 1
        new_node_ptr[x + 1] = n_out
    out_map = np.empty(n_out, np.int64)
    new_out_ptr = np.zeros(n_out + 1, np.int64)
    cand_map = np.empty(n_cand, np.int64)
    pos = np.empty(n_cand, np.int64)
    o2 = 0
    a2 = 0
    for x in range(n):
        if not keep[x]:
            continue
        for o in range(node_ptr[x], node_ptr[x + 1]):
            out_map[o2] = o
            for a in range(out_ptr[o], out_ptr[o + 1]):
                if keep[cand_next[a]]:
                    cand_map[a2] = a
                    pos[a2] = a - out_ptr[o]
                    a2 += 1
            o2 += 1
            new_out_ptr[o2] = a2
    return new_node_ptr, out_map, new_out_ptr, cand_map, pos


class _Restricted(NamedTuple):
    exp: Expansion  # the expansion without the dropped nodes' outcomes and candidates
    out_map: np.ndarray  # restricted outcome -> original outcome (None: identity)
    pos: np.ndarray  # restricted candidate -> its position within the original outcome
    keep: np.ndarray  # bool[X]


def _restrict_to(exp, keep):
    if keep.all():  # nothing to drop: no copy (the maps stay None)
        return _Restricted(exp, None, None, keep)
    node_ptr, out_map, out_ptr, cand_map, pos = _restrict(exp.node_ptr, exp.out_ptr, exp.cand_next,
                                                          keep)
    sub = Expansion(node_ptr, exp.out_prob[out_map], out_ptr, exp.cand_reward[cand_map],
                    exp.cand_next[cand_map], exp.cand_sign[cand_map])
    return _Restricted(sub, out_map, pos, keep)


def _is_ssp(exp, maximize):
    if maximize:
        return False
    if np.any(exp.cand_sign != 1.0):
        raise ValueError("minimisation needs every cand_sign = +1 (a stochastic shortest path); "
                         "negamax games maximise")
    return True


def _prepare(exp, maximize):
    exp = check_expansion(exp)
    if _is_ssp(exp, maximize):
        keep, order = proper_nodes(exp)
    else:
        keep, order = np.ones(exp.n_nodes, np.bool_), None
    return exp, _restrict_to(exp, keep), order


def _finish(exp, r, value, best, maximize, empty_value):
    value = value.copy()
    value[~r.keep] = np.inf
    if r.out_map is None:
        policy = best.copy()
    else:
        policy = np.full(exp.out_prob.shape[0], -1, np.int64)
        has = best >= 0
        policy[r.out_map[has]] = r.pos[r.exp.out_ptr[:-1][has] + best[has]]
    residual = _residual(r.exp, value, maximize, empty_value, r.keep)
    return value, policy, residual


def _residual(sub, value, maximize, empty_value, keep):
    finite = np.where(keep, value, 0.0)
    new, _ = backup(*sub, finite, maximize, empty_value)
    return float(np.max(np.abs(new - finite)[keep], initial=0.0))


@njit
def _sweep_settling(node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, value, maximize,
                    empty_value, self_loop, tol):
    # a Gauss-Seidel sweep (the shared node backup of bellman.py) that backs up a node with a
    # candidate into itself again until it settles: a self-loop kept with probability q would
    # otherwise cost log(tol) / log(q) whole sweeps (the 1/(1 - p_self) correction, by iteration)
    n = node_ptr.shape[0] - 1
    best = np.empty(out_prob.shape[0], np.int64)
    delta = 0.0
    for x in range(n):
        old = value[x]
        v = _backup_node(x, node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, value,
                         maximize, empty_value, best)
        if self_loop[x]:
            for _ in range(100_000):
                prev = v
                value[x] = v
                v = _backup_node(x, node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign,
                                 value, maximize, empty_value, best)
                if abs(v - prev) <= tol:
                    break
        d = abs(v - old)
        if d > delta:
            delta = d
        value[x] = v
    return delta, best


def _gauss_seidel_sweep(sub, value, maximize, empty_value, loops, tol):
    # the shared backup_in_place, unless some node loops on itself
    if loops.any():
        return _sweep_settling(*sub, value, maximize, empty_value, loops, tol)
    return backup_in_place(*sub, value, maximize, empty_value)


def self_loop_nodes(exp):
    """bool[X]: nodes with a candidate leading back to themselves."""
    node_of_cand = np.repeat(np.repeat(np.arange(exp.n_nodes), np.diff(exp.node_ptr)),
                             np.diff(exp.out_ptr))
    loops = np.zeros(exp.n_nodes, np.bool_)
    loops[node_of_cand[exp.cand_next == node_of_cand]] = True
    return loops


def _check_tol(tol, name):
    if not (tol > 0):
        raise ValueError(f"{name} must be > 0, got {tol}")


def value_iteration(exp, *, maximize, tol=1e-12, max_iter=1_000_000, method="gauss-seidel",
                    empty_value=0.0, initial=None, progress=None):
    """Solve by value iteration to a stated tolerance.

    Parameters
    ----------
    exp : Expansion
        The game's expansion; ``cand_next`` indexes the same nodes (a cyclic game).
    maximize : bool
        True for max (rewards, win probabilities), False for min (costs such as rolls).
    tol : float
        Stop when a sweep changes no value by more than ``tol`` (same unit as the values).
    max_iter : int
        Most sweeps; reaching it raises.
    method : {"gauss-seidel", "jacobi"}
        Gauss-Seidel (:func:`~.bellman.backup_in_place`: new values used at once, in node order;
        when some node has a self-loop, the same node backup is repeated on it until it settles, so
        overshoot and pass loops do not dominate the sweep count) or Jacobi
        (:func:`~.bellman.backup`).
    empty_value : float
        Value of an outcome with no candidate.
    initial : float64[X], optional
        Starting values (default 0).
    progress : callable, optional
        Called as ``progress(sweep, delta)`` after each sweep (1-based count, largest change of a
        value in it), e.g. to print a progress line during a long solve.

    Returns
    -------
    Solution

    Raises
    ------
    ValueError
        Bad expansion, bad ``method`` or ``tol``; ``RuntimeError`` if ``max_iter`` sweeps do not
        reach ``tol``.
    """
    if method not in ("gauss-seidel", "jacobi"):
        raise ValueError(f"method must be 'gauss-seidel' or 'jacobi', got {method!r}")
    _check_tol(tol, "tol")
    exp, r, _ = _prepare(exp, maximize)
    sub = r.exp
    value = np.zeros(exp.n_nodes) if initial is None else np.array(initial, dtype=np.float64)
    value[~r.keep] = 0.0  # never read: candidates into these nodes were dropped
    loops = self_loop_nodes(sub)
    for sweep in range(1, max_iter + 1):
        if method == "gauss-seidel":
            delta, best = _gauss_seidel_sweep(sub, value, maximize, empty_value, loops, tol)
        else:
            new, best = backup(*sub, value, maximize, empty_value)
            delta = float(np.max(np.abs(new - value), initial=0.0))
            value = new
        if progress is not None:
            progress(sweep, delta)
        if delta <= tol:
            value, policy, residual = _finish(exp, r, value, best, maximize, empty_value)
            return Solution(value, policy, sweep, sweep, residual)
    raise RuntimeError(f"value iteration did not reach tol={tol} in {max_iter} sweeps "
                       f"(last change {delta})")


@njit
def _fixed(out_ptr, cand_reward, cand_next, cand_sign, choice):
    # the single-candidate expansion of a fixed policy (choice = position, -1 for no candidate)
    n_out = choice.shape[0]
    new_out_ptr = np.zeros(n_out + 1, np.int64)
    k = 0
    for o in range(n_out):
        if choice[o] >= 0:
            k += 1
        new_out_ptr[o + 1] = k
    reward = np.empty(k, np.float64)
    nxt = np.empty(k, np.int64)
    sign = np.empty(k, np.float64)
    k = 0
    for o in range(n_out):
        if choice[o] >= 0:
            a = out_ptr[o] + choice[o]
            reward[k] = cand_reward[a]
            nxt[k] = cand_next[a]
            sign[k] = cand_sign[a]
            k += 1
    return new_out_ptr, reward, nxt, sign


def fixed_policy_expansion(exp, policy):
    """The expansion of a fixed policy: each outcome keeps only its chosen candidate.

    Parameters
    ----------
    exp : Expansion
    policy : int64[O]
        Position of the chosen candidate within each outcome; -1 only for outcomes with none.

    Raises
    ------
    ValueError
        If the policy has the wrong length or a position outside its outcome.
    """
    policy = np.ascontiguousarray(policy, dtype=np.int64)
    sizes = np.diff(exp.out_ptr)
    if policy.shape != sizes.shape:
        raise ValueError(f"policy has {policy.size} entries, the expansion {sizes.size} outcomes")
    bad = (policy >= sizes) | (policy < -1) | ((policy == -1) & (sizes > 0))
    if np.any(bad):
        o = int(np.flatnonzero(bad)[0])
        raise ValueError(f"policy[{o}] = {policy[o]} is not a candidate of outcome {o} "
                         f"(it has {sizes[o]})")
    out_ptr, reward, nxt, sign = _fixed(exp.out_ptr, exp.cand_reward, exp.cand_next, exp.cand_sign,
                                        policy)
    return Expansion(exp.node_ptr, exp.out_prob, out_ptr, reward, nxt, sign)


def _gauss_seidel(sub, value, maximize, empty_value, tol, max_sweeps, progress=None):
    loops = self_loop_nodes(sub)
    for sweep in range(1, max_sweeps + 1):
        delta, _ = _gauss_seidel_sweep(sub, value, maximize, empty_value, loops, tol)
        if progress is not None:
            progress(sweep, delta)
        if delta <= tol:
            return sweep
    raise RuntimeError(f"policy evaluation did not reach tol={tol} in {max_sweeps} sweeps "
                       f"(last change {delta})")


def evaluate_policy(exp, policy, *, empty_value=0.0, method="spsolve", tol=1e-13,
                    max_sweeps=1_000_000, permc_spec="MMD_AT_PLUS_A", progress=None):
    """Value of a fixed policy.

    Parameters
    ----------
    exp : Expansion
    policy : int64[O]
        As in :class:`Solution`; -1 at an outcome that has candidates (a node a solver found
        infinite) counts as never ending the game (one-player expansions only).
    empty_value : float
        Value of an outcome with no candidate.
    permc_spec : str
        Column ordering of SuperLU; the default (minimum degree on A + A^T) keeps the fill-in of
        game graphs small (COLAMD is 15 times slower on Shut the Box n = 12).
    method : {"spsolve", "gauss-seidel"}
        ``spsolve``: the exact linear system ``(I - P_pi) V = r_pi`` over the nodes that end the
        game surely under the policy (others get ``inf`` when every sign is +1). ``gauss-seidel``:
        sweeps of ``backup_in_place`` on the fixed-policy expansion until no value changes by more
        than ``tol`` (for systems too large to factor, such as two-player races).
    progress : callable, optional
        ``gauss-seidel``: called as ``progress(sweep, delta)`` after each sweep (1-based count,
        largest change of a value in it), e.g. to show a long evaluation's progress.

    Returns
    -------
    value : float64[X]

    Raises
    ------
    ValueError
        Bad policy or method; ``RuntimeError`` if Gauss-Seidel does not reach ``tol``.
    """
    exp = check_expansion(exp)
    policy = np.array(policy, dtype=np.int64)
    undecided = (policy == -1) & (np.diff(exp.out_ptr) > 0)
    fixed = fixed_policy_expansion(exp, np.where(undecided, 0, policy))
    if np.any(undecided):
        if np.any(exp.cand_sign != 1.0):
            raise ValueError("policy -1 at an outcome with candidates is allowed only when every "
                             "cand_sign is +1")
        # an undecided outcome loops on its node forever: its node, and any node that can drift
        # into it, never ends the game
        node_of_out = np.repeat(np.arange(exp.n_nodes), np.diff(exp.node_ptr))
        fixed.cand_next[fixed.out_ptr[:-1][undecided]] = node_of_out[undecided]
    if method == "gauss-seidel":
        value = np.zeros(exp.n_nodes)
        _gauss_seidel(fixed, value, True, empty_value, tol, max_sweeps, progress)
        return value
    if method != "spsolve":
        raise ValueError(f"method must be 'spsolve' or 'gauss-seidel', got {method!r}")
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve

    if np.all(fixed.cand_sign == 1.0):
        keep, _ = proper_nodes(fixed)
    else:
        keep = np.ones(exp.n_nodes, np.bool_)
    n = exp.n_nodes
    counts = np.diff(fixed.node_ptr)
    node_of_out = np.repeat(np.arange(n), counts)
    chosen = np.diff(fixed.out_ptr) > 0
    rows = node_of_out[chosen]
    cols = fixed.cand_next
    p = fixed.out_prob[chosen]
    b = np.bincount(rows, weights=p * fixed.cand_reward, minlength=n)
    b += np.bincount(node_of_out[~chosen], weights=fixed.out_prob[~chosen] * empty_value,
                     minlength=n)
    inside = keep[rows]
    idx = np.cumsum(keep) - 1
    m = int(keep.sum())
    a = sp.identity(m, format="csr") - sp.csr_matrix(
        (p[inside] * fixed.cand_sign[inside], (idx[rows[inside]], idx[cols[inside]])), shape=(m, m))
    value = np.full(n, np.inf)
    if m:
        value[keep] = np.atleast_1d(spsolve(a.tocsc(), b[keep], permc_spec=permc_spec))
    return value


@njit
def _improve(out_ptr, cand_reward, cand_next, cand_sign, value, policy, best, maximize, margin):
    # switch an outcome's decision only for a strict gain above the evaluation noise
    changed = 0
    for o in range(policy.shape[0]):
        if best[o] < 0 or best[o] == policy[o]:
            continue
        a = out_ptr[o] + policy[o]
        b = out_ptr[o] + best[o]
        q_cur = cand_reward[a] + cand_sign[a] * value[cand_next[a]]
        q_new = cand_reward[b] + cand_sign[b] * value[cand_next[b]]
        gain = (q_new - q_cur) if maximize else (q_cur - q_new)
        if gain > margin * max(1.0, abs(q_cur)):
            policy[o] = best[o]
            changed += 1
    return changed


@njit
def _earliest(node_ptr, out_ptr, cand_next, order):
    # per outcome, the candidate whose successor reachability found first (a proper policy)
    policy = np.full(out_ptr.shape[0] - 1, -1, np.int64)
    for o in range(out_ptr.shape[0] - 1):
        best = -1
        for a in range(out_ptr[o], out_ptr[o + 1]):
            y = cand_next[a]
            if best < 0 or order[y] < order[cand_next[out_ptr[o] + best]]:
                best = a - out_ptr[o]
        policy[o] = best
    return policy


def policy_iteration(exp, *, maximize, eval_tol=1e-10, tol=1e-13, max_iter=10_000,
                     max_sweeps=1_000_000, empty_value=0.0):
    """Solve by policy iteration.

    Each step evaluates the current policy in place (Gauss-Seidel sweeps of ``backup_in_place`` on
    the fixed-policy expansion, warm-started from the previous values) until no value changes by
    more than ``eval_tol``, then improves greedily with one :func:`~.bellman.backup`; an outcome
    switches only for a gain above ``eval_tol`` (relative to max(1, |value|)), so evaluation noise
    cannot make it cycle. When no decision changes, a final evaluation runs to ``tol``.

    One player only (every ``cand_sign`` +1). For minimisation the start policy is proper (it ends
    the game surely from every node that can), as policy iteration for stochastic shortest paths
    requires; nodes that cannot end the game get ``inf``.

    Parameters
    ----------
    exp : Expansion
    maximize : bool
    eval_tol, tol : float
        Tolerances of the intermediate and the final evaluation (value units).
    max_iter : int
        Most improvement steps. ``max_sweeps``: most sweeps of one evaluation.
    empty_value : float

    Returns
    -------
    Solution
        ``iterations`` counts the policies evaluated.

    Raises
    ------
    ValueError, RuntimeError
        As :func:`value_iteration`.
    """
    _check_tol(tol, "tol")
    _check_tol(eval_tol, "eval_tol")
    if np.any(np.asarray(exp.cand_sign) != 1.0):
        raise ValueError("policy iteration is for one player (every cand_sign = +1); solve negamax "
                         "games with value_iteration")
    exp, r, order = _prepare(exp, maximize)
    sub = r.exp
    if order is not None:
        policy = _earliest(sub.node_ptr, sub.out_ptr, sub.cand_next, order)
    else:
        policy = np.where(np.diff(sub.out_ptr) > 0, 0, -1).astype(np.int64)
    value = np.zeros(exp.n_nodes)
    sweeps = 0
    for step in range(1, max_iter + 1):
        sweeps += _gauss_seidel(fixed_policy_expansion(sub, policy), value, maximize, empty_value,
                                eval_tol, max_sweeps)
        _, best = backup(*sub, value, maximize, empty_value)
        sweeps += 1
        if _improve(sub.out_ptr, sub.cand_reward, sub.cand_next, sub.cand_sign, value, policy, best,
                    maximize, eval_tol) == 0:
            sweeps += _gauss_seidel(fixed_policy_expansion(sub, policy), value, maximize,
                                    empty_value, tol, max_sweeps)
            value, out_policy, residual = _finish(exp, r, value, policy, maximize, empty_value)
            return Solution(value, out_policy, step, sweeps, residual)
    raise RuntimeError(f"policy iteration did not settle in {max_iter} improvement steps")


def alternate_policies(exp, policy_a, policy_b):
    """Fixed-policy expansion of a negamax game where two fixed policies take turns.

    Node ``x`` (player A to move) and node ``x + X`` (player B to move) are the same position; a
    candidate with sign -1 hands the move over, one with sign +1 (roll again) keeps it. Values stay
    those of the player to move, so ``V[x]`` is A's value with A to move and ``V[x + X]`` is B's
    with B to move.

    Parameters
    ----------
    exp : Expansion
        A negamax expansion (X nodes).
    policy_a, policy_b : int64[O]
        Positions of the chosen candidates, as in :class:`Solution`.

    Returns
    -------
    Expansion
        2X nodes, one candidate per outcome; evaluate it with :func:`evaluate_policy` and the
        policy of all zeros (or :func:`value_iteration`, ``maximize=True``).
    """
    exp = check_expansion(exp)
    fa = fixed_policy_expansion(exp, policy_a)
    fb = fixed_policy_expansion(exp, policy_b)
    n = exp.n_nodes
    shift_a = np.where(fa.cand_sign < 0, n, 0)
    shift_b = np.where(fb.cand_sign < 0, 0, n)
    n_out = exp.out_prob.shape[0]
    return Expansion(np.concatenate([exp.node_ptr, exp.node_ptr[1:] + n_out]),
                     np.concatenate([exp.out_prob, exp.out_prob]),
                     np.concatenate([fa.out_ptr, fa.out_ptr[1:] + fa.out_ptr[-1]]),
                     np.concatenate([fa.cand_reward, fb.cand_reward]),
                     np.concatenate([fa.cand_next + shift_a, fb.cand_next + shift_b]),
                     np.concatenate([fa.cand_sign, fb.cand_sign]))


@njit
def _permute(node_ptr, out_prob, out_ptr, cand_reward, cand_next, cand_sign, order, inverse):
    n = order.shape[0]
    new_node_ptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        x = order[i]
        new_node_ptr[i + 1] = new_node_ptr[i] + node_ptr[x + 1] - node_ptr[x]
    n_out = new_node_ptr[n]
    new_prob = np.empty(n_out, np.float64)
    new_out_ptr = np.zeros(n_out + 1, np.int64)
    n_cand = out_ptr[out_ptr.shape[0] - 1]
    reward = np.empty(n_cand, np.float64)
    nxt = np.empty(n_cand, np.int64)
    sign = np.empty(n_cand, np.float64)
    o2 = 0
    a2 = 0
    for i in range(n):
        x = order[i]
        for o in range(node_ptr[x], node_ptr[x + 1]):
            new_prob[o2] = out_prob[o]
            for a in range(out_ptr[o], out_ptr[o + 1]):
                reward[a2] = cand_reward[a]
                nxt[a2] = inverse[cand_next[a]]
                sign[a2] = cand_sign[a]
                a2 += 1
            o2 += 1
            new_out_ptr[o2] = a2
    return new_node_ptr, new_prob, new_out_ptr, reward, nxt, sign


def permute_expansion(exp, order):
    """Relabel nodes so that new node ``i`` is old node ``order[i]``.

    Gauss-Seidel sweeps run in node order; listing nodes after (most of) their successors makes a
    sweep close to backward induction and cuts the number of sweeps. Outcomes and candidates keep
    their order within each node, so policies map back with :func:`outcome_order`.

    Parameters
    ----------
    exp : Expansion
    order : int64[X]
        A permutation of the nodes.

    Returns
    -------
    Expansion
        Values of the relabelled expansion map back by ``value_old[order] = value_new``.

    Raises
    ------
    ValueError
        If ``order`` is not a permutation of ``0..X-1``.
    """
    order = np.ascontiguousarray(order, dtype=np.int64)
    n = exp.n_nodes
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}")
    inverse = np.empty(n, np.int64)
    inverse[order] = np.arange(n)
    return Expansion(*_permute(*exp, order, inverse))


def outcome_order(exp, order):
    """For :func:`permute_expansion`: old outcome index of each new outcome (int64[O]), so that
    ``policy_old[outcome_order(exp, order)] = policy_new``."""
    counts = np.diff(exp.node_ptr)[order]
    starts = exp.node_ptr[:-1][order]
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + within
