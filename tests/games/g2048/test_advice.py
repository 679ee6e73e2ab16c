"""Using a 2048 solution: query, play, inspect, plots, and the reach-a-tile objective.

Every command runs here on a small board solved once per session. Values are checked against the
plain-Python references of tests/naive/g2048.py (``NaiveSolution`` for the score, ``NaiveReachSolution``
for reach-a-tile) to 1e-9 relative; Monte Carlo play is checked against the exact expected score.
"""

import csv
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from naive import g2048 as naive
from strongsolve.cli import main
from strongsolve.games.g2048.stages import pipeline
from strongsolve.games.g2048.rules.board import encode
from strongsolve.games.g2048.rules.boardtext import parse_board
from strongsolve.games.g2048.play import play
from strongsolve.games.g2048.stages.plots import LAYERS_PLOT, VALUES_PLOT
from strongsolve.games.g2048.advice import Solution
from strongsolve.games.g2048.move_table import move_table

REPO = Path(__file__).resolve().parents[3]
QUERY_SAMPLE = 300  # random reachable 2x3 states checked move by move against the naive solver
CLI_SAMPLE = 25  # of which this many also through the command line


def close(a, b):
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


@pytest.fixture(scope="session")
def opened(solved):
    """Return a function (rows, cols, target_tile=0) -> Solution of that run, opened once (its
    layer cache then serves every test)."""
    solutions = {}

    def get(*key):
        if key not in solutions:
            solutions[key] = Solution(solved(*key))
        return solutions[key]

    return get


def cli(capsys, *argv):
    """Run ``strongsolve ARGV`` in process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def text(board, empty="."):
    """A board (tuple of rows) in the CLI's BOARD form, written here independently of boardtext."""
    return " / ".join(" ".join(str(v) if v else empty for v in row) for row in board)


def naive_moves(solution, board):
    """[(direction, reward, afterstate value)] of the legal moves, from the naive score solver."""
    return [(d, r, solution.afterstate_value(a)) for d, a, r in naive.legal_moves(board)]


def assert_best_is_optimal(best, totals):
    """``best`` (a move name or None) is a best move of ``totals`` ({move: total}), and is the one
    the naive solver picks whenever that one is best by more than rounding."""
    if not totals:
        assert best is None
        return
    top = max(totals.values())
    assert close(totals[best], top)
    clear = [d for d, t in totals.items() if not close(t, top)]
    if len(clear) == len(totals) - 1:
        assert best == max(totals, key=totals.get)


# --- query ------------------------------------------------------------------------------------

def test_query_matches_naive_on_random_reachable_2x3_boards(solved, opened, naive_2048, capsys):
    reference = naive_2048(2, 3)
    boards = random.Random(6).sample(sorted(reference.states, key=naive.board_id), QUERY_SAMPLE)
    sol = opened(2, 3)
    for board in boards:
        got = sol.query(naive.board_id(board))
        assert got["board"] == [list(row) for row in board]
        expected = reference.solution.state_value(board)
        assert close(got["value"], expected), board
        assert close(sol.state_value(naive.board_id(board)), expected)
        moves = naive_moves(reference.solution, board)
        assert [m["move"] for m in got["moves"]] == [d for d, _, _ in moves]
        for m, (_, reward, value) in zip(got["moves"], moves):
            assert m["reward"] == reward
            assert close(m["afterstate_value"], value)
            assert m["total"] == m["reward"] + m["afterstate_value"]
        assert_best_is_optimal(got["best"], {d: r + v for d, r, v in moves})
        assert sol.best_move(naive.board_id(board)) == got["best"]
    # the command prints the same document (boards written with '.' and with '0' for empty)
    for k, board in enumerate(boards[:CLI_SAMPLE]):
        code, out, err = cli(capsys, "2048", "query", solved(2, 3), text(board, "." if k % 2 else "0"),
                             "--json")
        assert code == 0, err
        assert json.loads(out) == sol.query(naive.board_id(board))


def test_afterstate_values_and_symmetry(opened, naive_2048):
    sol = opened(2, 3)
    reference = naive_2048(2, 3)
    for after in random.Random(7).sample(sorted(reference.afterstates, key=naive.board_id), 50):
        for image in naive.symmetries(after):
            assert close(sol.afterstate_value(naive.board_id(image)),
                         reference.solution.afterstate_value(after))


