"""Forward pass by age: enumerate every reachable state and afterstate.

``states(n)`` = start states of age n, plus spawns of a 2 into ``afterstates(n-2)``, plus spawns of a 4
into ``afterstates(n-4)``; ``afterstates(n)`` = canonical results of every legal move of
``states(n)``. Each layer is sorted and unique. A state with no legal move is terminal (counted).
Counts are canonical (after symmetry) and include terminal states.

The pass stops after two consecutive empty afterstate layers: once the afterstate
layers of ages ``n - 2`` and ``n - 4`` are empty and no start state is as old as ``n``, no state of
age ``n`` or later can be made (:func:`nothing_made_at`). The remaining ages of the job list get
empty layers, written without computing anything: every later stage (the backward pass, the
report's summary.csv and solution.json, inspect, play) reads each age of the job list from its
layer, so they all agree with no special case, and :attr:`run.Run.last_age` bounds the job list
before the solve (a reach-a-tile run by its target), so only a few such layers are written (4x4
reach 16: its last states are of age 96, and ages 98 to 124 get 14 empty layers).
"""

import shutil
import sys
import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ....kernels.external import SortedRuns
from ....kernels.sort import distinct
from ....parallel import chunk_bounds, imap_chunks
from ....progress import Progress, Task
from ....store.atomic import sync_file_system, write_json_atomic
from ....store.background import IO_WORKERS, SMALL_PENDING, Background, submit_layer_write
from ....store.layers import remove_stale_temporaries
from ....store.lock import holding_run_lock
from ..rules.board import TileOverflowError, age, start_states
from ..encoding.expand import OVERFLOW, move_successors, spawn_states
from ..saved import Run, encode_afterstates


# layer positions per parallel task: ~10 ms of work; a chunk's moves lose more repeats in its hash
# set than with 16384 (4x3 age 200 with a 256 MiB memory_limit: 288 -> 243 ns per state)
DEFAULT_CHUNK = 1 << 16


@dataclass
class ForwardLayer:
    """One age of the forward pass.

    Attributes
    ----------
    age : int
        Sum of the tiles (points).
    num_states, num_terminal : int
        Canonical states of this age, and those with no legal move.
    afterstates : uint64[A]
        Sorted unique canonical afterstate IDs.
    """

    age: int
    num_states: int
    num_terminal: int
    afterstates: np.ndarray


def starts_of_age(rows, cols, p2, n):
    """Canonical start states of age ``n`` that the random start can produce (uint64[...])."""
    return _starts_by_age(rows, cols, p2).get(n, np.empty(0, np.uint64))


@lru_cache(maxsize=8)
def _starts_by_age(rows, cols, p2):
    ids, probs = start_states(rows, cols, p2)
    ages = np.array([age(s) for s in ids])
    return {int(n): ids[(ages == n) & (probs > 0)] for n in np.unique(ages)}


def nothing_made_at(n, rows, cols, p2, prev2, prev4):
    """True when no state of age ``n``, nor of any later age, can be made.

    States of age ``n`` are the start states of that age and the spawns into the afterstate layers
    ``prev2`` (age ``n - 2``) and ``prev4`` (age ``n - 4``). When both are empty and no start state
    is as old as ``n``, the layer of age ``n`` is empty, so are the inputs of age ``n + 2``, and so
    on: the forward pass can stop.
    """
    return prev2.size == 0 and prev4.size == 0 and n > max(_starts_by_age(rows, cols, p2))


def _spawn_task(chunk, exponent, kernel_args):
    # unsorted: the spawns of a chunk hardly repeat (1.57 IDs per state on 4x3, 1.48 distinct), so
    # they are sorted once, by SortedRuns
    rows, cols, _, _, sym = kernel_args
    return spawn_states(chunk, exponent, rows, cols, sym)


def _move_task(states, kernel_args, target_exp):
    # the moves of a chunk repeat (3.57 IDs per state on 4x3, 1.93 distinct): drop the repeats by
    # hashing, in cache, before the one sort
    moved, terminal, error = move_successors(states, *kernel_args, target_exp)
    return distinct(moved), int(terminal), int(error)


