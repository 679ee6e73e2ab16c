"""Fault messages name the run's own repair command, and the CLI's advice fits the command.

The workflow's side (a preset or config-file run repaired by following the printed command) is in
tests/games/g2048/test_hints.py; here, the commands themselves and the runs made by ``strongsolve 2048 solve``
(the in-process pipeline), whose repairs are followed literally too.
"""

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from strongsolve.cli import main
from strongsolve.games.g2048.hints import rerun_command
from strongsolve.rerun import RERUN_VARIABLE, snakemake_command

BIN = Path(sys.executable).parent
ENV = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", NUMBA_NUM_THREADS="1")
ENV.pop(RERUN_VARIABLE, None)


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def printed_command(text):
    commands = re.findall(r"`([^`]+)`", text)
    assert commands, text
    return commands[-1]


def follow(cwd, message):
    """Run the message's command as printed, in a shell; it must succeed."""
    command = printed_command(message)
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    return command


@pytest.fixture
def run_copy(solved, tmp_path):
    """A copy of the session's 2x3 solve (``strongsolve 2048 solve``: no Snakemake), and its
    solution document."""
    directory = Path(shutil.copytree(solved(2, 3), tmp_path / "2048_2x3"))
    return directory, json.loads((directory / "solution.json").read_text())


# --- the commands -----------------------------------------------------------------------------

def test_snakemake_command_repeats_the_invocations_configuration(tmp_path):
    files = [tmp_path / "workflow" / "presets" / "2048_2x4.yaml", tmp_path / "more.yaml",
             Path("/elsewhere/x.yaml")]
    command = snakemake_command(files, ["preset=2048_2x4", "g2048={ages_per_job: 32}"],
                                profile="profiles/slurm", cwd=tmp_path)
    assert command == ("snakemake --cores all --profile profiles/slurm --configfile "
                       "workflow/presets/2048_2x4.yaml more.yaml /elsewhere/x.yaml --config "
                       "preset=2048_2x4 'g2048={ages_per_job: 32}'")
    # one --configfile flag for all files: Snakemake keeps only the last of repeated flags
    assert shlex.split(command).count("--configfile") == 1
    assert snakemake_command() == "snakemake --cores all"


def test_rerun_command_prefers_the_workflows_then_solution_json(monkeypatch, tmp_path):
    recorded = {"rerun": "snakemake --cores all --config preset=2048_2x4"}
    (tmp_path / "solution.json").write_text(json.dumps(recorded))
    monkeypatch.delenv(RERUN_VARIABLE, raising=False)
    assert rerun_command("g2048_backward", run_dir=tmp_path) == (
        "snakemake --cores all --config preset=2048_2x4 --forcerun g2048_backward")
    monkeypatch.setenv(RERUN_VARIABLE, "snakemake --cores all --configfile 'my file.yaml'")
    assert rerun_command("results/x/block_000004-000010.json", run_dir=tmp_path) == (
        "snakemake --cores all --configfile 'my file.yaml' --forcerun results/x/block_000004-000010.json")


# --- runs made by `strongsolve 2048 solve` --------------------------------------------------------

def test_solution_json_of_a_run_made_outside_the_workflow_has_no_rerun(run_copy):
    assert run_copy[1]["rerun"] is None


def test_deleted_value_layer_names_the_layer_and_the_solve_that_rebuilds_it(run_copy, capsys, tmp_path):
    directory, doc = run_copy
    victim = directory / "values" / "age_000006.zarr"
    data = {p: p.read_bytes() for p in victim.rglob("*") if p.is_file()}
    shutil.rmtree(victim)
    code, _, err = cli(capsys, "2048", "play", directory, "--games", 20)
    assert code == 2 and "forward-only" not in err
    assert err.strip() == (f"strongsolve: error: layer {victim} is missing; to rebuild it, run: "
                           f"`strongsolve 2048 solve {directory} --rows 2 --cols 3 --p2 0.9 --target-tile 0`")
    follow(tmp_path, err)
    assert {p: p.read_bytes() for p in victim.rglob("*") if p.is_file()} == data
    assert json.loads((directory / "solution.json").read_text())["expected_score"] == doc["expected_score"]


def test_inspect_ignores_a_stray_layer_directory_and_says_how_to_remove_it(run_copy, capsys, tmp_path):
    directory, doc = run_copy
    stray = directory / "afterstates" / "age_000999.zarr"
    stray.mkdir()
    code, out, err = cli(capsys, "inspect", directory, "--json")
    assert code == 0, err
    table = json.loads(out)
    assert table["expected_score"] == pytest.approx(doc["expected_score"], rel=1e-15)
    assert max(r["age"] for r in table["ages"]) == doc["max_age"]
    assert table["problems"] == [{"problem": f"{stray} is not a layer of this run (ages are even, from 4 "
                                             "to 252); every command ignores it",
                                  "command": f"rm -rf {stray}"}]
    code, out, _ = cli(capsys, "inspect", directory)
    assert code == 0 and "age_000254" not in out
    follow(tmp_path, [line for line in out.splitlines() if line.startswith("problem:")][0])
    assert not stray.exists()
    assert "problem:" not in cli(capsys, "inspect", directory)[1]


