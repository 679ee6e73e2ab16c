"""Every fault message of a finished workflow run leads to the right repair, followed literally.

One run of the real workflow is solved per module, with a configuration that is not config.yaml's
(a config file plus a ``--config`` value: 2x3 boards, 32 ages per job, so four blocks per stage), in
a workflow copy whose config.yaml is the default 3x3 run: a repair command that forgot the run's
configuration would rebuild the 3x3 run instead and leave the 2x3 damage in place. Each test damages
a copy of it, takes the command out of the message the user sees (a job's log, or what `strongsolve`
prints), runs it as printed in a shell in the workflow directory, and checks the repair: the damaged
file is back byte for byte, every other layer is untouched (same bytes, same mtime), and the expected
score is the same to the bit (and the naive solver's).
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from naive import g2048 as naive
from strongsolve.games.g2048.rules.boardtext import format_board
from strongsolve.games.g2048.saved import Run

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
RUN = Path("results") / "2048_2x3"
CONFIGFILE = "repair.yaml"
CONFIG = "games: [g2048]\ng2048: {rows: 2, cols: 3, threads: 1}\n"
CONFIG_ARG = "g2048={ages_per_job: 32}"  # blocks 4-66, 68-130, 132-194, 196-252
# the workflow's and the CLI's commands from this environment, as a user's activated .venv gives them
ENV = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", NUMBA_NUM_THREADS="1")
ENV.pop("STRONGSOLVE_RERUN", None)
TIMEOUT = 300


def run_in(wf, command):
    """Run a shell command in the workflow directory, as a user would paste it."""
    proc = subprocess.run(["bash", "-c", command], cwd=wf, env=ENV, capture_output=True, text=True,
                          timeout=TIMEOUT)
    proc.output = proc.stdout + proc.stderr
    return proc


def printed_command(text):
    """The command a message tells the user to run: its last `backquoted` part."""
    commands = re.findall(r"`([^`]+)`", text)
    assert commands, f"no command in the message:\n{text[-2000:]}"
    return commands[-1]


def follow(wf, message):
    """Run the message's command literally; it must succeed. Returns the command."""
    command = printed_command(message)
    proc = run_in(wf, command)
    assert proc.returncode == 0, f"{command}\n{proc.output[-3000:]}"
    return command


def layer_files(run_dir):
    """(bytes, mtime) of every file of every layer, by path relative to the run."""
    return {p.relative_to(run_dir): (p.read_bytes(), p.stat().st_mtime_ns)
            for stage in ("afterstates", "values") for p in sorted((run_dir / stage).rglob("*"))
            if p.is_file() and ".zarr" in p.parent.as_posix() and not p.name.startswith(".")}


def assert_repaired(ref_dir, run_dir, before, victim=None):
    """The victim layer has the reference's bytes again, every other layer file is the same file
    as before the damage (bytes and mtime), and solution.json has the reference's expected score."""
    after = layer_files(run_dir)
    assert set(after) == set(before)
    for rel, (data, mtime) in after.items():
        if victim is not None and rel.parts[:2] == victim.parts[-2:]:
            assert data == (ref_dir / rel).read_bytes(), f"{rel} differs from the reference"
        else:
            assert (data, mtime) == before[rel], f"{rel} was rewritten"
    ref, doc = (json.loads((d / "solution.json").read_text()) for d in (ref_dir, run_dir))
    assert doc["expected_score"] == ref["expected_score"]  # bit for bit
    assert doc["start_states"] == ref["start_states"]


