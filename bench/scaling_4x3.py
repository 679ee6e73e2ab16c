"""Scaling of the 2048 stages on one machine: 1 thread, 2 threads, 2 dask.distributed workers.

For a block of ages of an existing forward run (default ages 572-574 of results/2048_4x3, about
60 million states per age), each configuration runs the real stage command
(``strongsolve 2048 forward|backward RUN --ages A-B``) in its own subprocess, in a fresh run
directory holding copies of only the input layers it needs:

- ``core_1``     ``STRONGSOLVE_THREADS=1`` and the process pinned to one CPU
  (``os.sched_setaffinity``): one core does all the stage's work
- ``threads_1``  ``STRONGSOLVE_THREADS=1`` (one thread computes; the process's I/O thread, which
  decodes, codes and checksums the layers, runs beside it on another core when there is one)
- ``threads_2``  ``STRONGSOLVE_THREADS=2``
- ``workers_2``  ``--scheduler-address`` of a ``distributed.LocalCluster`` this script starts: 2 worker
  processes of 1 thread each.

Before any timing a 2x2 solve loads the numba kernels (through the cluster if there is one), so that
no timed stage compiles.

Forward: inputs are the afterstate layers of ages ``A - 4`` and ``A - 2``; every layer produced must
decode to exactly the source run's IDs (and its counts equal the source's summary.csv).
Backward: a **throughput measurement on synthetic successor values**, as bench/run.py does for small
ages: the real afterstate layers of ages ``A .. B + 4`` are copied and the value layers of ``B + 2``
and ``B + 4`` are written as zeros; every configuration must produce the same values bit for bit.

Wall seconds are the stage subprocess's; CPU seconds add the stage subprocess (``os.wait4``), the
distributed workers (``time.process_time`` in each worker, before and after) and this process (the
scheduler runs in it). Rates are per wall second (``per_wall_s``) and per CPU second (``per_cpu_s``:
on shared cores the CPU seconds move much less with the other work than the wall seconds do); the
speed-up is threads_1's wall / the config's (``speedup``). ``speedup_cores`` is the speed-up over one core:
core_1's wall / the config's when core_1 was measured, else threads_1's CPU seconds / the config's wall
(the work one core would do). A projection that counts the work in CPU seconds of one thread, as
bench/projection_4x3.py does, must divide by this one: threads_1 already keeps more than one core
busy (its I/O thread), so its wall is below the work it does. For the same reason a speed-up over
threads_1 has a ceiling below 2: ``speedup_limit`` (configs of 2 cores) is what 2 cores would give
over threads_1 if both were busy all the time doing one core's work, 2 x threads_1's wall / one
core's time. Each stage subprocess pays its start-up (imports,
loading the numba cache) in every configuration; ``computed_s``, ``per_computed_s`` and
``speedup_computed`` leave it out (the sum of the stage log's per-age seconds). Each record carries
the 1-minute load average before and after it, and its block's largest layer (``largest_layer``:
states for the forward, afterstates for the backward).

Several blocks (``--ages 100-102,300-302``) give rates by layer size in one run; ``--configs
threads_1`` measures one thread only (no cluster is started unless ``workers_2`` is asked for).
``--repeats N`` runs the configs of a stage N times, interleaved, in the order A B C, then C B A,
then A B C... so that a drift of the host's speed during the run weighs on every config alike; each
record carries its ``repeat`` (0, 1...), and the speed-ups and one core's time are taken from the
medians of a config's records.

Usage::

    python bench/scaling_4x3.py [SOURCE_RUN] [--ages 572-574[,A-B...]] [--stages forward,backward]
                                [--configs core_1,threads_1,threads_2,workers_2] [--workdir DIR]
                                [--memory-limit BYTES] [--repeats N] [--record bench/RECORD.md]
"""

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench_run  # noqa: E402  (bench/run.py: machine(), run_child(), child_env())

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("core_1", "threads_1", "threads_2", "workers_2")
STAGES = ("forward", "backward")
TARGET_SPEEDUP = 1.8


