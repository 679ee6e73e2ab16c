"""The Ludo page's board drawing (lab/ludo_board.py): its SVG parsed, its marks counted against the
board file's own jumps, traps and safe cells, its pieces and landing cells against the position."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from strongsolve.games.ludo import rules
from strongsolve.lab.ludo_board import CELL, ROW_GAP, board_svg, cell_origin

BOARDS = Path(__file__).resolve().parents[2] / "workflow" / "boards"
NS = "{http://www.w3.org/2000/svg}"


def parse(svg):
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg" and root.get("id") == "board"
    return root


def with_class(root, *names):
    """Elements whose class attribute holds every one of ``names``."""
    return [e for e in root.iter() if set(names) <= set((e.get("class") or "").split())]


@pytest.mark.parametrize("name", ["classic60.yaml", "hdu4405.yaml"])
def test_the_drawing_has_every_cell_jump_trap_and_safe_cell_of_the_board_file(name):
    board = rules.load_board(BOARDS / name)
    root = parse(board_svg(board))
    cells = with_class(root, "cell")
    assert [c.get("id") for c in cells] == [f"cell-{c}" for c in range(board.length + 1)]
    # the board file's jumps, read here from the YAML itself rather than through the Board
    import yaml

    jumps = {int(s): t for s, t in yaml.safe_load((BOARDS / name).read_text())["jumps"].items()}
    shortcuts = {(s, t) for s, t in jumps.items() if t > s}
    traps = {(s, t) for s, t in jumps.items() if t < s}
    drawn = {kind: {(int(e.get("data-from")), int(e.get("data-to")))
                    for e in with_class(root, "jump", kind)} for kind in ("shortcut", "trap")}
    assert drawn == {"shortcut": shortcuts, "trap": traps}
    assert len(with_class(root, "jump")) == len(jumps)
    safe = yaml.safe_load((BOARDS / name).read_text()).get("safe") or []
    assert sorted(int(e.get("id")[5:]) for e in with_class(root, "cell", "safe")) == sorted(safe)
    # a jump source is a cell no piece rests on, drawn dashed
    assert sorted(int(e.get("id")[5:]) for e in with_class(root, "cell", "no-rest")) == sorted(jumps)
    assert [e.get("id") for e in with_class(root, "start")] == ["cell-0"]
    assert [e.get("id") for e in with_class(root, "goal")] == [f"cell-{board.length}"]
    assert not with_class(root, "piece") and not with_class(root, "landing")


def test_classic60_counts():
    # workflow/boards/classic60.yaml: 60 cells after the start, four shortcuts, three traps, five
    # safe cells (its header comment)
    root = parse(board_svg(rules.load_board(BOARDS / "classic60.yaml")))
    assert (len(with_class(root, "cell")), len(with_class(root, "jump", "shortcut")),
            len(with_class(root, "jump", "trap")), len(with_class(root, "cell", "safe"))) == (61, 4, 3, 5)


def test_pieces_and_landing_cells_of_a_position():
    board = rules.load_board(BOARDS / "classic60.yaml")
    # two pieces of the mover at the start, one of the opponent's on 25 and one at the goal; the
    # moves of roll 5 as advise gives them: both pieces at 0 are one choice (0 -> 5), 25 -> 30 -> 22
    root = parse(board_svg(board, own=(0, 0), opponent=(25, 60),
                           landings=[(0, 5, False), (10, 5, True), (17, 22, False)]))
    pieces = {side: sorted(int(e.get("data-cell")) for e in with_class(root, "piece", side))
              for side in ("own", "opponent")}
    assert pieces == {"own": [0, 0], "opponent": [25, 60]}
    landing = {int(e.get("data-cell")): (e.get("data-from"), "best" in e.get("class").split())
               for e in with_class(root, "landing")}
    assert landing == {5: ("0 10", True), 22: ("17", False)}
    # two pieces on one cell are drawn apart
    xs = [float(e.get("cx")) for e in with_class(root, "piece", "own")]
    assert abs(xs[0] - xs[1]) >= 8


def test_the_track_snakes_so_that_consecutive_cells_touch():
    board = rules.load_board(BOARDS / "classic60.yaml")
    for c in range(board.length):
        (x0, y0), (x1, y1) = cell_origin(c, board.length), cell_origin(c + 1, board.length)
        assert (x0 == x1 and y1 - y0 == CELL + ROW_GAP) or (y0 == y1 and abs(x1 - x0) < CELL + 10)


def test_a_cell_off_the_board_is_named():
    board = rules.Board.from_mapping({"length": 8})
    with pytest.raises(ValueError, match="cell 9 is outside the board 0..8"):
        board_svg(board, own=(9,))
    with pytest.raises(ValueError, match="cell -1 is outside the board 0..8"):
        board_svg(board, landings=[(2, -1, False)])
