"""Value iteration, policy iteration and exact policy evaluation over the shared CSR expansion."""

import numpy as np
import pytest

from strongsolve.kernels.iteration import (Expansion, alternate_policies, check_expansion,
                                           evaluate_policy, fixed_policy_expansion, outcome_order,
                                           permute_expansion, policy_iteration, proper_nodes,
                                           value_iteration)


def build(nodes):
    """Expansion from [[(prob, [(reward, next), ...]), ...] per node] (sign +1)."""
    node_ptr, prob, out_ptr, reward, nxt = [0], [], [0], [], []
    for outcomes in nodes:
        for p, cands in outcomes:
            prob.append(p)
            for r, y in cands:
                reward.append(r)
                nxt.append(y)
            out_ptr.append(len(reward))
        node_ptr.append(len(prob))
    return Expansion(np.array(node_ptr), np.array(prob, float), np.array(out_ptr),
                     np.array(reward, float), np.array(nxt), np.ones(len(reward)))


def random_ssp(seed, n=40):
    """A random stochastic shortest path: node 0 is the goal; every outcome offers a candidate to a
    lower node, so every node can end the game surely."""
    rng = np.random.default_rng(seed)
    nodes = [[]]
    for x in range(1, n):
        k = rng.integers(1, 4)
        probs = rng.dirichlet(np.ones(k))
        outcomes = []
        for p in probs:
            cands = [(float(rng.uniform(0.5, 2.0)), int(rng.integers(0, x)))]
            for _ in range(rng.integers(0, 3)):
                cands.append((float(rng.uniform(0.5, 2.0)), int(rng.integers(0, n))))
            rng.shuffle(cands)
            outcomes.append((float(p), cands))
        nodes.append(outcomes)
    return build(nodes)


def greedy_gap(exp, value, maximize):
    """Largest |B V - V| computed in plain Python (the Bellman optimality check)."""
    gap = 0.0
    for x in range(exp.n_nodes):
        if not np.isfinite(value[x]):
            continue
        total = 0.0
        for o in range(exp.node_ptr[x], exp.node_ptr[x + 1]):
            qs = [exp.cand_reward[a] + exp.cand_sign[a] * value[exp.cand_next[a]]
                  for a in range(exp.out_ptr[o], exp.out_ptr[o + 1])]
            qs = [q for q in qs if np.isfinite(q)]
            total += exp.out_prob[o] * (max(qs) if maximize else min(qs))
        gap = max(gap, abs(total - value[x]))
    return gap


def test_geometric_self_loop_needs_the_correction():
    # one outcome of probability 1/3 ends the game, 2/3 loops back: expected rolls 1/p = 3
    exp = build([[(1 / 3, [(1.0, 1)]), (2 / 3, [(1.0, 0)])], []])
    for solve in (lambda e: value_iteration(e, maximize=False, tol=1e-14),
                  lambda e: value_iteration(e, maximize=False, tol=1e-14, method="jacobi"),
                  lambda e: policy_iteration(e, maximize=False)):
        assert solve(exp).value[0] == pytest.approx(1 / (1 / 3), rel=1e-12)
    assert evaluate_policy(exp, [0, 0])[0] == pytest.approx(3.0, rel=1e-14)
    # Gauss-Seidel backs the self-loop node up until it settles: two sweeps, not log(tol)/log(2/3)
    assert value_iteration(exp, maximize=False, tol=1e-14).sweeps == 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_value_and_policy_iteration_agree_with_the_exact_solve(seed):
    exp = random_ssp(seed)
    gs = value_iteration(exp, maximize=False, tol=1e-13)
    jac = value_iteration(exp, maximize=False, tol=1e-13, method="jacobi")
    pi = policy_iteration(exp, maximize=False)
    exact = evaluate_policy(exp, pi.policy)
    for sol in (gs, jac, pi):
        np.testing.assert_allclose(sol.value, exact, rtol=1e-9, atol=1e-12)
        assert sol.residual < 1e-9
    assert greedy_gap(exp, exact, False) < 1e-9
    # the value-iteration policy is optimal too: its exact value is the optimum
    np.testing.assert_allclose(evaluate_policy(exp, gs.policy), exact, rtol=1e-9)
    assert pi.iterations >= 1 and pi.sweeps >= pi.iterations


def test_maximisation_with_empty_outcomes():
    # node 0: half the time the game ends with empty_value, else a choice between +1 and loop, or
    # +2 and go to node 1 (worth 5); V = 0.5 e + 0.5 max(1 + V, 2 + 5) with e = 3 -> V = 5
    exp = build([[(0.5, []), (0.5, [(1.0, 0), (2.0, 1)])], [(1.0, [(5.0, 2)])], []])
    e = 3.0
    for sol in (value_iteration(exp, maximize=True, empty_value=e, tol=1e-14),
                policy_iteration(exp, maximize=True, empty_value=e)):
        assert sol.value[0] == pytest.approx(0.5 * e + 0.5 * 7.0, rel=1e-12)
        assert sol.policy.tolist() == [-1, 1, 0]
    assert evaluate_policy(exp, [-1, 1, 0], empty_value=e)[0] == pytest.approx(5.0, rel=1e-14)


