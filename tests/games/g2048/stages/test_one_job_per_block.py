"""A run of one block solved by one job, and small layers flushed once per block.

The workflow runs a run whose ages make one block (every 3x3 run) as one ``g2048_solve`` job:
forward then backward in one process, the afterstates kept in memory between them
(:func:`strongsolve.games.g2048.stages.pipeline.solve_block`). Small layers are written without their own
fsyncs and the stage flushes the file system once before its block manifest
(``write_layer(..., durable=False)``, :func:`strongsolve.store.atomic.sync_file_system`). Checked
here: the same bytes as the per-stage jobs, the naive solver's values, no afterstate layer read back,
one flush per stage before its manifest, and resume after SIGKILL.
"""

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from naive import g2048 as naive
from strongsolve.cli import main as cli_main
from strongsolve.games.g2048.stages import pipeline
from strongsolve.games.g2048 import saved as run_module
from strongsolve.games.g2048.stages.backward import run_backward
from strongsolve.games.g2048.stages.forward import run_forward
from strongsolve.games.g2048.stages.kept import KeptLayers
from strongsolve.games.g2048.stages.report import run_report
from strongsolve.games.g2048.saved import Run
from strongsolve.store import atomic, layers
from strongsolve.games.g2048 import hints
from strongsolve.games.g2048.hints import block_target, inferred_command, repair_command
from strongsolve.store.layers import read_layer, write_layer
from support.crash import (assert_layers_complete, assert_same_results, kill_group,
                           layers as layer_paths, make_workflow, snakemake, start, wait_until)

SEED = int(os.environ.get("STRONGSOLVE_CRASH_SEED", "20261202"))


def tree(root):
    """Every layer file under ``root`` (relative path -> bytes); block manifests and logs aside
    (blocks cut differently have different manifests)."""
    return {p.relative_to(root): p.read_bytes() for p in sorted(Path(root).rglob("*"))
            if p.is_file() and not p.name.startswith("block_") and "logs" not in p.parts}


# ---- in one process ------------------------------------------------------------------------------

def test_kept_layers_hold_up_to_their_budget():
    kept = KeptLayers(max_bytes=100)
    a = np.arange(10, dtype=np.uint64)  # 80 bytes
    assert kept.add(8, a) and kept.bytes == 80
    assert not kept.add(10, np.arange(4, dtype=np.uint64))  # 112 > 100: not held
    assert kept.add(12, np.arange(2, dtype=np.uint64)) and kept.bytes == 96
    assert 10 not in kept and len(kept) == 2
    assert kept.pop(10) is None
    assert kept.pop(8) is a and kept.bytes == 16 and 8 not in kept


def test_solve_block_keeps_the_afterstates_and_writes_the_per_stage_bytes(tmp_path, monkeypatch):
    ages = Run(tmp_path, 2, 3).ages()
    ref = Run(tmp_path / "stages" / "2048_2x3", 2, 3)
    run_forward(ref, ages[:60])
    run_forward(ref, ages[60:])
    run_backward(ref, ages[60:])
    run_backward(ref, ages[:60])

    reads = []
    real_read = run_module.read_layer
    monkeypatch.setattr(run_module, "read_layer", lambda path, *a: reads.append(Path(path)) or real_read(path, *a))
    one = Run(tmp_path / "one" / "2048_2x3", 2, 3)
    pipeline.solve_block(one, ages)
    assert not [p for p in reads if p.parent.name == "afterstates"], "the backward read afterstates back"
    assert tree(one.directory) == tree(ref.directory)
    for stage in ("afterstates", "values"):
        rows = [r for m in sorted((ref.directory / stage).glob("block_*.json"))
                for r in json.loads(m.read_text())["ages"]]
        one_rows = json.loads(one.manifest_path(stage, ages[0], ages[-1]).read_text())["ages"]
        assert sorted(one_rows, key=lambda r: r["age"]) == sorted(rows, key=lambda r: r["age"])
    doc = run_report(one)
    assert doc["expected_score"] == pytest.approx(naive.solve(2, 3).expected_score, rel=1e-9)

    # with no budget the backward reads every afterstate layer back, and writes the same values
    reads.clear()
    none = Run(tmp_path / "none" / "2048_2x3", 2, 3)
    pipeline.solve_block(none, ages, keep_bytes=0)
    counts = {r["age"]: r["num_afterstates"] for r in
              json.loads(none.manifest_path("afterstates", ages[0], ages[-1]).read_text())["ages"]}
    assert 0 in counts.values()  # an empty layer fits in no budget, and is kept
    assert {p.name for p in reads if p.parent.name == "afterstates"} == {
        f"age_{n:06d}.zarr" for n in ages if counts[n]}
    assert tree(none.directory / "values") == tree(one.directory / "values")


