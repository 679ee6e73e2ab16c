"""The value-only race solver (three pieces each) against naive.ludo_race_reference, a
plain-Python Jacobi solver over *ordered* piece tuples that shares no code with it, and against the
expansion solver; its checkpoints (a kill -9 during the sweeps resumes to the unbroken values, bit
for bit; a damaged checkpoint is reported by name and not used); ``ludo race`` and ``ludo advise``
on its saved values."""

import functools
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from naive import ludo as naive
from strongsolve.cli import main
from strongsolve.games.ludo import encoding, rules
from strongsolve.games.ludo import saved as store
from strongsolve.games.ludo.stages import expansion
from strongsolve.games.ludo.stages import values as ludo_values
from support.ludo import naive_board

# small boards with the classic board's features, overshoot "stay" (where the move rules differ)
THREE = [
    # a shortcut 1->3, a trap 3->2 (not chained), a safe cell, a d2
    {"length": 4, "jumps": {1: 3, 3: 2}, "safe": [2], "die": 2},
    # a loaded d3 and a bonus roll on 3
    {"length": 3, "jumps": {1: 2}, "die": ["1/2", "1/4", "1/4"], "roll_again_on": 3},
]
TWO = [
    {"length": 6, "jumps": {2: 4, 5: 1}, "safe": [3], "die": 3},
    {"length": 5, "jumps": {3: 1}, "die": 3, "roll_again_on": 3},
    {"length": 7, "jumps": {3: 6, 5: 1}, "die": ["2/5", "1/5", "1/5", "1/5"], "roll_again_on": 4},
]


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@functools.lru_cache(maxsize=None)
def _reference(board_index, pieces, rule):
    data = dict((THREE + TWO)[board_index], pass_by_overshoot=rule)
    return naive.ludo_race_reference(naive_board(data), pieces, rule)


def reference(data, pieces, rule):
    """naive.ludo_race_reference of a board of THREE or TWO, computed once per test session."""
    return _reference((THREE + TWO).index(data), pieces, rule)


def check_against_reference(data, pieces, rule, extrapolation=True):
    board = rules.Board.from_mapping(dict(data, pass_by_overshoot=rule))
    sol = ludo_values.solve_values(board, pieces, tol=1e-13, extrapolation=extrapolation)
    ref = reference(data, pieces, rule)
    race = sol.race
    row = {tuple(race.cells[t].tolist()): i for i, t in enumerate(race.tuples)}
    checked = 0
    for (own, opp), expected in ref.items():
        a, b = row.get(tuple(sorted(own))), row.get(tuple(sorted(opp)))
        if a is None or b is None:  # a piece on a jump source: no piece rests there
            continue
        assert sol.value[a, b] == pytest.approx(expected, abs=1e-10), (own, opp)
        checked += 1
    assert checked > 0.1 * len(ref)
    start = ref[(0,) * pieces, (0,) * pieces]
    assert sol.win_probability == pytest.approx(start, abs=1e-10)
    return sol


# the extrapolation (stages/acceleration.py) jumps on these: plain sweeps against the reference too
@pytest.mark.parametrize("rule", [True, False])
@pytest.mark.parametrize("data, pieces", [(THREE[0], 3), (THREE[1], 3), (TWO[1], 2), (TWO[2], 2)])
def test_plain_and_extrapolated_sweeps_both_match_the_reference(data, pieces, rule):
    jumped = check_against_reference(data, pieces, rule)
    plain = check_against_reference(data, pieces, rule, extrapolation=False)
    assert jumped.jumps > 0 and plain.jumps == 0
    assert np.abs(jumped.value - plain.value).max() <= 1e-12


@pytest.mark.parametrize("rule", [True, False])
@pytest.mark.parametrize("data", THREE)
def test_three_pieces_match_the_plain_python_reference_everywhere(data, rule):
    check_against_reference(data, 3, rule)


@pytest.mark.parametrize("rule", [True, False])
@pytest.mark.parametrize("pieces", [1, 2])
@pytest.mark.parametrize("data", THREE + TWO)
def test_one_and_two_pieces_match_the_plain_python_reference_everywhere(data, pieces, rule):
    check_against_reference(data, pieces, rule)


