"""What limits the 2048 stages on many cores: bytes per position against memory bandwidth.

The projection (bench/projection_4x3.py) carries the measured 2-core speed-up to 16 cores by two
models. This script asks what the stages' memory traffic allows, from three measured parts:

1. **Counts on real layers** (exact, deterministic): for a block of ages of an existing 4x3 run
   (default 572-574 of results/2048_4x3), the sizes of every array the stages make, with the
   stages' own kernels and chunking:

   - forward, per age: the spawned IDs (before their union), the states, the moved IDs, the
     moved IDs left after each chunk's hash (the union's input), the afterstates, and the radix
     passes of each union (its varying 8-bit digits, ``kernels.sort``);
   - backward, per age: the spawn outcomes and the candidates of the expansion
     (``expand.expand_afterstates``; each candidate is one hash probe into a successor layer).

2. **A byte model** of those arrays, per state (forward) or afterstate (backward):

   - *streamed*: each array written once and read once (8 bytes an ID); a radix sort reads 8
     bytes per ID for its histograms and then reads and writes 16 bytes per ID per pass (the radix sort's
     LSD sort); the hash of a chunk's moved IDs stays in the caches (its table is sized to the chunk);
     the expansion's buffers (48 bytes a candidate) stay in the L3 by the chunk size
     (backward.DEFAULT_CHUNK); a hash index is built with one random 64-byte line per afterstate
     and read back as below; the coded layer (about 1.1 bytes an afterstate) is left out;
   - *random*: one 64-byte cache line per hash probe into a successor index (24 bytes a key,
     kernels.hashindex): at ages 572-578 an index holds 3.6e7 keys, 0.86 GB, far above any L3.

3. **This machine's memory**, on 1 and 2 threads: streaming bandwidth (a numpy copy of 512 MiB:
   bytes read + written per second) and random cache lines per second (a numba loop summing 8 bytes
   from random 64-byte lines of a 1 GiB table, eight independent streams so that several misses are
   in flight, as the prefetching look-ups of kernels.hashindex keep them).

Demand per core = bytes per position x the stage's measured positions per CPU second on one thread
(the ``per_cpu_s`` of the threads_1 records of a bench/scaling_4x3.py JSON, default
``bench/data/scaling_4x3_572-574_2026-12-02_d9ffba8.json``). The cores a machine can feed =
its bandwidth / demand per core (streamed and random separately; the lower one binds).

Usage::

    python bench/traffic_4x3.py [SOURCE_RUN] [--ages 572-574] [--rows 4 --cols 3] [--scaling JSON]
                                [--skip-machine]

Prints one JSON document.
"""

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench_run  # noqa: E402  (bench/run.py: machine())

from strongsolve.games.g2048.stages.backward import DEFAULT_CHUNK as BACKWARD_CHUNK
from strongsolve.games.g2048.encoding.expand import (expand_afterstates, move_successors,
                                                     spawn_states)
from strongsolve.games.g2048.stages.forward import DEFAULT_CHUNK as FORWARD_CHUNK
from strongsolve.games.g2048.stages.forward import starts_of_age
from strongsolve.games.g2048.saved import Run
from strongsolve.games.g2048.rules.spawn import spawn_probabilities
from strongsolve.kernels.hashindex import hash_index  # noqa: E402
from strongsolve.kernels.options import njit  # noqa: E402
from strongsolve.kernels.sort import distinct, sort_unique  # noqa: E402
from strongsolve.parallel import chunk_bounds  # noqa: E402

DATA = Path(__file__).with_name("data")
SCALING = DATA / "scaling_4x3_572-574_2026-12-02_d9ffba8.json"
LINE = 64          # bytes of a cache line
ID = 8             # bytes of an ID or a value
EXPANSION_BYTES = 48  # per candidate (backward.expansion_bytes), in cache by the chunk size


def radix_passes(ids):
    """Scatter passes of kernels.sort's LSD radix sort of ``ids``: its 8-bit digits that vary."""
    if ids.size == 0:
        return 0
    varying = int(np.bitwise_or.reduce(ids)) ^ int(np.bitwise_and.reduce(ids))
    return sum(1 for p in range(8) if (varying >> (8 * p)) & 255)


