"""Benchmark the 2048 solver: throughput per stage and board, memory, JIT, and a 4x3 projection.

Every measured stage runs in its own subprocess, so its peak RSS (``ru_maxrss`` of
that child, from ``os.wait4``) and its CPU seconds are its own. Inside a child the numba kernels are
warmed on a tiny board first, so the timed part holds no compilation; the JIT is measured on its own
(stage ``jit``: first vs second call in a process with an empty ``NUMBA_CACHE_DIR``). The machine is
often shared: rates per core use CPU seconds (``time.process_time``, every thread of the process),
which the other load affects far less than wall seconds; the load average is recorded at the start
and the end.

Stages (``--stages``, comma-separated; default all):

- ``forward``   ``forward.forward_layers`` in memory: ages, states, afterstates; states/s.
- ``backward``  ``backward.afterstate_values`` on every layer from the highest age down, looking the
  successors up in hash indexes of the two layers above, built once per layer as ``run_backward``
  does (their building is timed too); afterstates/s.
  Boards solved to their last age use the real successor values. A board capped by ``--max-age-4x3``
  cannot be solved exactly (values need every later age), so it is a **throughput measurement**:
  the layers of ages ``<= max_age`` are backed up from synthetic successor values (zeros) for the
  two layers above (ages ``max_age + 2`` and ``max_age + 4``, enumerated by the forward pass).
- ``numpy``     bench/numpy_baseline.py (plain vectorised numpy) on the same forward workload, checked
  to give the same per-age counts; the numba/numpy throughput ratio.
- ``jit``       compile seconds of the forward and backward kernels (empty cache), and the seconds a
  fresh process pays to load them from a warm cache (what each Snakemake job pays).
- ``pipeline``  ``pipeline.solve`` with files (zarr layers): wall, CPU, bytes on disk per afterstate.
- ``snakemake`` the real workflow (``snakemake --cores THREADS``) in a temporary copy of the
  workflow, after one warm-up run on 2x2: wall seconds of the whole solve (target: 3x3 <= 60 s).

Then a projection of the full 4x3 solve on a 16-core, 128 GiB workstation (see :func:`projection`).

Usage::

    python bench/run.py [--json] [--boards 2x3,3x3,4x3] [--max-age-4x3 200] [--threads N]
                        [--stages forward,backward,numpy,jit,pipeline,snakemake]
"""

import argparse
import json
import math
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STAGES = ("forward", "backward", "numpy", "jit", "pipeline", "snakemake")
GIB = 1 << 30

# Published 4x3 totals and largest layer (cases.json "2048_4x3_states_per_age": Kaneko & Yamashita
# 2025, "Strongly Solving 2048 4x3", and the authors' num_found_states.txt).
TOTAL_STATES_4X3 = 1_152_817_492_752
TOTAL_AFTERSTATES_4X3 = 739_648_886_170
LARGEST_LAYER_4X3 = {"age": 9568, "states": 3.0e8}
LAST_AGE_4X3 = 2 ** 14 - 4
WORKSTATION = {"cores": 16, "memory_bytes": 128 * GIB}


# ---------------------------------------------------------------------------------------------
# machine and process measurements

def machine():
    """CPU model, cores, memory, load average, versions, and the commit of the code measured."""
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    import numba
    import numpy
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or None
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                                capture_output=True, text=True).stdout.strip())
    return {"cpu_model": model, "logical_cpus": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)), "memory_bytes": mem,
            "platform": platform.platform(), "python": platform.python_version(),
            "numpy": numpy.__version__, "numba": numba.__version__,
            "git_commit": commit, "git_dirty": dirty}