@pytest.mark.parametrize("data", [
    {"length": 14, "jumps": {2: 6, 6: 9, 8: 4, 11: 13, 12: 10}, "chain_jumps": True,
     "safe": [5, 10], "die": 6},
    {"length": 12, "jumps": {2: 5, 9: 4}, "overshoot": "bounce", "safe": [6], "die": 4,
     "pass_by_overshoot": False},
    {"length": 10, "jumps": {4: 8, 7: 2}, "overshoot": "finish", "die": ["2/7"] + ["1/7"] * 5,
     "roll_again_on": 6},
])
def test_two_pieces_equal_the_expansion_solver(data):
    board = rules.Board.from_mapping(data)
    old = expansion.solve_race(board, 2, tol=1e-14)
    new = ludo_values.solve_values(board, 2, tol=1e-14)
    of_lex = new.race.of_lex
    in_lex_order = new.value[np.ix_(of_lex, of_lex)].reshape(-1)
    assert np.abs(in_lex_order - old.value).max() < 1e-12


def test_the_values_do_not_depend_on_the_thread_count():
    board = rules.Board.from_mapping({"length": 9, "jumps": {2: 5, 7: 3}, "safe": [4], "die": 4})
    for extrapolation in (True, False):
        ludo_values.set_threads(1)
        one = ludo_values.solve_values(board, 3, tol=1e-9, extrapolation=extrapolation)
        ludo_values.set_threads(2)
        two = ludo_values.solve_values(board, 3, tol=1e-9, extrapolation=extrapolation)
        assert (one.jumps > 0) == extrapolation and one.jumps == two.jumps
        assert one.sweeps == two.sweeps and np.array_equal(one.value, two.value)


@pytest.mark.parametrize("data", THREE[:2])
def test_the_order_alone_indexes_the_values_as_the_solver_does(data):
    # saved values are read through race_order, which builds no move table
    board = rules.Board.from_mapping(data)
    order = ludo_values.race_order(board, 3)
    race = ludo_values.race_tables(board, 3)
    for field in order._fields:
        assert np.array_equal(getattr(order, field), getattr(race, field)), field
    assert order.n_tuples == race.n_tuples
    own, opponent = (0, 0, board.rest_cells()[1]), (0, 0, 0)
    assert order.index(own, opponent) == race.index(own, opponent)
    assert order.lex_encoding().node(own, opponent) == race.lex_encoding().node(own, opponent)


KILL_BOARD = "length: 14\njumps: {3: 7, 10: 5}\nsafe: [6]\ndie: 6\n"


def race_command(board, out, *extra):
    return [sys.executable, "-m", "strongsolve", "ludo", "race", str(board), "--pieces", "3",
            "--values-out", str(out), "--tol", "1e-14", "--threads", "1", *extra]