def sort_bytes(n, passes):
    """Bytes a radix sort of ``n`` IDs streams: the histogram read, then a read and a write per pass."""
    return n * ID * (1 + 2 * passes)


def forward_counts(run, n, prev2, prev4):
    """The forward's arrays at age ``n`` (the stage's kernels and chunk size; no spilling) and the
    bytes the model streams for them."""
    rows, cols, line_result, line_reward, sym = run.tables.kernel_args()
    spawned = [spawn_states(layer[lo:hi], e, rows, cols, sym)
               for layer, e in ((prev2, 1), (prev4, 2))
               for lo, hi in chunk_bounds(layer.size, FORWARD_CHUNK)]
    spawned.append(starts_of_age(rows, cols, run.p2, n))
    raw = np.concatenate(spawned)
    states = sort_unique(raw)
    moved = kept = 0
    kept_chunks = []
    for lo, hi in chunk_bounds(states.size, FORWARD_CHUNK):
        out, _, _ = move_successors(states[lo:hi], rows, cols, line_result, line_reward, sym, 0)
        moved += out.size
        kept_chunks.append(distinct(out))
        kept += kept_chunks[-1].size
    union = np.concatenate(kept_chunks)
    afterstates = sort_unique(union)
    c = {"age": n, "inputs": int(prev2.size + prev4.size), "spawned": int(raw.size),
         "states": int(states.size), "moved": int(moved), "moved_after_hash": int(kept),
         "afterstates": int(afterstates.size), "state_sort_passes": radix_passes(raw),
         "afterstate_sort_passes": radix_passes(union)}
    c["streamed_bytes"] = int(
        ID * c["inputs"]                                          # read the input layers
        + ID * c["spawned"] + sort_bytes(c["spawned"], c["state_sort_passes"])  # spawn, sort
        + ID * c["states"] * 2                                    # the states written, read by the moves
        + ID * c["moved_after_hash"]                              # the chunks' outputs written
        + sort_bytes(c["moved_after_hash"], c["afterstate_sort_passes"])
        + ID * c["afterstates"] * 2)                              # written, read by the coder
    return c, afterstates


def backward_counts(run, n, ids, index2, index4):
    """The backward's expansion at age ``n`` (the stage's chunk size) and the model's bytes."""
    rows, cols, line_result, line_reward, sym = run.tables.kernel_args()
    probs = spawn_probabilities(run.p2, rows * cols)
    outcomes = candidates = 0
    for lo, hi in chunk_bounds(ids.size, BACKWARD_CHUNK):
        node_ptr, out_prob, out_ptr, cand_reward, *_ = expand_afterstates(
            ids[lo:hi], run.p2, probs, rows, cols, line_result, line_reward, sym, 0, index2, index4)
        outcomes += out_prob.size
        candidates += cand_reward.size
    c = {"age": n, "afterstates": int(ids.size), "outcomes": int(outcomes),
         "candidates": int(candidates)}
    c["streamed_bytes"] = int(ID * ids.size * 3)       # the IDs read, the values written and read
    c["random_lines"] = int(candidates + ids.size)     # a probe per candidate; the index's build
    return c


def count(source, ages, rows=4, cols=3):
    """Counts of both stages over ``ages`` of the ``rows x cols`` run in ``source`` (its layers of
    ages[0] - 4 .. ages[-1] + 4 are read). Raises RuntimeError if the forward's afterstates differ
    from the run's."""
    run = Run(source, rows, cols)
    layers = {a: run.load_afterstates(a)[0] for a in range(ages[0] - 4, ages[-1] + 5, 2)}
    forward = []
    for n in ages:
        c, afterstates = forward_counts(run, n, layers[n - 2], layers[n - 4])
        if not np.array_equal(afterstates, layers[n]):
            raise RuntimeError(f"traffic: the afterstates of age {n} differ from the run's layer")
        forward.append(c)
    backward = []
    for n in ages:
        index2, index4 = (hash_index(layers[m], np.zeros(layers[m].size)) for m in (n + 2, n + 4))
        backward.append(backward_counts(run, n, layers[n], index2, index4))
        del index2, index4
    return forward, backward


