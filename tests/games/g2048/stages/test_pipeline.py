"""2048 strong solve (forward, backward, report) on 2x2 and 2x3 against the naive expectimax."""

import csv
import json
import os
import random

import numpy as np
import pytest

from naive import g2048 as naive
from strongsolve.games.g2048.stages import pipeline
from strongsolve.games.g2048.advice import Solution

SHAPES = [(2, 2), (2, 3)]
# How many reachable boards per shape to check value by value: all of 2x2, a seeded sample of 2x3.
SAMPLE_SIZE = {(2, 2): 1000, (2, 3): 400}


def close(a, b):
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


@pytest.fixture(scope="module")
def fast_2048(solved):
    """Return a function (rows, cols) -> (solution.json dict, summary rows, Solution)."""
    def get(rows, cols):
        results_dir = solved(rows, cols)
        info = json.loads((results_dir / "solution.json").read_text())
        with open(results_dir / "summary.csv", newline="", encoding="utf-8") as handle:
            summary = list(csv.DictReader(handle))
        return info, summary, Solution(results_dir)

    return get


def test_naive_reference_matches_published_4x3_counts(cases):
    # Checks the reference itself: canonical states per age on 4x3 as published by the authors of
    # the 4x3 solution (shuymst/solving_2048_on_4x3_board, num_found_states.txt).
    published = cases["2048_4x3_states_per_age"]
    counts = naive.canonical_counts(4, 3, max_age=max(published["ages"]))
    assert [counts[a][0] for a in published["ages"]] == published["states"]


@pytest.mark.parametrize("rows, cols", SHAPES)
def test_counts_per_age_match_naive(rows, cols, naive_2048, fast_2048):
    _, summary, _ = fast_2048(rows, cols)
    assert list(summary[0]) == ["age", "states", "afterstates", "terminal_states", "bytes",
                                "bits_per_afterstate"]
    ages = [int(row["age"]) for row in summary]
    assert ages == sorted(set(ages))
    fast_counts = {
        int(row["age"]): (int(row["states"]), int(row["afterstates"]), int(row["terminal_states"]))
        for row in summary
    }
    assert all(int(row["bytes"]) >= 0 for row in summary)
    expected = naive_2048(rows, cols).counts
    for a in sorted(set(fast_counts) | set(expected)):
        assert fast_counts.get(a, (0, 0, 0)) == expected.get(a, (0, 0, 0)), f"age {a}"


@pytest.mark.parametrize("rows, cols", SHAPES)
def test_totals_match_naive(rows, cols, naive_2048, fast_2048):
    info, _, _ = fast_2048(rows, cols)
    counts = naive_2048(rows, cols).counts
    assert (info["rows"], info["cols"]) == (rows, cols)
    assert info["num_states"] == sum(c[0] for c in counts.values())
    assert info["num_afterstates"] == sum(c[1] for c in counts.values())
    assert info["num_terminal_states"] == sum(c[2] for c in counts.values())
    assert info["max_age"] == max(counts)


@pytest.mark.parametrize("rows, cols", SHAPES)
def test_expected_score_matches_naive(rows, cols, naive_2048, fast_2048):
    info, _, _ = fast_2048(rows, cols)
    assert close(info["expected_score"], naive_2048(rows, cols).solution.expected_score)


@pytest.mark.parametrize("rows, cols", SHAPES)
def test_start_states_match_naive(rows, cols, naive_2048, fast_2048):
    info, _, _ = fast_2048(rows, cols)
    solution = naive_2048(rows, cols).solution
    expected = {}
    for board, p in solution.start.items():
        key = naive.board_id(naive.canonical(board))
        expected[key] = expected.get(key, 0.0) + p
    seen = set()
    for entry in info["start_states"]:
        board = tuple(tuple(row) for row in entry["board"])
        key = naive.board_id(naive.canonical(board))
        assert key not in seen
        seen.add(key)
        assert abs(entry["probability"] - expected[key]) < 1e-12
        assert close(entry["value"], solution.state_value(board))
    assert seen == set(expected)


def sample(boards, size):
    """All boards if few, else a seeded sample, in a reproducible order."""
    ordered = sorted(boards, key=naive.board_id)
    return ordered if len(ordered) <= size else random.Random(2048).sample(ordered, size)


@pytest.mark.parametrize("rows, cols", SHAPES)
def test_state_values_match_naive_under_symmetry(rows, cols, naive_2048, fast_2048):
    _, _, fast_solution = fast_2048(rows, cols)
    reference = naive_2048(rows, cols)
    for state in sample(reference.states, SAMPLE_SIZE[rows, cols]):
        expected = reference.solution.state_value(state)
        for image in naive.symmetries(state):
            assert close(reference.solution.state_value(image), expected)
            assert close(fast_solution.state_value(naive.board_id(image)), expected), image


@pytest.mark.parametrize("rows, cols", SHAPES)
def test_afterstate_values_match_naive_under_symmetry(rows, cols, naive_2048, fast_2048):
    _, _, fast_solution = fast_2048(rows, cols)
    reference = naive_2048(rows, cols)
    for after in sample(reference.afterstates, SAMPLE_SIZE[rows, cols]):
        expected = reference.solution.afterstate_value(after)
        for image in naive.symmetries(after):
            assert close(reference.solution.afterstate_value(image), expected)
            assert close(fast_solution.afterstate_value(naive.board_id(image)), expected), image


@pytest.mark.parametrize("p2", [1.0, 0.0])
def test_spawn_of_one_kind_matches_naive(p2, tmp_path):
    # p2 = 1 (only 2s) and p2 = 0 (only 4s) are allowed by the config schema; the spawn that never
    # happens has no states, so the backward pass must not look its successors up.
    with open(os.devnull, "w") as log:
        info = pipeline.solve(tmp_path / "run", 2, 3, p2=p2, log=log)
    states, afterstates = naive.reachable(2, 3, p2)
    counts = naive.count_canonical(states, afterstates)
    assert info["num_states"] == sum(c[0] for c in counts.values())
    assert info["num_afterstates"] == sum(c[1] for c in counts.values())
    assert close(info["expected_score"], naive.solve(2, 3, p2).expected_score)


def test_backup_reports_a_successor_missing_from_the_layers():
    # afterstate layers that do not match (half of age n + 2 lost) are an error naming the cause,
    # not values computed from whatever the hash index holds
    from strongsolve.games.g2048.stages.backward import afterstate_values
    from strongsolve.games.g2048.rules.board import tables
    from strongsolve.games.g2048.stages.forward import forward_layers
    from strongsolve.kernels.hashindex import hash_index

    layers = {layer.age: layer.afterstates for layer in forward_layers(2, 3, None)}
    n = 20
    index2, index4 = (hash_index(layers[m], np.ones(layers[m].size)) for m in (n + 2, n + 4))
    assert np.isfinite(afterstate_values(layers[n], tables(2, 3), 0.9, 0, index2, index4)).all()
    half = layers[n + 2][::2]
    with pytest.raises(RuntimeError, match="missing from the forward layers"):
        afterstate_values(layers[n], tables(2, 3), 0.9, 0, hash_index(half, np.ones(half.size)),
                          index4, chunk=7)
