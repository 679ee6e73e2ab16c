"""store.background.Background: bounded pending I/O, errors re-raised, everything waited for."""

import threading
import time

import numpy as np
import pytest

from strongsolve.store.background import Background, submit_layer_write
from strongsolve.store.layers import SMALL_LAYER_BYTES, read_layer


def test_background_runs_every_task_in_order_and_waits():
    done = []

    def task(k):
        time.sleep(0.01)
        done.append(k)
        return k

    with Background(depth=2) as io:
        futures = [io.submit(task, k) for k in range(6)]
    assert done == list(range(6))
    assert [f.result() for f in futures] == list(range(6))


def test_background_reraises_a_failed_write_on_exit():
    def fail():
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        with Background() as io:
            io.submit(fail)


def test_background_bounds_the_pending_tasks():
    gate = threading.Event()
    with Background(depth=1) as io:
        io.submit(gate.wait)
        t = threading.Timer(0.2, gate.set)
        t.start()
        start = time.perf_counter()
        io.submit(lambda: None)  # blocks until the first task ends
        assert time.perf_counter() - start >= 0.15


def test_small_tasks_wait_only_for_their_own_bound():
    # depth 1 and small_depth 2: three tasks pending at most, of which one large
    gates = [threading.Event() for _ in range(4)]
    with Background(depth=1, workers=4, small_depth=2) as io:
        io.submit(gates[0].wait)           # large
        io.submit_small(gates[1].wait)     # small: does not wait for the large one
        io.submit_small(gates[2].wait)
        t = threading.Timer(0.2, gates[0].set)
        t.start()
        start = time.perf_counter()
        io.submit_small(gates[3].wait)     # the fourth task waits for the oldest (the large one)
        assert time.perf_counter() - start >= 0.15
        for g in gates:
            g.set()


def test_a_large_task_waits_while_another_large_one_is_pending():
    gate = threading.Event()
    with Background(depth=1, workers=2, small_depth=8) as io:
        io.submit(gate.wait)
        t = threading.Timer(0.2, gate.set)
        t.start()
        start = time.perf_counter()
        io.submit(lambda: None)
        assert time.perf_counter() - start >= 0.15


def test_workers_run_tasks_side_by_side():
    # two tasks that each wait for the other to start can only finish on two threads
    started = [threading.Event(), threading.Event()]

    def task(k):
        started[k].set()
        assert started[1 - k].wait(5)
        return k

    with Background(depth=2, workers=2) as io:
        futures = [io.submit(task, k) for k in range(2)]
    assert [f.result() for f in futures] == [0, 1]


def test_a_failed_small_task_is_reraised():
    def fail():
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        with Background(depth=1, workers=2, small_depth=4) as io:
            io.submit_small(fail)


def _coder(arrays, attrs, threads):
    def encode():
        threads.append(threading.current_thread().name)
        return arrays, attrs
    return encode


@pytest.mark.parametrize("size,coded_by", [(1000, "strongsolve-io"),
                                           (SMALL_LAYER_BYTES // 8 + 1, "MainThread")])
def test_submit_layer_write_codes_a_small_layer_on_the_helper_thread(tmp_path, size, coded_by):
    # a small layer is coded on the I/O thread (it overlaps the stage's next age); a large one on
    # the calling thread, before its write is queued (its coding buffers stay out of the next age)
    values = np.arange(size, dtype=np.float64)
    threads = []
    with Background(depth=1, workers=1, small_depth=4) as io:
        submit_layer_write(io, tmp_path / "v.zarr", _coder({"values": values}, {"age": 8}, threads),
                           values.nbytes, zstd_level=3)
    assert len(threads) == 1 and threads[0].startswith(coded_by)
    arrays, attrs = read_layer(tmp_path / "v.zarr", {"age": 8})
    np.testing.assert_array_equal(arrays["values"], values)


def test_submit_layer_write_reraises_the_coders_error(tmp_path):
    def encode():
        raise ValueError("board ID 0x12 at position 3 has tiles summing to 4, not the layer's age 6")

    with pytest.raises(ValueError, match="not the layer's age 6"):
        with Background(depth=1, workers=1, small_depth=4) as io:
            submit_layer_write(io, tmp_path / "a.zarr", encode, 100)
    assert not (tmp_path / "a.zarr").exists()