def open_run(directory):
    """The :class:`Run` of ``directory``, with the parameters stored in its first afterstate layer."""
    from strongsolve.games.g2048.saved import Run
    from strongsolve.store.layers import read_attrs
    first = next(iter(sorted((Path(directory) / "afterstates").glob("age_*.zarr"))), None)
    if first is None:
        raise SystemExit(f"scaling: {directory} holds no afterstates/age_*.zarr layer; give the run "
                         "directory of a forward run, e.g. results/2048_4x3")
    a = read_attrs(first)
    return Run(directory, a["rows"], a["cols"], a["p2"], a["target_tile"])


def copy_layers(source, dest, ages):
    """Copy the afterstate layers of ``ages`` from run ``source`` into a new run directory ``dest``."""
    (dest / "afterstates").mkdir(parents=True)
    for n in ages:
        path = source.afterstate_path(n)
        if not path.exists():
            raise SystemExit(f"scaling: input layer {path} is missing; run the forward stage of "
                             f"{source.directory} to age {n} first")
        shutil.copytree(path, dest / "afterstates" / path.name)


def write_zero_values(run, ages):
    """Synthetic successor values: a value layer of zeros for each of ``ages``, as run_backward writes."""
    from strongsolve.games.g2048.stages.backward import VALUES_ZSTD_LEVEL, value_stats
    from strongsolve.store.layers import checksum, write_layer
    for n in ages:
        ids = run.load_afterstates(n)[0]
        values = np.zeros(ids.size)
        write_layer(run.values_path(n), {"values": values},
                    dict(run.params(), age=n, num_afterstates=int(ids.size), afterstates_checksum=checksum(ids),
                         **value_stats(values)), zstd_level=VALUES_ZSTD_LEVEL)


def stage_argv(run, stage, ages, address, memory_limit):
    argv = [sys.executable, "-m", "strongsolve", "2048", stage, str(run.directory), "--rows", str(run.rows),
            "--cols", str(run.cols), "--p2", repr(run.p2), "--target-tile", str(run.target_tile),
            "--ages", f"{ages[0]}-{ages[-1]}"]
    if address:
        argv += ["--scheduler-address", address]
    if memory_limit:
        argv += ["--memory-limit", str(memory_limit)]
    return argv


def measure(source, stage, ages, config, client, workdir, memory_limit):
    """Run one stage of ``ages`` in a fresh copy of its inputs; return its record and its run."""
    from strongsolve.games.g2048.saved import Run
    directory = Path(tempfile.mkdtemp(prefix=f"{stage}-{config}-", dir=workdir)) / "run"
    run = Run(directory, source.rows, source.cols, source.p2, source.target_tile)
    if stage == "forward":
        copy_layers(source, directory, [n for n in (ages[0] - 4, ages[0] - 2) if n >= 4])
    else:
        above = [ages[-1] + 2, ages[-1] + 4]
        copy_layers(source, directory, ages + [n for n in above if n <= source.last_age])
        write_zero_values(run, [n for n in above if n <= source.last_age])
    threads = 1 if config in ("core_1", "threads_1") else 2
    cpus = {min(os.sched_getaffinity(0))} if config == "core_1" else None
    address = client.scheduler.address if config == "workers_2" else None
    workers_cpu = client.run(time.process_time) if client is not None and address else {}
    own_cpu = time.process_time()
    code, out, err, wall, cpu, rss = bench_run.run_child(stage_argv(run, stage, ages, address, memory_limit),
                                                        env=bench_run.child_env(threads), cpus=cpus)
    if code != 0:
        raise RuntimeError(f"scaling: {stage} {config} failed (exit {code}):\n{err[-3000:]}")
    worker_cpu = sum(client.run(time.process_time)[w] - c for w, c in workers_cpu.items()) if workers_cpu else 0.0
    rec = {"stage": stage, "config": config, "ages": ages, "threads": threads,
           "cpus": sorted(cpus if cpus is not None else os.sched_getaffinity(0)), "wall_s": wall,
           "cpu_s": cpu + worker_cpu + (time.process_time() - own_cpu if address else 0.0),
           "stage_process_cpu_s": cpu, "workers_cpu_s": worker_cpu, "stage_peak_rss_bytes": rss,
           # the per-age lines are on stdout (the status line on stderr)
           "log": [line for line in (out + "\n" + err).splitlines() if line.startswith(f"{stage} age ")]}
    # the stage's own seconds per age (its log: "computed in X s"), without the process start-up
    rec["computed_s"] = sum(float(line.rsplit("computed in ", 1)[1].split()[0]) for line in rec["log"]
                            if "computed in " in line)
    return rec, run


