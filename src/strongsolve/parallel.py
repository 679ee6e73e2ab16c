"""Chunk-level parallelism: threads in this process, or a dask.distributed cluster (the
stumpy pattern of STYLE.md).

Stages split a layer into chunks of equal work and run the same serial numba kernel (``nogil``) on
each chunk: on a pool of threads in this process by default (``concurrent.futures``), or on a
``dask.distributed`` cluster when the caller passes a :class:`distributed.Client` (the library never
creates one itself except in :func:`client_for`, which the command-line layer calls). Results come
back in chunk order, so the output does not depend on the scheduler or the number of workers.

The threads were once dask's threaded scheduler. A stage's calls are flat maps of
independent chunks, for which its task graph (built, ordered and walked per call) is pure cost: 0.25
ms per call of two empty tasks against 0.1 ms for a thread pool's ``map``, while a 3x3 age's tasks
do a few ms of work. Three runs of the whole 3x3 solve each way, one after the other (2026-12-03,
``python bench/workflow_overhead.py --board 3x3 --threads 2``): 13.9-15.7 s through the pool against
15.8-16.7 s through dask, its backward stage 5.8-6.8 s against 7.0-7.6 s. dask's threaded scheduler
runs its tasks on the same kind of pool.
"""

import gc
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor


class _Bound:
    """``fn`` with its shared trailing arguments bound (a callable dask does not look inside)."""

    def __init__(self, fn, shared):
        self.fn, self.shared = fn, shared

    def __call__(self, chunk):
        return self.fn(chunk, *self.shared)


def default_workers():
    """Threads that run the chunks in this process: ``STRONGSOLVE_THREADS``, else the CPUs this
    process may use."""
    env = os.environ.get("STRONGSOLVE_THREADS")
    if env:
        return max(1, int(env))
    return len(os.sched_getaffinity(0))


def worker_count(client=None):
    """Threads that run the chunks: the cluster's (``client``), else :func:`default_workers`."""
    return sum(client.nthreads().values()) if client is not None else default_workers()


