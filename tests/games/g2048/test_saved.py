"""Run folders identify every parameter exactly, and a run never touches another run's folder
(p2 0.8 and 0.8000004 shared one folder, and the second run's refused job deleted the
first run's forward block manifest)."""

import json
import os
import re
import shutil
import subprocess

import pytest

from naive import g2048 as naive
from strongsolve.cli import main
from strongsolve.games.g2048.stages import pipeline
from strongsolve.games.g2048.saved import (ForeignRunError, Run, check_run_directory, p2_text,
                                           run_name)
from support.workflow import snakemake, workflow_copy


def snapshot(root):
    """Every file under ``root``: bytes, inode and mtime (so that a rewrite shows even if equal)."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("p2, name", [
    (0.9, "2048_3x3"), (0.8, "2048_3x3_p2-0.8"), (0.8000004, "2048_3x3_p2-0.8000004"),
    (0.80000001, "2048_3x3_p2-0.80000001"), (0.1 + 0.2, "2048_3x3_p2-0.30000000000000004"),
    (1, "2048_3x3_p2-1"), (1.0, "2048_3x3_p2-1"), (0.0, "2048_3x3_p2-0"), (1e-7, "2048_3x3_p2-1e-07"),
])
def test_run_name_holds_p2_exactly(p2, name):
    assert run_name(3, 3, p2) == name
    if p2 != 0.9:
        assert float(name.split("_p2-")[1]) == p2


def test_p2_text_reads_back_to_the_same_float():
    values = [0.8, 0.8000004, 0.9 - 2 ** -53, 0.5 + 2 ** -52, 2 ** -1074, 1 / 3, 0.123456789012345678]
    for p in values:
        assert float(p2_text(p)) == p
    assert len({p2_text(p) for p in values}) == len(values)


@pytest.fixture(scope="module")
def run_08(tmp_path_factory):
    """A 2x2 run with p2 = 0.8 solved in process (the folder name the old naming gave p2 0.8 and
    0.8000004 alike)."""
    directory = tmp_path_factory.mktemp("runs") / "2048_2x2_p2-0.8"
    with open(os.devnull, "w") as log:
        pipeline.solve(directory, 2, 2, p2=0.8, log=log)
    return directory


def test_foreign_run_is_refused_without_touching_it(run_08, capsys):
    before = snapshot(run_08)
    target = run_08.with_name("2048_2x2_p2-0.8000004")
    with pytest.raises(ForeignRunError) as err:
        check_run_directory(Run(run_08, 2, 2, 0.8000004))
    # its name is already the one of the run it holds: no `mv` to propose
    assert str(err.value) == (
        f"{run_08} holds another run: {run_08}/afterstates/block_000004-000060.json has p2 = 0.8, this "
        f"run has p2 = 0.8000004. Nothing was changed. Move it away (or set another `results` "
        f"directory), then run again")
    # each stage command refuses it before it removes or writes anything
    for stage in ("forward", "backward", "report"):
        extra = [] if stage == "report" else ["--ages", "4-60"]
        code = main(["2048", stage, str(run_08), "--rows", "2", "--cols", "2", "--p2", "0.8000004",
                     *extra])
        assert code == 2 and capsys.readouterr().err == f"strongsolve: error: {err.value}\n"
    assert snapshot(run_08) == before
    assert not target.exists()
    check_run_directory(Run(run_08, 2, 2, 0.8))  # its own run is accepted


def test_foreign_message_moves_the_folder_to_its_own_name(run_08, tmp_path):
    folder = shutil.copytree(run_08, tmp_path / "2048_2x2_p2-0.8000004")
    with pytest.raises(ForeignRunError) as err:
        check_run_directory(Run(folder, 2, 2, 0.8000004))
    command = re.search(r"`(mv [^`]+)`", str(err.value)).group(1)
    assert command == f"mv {folder} {tmp_path / '2048_2x2_p2-0.8'}"
    subprocess.run(command, shell=True, check=True)
    check_run_directory(Run(tmp_path / "2048_2x2_p2-0.8", 2, 2, 0.8))
    assert not folder.exists()


def test_damaged_files_are_not_taken_for_a_foreign_run(run_08, tmp_path):
    """A manifest or layer that cannot be read is the jobs' business (rebuilt), not another run."""
    folder = shutil.copytree(run_08, tmp_path / "run")
    (folder / "afterstates" / "block_000004-000060.json").write_text('{"stage": "forward", "p2": 0.')
    (folder / "afterstates" / "age_000004.zarr" / "zarr.json").write_text("{")
    (folder / "values" / "block_000004-000060.json").unlink()
    check_run_directory(Run(folder, 2, 2, 0.8))
    with pytest.raises(ForeignRunError, match=r"values/age_000004\.zarr has p2 = 0\.8, this run has "):
        check_run_directory(Run(folder, 2, 2, 0.8000004))


@pytest.mark.slow
def test_p2_08_and_08000004_get_two_folders_and_nothing_is_deleted(tmp_path):
    """The issue's two runs, through the workflow: two folders, each with the naive solver's
    expected score for its p2; then a folder holding the other run (as the old naming made) is
    refused when the workflow starts, before Snakemake removes any output, and nothing changes."""
    wf = workflow_copy(tmp_path)
    (wf / "config.yaml").write_text("results: results\ngames: [g2048]\nmax_age: null\n"
                                    "g2048: {rows: 2, cols: 2, spawn: {p2: 0.8, p4: 0.2}, threads: 1}\n")
    (wf / "b.yaml").write_text("g2048: {spawn: {p2: 0.8000004, p4: 0.1999996}}\n")
    a, b = wf / "results" / "2048_2x2_p2-0.8", wf / "results" / "2048_2x2_p2-0.8000004"
    proc = snakemake(wf, "results/2048_2x2_p2-0.8/solution.json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    first = snapshot(a)
    proc = snakemake(wf, "results/2048_2x2_p2-0.8000004/solution.json", "--configfile", "b.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert snapshot(a) == first
    for folder, p2 in ((a, 0.8), (b, 0.8000004)):
        doc = json.loads((folder / "solution.json").read_text())
        assert doc["p2"] == p2
        assert doc["expected_score"] == pytest.approx(naive.solve(2, 2, p2).expected_score, rel=1e-12)
    # the p2 0.8 folder name holding the p2 0.8000004 run: refused at the start, nothing touched
    a.rename(wf / "results" / "kept")
    b.rename(a)
    before = snapshot(wf / "results")
    proc = snakemake(wf, "results/2048_2x2_p2-0.8/solution.json")
    assert proc.returncode != 0
    assert (f"strongsolve: error: results/2048_2x2_p2-0.8 holds another run: results/2048_2x2_p2-0.8/"
            f"afterstates/block_000004-000060.json has p2 = 0.8000004, this run has p2 = 0.8. Nothing "
            f"was changed. Move it to the name of the run it holds with "
            f"`mv results/2048_2x2_p2-0.8 results/2048_2x2_p2-0.8000004`, then run again") in proc.stderr
    assert snapshot(wf / "results") == before
