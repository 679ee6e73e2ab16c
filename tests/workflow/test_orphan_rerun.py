"""kill -9 of the Snakemake main process alone, then an immediate rerun, three times.

The killed main process leaves its running job alive (an orphan) and the rerun starts the same job
again; the run's writer lock (strongsolve.store.lock) makes the rerun's job wait for the orphan.
Here the kills land at fixed points of a 2x3 run (after 10 and 70 forward layers, after 30 value
layers), each followed at once by a rerun, the last of which runs to the end. Every layer,
summary.csv and solution.json must then be byte for byte as an uninterrupted run's, no rerun may
fail, no layer under its final name may be damaged at any kill, and a further rerun has nothing to
do. ``bench/kill_main_rerun.py`` does the same 20 times at random moments of a 2x4 run.
"""

import json
import os
import signal
import time

import pytest

from support.crash import (RUN, TIMEOUT, assert_layers_complete, layers, make_workflow,
                           snakemake, start, wait_until)

pytestmark = pytest.mark.slow


def orphans_of(pgids):
    """Live processes of the process groups ``pgids`` (the killed Snakemakes' jobs)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            text = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[2]) in pgids and fields[0] != "Z":
            out.append(int(pid))
    return out


def result_files(run_dir):
    """Relative path -> bytes of every layer file and summary.csv, and solution.json's document
    without the command that made the run (``rerun``, null for the reference made outside the
    workflow) and the checksum over it (the block manifests hold timings and depend on
    ages_per_job; logs and plots are not results)."""
    out = {p.relative_to(run_dir): p.read_bytes() for p in sorted(run_dir.rglob("*"))
           if p.is_file() and (any(part.endswith(".zarr") for part in p.relative_to(run_dir).parts)
                               or p.name == "summary.csv")}
    doc = json.loads((run_dir / "solution.json").read_text())
    out["solution.json"] = {k: v for k, v in doc.items() if k not in ("rerun", "checksum")}
    return out


def test_kill_main_alone_then_rerun_at_once_three_times(solved, tmp_path):
    wf = make_workflow(tmp_path / "wf")
    run_dir = wf / RUN
    points = [("afterstates", 10), ("afterstates", 70), ("values", 30)]
    killed, outputs = set(), []
    proc = start(wf, "run0")
    for i, (stage, k) in enumerate(points):
        outputs.append(proc.out_path)
        wait_until(lambda: len(layers(run_dir, stage)) >= k, proc, f"{k} {stage} layers")
        os.kill(proc.pid, signal.SIGKILL)  # the main process alone: its job lives on
        proc.wait()
        killed.add(proc.pid)
        assert_layers_complete(run_dir)
        proc = start(wf, f"run{i + 1}")  # at once, beside the orphan
    assert proc.wait(timeout=TIMEOUT) == 0, proc.out_path.read_text()[-3000:]
    outputs.append(proc.out_path)
    deadline = time.monotonic() + TIMEOUT  # orphans that waited behind the last run: all kept
    while orphans_of(killed):
        assert time.monotonic() < deadline, f"orphaned jobs still alive: {orphans_of(killed)}"
        time.sleep(0.05)
    for out in outputs:
        text = out.read_text()
        assert "Error in rule" not in text and "already exists" not in text, text[-3000:]
    reference = solved(2, 3)  # an uninterrupted run (pipeline.solve: the same stage functions)
    got, expected = result_files(run_dir), result_files(reference)
    assert got.keys() == expected.keys() and len(got) > 500
    assert [rel for rel, data in got.items() if data != expected[rel]] == []
    assert [p for p in run_dir.rglob(".*")] == []  # no temporary, no lock file
    again = snakemake(wf, "--dry-run")
    assert again.returncode == 0 and "Nothing to be done" in again.output, again.output[-2000:]