def flip_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The solved workflow directory (its 2x3 run made with the config file and --config value)."""
    wf = tmp_path_factory.mktemp("repair") / "wf"
    wf.mkdir()
    for name in ("Snakefile", "config.yaml", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, wf / name)
    (wf / CONFIGFILE).write_text(CONFIG)
    proc = run_in(wf, f"snakemake --cores 2 --configfile {CONFIGFILE} --config '{CONFIG_ARG}'")
    assert proc.returncode == 0, proc.output[-3000:]
    doc = json.loads((wf / RUN / "solution.json").read_text())
    assert doc["expected_score"] == pytest.approx(naive.solve(2, 3).expected_score, rel=1e-9)
    assert doc["rerun"] == f"snakemake --cores all --configfile {CONFIGFILE} --config '{CONFIG_ARG}'"
    return wf


@pytest.fixture
def wf(reference, tmp_path):
    """A copy of the solved workflow directory (mtimes kept; Snakemake's own records left out)."""
    return Path(shutil.copytree(reference, tmp_path / "wf", ignore=shutil.ignore_patterns(".snakemake")))


def test_corrupt_value_layer_met_by_a_job(reference, wf):
    # A run stopped before its report (solution.json not yet written) and a value layer the report
    # reads (age 6: the start states' afterstates) damaged: the rerun's job stops with the message.
    victim = RUN / "values" / "age_000006.zarr"
    flip_byte(wf / victim / "values" / "c" / "0")
    (wf / RUN / "solution.json").unlink()
    before = layer_files(wf / RUN)
    proc = run_in(wf, f"snakemake --cores 2 --configfile {CONFIGFILE} --config '{CONFIG_ARG}'")
    assert proc.returncode != 0
    log = (wf / RUN / "logs" / "report.log").read_text()
    assert f"layer {victim}: array 'values' cannot be read" in log
    command = follow(wf, log)
    assert command == (f"rm -rf {victim} && snakemake --cores all --configfile {CONFIGFILE} --config "
                       f"'{CONFIG_ARG}' --forcerun {RUN}/values/block_000004-000066.json")
    assert_repaired(reference / RUN, wf / RUN, before, victim)


def test_corrupt_afterstate_layer_met_by_play(reference, wf):
    victim = RUN / "afterstates" / "age_000100.zarr"
    flip_byte(wf / victim / "words" / "c" / "0")
    before = layer_files(wf / RUN)
    proc = run_in(wf, f"strongsolve 2048 play {RUN} --games 50 --json")
    assert proc.returncode == 2
    assert f"layer {victim}: array 'words' cannot be read" in proc.stderr
    command = follow(wf, proc.stderr)
    assert command.endswith(f"--forcerun {RUN}/afterstates/block_000068-000130.json")
    assert_repaired(reference / RUN, wf / RUN, before, victim)
    assert run_in(wf, f"strongsolve 2048 play {RUN} --games 50 --json").returncode == 0


def test_deleted_value_layer_met_by_query(reference, wf):
    victim = RUN / "values" / "age_000150.zarr"
    # a state of age 150: a 2 spawned into a reachable afterstate of age 148
    ids, _ = Run(wf / RUN, 2, 3).load_afterstates(148)
    after = int(ids[0])
    cell = next(i for i in range(6) if not (after >> (4 * i)) & 15)
    board = format_board(after | 1 << (4 * cell), 2, 3)
    assert run_in(wf, f"strongsolve 2048 query {RUN} '{board}'").returncode == 0
    before = layer_files(wf / RUN)
    shutil.rmtree(wf / victim)
    for query in (f"strongsolve 2048 query {RUN} '{board}'", f"strongsolve 2048 play {RUN} --games 50"):
        proc = run_in(wf, query)
        assert proc.returncode == 2
        assert "forward-only" not in proc.stderr
        assert f"layer {victim} is missing; to rebuild it, run: `snakemake --cores all --configfile " \
               f"{CONFIGFILE} --config '{CONFIG_ARG}' --forcerun {RUN}/values/block_000132-000194.json`" \
               in proc.stderr, proc.stderr
    follow(wf, proc.stderr)
    assert_repaired(reference / RUN, wf / RUN, before, victim)


def test_deleted_block_manifest_found_by_inspect(reference, wf):
    manifest = RUN / "afterstates" / "block_000068-000130.json"
    (wf / manifest).unlink()
    before = layer_files(wf / RUN)
    proc = run_in(wf, f"strongsolve inspect {RUN}")
    assert proc.returncode == 0, proc.output
    problem = next(line for line in proc.stdout.splitlines() if line.startswith("problem:"))
    assert "afterstates layers of ages 68 to 130 have no block manifest" in problem
    command = follow(wf, problem)
    assert command.endswith(f"--forcerun {manifest}")
    assert json.loads((wf / manifest).read_text())["ages"] == json.loads(
        (reference / manifest).read_text())["ages"]
    assert_repaired(reference / RUN, wf / RUN, before)
    assert "problem:" not in run_in(wf, f"strongsolve inspect {RUN}").stdout


def test_deleted_solution_json_found_by_inspect(reference, wf):
    (wf / RUN / "solution.json").unlink()
    before = layer_files(wf / RUN)
    proc = run_in(wf, f"strongsolve inspect {RUN}")
    assert proc.returncode == 0, proc.output
    problem = next(line for line in proc.stdout.splitlines() if line.startswith("problem:"))
    assert f"{RUN / 'solution.json'} is missing" in problem
    # solution.json held the run's command; the one rebuilt from the run's files sets the same
    # parameters with --config (its blocks: the length of the first one)
    command = follow(wf, problem)
    assert command == ("snakemake --cores all --config results=results preset= 'games=[g2048]' "
                       f"'g2048={{rows: 2, cols: 3, spawn: {{p2: 0.9, p4: {1 - 0.9!r}}}, objective: score, "
                       "ages_per_job: 32}' max_age=null")
    assert_repaired(reference / RUN, wf / RUN, before)


def test_preset_run_records_and_repairs_with_its_preset(tmp_path):
    # `--config preset=...` (the README's way to pick a preset): the smallest one, 2x2
    wf = tmp_path / "wf"
    wf.mkdir()
    for name in ("Snakefile", "config.yaml", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, wf / name)
    proc = run_in(wf, "snakemake --cores 2 --config preset=2048_2x2")
    assert proc.returncode == 0, proc.output[-3000:]
    run = Path("results") / "2048_2x2"
    ref = json.loads((wf / run / "solution.json").read_text())
    assert ref["rerun"] == "snakemake --cores all --config preset=2048_2x2"
    assert ref["expected_score"] == pytest.approx(naive.solve(2, 2).expected_score, rel=1e-9)
    victim = run / "values" / "age_000010.zarr"
    flip_byte(wf / victim / "values" / "c" / "0")
    proc = run_in(wf, f"strongsolve 2048 play {run} --games 20")
    assert proc.returncode == 2
    command = follow(wf, proc.stderr)
    assert command == (f"rm -rf {victim} && snakemake --cores all --config preset=2048_2x2 "
                       f"--forcerun {run}/values/block_000004-000060.json")
    assert json.loads((wf / run / "solution.json").read_text()) == ref
