"""Shut the Box: flip-one and standard rules, against the exact references in naive/shutbox.py,
published values and Monte Carlo."""

import json
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from naive import shutbox as naive
from strongsolve.cli import main
from strongsolve.games.shutbox import stages
from strongsolve.games.shutbox.saved import load_result

Z99 = 2.5758293035489004  # two-sided 99% normal quantile


def bracket(samples, exact):
    """The 99% confidence interval of the sample mean contains ``exact``."""
    n = len(samples)
    mean = sum(samples) / n
    sd = math.sqrt(sum((s - mean) ** 2 for s in samples) / (n - 1))
    half = Z99 * sd / math.sqrt(n)
    assert mean - half <= exact <= mean + half, (mean, half, exact)


def test_small_model_matches_the_exact_fraction_and_the_write_up():
    exact = naive.flip_one_exact(4, 2)[0]
    for method in ("policy-iteration", "value-iteration", "value-iteration-jacobi"):
        sol = stages.solve(4, 2, method=method)
        assert sol.value_start == pytest.approx(float(exact), rel=1e-9)
    # seed write-up on Shut the Box (tests/cases.json "shutbox_flip_one_small_model"):
    # n = 4, f = 2 gives V = 5.673651, published to 7 digits
    assert round(sol.value_start, 6) == 5.673651
    assert exact == Fraction(8936, 1575)  # 5.67365079365...: the reference, pinned


@pytest.mark.parametrize("cards,faces", [(3, 2), (5, 3), (4, 5), (3, 1)])
def test_every_mask_matches_the_reference(cards, faces):
    ref = naive.flip_one_exact(cards, faces)
    sol = stages.solve(cards, faces)
    exact = stages.exact_policy_value(sol)
    for mask, v in ref.items():
        if v is None:  # the goal cannot be reached: infinity, reported as such
            assert math.isinf(sol.value[mask]) and math.isinf(exact[mask])
        else:
            assert sol.value[mask] == pytest.approx(float(v), rel=1e-9, abs=1e-12)
            assert exact[mask] == pytest.approx(float(v), rel=1e-9, abs=1e-12)


def test_n12_f6_policy_and_value_iteration_agree_with_the_exact_solve():
    pi = stages.solve(12, 6, method="policy-iteration")
    vi = stages.solve(12, 6, method="value-iteration")
    exact = stages.exact_policy_value(pi)
    assert vi.value_start == pytest.approx(pi.value_start, rel=1e-9)
    assert exact[0] == pytest.approx(pi.value_start, rel=1e-9)
    np.testing.assert_allclose(vi.value, pi.value, rtol=1e-9)
    assert pi.residual < 1e-9 and vi.residual < 1e-9
    # the value-iteration policy is optimal as well
    assert stages.exact_policy_value(vi)[0] == pytest.approx(pi.value_start, rel=1e-9)


def test_policy_table_is_greedy_and_plays_to_the_exact_value():
    cards, faces = 4, 2
    sol = stages.solve(cards, faces)
    rolls, flip = stages.flip_one_policy_table(cards, faces, sol.policy)
    assert flip.shape == (1 << cards, len(rolls)) and (flip[-1] == -1).all()
    for mask in range((1 << cards) - 1):
        for r, (x, y) in enumerate(rolls.tolist()):
            options = naive.flip_one_options(mask, x, y, cards)
            chosen = mask ^ (1 << (flip[mask, r] - 1)) if flip[mask, r] > 0 else mask
            assert chosen in options
            assert sol.value[chosen] == pytest.approx(min(sol.value[o] for o in options), abs=1e-9)
    row = {(x, y): r for r, (x, y) in enumerate(rolls.tolist())}

    def choose(mask, x, y, options):
        card = flip[mask, row[min(x, y), max(x, y)]]
        return mask ^ (1 << (card - 1)) if card > 0 else mask

    bracket(naive.simulate_flip_one(cards, faces, choose, random.Random(7), 4000), sol.value_start)


STANDARD = [(False, 0.071432), (True, 0.097614)]