def test_a_memory_limit_caps_what_is_kept():
    assert pipeline.keep_budget() == pipeline.KEEP_BYTES
    assert pipeline.keep_budget(memory_limit=1000) == 1000
    assert pipeline.keep_budget(memory_limit=1 << 40) == pipeline.KEEP_BYTES


def test_small_layer_without_fsync_has_the_same_bytes(tmp_path, monkeypatch):
    rng = np.random.default_rng(20)
    arrays = {"values": rng.random(3000), "ids": np.sort(rng.integers(0, 1 << 60, 500, dtype=np.uint64))}
    write_layer(tmp_path / "durable.zarr", arrays, {"age": 8})
    fsyncs = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: fsyncs.append(fd) or real_fsync(fd))
    write_layer(tmp_path / "later.zarr", arrays, {"age": 8}, durable=False)
    assert fsyncs == []
    assert tree(tmp_path / "later.zarr") == tree(tmp_path / "durable.zarr")
    got, attrs = read_layer(tmp_path / "later.zarr")
    assert attrs["age"] == 8 and all(np.array_equal(got[k], arrays[k]) for k in arrays)


def test_each_stage_flushes_the_file_system_once_before_its_manifest(tmp_path, monkeypatch):
    run = Run(tmp_path / "2048_2x2", 2, 2)
    flushes = []

    def flush(path):
        manifests = sorted(p.name for p in Path(path).glob("*/block_*.json"))
        flushes.append((Path(path), manifests))
        atomic.sync_file_system(path)

    for module in ("forward", "backward"):
        monkeypatch.setattr(f"strongsolve.games.g2048.stages.{module}.sync_file_system", flush)
    fsyncs = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: fsyncs.append(fd) or real_fsync(fd))
    pipeline.solve_block(run, run.ages())
    assert flushes == [(run.directory, []), (run.directory, ["block_000004-000060.json"])]
    # the layers (29 per stage, three or four files each) had none of their own: only the two
    # manifests were flushed, each with its directory
    assert len(fsyncs) == 4


def test_solve_block_report_needs_every_age_of_the_run(tmp_path, capsys):
    run_dir = tmp_path / "2048_2x2"
    code = cli_main(["2048", "solve-block", str(run_dir), "--rows", "2", "--cols", "2",
                     "--ages", "4-30", "--report"])
    err = capsys.readouterr().err
    assert code == 2 and "--report needs every age of the run in the block, --ages 4-60" in err
    assert not run_dir.exists()  # refused before anything was written


def test_solve_block_report_writes_the_report_and_plots(tmp_path, capsys):
    run_dir = tmp_path / "2048_2x2"
    code = cli_main(["2048", "solve-block", str(run_dir), "--rows", "2", "--cols", "2",
                     "--ages", "4-60", "--report"])
    assert code == 0
    doc = json.loads((run_dir / "solution.json").read_text())
    assert doc["expected_score"] == pytest.approx(naive.solve(2, 2).expected_score, rel=1e-9)
    assert f"expected score {doc['expected_score']!r} points" in capsys.readouterr().err
    assert sorted(p.name for p in (run_dir / "plots").iterdir()) == ["layers_per_age.png", "values_per_age.png"]


def test_the_program_exits_with_the_commands_status_and_a_frozen_collector(tmp_path):
    """``strongsolve`` (cli.run) skips the interpreter's last garbage collections (gc.freeze) and
    keeps the command's exit status; atexit handlers still run."""
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
            "from strongsolve.cli import run\n"
            f"sys.argv = ['strongsolve', '2048', 'plots', {str(tmp_path / 'nowhere')!r}]\n"
            "run()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "strongsolve: error:" in proc.stderr
    assert proc.stdout == "frozen True\n"


def test_sync_file_system_names_a_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        atomic.sync_file_system(tmp_path / "nowhere")


def test_repair_hint_of_a_one_job_run_forces_its_rule(tmp_path):
    run_dir = tmp_path / "2048_3x3"
    (run_dir / "logs").mkdir(parents=True)
    layer = run_dir / "values" / "age_000100.zarr"
    assert block_target(layer) == "g2048_backward"  # several blocks (or no job yet): the stage's rule
    (run_dir / "logs" / "solve_000004-002044.log").write_text("")
    assert block_target(layer) == hints.ONE_JOB_RULE == "g2048_solve"
    assert repair_command(layer).endswith("--forcerun g2048_solve")


