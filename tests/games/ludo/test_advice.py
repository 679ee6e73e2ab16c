"""``strongsolve ludo advise``: every choice after a roll, valued from a race saved by
``ludo race --policy-out``, against naive.ludo_race_reference."""

import json

import numpy as np
import pytest

from naive import ludo as naive
from strongsolve.cli import main
from strongsolve.games.ludo import advice, encoding, rules
from strongsolve.games.ludo.stages import expansion
from support.ludo import naive_board

BOARD = {"length": 5, "jumps": {3: 1}, "die": 3, "roll_again_on": 3, "safe": [2]}


def reference_choices(data, ref, own, opp, face, rule):
    """Sorted (move_from or None, win probability) of every option, from the reference."""
    n = data["length"]
    out = []
    for own2, opp2, moved in naive.ludo_race_options(naive_board(data), own, opp, face, rule):
        if all(c == n for c in own2):
            q = 1.0
        elif face == data.get("roll_again_on"):
            q = ref[tuple(sorted(own2)), tuple(sorted(opp2))]
        else:
            q = 1.0 - ref[tuple(sorted(opp2)), tuple(sorted(own2))]
        # the moved piece: the one whose cell changed, or one that came back to its own cell
        frm = None if not moved else next(
            (a for a, b in zip(own, own2) if a != b),
            next((c for c in own if c != n and naive.ludo_step(naive_board(data), c, face) ==
                  (c, True)), None))
        out.append((frm, q))
    return out


@pytest.mark.parametrize("rule", [True, False])
def test_every_choice_of_every_position_matches_the_reference(rule):
    data = dict(BOARD, pass_by_overshoot=rule)
    board = rules.Board.from_mapping(data)
    sol = expansion.solve_race(board, 2, tol=1e-13)
    ref = naive.ludo_race_reference(naive_board(data), 2, rule)
    enc = sol.race.encoding
    checked = 0
    for x in np.flatnonzero(np.diff(sol.race.expansion.node_ptr) > 0):
        own, opp = enc.position(int(x))
        if set(own) & set(opp) - {0, 2, 5}:  # both players on an unsafe cell: never played
            with pytest.raises(ValueError, match="impossible: cell .* holds pieces of both"):
                advice.advise(board, enc, sol.value, own, opp, 1)
            continue
        for face in (1, 2, 3):
            got = advice.advise(board, enc, sol.value, own, opp, face)
            for c in got:  # the landing cell, by the reference's own step
                assert c["lands_on"] == (None if c["move_from"] is None else
                                         naive.ludo_step(naive_board(data), c["move_from"], face)[0])
            expected = reference_choices(data, ref, own, opp, face, rule)
            # the reference lists a pass per overshooting piece and a move per piece identity
            assert {(c["move_from"], round(c["win_probability"], 9)) for c in got} == \
                {(f, round(q, 9)) for f, q in expected}, (own, opp, face)
            best = [c for c in got if c["best"]]
            assert len(best) == 1
            assert best[0]["win_probability"] == pytest.approx(max(q for _, q in expected),
                                                               abs=1e-9)
            checked += 1
    assert checked > 100