def test_query_text_marks_the_best_move(solved, capsys):
    run = solved(2, 3)
    code, out, _ = cli(capsys, "2048", "query", run, "2 4 . / . . .")
    assert code == 0
    sol = Solution(run)
    b = encode([[2, 4, 0], [0, 0, 0]])
    best = sol.best_move(b)
    lines = out.splitlines()
    assert lines[1:3] == ["  2 4 .", "  . . ."]
    assert f"value {sol.state_value(b):.6f}" in out
    marked = [line for line in lines if line.endswith("<- best")]
    assert len(marked) == 1 and marked[0].startswith(best)
    assert [line.split()[0] for line in lines[5:]] == [m["move"] for m in sol.moves(b)]
    assert "tie" not in out


def test_query_text_names_moves_that_tie(solved, capsys, naive_2048):
    # up and down of "2 . . / . . 4" lead to boards of equal value; the naive solver says which tie
    run = solved(2, 3)
    board = ((2, 0, 0), (0, 0, 4))
    totals = {d: r + v for d, r, v in naive_moves(naive_2048(2, 3).solution, board)}
    top = max(totals.values())
    tied = [d for d in totals if close(totals[d], top)]
    assert tied == ["up", "down"]
    code, out, _ = cli(capsys, "2048", "query", run, text(board))
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines if line.endswith("<- tie")] == tied
    assert not any(line.endswith("<- best") for line in lines)
    assert lines[-1] == "up and down tie: each is optimal"


def test_move_table_rounds_to_what_distinguishes_and_names_ties(opened, naive_2048):
    reference = naive_2048(2, 3)
    sol = opened(2, 3)
    boards = random.Random(8).sample(sorted(reference.states, key=naive.board_id), 200)
    seen_ties = 0
    for board in boards + [((2, 0, 0), (0, 0, 4))]:
        moves = naive_moves(reference.solution, board)
        if not moves:
            continue
        table = move_table(sol.query(naive.board_id(board)), "score")
        d = table["decimals"]
        totals = [r + v for _, r, v in moves]
        tied = [m for (m, _, _), t in zip(moves, totals) if close(t, max(totals))]
        assert table["best"] == tied
        seen_ties += len(tied) > 1
        assert (table["tie"] is not None) == (len(tied) > 1)
        columns = ([v for _, _, v in moves], totals)
        for key, col in zip(("afterstate_value", "total"), columns):
            shown = [row[key] for row in table["rows"]]
            for text_value, exact in zip(shown, col):
                assert abs(float(text_value) - exact) <= 0.5 * 10 ** -d + 1e-9
            for i, a in enumerate(col):  # values apart print apart
                for j, b in enumerate(col):
                    if not close(a, b):
                        assert shown[i] != shown[j]
        if d > 1:  # one decimal fewer would merge two values that differ
            assert any(f"{a:.{d - 1}f}" == f"{b:.{d - 1}f}" for col in columns
                       for a in col for b in col if not close(a, b))
    assert seen_ties > 0
    assert "expected points after it" in table["legend"]


def test_empty_board_is_named(solved, capsys):
    code, out, err = cli(capsys, "2048", "query", solved(2, 2), ". . / . .")
    assert code == 2 and "is empty: every position holds at least two tiles" in err


def test_query_of_a_terminal_state(solved, capsys, naive_2048):
    run = solved(2, 3)
    terminal = next(s for s in sorted(naive_2048(2, 3).states, key=naive.board_id)
                    if not naive.legal_moves(s))
    code, out, _ = cli(capsys, "2048", "query", run, text(terminal), "--json")
    assert code == 0
    assert json.loads(out) | {"board": None} == {"board": None, "age": naive.age(terminal),
                                                  "value": 0.0, "best": None, "moves": []}
    code, out, _ = cli(capsys, "2048", "query", run, text(terminal))
    assert "no legal move" in out


@pytest.mark.parametrize("board, message", [
    ("2 4 . / . 8 .", "row 1 of board '2 4 . / . 8 .' has 3 tiles"),  # a 2x3 board on a 2x2 run
    ("2 4 / . 8 / 2 .", "has 3 rows"),
    ("2 4 / . 8 2", "row 2 of board"),
    ("2 3 / . .", "tile '3' at row 1, column 2"),
    ("2 1 / . .", "tile '1'"),
    ("2 x / . .", "tile 'x'"),
    ("2 -4 / . .", "tile '-4'"),
    ("4 . / . .", "is not in the solved layers"),  # one tile: never a position
    ("2 2 / 2 2", "is not in the solved layers"),  # no spawn into a reachable afterstate makes it
    ("8 8 / 8 8", "is not in the solved layers"),
    ("64 . / . 2", "tile sum 66"),  # beyond the last age of 2x2 (60)
])
def test_query_rejects_bad_boards(solved, capsys, board, message):
    code, out, err = cli(capsys, "2048", "query", solved(2, 2), board)
    assert code == 2 and out == ""
    assert err.startswith("strongsolve: error:") and message in err, err
    assert len(err.strip().splitlines()) == 1


