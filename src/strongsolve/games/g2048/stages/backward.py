"""Backward pass by decreasing age: the value of every afterstate.

The value of an afterstate of age n is the expectation over spawns of the value of the resulting
state (age n + 2 or n + 4); a state's value is the best, over legal moves, of the reward plus the
value of the resulting afterstate (same age), 0 when terminal. So age n needs the afterstate values
of ages n + 2 and n + 4 only: a sliding window of three afterstate layers (n, n + 2, n + 4), the
two older ones held as hash indexes (:mod:`strongsolve.kernels.hashindex`) that give a successor's
value in one probe. The Bellman backup is the shared kernel
(:func:`strongsolve.kernels.bellman.backup`); this module only builds the 2048 expansion
(:func:`expand.expand_afterstates`) chunk by chunk.

Values are float64: expected future merge score in points (score objective), or the probability of
reaching the target tile (reach-a-tile objective).
"""

import sys
import time

import numpy as np

from ....kernels.bellman import backup
from ....kernels.hashindex import hash_index
from ....parallel import chunk_bounds, default_workers, map_chunks, worker_count
from ....progress import Progress, Task
from ....store.atomic import sync_file_system, write_json_atomic
from ....store.background import IO_WORKERS, SMALL_PENDING, Background, submit_layer_write
from ....store.layers import checksum, remove_stale_temporaries
from ....store.lock import holding_run_lock
from ..rules.board import TileOverflowError
from ..encoding.expand import MISSING_SUCCESSOR, OK, OVERFLOW, expand_afterstates, expand_states
from ..rules.spawn import spawn_probabilities

# afterstates per parallel task: big enough that a task's set-up is negligible, small enough that
# its expansion (48 bytes per candidate, 14 candidates per 4x3 afterstate: 12 MB) stays in the L3
# cache (chunks of 4096 to 32768 ran within the noise of each other)
DEFAULT_CHUNK = 1 << 14
# the smallest task worth its own thread: a dask call costs about 0.2 ms, the backup about 0.4 us
# per afterstate (3x3)
MIN_CHUNK = 1 << 10

# zstd level of the value layers (`python bench/storage.py results/2048_3x3`):
# on 3x3, 4.145 bytes per value against 4.308 at level 1, encoding at 130-165 against 260-270 MB/s
# on one core; byte/bit shuffles and delta filters before zstd made it larger (4.97 to 6.0)
VALUES_ZSTD_LEVEL = 3


def _raise_for(error, what):
    if error == OVERFLOW:
        raise TileOverflowError(f"{what}: a move would make a tile above 32768")
    if error == MISSING_SUCCESSOR:
        raise RuntimeError(f"{what}: a successor afterstate is missing from the forward layers; the "
                           "layers are inconsistent (rebuild the run's afterstates/ directory)")
    assert error == OK


def expansion_bytes(tables):
    """Upper bound of the CSR expansion's bytes per afterstate: two spawns per empty cell (at most
    cells - 1), each an outcome (8 + 8 bytes: probability, pointer; 8 more for the best-move slot)
    with up to 4 candidates of 48 bytes each (reward, successor value, key to look up and its
    candidate, successor index and sign; expand.expand_afterstates)."""
    outcomes = 2 * (tables.cells - 1)
    return outcomes * (24 + 4 * 48) + 16


def _backup_task(chunk, out, p2, kernel_args, target_exp, index2, index4):
    """Values of the afterstates ``chunk = (lo, ids)``: written to ``out[lo:lo + len(ids)]`` (threads
    share ``out``), or returned when ``out`` is None (a dask worker's copy would be lost)."""
    lo, ids = chunk
    rows, cols, line_result, line_reward, sym = kernel_args
    *expansion, next_value, error = expand_afterstates(ids, p2, spawn_probabilities(p2, rows * cols),
                                                       rows, cols, line_result, line_reward, sym,
                                                       target_exp, index2, index4)
    if error != OK:
        return None, error
    values = backup(*expansion, next_value, True, 0.0)[0]
    if out is None:
        return values, OK
    out[lo:lo + ids.size] = values
    return None, OK


