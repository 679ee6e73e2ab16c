"""Shared pytest fixtures: the public cases file and the naive 2048 reference solutions."""

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

# the test files are imported by path (--import-mode=importlib); the references (tests/naive/) and
# the helpers they share (tests/support/) are imported by name from here
sys.path.insert(0, str(Path(__file__).resolve().parent))

from naive import g2048 as naive  # noqa: E402
from strongsolve.games.g2048.stages import pipeline  # noqa: E402

# A copy of the team's public cases file (shared/cases/cases.json), each entry with its "source": a
# user's clone has no shared/ beside it, so the tests carry their own expected values.
CASES_PATH = Path(__file__).resolve().with_name("cases.json")


@pytest.fixture(scope="session")
def cases():
    """The expected values from public sources (tests/cases.json), keyed by case name."""
    with open(CASES_PATH, encoding="utf-8") as handle:
        return json.load(handle)


@dataclass(frozen=True)
class Naive2048:
    """A naive 2048 solve of one board shape with its reachable sets and canonical counts."""

    rows: int
    cols: int
    solution: naive.NaiveSolution
    states: frozenset
    afterstates: frozenset
    counts: dict


@pytest.fixture(scope="session")
def naive_2048():
    """Return a function (rows, cols) -> Naive2048 at p2 = 0.9, each shape computed once."""
    solved = {}

    def get(rows, cols):
        if (rows, cols) not in solved:
            states, afterstates = naive.reachable(rows, cols)
            solved[rows, cols] = Naive2048(
                rows=rows,
                cols=cols,
                solution=naive.solve(rows, cols),
                states=frozenset(states),
                afterstates=frozenset(afterstates),
                counts=naive.count_canonical(states, afterstates),
            )
        return solved[rows, cols]

    return get


@pytest.fixture(scope="session")
def solved(tmp_path_factory):
    """Return a function (rows, cols, target_tile=0) -> run directory of the fast solver
    (``pipeline.solve``), each solved once per test session and shared by the test modules."""
    runs = {}

    def get(rows, cols, target_tile=0):
        key = rows, cols, target_tile
        if key not in runs:
            directory = tmp_path_factory.mktemp(f"use_{rows}x{cols}_{target_tile}") / "run"
            with open(os.devnull, "w") as log:
                pipeline.solve(directory, rows, cols, target_tile=target_tile, log=log)
            runs[key] = directory
        return runs[key]

    return get
