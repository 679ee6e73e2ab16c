"""Chunk-level parallelism through dask (issue 4; the stumpy pattern of STYLE.md).

Stages split a layer into chunks of equal work and run the same serial numba kernel (``nogil``) on
each chunk: on dask's threaded scheduler by default, or on a ``dask.distributed`` cluster when the
caller passes a :class:`distributed.Client` (the library never creates one itself except in
:func:`client_for`, which the command-line layer calls). Results come back in chunk order, so the
output does not depend on the scheduler or the number of workers.
"""

import os

from dask.threaded import get as get_threaded


class _Bound:
    """``fn`` with its shared trailing arguments bound (a callable dask does not look inside)."""

    def __init__(self, fn, shared):
        self.fn, self.shared = fn, shared

    def __call__(self, chunk):
        return self.fn(chunk, *self.shared)


def default_workers():
    """Threads for the threaded scheduler: ``STRONGSOLVE_THREADS``, else the CPUs this process may use."""
    env = os.environ.get("STRONGSOLVE_THREADS")
    if env:
        return max(1, int(env))
    return len(os.sched_getaffinity(0))


def chunk_bounds(n, chunk):
    """``[(lo, hi), ...]`` covering ``range(n)`` in pieces of at most ``chunk`` (none when n == 0)."""
    if chunk < 1:
        raise ValueError(f"chunk size {chunk!r} is not allowed; allowed: an integer >= 1")
    return [(lo, min(n, lo + chunk)) for lo in range(0, n, chunk)]


def imap_chunks(fn, chunks, *shared, client=None, in_flight=None):
    """Yield ``fn(chunk, *shared)`` for each chunk, in order, computed in parallel a batch at a time.

    At most ``in_flight`` chunks (default: twice the workers) are computed and held at once, so a
    caller that consumes each result before asking for the next keeps memory bounded.

    Parameters
    ----------
    fn : callable
        A module-level function (picklable by reference for distributed workers).
    chunks : list
        Per-task arguments (numpy arrays).
    *shared
        Arguments common to every task (tables, layers); sent once per batch to a cluster's workers.
    client : distributed.Client, optional
        Run on this cluster; by default dask's threaded scheduler in this process.
    in_flight : int, optional
        Chunks per batch.
    """
    if in_flight is None:
        in_flight = 2 * (sum(client.nthreads().values()) if client is not None else default_workers())
    for lo in range(0, len(chunks), max(1, in_flight)):
        yield from _compute(fn, chunks[lo:lo + in_flight], shared, client)


def map_chunks(fn, chunks, *shared, client=None):
    """``[fn(chunk, *shared) for chunk in chunks]``, computed in parallel (see :func:`imap_chunks`).

    Returns
    -------
    list
        Results in the order of ``chunks``.
    """
    return _compute(fn, chunks, shared, client)


def _compute(fn, chunks, shared, client):
    if not chunks:
        return []
    if client is None:
        task = _Bound(fn, shared)
        if len(chunks) == 1:
            return [task(chunks[0])]
        # a raw task graph on dask's threaded scheduler: ~0.5 ms per call, ten times less than
        # dask.delayed + dask.compute, which matters for layers of a few thousand IDs
        graph = {("chunk", k): (task, c) for k, c in enumerate(chunks)}
        return get_threaded(graph, [("chunk", k) for k in range(len(chunks))],
                            num_workers=default_workers())
    # unique keys (hash=False): a hashed key shared by two calls can be released by one while the
    # other still needs it ("lost dependencies")
    shared_futures = client.scatter(list(shared), broadcast=True, hash=False)
    futures = client.map(fn, chunks, *[[f] * len(chunks) for f in shared_futures], pure=False)
    return client.gather(futures)


def client_for(address):
    """A :class:`distributed.Client` connected to ``address`` (``tcp://host:port``), or None.

    Raises
    ------
    OSError
        If no scheduler answers at ``address`` (message names it).
    """
    if not address:
        return None
    from distributed import Client
    try:
        return Client(address, timeout="20s")
    except (OSError, TimeoutError) as err:
        raise OSError(f"no dask scheduler answers at {address!r} ({err}); check dask.scheduler_address "
                      "in the config") from err