@pytest.mark.parametrize("one_die,butler", STANDARD)
def test_standard_game_matches_butler_and_the_reference(one_die, butler):
    sol = stages.solve(9, 6, "standard", "max-shut", one_die)
    assert sol.value_start == pytest.approx(float(naive.standard_value(9, 6, "max-shut", one_die)),
                                            rel=1e-9)
    # D. Butler, "Shut The Box" analysis, http://www.durangobill.com/ShutTheBoxExtra/STBstats.txt:
    # probability (%) of shutting all nine tiles under optimal play, 7.1432 always rolling two dice,
    # 9.7614 rolling one die when the open tiles sum to 6 or less
    assert round(sol.value_start, 6) == butler
    if one_die:
        # UnaryPlus/shut-the-box-strategy README: 956177159/9795520512 for the same variant
        assert sol.value_start == pytest.approx(956177159 / 9795520512, rel=1e-12)
    ms = stages.solve(9, 6, "standard", "min-sum", one_die)
    assert ms.value_start == pytest.approx(float(naive.standard_value(9, 6, "min-sum", one_die)),
                                           rel=1e-9)
    pi = stages.solve(9, 6, "standard", "min-sum", one_die, method="policy-iteration")
    assert pi.value_start == pytest.approx(ms.value_start, rel=1e-12)


@pytest.mark.parametrize("objective", ["max-shut", "min-sum"])
def test_standard_small_boards_match_the_reference(objective):
    for cards, faces, one_die in [(5, 3, False), (6, 4, True), (1, 1, False)]:
        sol = stages.solve(cards, faces, "standard", objective, one_die, method="value-iteration")
        ref = naive.standard_value(cards, faces, objective, one_die)
        assert sol.value_start == pytest.approx(float(ref), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("objective", ["max-shut", "min-sum"])
def test_standard_policy_plays_to_its_value(objective):
    cards, faces, one_die = 9, 6, True
    sol = stages.solve(cards, faces, "standard", objective, one_die)
    table = stages.standard_policy_table(cards, faces, one_die, sol.policy, sol.expansion)

    def choose(open_tiles, total, options):
        mask = sum(1 << (t - 1) for t in open_tiles)
        shut = table[mask][total]
        left = frozenset(t for t in open_tiles if not shut >> (t - 1) & 1)
        assert left in options
        return left

    ends = naive.simulate_standard(cards, faces, one_die, choose, random.Random(3), 3000)
    samples = [float(not e) for e in ends] if objective == "max-shut" else [sum(e) for e in ends]
    bracket(samples, sol.value_start)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="cards must be an integer in 1..20, got 0"):
        stages.solve(0, 6)
    with pytest.raises(ValueError, match="faces must be an integer in 1..100, got 0"):
        stages.solve(4, 0)
    with pytest.raises(ValueError, match="objective 'max-shut' does not apply to rule 'flip-one'"):
        stages.solve(4, 2, "flip-one", "max-shut")
    with pytest.raises(ValueError, match="rule must be one of"):
        stages.solve(4, 2, "flip-two")
    with pytest.raises(ValueError, match="one_die applies only"):
        stages.solve(4, 2, one_die=True)
    with pytest.raises(ValueError, match="method must be"):
        stages.solve(4, 2, method="guess")


def test_cli(tmp_path, capsys):
    out = tmp_path / "r" / "flip.json"
    assert main(["shutbox", "--cards", "4", "--faces", "2", "--rule", "flip-one", "--objective",
                 "min-rolls", "--json", "--check", "--policy", "--output", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == load_result(out)  # the file holds the same document, with its checksum
    assert printed["value"] == pytest.approx(float(Fraction(8936, 1575)), rel=1e-9)
    assert printed["checks"]["max_relative_difference"] < 1e-9
    assert len(printed["policy"]["flip"]) == 16
    assert main(["shutbox", "--rule", "standard", "--cards", "5", "--objective", "min-sum",
                 "--one-die", "--policy", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["value"] == pytest.approx(float(naive.standard_value(5, 6, "min-sum", True)),
                                             rel=1e-9)
    assert set(printed["policy"]["shut"]) == {str(m) for m in range(1, 32)}
    assert main(["shutbox", "--cards", "0"]) == 2
    assert "cards must be an integer in 1..20, got 0" in capsys.readouterr().err
