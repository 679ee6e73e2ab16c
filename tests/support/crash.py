"""Kills of the real workflow and the checks of what they leave: a small 2x3 run in a temporary
copy of the workflow, killed and rerun by the crash, orphan and one-job tests."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
import numpy as np
from strongsolve.store.layers import read_layer

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
SEED = int(os.environ.get("STRONGSOLVE_CRASH_SEED", "20261129"))
RUN = Path("results") / "2048_2x3"
CONFIG = "results: results\ngames: [g2048]\nmax_age: null\ng2048: {rows: 2, cols: 3, ages_per_job: 48, threads: 1}\n"
BLOCKS = [(4, 98), (100, 194), (196, 252)]  # ages 4..252 in blocks of 48
ENV = dict(os.environ, NUMBA_NUM_THREADS="1")
TIMEOUT = 300  # seconds for any one snakemake run: far above its few tens of seconds


# ---- running and killing the workflow -----------------------------------------------------------

def make_workflow(dest):
    dest.mkdir(parents=True)
    for name in ("Snakefile", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    (dest / "config.yaml").write_text(CONFIG)
    return dest


def copy_workflow(src, dest):
    """A copy of a finished workflow directory (mtimes kept, Snakemake's own records left out)."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".snakemake"))
    return dest


def snakemake(wf, *args):
    proc = subprocess.run([str(SNAKEMAKE), "--cores", "2", *args], cwd=wf, env=ENV,
                          capture_output=True, text=True, timeout=TIMEOUT)
    proc.output = proc.stdout + proc.stderr
    return proc


def start(wf, name):
    """Start ``snakemake --cores 2`` in its own process group (output to ``<wf>/<name>.out``)."""
    out_path = wf / f"{name}.out"
    with open(out_path, "w") as out:
        proc = subprocess.Popen([str(SNAKEMAKE), "--cores", "2"], cwd=wf, env=ENV, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    proc.out_path = out_path
    return proc


def wait_until(condition, proc, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"snakemake exited ({proc.returncode}) before {what}:\n"
                                 + proc.out_path.read_text()[-3000:])
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def live_members(pgid):
    """Processes of the group that are alive (zombies do not count: they write nothing)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def wait_group_gone(pgid, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while live_members(pgid):
        assert time.monotonic() < deadline, f"processes of group {pgid} still alive"
        time.sleep(0.01)


def kill_group(proc):
    """SIGKILL Snakemake and its jobs at once (as a power loss would stop them)."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    wait_group_gone(proc.pid)


# ---- what is on disk ----------------------------------------------------------------------------

def layers(run_dir, stage):
    d = run_dir / stage
    return sorted(d.glob("age_*.zarr")) if d.is_dir() else []


def ages(paths):
    return {int(p.name[4:10]) for p in paths}


def identities(run_dir):
    """(inode, mtime) of every result file: layers, block manifests, summary and solution (plots are
    drawn again whenever the report is, so they are left out like the logs)."""
    out = {}
    for p in run_dir.rglob("*"):
        rel = p.relative_to(run_dir)
        if p.is_file() and rel.parts[0] not in ("logs", "plots") and not any(s.startswith(".") for s in rel.parts):
            st = p.stat()
            out[rel] = (st.st_ino, st.st_mtime_ns)
    return out


def assert_kept(before, run_dir, rewritten=()):
    """Every file of ``before`` is still the same file, untouched (not recomputed, not rewritten)."""
    after = identities(run_dir)
    changed = sorted(str(rel) for rel, ident in before.items()
                     if Path(rel) not in rewritten and after.get(rel) != ident)
    assert not changed, f"recomputed or rewritten: {changed[:10]}"


def assert_layers_complete(run_dir):
    """Whatever a kill left: every layer under its final name is complete and verifies."""
    for stage in ("afterstates", "values"):
        for path in layers(run_dir, stage):
            read_layer(path)


def interrupted_block(run_dir, stage):
    """(first, last, ages present) of the block that has layers but no manifest, or None."""
    present = ages(layers(run_dir, stage))
    for first, last in BLOCKS:
        done = present & set(range(first, last + 1, 2))
        if done and not (run_dir / stage / f"block_{first:06d}-{last:06d}.json").exists():
            return first, last, done
    return None


def unrecorded_manifests(stage, cut):
    """The block manifests of ``stage`` that the next run may write again after a kill that left
    ``cut`` (``interrupted_block``): none if a block was cut (it was the one running), else any of
    them, since the kill may have landed after the running block wrote its manifest and before
    Snakemake recorded the job as finished (with small layers written fast, the last few ages of a
    block take milliseconds). The next run then reruns that job, which keeps every layer (checked)
    and writes the manifest again, as step 1 shows."""
    if cut is not None:
        return set()
    return {Path(stage) / f"block_{first:06d}-{last:06d}.json" for first, last in BLOCKS}


def assert_resumed(run_dir, stage, block):
    """The log of the block's rerun shows exactly the ages found on disk as kept, the others computed."""
    if block is None:
        return
    first, last, kept = block
    log = (run_dir / "logs" / f"{'forward' if stage == 'afterstates' else 'backward'}_{first:06d}-{last:06d}.log").read_text()
    status = {int(a): s for a, s in re.findall(r"age (\d+): .*, (verified \(kept\)|computed in)", log)}
    assert set(status) == set(range(first, last + 1, 2)), log[-2000:]
    assert {a for a, s in status.items() if s.startswith("verified")} == kept


def stale_locks(wf):
    return sorted((wf / ".snakemake" / "locks").glob("*.lock"))


def assert_same_results(ref_dir, run_dir):
    """Layers, summary.csv and solution.json byte for byte as the uninterrupted run's; the block
    manifests equal but for their timings; no temporary left anywhere."""
    def files(root):
        return sorted(p.relative_to(root) for p in root.rglob("*")
                      if p.is_file() and p.relative_to(root).parts[0] != "logs")

    names = files(run_dir)
    assert names == files(ref_dir)
    assert not [n for n in names if any(part.startswith(".") for part in n.parts)]
    for rel in names:
        a, b = (ref_dir / rel).read_bytes(), (run_dir / rel).read_bytes()
        if rel.name.startswith("block_"):
            a, b = ({k: v for k, v in json.loads(x).items() if k != "seconds"} for x in (a, b))
        assert a == b, f"{rel} differs from the uninterrupted run"
    for stage in ("afterstates", "values"):
        for path in layers(run_dir, stage):
            got, want = read_layer(path), read_layer(ref_dir / stage / path.name)
            assert got[1] == want[1]
            for name in want[0]:
                assert got[0][name].dtype == want[0][name].dtype
                assert np.array_equal(got[0][name], want[0][name])
    assert (run_dir / "solution.json").read_bytes() == (ref_dir / "solution.json").read_bytes()


def flip_byte(path, position):
    data = bytearray(path.read_bytes())
    data[position] ^= 0x10
    path.write_bytes(bytes(data))
