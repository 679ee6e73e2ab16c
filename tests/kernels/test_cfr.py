"""Discounted CFR and the exact best response on Kuhn poker.

Kuhn poker: H. W. Kuhn, "A simplified two-person poker", Contributions to the Theory of Games I (1950);
the first player's equilibrium value is -1/18 (also OpenSpiel's kuhn_poker documentation).
"""

import numpy as np
import pytest

from strongsolve.kernels.cfr import evaluate, solve

from naive import truco as naive
from support.cfr import kuhn_game


def test_kuhn_value_and_exploitability():
    game, _ = kuhn_game()
    res = solve(game, target_nash_conv=1e-4, max_iterations=20_000, check_every=20)
    assert res.nash_conv <= 1e-4
    assert abs(res.value - (-1 / 18)) <= 1e-4
    ev = evaluate(game, res.strategy)
    assert ev["br1"] - 1e-12 <= ev["value"] <= ev["br0"] + 1e-12


def test_kuhn_lp_reference_matches():
    # the plain sequence-form LP in tests/naive/truco.py solves the same tree exactly
    game, _ = kuhn_game()
    assert naive.truco_lp_value_of_tabular(game) == pytest.approx(-1 / 18, abs=1e-9)


def test_best_response_of_uniform_profile():
    # against uniform play, a best response is checked against brute-force enumeration of pure
    # strategies (2^6 per player in Kuhn)
    game, isets = kuhn_game()
    uniform = np.full(int(game.infoset_ptr[-1]), 0.5)
    ev = evaluate(game, uniform)
    for p, key in ((0, "br0"), (1, "br1")):
        assert ev[key] == pytest.approx(naive.truco_pure_best_response(game, uniform, p), abs=1e-12)
    assert ev["value"] == pytest.approx(naive.truco_profile_value(game, uniform), abs=1e-12)


def test_malformed_tree_is_rejected():
    game, _ = kuhn_game()
    game.child_prob[:6] = 0.2
    with pytest.raises(ValueError, match="chance probabilities"):
        solve(game)


def test_next_check_goes_halfway_to_the_fitted_target_within_twice_the_last_gap():
    from strongsolve.kernels.cfr import next_check
    assert next_check([], 500, 10, 1e-4) == 510  # round 1 of a warm start: one step on
    assert next_check([(10, 0.1)], 0, 10, 1e-4) == 20
    # NashConv ~ t^-1: 1e-3 at t = 1000, halfway is 490 on, capped at twice the last gap (10)
    assert next_check([(10, 0.1), (20, 0.05)], 0, 10, 1e-3) == 40
    # t^-2: 1e-4 at t = 80 (4e-4 at 40): halfway 20 on
    assert next_check([(20, 1.6e-3), (40, 4e-4)], 0, 10, 1e-4) == 60
    # close to the target: one step of the grid
    assert next_check([(480, 1.05e-4), (490, 1.02e-4)], 0, 10, 1e-4) == 500
    # no progress between the last two checks: one step
    assert next_check([(100, 2e-3), (110, 2e-3)], 0, 10, 1e-4) == 120


def test_scheduled_checks_on_a_power_law_stop_where_checking_every_step_would():
    """On a NashConv falling as a power law (DCFR's runs on full-deck Truco subgames fall
    smoothly, with exponents 1.4 to 1.8), the scheduled checks stop at the first point of the
    check_every grid at the target, with a fraction of the checks."""
    from strongsolve.kernels.cfr import run_checked
    for exponent, target in ((1.4, 1e-4), (1.6, 3e-5), (1.0, 1e-3), (2.0, 1e-6)):
        done, it = [0], []
        law = lambda t: 0.5 * t ** -exponent
        ev, iters, checks = run_checked(
            lambda first, k: (it.append(first), done.__setitem__(0, first + k)),
            lambda: dict(nash_conv=law(done[0])), 0, [], target, 10**6, 10, None, None)
        first = next(t for t in range(10, 10**6, 10) if law(t) <= target)
        assert iters == first and checks[-1] == (first, law(first))
        assert len(checks) <= first / 10 / 3
        assert all(t % 10 == 0 for t, _ in checks) and it == list(range(0, first, 10))


def test_scheduled_checks_on_kuhn_poker_meet_the_target_on_the_grid():
    """Kuhn poker's NashConv under DCFR goes up and down: the solve may stop after the first grid
    point below the target (a dip it did not check), never before; every check it made is the
    NashConv of that iteration, measured by continuing the same run in steps (a warm start
    continues it bit for bit), each call ending with an evaluation."""
    game, _ = kuhn_game()
    target, step = 2e-4, 10
    res = solve(game, target_nash_conv=target, max_iterations=10_000, check_every=step)
    every, warm = [], None
    while len(every) < res.iterations // step:
        r = solve(game, target_nash_conv=1e-300, max_iterations=step, check_every=step,
                  warm_start=warm)
        warm = (r.regret, r.strat_sum, r.iterations)
        every.append((r.iterations, r.nash_conv))
    measured = dict(every)
    assert res.nash_conv <= target and res.iterations % step == 0
    assert res.iterations >= next(t for t, e in every if e <= target)
    assert all(measured[t] == e for t, e in res.checks) and len(res.checks) < len(every) / 3


def test_a_warm_start_checked_first_stops_at_once_when_it_meets_the_target():
    """``check_first``: the warm start's average strategy is evaluated before any iteration; a
    solve it satisfies ends there (0 iterations, the same profile as the warm start's), one it
    does not continues exactly as without the option, one check longer."""
    game, _ = kuhn_game()
    first = solve(game, target_nash_conv=1e-3, max_iterations=10_000, check_every=10)
    warm = (first.regret, first.strat_sum, first.iterations)
    met = solve(game, target_nash_conv=1e-3, max_iterations=10_000, check_every=10,
                warm_start=warm, check_first=True)
    assert met.iterations == first.iterations and met.checks == [(first.iterations, first.nash_conv)]
    assert np.array_equal(met.strategy, first.strategy) and met.value == first.value
    tighter = [solve(game, target_nash_conv=first.nash_conv / 4, max_iterations=10_000,
                     check_every=10, warm_start=warm, check_first=f) for f in (False, True)]
    assert tighter[1].checks[0] == (first.iterations, first.nash_conv)
    assert tighter[1].checks[1:] == tighter[0].checks
    assert tighter[1].iterations == tighter[0].iterations > first.iterations
    assert np.array_equal(tighter[1].strategy, tighter[0].strategy)
