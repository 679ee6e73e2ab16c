"""A Ludo board whose goal some cell cannot reach is reported as such, at once, by both commands.

A race on such a board ran 202 s and ended in a value-iteration traceback while ``ludo rolls``
answered "inf": a piece stuck where the goal cannot be reached never finishes, so a race
may never end. The expected cells below are worked out by hand in the comments.
"""

import json
import time
from pathlib import Path

import pytest

from strongsolve.cli import main
from strongsolve.games.ludo import rules
from strongsolve.games.ludo.stages import expansion

BOARDS = Path(__file__).resolve().parents[3] / "workflow" / "boards"

# Die 1..3; cells 4, 5 and 6 jump back to 0. From 0 a piece reaches 1, 2, 3; from 3 every roll lands
# on 4, 5 or 6 and goes back to 0: the goal 10 is reachable from no cell a piece rests on.
TRAP = "length: 10\nchain_jumps: true\njumps: {4: 0, 5: 0, 6: 0}\ndie: 3\n"
# Die 1..2; cell 2 flies to the goal, 8 and 9 back to 6. From 6 a piece reaches 7 or 6 again, from 7
# only 6: {6, 7} is closed. Cells 3, 4, 5 lie past the flight at 2 and lead only into {6, 7}; cells
# 0 and 1 can still roll onto 2. Rest cells: 0, 1, 3, 4, 5, 6, 7 and the goal 10.
PARTIAL = "length: 10\ndie: 2\njumps: {2: 10, 8: 6, 9: 6}\n"


def board_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cells_without_goal():
    trap = rules.Board.from_mapping({"length": 10, "chain_jumps": True, "jumps": {4: 0, 5: 0, 6: 0},
                                    "die": 3})
    assert rules.cells_without_goal(trap) == [0, 1, 2, 3]
    partial = rules.Board.from_mapping({"length": 10, "die": 2, "jumps": {2: 10, 8: 6, 9: 6}})
    assert partial.rest_cells() == [0, 1, 3, 4, 5, 6, 7, 10]
    assert rules.cells_without_goal(partial) == [3, 4, 5, 6, 7]
    for name in ("classic60.yaml", "classic60_loaded.yaml", "hdu4405.yaml"):
        assert rules.cells_without_goal(rules.load_board(BOARDS / name)) == []
    # only 2s, overshoot `stay`: 0 -> 2, which flies to 1; 1 -> 3; from 3 every roll overshoots
    assert rules.cells_without_goal(rules.Board.from_mapping({"length": 4, "die": [0, 1],
                                                             "jumps": {2: 1}})) == [0, 1, 3]


def test_race_is_refused_at_once_naming_the_file_and_the_cells(tmp_path, capsys):
    for name, text, cells, jumps in (("trap.yaml", TRAP, [0, 1, 2, 3], "4->0, 5->0, 6->0"),
                                     ("partial.yaml", PARTIAL, [3, 4, 5, 6, 7], "8->6, 9->6")):
        path = board_file(tmp_path, name, text)
        t = time.monotonic()
        assert main(["ludo", "race", str(path), "--pieces", "2"]) == 2
        assert time.monotonic() - t < 5
        assert capsys.readouterr().err == (
            f"strongsolve: error: {path}: the goal (cell 10) cannot be reached from cells {cells}, "
            f"where a piece can rest (the jumps {jumps} lead into them): a race there could never "
            "end, so it has no win probability. Change the board's jumps, die or overshoot so that "
            f"every cell can reach 10; `strongsolve ludo rolls {path}` gives the expected rolls "
            "from each cell (inf from these)\n")
        with pytest.raises(ValueError, match=rf"^the goal \(cell 10\) cannot be reached from cells "
                                             rf"\[{', '.join(map(str, cells))}\]"):
            expansion.solve_race(rules.load_board(path), 1)


def test_rolls_names_the_cells_the_goal_cannot_be_reached_from(tmp_path, capsys):
    path = board_file(tmp_path, "partial.yaml", PARTIAL)
    assert main(["ludo", "rolls", str(path)]) == 0
    # every cell before the flight at 2 can still roll past it into 3..7; 8 and 9 jump to 6
    assert capsys.readouterr().out == (
        "expected rolls from cell 0: inf\n"
        f"{path}: the goal (cell 10) cannot be reached from cells [3, 4, 5, 6, 7], where a piece "
        "can rest (the jumps 8->6, 9->6 lead into them); the expected rolls are infinite from every "
        "cell that can get there: [0, 1, 2, 3, 4, 5, 6, 7, 8]\n")
    assert main(["ludo", "rolls", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["goal_unreachable_from"] == [3, 4, 5, 6, 7]
    # from 9 a 1 finishes and a 2 overshoots (the piece stays): 2 rolls on average
    assert out["expected_rolls"] == "inf" and out["per_cell"][9] == pytest.approx(2.0, rel=1e-12)
