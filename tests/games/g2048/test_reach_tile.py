"""Reach-a-tile runs end: the last age bounded by the target, the forward pass stopping
after two empty afterstate layers, targets validated up front, probabilities never above 1, the
report's labels, and the state counts against twenty48's published ones.

Expected values come from tests/naive/g2048.py (brute force over plain boards, no ages, no symmetry in
the search) and from jdleesmiller/twenty48 (quoted below with their source).
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from naive import g2048 as naive
from strongsolve.cli import main
from strongsolve.config import ConfigError, validate
from strongsolve.games.g2048.stages import pipeline
from strongsolve.games.g2048.stages.forward import nothing_made_at
from strongsolve.games.g2048.saved import Run
from strongsolve.games.g2048.advice import Solution
from strongsolve.games.g2048.rules.spawn import cap_sum, expected_value, spawn_probabilities
from strongsolve.games.g2048.rules.targets import target_range

REPO = Path(__file__).resolve().parents[3]

# twenty48's canonical state counts of the reach-a-tile game (jdleesmiller/twenty48,
# data/blog/canonical.csv, the "Canonical" row of data/blog/summary_table.html; J. Lees-Miller,
# "The Mathematics of 2048: Counting States by Exhaustive Enumeration", 2017). Their layers
# (ext/twenty48/layer_builder.hpp) hold the canonical states under the 8 symmetries of the square
# (after the spawn, the player to move) and leave out every state the valuer
# (ext/twenty48/valuer.hpp, max_depth 0) values: a 'won' state (a tile >= the target) and a
# 'lost' state (no legal move); bin/blog_count then adds 1 for the single 'win' state where the
# target can be made. These are the layer counts, that 1 taken off again.
TWENTY48_STATES = {  # (board size, target tile) -> states excluding won and lost ones
    (2, 8): 16 - 1, (2, 16): 36 - 1, (2, 32): 58 - 1,
    (3, 8): 1187 - 1, (3, 16): 16835 - 1, (3, 32): 124373 - 1,
    (4, 16): 23482822 - 1,  # the 23,482,821
}
TWENTY48_4X4_REACH32 = 1566798893 - 1  # 1,566,798,892: measured in the README, too long for a test


def close(a, b):
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


def max_tile(board):
    return max(max(row) for row in board)


def solve_quietly(directory, rows, cols, target_tile, p2=0.9, log=None, **kw):
    with open(os.devnull, "w") as devnull:
        return pipeline.solve(directory, rows, cols, p2, target_tile, log=log or devnull, **kw)


def summary(run_dir):
    with open(Path(run_dir) / "summary.csv", newline="") as handle:
        return [{k: int(v) if k != "bits_per_afterstate" else float(v) for k, v in row.items()}
                for row in csv.DictReader(handle)]


def naive_reach_counts(reference):
    """{age: (states, afterstates, terminal)} of a NaiveReachSolution's boards, canonicalised."""
    return naive.count_canonical(reference.states, reference.afterstates)


# --- last age ----------------------------------------------------------------------------------

LAST_AGE_CASES = [  # rows, cols, target, p2
    (1, 2, 8, 0.9), (1, 3, 8, 0.9), (1, 3, 16, 0.9), (1, 3, 16, 0.0), (1, 4, 32, 0.9),
    (2, 2, 8, 0.9), (2, 2, 32, 0.9), (2, 2, 16, 1.0), (2, 3, 16, 0.9), (2, 3, 64, 0.9),
    (2, 3, 4, 1.0), (3, 3, 8, 0.9),
]


@pytest.mark.parametrize("rows, cols, target, p2", LAST_AGE_CASES)
def test_last_age_bounds_every_reachable_state(rows, cols, target, p2):
    reference = naive.solve_reach(rows, cols, target, p2)
    run = Run("unused", rows, cols, p2, target)
    spawn = 4 if p2 < 1 else 2
    assert run.last_age == (rows * cols - 1) * target // 2 + spawn
    assert max(naive.age(s) for s in reference.states) <= run.last_age
    # the bound's premises: no afterstate holds the target, every afterstate has an empty cell
    for after in reference.afterstates:
        assert max_tile(after) < target and min(min(row) for row in after) == 0
    assert run.ages() == list(range(4, run.last_age + 1, 2))


