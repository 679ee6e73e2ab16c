"""Ludo / aeroplane chess: one-piece expected rolls and two-player races, against the
exact references in naive/ludo.py, the HDU 4405 samples and Monte Carlo."""

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from naive import ludo as naive
from strongsolve.cli import main
from strongsolve.games.ludo import rules
from strongsolve.games.ludo.stages import expansion
from support.ludo import naive_board

BOARDS = Path(__file__).resolve().parents[4] / "workflow" / "boards"
Z99 = 2.5758293035489004  # two-sided 99% normal quantile

CLASSIC = {"length": 60, "jumps": {6: 12, 18: 28, 33: 40, 45: 52, 14: 4, 30: 22, 50: 44},
           "chain_jumps": True, "overshoot": "stay", "die": 6, "safe": [8, 15, 24, 36, 48]}
LOADED = ["2/7"] + ["1/7"] * 5


def bracket_mean(samples, exact):
    n = len(samples)
    mean = sum(samples) / n
    sd = math.sqrt(sum((s - mean) ** 2 for s in samples) / (n - 1))
    half = Z99 * sd / math.sqrt(n)
    assert mean - half <= exact <= mean + half, (mean, half, exact)


def bracket_wins(wins, games, exact):
    p = wins / games
    half = Z99 * math.sqrt(max(p * (1 - p), 1e-12) / games)
    assert p - half <= exact <= p + half, (p, half, exact)


@pytest.mark.parametrize("n,flights,published", [(2, {}, 1.1667),
                                                 (8, {2: 4, 4: 5, 7: 8}, 2.3441)])
def test_hdu4405_samples(n, flights, published):
    # HDU 4405 "Aeroplane chess" sample cases: one fair die, reaching or passing N ends the game,
    # flights chain (tests/cases.json "aeroplane_chess_hdu4405")
    data = {"length": n, "jumps": flights, "chain_jumps": True, "overshoot": "finish", "die": 6}
    rolls = rules.expected_rolls(rules.Board.from_mapping(data))
    assert round(rolls[0], 4) == published
    assert rolls[0] == pytest.approx(float(naive.ludo_expected_rolls(naive_board(data))[0]),
                                     rel=1e-12)


@pytest.mark.parametrize("die", [6, LOADED])
def test_classic_board_every_cell_and_monte_carlo(die):
    data = dict(CLASSIC, die=die)
    rolls = rules.expected_rolls(rules.Board.from_mapping(data))
    ref = naive.ludo_expected_rolls(naive_board(data))
    for cell, v in ref.items():
        assert rolls[cell] == pytest.approx(float(v), rel=1e-9, abs=1e-12)
    bracket_mean(naive.simulate_ludo_rolls(naive_board(data), random.Random(11), 2000), rolls[0])


def test_preset_files_are_the_classic_board():
    fair = rules.load_board(BOARDS / "classic60.yaml")
    assert fair == rules.Board.from_mapping(CLASSIC)
    loaded = rules.load_board(BOARDS / "classic60_loaded.yaml")
    assert loaded.die == (Fraction(2, 7),) + (Fraction(1, 7),) * 5
    hdu = rules.load_board(BOARDS / "hdu4405.yaml")
    assert round(rules.expected_rolls(hdu)[0], 4) == 2.3441


@pytest.mark.parametrize("data", [
    {"length": 3, "die": [0, 1]},  # always 2: cells 0 and 2 overshoot forever (stay)
    {"length": 3, "die": [0, 1], "overshoot": "bounce"},  # 2 -> bounce back to 2
    # always 4: 1 -> 5 -> 1 forever, 0 -> 4 and 2 -> 6 overshoot forever, 3 -> 7 in one roll
    {"length": 7, "jumps": {5: 1}, "die": [0, 0, 0, 1]},
    {"length": 9, "jumps": {3: 0, 8: 4}, "die": [0, "1/2", "1/2"], "overshoot": "bounce"},
    {"length": 12, "jumps": {4: 9, 7: 2, 10: 3}, "die": 4, "overshoot": "bounce"},
    {"length": 12, "jumps": {4: 9, 9: 11, 7: 2}, "chain_jumps": False,
     "die": ["1/2", "1/4", "1/4"]},
])
def test_small_boards_with_traps_overshoot_and_unreachable_goals(data):
    rolls = rules.expected_rolls(rules.Board.from_mapping(data))
    ref = naive.ludo_expected_rolls(naive_board(data))
    for cell, v in ref.items():
        if v is None:
            assert math.isinf(rolls[cell]), cell
        else:
            assert rolls[cell] == pytest.approx(float(v), rel=1e-9, abs=1e-12), cell


