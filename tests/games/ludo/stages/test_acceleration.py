"""The extrapolation of the value solver's sweeps (stages/acceleration.py): its jump rule on given
largest changes, and on small boards with the classic board's features (bench/data/ludo_small9.yaml,
ludo_quarter14.yaml, ludo_half30.yaml) the values it reaches against plain sweeps, on any thread
count and across a resumed checkpoint; the sweep counts are regression values measured with this
code. Both kinds of sweeps against naive.ludo_race_reference (plain-Python Jacobi over ordered
tuples), on boards where the extrapolation jumps: test_values.py."""

import functools

import numpy as np
import pytest

from strongsolve.games.ludo import saved as store
from strongsolve.games.ludo.stages import acceleration
from strongsolve.games.ludo.stages import values as ludo_values
from support.ludo import BENCH_BOARDS, bench_board

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@functools.lru_cache(maxsize=None)
def solved(name, pieces, extrapolation):
    return ludo_values.solve_values(bench_board(name), pieces, tol=1e-13, extrapolation=extrapolation)


def test_a_jump_needs_three_agreeing_ratios_below_the_limit():
    value = np.array([[0.5, 0.25], [0.999, 0.0]])
    change = np.array([[0.01, -0.02], [0.01, 0.0]], np.float32)
    jumper = acceleration.Extrapolation(1e-12)
    # ratios 0.5, 0.5, 0.504: agree within 1%
    for delta in (0.8, 0.4, 0.2):
        assert jumper.after_sweep(value, change, delta) is None
    k = jumper.after_sweep(value, change, 0.1008)
    r = 0.1008 / 0.2
    assert k == r / (1 - r)
    c = change.astype(np.float64)
    assert np.array_equal(value, [[0.5 + k * c[0, 0], 0.25 + k * c[0, 1]], [1.0, 0.0]])  # clipped
    assert jumper.jumps == 1 and jumper.before_jump == 0.1008
    # the sweep after the jump is checked and starts the history again
    assert jumper.after_sweep(value, change, 0.05) is None
    assert jumper.factor == 1.0 and jumper.changes == [0.05]
    # ratios 0.5, 0.5, 0.51: 2% apart, no jump
    for delta in (0.025, 0.0125, 0.006375):
        assert jumper.after_sweep(value, change, delta) is None
    assert jumper.jumps == 1


def test_a_jump_that_raises_the_change_halves_the_later_ones():
    value = np.zeros((1, 1))
    change = np.zeros((1, 1), np.float32)
    jumper = acceleration.Extrapolation(1e-12)
    for delta in (0.8, 0.4, 0.2, 0.1):
        jumper.after_sweep(value, change, delta)
    assert jumper.jumps == 1
    jumper.after_sweep(value, change, 0.2)  # worse than the 0.1 before the jump
    assert jumper.factor == 0.5
    for delta in (0.1, 0.05, 0.025):
        jumper.after_sweep(value, change, delta)
    assert jumper.jumps == 2 and jumper.after_sweep(value, change, 0.03) is None
    assert jumper.factor == 0.25
    # a state saved and read back decides the same
    again = acceleration.Extrapolation(1e-12, jumper.state())
    assert again.state() == jumper.state()
    with pytest.raises(ValueError, match="lacks 'factor'"):
        acceleration.Extrapolation(1e-12, {"changes": [], "jumps": 0, "before_jump": None})


def test_no_jump_at_a_slow_ratio_or_near_the_tolerance():
    value = np.zeros((1, 1))
    change = np.zeros((1, 1), np.float32)
    slow = acceleration.Extrapolation(1e-12)
    for delta in (1.0, 0.98, 0.98 ** 2, 0.98 ** 3):  # r = 0.98 >= MAX_RATIO
        slow.after_sweep(value, change, delta)
    assert slow.jumps == 0
    near = acceleration.Extrapolation(1e-12)
    for delta in (8e-10, 4e-10, 2e-10, 0.99e-10):  # the last below 100 tol
        near.after_sweep(value, change, delta)
    assert near.jumps == 0