def check_forward(source, run, ages, summary):
    """Per-age counts and ID checksums of ``run``'s new layers; raises if any differs from ``source``."""
    from strongsolve.store.layers import checksum
    manifest = json.loads(run.manifest_path("afterstates", ages[0], ages[-1]).read_text())
    out = []
    for row in manifest["ages"]:
        n = row["age"]
        mine, ref = run.load_afterstates(n)[0], source.load_afterstates(n)[0]
        want = summary[n]
        got = (row["num_states"], row["num_terminal"], row["num_afterstates"])
        if got != (want["states"], want["terminal_states"], want["afterstates"]) or not np.array_equal(mine, ref):
            raise RuntimeError(f"scaling: forward age {n} in {run.directory} differs from {source.directory} "
                               f"(counts {got} against {want})")
        out.append({"age": n, "states": got[0], "terminal": got[1], "afterstates": got[2],
                    "checksum": checksum(mine)})
    return out


def check_backward(run, ages):
    """Per-age afterstate counts and value checksums of ``run``'s value layers."""
    from strongsolve.store.layers import checksum
    out = []
    for n in ages:
        ids = run.load_afterstates(n)[0]
        out.append({"age": n, "afterstates": int(ids.size), "checksum": checksum(run.load_values(n, ids))})
    return out


