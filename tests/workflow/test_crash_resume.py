"""Crash-safe, resumable runs of the real Snakemake workflow.

The 2x3 board with 48 ages per job (three forward and three backward blocks) runs in a copy of the
workflow whose config.yaml selects it, so every command here is a plain ``snakemake --cores 2``: no
``--unlock``, no ``--rerun-incomplete``. The kill moments are drawn from a seeded generator
(``STRONGSOLVE_CRASH_SEED`` to vary them); a kill lands wherever the run then is, including in the
middle of writing a layer.

Jobs run with ``NUMBA_NUM_THREADS=1``: the 2x3 layers hold at most a few hundred IDs, and on a busy
2-core machine the parallel kernels' thread hand-offs cost more than the work. The results do not
depend on it (fastmath is off and the kernels are deterministic).
"""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.crash import (SNAKEMAKE, SEED, RUN, BLOCKS, ENV, TIMEOUT, make_workflow,
                           copy_workflow, snakemake, start, wait_until, wait_group_gone,
                           kill_group, layers, identities, assert_kept, assert_layers_complete,
                           interrupted_block, unrecorded_manifests, assert_resumed, stale_locks,
                           assert_same_results, flip_byte)


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run: the workflow directory."""
    wf = make_workflow(tmp_path_factory.mktemp("reference") / "wf")
    proc = snakemake(wf)
    assert proc.returncode == 0, proc.output[-3000:]
    assert json.loads((wf / RUN / "solution.json").read_text())["rows"] == 2
    return wf


# ---- the tests ----------------------------------------------------------------------------------

def test_sigkill_at_random_moments_then_plain_rerun_gives_identical_results(reference, tmp_path):
    rng = random.Random(SEED)
    wf = make_workflow(tmp_path / "wf")
    run_dir = wf / RUN

    # 1. Forward, first block: SIGKILL Snakemake alone (as the OOM killer would). Its job is orphaned,
    #    finishes the block and writes the manifest, which Snakemake never records as complete.
    proc = start(wf, "run1")
    k = rng.randint(2, 30)  # of the block's 48: the block is still running when the kill lands
    wait_until(lambda: len(layers(run_dir, "afterstates")) >= k, proc, f"{k} forward layers")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    wait_group_gone(proc.pid)
    first_manifest = Path("afterstates/block_000004-000098.json")
    assert (run_dir / first_manifest).exists()
    assert stale_locks(wf), "a killed Snakemake leaves its lock files"
    # Without the profile's `rerun-incomplete: true`, Snakemake refuses to go on.
    refused = snakemake(wf, "--workflow-profile", "none")
    assert refused.returncode != 0 and "--rerun-incomplete" in refused.output, refused.output[-3000:]
    assert "cannot be locked" not in refused.output  # the stale lock is cleared by common.smk
    assert_layers_complete(run_dir)
    before = identities(run_dir)

    # 2. Forward, a later block: kill everything.
    proc = start(wf, "run2")
    k = rng.randint(55, 115)  # of 125: the backward pass has not started when the kill lands
    wait_until(lambda: len(layers(run_dir, "afterstates")) >= k, proc, f"{k} forward layers")
    time.sleep(rng.uniform(0.0, 0.05))
    kill_group(proc)
    assert stale_locks(wf)
    assert not (run_dir / "values").exists()
    # the incomplete first block was run again: it kept all its layers and rewrote its manifest
    assert_kept(before, run_dir, rewritten={first_manifest})
    assert_resumed(run_dir, "afterstates", (4, 98, set(range(4, 99, 2))))
    assert_layers_complete(run_dir)
    forward_cut = interrupted_block(run_dir, "afterstates")
    before = identities(run_dir)

    # 3. Backward.
    proc = start(wf, "run3")
    k = rng.randint(10, 115)
    wait_until(lambda: len(layers(run_dir, "values")) >= k, proc, f"{k} value layers")
    time.sleep(rng.uniform(0.0, 0.05))
    kill_group(proc)
    assert stale_locks(wf)
    assert_kept(before, run_dir, rewritten=unrecorded_manifests("afterstates", forward_cut))
    assert_resumed(run_dir, "afterstates", forward_cut)
    assert_layers_complete(run_dir)
    backward_cut = interrupted_block(run_dir, "values")
    before = identities(run_dir)

    # 4. Report.
    proc = start(wf, "run4")
    wait_until((run_dir / "logs" / "report.log").exists, proc, "the report job")
    time.sleep(rng.uniform(0.0, 0.1))
    kill_group(proc)
    assert not (run_dir / "solution.json").exists(), "the report was not interrupted"
    assert_kept(before, run_dir, rewritten=unrecorded_manifests("values", backward_cut))
    assert_resumed(run_dir, "values", backward_cut)
    before = identities(run_dir)

    # 5. A plain rerun finishes, recomputing nothing that was complete (the report, whose
    #    solution.json is missing, runs again: summary.csv and its checksum may be written twice).
    proc = snakemake(wf)
    assert proc.returncode == 0, proc.output[-3000:]
    assert_kept(before, run_dir, rewritten={Path("summary.csv"), Path("summary.csv.sha256")})
    assert_same_results(reference / RUN, run_dir)


def test_corrupt_layer_is_refused_then_rebuilt_by_following_the_message(reference, tmp_path):
    wf = copy_workflow(reference, tmp_path / "wf")
    run_dir = wf / RUN
    # The report is still to do, and a byte of a value layer it reads (age 4: start states) flipped.
    (run_dir / "summary.csv").unlink()
    (run_dir / "summary.csv.sha256").unlink()
    (run_dir / "solution.json").unlink()
    victim = RUN / "values" / "age_000004.zarr"
    manifest = RUN / "values" / "block_000004-000098.json"
    flip_byte(wf / victim / "values" / "c" / "0", 9)
    before = identities(run_dir)

    proc = snakemake(wf)
    assert proc.returncode != 0
    assert "Error in rule g2048_report" in proc.output
    log = (run_dir / "logs" / "report.log").read_text()
    assert f"strongsolve: error: layer {victim}: array 'values' cannot be read" in log
    assert (f"to rebuild it, run: `rm -rf {victim} && snakemake --cores all --forcerun "
            f"{manifest}`") in log
    assert not (run_dir / "solution.json").exists()
    assert_kept(before, run_dir)

    # Do what the message says (tests/games/g2048/test_hints.py runs such commands as printed): only that
    # layer is computed again.
    shutil.rmtree(wf / victim)
    proc = snakemake(wf, "--forcerun", str(manifest))
    assert proc.returncode == 0, proc.output[-3000:]
    assert_resumed(run_dir, "values", (4, 98, set(range(6, 99, 2))))
    assert_kept(before, run_dir, rewritten={manifest.relative_to(RUN)} | {
        rel for rel in before if rel.parts[:2] == ("values", "age_000004.zarr")} | {
        Path("values") / f"block_{a:06d}-{b:06d}.json" for a, b in BLOCKS})
    assert_same_results(reference / RUN, run_dir)


def test_layer_deleted_from_a_finished_run_is_rebuilt_by_following_the_message(reference, tmp_path):
    # A plain rerun of a finished run finds its final outputs up to date and does nothing, so the
    # message's command forces the layer's block; its job rebuilds the layer, the jobs after it
    # keep theirs.
    wf = copy_workflow(reference, tmp_path / "wf")
    run_dir = wf / RUN
    victim = RUN / "afterstates" / "age_000120.zarr"
    manifest = RUN / "afterstates" / "block_000100-000194.json"
    shutil.rmtree(wf / victim)
    proc = subprocess.run([str(SNAKEMAKE.parent / "strongsolve"), "2048", "backward", str(RUN),
                           "--rows", "2", "--cols", "3", "--p2", "0.9", "--target-tile", "0",
                           "--ages", "118-120"], cwd=wf, env=ENV, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode != 0
    assert (f"layer {victim} is missing; to rebuild it, run: `snakemake --cores all --forcerun "
            f"{manifest}`") in proc.stderr, proc.stderr[-2000:]
    before = identities(run_dir)
    proc = snakemake(wf, "--forcerun", str(manifest))
    assert proc.returncode == 0, proc.output[-3000:]
    assert_same_results(reference / RUN, run_dir)
    assert (wf / victim).is_dir() and (wf / manifest).is_file()
    assert_resumed(run_dir, "afterstates", (100, 194, set(range(100, 195, 2)) - {120}))
    assert_kept(before, run_dir, rewritten={manifest.relative_to(RUN), Path("summary.csv"),
                                             Path("summary.csv.sha256"), Path("solution.json")} | {
        Path(stage) / f"block_{a:06d}-{b:06d}.json" for stage in ("afterstates", "values")
        for a, b in BLOCKS})


def test_stage_commands_refuse_flipped_bytes(reference, tmp_path):
    """A flipped byte in a chunk, or in the attributes of zarr.json, stops the next stage with the
    message naming the file and how to rebuild it; nothing it would write is touched."""
    rng = random.Random(SEED + 1)
    run_dir = tmp_path / "2048_2x3"
    shutil.copytree(reference / RUN, run_dir)
    args = [str(run_dir), "--rows", "2", "--cols", "3"]

    def stage(*extra):
        return subprocess.run([sys.executable, "-m", "strongsolve", "2048", *extra, *args], env=ENV,
                              capture_output=True, text=True, timeout=TIMEOUT)

    chunk_layer = run_dir / "afterstates" / "age_000150.zarr"
    chunk = chunk_layer / "words" / "c" / "0"  # the Elias-Fano code of the IDs
    flip_byte(chunk, rng.randrange(chunk.stat().st_size))
    attrs_layer = run_dir / "afterstates" / "age_000060.zarr"
    meta = attrs_layer / "zarr.json"
    text = meta.read_text()
    start, end = text.index('"attributes"'), text.index('"zarr_format"')
    flip_byte(meta, rng.randrange(start, end))
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}

    proc = stage("backward", "--ages", "100-194")  # reads the afterstates of ages 100..198
    assert proc.returncode != 0
    assert f"layer {chunk_layer}: array 'words' cannot be read" in proc.stderr
    assert f"to rebuild it, run: `rm -rf {chunk_layer} && " in proc.stderr
    assert f"--forcerun {run_dir / 'afterstates' / 'block_000100-000194.json'}`" in proc.stderr
    proc = stage("report")  # reads the attributes of every forward layer
    assert proc.returncode != 0
    assert f"layer {attrs_layer}" in proc.stderr
    assert f"to rebuild it, run: `rm -rf {attrs_layer} && " in proc.stderr
    assert f"--forcerun {run_dir / 'afterstates' / 'block_000004-000098.json'}`" in proc.stderr
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before


def test_write_error_fails_the_job_clearly_and_the_run_resumes(reference, tmp_path):
    """The values directory becomes unwritable while the backward pass runs. Root ignores permission
    bits (and `chattr +i` needs a capability containers often lack), so its name is given to a file
    instead: every later write there fails, as in a read-only or vanished directory."""
    rng = random.Random(SEED + 2)
    wf = copy_workflow(reference, tmp_path / "wf")
    run_dir = wf / RUN
    # the backward pass of the first block (ages 4..98) and the report are still to do
    (run_dir / "values" / "block_000004-000098.json").unlink()
    for age in range(4, 99, 2):
        shutil.rmtree(run_dir / "values" / f"age_{age:06d}.zarr")
    (run_dir / "summary.csv").unlink()
    (run_dir / "summary.csv.sha256").unlink()
    (run_dir / "solution.json").unlink()
    done = len(layers(run_dir, "values"))

    proc = start(wf, "run")
    # well inside the block: the job then holds ages n + 2 and n + 4 in memory and fails on its
    # next write, not on a read of the vanished directory
    k = done + rng.randint(3, 30)  # of the block's 48
    wait_until(lambda: len(layers(run_dir, "values")) >= k, proc, f"{k} value layers")
    os.killpg(proc.pid, signal.SIGSTOP)  # freeze the run (it keeps its locks) ...
    try:
        # ... a second run here is refused while the first is alive ...
        second = snakemake(wf)
        assert second.returncode != 0
        assert "another Snakemake run seems active" in second.output
        assert "Directory cannot be locked" in second.output
        # ... and the values directory becomes unwritable.
        (run_dir / "values").rename(run_dir / "values.moved")
        (run_dir / "values").write_text("")
    finally:
        os.killpg(proc.pid, signal.SIGCONT)
    assert proc.wait(timeout=TIMEOUT) != 0
    output = (wf / "run.out").read_text()
    failed = re.search(r"Error in rule g2048_backward:.*?log: (\S+)", output, re.S)
    assert failed, output[-3000:]
    log = (wf / failed.group(1)).read_text()
    assert re.search(rf"strongsolve: error: cannot write {RUN}/values/(age_\d+\.zarr|block_\d+-\d+\.json): "
                     rf"not a directory \({RUN}/values\); nothing was written for it\. Free disk space or "
                     r"make the directory writable, then run `snakemake --cores all` again", log), log[-2000:]
    assert not (run_dir / "solution.json").exists() and not (run_dir / "summary.csv").exists()

    # Nothing that looks complete is partial: every layer under its final name verifies, and the
    # failed block has no manifest.
    (run_dir / "values").unlink()
    (run_dir / "values.moved").rename(run_dir / "values")
    assert_layers_complete(run_dir)
    cut = interrupted_block(run_dir, "values")
    assert cut is not None and cut[:2] == (4, 98)
    before = identities(run_dir)
    proc = snakemake(wf)
    assert proc.returncode == 0, proc.output[-3000:]
    assert_kept(before, run_dir)
    assert_resumed(run_dir, "values", cut)
    assert_same_results(reference / RUN, run_dir)
