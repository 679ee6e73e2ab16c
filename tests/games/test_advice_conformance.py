"""One conformance test over every game's advice interface (``games.<game>.advice.advise_position``):
load a saved result, advise a position, compare the choices' values with the naive reference of
tests/naive/ (one module per game). Each game is solved small: 2048 on 2x2, Shut the Box flip-one
with 4 cards and 3-faced dice, a two-piece Ludo race on a 5-cell board, the 11-11 Truco hand on a
tiny deck."""

import importlib
from fractions import Fraction

import pytest

from naive import g2048 as naive_g2048
from naive import ludo as naive_ludo
from naive import shutbox as naive_shutbox
from naive import truco as naive_truco
from strongsolve.cli import main

GAMES = ("g2048", "shutbox", "ludo", "truco")


def case_g2048(tmp_path, solved, naive_2048, truco_results):
    board = ((2, 0), (0, 2))
    ref = naive_2048(2, 2).solution
    want = [reward + ref.afterstate_value(after) for _, after, reward in naive_g2048.legal_moves(board)]
    return solved(2, 2), {"board": board}, want, max


def case_shutbox(tmp_path, solved, naive_2048, truco_results):
    path = tmp_path / "flip_one.json"
    assert main(["shutbox", "--cards", "4", "--faces", "3", "--policy", "--output", str(path)]) == 0
    exact = naive_shutbox.flip_one_exact(4, 3)
    set_cards = 0b0101  # cards 1 and 3 set: 2 and 4 open
    want = [float(exact[m]) for m in naive_shutbox.flip_one_options(set_cards, 1, 2, 4)]
    return path, {"open": [2, 4], "roll": (1, 2)}, want, min


LUDO = {"length": 5, "jumps": {3: 1}, "die": 3, "roll_again_on": 3, "safe": [2]}


def case_ludo(tmp_path, solved, naive_2048, truco_results):
    import json

    board = tmp_path / "board.yaml"
    board.write_text(json.dumps(LUDO))
    path = tmp_path / "race_p2_policy.npz"
    assert main(["ludo", "race", str(board), "--pieces", "2", "--against", "--policy-out",
                 str(path)]) == 0
    data = dict(LUDO, pass_by_overshoot=True, die=[Fraction(1, 3)] * 3)
    ref = naive_ludo.ludo_race_reference(data, 2, True)
    own, opp, face = (1, 4), (0, 2), 1
    want = []
    for own2, opp2, _ in naive_ludo.ludo_race_options(data, own, opp, face, True):
        if all(c == LUDO["length"] for c in own2):
            want.append(1.0)
        else:  # face 1 grants no bonus roll: the opponent moves next
            want.append(1.0 - ref[tuple(sorted(opp2)), tuple(sorted(own2))])
    return path, {"own": own, "opponent": opp, "roll": face}, want, max


@pytest.fixture(scope="module")
def truco_results(tmp_path_factory):
    """The 11-11 hand solved on the tiny decks of test_truco_row11 (one per vira class)."""
    from strongsolve.games.truco.stages.groups import solve_group
    from support.truco import tiny_capacities

    root = tmp_path_factory.mktemp("truco_advice")
    solve_group(11, root, dict(target_nash_conv=1e-6, fixed_point_tol=1e-7), log=lambda m: None,
                capacities=tiny_capacities)
    return root


def case_truco(tmp_path, solved, naive_2048, truco_results):
    # at 11-11 mano plays a card from a hand of the tiny deck of vira class 8 (vira 2d): the
    # equilibrium mix over the three cards sums to 1
    return truco_results, {"score": (11, 11), "dealer": 1, "vira": "2d", "hand": "2s 7h 3c"}, None, max


@pytest.mark.parametrize("game", GAMES)
def test_advice_of_a_saved_result_matches_the_naive_reference(game, tmp_path, capsys, solved,
                                                              naive_2048, request):
    truco = request.getfixturevalue("truco_results") if game == "truco" else None
    result, position, want, best_of = globals()[f"case_{game}"](tmp_path, solved, naive_2048,
                                                                truco)
    capsys.readouterr()
    advice = importlib.import_module(f"strongsolve.games.{game}.advice")
    choices = advice.advise_position(result, position)
    assert choices and all(set(c) >= {"choice", "value", "best"} for c in choices)
    assert sum(c["best"] for c in choices) == 1
    values = [c["value"] for c in choices]
    best = next(c for c in choices if c["best"])
    assert best["value"] == best_of(values)
    if want is None:  # Truco: a mixed strategy over the hand's three cards
        assert sorted(c["choice"] for c in choices) == ["play 2s", "play 3c", "play 7h"]
        assert sum(values) == pytest.approx(1.0, abs=1e-12)
        assert all(0.0 <= v <= 1.0 for v in values)
    else:
        assert sorted(values) == pytest.approx(sorted(want), abs=1e-9)


def test_truco_advice_value_is_the_naive_lp_value(truco_results):
    # the mix advised above belongs to a subgame whose value is the sequence-form LP's
    from strongsolve.games.truco import rules as R
    from strongsolve.games.truco.advice import policy
    from strongsolve.games.truco.saved import read_subgame, subgame_path
    from strongsolve.games.truco.tree import MANO_WINS, NOBODY, PE_WINS
    from support.truco import tiny_cards

    out = policy((11, 11), 1, "2d", "2s 7h 3c", truco_results)
    attrs, _ = read_subgame(subgame_path(truco_results, 11, 11, 8), arrays=False)
    table = attrs["utility"]
    utility = {(1, 0): table[MANO_WINS], (0, 1): table[PE_WINS], (0, 0): table[NOBODY]}
    vira, cards = tiny_cards(8)
    tree = naive_truco.truco_hand_tree([R.card_text(x) for x in cards], R.card_text(vira), (11, 11),
                                 utility)
    lp = naive_truco.truco_lp_value(tree)
    assert out["value_player0"] == pytest.approx(lp if out["mano"] == 0 else 1 - lp, abs=1e-6)