def test_board_validation_names_the_bad_value(tmp_path):
    bad = [
        ({"length": 0}, "length must be >= 1, got 0"),
        ({"length": 10, "jumps": {12: 3}}, "jump source 12 is outside the board"),
        ({"length": 10, "jumps": {3: 11}}, "jump 3->11 leaves the board"),
        ({"length": 10, "jumps": {3: 3}}, "jump 3->3 jumps onto itself"),
        ({"length": 10, "jumps": {3: 5, 5: 3}, "chain_jumps": True},
         "jump cycle 3->5->3 with chain_jumps"),
        ({"length": 10, "die": [0.5, 0.4]}, "die probabilities sum to 0.9, not 1"),
        ({"length": 10, "die": [1.5, -0.5]}, "probability of face 2 must be >= 0"),
        ({"length": 10, "overshoot": "wrap"}, "overshoot must be one of stay, bounce, finish"),
        ({"length": 2, "overshoot": "bounce"}, "face 6 has probability > 0"),
        ({"length": 10, "safe": [11]}, "safe cell 11 is outside the board"),
        ({"length": 10, "roll_again_on": 7}, "roll_again_on must be a face 1..6"),
        ({"length": 10, "color": "red"}, "unknown board key 'color'"),
        ({"jumps": {}}, "needs 'length'"),
    ]
    for data, message in bad:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            rules.Board.from_mapping(data)
    # a cycle without chain_jumps is fine: each landing follows one jump
    rules.Board.from_mapping({"length": 10, "jumps": {3: 5, 5: 3}})
    path = tmp_path / "b.yaml"
    path.write_text("length: 5\njumps: {2: 9}\n")
    with pytest.raises(ValueError, match=r"b\.yaml: jump 2->9 leaves the board"):
        rules.load_board(path)


# today's rule (pass_by_overshoot false), the one naive.race_values and naive.simulate_race play;
# tests/games/ludo/test_rules.py checks both rules against naive.ludo_race_reference
RACES = [
    ({"length": 6, "jumps": {2: 4, 5: 1}, "safe": [3], "die": 3}, 2),
    ({"length": 6, "jumps": {2: 4, 5: 1}, "safe": [3], "die": 3}, 1),
    ({"length": 7, "jumps": {3: 6}, "overshoot": "bounce", "die": ["1/2", "1/4", "1/4"],
      "roll_again_on": 3}, 2),
    ({"length": 8, "jumps": {6: 2}, "overshoot": "finish", "die": 4, "safe": [5]}, 1),
    ({"length": 4, "jumps": {3: 1}, "die": 2, "safe": [2]}, 3),
]
RACES = [(dict(data, pass_by_overshoot=False), pieces) for data, pieces in RACES]


