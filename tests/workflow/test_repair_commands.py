"""Each repair command a damaged result prints is followed literally (split as a shell splits it
and run in the workflow directory) and rebuilds exactly the damaged file: its content equal to the
original, every other result file untouched (bytes and modification time), on tiny runs of Truco
(a 7-card deck, the LP solver, scores from 10), Ludo (a 6-cell race) and Shut the Box (4 cards,
5 tiles). The command carries the ``--config`` the run was made with and builds only the job
that writes the damaged file."""

import hashlib
import json
import os
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pytest

from support.workflow import SNAKEMAKE, snakemake, workflow_copy

pytestmark = pytest.mark.slow

BIN = str(SNAKEMAKE.parent)
ENV = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
ENV.pop("STRONGSOLVE_RERUN", None)  # outside the workflow, as a person running the CLI


def snapshot(root):
    """{relative path: (SHA-256 of the bytes, mtime in ns)} of every file under ``root``."""
    root = Path(root)
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def cli(wf, *args):
    """(exit code, stdout, stderr) of ``strongsolve ARGS`` run in the workflow directory."""
    done = subprocess.run([f"{BIN}/strongsolve", *args], cwd=wf, env=ENV, capture_output=True,
                          text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def printed_command(message):
    """The command a message gives to run: the last text between backticks."""
    return message.split("`")[-2]


def follow(wf, command):
    """Run ``command`` as printed (shlex-split, no shell) in the workflow directory."""
    words = shlex.split(command)
    assert words[0] == "snakemake", command
    done = subprocess.run(words, cwd=wf, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def changed(before, after):
    """Paths added, removed or changed (bytes or modification time) between two snapshots."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def flip_chunk_byte(array_dir):
    """Flip one byte in the middle of the first chunk file of a zarr array."""
    chunk = sorted(p for p in Path(array_dir).rglob("*") if p.is_file() and p.name != "zarr.json")[0]
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))


# --- Truco -------------------------------------------------------------------------------------

DECK = "7d 7s 7h 7c Ad As Ah"
TRUCO_CONFIG = ["games=[truco]",
                "truco={scores: {min_score: 10}, deck: [7d, 7s, 7h, 7c, Ad, As, Ah], solver: lp}"]
TRUCO_SHOWN = ("--config 'games=[truco]' "
               "'truco={scores: {min_score: 10}, deck: [7d, 7s, 7h, 7c, Ad, As, Ah], solver: lp}'")


def test_a_truco_grid_subgames_repair_rebuilds_it_alone_with_the_runs_config(tmp_path):
    from strongsolve.games.truco.saved import read_subgame

    wf = workflow_copy(tmp_path)
    proc = snakemake(wf, "--config", *TRUCO_CONFIG)
    assert proc.returncode == 0, proc.stderr[-3000:]
    root = wf / "results" / "truco_deck_7d7s7h7cAdAsAh"
    grid = root / "truco" / "grid"
    victim = grid / "s10-10_v0.zarr"  # the 10-10 group (tier t1) has two vira classes
    original_attrs, original = read_subgame(victim)
    before = snapshot(wf / "results")
    flip_chunk_byte(victim / "policy")

    code, out, err = cli(wf, "truco", "compare", "10-10:0", "10-10:1", "--deck", DECK)
    assert code == 2 and out == "" and "Traceback" not in err
    target = "results/truco_deck_7d7s7h7cAdAsAh/truco/grid/t1_min10.csv"
    command = f"snakemake {target} --cores all {TRUCO_SHOWN} --forcerun {target}"
    assert err.startswith(f"strongsolve: error: results/truco_deck_7d7s7h7cAdAsAh/truco/grid/"
                          f"s10-10_v0.zarr/policy ")
    assert err.rstrip().endswith(f"Rebuild it with `{command}`"), err
    dry = subprocess.run(shlex.split(command) + ["--dry-run"], cwd=wf, env=ENV, capture_output=True,
                         text=True, timeout=300)
    assert dry.returncode == 0 and "truco_grid_tier" in dry.stdout, dry.stdout[-2000:]
    assert "truco_grid_summary" not in dry.stdout and "truco_abstraction_sizes" not in dry.stdout

    follow(wf, printed_command(err))
    attrs, data = read_subgame(victim)  # verifies every checksum
    # the same subgame again, bit for bit: solved for the W its partner's table says the group's
    # last fixed-point round used (only the timings differ)
    assert attrs["arrays"] == original_attrs["arrays"]  # dtypes, shapes and SHA-256 of each array
    for name in original:
        assert np.array_equal(data[name], original[name]), name
    timings = ("seconds", "cpu_seconds", "max_rss_mib", "off_path_seconds", "off_path_check_seconds")
    assert {k: v for k, v in attrs.items() if k not in timings} == \
        {k: v for k, v in original_attrs.items() if k not in timings}
    after = snapshot(wf / "results")
    job = {"truco_deck_7d7s7h7cAdAsAh/truco/grid/t1_min10.csv",
           "truco_deck_7d7s7h7cAdAsAh/truco/grid/logs/t1_min10.log",
           "truco_deck_7d7s7h7cAdAsAh/truco/grid/logs/t1_min10.attempts.log",
           "truco_deck_7d7s7h7cAdAsAh/truco/grid/benchmarks/t1_min10.tsv"}
    assert {k for k in changed(before, after) if not k.startswith(
        "truco_deck_7d7s7h7cAdAsAh/truco/grid/s10-10_v0.zarr/")} <= job
    assert any(k.startswith("truco_deck_7d7s7h7cAdAsAh/truco/grid/s10-10_v0.zarr/")
               for k in changed(before, after))

    # the command for the rest of the grid carries the run's deck, solver and results, and plans
    # Truco jobs (a dry run); so does the one for a score not solved yet
    code, out, _ = cli(wf, "truco", "grid", "--results", str(root.relative_to(wf)))
    rest = ("snakemake --cores all --config games='[truco]' "
            "truco='{scores: {min_score: 9}, deck: [7d, 7s, 7h, 7c, Ad, As, Ah], solver: lp}'")
    assert code == 0 and out.splitlines()[0].endswith(f"with: {rest}"), out
    dry = subprocess.run(shlex.split(rest) + ["--dry-run"], cwd=wf, env=ENV, capture_output=True,
                         text=True, timeout=300)
    assert dry.returncode == 0 and "truco_grid_tier" in dry.stdout, dry.stdout[-2000:]
    code, out, err = cli(wf, "truco", "compare", "9-10:0", "9-10:1", "--deck", DECK)
    assert code == 2 and err.rstrip().endswith(rest), err


# --- Ludo --------------------------------------------------------------------------------------

RACE_BOARD = "length: 6\njumps: {2: 4, 5: 1}\nsafe: [3]\ndie: 3\n"  # test_terminal_output.py's
LUDO_CONFIG = ["games=[ludo]", "ludo={board: race.yaml, race_pieces: [1]}"]
LUDO_SHOWN = "--config 'games=[ludo]' 'ludo={board: race.yaml, race_pieces: [1]}'"


def test_ludo_repairs_rebuild_the_race_alone_with_the_runs_config(tmp_path):
    from strongsolve.games.ludo.saved import load_policy, load_summary
    from strongsolve.headline import ludo_lines

    wf = workflow_copy(tmp_path)
    (wf / "race.yaml").write_text(RACE_BOARD)
    proc = snakemake(wf, "--config", *LUDO_CONFIG)
    assert proc.returncode == 0, proc.stderr[-3000:]
    folder = wf / "results" / "ludo_race"
    race, npz = folder / "race_p1.json", folder / "race_p1_policy.npz"
    original_json, original_arrays = race.read_bytes(), load_policy(npz)[2]
    before = snapshot(wf / "results")
    target = "results/ludo_race/race_p1.json"
    command = f"snakemake {target} --cores all {LUDO_SHOWN} --forcerun {target}"

    # a truncated policy file: the CLI names it and the race's job
    npz.write_bytes(npz.read_bytes()[:100])
    code, out, err = cli(wf, "ludo", "advise", "results/ludo_race/race_p1_policy.npz",
                         "--position", "0/0", "--roll", "1")
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith("strongsolve: error: results/ludo_race/race_p1_policy.npz cannot be read")
    assert err.rstrip().endswith(f"Rebuild it with `{command}`"), err
    follow(wf, printed_command(err))
    arrays = load_policy(npz)[2]
    assert set(arrays) == set(original_arrays)
    assert all(np.array_equal(arrays[k], original_arrays[k]) for k in arrays)
    assert race.read_bytes() == original_json  # the job's other output, written again the same
    after = snapshot(wf / "results")
    assert set(changed(before, after)) <= {"ludo_race/race_p1.json", "ludo_race/race_p1_policy.npz",
                                           "ludo_race/logs/race_p1.log",
                                           "ludo_race/logs/race_p1.attempts.log",
                                           "ludo_race/logs/race_p1.benchmark.tsv"}

    # an edited win probability in the race's JSON: the run's answers name it and the same job
    before = snapshot(wf / "results")
    doc = json.loads(race.read_text())
    doc["win_probability"] = 0.9999
    race.write_text(json.dumps(doc, indent=1))
    os.chdir(wf)
    try:
        with pytest.raises(Exception) as err:
            ludo_lines([Path(target)])
    finally:
        os.chdir(tmp_path.parent)
    assert f"{target} does not match its checksum" in str(err.value)
    assert str(err.value).endswith(f"Rebuild it with `{command}`")
    follow(wf, printed_command(str(err.value)))
    assert race.read_bytes() == original_json and load_summary(race)["win_probability"] != 0.9999
    after = snapshot(wf / "results")
    assert {k for k in changed(before, after) if not k.startswith("ludo_race/logs/race_p1.")} \
        <= {"ludo_race/race_p1.json", "ludo_race/race_p1_policy.npz"}
    assert not any(k.startswith("ludo_race/rolls_") for k in changed(before, after))


# --- Shut the Box ------------------------------------------------------------------------------

SHUTBOX_CONFIG = ["games=[shutbox]",
                  "shutbox={cards: 4, faces: 2, standard_cards: 5, standard_objectives: [max-shut], "
                  "standard_one_die: [false]}"]
SHUTBOX_SHOWN = ("--config 'games=[shutbox]' 'shutbox={cards: 4, faces: 2, standard_cards: 5, "
                 "standard_objectives: [max-shut], standard_one_die: [false]}'")


def test_a_shutbox_results_repair_rebuilds_it_alone_with_the_runs_config(tmp_path):
    wf = workflow_copy(tmp_path)
    proc = snakemake(wf, "--config", *SHUTBOX_CONFIG)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = wf / "results" / "shutbox_4" / "standard_5_max-shut.json"
    original = result.read_bytes()
    before = snapshot(wf / "results")
    doc = json.loads(original)
    doc["policy"]["value_per_mask"][21] = 0.999
    result.write_text(json.dumps(doc, indent=1))

    code, out, err = cli(wf, "shutbox", "advise", "results/shutbox_4/standard_5_max-shut.json",
                         "--open", "1 3 5", "--roll", "1,2")
    target = "results/shutbox_4/standard_5_max-shut.json"
    command = f"snakemake {target} --cores all {SHUTBOX_SHOWN} --forcerun {target}"
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f"strongsolve: error: {target} does not match its checksum"), err
    assert err.rstrip().endswith(f"`{command}`"), err
    follow(wf, printed_command(err))
    assert result.read_bytes() == original
    after = snapshot(wf / "results")
    assert set(changed(before, after)) <= {"shutbox_4/standard_5_max-shut.json",
                                           "shutbox_4/logs/standard_5_max-shut.log",
                                           "shutbox_4/logs/standard_5_max-shut.attempts.log"}
    assert "shutbox_4/standard_5_max-shut.json" in changed(before, after)
    assert not any(k.startswith("shutbox_4/flip_one") for k in changed(before, after))
