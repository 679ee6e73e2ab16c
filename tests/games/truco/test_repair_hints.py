"""The repair command of a damaged Truco subgame is the run's own (recorded with every subgame a
workflow job writes), building by name the one job that writes it: a group directory of the 11
row here (a tiny stand-in subgame per vira class, no solve); a dry run of the printed command in a
copy of the workflow plans that job and no other. The grid's tier jobs are followed for real in
tests/workflow/test_repair_commands.py."""

import re
import shlex
import subprocess

import numpy as np
import pytest

from strongsolve.games.truco.hints import subgame_hint
from strongsolve.games.truco.saved import group_dir, read_subgame, subgame_name, write_group
from strongsolve.rerun import RERUN_VARIABLE
from strongsolve.store.errors import CorruptResultError
from support.workflow import SNAKEMAKE, workflow_copy

COMMAND = "snakemake --cores all --config 'games=[truco]' 'truco={row11_groups: [11]}'"


def stand_in(c):
    """Arrays and attributes shaped as a stored subgame's (saved.py), for the 11-11 hand."""
    arrays = dict(policy=np.array([0.25, 0.75]), off_path=np.array([False]), infoset_ptr=np.array([0, 2]),
                  infoset_key=np.array([7]), hands=np.array([[1, 2, 3]]))
    return subgame_name(11, 11, c), arrays, dict(score=[11, 11], vira_class=c, eleven=-1, value=0.5)


def test_a_damaged_row11_subgame_names_its_groups_job_with_the_runs_config(tmp_path, monkeypatch):
    wf = workflow_copy(tmp_path)
    monkeypatch.chdir(wf)
    monkeypatch.setenv(RERUN_VARIABLE, COMMAND)  # as inside the group's job
    write_group(group_dir("results", 11), [stand_in(c) for c in (3, 4)])
    monkeypatch.delenv(RERUN_VARIABLE)
    victim = group_dir("results", 11) / subgame_name(11, 11, 3)
    assert read_subgame(victim)[0]["rerun"] == {"command": COMMAND}
    (victim / "zarr.json").write_text("garbage")  # its own record is gone: its sibling's is read
    target = "results/truco/row11/group_11"
    want = (f"snakemake {target} --cores all --config 'games=[truco]' "
            f"'truco={{row11_groups: [11]}}' --forcerun {target}")
    with pytest.raises(CorruptResultError) as err:
        read_subgame(victim)
    assert str(err.value).startswith(f"{victim}/zarr.json cannot be read (")
    assert str(err.value).endswith(f"it is damaged or was edited, so it is not used. Rebuild it with "
                                   f"`{want}`")
    assert subgame_hint(victim / "policy") == want
    dry = subprocess.run(shlex.split(want) + ["--dry-run"], cwd=wf, capture_output=True, text=True,
                         timeout=300, env={"PATH": f"{SNAKEMAKE.parent}:/usr/bin:/bin"})
    assert dry.returncode == 0, dry.stderr[-2000:]
    table = dry.stdout.split("Job stats:")[1].split("\ntotal")[0]
    assert re.findall(r"^(\w+)\s+(\d+)$", table, re.M) == [("truco_row11_group", "1")], dry.stdout


def test_without_a_recorded_run_the_rule_is_forced_on_config_yamls_run(tmp_path, monkeypatch):
    monkeypatch.delenv(RERUN_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    write_group(group_dir("results", 11), [stand_in(3)])
    assert subgame_hint(group_dir("results", 11) / subgame_name(11, 11, 3)) == \
        "snakemake --cores all --forcerun truco_row11_group"