@njit
def _random_lines(table, starts, steps):
    """Sum of one uint64 from each of ``steps`` random 64-byte lines, per stream (8 streams)."""
    lines = table.shape[0] // 8
    total = np.uint64(0)
    x = starts.copy()
    for _ in range(steps):
        for s in range(8):
            x[s] = x[s] * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
            total += table[(x[s] >> np.uint64(33)) % np.uint64(lines) * np.uint64(8)]
    return total


def machine_memory(threads):
    """Streaming bytes/s (copy) and random lines/s on ``threads`` threads (numpy and numba release
    the GIL)."""
    src = [np.ones(64 << 20, np.uint64) for _ in range(threads)]        # 512 MiB each
    dst = [np.empty_like(a) for a in src]
    table = np.arange(128 << 20, dtype=np.uint64)                      # 1 GiB
    steps = 2_000_000
    _random_lines(table, np.arange(8, dtype=np.uint64), 10)

    def side_by_side(fn):
        workers = [threading.Thread(target=fn, args=(k,)) for k in range(threads)]
        t = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.perf_counter() - t

    np.copyto(dst[0], src[0])  # the pages touched once
    copy_s = min(side_by_side(lambda k: np.copyto(dst[k], src[k])) for _ in range(3))
    random_s = min(side_by_side(lambda k: _random_lines(table, np.arange(8, dtype=np.uint64) + k * 99, steps))
                   for _ in range(3))
    return {"threads": threads, "stream_bytes_per_s": 2 * src[0].nbytes * threads / copy_s,
            "random_lines_per_s": 8 * steps * threads / random_s}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source", nargs="?", default="results/2048_4x3")
    ap.add_argument("--ages", default="572-574")
    ap.add_argument("--rows", type=int, default=4)
    ap.add_argument("--cols", type=int, default=3)
    ap.add_argument("--scaling", default=str(SCALING))
    ap.add_argument("--skip-machine", action="store_true", help="counts and model only")
    args = ap.parse_args(argv)
    first, last = (int(x) for x in args.ages.split("-"))
    ages = list(range(first, last + 1, 2))
    doc = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "machine": bench_run.machine(),
           "argv": sys.argv[1:] if argv is None else argv, "source": args.source, "ages": ages}
    forward, backward = count(args.source, ages, args.rows, args.cols)
    doc["forward_counts"], doc["backward_counts"] = forward, backward
    states = sum(c["states"] for c in forward)
    afterstates = sum(c["afterstates"] for c in backward)
    model = {"forward": {"unit": "state", "streamed_bytes": sum(c["streamed_bytes"] for c in forward) / states,
                         "random_bytes": 0.0},
             "backward": {"unit": "afterstate",
                          "streamed_bytes": sum(c["streamed_bytes"] for c in backward) / afterstates,
                          "random_bytes": LINE * sum(c["random_lines"] for c in backward) / afterstates,
                          "candidates": sum(c["candidates"] for c in backward) / afterstates}}
    doc["bytes_per_position"] = model
    scaling = json.loads(Path(args.scaling).read_text())
    doc["scaling"] = args.scaling
    for stage, m in model.items():
        rec = next(r for r in scaling["records"] if r["stage"] == stage and r["config"] == "threads_1")
        m["per_cpu_s"] = rec["count"] / rec["cpu_s"]  # the first runs' JSON has no per_cpu_s
        m["stream_demand_per_core"] = m["per_cpu_s"] * m["streamed_bytes"]
        m["random_lines_demand_per_core"] = m["per_cpu_s"] * m["random_bytes"] / LINE
    if not args.skip_machine:
        doc["memory"] = [machine_memory(t) for t in (1, 2)]
        best = doc["memory"][-1]
        for m in model.values():
            m["cores_fed_by_this_machine_stream"] = best["stream_bytes_per_s"] / m["stream_demand_per_core"]
            if m["random_lines_demand_per_core"]:
                m["cores_fed_by_this_machine_random"] = (best["random_lines_per_s"]
                                                         / m["random_lines_demand_per_core"])
    json.dump(doc, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