def expand_layer(n, tables, p2, target_exp, prev2, prev4, chunk=DEFAULT_CHUNK, memory_limit=None,
                 spill_dir=None, client=None):
    """Compute the layer of age ``n`` from the afterstate layers of ages ``n - 2`` and ``n - 4``.

    The spawns and then the moves are computed chunk by chunk (``chunk`` source positions per task,
    in parallel through dask); a chunk's moved IDs lose their repeats by hashing; the chunks are
    sorted and deduplicated together, and with a ``memory_limit`` spilled to ``spill_dir`` as sorted
    runs and k-way merged (:class:`strongsolve.kernels.external.SortedRuns`). The result does not depend on ``chunk``,
    ``memory_limit`` or the scheduler.

    Parameters
    ----------
    n : int
        The age (points).
    tables : board.Tables
    p2 : float
        Probability of a 2-spawn: a 2 (or a 4) with probability 0 is never spawned.
    target_exp : int
        0 for the score objective, else the exponent of the target tile (a move reaching it ends).
    prev2, prev4 : uint64[...]
        Sorted afterstate layers of ages ``n - 2`` and ``n - 4`` (empty arrays when none).
    chunk : int
        Layer positions per parallel task, at most (:func:`strongsolve.parallel.chunk_bounds`).
    memory_limit : int, optional
        Bytes of sorted runs held in memory before spilling (None: no limit).
    spill_dir : Path, optional
        Directory for spilled runs (required with ``memory_limit``).
    client : distributed.Client, optional
        Run the chunks on this dask cluster (default: threads in this process).

    Returns
    -------
    ForwardLayer
        Empty, computed from nothing, when :func:`nothing_made_at` says so.

    Raises
    ------
    TileOverflowError
        If a move would make a tile above 2^15 (a 4x4 board beyond the 4-bit cap).
    """
    if nothing_made_at(n, tables.rows, tables.cols, p2, prev2, prev4):
        return ForwardLayer(n, 0, 0, np.empty(0, np.uint64))
    args = tables.kernel_args()
    num_states = terminal = 0
    with SortedRuns(memory_limit, spill_dir) as states, SortedRuns(memory_limit, spill_dir) as after:
        for layer, exponent, used in ((prev2, 1, p2 > 0.0), (prev4, 2, p2 < 1.0)):
            if used:
                chunks = [layer[lo:hi] for lo, hi in chunk_bounds(layer.size, chunk)]
                for run in imap_chunks(_spawn_task, chunks, exponent, args, client=client):
                    states.add(run)
        states.add(starts_of_age(tables.rows, tables.cols, p2, n))
        for block in states.merged():
            num_states += block.size
            chunks = [block[lo:hi] for lo, hi in chunk_bounds(block.size, chunk)]
            for run, term, error in imap_chunks(_move_task, chunks, args, target_exp, client=client):
                if error == OVERFLOW:
                    raise TileOverflowError(
                        f"at age {n} a move of a {tables.rows}x{tables.cols} board would make a tile "
                        "above 32768, which does not fit in 4 bits; cap the ages with max_age")
                terminal += term
                after.add(run)
        afterstates = after.union()
    return ForwardLayer(n, int(num_states), int(terminal), afterstates)


def forward_layers(rows, cols, max_age, p2=0.9, target_tile=0, **options):
    """Enumerate the layers in memory, age by age (for benchmarks and small boards).

    ``options`` go to :func:`expand_layer` (``chunk``, ``memory_limit``, ``spill_dir``, ``client``).

    Yields
    ------
    ForwardLayer
        For ages 4, 6, ..., ``max_age``.
    """
    run = Run(".", rows, cols, p2, target_tile)
    window = {}
    empty = np.empty(0, np.uint64)
    for n in run.ages(max_age):
        layer = expand_layer(n, run.tables, p2, run.target_exp, window.get(n - 2, empty),
                             window.get(n - 4, empty), **options)
        window = {a: v for a, v in window.items() if a > n - 4}
        window[n] = layer.afterstates
        yield layer


def _submit_write(io, run, n, ids, num_states, num_terminal):
    """Code and write the afterstate layer of age ``n`` through ``io``
    (:func:`strongsolve.store.background.submit_layer_write`: a small layer is coded on the helper
    thread); returns its counts (the block manifest's row)."""
    counts = dict(age=n, num_states=int(num_states), num_terminal=int(num_terminal),
                  num_afterstates=int(ids.size))

    def encode():
        _, arrays, code_attrs = encode_afterstates(ids, run.rows, run.cols, n)
        return arrays, dict(run.params(), **counts, **code_attrs)

    submit_layer_write(io, run.afterstate_path(n), encode, ids.nbytes)
    return counts


