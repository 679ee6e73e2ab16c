"""Optimal-play store: a binary fuse retrieval of each state's best move.

Expected moves: the naive expectimax (tests/naive/g2048.py) on every reachable 2x3 state, and the full
solution's values (:func:`backward.state_values` on the solved layers, itself checked against the
naive solver) on every 2x4 state. A chosen move is right when its reward plus its afterstate's
value is the state's value.
"""

import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from naive import g2048 as naive
from strongsolve.cli import main
from strongsolve.games.g2048.stages import pipeline
from strongsolve.games.g2048.stages.backward import state_values
from strongsolve.games.g2048.rules.board import canonical, canonicalize, encode
from strongsolve.games.g2048.play import _apply_moves, play
from strongsolve.games.g2048.stages.policy import (PolicyStore, build_fuse, fuse_layout,
                                                   fuse_retrieve, policy_path, run_policy,
                                                   states_of_age)
from strongsolve.games.g2048.saved import Run
from strongsolve.games.g2048.advice import Solution
from strongsolve.store.errors import CorruptLayerError
from strongsolve.store.layers import read_attrs


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 1000, 1_000_000])
def test_the_fuse_returns_every_stored_value(n):
    rng = np.random.default_rng(n)
    keys = np.unique(rng.integers(0, 1 << 62, n + 50, dtype=np.uint64))[:n]
    rng.shuffle(keys)
    values = rng.integers(0, 4, n).astype(np.uint8)
    packed, params = build_fuse(keys, values)
    assert np.array_equal(fuse_retrieve(packed, params, keys), values)
    assert packed.size == -(-fuse_layout(n)[2] // 4) == -(-params["array_length"] // 4)
    if n >= 1_000_000:  # 1.125 slots of 2 bits per key (Graf & Lemire 2022), plus a segment
        assert 8 * packed.size <= 2.3 * n


def test_repeated_keys_cannot_be_stored():
    keys = np.array([5, 7, 5], np.uint64)
    with pytest.raises(RuntimeError, match="are the keys distinct"):
        build_fuse(keys, np.zeros(3, np.uint8))


@pytest.fixture(scope="module")
def policy_2x3(solved, tmp_path_factory):
    directory = tmp_path_factory.mktemp("policy") / "run"
    shutil.copytree(solved(2, 3), directory)
    run = Run(directory, 2, 3)
    with open(os.devnull, "w") as log:
        run_policy(run, log=log)
    return run


def test_every_reachable_2x3_state_gets_an_optimal_move(policy_2x3, naive_2048):
    store = PolicyStore(policy_2x3)
    solution = naive_2048(2, 3).solution
    states = naive_2048(2, 3).states
    by_age = {}
    for s in states:
        if next(iter(naive.legal_moves(s)), None) is not None:
            by_age.setdefault(naive.age(s), []).append(s)
    checked = 0
    for n, boards in by_age.items():
        ids = np.array([encode([list(r) for r in s]) for s in boards], np.uint64)  # any orientation
        for s, position in zip(boards, store.best_positions(ids, n)):
            _, after, reward = list(naive.legal_moves(s))[position]
            total = reward + solution.afterstate_value(after)
            assert total == pytest.approx(solution.state_value(s), rel=1e-12, abs=1e-12)
            checked += 1
    assert checked == sum(1 for s in states if next(iter(naive.legal_moves(s)), None) is not None)


def test_a_terminal_or_unreachable_board_gets_no_move_or_a_legal_one(policy_2x3, naive_2048):
    store = PolicyStore(policy_2x3)
    terminal = encode([[2, 4, 2], [4, 2, 4]])
    assert store.best_positions(np.array([terminal], np.uint64), 18).tolist() == [-1]
    odd = ((0, 2, 128), (2, 0, 0))
    assert odd not in naive_2048(2, 3).states
    (position,) = store.best_positions(np.array([encode([list(r) for r in odd])], np.uint64), 132)
    assert 0 <= position < 4  # some legal move: a retrieval answers anything (module docstring)


def test_the_policy_store_is_checked_like_every_layer(policy_2x3, tmp_path):
    directory = tmp_path / "run"
    shutil.copytree(policy_2x3.directory, directory)
    run = Run(directory, 2, 3)
    shutil.rmtree(policy_path(run, 40))
    with pytest.raises(CorruptLayerError, match="age_000040.zarr is missing"):
        PolicyStore(run).best_positions(np.array([encode([[32, 4, 2], [2, 0, 0]])], np.uint64), 40)


def test_play_with_the_policy_store_brackets_the_exact_score(policy_2x3):
    solution = Solution(policy_2x3.directory)
    result = play(solution, 4000, 7, policy=PolicyStore(policy_2x3))
    lo, hi = result.ci95
    width = hi - lo
    assert lo - width < result.expected_score < hi + width


def check_against_full_solution(run, ages):
    """Every non-terminal state of ``ages``: the store's move has reward + afterstate value equal,
    bit for bit, to the state's value from the full solution (``state_values``, the same sums).
    Returns the number of states checked."""
    store = PolicyStore(run)
    rows, cols, line_result, line_reward, sym = run.tables.kernel_args()
    empty = np.empty(0, np.uint64)
    ids_of = {}

    def ids(n):
        if n not in ids_of:
            ids_of[n] = run.load_afterstates(n)[0] if 4 <= n <= run.last_age else empty
        return ids_of[n]

    checked = 0
    for n in ages:
        layer, values = ids(n), run.load_values(n, ids(n))
        states = states_of_age(run, n, ids(n - 2), ids(n - 4))
        best_value, best = state_values(states, run.tables, 0, layer, values)
        live = best >= 0
        positions = store.best_positions(states[live], n)
        assert positions.min(initial=0) >= 0
        after, reward = _apply_moves(states[live], positions, rows, cols, line_result, line_reward,
                                     sym)
        canonicalize(after, rows, cols, sym)
        at = np.minimum(np.searchsorted(layer, after), layer.size - 1)
        assert np.array_equal(layer[at], after)
        assert np.array_equal(reward + values[at], best_value[live])
        checked += int(live.sum())
    return checked


@pytest.mark.slow
def test_every_2x4_state_gets_the_full_solutions_value(tmp_path):
    run = Run(tmp_path / "run", 2, 4)
    with open(os.devnull, "w") as log:
        pipeline.solve(run.directory, 2, 4, log=log)
        run_policy(run, log=log)
    checked = check_against_full_solution(run, run.ages())
    assert checked == sum(read_attrs(policy_path(run, n))["num_states"] for n in run.ages())


@pytest.mark.slow
def test_a_million_3x3_states_get_the_full_solutions_value(tmp_path):
    run = Run(tmp_path / "run", 3, 3)
    with open(os.devnull, "w") as log:
        pipeline.solve(run.directory, 3, 3, log=log)
        ages = run.ages()[150::25]  # 35 ages spread over the game, over 1e6 states
        run_policy(run, ages, log=log)
    assert check_against_full_solution(run, ages) >= 1_000_000


def test_the_policy_and_play_commands(solved, tmp_path, capsys):
    directory = tmp_path / "run"
    shutil.copytree(solved(2, 3), directory)
    assert main(["2048", "policy", str(directory), "--rows", "2", "--cols", "3"]) == 0
    assert read_attrs(directory / "policy" / "age_000040.zarr")["policy_format"] == 1
    capsys.readouterr()
    assert main(["2048", "play", str(directory), "--policy", "--games", "2000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    lo, hi = doc["ci95"]
    assert lo - (hi - lo) < doc["expected_score"] < hi + (hi - lo)


# --- a run directory holding only the policy store ----------------------------------------------

@pytest.fixture(scope="module")
def policy_only_2x3(policy_2x3, tmp_path_factory):
    """A copy of the solved 2x3 run with everything but policy/ deleted (afterstates/, values/,
    solution.json, summary.csv...)."""
    directory = tmp_path_factory.mktemp("policy_only") / "run"
    shutil.copytree(policy_2x3.directory, directory)
    for entry in directory.iterdir():
        if entry.name != "policy":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    assert [e.name for e in directory.iterdir()] == ["policy"]
    return directory


def board_text(board):
    return " / ".join(" ".join(str(v) if v else "." for v in row) for row in board)


def test_best_only_from_the_policy_store_alone_is_the_full_solutions_move(
        policy_2x3, policy_only_2x3, naive_2048):
    full = Solution(policy_2x3.directory)
    alone = Solution(policy_only_2x3)
    store = PolicyStore(alone.run)
    reference = naive_2048(2, 3)
    live = sorted((s for s in reference.states
                   if next(iter(naive.legal_moves(s)), None) is not None),
                  key=naive.age)  # by age: the store holds one layer at a time
    ties = 0
    for s in live:
        b = encode([list(r) for r in s])
        best, full_best = alone.best_move(b, policy=store), full.best_move(b)
        if best != full_best:
            # Only a tie: the store keeps the first best move of the canonical board, and the
            # symmetry that makes it canonical permutes the direction order; bit-equal totals.
            assert b != canonical(b, 2, 3), s
            totals = {m["move"]: m["total"] for m in full.moves(b)}
            assert totals[best] == totals[full_best], s
            ties += 1
        # and it is optimal by the naive expectimax, computed independently of both
        (_, after, reward), = [m for m in naive.legal_moves(s) if m[0] == best]
        assert reward + reference.solution.afterstate_value(after) == pytest.approx(
            reference.solution.state_value(s), rel=1e-12, abs=1e-12)
    assert len(live) > 1000 and ties < len(live) // 10


def test_best_only_refuses_unreachable_boards_only_when_the_layers_exist(policy_2x3,
                                                                          policy_only_2x3):
    odd = encode([[0, 2, 128], [2, 0, 0]])  # not reachable (test above's naive set)
    full = Solution(policy_2x3.directory)
    with pytest.raises(ValueError, match="not in the solved layers"):
        full.best_move(odd, policy=PolicyStore(full.run))
    alone = Solution(policy_only_2x3)
    assert alone.best_move(odd, policy=PolicyStore(alone.run)) in {"left", "right", "up", "down"}
    with pytest.raises(ValueError, match="holds only the optimal-play store"):
        alone.best_move(odd)  # the values are gone: only --best-only answers


def test_play_from_the_policy_store_alone_brackets_the_exact_score(policy_2x3, policy_only_2x3,
                                                                   naive_2048):
    alone = Solution(policy_only_2x3)
    exact = naive_2048(2, 3).solution.expected_score
    result = play(alone, 20000, 1, policy=PolicyStore(alone.run))
    assert result.expected_score == Solution(policy_2x3.directory).expected_score()  # same sum
    assert result.expected_score == pytest.approx(exact, rel=1e-12)
    lo, hi = result.ci95
    assert lo < exact < hi, (result, exact)


def test_the_commands_work_from_the_policy_store_alone(policy_only_2x3, naive_2048, capsys):
    state = ((2, 4, 0), (0, 0, 2))
    (position,) = PolicyStore(Solution(policy_only_2x3).run).best_positions(
        np.array([encode([list(r) for r in state])], np.uint64), 8)
    expected = naive.legal_moves(state)[position][0]
    assert main(["2048", "query", str(policy_only_2x3), board_text(state), "--best-only"]) == 0
    move, caveat = capsys.readouterr().out.strip().split("\n")
    assert move == expected and caveat == Solution(policy_only_2x3).unreachable_caveat()
    assert main(["2048", "query", str(policy_only_2x3), board_text(state), "--best-only",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"board": [list(r) for r in state], "age": 8,
                                                   "best": expected, "caveat": caveat}
    assert main(["2048", "play", str(policy_only_2x3), "--policy", "--games", "3000", "--seed",
                 "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    exact = naive_2048(2, 3).solution.expected_score
    assert doc["expected_score"] == pytest.approx(exact, rel=1e-12)
    assert doc["ci95"][0] < exact < doc["ci95"][1]
    assert main(["2048", "play", str(policy_only_2x3), "--games", "3000"]) == 2
    assert "--policy" in capsys.readouterr().err


def test_a_missing_policy_store_names_the_command_that_builds_it(solved, tmp_path, capsys):
    directory = tmp_path / "run"
    shutil.copytree(solved(2, 3), directory)
    assert not (directory / "policy").exists()
    command = f"strongsolve 2048 policy {directory} --rows 2 --cols 3 --p2 0.9 --target-tile 0"
    with pytest.raises(FileNotFoundError, match="has no policy store") as err:
        PolicyStore(Run(directory, 2, 3))
    assert f"`{command}`" in str(err.value)
    assert main(["2048", "query", str(directory), "2 4 . / . . 2", "--best-only"]) == 2
    assert command in capsys.readouterr().err
    # a Snakemake run (its job logs, no recorded command): the workflow target, with its config
    (directory / "solution.json").unlink()
    (directory / "logs").mkdir()
    (directory / "logs" / "forward_000004-000010.log").write_text("")
    with pytest.raises(FileNotFoundError) as err:
        PolicyStore(Run(directory, 2, 3))
    assert f"`snakemake g2048_policy_all --cores all --config results={tmp_path} " in str(err.value)
    assert "g2048={rows: 2, cols: 3, spawn: {p2: 0.9," in str(err.value)


def test_a_missing_policy_layer_names_the_policy_command(policy_only_2x3, tmp_path):
    directory = tmp_path / "run"
    shutil.copytree(policy_only_2x3, directory)
    shutil.rmtree(directory / "policy" / "age_000006.zarr")
    run = Solution(directory).run
    with pytest.raises(CorruptLayerError, match="age_000006.zarr is missing") as err:
        PolicyStore(run).expected_score()
    assert (f"`strongsolve 2048 policy {directory} --rows 2 --cols 3 --p2 0.9 --target-tile 0`"
            in str(err.value))


def test_a_store_alone_says_it_cannot_tell_an_unreachable_board_in_the_cli_and_the_lab(
        policy_2x3, policy_only_2x3, capsys):
    """A board no play reaches (2 . 128 / 2 . .: the naive set of the test above lacks it) gets an
    arbitrary legal move from a store without its layers; the CLI and the lab say so, with the
    command that builds the layers, and a run with its layers refuses the board instead."""
    from strongsolve.lab.app import create_app

    odd = ". 2 128 / 2 . ."
    command = (f"strongsolve 2048 solve {policy_only_2x3} --rows 2 --cols 3 --p2 0.9 "
               "--target-tile 0")
    assert main(["2048", "query", str(policy_only_2x3), odd, "--best-only"]) == 0
    move, caveat = capsys.readouterr().out.strip().split("\n")
    assert move in {"left", "right", "up", "down"}
    assert caveat.startswith("caveat: this run holds only the optimal-play store")
    assert "cannot tell whether this board is reachable" in caveat and caveat.endswith(f"`{command}`")
    assert main(["2048", "query", str(policy_2x3.directory), odd, "--best-only"]) == 2
    assert "not in the solved layers" in capsys.readouterr().err
    client = create_app(policy_only_2x3.parent).test_client()
    home = client.get("/").get_data(as_text=True)
    assert '<a href="/2048?run=run">run</a> optimal-play store only: best moves' in home
    reply = client.get(f"/2048?run=run&board={odd}")
    page = html.unescape(reply.get_data(as_text=True))
    assert reply.status_code == 200
    assert f'<b id="best">{move}</b>' in page and f'<p class="error" id="caveat">{caveat}</p>' in page


def test_a_foreign_policy_store_is_named_and_its_repair_removes_all_of_it(policy_2x3, solved,
                                                                          tmp_path, capsys):
    """A 2x3 run's policy/ copied into a 2x4 run: play names a layer of it as another run's and
    prints one command removing the whole store and building this run's; followed literally (a
    shell in the test's folder), it leaves a store every layer of which is the 2x4 run's, and play
    from it then works."""
    run = tmp_path / "run"
    shutil.copytree(solved(2, 4), run)
    shutil.copytree(policy_2x3.directory / "policy", run / "policy")
    assert main(["2048", "play", str(run), "--policy", "--games", "100", "--seed", "1"]) == 2
    err = capsys.readouterr().err
    repair = (f"rm -rf {run}/policy && strongsolve 2048 policy {run} --rows 2 --cols 4 --p2 0.9 "
              "--target-tile 0")
    assert "has cols = 3 but this run needs 4; it belongs to another run" in err, err
    assert f"so the store {run}/policy is not this run's. Remove it and build it again: `{repair}`" in err
    printed = err.split("`")[-2]
    assert printed == repair
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(printed, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    layers = sorted((run / "policy").glob("age_*.zarr"))
    assert len(layers) == len(Run(run, 2, 4).ages())
    assert all((read_attrs(p)["rows"], read_attrs(p)["cols"]) == (2, 4) for p in layers)
    assert main(["2048", "play", str(run), "--policy", "--games", "100", "--seed", "1"]) == 0