# (board, pieces): sweeps to 1e-13 plain and with the tail extrapolation, its jumps (measured with
# the sweep by blocks of progress from the race without captures, 2026-12-07)
COUNTS = {
    ("small9", 2): (35, 35, 3),
    ("small9", 3): (43, 36, 2),
    ("quarter14", 2): (36, 36, 3),
    ("quarter14", 3): (46, 43, 1),
    ("half30", 2): (32, 32, 0),
}


@pytest.mark.parametrize("name, pieces", list(COUNTS))
def test_extrapolated_and_plain_sweeps_reach_the_same_values(name, pieces):
    plain, jumped = solved(name, pieces, False), solved(name, pieces, "tail")
    assert np.abs(plain.value - jumped.value).max() <= 1e-12
    assert (plain.sweeps, jumped.sweeps, jumped.jumps) == COUNTS[name, pieces]
    assert plain.jumps == 0 and jumped.residual <= 1e-13 and plain.residual <= 1e-13


def test_the_jumps_do_not_depend_on_the_thread_count():
    one = solved("quarter14", 3, "tail")
    ludo_values.set_threads(2)
    two = ludo_values.solve_values(bench_board("quarter14"), 3, tol=1e-13, extrapolation="tail")
    assert one.jumps == two.jumps > 0
    assert one.sweeps == two.sweeps and np.array_equal(one.value, two.value)


class Recorder:
    """Checkpoints kept in memory: the state after each sweep (saved.Checkpoints' methods)."""

    def __init__(self):
        self.states = {}

    def latest(self):
        return None

    def due(self, sweeps):
        return True

    def save(self, value, sweeps, delta, state):
        self.states[sweeps] = state


@pytest.mark.parametrize("after", [0, 1], ids=["at_the_jump", "after_it"])
def test_a_checkpoint_at_a_jump_resumes_to_the_unbroken_values(tmp_path, after):
    race = bench_board("small9")
    recorder = Recorder()
    unbroken = ludo_values.solve_values(race, 3, tol=1e-13, checkpoints=recorder,
                                        extrapolation="tail")
    first = min(n for n, s in recorder.states.items() if s["jumps"] == 1)
    stop = first + after
    assert (recorder.states[stop]["before_jump"] is not None) == (after == 0)
    points = store.Checkpoints(tmp_path, race, 3, every_minutes=None, every_sweeps=stop,
                               log=lambda line: None)
    with pytest.raises(RuntimeError, match="did not reach"):
        ludo_values.solve_values(race, 3, tol=1e-13, max_sweeps=stop, checkpoints=points,
                                 extrapolation="tail")
    resumed = ludo_values.solve_values(race, 3, tol=1e-13, extrapolation="tail",
                                       checkpoints=store.Checkpoints(tmp_path, race, 3,
                                                                     log=lambda line: None))
    assert resumed.resumed_from == stop
    assert (resumed.sweeps, resumed.jumps) == (unbroken.sweeps, unbroken.jumps)
    assert np.array_equal(resumed.value, unbroken.value)
    assert unbroken.value is not solved("small9", 3, "tail").value
    assert np.array_equal(unbroken.value, solved("small9", 3, "tail").value)


def test_the_command_switches_the_extrapolation_off(tmp_path, capsys):
    import json

    from strongsolve.cli import main

    path = BENCH_BOARDS / "ludo_small9.yaml"
    runs = {}
    for extra in ([], ["--no-extrapolation"]):
        assert main(["ludo", "race", str(path), "--pieces", "3", "--solver", "values",
                     "--tol", "1e-13", "--threads", "1", "--json", *extra]) == 0
        runs[bool(extra)] = json.loads(capsys.readouterr().out)
    # the default is the reduced rank extrapolation (test_reduced_rank.py)
    rre = solved("small9", 3, "rre")
    assert (runs[False]["extrapolation"], runs[False]["jumps"], runs[False]["sweeps"]) == \
        (True, rre.jumps, rre.sweeps) == (True, 8, 28)
    assert (runs[True]["extrapolation"], runs[True]["jumps"], runs[True]["sweeps"]) == \
        (False, 0, COUNTS["small9", 3][0])
    assert runs[True]["win_probability"] == solved("small9", 3, False).win_probability
    assert runs[False]["win_probability"] == rre.win_probability