def test_inspect_of_a_half_done_backward_pass_names_no_missing_layer(run_copy, capsys, tmp_path):
    # as a killed `solve` leaves it: the backward pass went down to age 102 of the block 4-130
    directory, doc = run_copy
    (directory / "solution.json").unlink()
    (directory / "values" / "block_000004-000130.json").unlink()
    for n in range(4, 101, 2):
        shutil.rmtree(directory / "values" / f"age_{n:06d}.zarr")
    code, out, err = cli(capsys, "inspect", directory)
    assert code == 0, err
    assert "backward pass unfinished" in out.splitlines()[0]
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    solve = f"strongsolve 2048 solve {directory} --rows 2 --cols 3 --p2 0.9 --target-tile 0"
    assert problems == [
        f"problem: backward pass unfinished: 49 of 125 value layers to go; finish it with: `{solve}`",
        "problem: values layers of ages 102 to 130 have no block manifest (a job stopped before "
        "writing it, or it was deleted); unless a run is still going, rebuild it with: "
        f"`{solve}`"]
    assert "rm -rf" not in out  # nothing to delete: no layer is damaged
    follow(tmp_path, problems[0])
    assert json.loads((directory / "solution.json").read_text())["expected_score"] == doc["expected_score"]
    assert "problem:" not in cli(capsys, "inspect", directory)[1]


def test_forward_only_run_says_how_to_solve_it_to_the_end(tmp_path, capsys):
    from strongsolve.games.g2048.stages import pipeline

    directory = tmp_path / "2048_2x2"
    with open(os.devnull, "w") as log:
        pipeline.solve(directory, 2, 2, max_age=20, log=log)
    code, _, err = cli(capsys, "2048", "query", directory, "2 2 / . .")
    assert code == 2
    assert err.strip().endswith(f"has no values: it is a forward-only run (or its backward pass has "
                                f"not started); solve it to the last age with `strongsolve 2048 solve "
                                f"{directory} --rows 2 --cols 2 --p2 0.9 --target-tile 0`")


# --- shutbox ------------------------------------------------------------------------------------

def test_shutbox_json_writes_an_infinite_value_as_null(capsys, tmp_path):
    # one face: every roll is (1, 1), so only cards 1 and 2 can ever be flipped; setting card 3 never
    # happens and the expected number of rolls is infinite
    out_file = tmp_path / "sb.json"
    code, out, _ = cli(capsys, "shutbox", "--cards", 3, "--faces", 1, "--json", "--check",
                       "--output", out_file)
    assert code == 0

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    for text in (out, out_file.read_text()):
        doc = json.loads(text, parse_constant=refuse)
        assert doc["value"] is None
        assert doc["checks"]["other_method"] is None and doc["checks"]["exact_policy_value"] is None
    code, out, _ = cli(capsys, "shutbox", "--cards", 3, "--faces", 1)
    assert code == 0 and "value inf rolls" in out
    assert math.isinf(float(out.split("value ")[1].split()[0]))


def test_shutbox_output_directory_is_refused_with_advice_for_shutbox(capsys, tmp_path):
    code, out, err = cli(capsys, "shutbox", "--cards", 3, "--faces", 2, "--output", tmp_path)
    assert code == 2 and out == ""
    assert err.strip() == (f"strongsolve: error: --output {tmp_path} is a directory; allowed: a file "
                           f"name, e.g. {tmp_path / 'shutbox.json'}")
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = cli(capsys, "shutbox", "--cards", 3, "--faces", 2, "--output", blocker / "x.json")
    assert code == 1
    assert err.strip() == (f"strongsolve: error: cannot write --output {blocker / 'x.json'}: not a "
                           f"directory ({blocker}); nothing was written. Free disk space or give a "
                           "writable file, then run the same command again")
    assert list(tmp_path.iterdir()) == [blocker]


def test_a_foreign_value_store_is_named_and_its_repair_rebuilds_all_of_it(run_copy, solved, capsys,
                                                                          tmp_path):
    """A 2x2 run's values/ copied over a 2x3 run's: the first layer read is named as another run's,
    and the one command printed removes the whole store and solves it again; followed as printed,
    every value layer is the 2x3 run's again, byte for byte."""
    directory, doc = run_copy
    values = directory / "values"
    layers = lambda: {p: p.read_bytes() for p in values.glob("age_*.zarr/**/*") if p.is_file()}  # noqa: E731
    data = layers()  # the layers (a block manifest holds its job's timing)
    shutil.rmtree(values)
    shutil.copytree(solved(2, 2) / "values", values)
    code, _, err = cli(capsys, "2048", "play", directory, "--games", 20)
    assert code == 2
    assert "has cols = 2 but this run needs 3; it belongs to another run, so the store " \
           f"{values} is not this run's. Remove it and build it again: `rm -rf {values} && " \
           f"strongsolve 2048 solve {directory} --rows 2 --cols 3 --p2 0.9 --target-tile 0`" in err, err
    follow(tmp_path, err)
    assert len(data) > 100 and layers() == data
    assert cli(capsys, "2048", "play", directory, "--games", 20)[0] == 0