def chunk_bounds(n, chunk, workers=1, min_chunk=1):
    """``[(lo, hi), ...]`` covering ``range(n)`` in pieces of at most ``chunk`` (none when n == 0).

    The pieces are of equal size (within one), and their count is a multiple of ``workers`` when
    pieces of at least ``min_chunk`` allow it: a layer of 1.5 chunks on 2 threads is two pieces of
    0.75 chunk, not a chunk and then half of one (summed over the ages of 3x3 2048, the
    afterstates of the backward's busiest thread are 1.01 times an even share, against 1.23 with
    pieces of ``chunk`` and a remainder).

    Parameters
    ----------
    n : int
        Positions to cover.
    chunk : int
        Largest piece (>= 1).
    workers : int
        Threads (or workers) that will run the pieces.
    min_chunk : int
        Smallest piece worth a task of its own.

    Raises
    ------
    ValueError
        If ``chunk`` < 1.
    """
    if chunk < 1:
        raise ValueError(f"chunk size {chunk!r} is not allowed; allowed: an integer >= 1")
    if n <= 0:
        return []
    pieces = -(-n // chunk)
    balanced = -(-pieces // workers) * workers
    pieces = max(pieces, min(balanced, n // max(1, min_chunk)))
    return [(k * n // pieces, (k + 1) * n // pieces) for k in range(pieces)]


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
        Run on this cluster; by default on threads in this process (:func:`default_workers`).
    in_flight : int, optional
        Chunks per batch.
    """
    if in_flight is None:
        in_flight = 2 * worker_count(client)
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
        return list(_thread_pool(default_workers()).map(task, chunks))
    # unique keys (hash=False): a hashed key shared by two calls can be released by one while the
    # other still needs it ("lost dependencies")
    shared_futures = client.scatter(list(shared), broadcast=True, hash=False)
    futures = client.map(fn, chunks, *[[f] * len(chunks) for f in shared_futures], pure=False)
    return client.gather(futures)


_POOLS = {}  # (ident of the calling thread, threads) -> ThreadPoolExecutor
_POOLS_LOCK = threading.Lock()


def _thread_pool(workers):
    """The pool of ``workers`` threads that runs the calling thread's chunks, made on first use.

    One pool per calling thread, as dask's threaded scheduler keeps them: a thread that maps chunks
    while its own chunk runs on a pool (a helper thread's work, a task of a task) gets threads of its
    own instead of waiting for the ones it occupies. The pools of threads that have ended are shut
    down when a new pool is made."""
    key = (threading.get_ident(), workers)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            alive = {thread.ident for thread in threading.enumerate()}
            for gone in [k for k in _POOLS if k[0] not in alive]:
                _POOLS.pop(gone).shutdown(wait=False)
            pool = _POOLS[key] = ThreadPoolExecutor(workers, thread_name_prefix="strongsolve-chunks")
    return pool


ANSWER_SECONDS = 15.0  # client_for answers within this, whatever listens at the address


def _refused(address, timeout):
    """The OSError of a plain TCP connection to a ``tcp://host:port`` address (refused, unreachable,
    no such host), or None if it connects or the address is of another kind. Raises ValueError for
    an address dask cannot use (unknown scheme, no port)."""
    from distributed.comm import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    scheme, location = parse_address(address)
    get_backend(scheme)
    if scheme != "tcp":
        return None
    try:
        socket.create_connection(parse_host_port(location), timeout=timeout).close()
    except OSError as err:
        return err
    return None


def _detached(err):
    """``err`` without its traceback and chained exceptions: they hold the frames of the failed
    ``Client.__init__`` and so keep the half-made Client alive."""
    err.__traceback__ = err.__context__ = err.__cause__ = None
    return err


def client_for(address, answer_seconds=ANSWER_SECONDS):
    """A :class:`distributed.Client` connected to ``address`` (``tcp://host:port``), or None.

    Answers within ``answer_seconds`` whatever listens there. dask's own ``Client`` does not: after
    the TCP connection it waits for the scheduler's handshake with no time limit (a server that says
    nothing hangs it for good), and it reads a non-dask reply's first 8 bytes as a frame length (an
    HTTP server's answer made it allocate 3 EiB). So a refused connection is found first
    by a plain socket, and the ``Client`` is made on a daemon thread waited for at most the rest.

    Raises
    ------
    OSError
        If nothing answers at ``address``, or what answers is not a dask scheduler (too slow, or not
        speaking dask's protocol); the message names the address and the config key.
    """
    if not address:
        return None
    from distributed import Client

    key = "check dask.scheduler_address in the config (the stage's --scheduler-address; null runs " \
          "the chunks on threads in each job)"
    deadline = time.monotonic() + answer_seconds
    try:
        refused = _refused(address, answer_seconds / 2)
    except ValueError as err:  # not an address dask can parse
        raise OSError(f"{address!r} is not a dask scheduler address ({err}); {key}") from err
    if refused is not None:
        raise OSError(f"no dask scheduler answers at {address!r} ({refused}); {key}") from refused
    outcome = {}

    def connect():
        try:
            outcome["client"] = Client(address, timeout=f"{max(1.0, deadline - time.monotonic()) / 2}s")
        except BaseException as err:  # noqa: BLE001 - reported below, on the caller's thread
            outcome["error"] = _detached(err)
        # The half-made Client is garbage in a reference cycle; its __del__ takes distributed's
        # class-wide LoopRunner lock. Left to a later collection, it can run on a thread that holds
        # that lock (a LocalCluster starting) and wait on it for good. Collect it here instead.
        gc.collect()

    worker = threading.Thread(target=connect, name="strongsolve-dask-connect", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if "client" in outcome:
        return outcome["client"]
    err = outcome.get("error")
    if err is None:
        raise OSError(f"{address!r} accepts connections but gave no dask handshake within "
                      f"{answer_seconds:g} s: it is not a dask scheduler (or not a responsive one); "
                      f"{key}")
    if isinstance(err, (OSError, TimeoutError)):
        raise OSError(f"no dask scheduler answers at {address!r} ({err}); {key}") from err
    raise OSError(f"{address!r} answered, but not as a dask scheduler (its reply is not dask's "
                  f"protocol: {type(err).__name__}: {str(err)[:200]}); {key}") from err