def test_solution_rejects_bad_ids(solved):
    sol = Solution(solved(2, 2))
    with pytest.raises(ValueError, match="impossible on a 2x2 board"):
        sol.state_value(1 << 16)
    with pytest.raises(ValueError, match="not an integer"):
        sol.afterstate_value("0x11")
    full = encode([[2, 4], [8, 16]])  # a full board is never an afterstate (a move frees a cell)
    with pytest.raises(ValueError, match="not in the solved layers"):
        sol.afterstate_value(full)
    with pytest.raises(ValueError, match="not a 2048 run directory"):
        Solution(solved(2, 2).parent)


def test_parse_board_reads_dots_and_zeros():
    assert parse_board("2 4 . / 0 8 2", 2, 3) == encode([[2, 4, 0], [0, 8, 2]])
    assert parse_board(" 32768 . / . 2 ", 2, 2) == encode([[32768, 0], [0, 2]])
    with pytest.raises(ValueError, match="tile '65536'"):
        parse_board("65536 . / . 2", 2, 2)


# --- play -------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows, cols, games, seed", [
    (2, 3, 20000, 1),
    # 2x4 is a 5-million-state solve with 509 ages of layers to write: tens of seconds
    pytest.param(2, 4, 20000, 2, marks=pytest.mark.slow),
])
def test_play_brackets_the_exact_expected_score(solved, opened, rows, cols, games, seed):
    run = solved(rows, cols)
    sol = opened(rows, cols)
    exact = json.loads((run / "solution.json").read_text())["expected_score"]
    result = play(sol, games, seed)
    assert close(result.expected_score, exact)
    lo, hi = result.ci95
    assert lo < exact < hi, (result, exact)
    assert close(hi - result.mean_score, 1.959963984540054 * result.std_error)
    assert result.mean_points == result.mean_score
    assert sum(result.largest_tile.values()) == games
    assert all(t >= 8 and t & (t - 1) == 0 for t in result.largest_tile)
    # the same seed gives the same games
    assert play(sol, games, seed) == result


def test_play_2x3_exact_score_is_the_naive_one(opened, naive_2048):
    sol = opened(2, 3)
    assert close(sol.expected_score(), naive_2048(2, 3).solution.expected_score)