def rss_bytes(field="VmRSS"):
    """Resident set size of this process now (``VmRSS``) or at its peak (``VmHWM``), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def run_child(argv, env=None, cwd=None, cpus=None):
    """Run a subprocess; return (exit code, stdout, stderr, wall s, CPU s, peak RSS bytes).

    CPU seconds and peak RSS come from ``os.wait4``: that child and its reaped descendants only.
    ``cpus`` (a set of CPU numbers) pins the child and all its threads to those CPUs
    (``os.sched_setaffinity``).
    """
    pin = None if cpus is None else (lambda: os.sched_setaffinity(0, cpus))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd, preexec_fn=pin)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read(), err.read(), wall, usage.ru_utime + usage.ru_stime,
                usage.ru_maxrss * 1024)


def child_env(threads, **extra):
    env = dict(os.environ, STRONGSOLVE_THREADS=str(threads), **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "bench"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def worker(stage, threads, **spec):
    """Run one stage in a fresh Python process (``run.py --worker``) and return its record."""
    env = child_env(threads, **spec.pop("env", {}))
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(dict(spec, stage=stage))]
    code, out, err, wall, cpu, rss = run_child(argv, env=env)
    if code != 0:
        raise RuntimeError(f"bench worker {stage} {spec} failed (exit {code}):\n{err[-3000:]}")
    doc = json.loads(out.strip().splitlines()[-1])
    # the kernel's ru_maxrss can lag the high-water mark the child read from /proc just before exiting
    doc.update(process_wall_s=wall, process_cpu_s=cpu, peak_rss_bytes=max(rss, doc["self_peak_rss_bytes"]),
               threads=threads)
    return doc


# ---------------------------------------------------------------------------------------------
# the workers (inside a child process)

def _warm():
    """Load or compile every kernel the stages use, on 2x2, so the timed part holds no JIT."""
    from strongsolve.games.g2048.rules.board import tables
    from strongsolve.games.g2048.stages.forward import forward_layers
    layers = {L.age: L.afterstates for L in forward_layers(2, 2, None)}
    _backward(layers, {}, tables(2, 2), max(layers))


def _backward(layers, values, t, first, rec=None, memory_limit=None):
    """Back up the layers of ages ``first``, ``first - 2``, ..., 4 into ``values`` (age -> float64
    array; it holds the successor values of ages ``first + 2`` and ``first + 4`` if they exist),
    looking successors up in hash indexes built once per layer, as run_backward does. Appends each
    age's ages, afterstates, wall_s and cpu_s to ``rec`` if given."""
    import numpy as np
    from strongsolve.games.g2048.stages.backward import afterstate_values
    from strongsolve.kernels.hashindex import hash_index

    def indexed(n):
        ids = layers.get(n, np.empty(0, np.uint64))
        return hash_index(ids, values.get(n, np.zeros(ids.size)))

    index = {n: indexed(n) for n in (first + 2, first + 4)}
    for n in range(first, 3, -2):
        w, c = time.perf_counter(), time.process_time()
        values[n] = afterstate_values(layers[n], t, 0.9, 0, index[n + 2], index[n + 4],
                                      memory_limit=memory_limit)
        del index[n + 4]
        values.pop(n + 4, None)
        index[n] = indexed(n)
        if rec is not None:
            for key, value in (("ages", n), ("afterstates", int(layers[n].size)),
                               ("wall_s", round(time.perf_counter() - w, 4)),
                               ("cpu_s", round(time.process_time() - c, 4))):
                rec[key].append(value)
    return values


def window_bytes(ages, afterstates):
    """The largest three-layer window of a run, in bytes (its layers held raw in memory).

    Forward, age n: the IDs (8 B) of the afterstate layers n - 4, n - 2 and n. Backward, age n: the
    IDs and values (8 + 8 B) of n and the hash indexes (kernels/hashindex.py: 24 B per afterstate)
    of n + 2 and n + 4. Returns (forward, backward).
    """
    size = dict(zip(ages, afterstates))
    fwd = max((8 * (size.get(n - 4, 0) + size.get(n - 2, 0) + size[n]) for n in ages), default=0)
    bwd = max((8 * (2 * size[n] + 3 * (size.get(n + 2, 0) + size.get(n + 4, 0))) for n in ages), default=0)
    return fwd, bwd


def work_forward(rows, cols, max_age, memory_limit=None, workdir=None):
    from strongsolve.games.g2048.stages.forward import forward_layers
    _warm()
    base = rss_bytes()
    spill = tempfile.TemporaryDirectory(prefix="spill-", dir=workdir) if memory_limit else None
    options = {"memory_limit": memory_limit, "spill_dir": spill.name} if spill else {}
    rec = {"ages": [], "states": [], "terminal": [], "afterstates": [], "wall_s": [], "cpu_s": []}
    wall0, cpu0 = time.perf_counter(), time.process_time()
    wall, cpu = wall0, cpu0
    for layer in forward_layers(rows, cols, max_age, **options):
        w, c = time.perf_counter(), time.process_time()
        for key, value in (("ages", layer.age), ("states", layer.num_states),
                           ("terminal", layer.num_terminal), ("afterstates", int(layer.afterstates.size)),
                           ("wall_s", round(w - wall, 4)), ("cpu_s", round(c - cpu, 4))):
            rec[key].append(value)
        wall, cpu = w, c
    if spill:
        spill.cleanup()
    return {"per_age": rec, "wall_s": wall - wall0, "cpu_s": cpu - cpu0, "base_rss_bytes": base,
            "count": sum(rec["states"]), "unit": "states",
            "window_bytes": window_bytes(rec["ages"], rec["afterstates"])[0]}


def work_backward(rows, cols, max_age, memory_limit=None, workdir=None):
    """Back up every layer of ages <= max_age (see the module docstring for the synthetic case)."""
    import numpy as np
    from strongsolve.games.g2048.rules.board import tables
    from strongsolve.games.g2048.rules.shape import last_age
    from strongsolve.games.g2048.stages.forward import forward_layers
    _warm()
    last = last_age(rows, cols)
    synthetic = max_age is not None and max_age < last
    top = min(max_age + 4, last) if synthetic else last
    wall0 = time.perf_counter()
    layers = {L.age: L.afterstates for L in forward_layers(rows, cols, top)}
    forward_wall = time.perf_counter() - wall0
    base = rss_bytes()
    values = {n: np.zeros(layers[n].size) for n in layers if synthetic and n > max_age}
    rec = {"ages": [], "afterstates": [], "wall_s": [], "cpu_s": []}
    wall0, cpu0 = time.perf_counter(), time.process_time()
    _backward(layers, values, tables(rows, cols), max_age if synthetic else last, rec, memory_limit)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    for key in rec:
        rec[key].reverse()
    # every forward layer stays in memory here (base_rss_bytes): the window check is the pipeline's
    return {"per_age": rec, "wall_s": wall, "cpu_s": cpu, "base_rss_bytes": base,
            "count": sum(rec["afterstates"]), "unit": "afterstates", "synthetic_successors": synthetic,
            "forward_setup_wall_s": forward_wall}


