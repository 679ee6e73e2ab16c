"""Ludo race move rules: ``pass_by_overshoot`` true (the design's rule: any piece not at
the goal may be picked, an overshooting one stays and the turn passes) and false (only a piece
that can move may be picked), both against naive.ludo_race_reference, a plain-Python Jacobi solver
over ordered piece tuples that shares no code with the solver or with naive.race_values."""

import json

import numpy as np
import pytest

from naive import ludo as naive
from strongsolve.cli import main
from strongsolve.games.ludo import advice, encoding, rules
from strongsolve.games.ludo.stages import expansion
from support.ludo import naive_board

# small boards with overshoot "stay" (where the rules differ): traps, a shortcut, a safe cell, a
# bonus roll, a loaded die
BOARDS = [
    {"length": 6, "jumps": {2: 4, 5: 1}, "safe": [3], "die": 3},
    {"length": 5, "jumps": {3: 1}, "die": 3, "roll_again_on": 3},
    {"length": 5, "jumps": {2: 4}, "die": ["1/2", "1/4", "1/4"], "safe": [1]},
]


def check_against_reference(data, pieces, rule):
    data = dict(data, pass_by_overshoot=rule)
    sol = expansion.solve_race(rules.Board.from_mapping(data), pieces, tol=1e-13)
    ref = naive.ludo_race_reference(naive_board(data), pieces, rule)
    enc = sol.race.encoding
    live = np.flatnonzero(np.diff(sol.race.expansion.node_ptr) > 0)
    assert live.size > 0
    for x in live:
        assert sol.value[x] == pytest.approx(ref[enc.position(x)], abs=1e-9), enc.position(x)
    return sol


@pytest.mark.parametrize("rule", [True, False])
@pytest.mark.parametrize("pieces", [1, 2])
@pytest.mark.parametrize("data", BOARDS)
def test_both_rules_match_the_plain_python_reference_everywhere(data, pieces, rule):
    check_against_reference(data, pieces, rule)


def test_the_rules_differ_with_two_pieces_and_agree_with_one():
    # with one piece, picking the overshooting piece is the only choice either way; with two, the
    # design's rule adds a voluntary pass, which the mover takes when moving would hurt
    data = BOARDS[1]
    values = {}
    for rule in (True, False):
        for pieces in (1, 2):
            d = dict(data, pass_by_overshoot=rule)
            values[rule, pieces] = naive.ludo_race_reference(naive_board(d), pieces, rule)[
                (0,) * pieces, (0,) * pieces]
            sol = expansion.solve_race(rules.Board.from_mapping(d), pieces, tol=1e-13)
            assert sol.win_probability == pytest.approx(values[rule, pieces], abs=1e-9)
    assert values[True, 1] == pytest.approx(values[False, 1], abs=1e-12)
    assert abs(values[True, 2] - values[False, 2]) > 1e-4


def test_the_pass_is_a_candidate_only_under_the_designs_rule():
    # own pieces at 4 and 1 on a length-5 board, roll 3: the piece at 4 overshoots; under the
    # design's rule the mover may pick it (a pass, piece -1) or move 1 -> 4; today's rule forces the
    # move
    for rule, expected in ((True, [1, -1]), (False, [1])):
        board = rules.Board.from_mapping(dict(BOARDS[1], roll_again_on=None, pass_by_overshoot=rule))
        race = encoding.race_expansion(board, 2)
        enc = race.encoding
        x = enc.node((1, 4), (0, 0))
        o = race.expansion.node_ptr[x] + 2  # outcomes are faces 1, 2, 3
        cands = race.piece[race.expansion.out_ptr[o]:race.expansion.out_ptr[o + 1]]
        assert [-1 if p < 0 else int(enc.cells[p]) for p in cands] == expected
        # the simple policies move a piece whenever one can move
        for kind in ("leading", "trailing"):
            assert expansion.simple_policy(race, kind)[o] == 0


def test_bounce_and_finish_boards_have_one_rule():
    for overshoot in ("bounce", "finish"):
        data = {"length": 5, "jumps": {3: 1}, "die": 3, "overshoot": overshoot}
        a = expansion.solve_race(rules.Board.from_mapping(dict(data, pass_by_overshoot=True)), 2)
        b = expansion.solve_race(rules.Board.from_mapping(dict(data, pass_by_overshoot=False)), 2)
        assert np.array_equal(a.value, b.value)


def test_board_key_and_cli_option(tmp_path, capsys):
    with pytest.raises(ValueError, match="pass_by_overshoot must be true .* got 'yes'"):
        rules.Board.from_mapping({"length": 5, "pass_by_overshoot": "yes"})
    assert rules.Board.from_mapping({"length": 5}).pass_by_overshoot is True
    path = tmp_path / "b.yaml"
    path.write_text("length: 5\njumps: {3: 1}\ndie: 3\nroll_again_on: 3\n")
    answers = {}
    for option in ([], ["--pass-by-overshoot", "false"], ["--pass-by-overshoot", "true"]):
        assert main(["ludo", "race", str(path), "--pieces", "2", "--json", *option]) == 0
        out = json.loads(capsys.readouterr().out)
        answers[tuple(option)] = (out["board"]["pass_by_overshoot"], out["win_probability"])
    for rule, option in ((True, ()), (False, ("--pass-by-overshoot", "false")),
                         (True, ("--pass-by-overshoot", "true"))):
        ref = naive.ludo_race_reference(naive_board(dict(BOARDS[1], pass_by_overshoot=rule)), 2,
                                        rule)[(0, 0), (0, 0)]
        assert answers[option][0] is rule
        assert answers[option][1] == pytest.approx(ref, abs=1e-9)
    path.write_text("length: 5\npass_by_overshoot: maybe\n")
    assert main(["ludo", "race", str(path)]) == 2
    assert "b.yaml: pass_by_overshoot must be true" in capsys.readouterr().err