@holding_run_lock("2048 forward")
def run_forward(run, ages, log=sys.stderr, keep=None, **options):
    """Forward stage of one block of consecutive ages: write each age's afterstate layer.

    An age whose layer is already complete and verified is not recomputed (resume after a kill).
    Writes ``afterstates/block_<first>-<last>.json`` last, listing the block's counts. Holds the run's
    writer lock (:mod:`strongsolve.store.lock`) throughout: it waits for a live earlier writer.

    Parameters
    ----------
    run : run.Run
    ages : list of int
        Consecutive even ages, increasing; the layers of ``ages[0] - 2`` and ``ages[0] - 4`` must exist.
    log : text stream
        Receives one line per age (states, terminal states, afterstates, computed or kept); the
        stage's status line (age, rate, ETA) goes to :func:`strongsolve.progress.reporter`.
    keep : KeptLayers, optional
        Receives each age's afterstate IDs while its byte budget lasts, for a backward stage in
        the same process (:func:`.pipeline.solve_block`), which then need not read them back.
    options
        ``chunk``, ``memory_limit``, ``client`` for :func:`expand_layer` (spills go to
        ``<run>/.spill/age_<n>``, removed when the age is done or rerun).

    Raises
    ------
    CorruptLayerError
        If a layer needed as input is missing or corrupt.
    """
    t0 = time.perf_counter()
    window = {}

    def layer_ids(n):
        if n < 4:
            return np.empty(0, np.uint64)
        if n not in window:
            window[n] = run.load_afterstates(n)[0]
        return window[n]

    rows_out = []
    remove_stale_temporaries([run.afterstate_path(n) for n in ages])
    # a layer write overlaps the next ages (one large coded layer held, or several small ones)
    with Background(depth=1, workers=IO_WORKERS, small_depth=SMALL_PENDING) as io, \
            Progress(log) as progress, Task("2048 forward", len(ages), "ages") as stage:
        for i, n in enumerate(ages):
            path = run.afterstate_path(n)
            if path.exists():
                ids, attrs = run.load_afterstates(n)  # verify, then keep as input of the next ages
                window[n] = ids
                status = "verified (kept)"
            elif nothing_made_at(n, run.rows, run.cols, run.p2, layer_ids(n - 2), layer_ids(n - 4)):
                window[n] = np.empty(0, np.uint64)
                attrs = _submit_write(io, run, n, window[n], num_states=0, num_terminal=0)
                status = "empty: the two previous afterstate layers are empty (stopped)"
            else:
                t = time.perf_counter()
                spill_dir = run.directory / ".spill" / f"age_{n:06d}"
                shutil.rmtree(spill_dir, ignore_errors=True)  # runs a killed job left for this age
                layer = expand_layer(n, run.tables, run.p2, run.target_exp, layer_ids(n - 2),
                                     layer_ids(n - 4), spill_dir=spill_dir, **options)
                shutil.rmtree(spill_dir, ignore_errors=True)
                window[n] = layer.afterstates
                attrs = _submit_write(io, run, n, window[n], num_states=layer.num_states,
                                      num_terminal=layer.num_terminal)
                status = f"computed in {time.perf_counter() - t:.2f} s"
            if keep is not None:
                keep.add(n, window[n])
            for old in [a for a in window if a < n - 4]:
                del window[old]
            rows_out.append({k: attrs[k] for k in ("age", "num_states", "num_terminal",
                                                   "num_afterstates")})
            progress.line(f"forward age {n}: {attrs['num_states']} states, {attrs['num_terminal']} "
                          f"terminal, {attrs['num_afterstates']} afterstates, {status}")
            stage.update(f"age {n}, {attrs['num_states']:,} states", done=i + 1)
    sync_file_system(run.directory)  # every layer the manifest lists is on disk
    write_json_atomic(run.manifest_path("afterstates", ages[0], ages[-1]),
                      {"stage": "forward", **run.params(), "ages": rows_out,
                       "seconds": round(time.perf_counter() - t0, 3)},
                      keep_if_same_except=("seconds",))  # a late orphan's rerun changes nothing
    return rows_out