def work_numpy(rows, cols, max_age, memory_limit=None, workdir=None):
    import numpy_baseline
    base = rss_bytes()
    rec = {"ages": [], "states": [], "terminal": [], "afterstates": []}
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for n, s, term, after in numpy_baseline.forward(rows, cols, max_age):
        for key, value in (("ages", n), ("states", s), ("terminal", term), ("afterstates", int(after.size))):
            rec[key].append(value)
    return {"per_age": rec, "wall_s": time.perf_counter() - wall0, "cpu_s": time.process_time() - cpu0,
            "base_rss_bytes": base, "count": sum(rec["states"]), "unit": "states"}


def work_jit():
    """Seconds of the first and second call of the forward and backward passes on 2x2 (and the
    import), in a process whose ``NUMBA_CACHE_DIR`` the parent chose (empty or warm)."""
    t = time.perf_counter()
    from strongsolve.games.g2048.stages.backward import afterstate_values
    from strongsolve.games.g2048.rules.board import tables
    from strongsolve.games.g2048.stages.forward import forward_layers
    doc = {"import_s": time.perf_counter() - t}
    for call in ("first", "second"):
        t = time.perf_counter()
        layers = {L.age: L.afterstates for L in forward_layers(2, 2, None)}
        doc[f"{call}_forward_s"] = time.perf_counter() - t
        t = time.perf_counter()
        _backward(layers, {}, tables(2, 2), max(layers))
        doc[f"{call}_backward_s"] = time.perf_counter() - t
    return doc


def work_pipeline(rows, cols, max_age, memory_limit=None, workdir=None):
    import io
    from strongsolve.games.g2048.stages.pipeline import solve
    _warm()
    base = rss_bytes()
    directory = Path(tempfile.mkdtemp(prefix="pipeline-", dir=workdir))
    try:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        doc = solve(directory / "run", rows, cols, max_age=max_age, log=io.StringIO(), memory_limit=memory_limit)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        out = {"wall_s": wall, "cpu_s": cpu, "base_rss_bytes": base, **disk_usage(directory / "run")}
        out["expected_score"] = doc["expected_score"] if doc else None
        return out
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def disk_usage(run_dir, large=100_000):
    """Counts from a run's summary.csv, and bytes on disk of its afterstate and value layers: over
    all layers, and over the layers of at least ``large`` afterstates (zarr's per-layer metadata
    weighs less there, as in the layers of 1e8 IDs of 4x3)."""
    from strongsolve.games.g2048.stages.report import read_summary
    summary = read_summary(run_dir)  # verified against summary.csv.sha256

    def size(path):
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0

    after = sum(r["afterstates"] for r in summary)
    big = [r for r in summary if r["afterstates"] >= large]
    big_after = sum(r["afterstates"] for r in big)
    ids, values = size(run_dir / "afterstates"), size(run_dir / "values")
    big_ids = sum(size(run_dir / "afterstates" / f"age_{r['age']:06d}.zarr") for r in big)
    big_values = sum(size(run_dir / "values" / f"age_{r['age']:06d}.zarr") for r in big)
    fwd, bwd = window_bytes([r["age"] for r in summary], [r["afterstates"] for r in summary])
    return {"window_bytes": max(fwd, bwd if values else 0), "ages": len(summary),
            "last_age": max((r["age"] for r in summary if r["states"]), default=None),
            "states": sum(r["states"] for r in summary), "count": sum(r["states"] for r in summary),
            "unit": "states", "afterstates": after, "ids_bytes": ids, "values_bytes": values,
            "ids_bytes_per_afterstate": ids / after if after else None,
            "values_bytes_per_afterstate": values / after if after and values else None,
            "large_layers": {"min_afterstates": large, "layers": len(big), "afterstates": big_after,
                             "ids_bytes_per_afterstate": big_ids / big_after if big_after else None,
                             "values_bytes_per_afterstate": big_values / big_after if big_after and values else None}}