# a chute that returns a piece to the cell it left: 2 + 2 = 4, and the jump 4 -> 2
CHUTE = {"length": 6, "jumps": {4: 2}, "die": 3, "pass_by_overshoot": False}


def _as_a_pass(options):
    """naive.ludo_race_options under the other reading of "must move a movable piece": a move that
    ends where it began is a pass, allowed only when no piece can really move."""
    def read(board, own, opp, face, pass_by_overshoot):
        out = options(board, own, opp, face, pass_by_overshoot)
        return [o for o in out if o[0] != own] or [(own, opp, False)]
    return read


def test_a_chute_back_to_its_own_cell_is_a_move_under_the_must_move_rule(monkeypatch):
    board = rules.Board.from_mapping(CHUTE)
    assert board.move(2, 2) == 2
    sol = expansion.solve_race(board, 2, tol=1e-13)
    enc = sol.race.encoding
    # mover on 0 and 2, roll 2: both pieces may move (0 -> 2, and 2 -> 4 -> 2); the piece that comes
    # back to 2 has moved, so it is a choice of its own and no pass is offered
    choices = advice.advise(board, enc, sol.value, (0, 2), (0, 0), 2)
    assert [(c["move_from"], c["lands_on"], c["own_after"]) for c in choices] == \
        [(0, 2, (2, 2)), (2, 2, (0, 2))]
    assert ((0, 2), (0, 0), True) in naive.ludo_race_options(naive_board(CHUTE), (0, 2), (0, 0), 2,
                                                              False)
    ref = naive.ludo_race_reference(naive_board(CHUTE), 2, False)
    live = np.flatnonzero(np.diff(sol.race.expansion.node_ptr) > 0)
    assert live.size > 0
    for x in live:
        assert sol.value[x] == pytest.approx(ref[enc.position(x)], abs=1e-11), enc.position(x)
    # naive.ludo_race_reference's value of the start, to 10 digits
    assert sol.win_probability == pytest.approx(0.5231688782, abs=1e-10)
    # counting that move as a pass (forbidden whenever the other piece can move) is another game
    monkeypatch.setattr(naive, "ludo_race_options", _as_a_pass(naive.ludo_race_options))
    other = naive.ludo_race_reference(naive_board(CHUTE), 2, False)
    assert other[(0, 0), (0, 0)] == pytest.approx(0.5232265308, abs=1e-10)
    assert abs(sol.win_probability - other[(0, 0), (0, 0)]) > 5e-5


def test_a_chute_back_to_the_cell_it_left_is_a_move_under_the_must_move_rule():
    # length 5, cell 3 chutes back to 1: a piece on 1 rolling 2 lands on 3 and slides back to 1. It
    # ends where it began, but it moved: under "must move a movable piece" (pass_by_overshoot false)
    # the mover may pick it even when the other piece can move, so it acts as a voluntary pass
    data = {"length": 5, "jumps": {3: 1}, "die": 3, "pass_by_overshoot": False}
    board = rules.Board.from_mapping(data)
    sol = expansion.solve_race(board, 2, tol=1e-13)
    enc = sol.race.encoding
    got = advice.advise(board, enc, sol.value, (1, 2), (0, 0), 2)
    assert [(c["move_from"], c["lands_on"]) for c in got] == [(1, 1), (2, 4)]
    still = got[0]  # the position is unchanged and the opponent moves: 1 - V(opponent to move)
    assert still["own_after"] == (1, 2) and still["opponent_after"] == (0, 0)
    assert still["win_probability"] == pytest.approx(1 - sol.value[enc.node((0, 0), (1, 2))],
                                                     abs=1e-15)
    # where moving the other piece is worse, the mover stays: the value is that of the chute move
    better = []
    for x in np.flatnonzero(np.diff(sol.race.expansion.node_ptr) > 0):
        own, opp = enc.position(int(x))
        if 1 not in own or set(own) & set(opp) - {0, 5}:
            continue
        choices = advice.advise(board, enc, sol.value, own, opp, 2)
        stay = [c for c in choices if c["move_from"] == 1]
        other = [c for c in choices if c["move_from"] not in (1, None)]
        if other and stay[0]["win_probability"] > max(c["win_probability"] for c in other) + 1e-9:
            better.append((own, opp))
    assert better == [((1, 2), (0, 5))]
    best = [c for c in advice.advise(board, enc, sol.value, (1, 2), (0, 5), 2) if c["best"]]
    assert [(c["move_from"], c["lands_on"]) for c in best] == [(1, 1)]
    # the same under the independent reference, which counts the chute move as a move too
    ref = naive.ludo_race_reference(naive_board(data), 2, False)
    assert sol.win_probability == pytest.approx(ref[(0, 0), (0, 0)], abs=1e-12)