def afterstate_values(ids, tables, p2, target_exp, index2, index4, chunk=DEFAULT_CHUNK,
                      memory_limit=None, client=None):
    """Bellman backup of one afterstate layer, chunk by chunk in parallel (dask).

    Parameters
    ----------
    ids : uint64[A]
        Sorted canonical afterstates of age n.
    tables : board.Tables
    p2 : float
        Probability of a 2-spawn.
    target_exp : int
        0 (score) or the exponent of the target tile (reach-a-tile).
    index2, index4 : uint64[S, 2]
        Hash indexes (:func:`strongsolve.kernels.hashindex.hash_index`) of the afterstate layers of
        ages n + 2 and n + 4 with their values.
    chunk : int
        Afterstates per parallel task.
    memory_limit : int, optional
        Bytes for the expansions of the tasks in flight: lowers ``chunk`` so that
        ``workers * chunk * expansion_bytes(tables)`` stays below it.
    client : distributed.Client, optional
        Run the chunks on this dask cluster (default: threads in this process).

    Returns
    -------
    float64[A]
        Identical whatever ``chunk`` and the scheduler: each value is computed by the same
        operations in the same order.

    Raises
    ------
    RuntimeError
        If a successor is missing from its index (inconsistent layers).
    TileOverflowError
        If a move would make a tile above 32768.
    """
    if memory_limit is not None:
        chunk = max(1, min(chunk, memory_limit // (default_workers() * expansion_bytes(tables))))
    bounds = chunk_bounds(ids.size, chunk, worker_count(client), MIN_CHUNK)
    # threads write into one array: no concatenation on the calling thread while they wait
    out = np.empty(ids.size, np.float64) if client is None else None
    results = map_chunks(_backup_task, [(lo, ids[lo:hi]) for lo, hi in bounds], out, p2,
                         tables.kernel_args(), target_exp, index2, index4, client=client)
    for (lo, hi), (_, error) in zip(bounds, results):
        _raise_for(error, f"afterstates {lo}..{hi}")
    if out is not None:
        return out
    return np.concatenate([v for v, _ in results]) if results else np.empty(0, np.float64)


def state_values(states, tables, target_exp, layer_ids, layer_values):
    """Values and best moves of states of one age.

    Parameters
    ----------
    states : uint64[S]
        Board IDs (any, not only canonical) of one age.
    layer_ids, layer_values : layer, float64[A]
        The afterstate layer of that age (sorted uint64 array or Elias-Fano coded) and its values.

    Returns
    -------
    values : float64[S]
        ``max`` over legal moves of reward + afterstate value; 0 when terminal.
    best : int64[S]
        Position of the best move among the state's legal moves in direction order, -1 if terminal.
    """
    rows, cols, line_result, line_reward, sym = tables.kernel_args()
    *expansion, successors, error = expand_states(np.asarray(states, np.uint64), rows, cols,
                                                  line_result, line_reward, sym, target_exp,
                                                  layer_ids)
    _raise_for(error, "state values")
    return backup(*expansion, np.concatenate([layer_values, np.zeros(1)])[successors], True, 0.0)


def value_stats(values):
    """``{"value_min", "value_mean", "value_max"}`` of a value layer (float64[A]; None each when
    empty), stored in its attributes so that plots and ``inspect`` need not read the values."""
    if not values.size:
        return {"value_min": None, "value_mean": None, "value_max": None}
    return {"value_min": float(values.min()), "value_mean": float(values.mean()),
            "value_max": float(values.max())}


def _encoder(run, n, ids, ids_checksum, values, stats):
    """The ``encode`` of :func:`.store.background.submit_layer_write` for the value layer of age
    ``n`` (its attributes name the checksum of the afterstate layer the values belong to)."""
    return lambda: ({"values": values}, dict(run.params(), age=n, num_afterstates=int(ids.size),
                                             afterstates_checksum=ids_checksum, **stats))


def _afterstates_ahead(io, run, kept, n):
    """A future of the sorted afterstate IDs of age ``n`` and their checksum, both made on a helper
    thread (the checksum of a large layer is 0.4 s of BLAKE2b the stage's threads need not wait
    for); the IDs taken from ``kept`` (:class:`.kept.KeptLayers`) when it holds them, else read
    and decoded."""
    ids = kept.pop(n) if kept is not None else None

    def ahead():
        layer_ids = run.load_afterstates(n)[0] if ids is None else ids
        return layer_ids, checksum(layer_ids)

    return io.submit(ahead)


@holding_run_lock("2048 backward")
def run_backward(run, ages, log=sys.stderr, kept=None, **options):
    """Backward stage of one block of consecutive ages: write each age's value layer.

    Ages are processed from the highest down. An age whose value layer is already complete and
    verified is not recomputed (resume after a kill). Writes ``values/block_<first>-<last>.json``.
    Holds the run's writer lock (:mod:`strongsolve.store.lock`) throughout: it waits for a live
    earlier writer.

    Parameters
    ----------
    run : run.Run
    ages : list of int
        Consecutive even ages; the value layers of ``max(ages) + 2`` and ``max(ages) + 4`` must exist
        (or lie beyond the last age).
    log : text stream
        Receives one line per age (afterstates, mean value, computed or kept); the stage's status
        line (age, rate, ETA) goes to :func:`strongsolve.progress.reporter`.
    kept : KeptLayers, optional
        Afterstate IDs the forward stage of this process kept in memory
        (:func:`.pipeline.solve_block`); the ages it holds are not read back from their layers.
    options
        ``chunk``, ``client`` for :func:`afterstate_values`.

    Raises
    ------
    CorruptLayerError
        If an input layer is missing, corrupt, or from another run.
    """
    t0 = time.perf_counter()
    window = {}  # age -> hash index of its afterstates with their values (ages n + 2 and n + 4)
    done_here = {}  # age -> (IDs, values) of a layer of this block, indexed when first needed

    def indexed(n):
        if n not in window:
            if n in done_here:
                ids, values = done_here.pop(n)
            else:
                ids = run.load_afterstates(n)[0]
                values = run.load_values(n, ids)
            window[n] = hash_index(ids, values)
        return window[n]

    done = []
    order = sorted(ages, reverse=True)
    remove_stale_temporaries([run.values_path(n) for n in order])
    # the next age's IDs are read and decoded, and values written, meanwhile
    with Background(depth=2, workers=IO_WORKERS, small_depth=SMALL_PENDING) as io, \
            Progress(log) as progress, Task("2048 backward", len(order), "ages") as stage:
        ids_next = _afterstates_ahead(io, run, kept, order[0])
        for i, n in enumerate(order):
            ids, ids_checksum = ids_next.result()
            if i + 1 < len(order):
                ids_next = _afterstates_ahead(io, run, kept, order[i + 1])
            path = run.values_path(n)
            if path.exists():
                values = run.load_values(n, ids)
                stats = value_stats(values)
                status = "verified (kept)"
            else:
                t = time.perf_counter()
                values = afterstate_values(ids, run.tables, run.p2, run.target_exp, indexed(n + 2),
                                           indexed(n + 4), **options)
                stats = value_stats(values)
                submit_layer_write(io, path, _encoder(run, n, ids, ids_checksum, values, stats),
                                   values.nbytes, zstd_level=VALUES_ZSTD_LEVEL)
                status = f"computed in {time.perf_counter() - t:.2f} s"
            window.pop(n + 4, None)  # age n - 2 needs ages n and n + 2 only
            done_here.pop(n + 4, None)
            if i + 1 < len(order):  # no index built for a kept age whose successors are kept too
                done_here[n] = ids, values
            mean = stats["value_mean"]
            done.append({"age": n, "num_afterstates": int(ids.size), "mean_value": mean})
            progress.line(f"backward age {n}: {ids.size} afterstates, mean value {mean}, {status}")
            stage.update(f"age {n}, {ids.size:,} afterstates", done=i + 1)
    sync_file_system(run.directory)  # every layer the manifest lists is on disk
    write_json_atomic(run.manifest_path("values", min(ages), max(ages)),
                      {"stage": "backward", **run.params(), "ages": done,
                       "seconds": round(time.perf_counter() - t0, 3)},
                      keep_if_same_except=("seconds",))  # a late orphan's rerun changes nothing
    return done
