"""Kill -9 the Snakemake main process alone, rerun at once, many times: one writer per run.

A ``kill -9`` of the main process alone (not its process group) leaves its running job alive; the
immediate rerun starts the same job again. Each job holds its run's writer lock
(:mod:`strongsolve.store.lock`), so the rerun's job waits for the orphan. This script does it
``--kills`` times at random moments of a real workflow run (default: the 2x4 preset,
``snakemake --cores 2 --configfile workflow/presets/2048_2x4.yaml``), each time starting the rerun
right after the kill, and then a plain rerun to the end. It checks:

- no rerun fails (no "Error in rule" in any Snakemake output, the last run exits 0);
- after every kill, every layer under its final name verifies (no complete-looking damaged layer);
- at the end, every layer, summary.csv and solution.json byte for byte as an uninterrupted run's,
  the block manifests equal but for their timings, no temporary or lock file left, and a further
  plain rerun has nothing to do.

If a run ends before all kills landed, a fresh run starts (a new round) until ``--kills`` is reached.
Prints one line per kill and a JSON summary; exits 1 on any failed check.

    .venv/bin/python bench/kill_main_rerun.py                    # 20 kills, seed 16
    .venv/bin/python bench/kill_main_rerun.py --kills 5 --preset 2048_2x3 --seed 3
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
CONFIG = "results: results\ngames: [g2048]\n"
TIMEOUT = 1800


def make_workflow(dest):
    dest.mkdir(parents=True)
    for name in ("Snakefile", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    (dest / "config.yaml").write_text(CONFIG)
    return dest


def command(preset, cores):
    return [str(SNAKEMAKE), "--cores", str(cores), "--configfile", f"workflow/presets/{preset}.yaml"]


def start(wf, preset, cores, name):
    out = open(wf / f"{name}.out", "w")
    proc = subprocess.Popen(command(preset, cores), cwd=wf, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    proc.out_path = wf / f"{name}.out"
    out.close()
    return proc


def run_dir_of(wf):
    dirs = [d for d in (wf / "results").iterdir() if d.name.startswith("2048_")] if (wf / "results").is_dir() else []
    return dirs[0] if dirs else None


def check_layers(run_dir):
    """Every layer under its final name verifies; returns how many there are."""
    from strongsolve.store.layers import read_layer
    count = 0
    for stage in ("afterstates", "values"):
        for path in sorted((run_dir / stage).glob("age_*.zarr")) if (run_dir / stage).is_dir() else []:
            read_layer(path)
            count += 1
    return count


def compare(ref_dir, run_dir):
    """Differences between a run and the uninterrupted one (empty list: identical)."""
    def files(root):
        return sorted(p.relative_to(root) for p in root.rglob("*")
                      if p.is_file() and p.relative_to(root).parts[0] not in ("logs", "plots"))

    names, want = files(run_dir), files(ref_dir)
    problems = [f"files differ: extra {sorted(set(map(str, names)) - set(map(str, want)))[:5]}, "
                f"missing {sorted(set(map(str, want)) - set(map(str, names)))[:5]}"] if names != want else []
    problems += [f"hidden file left: {n}" for n in names if any(p.startswith(".") for p in n.parts)]
    for rel in set(names) & set(want):
        a, b = (ref_dir / rel).read_bytes(), (run_dir / rel).read_bytes()
        if rel.name.startswith("block_"):
            a, b = ({k: v for k, v in json.loads(x).items() if k != "seconds"} for x in (a, b))
        if a != b:
            problems.append(f"{rel} differs from the uninterrupted run")
    return problems


def orphan_jobs(groups):
    """Pids of the live `strongsolve` jobs in the process groups ``groups`` (the killed Snakemakes'
    sessions: their jobs live on, reparented to init)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[2]) in groups and fields[0] != "Z" and b"strongsolve" in cmdline and b"snakemake" not in cmdline:
            alive.append(int(stat.parent.name))
    return alive


