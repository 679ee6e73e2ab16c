"""The real Snakemake workflow, end to end, in a temporary directory."""

import csv
import json

import pytest

from naive import g2048 as naive
from support.workflow import CASES, snakemake, workflow_copy


@pytest.mark.slow
@pytest.mark.parametrize("rows, cols", [(2, 2), (2, 3)])
def test_workflow_solves_small_boards_like_the_naive_solver(tmp_path, rows, cols):
    wf = workflow_copy(tmp_path)
    # small blocks so that the run has several forward and backward jobs chained by their inputs
    (wf / "small.yaml").write_text(f"games: [g2048]\ng2048: {{rows: {rows}, cols: {cols}, ages_per_job: 16}}\n")
    proc = snakemake(wf, "--configfile", "small.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = wf / "results" / f"2048_{rows}x{cols}"
    doc = json.loads((run / "solution.json").read_text())
    ref = naive.solve(rows, cols)
    counts = naive.canonical_counts(rows, cols)
    assert doc["rows"] == rows and doc["cols"] == cols
    assert doc["num_states"] == sum(c[0] for c in counts.values())
    assert doc["num_afterstates"] == sum(c[1] for c in counts.values())
    assert doc["num_terminal_states"] == sum(c[2] for c in counts.values())
    assert doc["max_age"] == max(a for a, c in counts.items() if c[0])
    assert doc["expected_score"] == pytest.approx(ref.expected_score, rel=1e-9)
    assert sum(s["probability"] for s in doc["start_states"]) == pytest.approx(1.0, rel=1e-12)
    for s in doc["start_states"]:
        assert s["value"] == pytest.approx(ref.state_value(tuple(map(tuple, s["board"]))), rel=1e-9)
    with open(run / "summary.csv") as f:
        summary = {int(r["age"]): r for r in csv.DictReader(f)}
    assert list(summary) == list(range(4, 2 ** (rows * cols + 2) - 3, 2))
    for age, row in summary.items():
        states, afterstates, terminal = counts.get(age, (0, 0, 0))
        assert (int(row["states"]), int(row["afterstates"]), int(row["terminal_states"])) == (
            states, afterstates, terminal)
        assert int(row["bytes"]) > 0
    # a second run has nothing to do
    again = snakemake(wf, "--configfile", "small.yaml")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_forward_only_4x3_matches_published_counts(tmp_path):
    """max_age stops after the forward pass; the 4x3 counts of ages 4..18 are the authors'
    (cases.json "2048_4x3_states_per_age": Kaneko & Yamashita 2025, num_found_states.txt)."""
    case = CASES["2048_4x3_states_per_age"]
    wf = workflow_copy(tmp_path)
    proc = snakemake(wf, "--configfile", "workflow/presets/2048_4x3.yaml", "--config", "max_age=18")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = wf / "results" / "2048_4x3"
    with open(run / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["age"]) for r in rows] == case["ages"]
    assert [int(r["states"]) for r in rows] == case["states"]
    assert not (run / "solution.json").exists()
    assert not (run / "values").exists()
    # the run ends with its counts on the terminal
    assert "2048_4x3: forward pass to age 18 (no values: forward-only run)" in proc.stdout
    assert f"  {sum(case['states']):,} states, " in proc.stdout
