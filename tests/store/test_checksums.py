"""Checksums of the result files a user reads: 2048's solution.json and summary.csv.

A value edited in solution.json, a truncated solution.json or an edited summary.csv is refused on
load with the file named and the command that rebuilds it; following that command literally in the
Snakemake workflow rebuilds the file bit for bit. The checksums are checked here with hashlib and
``sha256sum`` directly, not with the project's own helpers. (Truco subgames: test_truco_row11.py.)
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from strongsolve.cli import main
from strongsolve.games.g2048.stages.report import read_solution, read_summary
from strongsolve.games.g2048.advice import Solution
from strongsolve.store.checksums import read_json_checked, write_json_checked
from strongsolve.store.errors import CorruptResultError
from support.workflow import SNAKEMAKE, snakemake, workflow_copy



def rebuild(run_dir):
    """The repair a run made by `strongsolve 2048 solve` gets: that command again (it rewrites the
    report); a workflow run gets its Snakemake command forcing the damaged file (below)."""
    return f"strongsolve 2048 solve {run_dir} --rows 2 --cols 2 --p2 0.9 --target-tile 0"


@pytest.fixture
def run_dir(solved, tmp_path):
    """A private copy of the solved 2x2 run (tests damage it)."""
    return shutil.copytree(solved(2, 2), tmp_path / "2048_2x2")


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_solution_checksum_is_sha256_of_the_canonical_document(run_dir):
    doc = json.loads((run_dir / "solution.json").read_text())
    rest = {k: v for k, v in doc.items() if k != "checksum"}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"))
    assert doc["checksum"] == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert read_solution(run_dir) == rest


def test_summary_checksum_is_checked_by_sha256sum(run_dir):
    proc = subprocess.run(["sha256sum", "-c", "summary.csv.sha256"], cwd=run_dir, capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stdout == "summary.csv: OK\n", proc.stdout + proc.stderr
    rows = read_summary(run_dir)
    assert [r["age"] for r in rows] == list(range(4, 61, 2))


def test_reindented_solution_still_verifies(run_dir):
    """The checksum covers the content, not the layout."""
    path = run_dir / "solution.json"
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(doc))
    assert read_solution(run_dir)["expected_score"] == doc["expected_score"]


def test_edited_expected_score_is_refused_naming_the_file(run_dir, capsys):
    path = run_dir / "solution.json"
    doc = json.loads(path.read_text())
    doc["expected_score"] = 999.0
    path.write_text(json.dumps(doc, indent=2) + "\n")
    with pytest.raises(CorruptResultError) as err:
        Solution(run_dir)
    assert str(err.value) == (f"{path} does not match its checksum; it is damaged or was edited, so "
                              f"it is not used. Rebuild it with `{rebuild(run_dir)}`")
    code, out, stderr = cli(capsys, "2048", "query", run_dir, "2 2 / . .")
    assert code == 2 and out == "" and stderr == f"strongsolve: error: {err.value}\n"


@pytest.mark.parametrize("damage", ["truncated", "no checksum", "not an object"])
def test_damaged_solution_is_refused_naming_the_file(run_dir, capsys, damage):
    path = run_dir / "solution.json"
    text = path.read_text()
    doc = json.loads(text)
    del doc["checksum"]
    path.write_text({"truncated": text[:43], "no checksum": json.dumps(doc),
                     "not an object": "[1, 2]\n"}[damage])
    argv = ["inspect", run_dir] if damage == "truncated" else ["2048", "query", run_dir, "2 2 / . ."]
    code, _, stderr = cli(capsys, *argv)
    assert code == 2
    assert stderr.startswith(f"strongsolve: error: {path} ")
    assert stderr.endswith(f"Rebuild it with `{rebuild(run_dir)}`\n")
    if damage == "truncated":
        assert "solution.json cannot be read as JSON (Expecting property name" in stderr


@pytest.mark.parametrize("layout", ["one job", "several blocks", "no logs"])
def test_a_workflow_runs_damaged_report_is_forced_by_its_file_name(tmp_path, solved, monkeypatch, layout):
    """The hint forces the damaged file as the workflow names it (relative to the directory the
    command runs in), whichever rule writes it in the rerun's configuration: g2048_solve for a run
    of one block, g2048_report otherwise; a rule named from the run's logs could be the other."""
    wf = tmp_path / "wf"
    run_dir = shutil.copytree(solved(2, 2), wf / "results" / "2048_2x2")
    (run_dir / "logs").mkdir(exist_ok=True)
    logs = {"one job": ["solve_000004-000060.log"], "several blocks": ["report.log"], "no logs": []}
    for name in logs[layout]:
        (run_dir / "logs" / name).write_text("")
    monkeypatch.setenv("STRONGSOLVE_RERUN", "snakemake --cores all --configfile my.yaml")
    monkeypatch.chdir(wf)
    for name, read in (("solution.json", read_solution), ("summary.csv", read_summary)):
        (run_dir / name).write_text("damaged\n")
        for given in (Path("results/2048_2x2"), run_dir):  # relative, or absolute below the cwd
            with pytest.raises(CorruptResultError) as err:
                read(given)
            assert str(err.value).endswith(f"Rebuild it with `snakemake --cores all --configfile my.yaml "
                                           f"--forcerun results/2048_2x2/{name}`")