def test_play_cli(solved, opened, capsys):
    run = solved(2, 3)
    code, out, err = cli(capsys, "2048", "play", run, "--games", 3000, "--seed", 5, "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got == play(opened(2, 3), 3000, 5).to_dict()
    assert set(got) >= {"mean_score", "ci95", "expected_score", "largest_tile"}
    code, out, _ = cli(capsys, "2048", "play", run, "--games", 3000, "--seed", 5)
    assert f"mean score {got['mean_score']:.6f}" in out
    assert "largest tile: " in out
    code, _, err = cli(capsys, "2048", "play", run, "--games", 1, "--seed", 5)
    assert code == 2 and "games = 1 is not allowed" in err


# --- inspect and plots ------------------------------------------------------------------------

def test_inspect_table_matches_the_summary(solved, capsys, naive_2048):
    run = solved(2, 3)
    code, out, err = cli(capsys, "inspect", run, "--json")
    assert code == 0, err
    doc = json.loads(out)
    counts = naive_2048(2, 3).counts
    assert {r["age"]: (r["states"], r["afterstates"], r["terminal_states"]) for r in doc["ages"]} == counts
    reference = naive_2048(2, 3).solution
    by_age = {}
    for a in naive_2048(2, 3).afterstates:
        by_age.setdefault(naive.age(a), []).append(reference.afterstate_value(a))
    for r in doc["ages"]:
        if r["afterstates"]:
            values = by_age[r["age"]]
            assert close(r["value_min"], min(values)) and close(r["value_max"], max(values))
            assert 0 < r["bits_per_afterstate"] < 64 * 4  # coded size: the words over the IDs
        else:
            assert r["value_mean"] is None and r["age"] not in by_age
    assert close(doc["expected_score"], reference.expected_score)
    assert close(sum(s["probability"] for s in doc["start_states"]), 1.0)
    code, out, _ = cli(capsys, "inspect", run)
    assert code == 0 and out.splitlines()[1].split()[:3] == ["age", "states", "afterstates"]
    assert f"{'total':>6} {sum(c[0] for c in counts.values()):>12}" in out


def test_value_statistics_of_older_layers_are_read_from_their_values(solved, tmp_path, naive_2048):
    # value layers record their min, mean and max; a layer without them (an older
    # run) gives the same row, read from its values
    from strongsolve.store.layers import read_layer, write_layer
    run = tmp_path / "run"
    shutil.copytree(solved(2, 3), run)
    fresh = {r["age"]: r for r in Solution(run).age_table()}
    reference = naive_2048(2, 3).solution
    values_20 = [reference.afterstate_value(a) for a in naive_2048(2, 3).afterstates if naive.age(a) == 20]
    assert close(fresh[20]["value_min"], min(values_20)) and close(fresh[20]["value_max"], max(values_20))
    layer = run / "values" / "age_000020.zarr"
    arrays, attrs = read_layer(layer)
    assert attrs["value_mean"] == fresh[20]["value_mean"] == float(arrays["values"].mean())
    shutil.rmtree(layer)
    old = {k: v for k, v in attrs.items() if k not in ("value_min", "value_mean", "value_max",
                                                        "format", "arrays", "complete", "attrs_checksum")}
    write_layer(layer, arrays, old, zstd_level=3)
    assert "value_mean" not in read_layer(layer)[1]
    assert {r["age"]: r for r in Solution(run).age_table()} == fresh


def test_inspect_one_layer_draws_boards(solved, opened, capsys, naive_2048):
    run = solved(2, 3)
    code, out, err = cli(capsys, "inspect", run, "--age", 20, "--boards", 3, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["states"], doc["afterstates"], doc["terminal_states"]) == naive_2048(2, 3).counts[20]
    assert len(doc["boards"]) == 3
    sol = opened(2, 3)
    for b in doc["boards"]:
        assert b["board"] == sol.describe(b["id"]) and close(b["value"], sol.afterstate_value(b["id"]))
    code, out, _ = cli(capsys, "inspect", run, "--age", 20, "--boards", 3)
    assert out.count("afterstate 0x") == 3
    code, _, err = cli(capsys, "inspect", run, "--age", 21)
    assert code == 2 and "--age 21 has no layer" in err


def test_plots_command_writes_pngs(solved, capsys):
    run = solved(2, 2)
    code, _, err = cli(capsys, "2048", "plots", run)
    assert code == 0, err
    for name in (LAYERS_PLOT, VALUES_PLOT):
        assert (run / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in (run / "plots").iterdir() if p.name.startswith(".")]


def png_height(path):
    """Height in pixels of a PNG (IHDR chunk)."""
    return int.from_bytes(Path(path).read_bytes()[20:24], "big")


def test_plots_show_the_elias_fano_bits_per_afterstate(solved):
    from strongsolve.games.g2048.stages import plots

    run = solved(2, 2)
    with open(run / "summary.csv") as f:
        bits = [float(r["bits_per_afterstate"]) for r in csv.DictReader(f) if int(r["afterstates"])]
    assert bits and all(b > 0 for b in bits)
    written = plots.write_plots(run)
    assert sorted(p.name for p in written) == sorted(plots.plot_names(True))
    assert png_height(run / "plots" / LAYERS_PLOT) > png_height(run / "plots" / "values_per_age.png")


def test_forward_only_run(tmp_path, capsys):
    run = tmp_path / "2048_2x2"
    with open(os.devnull, "w") as log:
        pipeline.solve(run, 2, 2, max_age=20, log=log)
    sol = Solution(run)
    assert (sol.rows, sol.cols, sol.solved) == (2, 2, False)
    assert sol.ages() == list(range(4, 21, 2))
    code, out, _ = cli(capsys, "inspect", run)
    assert code == 0 and "forward only (no values)" in out
    assert out.splitlines()[2].split()[-3:] == ["-", "-", "-"]
    code, out, _ = cli(capsys, "inspect", run, "--age", 8, "--json")
    assert code == 0 and all(b["value"] is None for b in json.loads(out)["boards"])
    code, _, err = cli(capsys, "2048", "query", run, "2 2 / . .")
    assert code == 2 and "has no values" in err
    code, _, err = cli(capsys, "2048", "plots", run)
    assert code == 0
    assert sorted(p.name for p in (run / "plots").iterdir()) == [LAYERS_PLOT]


# --- reach-a-tile -----------------------------------------------------------------------------

@pytest.mark.parametrize("rows, cols, target", [(2, 2, 16), (2, 2, 32), (2, 3, 64)])
def test_reach_tile_matches_naive(solved, opened, capsys, rows, cols, target):
    run = solved(rows, cols, target)
    reference = naive.solve_reach(rows, cols, target)
    doc = json.loads((run / "solution.json").read_text())
    assert doc["objective"] == "reach_tile" and doc["target_tile"] == target
    assert close(doc["reach_probability"], reference.probability)
    assert doc["expected_score"] == doc["reach_probability"]
    for s in doc["start_states"]:
        assert close(s["value"], reference.state_value(tuple(map(tuple, s["board"]))))
    sol = opened(rows, cols, target)
    states = sorted(reference.states, key=naive.board_id)
    winning = 0  # sampled states with a move that makes the target
    for board in random.Random(target).sample(states, min(100, len(states))):
        q = sol.query(naive.board_id(board))
        assert close(q["value"], reference.state_value(board)), board
        totals = dict(reference.move_values(board))
        assert [m["move"] for m in q["moves"]] == list(totals)
        wins = {d: reference.wins(after) for d, after, _ in naive.legal_moves(board)}
        for m in q["moves"]:
            assert close(m["total"], totals[m["move"]])
            assert m["reward"] == (1.0 if wins[m["move"]] else 0.0)
            assert m["afterstate_value"] == 0.0 or not wins[m["move"]]
        winning += any(wins.values())
        assert_best_is_optimal(q["best"], totals)
    assert winning > 0
    afters = sorted(reference.afterstates, key=naive.board_id)
    for board in random.Random(target + 1).sample(afters, min(100, len(afters))):
        assert close(sol.afterstate_value(naive.board_id(board)), reference.afterstate_value(board))
    # a board that already holds the target is past the end of a reach-a-tile game
    with pytest.raises(ValueError, match="holds a tile >= the target"):
        sol.state_value(encode([[target] + [0] * (cols - 1)] + [[2] + [0] * (cols - 1)]
                               + [[0] * cols] * (rows - 2)))
    code, out, _ = cli(capsys, "2048", "query", run, text(states[0]))
    assert code == 0 and f"P(make {target})" in out


def test_reach_tile_play_brackets_the_probability(opened):
    sol = opened(2, 3, 64)
    result = play(sol, 20000, 3)
    lo, hi = result.ci95
    assert lo < result.expected_score < hi
    assert result.objective == "reach_tile" and result.target_tile == 64
    reached = result.largest_tile.get(64, 0)
    assert result.mean_score == reached / 20000
    assert max(result.largest_tile) == 64


@pytest.mark.slow
def test_reach_tile_workflow_with_plots(tmp_path):
    """The real Snakemake workflow on a reach-a-tile preset, with the report rule's plots."""
    for name in ("config.yaml", "workflow"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    # the lead's Snakefile may not include report.smk yet: a Snakefile of the same parts
    (tmp_path / "Snakefile").write_text(
        'configfile: "config.yaml"\n'
        'include: "workflow/rules/common.smk"\n'
        'include: "workflow/rules/g2048.smk"\n'
        'include: "workflow/rules/report.smk"\n'
        "rule all:\n    input: G2048_TARGETS, REPORT_TARGETS\n")
    (tmp_path / "small.yaml").write_text(
        "games: [g2048]\ng2048: {rows: 2, cols: 2, objective: reach_tile, target_tile: 32, "
        "ages_per_job: 32}\n")
    snakemake = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run([str(snakemake), "--cores", "2", "--configfile", "small.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = tmp_path / "results" / "2048_2x2_reach32"
    doc = json.loads((run / "solution.json").read_text())
    assert close(doc["reach_probability"], naive.solve_reach(2, 2, 32).probability)
    # one block: its one job writes the report and the plots too
    log, = (run / "logs").glob("solve_*[0-9].log")
    assert "probability of making 32: " in log.read_text()  # the objective in words
    for name in (LAYERS_PLOT, VALUES_PLOT):
        assert (run / "plots" / name).read_bytes()[:4] == b"\x89PNG"
    assert "plots: wrote" in log.read_text()


@pytest.mark.parametrize("preset, run", [("2048_2x3_reach64", "2048_2x3_reach64"),
                                         ("2048_3x3_reach512", "2048_3x3_reach512"),
                                         ("2048_3x3_reach1024", "2048_3x3_reach1024")])
def test_reach_presets_are_valid_configs(preset, run):
    from strongsolve.config import apply_preset, validate
    from strongsolve.games.g2048.saved import run_name

    config = validate(apply_preset({"preset": preset}, REPO / "workflow" / "presets"),
                      REPO / "workflow" / "schemas")
    g = config["g2048"]
    assert g["objective"] == "reach_tile"
    assert run_name(g["rows"], g["cols"], g["spawn"]["p2"], g["target_tile"]) == run
