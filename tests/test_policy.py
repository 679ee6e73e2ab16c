"""Optimal-play store (issue 18, item 3): a binary fuse retrieval of each state's best move.

Expected moves: the naive expectimax (tests/naive.py) on every reachable 2x3 state, and the full
solution's values (:func:`backward.state_values` on the solved layers, itself checked against the
naive solver) on every 2x4 state. A chosen move is right when its reward plus its afterstate's
value is the state's value.
"""

import json
import os
import shutil

import numpy as np
import pytest

import naive
from strongsolve.cli import main
from strongsolve.games.g2048 import pipeline
from strongsolve.games.g2048.backward import state_values
from strongsolve.games.g2048.board import canonicalize, encode
from strongsolve.games.g2048.play import _apply_moves, play
from strongsolve.games.g2048.policy import (
    PolicyStore,
    build_fuse,
    fuse_layout,
    fuse_retrieve,
    policy_path,
    run_policy,
    states_of_age,
)
from strongsolve.games.g2048.run import Run
from strongsolve.games.g2048.solution import Solution
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