def worker_main(spec):
    stage = spec["stage"]
    if stage == "jit":
        doc = work_jit()
    else:
        fn = {"forward": work_forward, "backward": work_backward, "numpy": work_numpy,
              "pipeline": work_pipeline}[stage]
        doc = fn(spec["rows"], spec["cols"], spec["max_age"], spec.get("memory_limit"), spec.get("workdir"))
        doc["memory_limit"] = spec.get("memory_limit")
    doc["self_peak_rss_bytes"] = max(rss_bytes("VmHWM"), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    print(json.dumps(doc))


# ---------------------------------------------------------------------------------------------
# the stages (in the parent)

def rates(doc):
    """Add throughput: count per CPU second (per core) and per wall second."""
    doc["per_cpu_s"] = doc["count"] / doc["cpu_s"] if doc["cpu_s"] > 0 else None
    doc["per_wall_s"] = doc["count"] / doc["wall_s"] if doc["wall_s"] > 0 else None
    if doc.get("window_bytes") and "base_rss_bytes" in doc:
        # the memory budget: the three-layer window plus memory_limit (none: the window alone),
        # against the peak above what the process held after its imports and JIT warm-up
        doc["budget_bytes"] = doc["window_bytes"] + (doc.get("memory_limit") or 0)
        doc["rss_over_budget"] = (doc["peak_rss_bytes"] - doc.get("base_rss_bytes", 0)) / doc["budget_bytes"]
    return doc


def stage_jit(threads):
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        cold = worker("jit", threads, env={"NUMBA_CACHE_DIR": cache})
        warm = worker("jit", threads, env={"NUMBA_CACHE_DIR": cache})
    return {"stage": "jit", "board": "2x2", "cold": cold, "warm": warm,
            "compile_forward_s": cold["first_forward_s"] - cold["second_forward_s"],
            "compile_backward_s": cold["first_backward_s"] - cold["second_backward_s"],
            "cache_load_s": (warm["first_forward_s"] - warm["second_forward_s"]
                             + warm["first_backward_s"] - warm["second_backward_s"]),
            "import_s": warm["import_s"], "compile_process_cpu_s": cold["process_cpu_s"]}


def check_counts(numpy_doc, numba_per_age):
    """Compare per-age counts of the numpy baseline and the numba forward pass."""
    a, b = numpy_doc["per_age"], numba_per_age
    keys = ("ages", "states", "terminal", "afterstates")
    return all(a[k] == b[k][:len(a[k])] for k in keys) and len(a["ages"]) <= len(b["ages"])


def stage_numpy(board, max_age, threads, forward_records):
    rows, cols = board
    doc = rates(dict(worker("numpy", threads, rows=rows, cols=cols, max_age=max_age), stage="numpy"))
    numba = next((r for r in forward_records if r["board"] == fmt(board) and r["max_age"] == max_age),
                 None) or rates(dict(worker("forward", threads, rows=rows, cols=cols, max_age=max_age),
                                     stage="forward"))
    if not check_counts(doc, numba["per_age"]):
        raise RuntimeError(f"numpy baseline and numba forward pass disagree on {fmt(board)} per-age counts")
    doc.update(counts_equal=True, numba_per_cpu_s=numba["per_cpu_s"], numba_per_wall_s=numba["per_wall_s"],
               ratio_per_cpu_s=numba["per_cpu_s"] / doc["per_cpu_s"],
               ratio_per_wall_s=numba["per_wall_s"] / doc["per_wall_s"])
    return doc


def workflow_copy(dest):
    for name in ("Snakefile", "config.yaml", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)


def job_logs(run_dir):
    """Jobs of a workflow run: its job logs (``logs/<job>.log``; not the ``.attempts.log`` beside each)."""
    return len([p for p in (run_dir / "logs").glob("*.log") if not p.name.endswith(".attempts.log")])


def stage_snakemake(board, max_age, threads, workdir):
    """The real workflow on ``board`` after a warm-up run on 2x2 (the JIT cache is then warm)."""
    from strongsolve.games.g2048.stages.report import read_solution
    rows, cols = board
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    with tempfile.TemporaryDirectory(prefix="snakemake-", dir=workdir) as tmp:
        wf = Path(tmp)
        workflow_copy(wf)
        (wf / "bench.yaml").write_text(f"games: [g2048]\ng2048: {{rows: {rows}, cols: {cols}}}\n")
        preset = wf / "workflow" / "presets" / f"2048_{rows}x{cols}.yaml"
        config = str(preset.relative_to(wf)) if preset.exists() else "bench.yaml"
        env = child_env(threads)
        warm = run_child([snakemake, "--cores", str(threads), "--configfile", "workflow/presets/2048_2x2.yaml"],
                         env=env, cwd=wf)
        if warm[0] != 0:
            raise RuntimeError(f"snakemake warm-up on 2x2 failed:\n{warm[2][-3000:]}")
        argv = [snakemake, "--cores", str(threads), "--configfile", config]
        if max_age is not None:
            argv += ["--config", f"max_age={max_age}"]
        code, _, err, wall, cpu, rss = run_child(argv, env=env, cwd=wf)
        if code != 0:
            raise RuntimeError(f"snakemake on {fmt(board)} failed:\n{err[-3000:]}")
        run_dir = wf / "results" / f"2048_{rows}x{cols}"
        jobs = job_logs(run_dir)
        doc = {"stage": "snakemake", "command": " ".join(["snakemake"] + argv[1:]), "wall_s": wall,
               "cpu_s": cpu, "peak_rss_bytes": rss, "jobs": jobs, "warmup_2x2_wall_s": warm[3],
               "warmup_2x2_jobs": job_logs(wf / "results" / "2048_2x2"),
               **disk_usage(run_dir)}
        # the stages' own seconds (a job's wall time without its imports), from their block manifests
        doc["stage_seconds"] = {stage: sum(json.loads(m.read_text())["seconds"]
                                           for m in (run_dir / folder).glob("block_*.json"))
                                for stage, folder in (("forward", "afterstates"), ("backward", "values"))}
        solved = (run_dir / "solution.json").exists()
        doc["expected_score"] = read_solution(run_dir)["expected_score"] if solved else None
        return doc


def fmt(board):
    return f"{board[0]}x{board[1]}"


def parse_boards(text):
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*([1-4])x([1-4])\s*", part)
        if not m:
            raise SystemExit(f"bench: board {part!r} is not allowed; allowed: ROWSxCOLS with 1..4 each, e.g. 3x3")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def max_age_of(board, cap_4x3):
    """The last age measured: every age for boards up to 3x3, ``cap_4x3`` for larger ones."""
    return cap_4x3 if board[0] * board[1] >= 12 else None


# ---------------------------------------------------------------------------------------------
# the 4x3 projection

def read_forward_log(path):
    """Per-age lines ``forward age N: S states, T terminal, A afterstates, computed in X s`` of a
    stage log (e.g. the lead's 4x3 forward run): ages, counts and wall seconds."""
    pat = re.compile(r"forward age (\d+): (\d+) states, (\d+) terminal, (\d+) afterstates, computed in ([\d.]+) s")
    rows = [tuple(map(float, m.groups())) for m in map(pat.search, Path(path).read_text().splitlines()) if m]
    if not rows:
        return None
    states = int(sum(r[1] for r in rows))
    wall = sum(r[4] for r in rows)
    big = [r for r in rows if r[1] >= 1e6]
    upto200 = [r for r in rows if r[0] <= 200]
    return {"path": str(path), "first_age": int(rows[0][0]), "last_age": int(rows[-1][0]), "ages": len(rows),
            "states": states, "afterstates": int(sum(r[3] for r in rows)), "wall_s": wall,
            "per_wall_s": states / wall if wall else None,
            "per_wall_s_layers_over_1e6": (sum(r[1] for r in big) / sum(r[4] for r in big)) if big else None,
            # ages 4..200 of 4x3 hold 557,461,476 states (Kaneko & Yamashita 2025)
            "states_4_to_200": int(sum(r[1] for r in upto200)) if rows[-1][0] >= 200 else None}


def read_eliasfano(paths):
    """Size-weighted bits per afterstate ID (compact IDs, option ``both``, and ``raw``) from the JSON
    output of bench/eliasfano.py, per board shape."""
    out = {}
    for path in paths:
        doc = json.loads(Path(path).read_text())
        for shape, res in doc["shapes"].items():
            t = res["totals"]
            out[shape] = {"path": str(path), "max_age": doc.get("max_age"), "n": t["both"]["n"],
                          "bits_per_id_both": t["both"]["bits_per_id"], "bits_per_id_raw": t["raw"]["bits_per_id"]}
    return out


def projection(records, eliasfano, forward_log, memory_limit, ages_per_job):
    """Time, disk and memory of the full 4x3 solve on a 16-core, 128 GiB workstation.

    - Time: the published totals divided by the measured per-core rates (count / CPU second; the
      largest board measured), times 16 cores, assuming linear scaling over cores (the chunks are
      independent and the kernels release the GIL); plus the per-job start-up (import and loading
      the JIT cache, stage ``jit``) of the Snakemake jobs, which run one after the other.
    - Disk: afterstates x the measured bytes per afterstate of the layers as written: IDs from the
      pipeline or snakemake run with the most afterstates in layers of >= 100,000 (else the largest
      run), values likewise (only solved boards have values); and with IDs at the Elias-Fano bits per
      ID of bench/eliasfano.py (4x3 if measured) plus the same values.
    - Memory: the three-layer window (raw uint64 IDs and float64 values: an upper bound) at the
      largest layer plus ``memory_limit``. The largest
      afterstate layer is estimated as the largest state layer (3.0e8, age 9568) times the published
      ratio afterstates / states over all ages.
    """
    def best(stage):
        cands = [r for r in records if r.get("stage") == stage and r.get("per_cpu_s")]
        return max(cands, key=lambda r: r["count"]) if cands else None

    fwd, bwd = best("forward"), best("backward")
    files = [r for r in records if r.get("stage") in ("pipeline", "snakemake") and r.get("afterstates")]

    def per_afterstate(kind):
        """(bytes per afterstate of ``kind`` layers, where from): the run with the most afterstates in
        large layers, else the largest run."""
        cands = [r for r in files if r.get(f"{kind}_bytes_per_afterstate")]
        large = [r for r in cands if (r.get("large_layers") or {}).get(f"{kind}_bytes_per_afterstate")]
        if large:
            r = max(large, key=lambda r: r["large_layers"]["afterstates"])
            big = r["large_layers"]
            return (big[f"{kind}_bytes_per_afterstate"],
                    f"{r['stage']} {r['board']} to age {r['max_age_measured']}, layers of >= {big['min_afterstates']:,}")
        if cands:
            r = max(cands, key=lambda r: r["afterstates"])
            return r[f"{kind}_bytes_per_afterstate"], f"{r['stage']} {r['board']} to age {r['max_age_measured']}, all layers"
        return None, None

    jit = next((r for r in records if r.get("stage") == "jit"), None)
    cores = WORKSTATION["cores"]
    out = {"workstation": WORKSTATION, "published": {
        "states": TOTAL_STATES_4X3, "afterstates": TOTAL_AFTERSTATES_4X3, "largest_layer": LARGEST_LAYER_4X3,
        "source": "cases.json 2048_4x3_states_per_age (Kaneko & Yamashita 2025)"},
        "assumptions": "linear scaling over 16 cores; per-core rates as measured here on small layers "
                       "(lookups in layers of 1e8 IDs miss the caches more: expect slower)"}
    jobs = 2 * math.ceil((LAST_AGE_4X3 - 2) / 2 / ages_per_job)
    job_s = (jit["import_s"] + jit["cache_load_s"]) if jit else None
    t = {"jobs": jobs, "ages_per_job": ages_per_job, "job_startup_s": job_s}
    if fwd:
        t.update(forward_rate_per_core=fwd["per_cpu_s"], forward_rate_from=f"{fwd['board']} to age {fwd['max_age_measured']}",
                 forward_s=TOTAL_STATES_4X3 / (fwd["per_cpu_s"] * cores))
    if bwd:
        t.update(backward_rate_per_core=bwd["per_cpu_s"],
                 backward_rate_from=f"{bwd['board']} to age {bwd['max_age_measured']}"
                 + (" (synthetic successor values)" if bwd.get("synthetic_successors") else ""),
                 backward_s=TOTAL_AFTERSTATES_4X3 / (bwd["per_cpu_s"] * cores))
    if fwd and bwd:
        t["total_s"] = t["forward_s"] + t["backward_s"] + (jobs * job_s if job_s else 0.0)
        t["total_days"] = t["total_s"] / 86400
    out["time"] = t
    d = {}
    (ids_b, ids_from), (val_b, val_from) = per_afterstate("ids"), per_afterstate("values")
    if ids_b and val_b:
        d.update(ids_bytes_per_afterstate=ids_b, ids_from=ids_from, values_bytes_per_afterstate=val_b,
                 values_from=val_from, zarr_ids_bytes=TOTAL_AFTERSTATES_4X3 * ids_b,
                 zarr_values_bytes=TOTAL_AFTERSTATES_4X3 * val_b,
                 zarr_total_bytes=TOTAL_AFTERSTATES_4X3 * (ids_b + val_b))
    ef = eliasfano.get("4x3") or next(iter(eliasfano.values()), None)
    if ef:
        d.update(ef_from=f"{ef['path']} ({ef['n']} IDs)", ef_bits_per_id=ef["bits_per_id_both"],
                 ef_ids_bytes=TOTAL_AFTERSTATES_4X3 * ef["bits_per_id_both"] / 8)
        if "zarr_values_bytes" in d:
            d["ef_total_bytes"] = d["ef_ids_bytes"] + d["zarr_values_bytes"]
    out["disk"] = d
    largest_after = LARGEST_LAYER_4X3["states"] * TOTAL_AFTERSTATES_4X3 / TOTAL_STATES_4X3
    # forward: IDs (8 B) of layers n - 4, n - 2, the states of n, and the new layer while it is
    # concatenated (twice); backward: as window_bytes with three equal layers (8 x 8 B per afterstate)
    fwd_window = 8 * (2 * largest_after + LARGEST_LAYER_4X3["states"] + 2 * largest_after)
    bwd_window = 8 * 8 * largest_after
    m = {"largest_afterstate_layer_estimate": largest_after, "forward_window_bytes": fwd_window,
         "backward_window_bytes": bwd_window, "memory_limit_bytes": memory_limit,
         "peak_bytes": max(fwd_window, bwd_window) + memory_limit}
    m["fits"] = m["peak_bytes"] <= WORKSTATION["memory_bytes"]
    out["memory"] = m
    if forward_log:
        out["lead_forward_log"] = forward_log
    return out


# ---------------------------------------------------------------------------------------------
# text output

def text_report(doc):
    mach = doc["machine"]
    lines = [f"Machine: {mach['cpu_model']}, {mach['cpus_usable']} CPUs usable, "
             f"{mach['memory_bytes'] / GIB:.1f} GiB; load average {doc['load_start'][0]:.2f} at start, "
             f"{doc['load_end'][0]:.2f} at end; {doc['threads']} threads; commit {mach['git_commit']}"
             f"{' (+ local changes)' if mach['git_dirty'] else ''}; {doc['date']}"]
    for e in doc.get("earlier_runs", []):
        lines.append(f"Included run of {e['date']}, commit {e.get('git_commit')} ({' '.join(e['argv'])}): load average "
                     f"{e['load_start'][0]:.2f} at start, {e['load_end'][0]:.2f} at end, {e['threads']} threads")
    lines.append("")
    head = (f"| {'stage':<9} | {'board':<5} | {'ages':>10} | {'count':>12} | {'wall s':>8} | {'CPU s':>8} "
            f"| {'cores busy':>10} | {'/s per core':>11} | {'/s wall':>11} | {'peak RSS':>10} | {'mem limit':>9} |")
    lines += [head, "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"]
    for r in doc["records"]:
        if r["stage"] == "jit":
            continue
        ages = f"4..{r['max_age_measured']}" if r.get("max_age_measured") else ""
        count = f"{r['count']:,}" + (" S" if r.get("unit") == "states" else " A")
        per_core = f"{r['per_cpu_s']:.3g}" if r.get("per_cpu_s") else ""
        per_wall = f"{r['per_wall_s']:.3g}" if r.get("per_wall_s") else ""
        stage = r["stage"] + ("*" if r.get("synthetic_successors") else "")
        busy = r["cpu_s"] / r["wall_s"] if r["wall_s"] > 0 else 0.0
        lines.append(f"| {stage:<9} | {r['board']:<5} | {ages:>10} | {count:>12} | {r['wall_s']:>8.2f} "
                     f"| {r['cpu_s']:>8.2f} | {busy:>10.2f} | {per_core:>11} | {per_wall:>11} "
                     f"| {r['peak_rss_bytes'] / 2**20:>6.0f} MiB "
                     f"| {(str(r['memory_limit'] >> 20) + ' MiB') if r.get('memory_limit') else '':>9} |")
    lines.append("")
    lines.append("S = states, A = afterstates; * = throughput on synthetic successor values (not a solve); "
                 "cores busy = CPU s / wall s.")
    for stage, target in (("forward", 5e6), ("backward", 2e6)):
        for r in doc["records"]:
            if r["stage"] == stage and r["board"] == "4x3" and r.get("per_cpu_s"):
                lines.append(f"target, 4x3 {stage} >= {target:.0e} per core: measured "
                             f"{r['per_cpu_s']:.3g} per core ({r['per_cpu_s'] / target:.0%} of the target)")
    for r in doc["records"]:
        if r["stage"] == "numpy":
            lines.append(f"numba / numpy forward on {r['board']} ages 4..{r['max_age_measured']} "
                         f"(identical per-age counts): {r['ratio_per_cpu_s']:.2f}x per core, "
                         f"{r['ratio_per_wall_s']:.2f}x wall")
        if r["stage"] == "jit":
            lines.append(f"JIT (empty cache, 2x2): forward {r['compile_forward_s']:.1f} s, backward "
                         f"{r['compile_backward_s']:.1f} s; a fresh process pays {r['import_s']:.1f} s "
                         f"import + {r['cache_load_s']:.1f} s loading the warm cache")
        if r["stage"] == "snakemake":
            lines.append(f"snakemake {r['board']}: {r['wall_s']:.1f} s wall ({r['jobs']} jobs, target "
                         f"for 3x3: <= 60 s), {r['cpu_s']:.1f} s CPU, expected score {r['expected_score']}")
        if r.get("ids_bytes_per_afterstate"):
            lines.append(f"{r['stage']} {r['board']}: layers on disk {r['ids_bytes_per_afterstate']:.2f} B/afterstate "
                         f"(IDs) + {r['values_bytes_per_afterstate'] or 0:.2f} B (values)")
        if r.get("window_bytes") and "base_rss_bytes" in r:
            base = f" (after imports and warm-up {r['base_rss_bytes'] / 2**20:.0f} MiB)"
            limit = r.get("memory_limit")
            lines.append(f"{r['stage']} {r['board']}: peak RSS {r['peak_rss_bytes'] / 2**20:.0f} MiB{base}; "
                         f"largest three-layer window {r['window_bytes'] / 2**20:.1f} MiB + memory_limit "
                         + (f"{limit / 2**20:.0f} MiB" if limit else "none")
                         + f" = {r.get('budget_bytes', r['window_bytes']) / 2**20:.1f} MiB; peak above "
                         f"the base / budget = {r['rss_over_budget']:.2f}")
    p = doc.get("projection")
    if p and p.get("lead_forward_log"):
        f = p["lead_forward_log"]
        lines.append(f"forward log {f['path']}: ages {f['first_age']}..{f['last_age']}, {f['states']:,} states in "
                     f"{f['wall_s']:.0f} s wall ({f['per_wall_s']:.3g} states/s wall; no CPU seconds in a log)"
                     + (f"; ages 4..200: {f['states_4_to_200']:,} states (published 557,461,476)"
                        if f.get("states_4_to_200") else ""))
    if p:
        lines += ["", projection_table(p)]
    return "\n".join(lines)


def projection_table(p):
    t, d, m = p["time"], p["disk"], p["memory"]
    rows = ["| full 4x3 solve, 16 cores, 128 GiB | projected | from |", "|---|---|---|"]
    if "forward_s" in t:
        rows.append(f"| forward ({TOTAL_STATES_4X3:,} states) | {t['forward_s'] / 3600:.1f} h "
                    f"| {t['forward_rate_per_core']:.3g} states/s per core, {t['forward_rate_from']} |")
    if "backward_s" in t:
        rows.append(f"| backward ({TOTAL_AFTERSTATES_4X3:,} afterstates) | {t['backward_s'] / 3600:.1f} h "
                    f"| {t['backward_rate_per_core']:.3g} afterstates/s per core, {t['backward_rate_from']} |")
    if t.get("job_startup_s"):
        rows.append(f"| job start-up ({t['jobs']} jobs of {t['ages_per_job']} ages) | "
                    f"{t['jobs'] * t['job_startup_s'] / 3600:.2f} h | {t['job_startup_s']:.1f} s per job (import + JIT cache) |")
    if "total_s" in t:
        rows.append(f"| **total time** | **{t['total_s'] / 3600:.1f} h ({t['total_days']:.2f} days)** | linear scaling assumed |")
    if "zarr_total_bytes" in d:
        rows.append(f"| disk, layers as written (IDs + values) | {d['zarr_total_bytes'] / 2**40:.1f} TiB "
                    f"| IDs {d['ids_bytes_per_afterstate']:.2f} B/afterstate ({d['ids_from']}); values "
                    f"{d['values_bytes_per_afterstate']:.2f} B/afterstate ({d['values_from']}) |")
    if "ef_ids_bytes" in d:
        rows.append(f"| disk, Elias-Fano IDs | {d['ef_ids_bytes'] / 2**40:.2f} TiB | {d['ef_bits_per_id']:.2f} bits/ID, {d['ef_from']} |")
    if "ef_total_bytes" in d:
        rows.append(f"| disk, Elias-Fano IDs + zarr values | {d['ef_total_bytes'] / 2**40:.1f} TiB | |")
    rows.append(f"| memory: window + memory_limit | {m['peak_bytes'] / GIB:.1f} GiB "
                f"({'fits' if m['fits'] else 'does not fit'}) | largest afterstate layer ~{m['largest_afterstate_layer_estimate']:.2g}; "
                f"forward window {m['forward_window_bytes'] / GIB:.1f} GiB, backward {m['backward_window_bytes'] / GIB:.1f} GiB, "
                f"memory_limit {m['memory_limit_bytes'] / GIB:.0f} GiB |")
    return "\n".join(rows)


# ---------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    parser.add_argument("--boards", default="2x3,3x3,4x3", help="board shapes, comma-separated")
    parser.add_argument("--max-age-4x3", type=int, default=200, help="last age measured on 4x3 (default 200)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="threads per stage (STRONGSOLVE_THREADS) and snakemake --cores")
    parser.add_argument("--stages", default=",".join(STAGES),
                        help=f"comma-separated, from {','.join(STAGES)}; none: only report --from-json runs")
    parser.add_argument("--numpy-boards", default="3x3", help="boards of the numpy baseline (default 3x3)")
    parser.add_argument("--numpy-max-age", type=int, default=None,
                        help="last age of the numpy baseline (default: as the other stages)")
    parser.add_argument("--snakemake-boards", default="3x3", help="boards of the snakemake stage (default 3x3)")
    parser.add_argument("--eliasfano-json", action="append", default=[],
                        help="output of bench/eliasfano.py --json to read bits per ID from (repeatable)")
    parser.add_argument("--forward-log", default=None,
                        help="a forward stage log to summarise (per-age lines), e.g. a long 4x3 run")
    parser.add_argument("--memory-limit-gib", type=float, default=32.0,
                        help="memory_limit of the projected 4x3 workstation run (GiB, default 32)")
    parser.add_argument("--ages-per-job", type=int, default=16, help="ages per job of the projected 4x3 run")
    parser.add_argument("--memory-limit", type=int, default=None,
                        help="memory_limit (bytes) of the forward, backward and pipeline stages measured "
                             "(default: none, everything in memory)")
    parser.add_argument("--workdir", default=None, help="where temporary runs go (default: the system's)")
    parser.add_argument("--from-json", action="append", default=[],
                        help="include the records of an earlier run's --json output (repeatable): "
                             "split a long benchmark into runs of a few minutes, then report them together")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(json.loads(args.worker))
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    bad = [s for s in stages if s not in STAGES + ("none",)]
    if bad:
        raise SystemExit(f"bench: stage {bad[0]!r} is not allowed; allowed: {', '.join(STAGES)}")
    if args.threads < 1:
        raise SystemExit(f"bench: --threads {args.threads} is not allowed; allowed: an integer >= 1")
    boards = parse_boards(args.boards)
    doc = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "machine": machine(),
           "load_start": list(os.getloadavg()), "threads": args.threads,
           "argv": sys.argv[1:] if argv is None else list(argv), "records": [], "earlier_runs": []}
    records = doc["records"]
    for path in args.from_json:
        earlier = json.loads(Path(path).read_text())
        doc["earlier_runs"].append(dict({k: earlier[k] for k in ("date", "load_start", "load_end", "threads", "argv")},
                                        git_commit=earlier["machine"]["git_commit"]))
        records += [dict(r, run_date=earlier["date"]) for r in earlier["records"]]

    def add(rec, board, max_age):
        rec["board"] = fmt(board)
        ages = rec.get("per_age", {}).get("ages")
        rec["max_age_measured"] = max(ages) if ages else rec.get("last_age") or max_age
        rec["max_age"] = max_age
        records.append(rates(rec) if "count" in rec else rec)
        print(f"bench: {rec['stage']} {rec['board']} done in {rec.get('wall_s', 0):.1f} s", file=sys.stderr)

    stages = stages if stages != ["none"] else []
    if "jit" in stages:
        rec = stage_jit(args.threads)
        rec["board"] = "2x2"
        records.append(rec)
    for board in boards:
        max_age = max_age_of(board, args.max_age_4x3)
        spec = dict(rows=board[0], cols=board[1], max_age=max_age, memory_limit=args.memory_limit,
                    workdir=args.workdir)
        for stage in ("forward", "backward", "pipeline"):
            if stage in stages:
                add(dict(worker(stage, args.threads, **spec), stage=stage), board, max_age)
    if "numpy" in stages:
        for board in parse_boards(args.numpy_boards):
            max_age = args.numpy_max_age or max_age_of(board, args.max_age_4x3)
            add(stage_numpy(board, max_age, args.threads, [r for r in records if r["stage"] == "forward"]),
                board, max_age)
    if "snakemake" in stages:
        for board in parse_boards(args.snakemake_boards):
            max_age = max_age_of(board, args.max_age_4x3)
            add(stage_snakemake(board, max_age, args.threads, args.workdir), board, max_age)
    doc["load_end"] = list(os.getloadavg())
    doc["projection"] = projection(records, read_eliasfano(args.eliasfano_json),
                                   read_forward_log(args.forward_log) if args.forward_log else None,
                                   int(args.memory_limit_gib * GIB), args.ages_per_job)
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        print()
    else:
        print(text_report(doc))
    return doc


if __name__ == "__main__":
    main()