def test_unreachable_goal_is_reported_as_infinity():
    exp = build([
        [(1.0, [(1.0, 0), (1.0, 4)])],  # 0: loop forever or finish: 1
        [(0.5, [(1.0, 2)]), (0.5, [(1.0, 4)])],  # 1: half the time into the trap: inf
        [(1.0, [(1.0, 2)])],  # 2: the trap
        [(0.5, [(1.0, 2), (1.0, 4)]), (0.5, [(1.0, 4)])],  # 3: avoid the trap: 1
        [],  # 4: the goal
    ])
    proper, order = proper_nodes(check_expansion(exp))
    assert proper.tolist() == [True, False, False, True, True]
    assert order[4] < order[0] and order[4] < order[3]
    for sol in (value_iteration(exp, maximize=False), policy_iteration(exp, maximize=False)):
        assert sol.value.tolist() == [1.0, np.inf, np.inf, 1.0, 0.0]
        assert sol.policy.tolist() == [1, -1, -1, -1, 1, 0]
    # a fixed policy that loops at node 0 never ends the game from it
    assert evaluate_policy(exp, [0, 0, 0, 0, 1, 0]).tolist() == [np.inf, np.inf, np.inf, 1.0, 0.0]


def test_permutation_keeps_values_and_maps_policies_back():
    exp = check_expansion(random_ssp(5, n=25))
    order = np.random.default_rng(1).permutation(exp.n_nodes)
    sol = policy_iteration(exp, maximize=False)
    perm = policy_iteration(permute_expansion(exp, order), maximize=False)
    np.testing.assert_allclose(perm.value, sol.value[order], rtol=1e-10)
    policy = np.empty_like(perm.policy)
    policy[outcome_order(exp, order)] = perm.policy
    np.testing.assert_allclose(evaluate_policy(exp, policy), sol.value, rtol=1e-10)
    with pytest.raises(ValueError, match="permutation"):
        permute_expansion(exp, np.zeros(exp.n_nodes, np.int64))


def test_alternating_fixed_policies_in_a_negamax_game():
    # a coin race: the mover wins at once with probability 1/2 (heads), else the turn passes.
    # Negamax: V = 1/2 * 1 + 1/2 * (1 - V) -> V = 2/3, whoever moves.
    exp = Expansion(np.array([0, 2, 2]), np.array([0.5, 0.5]), np.array([0, 1, 2]),
                    np.array([1.0, 1.0]), np.array([1, 0]), np.array([-1.0, -1.0]))
    vi = value_iteration(exp, maximize=True, tol=1e-15)
    assert vi.value[0] == pytest.approx(2 / 3, rel=1e-12)
    both = alternate_policies(exp, [0, 0], [0, 0])
    assert both.n_nodes == 4
    value = evaluate_policy(both, np.zeros(4, np.int64), method="gauss-seidel", tol=1e-15)
    assert value[0] == pytest.approx(2 / 3, rel=1e-12)
    assert value[2] == pytest.approx(2 / 3, rel=1e-12)
    with pytest.raises(ValueError, match="one player"):
        policy_iteration(exp, maximize=True)
    with pytest.raises(ValueError, match="negamax games maximise"):
        value_iteration(exp, maximize=False)


def test_bad_input_is_named():
    good = build([[(1.0, [(1.0, 1)])], []])
    with pytest.raises(ValueError, match="cand_next holds 7"):
        check_expansion(good._replace(cand_next=np.array([7])))
    with pytest.raises(ValueError, match="sum to 0.5"):
        check_expansion(good._replace(out_prob=np.array([0.5])))
    with pytest.raises(ValueError, match="cand_sign must be"):
        check_expansion(good._replace(cand_sign=np.array([0.5])))
    with pytest.raises(ValueError, match=r"policy\[0\] = 3"):
        fixed_policy_expansion(good, [3])
    with pytest.raises(ValueError, match="method"):
        value_iteration(good, maximize=False, method="newton")
    with pytest.raises(ValueError, match="tol must be > 0"):
        value_iteration(good, maximize=False, tol=0)
    loop = build([[(0.5, [(1.0, 1)]), (0.5, [(1.0, 2)])], [(0.5, [(1.0, 0)]), (0.5, [(1.0, 2)])],
                  []])
    with pytest.raises(RuntimeError, match="did not reach"):
        value_iteration(loop, maximize=False, tol=1e-15, max_iter=3)