@pytest.mark.parametrize("data,pieces", RACES)
def test_race_values_match_the_reference_everywhere(data, pieces):
    sol = expansion.solve_race(rules.Board.from_mapping(data), pieces, tol=1e-13)
    ref = naive.race_values(naive_board(data), pieces)
    enc = sol.race.encoding
    live = np.diff(sol.race.expansion.node_ptr) > 0
    checked = 0
    for x in np.flatnonzero(live):
        own, opp = enc.position(x)
        assert sol.value[x] == pytest.approx(ref[own, opp], abs=1e-9), (own, opp)
        checked += 1
    assert checked == live.sum() > 0
    # the best move per roll achieves the reference's best value
    own, opp = enc.position(int(np.flatnonzero(live)[len(np.flatnonzero(live)) // 2]))
    for move in expansion.best_moves(sol, own, opp):
        options = naive.race_moves(naive_board(data), own, opp, move["face"])
        if move["move_from"] is None:
            assert not options
        else:
            assert move["move_from"] in [c for c, *_ in options]


def optimal_player(sol):
    cache = {}

    def play(own, opp, face, moves):
        if (own, opp) not in cache:
            cache[own, opp] = {m["face"]: m["move_from"] for m in expansion.best_moves(sol, own, opp)}
        return [c for c, *_ in moves].index(cache[own, opp][face])

    return play


def leading(own, opp, face, moves):
    return len(moves) - 1


def trailing(own, opp, face, moves):
    return 0


@pytest.mark.parametrize("data,pieces", [RACES[0], RACES[2]])
def test_race_win_rates_bracketed_by_monte_carlo(data, pieces):
    board = rules.Board.from_mapping(data)
    sol = expansion.solve_race(board, pieces, tol=1e-13)
    games = 1500
    nb = naive_board(data)
    best = optimal_player(sol)
    # one seeded stream per interval (each 99% interval misses with probability 1%)
    wins = naive.simulate_race(nb, pieces, best, best, random.Random("optimal"), games)
    bracket_wins(wins, games, sol.win_probability)
    for name, simple in (("leading", leading), ("trailing", trailing)):
        first, second = expansion.match_win_probability(sol.race, sol.policy,
                                                   expansion.simple_policy(sol.race, name))
        # optimal play never does worse than a fixed simple policy
        assert first >= sol.win_probability - 1e-9 and second >= 1 - sol.win_probability - 1e-9
        wins = naive.simulate_race(nb, pieces, best, simple, random.Random(name + "1"), games)
        bracket_wins(wins, games, first)
        wins = naive.simulate_race(nb, pieces, simple, best, random.Random(name + "2"), games)
        bracket_wins(games - wins, games, second)


def test_race_size_and_piece_errors():
    board = rules.Board.from_mapping(CLASSIC)
    with pytest.raises(ValueError, match="pieces must be in 1..4, got 0"):
        expansion.solve_race(board, 0)
    with pytest.raises(ValueError, match="3 pieces on 54 rest cells give"):
        expansion.solve_race(board, 3)
    sol = expansion.solve_race(rules.Board.from_mapping(RACES[1][0]), 1)
    with pytest.raises(ValueError, match="cell 2 is not a cell a piece can rest on"):
        expansion.best_moves(sol, (2,), (0,))
    with pytest.raises(ValueError, match="simple policy must be"):
        expansion.simple_policy(sol.race, "random")


def test_cli_rolls_and_race(tmp_path, capsys):
    assert main(["ludo", "rolls", str(BOARDS / "hdu4405.yaml"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert round(out["expected_rolls"], 4) == 2.3441 and len(out["per_cell"]) == 9
    board = tmp_path / "trap.yaml"
    board.write_text("length: 3\ndie: [0, 1]\n")
    assert main(["ludo", "rolls", str(board), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["expected_rolls"] == "inf" and out["unreachable_cells"] == [0, 2]
    assert main(["ludo", "rolls", str(BOARDS / "classic60.yaml"), "--die", ",".join(LOADED),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = naive.ludo_expected_rolls(naive_board(dict(CLASSIC, die=LOADED)))[0]
    assert out["expected_rolls"] == pytest.approx(float(ref), rel=1e-9)

    race = tmp_path / "race.yaml"
    race.write_text("length: 6\njumps: {2: 4, 5: 1}\nsafe: [3]\ndie: 3\npass_by_overshoot: false\n")
    result = tmp_path / "out" / "race.json"
    policy = tmp_path / "out" / "policy.npz"
    assert main(["ludo", "race", str(race), "--pieces", "2", "--json", "--position", "1,3/0,4",
                 "--policy-out", str(policy), "--output", str(result)]) == 0
    out = json.loads(capsys.readouterr().out)
    # the file is the printed result and its checksum (store.checksums)
    saved = json.loads(result.read_text())
    assert saved.pop("checksum").startswith("sha256:") and out == saved
    ref = naive.race_values(naive_board(RACES[0][0]), 2)
    assert out["win_probability"] == pytest.approx(ref[(0, 0), (0, 0)], abs=1e-9)
    assert [m["face"] for m in out["positions_queried"][0]["moves"]] == [1, 2, 3]
    saved = np.load(policy)
    assert saved["move_from"].shape == (saved["value"].size, 3)
    assert main(["ludo", "race", str(race), "--pieces", "0"]) == 2
    assert "pieces must be in 1..4, got 0" in capsys.readouterr().err
