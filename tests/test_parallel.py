"""strongsolve.parallel: chunk bounds (equal pieces, balanced over the threads), the worker count,
and chunks mapped on the threads of this process."""

import threading

import pytest

from strongsolve.parallel import chunk_bounds, map_chunks, worker_count


def sizes(bounds):
    return [hi - lo for lo, hi in bounds]


def covers(bounds, n):
    return [b for lo, hi in bounds for b in range(lo, hi)] == list(range(n))


@pytest.mark.parametrize("n,chunk,workers,min_chunk,expected", [
    (0, 10, 2, 1, []),
    (5, 10, 1, 1, [5]),
    (25, 10, 1, 1, [8, 8, 9]),                # three pieces of at most 10, equal within one
    (15, 10, 2, 1, [7, 8]),                   # 1.5 chunks on 2 threads: two halves, not 10 + 5
    (25, 10, 2, 1, [6, 6, 6, 7]),             # 3 pieces rounded up to 4
    (15, 10, 2, 8, [7, 8]),                   # below min_chunk, but no piece may exceed chunk
    (15, 16, 2, 8, [15]),                     # two pieces of 7 are below min_chunk 8: one piece
    (16, 16, 2, 8, [8, 8]),
    (40, 100, 3, 10, [13, 13, 14]),
    (40, 100, 3, 15, [20, 20]),               # as many pieces as min_chunk allows
    (100, 10, 4, 1, [8, 8, 9] * 4),           # 10 pieces rounded up to 12
])
def test_chunk_bounds(n, chunk, workers, min_chunk, expected):
    bounds = chunk_bounds(n, chunk, workers, min_chunk)
    assert sizes(bounds) == expected
    assert covers(bounds, n)
    assert all(hi - lo <= chunk for lo, hi in bounds)


def test_chunk_bounds_rejects_a_chunk_below_one():
    with pytest.raises(ValueError, match="chunk size 0 is not allowed"):
        chunk_bounds(10, 0)


def test_worker_count_reads_strongsolve_threads(monkeypatch):
    monkeypatch.setenv("STRONGSOLVE_THREADS", "3")
    assert worker_count() == 3

    class Client:
        def nthreads(self):
            return {"tcp://a:1": 2, "tcp://b:1": 4}

    assert worker_count(Client()) == 6


def _scaled(chunk, factor):
    return [chunk * factor, threading.current_thread().name]


def _maps_itself(chunk):
    return map_chunks(_scaled, [chunk, chunk + 1], 10)


def in_thread(fn, seconds=60):
    """``fn()`` on a helper thread, failing after ``seconds`` (a deadlock) instead of hanging."""
    out = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert out, f"not done in {seconds} s"
    return out[0]


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_map_chunks_gives_results_in_chunk_order_from_the_threads(monkeypatch, threads):
    monkeypatch.setenv("STRONGSOLVE_THREADS", threads)
    results = in_thread(lambda: map_chunks(_scaled, list(range(40)), 3))
    assert [value for value, _ in results] == [3 * c for c in range(40)]
    assert {name for _, name in results} <= {f"strongsolve-chunks_{k}" for k in range(int(threads))}


def test_a_chunk_that_maps_chunks_gets_threads_of_its_own(monkeypatch):
    # both threads of the pool run a chunk that maps two chunks and waits for them: on the same
    # two threads they would wait forever
    monkeypatch.setenv("STRONGSOLVE_THREADS", "2")
    results = in_thread(lambda: map_chunks(_maps_itself, list(range(6))))
    assert [[value for value, _ in inner] for inner in results] == [[10 * c, 10 * c + 10] for c in range(6)]


def _fails_on_three(chunk):
    if chunk == 3:
        raise ValueError("chunk 3 is bad")
    return chunk


def test_map_chunks_raises_the_error_of_a_chunk(monkeypatch):
    monkeypatch.setenv("STRONGSOLVE_THREADS", "2")
    with pytest.raises(ValueError, match="^chunk 3 is bad$"):
        map_chunks(_fails_on_three, list(range(8)))