def warm_kernels(workdir, client=None):
    """Load the numba kernels (a 2x2 solve; through the cluster's workers if ``client``), outside the timing."""
    directory = Path(tempfile.mkdtemp(prefix="warm-", dir=workdir)) / "run"
    argv = [sys.executable, "-m", "strongsolve", "2048", "solve", str(directory), "--rows", "2", "--cols", "2"]
    if client is not None:
        argv += ["--scheduler-address", client.scheduler.address]
    code, _, err, *_ = bench_run.run_child(argv, env=bench_run.child_env(2))
    if code != 0:
        raise RuntimeError(f"scaling: warm-up 2x2 solve {argv} failed (exit {code}):\n{err[-3000:]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default=str(REPO / "results" / "2048_4x3"),
                        help="a forward run directory (read only; default results/2048_4x3)")
    parser.add_argument("--ages", default="572-574",
                        help="comma-separated blocks of even ages FIRST-LAST (default 572-574)")
    parser.add_argument("--stages", default="forward,backward", help="comma-separated: forward, backward")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated: " + ", ".join(CONFIGS))
    parser.add_argument("--workdir", default=None, help="where the temporary runs go (default: the system's)")
    parser.add_argument("--memory-limit", type=int, default=None,
                        help="the stages' --memory-limit in bytes (default: none, all in memory)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each config per stage and block, interleaved (default 1)")
    parser.add_argument("--record", default=None, help="append a dated row per block to this markdown file")
    args = parser.parse_args(argv)
    from strongsolve.commands.g2048 import _ages
    from strongsolve.games.g2048.stages.report import read_summary
    blocks = [_ages(text) for text in args.ages.split(",") if text]
    stages = [s for s in args.stages.split(",") if s]
    if any(s not in STAGES for s in stages):
        raise SystemExit(f"scaling: --stages {args.stages!r} is not allowed; allowed: forward, backward")
    configs = [c for c in args.configs.split(",") if c]
    if not configs or any(c not in CONFIGS for c in configs):
        raise SystemExit(f"scaling: --configs {args.configs!r} is not allowed; allowed: {', '.join(CONFIGS)}")
    if args.repeats < 1:
        raise SystemExit(f"scaling: --repeats {args.repeats} is not allowed; allowed: 1 or more")
    source = open_run(args.source)
    if not (source.directory / "summary.csv").exists():
        raise SystemExit(f"scaling: {source.directory}/summary.csv is missing (the workflow writes it when its "
                         "forward jobs are done); finish the forward run first, e.g. snakemake --cores all "
                         "--configfile workflow/presets/2048_4x3.yaml --config max_age=578")
    summary = {r["age"]: r for r in read_summary(source.directory)}
    missing = [n for ages in blocks for n in ages if n not in summary]
    if missing:
        raise SystemExit(f"scaling: age {missing[0]} is not in {source.directory}/summary.csv; choose --ages "
                         f"within {min(summary)}-{max(summary)}")
    doc = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "machine": bench_run.machine(),
           "load_start": list(os.getloadavg()), "source": str(source.directory),
           "ages": blocks[0] if len(blocks) == 1 else blocks, "board": f"{source.rows}x{source.cols}",
           "memory_limit": args.memory_limit, "repeats": args.repeats, "records": []}
    workdir = tempfile.mkdtemp(prefix="scaling-", dir=args.workdir)
    try:
        with contextlib.ExitStack() as stack:
            client = None
            if "workers_2" in configs:
                from distributed import Client, LocalCluster
                cluster = stack.enter_context(LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                           dashboard_address=None))
                client = stack.enter_context(Client(cluster))
            warm_kernels(workdir, client)
            for ages in blocks:
                for stage in stages:
                    doc["records"] += measure_block(source, stage, ages, configs, client, workdir,
                                                    args.memory_limit, summary, args.repeats)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    doc["load_end"] = list(os.getloadavg())
    doc["target_speedup"] = TARGET_SPEEDUP
    json.dump(doc, sys.stdout, indent=1)
    print()
    if args.record:
        append_record(Path(args.record), doc, argv if argv is not None else sys.argv[1:])
    return doc


def measure_block(source, stage, ages, configs, client, workdir, memory_limit, summary, repeats=1):
    """Every config of ``configs`` on one stage of one block of ages, ``repeats`` times interleaved
    (module docstring); their records, checked alike."""
    records, checked = [], None
    for repeat in range(repeats):
        for config in configs if repeat % 2 == 0 else configs[::-1]:
            records.append(measure_checked(source, stage, ages, config, client, workdir, memory_limit,
                                           summary, checked))
            records[-1]["repeat"] = repeat
            checked = records[-1]["per_age"]
    ones = [r for r in records if r["config"] == "threads_1"]
    base = one_core_seconds(records)
    for r in records:
        if ones:
            r["speedup"] = float(np.median([f["wall_s"] for f in ones])) / r["wall_s"]
            r["speedup_computed"] = float(np.median([f["computed_s"] for f in ones])) / r["computed_s"]
        if base is not None:
            r["speedup_cores"] = base / r["wall_s"]
        if ones and base is not None and r["threads"] > 1:
            r["speedup_limit"] = speedup_limit(r["threads"], ones, base)
    return records


def speedup_limit(cores, ones, base):
    """The largest speed-up over threads_1 that ``cores`` cores can give: all of them busy all the
    time, doing no more work than one core does (``base``, :func:`one_core_seconds`), so a wall of
    ``base / cores``, against the median wall of the threads_1 records ``ones``. threads_1's I/O
    thread already runs on a second core, so this is below ``cores`` by that thread's share."""
    return cores * float(np.median([r["wall_s"] for r in ones])) / base