@pytest.mark.parametrize("rows, cols, target", [(1, 2, 8), (1, 3, 8), (1, 3, 16)])
def test_last_age_is_attained_on_lines(rows, cols, target):
    """The bound is exact: on these boards the oldest reachable state has the last age."""
    reference = naive.solve_reach(rows, cols, target)
    assert max(naive.age(s) for s in reference.states) == Run("unused", rows, cols, 0.9, target).last_age


def test_last_age_of_4x4_reach_runs_bounds_the_job_list():
    assert Run("unused", 4, 4, 0.9, 16).last_age == 15 * 8 + 4 == 124
    assert Run("unused", 4, 4, 0.9, 32).last_age == 15 * 16 + 4 == 244
    assert Run("unused", 4, 4, 0.9, 0).last_age == 2 ** 18 - 4  # the score objective's bound
    assert Run("unused", 4, 4, 0.9, 16).ages(max_age=400)[-1] == 124


def test_workflow_job_list_of_4x4_reach16_ends_at_the_bound(tmp_path):
    """`snakemake -n`: the job list of 4x4 reach 16 is two blocks of ages, 4-66 and 68-124 (it ran
    to age 2^18 - 4 before this was checked); a target a start holds stops the workflow before any job."""
    for name in ("config.yaml", "workflow"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    (tmp_path / "Snakefile").write_text(
        'configfile: "config.yaml"\n'
        'include: "workflow/rules/common.smk"\n'
        'include: "workflow/rules/g2048.smk"\n'
        "rule all:\n    input: G2048_TARGETS\n")
    (tmp_path / "reach.yaml").write_text(
        "games: [g2048]\ng2048: {rows: 4, cols: 4, objective: reach_tile, target_tile: 16, "
        "ages_per_job: 32}\n")
    snakemake = [str(Path(sys.executable).with_name("snakemake")), "-n", "--configfile", "reach.yaml"]
    proc = subprocess.run(snakemake, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    blocks = sorted(set(re.findall(r"afterstates/block_(\d{6}-\d{6})\.json", proc.stdout)))
    assert blocks == ["000004-000066", "000068-000124"]
    proc = subprocess.run(snakemake + ["--config", "g2048={target_tile: 4}"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "strongsolve: config error: config key g2048." + HELD_4 in proc.stderr
    assert not (tmp_path / "results").exists()


# --- the forward pass stops after two empty afterstate layers ----------------------------------

def test_nothing_made_past_two_empty_layers_and_the_last_start():
    empty = np.empty(0, np.uint64)
    one = np.array([1], np.uint64)
    start_ages = {naive.age(b) for b in naive.start_distribution(1, 2, 0.9)}
    assert max(start_ages) == 8  # 4 4
    assert not nothing_made_at(8, 1, 2, 0.9, empty, empty)  # a start state of age 8
    assert nothing_made_at(10, 1, 2, 0.9, empty, empty)
    assert not nothing_made_at(10, 1, 2, 0.9, one, empty)
    assert not nothing_made_at(10, 1, 2, 0.9, empty, one)
    assert nothing_made_at(6, 1, 2, 1.0, empty, empty)  # only 2 2 starts, at age 4


def test_forward_stops_and_every_stage_agrees_with_naive(tmp_path):
    """2x3 reach 16: layers past the last state are written empty without computing; summary.csv,
    the backward pass and solution.json cover every age of the job list and match naive."""
    rows, cols, target = 2, 3, 16
    reference = naive.solve_reach(rows, cols, target)
    counts = naive_reach_counts(reference)
    log_path = tmp_path / "solve.log"
    with open(log_path, "w") as log:
        doc = solve_quietly(tmp_path / "run", rows, cols, target, log=log)
    run = Run(tmp_path / "run", rows, cols, 0.9, target)
    table = summary(tmp_path / "run")
    assert [r["age"] for r in table] == run.ages()
    for r in table:
        assert (r["states"], r["afterstates"], r["terminal_states"]) == counts.get(r["age"], (0, 0, 0))
    # the stop: the ages after two empty afterstate layers (past the last start) were not computed
    last_after = max(naive.age(a) for a in reference.afterstates)
    stopped = [int(line.split()[2].rstrip(":")) for line in log_path.read_text().splitlines()
               if line.startswith("forward age") and "(stopped)" in line]
    assert stopped == list(range(last_after + 6, run.last_age + 1, 2))
    assert stopped  # 2x3 reach 16: states to 40, afterstates to 36, bound 44
    sol = Solution(tmp_path / "run")
    assert sol.solved
    assert doc["max_age"] == max(naive.age(s) for s in reference.states)
    assert close(doc["reach_probability"], reference.probability)


@pytest.mark.slow
def test_4x4_reach16_counts_match_twenty48(tmp_path):
    """4x4 reach 16 (about 20 s here): 23,482,821 canonical states once the won and lost ones are
    left out, twenty48's count; the forward pass ends at the bound 124."""
    doc = solve_quietly(tmp_path / "run", 4, 4, 16)
    assert doc["num_states"] - doc["num_terminal_states"] == TWENTY48_STATES[4, 16]
    table = summary(tmp_path / "run")
    assert table[-1]["age"] == 124 and table[-1]["states"] == 0
    assert 0.0 < doc["reach_probability"] <= 1.0


@pytest.mark.parametrize("size, target", [(2, 8), (2, 16), (2, 32), (3, 8), (3, 16), (3, 32)])
def test_small_counts_match_twenty48_and_naive(solved, size, target):
    doc = json.loads((solved(size, size, target) / "solution.json").read_text())
    ours = doc["num_states"] - doc["num_terminal_states"]
    assert ours == TWENTY48_STATES[size, target]
    if size == 2 or target == 8:  # naive in well under a second
        reference = naive.solve_reach(size, size, target)
        states = {naive.canonical(s) for s in reference.states if naive.legal_moves(s)}
        assert len(states) == ours


# --- targets validated up front ----------------------------------------------------------------

HELD_4 = ("target_tile = 4 is not allowed: a start state already holds a 4 (p2 = 0.9, so a 4 can "
          "spawn at the start) and the game is won before the first move; the smallest allowed "
          "target is 8")
TOO_BIG_2X3 = ("target_tile = 32768 is not allowed: the largest tile a 2x3 board can make is 128 "
               "(6 cells, spawned tiles up to 4); allowed: 8 to 128")


def test_run_refuses_a_target_a_start_holds_or_the_board_cannot_make():
    with pytest.raises(ValueError) as info:
        Run("unused", 2, 3, 0.9, 4)
    assert str(info.value) == HELD_4
    with pytest.raises(ValueError) as info:
        Run("unused", 2, 3, 0.9, 32768)
    assert str(info.value) == TOO_BIG_2X3
    with pytest.raises(ValueError) as info:
        Run("unused", 2, 3, 1.0, 128)
    assert str(info.value) == ("target_tile = 128 is not allowed: the largest tile a 2x3 board can "
                               "make is 64 (6 cells, spawned tiles up to 2); allowed: 4 to 64")
    assert Run("unused", 2, 3, 1.0, 4).target_tile == 4  # only 2s spawn: no start holds a 4
    assert Run("unused", 4, 4, 0.9, 32768).target_tile == 32768  # the 4-bit cap


def test_config_refuses_bad_targets_only_for_reach_runs():
    schemas = REPO / "workflow" / "schemas"
    reach = {"g2048": {"rows": 2, "cols": 3, "objective": "reach_tile", "target_tile": 4}}
    with pytest.raises(ConfigError) as info:
        validate(reach, schemas)
    assert str(info.value) == "config key g2048." + HELD_4
    reach["g2048"]["target_tile"] = 32768
    with pytest.raises(ConfigError) as info:
        validate(reach, schemas)
    assert str(info.value) == "config key g2048." + TOO_BIG_2X3
    # the score objective ignores target_tile (its default, 2048, is above what 2x3 can make)
    assert validate({"g2048": {"rows": 2, "cols": 3, "target_tile": 32768}}, schemas)


def test_cli_refuses_bad_targets_before_any_work(tmp_path, capsys):
    for target, message in ((4, HELD_4), (32768, TOO_BIG_2X3)):
        code = main(["2048", "solve", str(tmp_path / "run"), "--rows", "2", "--cols", "3",
                     "--target-tile", str(target)])
        assert code == 2
        assert capsys.readouterr().err == f"strongsolve: error: {message}\n"
        assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("rows, cols", [(1, 2), (1, 3), (2, 2), (1, 4), (2, 3)])
@pytest.mark.parametrize("p2", [0.9, 1.0])
def test_target_range_is_what_naive_reaches(rows, cols, p2):
    smallest, largest = target_range(rows, cols, p2)
    starts = naive.start_distribution(rows, cols, p2)
    assert smallest == 2 * max(max_tile(b) for b in starts)
    states, _ = naive.reachable(rows, cols, p2)
    assert largest == max(max_tile(s) for s in states)


# --- probabilities never above 1 ---------------------------------------------------------------

@pytest.mark.parametrize("p2", [0.9, 1.0, 0.0, 0.8, 0.6, 0.3])
def test_spawn_probabilities_sum_to_at_most_one(p2):
    table = spawn_probabilities(p2, 16)
    for k in range(1, 17):
        kinds = [j for j, p in enumerate((p2, 1 - p2)) if p > 0]
        # the kernel's order: cell by cell, a 2 then a 4
        assert added_in_order(table[k, j] for _ in range(k) for j in kinds) <= 1.0
        assert abs(table[k, 0] - p2 / k) <= 4e-16 and abs(table[k, 1] - (1 - p2) / k) <= 4e-16
    if p2 == 0.9:  # 15 empty cells: the unrounded probabilities added to 1.0000000000000007
        assert added_in_order([p2 / 15, (1 - p2) / 15] * 15) > 1.0


def added_in_order(values):
    total = 0.0
    for v in values:
        total += v
    return total


def test_expected_value_of_capped_probabilities_is_at_most_one():
    assert added_in_order([1 / 9] * 9) == 1.0000000000000002
    probs = cap_sum([1 / 9] * 9)
    assert added_in_order(probs) <= 1.0 and np.abs(probs - 1 / 9).max() <= 1e-16
    assert expected_value(probs, np.ones(9)) <= 1.0
    assert expected_value([1 / 9] * 9, np.ones(9)) > 1.0  # what capping prevents


def test_reach_probability_of_2x3_target_8_is_at_most_one(solved):
    """Once reported as 1.0000000000000002; naive: 1 up to rounding."""
    run_dir = solved(2, 3, 8)
    doc = json.loads((run_dir / "solution.json").read_text())
    reference = naive.solve_reach(2, 3, 8)
    assert close(doc["reach_probability"], reference.probability)
    assert doc["reach_probability"] <= 1.0
    assert all(s["value"] <= 1.0 for s in doc["start_states"])
    sol = Solution(run_dir)
    assert sol.expected_score() <= 1.0
    for n in Run(run_dir, 2, 3, 0.9, 8).ages():
        assert (sol.layer(n)[1] <= 1.0).all()


# --- report labels -----------------------------------------------------------------------------

def test_report_says_probability_for_reach_runs(solved, capsys):
    rows, cols, target = 2, 3, 8
    run_dir = solved(rows, cols, target)
    reference = naive.solve_reach(rows, cols, target)
    counts = naive_reach_counts(reference)
    code = main(["2048", "report", str(run_dir), "--rows", "2", "--cols", "3", "--target-tile", "8"])
    err = capsys.readouterr().err
    assert code == 0
    states = sum(c[0] for c in counts.values())
    terminal = sum(c[2] for c in counts.values())
    afterstates = sum(c[1] for c in counts.values())
    assert err.startswith("probability of making 8: ")
    assert err.endswith(f" over {states} states ({terminal} terminal), {afterstates} afterstates\n")
    assert "score" not in err


def test_report_of_a_forward_only_run_prints_its_counts(tmp_path, capsys):
    solve_quietly(tmp_path / "run", 2, 3, 0, max_age=20)
    capsys.readouterr()  # the solve's status line, if it ran past the first interval (a loaded host)
    counts = naive.canonical_counts(2, 3, max_age=20)
    code = main(["2048", "report", str(tmp_path / "run"), "--rows", "2", "--cols", "3",
                 "--max-age", "20"])
    assert code == 0
    states = sum(c[0] for c in counts.values())
    terminal = sum(c[2] for c in counts.values())
    afterstates = sum(c[1] for c in counts.values())
    assert capsys.readouterr().err == (
        f"forward pass to age 20: {states} states ({terminal} terminal), {afterstates} "
        "afterstates; no values (a forward-only run: the backward pass needs every age, to 252)\n")
