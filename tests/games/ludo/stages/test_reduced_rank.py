"""The reduced rank extrapolation of the value solver's sweeps (stages/acceleration.py,
ReducedRank): one cycle on a linear iteration of two modes lands on its fixed point; on the
three-piece races of bench/data/ludo_small9.yaml and ludo_quarter14.yaml it reaches the values of
plain sweeps run to 1e-15 in fewer sweeps, the same bit for bit on any thread count and across a
resumed checkpoint. The sweep counts are regression values measured with this code (2026-12-07)."""

import functools

import numba
import numpy as np
import pytest

from strongsolve.games.ludo import saved as store
from strongsolve.games.ludo.stages import acceleration
from strongsolve.games.ludo.stages import values as ludo_values
from support.ludo import BENCH_BOARDS, bench_board

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@functools.lru_cache(maxsize=None)
def solved(name, pieces, tol, extrapolation):
    return ludo_values.solve_values(bench_board(name), pieces, tol=tol, extrapolation=extrapolation)


def test_one_cycle_lands_on_the_fixed_point_of_two_modes():
    # x -> A x + b on 2 x 2 "positions" with eigenvalues 0.9 and -0.6: three changes fix both
    rng = np.random.default_rng(1)
    basis = rng.normal(size=(4, 4))
    a = basis @ np.diag([0.9, -0.6, 0.0, 0.0]) @ np.linalg.inv(basis)
    fixed = np.array([0.3, 0.6, 0.5, 0.4])
    b = fixed - a @ fixed
    x = np.full(4, 0.5)
    change = np.zeros((acceleration.HISTORY, 2, 2), np.float32)
    jumper = acceleration.ReducedRank(1e-12)
    coef = None
    for sweeps in range(1, acceleration.FIRST_CYCLE + acceleration.HISTORY + 1):
        reads, dest = jumper.slots_for(sweeps - 1)
        new = a @ x + b
        c = (new - x).astype(np.float32)
        kept = [change[r].reshape(-1).astype(np.float64) for r in reads]
        products = np.array([c.astype(np.float64) @ k for k in kept]
                            + [c.astype(np.float64) @ c.astype(np.float64)])
        change[dest] = c.reshape(2, 2)
        x = new
        value = x.reshape(2, 2).copy()
        coef = jumper.after_sweep(value, change, float(np.abs(c).max()), products, sweeps)
        x = value.reshape(-1)
    assert coef is not None and jumper.jumps == 1 and jumper.can_checkpoint()
    # float32 changes: the jump is exact to their rounding
    before = np.abs(a @ np.full(4, 0.5) + b - fixed).max()
    assert np.abs(x - fixed).max() < 1e-5 * before


def test_the_state_round_trips_and_another_extrapolations_is_refused():
    jumper = acceleration.ReducedRank(1e-12)
    jumper.factor, jumper.jumps, jumper.before_jump = 0.5, 3, 1e-4
    assert acceleration.ReducedRank(1e-12, jumper.state()).state() == jumper.state()
    tail = acceleration.Extrapolation(1e-12).state()
    with pytest.raises(ValueError, match="not a reduced rank one"):
        acceleration.ReducedRank(1e-12, tail)
    with pytest.raises(ValueError, match="extrapolation must be"):
        ludo_values.change_slots("anderson")
    assert [ludo_values.change_slots(e) for e in (False, True, "tail", "rre")] == [0, 2, 1, 2]
    small = bench_board("small9")  # 7,056 positions of 3 pieces: 16 bytes each with the two slots
    assert ludo_values.value_bytes(small, 3, "rre") == 16 * 7056
    with pytest.raises(ValueError, match="16 bytes each: 8 for the value, 8 for its last 2 changes"):
        ludo_values.check_memory(small, 3, 16 * 7056 - 1, extrapolation="rre")


# (board, pieces): sweeps to 1e-12 plain, with the tail extrapolation, with RRE (measured with the
# sweep by blocks of progress from the race without captures, 2026-12-07)
COUNTS = {("small9", 3): (40, 36, 29), ("quarter14", 3): (43, 39, 30)}


@pytest.mark.parametrize("name, pieces", list(COUNTS))
def test_rre_reaches_the_plain_values_in_fewer_sweeps(name, pieces):
    exact = solved(name, pieces, 1e-15, False)
    plain, tail, rre = (solved(name, pieces, 1e-12, e) for e in (False, "tail", "rre"))
    assert (plain.sweeps, tail.sweeps, rre.sweeps) == COUNTS[name, pieces]
    assert rre.jumps > 0 and rre.residual <= 1e-12
    # the stop at 1e-12 leaves an error like plain sweeps' (within 2e-12 here)
    assert np.abs(rre.value - exact.value).max() <= 2e-12
    tight = solved(name, pieces, 1e-13, "rre")
    assert np.abs(tight.value - exact.value).max() <= 1e-12


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_rre_does_not_depend_on_the_thread_count():
    one = solved("quarter14", 3, 1e-13, "rre")
    ludo_values.set_threads(2)
    two = ludo_values.solve_values(bench_board("quarter14"), 3, tol=1e-13, extrapolation="rre")
    assert one.jumps == two.jumps > 0
    assert one.sweeps == two.sweeps and np.array_equal(one.value, two.value)


class Recorder:
    """Checkpoints kept in memory: the sweeps after which the solve saved (saved.Checkpoints'
    methods)."""

    def __init__(self):
        self.states = {}

    def latest(self):
        return None

    def due(self, sweeps):
        return True

    def save(self, value, sweeps, delta, state):
        self.states[sweeps] = state


def test_checkpoints_fall_between_cycles_and_resume_to_the_unbroken_values(tmp_path):
    race = bench_board("small9")
    recorder = Recorder()
    unbroken = ludo_values.solve_values(race, 3, tol=1e-13, extrapolation="rre",
                                        checkpoints=recorder)
    assert np.array_equal(unbroken.value, solved("small9", 3, 1e-13, "rre").value)
    # due after every sweep, saved only where no change is held: the cycles' ends
    saved = sorted(recorder.states)
    assert saved[:3] == [1, 2, 5] and all(s["method"] == "rre" for s in recorder.states.values())
    stop = min(n for n, s in recorder.states.items() if s["jumps"] == 2)
    points = store.Checkpoints(tmp_path, race, 3, every_minutes=None, every_sweeps=stop,
                               log=lambda line: None)
    with pytest.raises(RuntimeError, match="did not reach"):
        ludo_values.solve_values(race, 3, tol=1e-13, max_sweeps=stop, checkpoints=points,
                                 extrapolation="rre")
    resumed = ludo_values.solve_values(race, 3, tol=1e-13, extrapolation="rre",
                                       checkpoints=store.Checkpoints(tmp_path, race, 3,
                                                                     log=lambda line: None))
    assert resumed.resumed_from == stop
    assert (resumed.sweeps, resumed.jumps) == (unbroken.sweeps, unbroken.jumps)
    assert np.array_equal(resumed.value, unbroken.value)
