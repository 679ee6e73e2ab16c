"""Shut the Box in exact rationals (``--exact``): every value against the independent
fraction references of naive/shutbox.py, and the float solver against float(fraction)."""

import json
from fractions import Fraction

import pytest

from naive import shutbox as naive
from strongsolve.cli import main
from strongsolve.games.shutbox import rules, stages


@pytest.mark.parametrize("cards,faces", [(4, 2), (3, 2), (5, 3), (4, 5), (3, 1), (6, 6)])
def test_flip_one_every_mask_equals_the_reference_exactly(cards, faces):
    ref = naive.flip_one_exact(cards, faces)  # exact policy iteration over ordered rolls
    exact = stages.solve_exact(cards, faces)
    assert exact.value == ref  # Fractions, None where the dice cannot set every card
    for mask, v in ref.items():
        if v is not None:
            assert exact.float_solution.value[mask] == pytest.approx(float(v), rel=1e-12, abs=1e-12)
    if (cards, faces) == (4, 2):
        assert exact.value_start == Fraction(8936, 1575)


@pytest.mark.parametrize("objective", ["max-shut", "min-sum"])
@pytest.mark.parametrize("cards,faces,one_die", [(5, 3, False), (6, 4, True), (7, 6, False),
                                                 (7, 6, True), (1, 1, False)])
def test_standard_start_value_equals_the_reference_exactly(cards, faces, one_die, objective):
    ref = naive.standard_value(cards, faces, objective, one_die)  # memoised recursion, fractions
    exact = stages.solve_exact(cards, faces, "standard", objective, one_die)
    assert exact.value_start == ref
    assert exact.float_solution.value_start == pytest.approx(float(ref), rel=1e-12, abs=1e-15)


def test_standard_nine_tiles_one_die_equals_the_reference_exactly():
    ref = naive.standard_value(9, 6, "max-shut", True)
    exact = stages.solve_exact(9, 6, "standard", "max-shut", True)
    assert exact.value_start == ref
    assert exact.float_solution.value_start == pytest.approx(float(ref), rel=1e-12)


def test_the_exact_policy_is_exactly_greedy():
    cards, faces = 5, 3
    exact = stages.solve_exact(cards, faces)
    rolls, _ = rules.unordered_rolls(faces)
    for mask in range((1 << cards) - 1):
        for r, (x, y) in enumerate(rolls.tolist()):
            offered = rules.flip_cards(x, y, cards)
            options = [mask ^ (1 << (c - 1)) for c in offered] or [mask]
            chosen = options[exact.policy[mask * len(rolls) + r]]
            assert exact.value[chosen] == min(exact.value[o] for o in options)


def test_cli_prints_the_fraction(capsys):
    assert main(["shutbox", "--cards", "4", "--faces", "2", "--rule", "flip-one", "--objective",
                 "min-rolls", "--exact"]) == 0
    assert "exact: 8936/1575 rolls" in capsys.readouterr().out
    assert main(["shutbox", "--cards", "3", "--faces", "2", "--exact", "--policy", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    ref = naive.flip_one_exact(3, 2)
    assert printed["value_exact"] == str(ref[0])
    assert printed["policy"]["value_per_mask_exact"] == [str(ref[m]) for m in range(8)]
    assert main(["shutbox", "--cards", "4", "--faces", "2", "--exact", "--check", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["value_exact"] == "8936/1575" and printed["checks"]["exact_policy_value"] == \
        pytest.approx(8936 / 1575, rel=1e-12)
    assert main(["shutbox", "--cards", "3", "--faces", "1", "--exact", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value_exact"] is None  # infinite


def test_a_box_too_large_is_refused_with_the_float_command(capsys):
    limit = rules.MAX_EXACT_CARDS["flip-one"]
    assert main(["shutbox", "--cards", str(limit + 1), "--faces", "6", "--exact"]) == 2
    err = capsys.readouterr().err
    assert f"up to {limit} cards; {limit + 1} cards would take too long" in err
    assert (f"`strongsolve shutbox --cards {limit + 1} --faces 6 --rule flip-one --objective "
            "min-rolls`") in err
    with pytest.raises(ValueError, match="--one-die`"):
        stages.solve_exact(rules.MAX_EXACT_CARDS["standard"] + 1, 6, "standard", "min-sum", True)