@pytest.mark.slow
def test_a_kill_during_the_sweeps_resumes_to_the_unbroken_values(tmp_path):
    board = tmp_path / "b.yaml"
    board.write_text(KILL_BOARD)
    out = tmp_path / "out" / "race_p3.zarr"
    checkpoints = store.checkpoint_directory(out)
    log = open(tmp_path / "first.log", "w")
    first = subprocess.Popen(race_command(board, out, "--checkpoint-sweeps", "4"),
                             stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not list(checkpoints.glob("sweep_*.zarr")) and first.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(first.pid, signal.SIGKILL)
    assert first.wait() == -signal.SIGKILL
    log.close()
    assert not out.exists()
    again = subprocess.run(race_command(board, out, "--checkpoint-sweeps", "4", "--json"),
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "resuming from checkpoint" in again.stderr and "  sweep 1:" not in again.stderr
    report = json.loads(again.stdout)
    assert report["resumed_from_sweep"] >= 4
    assert not checkpoints.exists()  # removed once the solution is saved
    unbroken = ludo_values.solve_values(rules.load_board(board), 3, tol=1e-14)
    saved = store.SavedValues(out)
    assert report["sweeps"] == unbroken.sweeps == saved.attrs["sweeps"]
    assert np.array_equal(np.asarray(saved.array[:]).reshape(unbroken.value.shape),
                          unbroken.value)
    # a rerun of the finished command answers from the saved values
    third = subprocess.run(race_command(board, out, "--json"), capture_output=True, text=True)
    assert third.returncode == 0 and "already holds this race" in third.stderr
    assert json.loads(third.stdout)["win_probability"] == unbroken.win_probability


def partial_solve(board, directory, sweeps, log):
    # stop after `sweeps` sweeps, leaving the checkpoint of the last one
    points = store.Checkpoints(directory, board, 3, every_minutes=None, every_sweeps=sweeps,
                               log=log)
    with pytest.raises(RuntimeError, match="did not reach"):
        ludo_values.solve_values(board, 3, tol=1e-14, max_sweeps=sweeps, checkpoints=points)
    return points


@pytest.mark.parametrize("damage", ["chunk", "attributes"])
def test_a_damaged_checkpoint_is_reported_and_not_used(tmp_path, damage):
    board = rules.Board.from_mapping({"length": 9, "jumps": {2: 5, 7: 3}, "safe": [4], "die": 4})
    lines = []
    points = partial_solve(board, tmp_path / "r.zarr.checkpoints", 5, lines.append)
    [path] = points.paths()
    assert path.name == "sweep_000005.zarr"
    if damage == "chunk":
        target = max((p for p in (path / "value").rglob("*") if p.is_file()),
                     key=lambda p: p.stat().st_size)
    else:
        target = path / "zarr.json"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x20
    target.write_bytes(bytes(data))
    lines.clear()
    resumed = store.Checkpoints(tmp_path / "r.zarr.checkpoints", board, 3, log=lines.append)
    sol = ludo_values.solve_values(board, 3, tol=1e-13, checkpoints=resumed)
    assert any(f"checkpoint {path} is damaged" in line for line in lines), lines
    assert not any("resuming" in line for line in lines)
    assert sol.resumed_from == 0
    assert np.array_equal(sol.value, ludo_values.solve_values(board, 3, tol=1e-13).value)


def test_a_good_checkpoint_resumes_bit_for_bit_and_another_races_is_refused(tmp_path):
    board = rules.Board.from_mapping({"length": 9, "jumps": {2: 5, 7: 3}, "safe": [4], "die": 4})
    lines = []
    # sweep 8 ends the extrapolation's second cycle (sweeps 3-5, 6-8): a checkpoint is written
    # only between cycles
    partial_solve(board, tmp_path / "c", 8, lines.append)
    resumed = ludo_values.solve_values(board, 3, tol=1e-13,
                                       checkpoints=store.Checkpoints(tmp_path / "c", board, 3,
                                                                     log=lines.append))
    assert resumed.resumed_from == 8
    assert any("resuming from checkpoint" in line and "sweep 8" in line for line in lines)
    unbroken = ludo_values.solve_values(board, 3, tol=1e-13)
    assert resumed.sweeps == unbroken.sweeps and np.array_equal(resumed.value, unbroken.value)
    partial_solve(board, tmp_path / "d", 2, lines.append)
    other = rules.Board.from_mapping({"length": 9, "jumps": {2: 5, 7: 3}, "safe": [4], "die": 4,
                                     "pass_by_overshoot": False})
    with pytest.raises(ValueError, match="is a checkpoint of another race .*rm -rf"):
        ludo_values.solve_values(other, 3, checkpoints=store.Checkpoints(tmp_path / "d", other, 3))


def test_race_and_advise_from_saved_values(tmp_path, capsys):
    data = THREE[0]
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(data))
    saved = tmp_path / "race_p3.zarr"
    assert main(["ludo", "race", str(path), "--pieces", "3", "--values-out", str(saved),
                 "--tol", "1e-13", "--position", "0,2,3/0,0,2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ref = reference(data, 3, True)
    assert out["solver"] == "values"
    assert out["win_probability"] == pytest.approx(ref[(0, 0, 0), (0, 0, 0)], abs=1e-10)
    # own 0, 2, 3 against 0, 0, 2, roll 2: 0 -> 2 (a safe cell: no capture), 2 -> 4 (home), 3
    # overshoots (a pass under the design's rule)
    assert main(["ludo", "advise", str(saved), "--position", "0,2,3/0,0,2", "--roll", "2",
                 "--json"]) == 0
    advice = json.loads(capsys.readouterr().out)
    expected = []
    for own2, opp2, moved in naive.ludo_race_options(naive_board(data), (0, 2, 3), (0, 0, 2), 2,
                                                     True):
        expected.append(round(1.0 - ref[tuple(sorted(opp2)), tuple(sorted(own2))], 9))
    got = sorted(round(c["win_probability"], 9) for c in advice["choices"])
    assert got == sorted(set(expected))
    best = max(c["win_probability"] for c in advice["choices"])
    assert out["positions_queried"][0]["moves"][1]["win_probability"] == pytest.approx(best,
                                                                                      abs=1e-12)


def test_bad_input_is_refused_with_the_fix(tmp_path, capsys):
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(THREE[0]))
    assert main(["ludo", "race", str(path), "--pieces", "0"]) == 2
    assert "--pieces must be in 1..4, got 0" in capsys.readouterr().err
    assert main(["ludo", "race", str(path), "--pieces", "3", "--solver", "values",
                 "--max-memory-gb", "0.000001"]) == 2
    err = capsys.readouterr().err
    # rest cells 0, 2, 3, 4 (1 jumps to 3): C(6, 3)^2 = 400 positions, 6,400 bytes with the
    # extrapolation's two changes, 3,200 without
    assert ("give 400 positions: their values take 6,400 bytes (0.00 GB, 16 bytes each: 8 for the "
            "value, 8 for its last 2 changes, which the extrapolation keeps; --no-extrapolation "
            "needs 8)") in err
    assert ("more than the memory limit 1,000 bytes (0.00 GB); raise it with --max-memory-gb 1 "
            in err)
    assert main(["ludo", "race", str(path), "--pieces", "3", "--solver", "values",
                 "--max-memory-gb", "0.000001", "--no-extrapolation"]) == 2
    assert ("give 400 positions: their values take 3,200 bytes (0.00 GB, 8 bytes each), more "
            "than") in capsys.readouterr().err
    assert main(["ludo", "race", str(path), "--pieces", "3", "--solver", "values",
                 "--policy-out", str(tmp_path / "p.npz")]) == 2
    assert "--values-out DIR.zarr" in capsys.readouterr().err
    checkpoint = tmp_path / "c.zarr"
    checkpoint.mkdir()
    assert main(["ludo", "advise", str(checkpoint), "--position", "0,0,0/0,0,0", "--roll",
                 "1"]) == 2
    err = capsys.readouterr().err
    assert f"layer {checkpoint} cannot be opened" in err and "solve the race again" in err


def test_advise_on_another_piece_count_names_the_values_solver_and_its_saved_race(
        tmp_path, capsys, monkeypatch):
    # rest cells 0, 2, 3, 4: 2 pieces give C(5, 2)^2 = 100 positions, 3 pieces 400; an expansion
    # solver holding 100 solves 2 pieces at most
    monkeypatch.setattr(encoding, "MAX_RACE_NODES", 100)
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(THREE[0]))
    saved = tmp_path / "race_p2_policy.npz"
    assert main(["ludo", "race", str(path), "--pieces", "2", "--against", "--policy-out",
                 str(saved)]) == 0
    capsys.readouterr()
    position = ["--position", "0,2,3/0,0,2", "--roll", "2"]
    values = tmp_path / "race_p3_values.zarr"
    assert main(["ludo", "advise", str(saved), *position]) == 2
    err = capsys.readouterr().err
    assert "The values solver holds it (0.00 GB)" in err
    assert (f"`strongsolve ludo race BOARD.yaml --pieces 3 --values-out {values}`, then "
            f"`strongsolve ludo advise {values} --position 0,2,3/0,0,2 --roll 2`") in err
    assert main(["ludo", "race", str(path), "--pieces", "3", "--values-out", str(values)]) == 0
    capsys.readouterr()
    assert main(["ludo", "advise", str(saved), *position]) == 2
    assert (f"advise from the 3-piece race saved beside it: `strongsolve ludo advise {values} "
            "--position 0,2,3/0,0,2 --roll 2`") in capsys.readouterr().err


def test_sweep_progress_estimates_the_sweeps_left_from_the_mean_rate(monkeypatch):
    # the changes halve each sweep, then one sweep's ratio jumps: the estimate follows the geometric
    # mean of the last RATE_SWEEPS ratios, with the mean seconds of those sweeps
    from strongsolve.commands import ludo as command

    lines = []
    monkeypatch.setattr(command, "_progress", lines.append)
    report = command._sweep_progress(2.0 ** -40)
    for sweep, delta in enumerate([2.0 ** -k for k in range(1, 7)] + [2.0 ** -9], 1):
        report(sweep, delta, 3.0)
    assert lines[0] == "  sweep 1: largest change 0.5, 3.0 s"
    assert lines[5].endswith("; about 34 more sweep(s), 102 s at this rate")  # 2^-6 -> 2^-40
    # 2^-9 after 2^-6: over the last five sweeps the changes fell 2^-7, a rate of 2^-1.4 per sweep
    assert lines[6].endswith(f"; about {math.ceil(31 / 1.4)} more sweep(s), 69 s at this rate")
