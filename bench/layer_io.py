"""The file work of a solved 2048 run, done alone: every layer read, decoded, encoded and written.

What a workflow run spends outside the kernels on its layers, part by part, in wall and CPU seconds
(``getrusage``: every thread of this process, zarr's event loop and the I/O threads included):

- ``read_afterstates``: every afterstate layer read and decoded to sorted IDs (``Run.load_afterstates``:
  zarr read, checksum, Elias-Fano and compact-ID decoding), as the backward stage does;
- ``read_values``: every value layer read and checked against its IDs (``Run.load_values``);
- ``read_attrs``: the verified attributes of every afterstate and value layer (report, plots);
- ``encode_afterstates``: every layer's IDs coded (Elias-Fano over compact IDs), as the forward does;
- ``write_afterstates`` and ``write_values``: the coded IDs and the values written again as layers
  (``write_layer``: atomic, checksummed, fsynced) into a temporary directory, through the stages'
  ``Background`` with their I/O threads (``--io-workers``).

Usage::

    python bench/layer_io.py RUN_DIR --rows 3 --cols 3 [--io-workers 4] [--workdir DIR]

Prints one JSON document.
"""

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from strongsolve.games.g2048.saved import Run, encode_afterstates
from strongsolve.store.background import IO_WORKERS, SMALL_PENDING, Background
from strongsolve.store.layers import is_small, read_attrs, write_layer


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(parts, name, fn):
    """Run ``fn()``, record its wall and CPU seconds under ``name``; return its result."""
    wall, cpu = time.perf_counter(), _cpu()
    result = fn()
    parts[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": _cpu() - cpu}
    print(f"bench: {name}: {parts[name]['wall_s']:.2f} s wall, {parts[name]['cpu_s']:.2f} s CPU", file=sys.stderr)
    return result


def write_all(directory, layers, workers):
    """Write ``layers`` (age -> (arrays, zstd level)) as the stages do: small ones several at a time."""
    with Background(depth=1, workers=workers, small_depth=SMALL_PENDING) as io:
        for n, (arrays, level) in layers.items():
            submit = io.submit_small if is_small(arrays) else io.submit
            submit(write_layer, directory / f"age_{n:06d}.zarr", arrays, {"age": n}, zstd_level=level)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a solved run directory, e.g. results/2048_3x3")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--cols", type=int, required=True)
    parser.add_argument("--p2", type=float, default=0.9)
    parser.add_argument("--io-workers", type=int, default=IO_WORKERS,
                        help=f"I/O threads of the writes (default {IO_WORKERS}, the stages')")
    parser.add_argument("--workdir", default=None, help="where the layers are written again (default: the system's)")
    args = parser.parse_args(argv)
    run = Run(args.run_dir, args.rows, args.cols, args.p2, 0)
    ages = [n for n in run.ages(None) if run.afterstate_path(n).is_dir()]
    if not ages:
        raise SystemExit(f"bench: {args.run_dir} has no afterstate layers; give a run directory, e.g. results/2048_3x3")
    parts = {}
    ids = timed(parts, "read_afterstates", lambda: {n: run.load_afterstates(n)[0] for n in ages})
    values = timed(parts, "read_values", lambda: {n: run.load_values(n, ids[n]) for n in ages})
    timed(parts, "read_attrs", lambda: [(read_attrs(run.afterstate_path(n)), read_attrs(run.values_path(n)))
                                        for n in ages])
    coded = timed(parts, "encode_afterstates", lambda: {n: encode_afterstates(ids[n], args.rows, args.cols, n)[1]
                                                        for n in ages})
    out = Path(tempfile.mkdtemp(prefix="layer-io-", dir=args.workdir))
    try:
        timed(parts, "write_afterstates", lambda: write_all(out / "afterstates", {n: (coded[n], 1) for n in ages},
                                                            args.io_workers))
        timed(parts, "write_values", lambda: write_all(out / "values", {n: ({"values": values[n]}, 3) for n in ages},
                                                       args.io_workers))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    doc = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "run_dir": str(args.run_dir),
           "layers_per_stage": len(ages), "afterstates": int(sum(a.size for a in ids.values())),
           "io_workers": args.io_workers, "load_average": list(os.getloadavg()), "parts": parts,
           "per_layer_ms": {k: {"wall": 1000 * v["wall_s"] / len(ages), "cpu": 1000 * v["cpu_s"] / len(ages)}
                            for k, v in parts.items()}}
    json.dump(doc, sys.stdout, indent=1)
    print()
    return doc


if __name__ == "__main__":
    main()