def test_cli_advise_reads_the_saved_race(tmp_path, capsys):
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(BOARD))
    saved = tmp_path / "out" / "race_p2_policy.npz"
    assert main(["ludo", "race", str(path), "--pieces", "2", "--policy-out", str(saved)]) == 0
    capsys.readouterr()
    # own pieces at 1 and 4, opponent at 0 and 0, roll 2: 1 -> 3 jumps back to 1; 4 overshoots
    # (a pass under the design's rule, the default)
    assert main(["ludo", "advise", str(saved), "--position", "4,1/0,0", "--roll", "2",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = naive.ludo_race_reference(naive_board(dict(BOARD, pass_by_overshoot=True)), 2, True)
    expected = reference_choices(BOARD, ref, (1, 4), (0, 0), 2, True)
    assert [(c["move_from"], pytest.approx(c["win_probability"], abs=1e-9))
            for c in out["choices"]] == [(f, q) for f, q in expected]
    assert out["choices"][0]["own_after"] == [1, 4] and out["choices"][0]["opponent_after"] == [0, 0]
    assert sum(c["best"] for c in out["choices"]) == 1
    assert main(["ludo", "advise", str(saved), "--position", "4,1/0,0", "--roll", "2"]) == 0
    text = capsys.readouterr().out
    assert "move 1" in text and "pass" in text and text.count("*") == 1
    # errors name the bad value, and the command that writes a readable file
    assert main(["ludo", "advise", str(saved), "--position", "3,1/0,0", "--roll", "2"]) == 2
    assert "cell 3 is not a cell a piece can rest on" in capsys.readouterr().err
    # two opposing pieces on cell 4 (not safe): the last to land would have captured the other
    assert main(["ludo", "advise", str(saved), "--position", "4,1/4,0", "--roll", "2"]) == 2
    err = capsys.readouterr().err
    assert "position 4,1/4,0 is impossible: cell 4 holds pieces of both players" in err
    assert "safe cells: 2; 0 and 5 hold any" in err
    assert main(["ludo", "advise", str(saved), "--position", "2,1/2,0", "--roll", "2"]) == 0  # safe
    capsys.readouterr()
    assert main(["ludo", "advise", str(saved), "--position", "4,1/0,0", "--roll", "4"]) == 2
    assert "roll 4 is not a face of the die" in capsys.readouterr().err
    old = tmp_path / "old.npz"
    np.savez(old, value=np.zeros(3))
    assert main(["ludo", "advise", str(old), "--position", "4,1/0,0", "--roll", "2"]) == 2
    err = capsys.readouterr().err
    assert f'{old} has no "checksum" member' in err and "--policy-out" in err
    # the race's JSON summary (what the workflow's race_p2.json is) points to its saved solution
    summary = tmp_path / "out" / "race_p2.json"
    summary.write_text("{}")
    assert main(["ludo", "advise", str(summary), "--position", "4,1/0,0", "--roll", "2"]) == 2
    assert (f"{summary} is the race's summary; advise reads its saved solution: "
            f"`strongsolve ludo advise {saved} ...`") in capsys.readouterr().err


def test_a_position_with_more_pieces_than_solved_is_refused_with_the_commands_that_answer(
        tmp_path, capsys, monkeypatch):
    # the design's four-piece example on a board where four pieces are not solved
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(BOARD))
    saved = tmp_path / "out" / "race_p2_policy.npz"
    assert main(["ludo", "race", str(path), "--pieces", "2", "--against", "--policy-out",
                 str(saved)]) == 0
    capsys.readouterr()
    # rest cells 0, 1, 2, 4, 5 (3 jumps to 1): 4 pieces give C(5 + 3, 4)^2 = 4,900 positions,
    # 2 pieces 225; a solver holding 1,000 solves 2 pieces at most
    monkeypatch.setattr(encoding, "MAX_RACE_NODES", 1000)
    assert main(["ludo", "advise", str(saved), "--position", "1,3,2,4/0,0,2,5", "--roll",
                 "2"]) == 2
    err = capsys.readouterr().err
    assert "has 4 piece(s) each, but" in err and "holds the race of 2 piece(s) each" in err
    assert "cell 3 is not a cell a piece can rest on in this board (jump source: 3 -> 1)" in err
    assert "The 4-piece game is not solved exactly: 4,900 positions" in err
    assert "2 piece(s) each is the largest race it solves here" in err
    command = f"strongsolve ludo advise {saved} --position 1,2/0,0 --roll 2"
    assert f"`{command}`" in err
    # the command printed runs, and answers as advise does on that two-piece position
    assert main(command.split()[1:] + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    sol = expansion.solve_race(rules.Board.from_mapping(BOARD), 2, tol=1e-13)
    expected = advice.advise(sol.race.board, sol.race.encoding, sol.value, (1, 2), (0, 0), 2)
    assert [c["win_probability"] for c in out["choices"]] == pytest.approx(
        [c["win_probability"] for c in expected], abs=1e-9)


def test_a_position_with_a_solvable_other_piece_count_names_the_race_that_answers(tmp_path,
                                                                                  capsys):
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(BOARD))
    saved = tmp_path / "race_p2_policy.npz"
    assert main(["ludo", "race", str(path), "--pieces", "2", "--against", "--policy-out",
                 str(saved)]) == 0
    capsys.readouterr()
    assert main(["ludo", "advise", str(saved), "--position", "1/0", "--roll", "2"]) == 2
    sibling = tmp_path / "race_p1_policy.npz"
    assert (f"solve the 1-piece race first: `strongsolve ludo race BOARD.yaml --pieces 1 "
            f"--policy-out {sibling}`, then run `strongsolve ludo advise {sibling} --position 1/0 "
            "--roll 2`") in capsys.readouterr().err
    assert main(["ludo", "race", str(path), "--pieces", "1", "--against", "--policy-out",
                 str(sibling)]) == 0
    capsys.readouterr()
    assert main(["ludo", "advise", str(saved), "--position", "1/0", "--roll", "2"]) == 2
    assert (f"advise from the 1-piece race saved beside it: `strongsolve ludo advise {sibling} "
            "--position 1/0 --roll 2`") in capsys.readouterr().err
    assert main(["ludo", "advise", str(saved), "--position", "1,2/0", "--roll", "2"]) == 2
    assert "both players need the same number of pieces, got 2 and 1" in capsys.readouterr().err