def test_edited_summary_is_refused(run_dir):
    path = run_dir / "summary.csv"
    path.write_text(path.read_text().replace("\n4,", "\n4,9", 1))
    with pytest.raises(CorruptResultError, match=re.escape(
            f"{path} does not match its checksum ({path}.sha256); it is damaged or was edited")):
        read_summary(run_dir)
    (run_dir / "summary.csv.sha256").unlink()
    with pytest.raises(CorruptResultError, match=re.escape(
            f"{path} has no readable checksum file {path}.sha256;")):
        read_summary(run_dir)


def test_json_checksum_round_trip_keeps_every_float_bit(tmp_path):
    doc = {"x": 0.1 + 0.2, "tiny": 5e-324, "big": 1.7976931348623157e308, "n": [1, 2.5, None]}
    write_json_checked(tmp_path / "d.json", doc)
    assert read_json_checked(tmp_path / "d.json", lambda path: f"rebuild {path}") == doc


@pytest.mark.slow
def test_damaged_solution_is_rebuilt_by_following_the_message(tmp_path, capsys, monkeypatch):
    """A truncated, then an edited solution.json in a workflow run: the command the refusal prints,
    run as printed, rebuilds the file: every value bit for bit (byte for byte when the run's command
    could still be read from it)."""
    wf = workflow_copy(tmp_path)
    # the run of the workflow's own config.yaml, so the printed command needs no --configfile
    (wf / "config.yaml").write_text("results: results\ngames: [g2048]\nmax_age: null\n"
                                    "g2048: {rows: 2, cols: 2, threads: 1}\n")
    proc = snakemake(wf)
    assert proc.returncode == 0, proc.stderr[-3000:]
    path = wf / "results" / "2048_2x2" / "solution.json"
    good = path.read_bytes()
    env = dict(os.environ, PATH=f"{SNAKEMAKE.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(wf)  # where a user runs the workflow, and its commands
    for damaged in (good[:43], good.replace(b'"expected_score": ', b'"expected_score": 999.0, "x": ')):
        path.write_bytes(damaged)
        code, _, stderr = cli(capsys, "2048", "query", path.parent, "2 2 / . .")
        assert code == 2 and f"{path} " in stderr
        command = re.fullmatch(r".*Rebuild it with `([^`]+)`\n", stderr, re.S).group(1)
        # the file, as the workflow names it: its rule (here the one job, g2048_solve; for several
        # blocks g2048_report) depends on the blocks of the command's config
        assert command.startswith("snakemake --cores all")
        assert command.endswith(" --forcerun results/2048_2x2/solution.json")
        repair = subprocess.run(command, shell=True, cwd=wf, env=env, capture_output=True, text=True,
                                timeout=600)
        assert repair.returncode == 0, repair.stderr[-3000:]
        if damaged == good[:43]:
            # the run's command was in the lost file: the repair names an equivalent one, made from
            # the run's files (its parameters as --config values), and records that one
            rebuilt = json.loads(path.read_text())
            assert rebuilt.pop("rerun").startswith("snakemake --cores all --config results=")
            assert {k: v for k, v in rebuilt.items() if k != "checksum"} == {
                k: v for k, v in json.loads(good).items() if k not in ("rerun", "checksum")}
        else:
            assert path.read_bytes() == good