def test_a_one_job_run_is_known_as_a_snakemake_run_by_its_log(tmp_path):
    run_dir = tmp_path / "results" / "2048_2x2"
    (run_dir / "afterstates").mkdir(parents=True)
    (run_dir / "afterstates" / "block_000004-000060.json").write_text(json.dumps(
        {"stage": "forward", "game": "2048", "rows": 2, "cols": 2, "p2": 0.9, "target_tile": 0, "ages": []}))
    assert inferred_command(run_dir).startswith("strongsolve 2048 solve")  # no job log: not Snakemake's
    (run_dir / "logs").mkdir()
    (run_dir / "logs" / "solve_000004-000060.log").write_text("")
    command = inferred_command(run_dir)
    assert command.startswith("snakemake --cores all") and "ages_per_job: 29" in command


# ---- the workflow --------------------------------------------------------------------------------

ONE_BLOCK = ("results: results\ngames: [g2048]\nmax_age: null\n"
             "g2048: {rows: 2, cols: 3, ages_per_job: 128, threads: 1}\n")
RUN = Path("results") / "2048_2x3"


@pytest.fixture(scope="module")
def one_job_reference(tmp_path_factory):
    wf = make_workflow(tmp_path_factory.mktemp("one") / "wf")
    (wf / "config.yaml").write_text(ONE_BLOCK)
    proc = snakemake(wf)
    assert proc.returncode == 0, proc.output[-3000:]
    return wf


@pytest.mark.slow
def test_one_block_run_is_one_job_with_the_naive_values(one_job_reference):
    run_dir = one_job_reference / RUN
    # one job: the stages, then the report and the plots (in the same process)
    logs = sorted(p.name for p in (run_dir / "logs").glob("*.log") if ".attempts" not in p.name)
    assert logs == ["solve_000004-000252.log"]
    assert sorted(p.name for p in (run_dir / "plots").iterdir()) == ["layers_per_age.png", "values_per_age.png"]
    assert (run_dir / "summary.csv").is_file() and (run_dir / "summary.csv.sha256").is_file()
    doc = json.loads((run_dir / "solution.json").read_text())
    ref = naive.solve(2, 3)
    counts = naive.canonical_counts(2, 3)
    assert doc["num_states"] == sum(c[0] for c in counts.values())
    assert doc["num_afterstates"] == sum(c[1] for c in counts.values())
    assert doc["expected_score"] == pytest.approx(ref.expected_score, rel=1e-9)
    again = snakemake(one_job_reference)
    assert again.returncode == 0 and "Nothing to be done" in again.output


@pytest.mark.slow
def test_one_job_killed_twice_then_plain_rerun_gives_identical_results(one_job_reference, tmp_path):
    rng = random.Random(SEED)
    wf = make_workflow(tmp_path / "wf")
    (wf / "config.yaml").write_text(ONE_BLOCK)
    run_dir = wf / RUN
    log = run_dir / "logs" / "solve_000004-000252.log"

    proc = start(wf, "run1")  # killed in the forward part
    k = rng.randint(10, 110)
    wait_until(lambda: len(layer_paths(run_dir, "afterstates")) >= k, proc, f"{k} forward layers")
    kill_group(proc)
    assert_layers_complete(run_dir)
    forward_kept = len(layer_paths(run_dir, "afterstates"))

    proc = start(wf, "run2")  # killed in the backward part
    k = rng.randint(10, 110)
    wait_until(lambda: len(layer_paths(run_dir, "values")) >= k, proc, f"{k} value layers")
    kill_group(proc)
    assert_layers_complete(run_dir)
    kept = {int(a) for a in re.findall(r"forward age (\d+): .*verified \(kept\)", log.read_text())}
    assert len(kept) >= forward_kept  # the first run's layers were verified and kept
    values_kept = len(layer_paths(run_dir, "values"))

    proc = snakemake(wf)
    assert proc.returncode == 0, proc.output[-3000:]
    text = log.read_text()
    assert len(re.findall(r"backward age \d+: .*verified \(kept\)", text)) == values_kept
    assert len(re.findall(r"forward age \d+: .*verified \(kept\)", text)) == 125
    assert_same_results(one_job_reference / RUN, run_dir)
