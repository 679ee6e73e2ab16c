"""The whole Snakemake 2048 solve against its kernels alone, side by side in one run.

The target is the 3x3 solve through ``snakemake --cores all`` (warm numba cache) within 1.5x of
the kernels' own wall time, and at most 15 s wall on this 2-core machine. Each repeat measures, one
right after the other:

- **kernels**: bench/run.py's ``forward`` and ``backward`` stages, each in a fresh process with its
  kernels warmed first: every layer enumerated in memory, then backed up from the highest age down
  with the successors' hash indexes; no file, no job, no zarr. Their wall and CPU seconds are added.
- **snakemake**: bench/run.py's ``snakemake`` stage: the real workflow copied to a temporary
  directory, a 2x2 run first (so the JIT cache is warm, not timed), then the board's preset
  (``workflow/presets/2048_<R>x<C>.yaml``: for 3x3 the 2048 part of config.yaml) with
  ``--cores THREADS``; wall and CPU seconds of Snakemake and every job. ``stage_seconds`` are the
  forward and backward stages' own seconds (their block manifests: a job's wall time without its
  imports).

The counts of both must agree (states and afterstates), and the Snakemake run's expected score is
recorded. ``ratio_wall`` = snakemake wall / kernels wall (the issue's 1.5), ``ratio_cpu`` likewise.
The machine is often shared: the load average is recorded before and after each part, and CPU
seconds move much less than wall seconds with the load. With ``--repeat N`` the best (lowest
snakemake wall) repeat is reported as ``best``.

Usage::

    python bench/workflow_overhead.py [--board 3x3] [--threads 2] [--repeat 1] [--workdir DIR]

Prints one JSON document.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402  (bench/run.py: workers, the snakemake stage, the machine record)

TARGET_WALL_S = 15.0
TARGET_RATIO = 1.5


def kernels(rows, cols, threads, workdir):
    """Forward and backward kernels of every age in memory (bench/run.py's stages)."""
    spec = dict(rows=rows, cols=cols, max_age=None, workdir=workdir)
    out = {"load_start": list(os.getloadavg())}
    for stage in ("forward", "backward"):
        rec = bench.worker(stage, threads, **spec)
        out[stage] = {"wall_s": rec["wall_s"], "cpu_s": rec["cpu_s"], "count": rec["count"],
                      "unit": rec["unit"], "peak_rss_bytes": rec["peak_rss_bytes"]}
    out["load_end"] = list(os.getloadavg())
    out["wall_s"] = out["forward"]["wall_s"] + out["backward"]["wall_s"]
    out["cpu_s"] = out["forward"]["cpu_s"] + out["backward"]["cpu_s"]
    return out


def workflow(rows, cols, threads, workdir):
    """The real Snakemake workflow on the board's preset (bench/run.py's snakemake stage)."""
    load = list(os.getloadavg())
    rec = bench.stage_snakemake((rows, cols), None, threads, workdir)
    keep = ("command", "wall_s", "cpu_s", "peak_rss_bytes", "jobs", "stage_seconds", "states",
            "afterstates", "expected_score", "ids_bytes", "values_bytes")
    return dict({k: rec.get(k) for k in keep}, load_start=load, load_end=list(os.getloadavg()))


def repeat(rows, cols, threads, workdir):
    """One side-by-side measurement: kernels, then the workflow; their ratio."""
    k = kernels(rows, cols, threads, workdir)
    s = workflow(rows, cols, threads, workdir)
    if k["forward"]["count"] != s["states"] or k["backward"]["count"] != s["afterstates"]:
        raise RuntimeError(f"counts differ: kernels {k['forward']['count']} states, "
                           f"{k['backward']['count']} afterstates; snakemake {s['states']} states, "
                           f"{s['afterstates']} afterstates")
    return {"kernels": k, "snakemake": s, "ratio_wall": s["wall_s"] / k["wall_s"],
            "ratio_cpu": s["cpu_s"] / k["cpu_s"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="3x3", help="ROWSxCOLS with a preset (default 3x3)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="STRONGSOLVE_THREADS of the kernels and snakemake --cores (default: the CPUs usable)")
    parser.add_argument("--repeat", type=int, default=1, help="side-by-side measurements (default 1)")
    parser.add_argument("--workdir", default=None, help="where the temporary workflow goes (default: the system's)")
    args = parser.parse_args(argv)
    (rows, cols), = bench.parse_boards(args.board)
    for name, value in (("--threads", args.threads), ("--repeat", args.repeat)):
        if value < 1:
            raise SystemExit(f"bench: {name} {value} is not allowed; allowed: an integer >= 1")
    doc = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "machine": bench.machine(),
           "board": bench.fmt((rows, cols)), "threads": args.threads,
           "argv": sys.argv[1:] if argv is None else list(argv), "load_start": list(os.getloadavg()),
           "target": {"snakemake_wall_s": TARGET_WALL_S, "ratio_wall": TARGET_RATIO}, "repeats": []}
    for i in range(args.repeat):
        doc["repeats"].append(repeat(rows, cols, args.threads, args.workdir))
        r = doc["repeats"][-1]
        print(f"bench: repeat {i + 1}: kernels {r['kernels']['wall_s']:.1f} s wall, snakemake "
              f"{r['snakemake']['wall_s']:.1f} s wall, ratio {r['ratio_wall']:.2f}", file=sys.stderr)
    doc["load_end"] = list(os.getloadavg())
    doc["best"] = min(doc["repeats"], key=lambda r: r["snakemake"]["wall_s"])
    json.dump(doc, sys.stdout, indent=1)
    print()
    return doc


if __name__ == "__main__":
    main()