def wait_orphans_gone(groups, timeout=TIMEOUT):
    """Wait until the jobs left by the killed main processes have ended; the pids still alive."""
    deadline = time.monotonic() + timeout
    while (alive := orphan_jobs(groups)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kills", type=int, default=20)
    p.add_argument("--preset", default="2048_2x4", help="workflow/presets/NAME.yaml (default 2048_2x4)")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--min-delay", type=float, default=1.0, help="seconds after a start, at least")
    p.add_argument("--max-delay", type=float, default=12.0, help="seconds after a start, at most")
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--workdir", type=Path, default=None, help="keep the workflows here (default: a temporary directory)")
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    base = args.workdir or Path(tempfile.mkdtemp(prefix="kill_main_rerun_"))

    t = time.monotonic()
    ref = make_workflow(base / "reference")
    proc = subprocess.run(command(args.preset, args.cores), cwd=ref, capture_output=True, text=True,
                          timeout=TIMEOUT)
    if proc.returncode:
        sys.exit(f"the uninterrupted run failed:\n{proc.stderr[-3000:]}")
    ref_seconds = time.monotonic() - t
    print(f"uninterrupted run: {ref_seconds:.1f} s", flush=True)

    problems, kills, rounds, killed_groups, waits, orphans_at_rerun = [], 0, [], set(), 0, []
    while kills < args.kills:
        wf = make_workflow(base / f"round{len(rounds)}")
        outputs, landed = [], 0
        while kills < args.kills:
            proc = start(wf, args.preset, args.cores, f"run{landed}")
            outputs.append(proc.out_path)
            delay = rng.uniform(args.min_delay, args.max_delay)
            try:
                proc.wait(timeout=delay)
                break  # the run ended before the kill: this round is done
            except subprocess.TimeoutExpired:
                pass
            os.kill(proc.pid, signal.SIGKILL)  # the main process alone: its job lives on
            proc.wait()
            killed_groups.add(proc.pid)
            kills += 1
            landed += 1
            run_dir = run_dir_of(wf)
            n = check_layers(run_dir) if run_dir else 0
            orphans = len(orphan_jobs(killed_groups))
            orphans_at_rerun.append(orphans)
            print(f"kill {kills}: round {len(rounds)}, after {delay:.2f} s, {n} layers verify, "
                  f"{orphans} orphaned job processes alive as the rerun starts", flush=True)
        final = subprocess.run(command(args.preset, args.cores), cwd=wf, capture_output=True,
                               text=True, timeout=TIMEOUT)
        left = wait_orphans_gone(killed_groups)
        if final.returncode:
            problems.append(f"round {len(rounds)}: the final rerun failed:\n{final.stderr[-3000:]}")
        for out in outputs:
            text = out.read_text()
            if "Error in rule" in text or "Exiting because a job execution failed" in text:
                problems.append(f"round {len(rounds)}: a rerun failed ({out}):\n{text[-2000:]}")
        run_dir = run_dir_of(wf)
        logs = "".join(f.read_text(errors="replace") for f in (run_dir / "logs").glob("*.log"))
        waits += logs.count("is being written by another process")
        problems += [f"round {len(rounds)}: {x}" for x in compare(run_dir_of(ref), run_dir)]
        if left:
            problems.append(f"round {len(rounds)}: orphaned jobs still alive: {left}")
        again = subprocess.run(command(args.preset, args.cores) + ["--dry-run"], cwd=wf,
                               capture_output=True, text=True, timeout=TIMEOUT)
        if "Nothing to be done" not in again.stdout + again.stderr:
            problems.append(f"round {len(rounds)}: a further rerun has work to do:\n{again.stdout[-2000:]}")
        rounds.append(landed)
    summary = {"preset": args.preset, "kills": kills, "kills_per_round": rounds,
               "uninterrupted_seconds": round(ref_seconds, 1),
               "reruns_started_beside_a_live_orphan": sum(1 for k in orphans_at_rerun if k),
               "waiting_messages_in_final_logs": waits, "problems": problems}
    print(json.dumps(summary, indent=2))
    if not args.workdir:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
