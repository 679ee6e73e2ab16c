"""store.background.Background: bounded pending I/O, errors re-raised, everything waited for."""

import threading
import time

import pytest

from strongsolve.store.background import Background


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
