"""strongsolve.parallel: chunk bounds (equal pieces, balanced over the threads) and the worker count."""

import pytest

from strongsolve.parallel import chunk_bounds, worker_count


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