def measure_checked(source, stage, ages, config, client, workdir, memory_limit, summary, checked):
    """One config's record of one stage and block; raises if its layers differ from ``checked``
    (the per-age checksums of an earlier config, or None)."""
    load_before = os.getloadavg()[0]
    rec, run = measure(source, stage, ages, config, client, workdir, memory_limit)
    rec["load_1min"] = [load_before, os.getloadavg()[0]]
    rec["per_age"] = (check_forward(source, run, ages, summary) if stage == "forward"
                      else check_backward(run, ages))
    if checked is not None and rec["per_age"] != checked:
        raise RuntimeError(f"scaling: {stage} ages {ages[0]}-{ages[-1]} {config} produced other layers "
                           f"than the configs before it: {rec['per_age']} against {checked}")
    unit = "states" if stage == "forward" else "afterstates"
    rec["count"], rec["unit"] = sum(r[unit] for r in rec["per_age"]), unit
    rec["largest_layer"] = max(r[unit] for r in rec["per_age"])
    rec["per_wall_s"] = rec["count"] / rec["wall_s"]
    rec["per_cpu_s"] = rec["count"] / rec["cpu_s"]
    rec["per_computed_s"] = rec["count"] / rec["computed_s"] if rec["computed_s"] else None
    rec["cores_busy"] = rec["cpu_s"] / rec["wall_s"]
    shutil.rmtree(run.directory.parent)
    print(f"scaling: {stage} ages {ages[0]}-{ages[-1]} {config} {rec['wall_s']:.1f} s wall, "
          f"{rec['cpu_s']:.1f} CPU s", file=sys.stderr)
    return rec


def one_core_seconds(records):
    """One core's time for a block, from the records of one stage and block of ages: the median
    wall of its core_1 records, else the median CPU seconds of its threads_1 records (their I/O
    thread's work on the second core included; module docstring), else None."""
    cores = [r["wall_s"] for r in records if r["config"] == "core_1"]
    ones = [r["cpu_s"] for r in records if r["config"] == "threads_1"]
    return float(np.median(cores)) if cores else float(np.median(ones)) if ones else None


def append_record(path, doc, argv):
    """One dated table row per block of ages (the RECORD.md format: what | command | result) at the end of ``path``."""
    blocks = doc["ages"] if isinstance(doc["ages"][0], list) else [doc["ages"]]
    rows = []
    for ages in blocks:
        cells = []
        for r in (r for r in doc["records"] if r["ages"] == ages):
            speedup = (f", x{r['speedup']:.2f} (ages alone {r['computed_s']:.1f} s, x{r['speedup_computed']:.2f})"
                       if "speedup" in r else f" (ages alone {r['computed_s']:.1f} s)")
            if "speedup_cores" in r:
                speedup += f", x{r['speedup_cores']:.2f} over one core"
            if "speedup_limit" in r:
                speedup += f", at most x{r['speedup_limit']:.2f} over 1 thread with {r['threads']} cores fully busy"
            run_number = f" #{r['repeat'] + 1}" if doc.get("repeats", 1) > 1 else ""
            cells.append(f"{r['stage']} {r['config']}{run_number}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} CPU s, "
                         f"{r['per_wall_s']:.3g} {r['unit']}/s wall, {r['per_cpu_s']:.3g}/CPU s, largest layer "
                         f"{r['largest_layer']:,}, load {r['load_1min'][0]:.2f}-{r['load_1min'][1]:.2f}{speedup}")
        rows.append(f"| {doc['date']}: {doc['board']} scaling, ages {ages[0]}-{ages[-1]} of {doc['source']} (commit "
                    f"{doc['machine']['git_commit']}{'+' if doc['machine']['git_dirty'] else ''}; load "
                    f"{doc['load_start'][0]:.2f}-{doc['load_end'][0]:.2f}; backward on synthetic successor values) "
                    f"| `python bench/scaling_4x3.py {' '.join(argv)}` | {'; '.join(cells)}; every config's layers "
                    f"identical (forward: the source's IDs and counts) |\n")
    with open(path, "a") as f:
        f.write("".join(rows))


if __name__ == "__main__":
    main()
