"""What a person running the workflow sees: the answers printed at the end of a run, the
2048 jobs first, a job's stderr on the terminal with every attempt's log kept, and a clean
``snakemake --lint``. Expected values come from the brute-force references of tests/naive/ (one module per game)."""

import json
import os
import re
import shutil
import subprocess
import threading
from fractions import Fraction
from pathlib import Path

import pytest

from naive import g2048 as naive_g2048
from naive import ludo as ref_ludo
from naive import shutbox as naive_shutbox
from strongsolve.games.g2048.stages import pipeline
from strongsolve.headline import headline
from support.workflow import REPO, snakemake, workflow_copy

# A default-like run, small: every game of config.yaml, with a 2x2 board, 4 flip-one cards, 5
# standard tiles and a 6-cell race board (tests/games/ludo/stages/test_expansion.py's first race board), one piece per player.
RACE_BOARD = {"length": 6, "jumps": {2: 4, 5: 1}, "safe": [3], "die": 3}
SMALL_CONFIG = """games: [g2048, shutbox, ludo]
g2048: {rows: 2, cols: 2, ages_per_job: 16}
shutbox: {cards: 4, faces: 2, standard_cards: 5, standard_objectives: [max-shut, min-sum],
          standard_one_die: [false]}
ludo: {board: race.yaml, race_pieces: [1]}
"""
LOADED = ["2/7"] + ["1/7"] * 5  # config.yaml's extra die "loaded", kept by the small config


def naive_ludo(die):
    return dict(RACE_BOARD, die=[Fraction(1, die)] * die if isinstance(die, int) else
                [Fraction(p) for p in die])


def number_after(text, prefix):
    """The number printed right after ``prefix`` on the one line of ``text`` that holds it."""
    found = re.findall(re.escape(prefix) + r" ([-+0-9.e]+)", text)
    assert len(found) == 1, (prefix, text)
    return float(found[0])


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """The small run, finished: (workflow directory, completed process)."""
    wf = workflow_copy(tmp_path_factory.mktemp("ux"))
    (wf / "small.yaml").write_text(SMALL_CONFIG)
    (wf / "race.yaml").write_text("length: 6\njumps: {2: 4, 5: 1}\nsafe: [3]\ndie: 3\n")  # RACE_BOARD
    proc = snakemake(wf, "--configfile", "small.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return wf, proc


@pytest.mark.slow
def test_a_run_ends_with_the_answers_of_every_game(small_run):
    _, proc = small_run
    out = proc.stdout
    assert "strongsolve: the answers of this run" in out
    ref = naive_g2048.solve(2, 2)
    counts = naive_g2048.canonical_counts(2, 2)
    assert number_after(out, "2048 2x2 (p2 0.9): expected score from a random start") == \
        pytest.approx(ref.expected_score, rel=1e-12)
    states = sum(c[0] for c in counts.values())
    afterstates = sum(c[1] for c in counts.values())
    assert f"  {states:,} states, {afterstates:,} afterstates," in out
    assert number_after(out, "Shut the Box flip-one, 4 cards, two 2-sided dice: expected rolls to "
                             "set every card") == pytest.approx(float(naive_shutbox.flip_one_exact(4, 2)[0]),
                                                                rel=1e-11)
    assert number_after(out, "Shut the Box standard, 5 tiles, two 2-sided dice: probability of "
                             "shutting every tile") == pytest.approx(
        float(naive_shutbox.standard_value(5, 2, "max-shut")), abs=1e-12)
    assert number_after(out, "Shut the Box standard, 5 tiles, two 2-sided dice: expected open sum "
                             "at the end") == pytest.approx(
        float(naive_shutbox.standard_value(5, 2, "min-sum")), rel=1e-11)
    assert number_after(out, "Ludo race, one piece, the board's die: expected rolls") == \
        pytest.approx(float(ref_ludo.ludo_expected_rolls(naive_ludo(3))[0]), rel=1e-9)
    assert number_after(out, "Ludo race, one piece, die 'loaded': expected rolls") == \
        pytest.approx(float(ref_ludo.ludo_expected_rolls(naive_ludo(LOADED))[0]), rel=1e-9)
    race = ref_ludo.race_values(naive_ludo(3), 1)[(0,), (0,)]
    assert number_after(out, "Ludo race, race of 1 piece(s) each: the first player wins with "
                             "probability") == pytest.approx(race, abs=1e-9)
    assert "Truco" not in out  # not a game of this run


@pytest.mark.slow
def test_the_2048_jobs_run_first_and_their_ages_go_to_their_logs(small_run):
    wf, proc = small_run
    # not a terminal: Snakemake's rule blocks, and each job's line naming its log as it starts
    started = re.findall(r"^(?:local)?rule (\w+):", proc.stderr, flags=re.M)
    assert started[:2] == ["g2048_forward", "g2048_forward"], started
    logs = re.findall(r"^\[([\w-]+)\] started \(log: (\S+)\)$", proc.stderr, flags=re.M)
    assert [name for name, _ in logs[:2]] == ["forward_000004-000034", "forward_000036-000060"]
    assert "forward age 4: " not in proc.stderr  # the per-age lines are in the job's log
    assert "forward age 4: 2 states" in (wf / logs[0][1]).read_text()


@pytest.mark.slow
def test_a_failing_job_shows_its_error_on_the_terminal_and_every_attempt_is_logged(small_run,
                                                                                   tmp_path):
    wf = tmp_path / "wf"
    shutil.copytree(small_run[0], wf, symlinks=True)
    run = wf / "results" / "2048_2x2"
    (run / "solution.json").unlink()  # the report runs again and reads the start states' layer
    chunk = run / "values" / "age_000004.zarr" / "values" / "c" / "0"
    data = bytearray(chunk.read_bytes())
    data[9] ^= 0x10
    chunk.write_bytes(bytes(data))
    for _ in range(2):
        proc = snakemake(wf, "--configfile", "small.yaml")
        assert proc.returncode != 0
        assert ("[report] strongsolve: error: layer results/2048_2x2/values/age_000004.zarr: array "
                "'values' cannot be read") in proc.stderr, proc.stderr
        assert "strongsolve: the answers of this run" not in proc.stdout
    attempts = (run / "logs" / "report.attempts.log").read_text()
    # the first run's attempt and the two failed ones, each after its header
    assert len(re.findall(r"^=== attempt \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC ===$", attempts,
                          flags=re.M)) == 3
    assert attempts.count("strongsolve: error: layer") == 2
    last = (run / "logs" / "report.log").read_text()  # Snakemake keeps the last attempt only
    assert last.count("=== attempt") == 1 and "strongsolve: error: layer" in last


def test_lint_is_clean(tmp_path):
    proc = snakemake(workflow_copy(tmp_path), "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr


def test_headline_of_a_reach_run_says_probability(tmp_path):
    run = tmp_path / "2048_2x2_reach16"
    pipeline.solve(run, 2, 2, 0.9, 16)
    text = headline(["g2048"], g2048_dir=run)
    p = number_after(text, "2048 2x2 (p2 0.9): probability of making the 16 tile from a random start")
    assert p == pytest.approx(naive_g2048.solve_reach(2, 2, 16).probability, rel=1e-12)
    assert "score" not in text


def test_headline_of_a_forward_only_run_prints_its_counts(tmp_path):
    run = tmp_path / "2048_2x2"
    pipeline.solve(run, 2, 2, 0.9, 0, max_age=20)
    counts = naive_g2048.canonical_counts(2, 2, max_age=20)
    text = headline(["g2048", "shutbox"], g2048_dir=run, shutbox=[tmp_path / "flip_one.json"])
    assert "2048_2x2: forward pass to age 20 (no values: forward-only run)" in text
    assert (f"  {sum(c[0] for c in counts.values()):,} states, "
            f"{sum(c[1] for c in counts.values()):,} afterstates") in text
    assert "Shut the Box" not in text  # its file does not exist


def test_headline_names_a_damaged_file_and_still_prints_the_others(tmp_path, monkeypatch):
    from strongsolve.games.ludo.saved import write_summary

    monkeypatch.setenv("STRONGSOLVE_RERUN", "snakemake --cores all")  # as in the workflow
    bad = tmp_path / "flip_one.json"
    bad.write_text('{"game": "shutbox", "val')
    good = tmp_path / "rolls_board.json"
    write_summary(good, {"game": "ludo", "board_file": "workflow/boards/b.yaml",
                         "expected_rolls": "inf"})
    edited = tmp_path / "race_p1.json"
    write_summary(edited, {"game": "ludo-race", "board_file": "workflow/boards/b.yaml",
                           "pieces": 1, "win_probability": 0.5})
    edited.write_text(edited.read_text().replace("0.5", "0.9999"))
    text = headline(["shutbox", "ludo"], shutbox=[bad], ludo=[good])
    assert (f"{bad} cannot be read as JSON (Unterminated string starting at: line 1 column 21 "
            "(char 20)); it is damaged or was edited, so it is not used. Rebuild it with "
            f"`snakemake {bad} --cores all --forcerun {bad}`") in text
    assert "Ludo b, one piece, the board's die: expected rolls inf (goal unreachable)" in text
    text = headline(["ludo"], ludo=[edited])
    assert (f"{edited} does not match its checksum; it is damaged or was edited, so it is not "
            f"used. Rebuild it with `snakemake {edited} --cores all --forcerun {edited}`") in text
    assert "0.9999" not in text
    assert headline(["g2048"], g2048_dir=tmp_path / "nothing") == ""
    summary = tmp_path / "row11_summary.csv"
    summary.write_text("mano,pe,vira_class,value\n11,11,0,0.01\n11,11,1,-0.02\n")
    assert headline(["truco"], truco=[summary, tmp_path / "abstraction_sizes.csv"]).splitlines()[2:] \
        == [f"Truco: 2 subgames of the 11 row solved ({summary})"]
    grid = tmp_path / "grid_summary.csv"
    grid.write_text("mano,pe,vira_class,tier,W,nash_conv\n10,10,0,t1,0.47,8e-4\n10,10,1,t1,0.47,9e-4\n"
                    "9,9,0,t1,,7e-4\n")
    tier = tmp_path / "t1_min9.csv"
    tier.write_text("mano,pe,vira_class,nash_conv\n10,10,0,8e-4\n")
    assert headline(["truco"], truco=[grid, tier]).splitlines()[2:] == [
        f"Truco: 3 subgames of the grid solved, W known at 1 scores, NashConv at most 0.0009 ({grid})",
        f"Truco: grid tier t1, scores with min >= 9: 1 subgames solved, NashConv at most 0.0008 ({tier})"]


def test_headline_of_the_11_11_group_gives_the_solvers_fixed_point_value(tmp_path):
    from strongsolve.games.truco.stages.groups import solve_group

    from support.truco import tiny_capacities

    log = []
    solve_group(11, tmp_path, dict(target_nash_conv=1e-6, fixed_point_tol=1e-7, workers=1),
                log=log.append, capacities=tiny_capacities)
    w = float(re.findall(r"W \{\(11, 11\): ([0-9.e-]+)\}", "\n".join(log))[-1])  # the last round's
    group = tmp_path / "truco" / "row11" / "group_11"
    line = headline(["truco"], truco=[group, tmp_path / "truco" / "abstraction_sizes.csv"]).splitlines()[2:]
    assert len(line) == 1 and line[0].startswith(
        f"Truco: the 11-11 hand solved for its 9 vira classes; mano wins the match with probability "
        f"{w:.6f} (averaged over the vira), exploitability at most ") and line[0].endswith(f"({group})")


def test_a_race_prints_a_progress_line_per_sweep(tmp_path, capsys):
    from strongsolve.cli import main

    board = tmp_path / "race.yaml"
    board.write_text("length: 6\njumps: {2: 4, 5: 1}\nsafe: [3]\ndie: 3\n")  # RACE_BOARD
    # ref_ludo.race_values plays today's rule (the board default is now the design's rule)
    assert main(["ludo", "race", str(board), "--pieces", "2", "--tol", "1e-10", "--json",
                 "--pass-by-overshoot", "false"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["win_probability"] == pytest.approx(
        ref_ludo.race_values(naive_ludo(3), 2)[(0, 0), (0, 0)], abs=1e-8)
    changes = [float(c) for c in re.findall(r"^  sweep \d+: largest change (\S+)$", captured.err,
                                            flags=re.M)]
    assert len(changes) == out["sweeps"] > 1  # one line per sweep, the last one within the tolerance
    assert changes[-1] <= 1e-10 < changes[-2]
    # with --json the sweeps are on stderr (stdout is the JSON), among the status lines of a slow run
    detail = [line for line in captured.err.splitlines() if not line.startswith("ludo race, ")]
    assert detail[-2:] == ["  matching it against move-the-leading-piece",
                           "  matching it against move-the-trailing-piece"]


def test_job_script_shows_stderr_while_the_job_runs_and_appends_every_attempt(tmp_path):
    log = tmp_path / "logs" / "race_p2.log"
    job = ("echo result; echo 'sweep 1' >&2; while [ ! -e go ]; do sleep 0.02; done; "
           "echo 'error: bad' >&2; printf 'no newline' >&2; exit 3")
    for attempt in (1, 2):
        proc = subprocess.Popen(["bash", str(REPO / "workflow/scripts/logged.sh"), str(log), "sh", "-c",
                                 job], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
        # the progress line reaches the terminal while the job still waits (released after 20 s
        # if it does not, so that a buffered line fails the test instead of hanging it)
        release = threading.Timer(20, (tmp_path / "go").touch)
        release.start()
        assert proc.stderr.readline() == f"[race_p2] started (log: {log})\n"
        assert proc.stderr.readline() == "[race_p2] sweep 1\n"
        assert not (tmp_path / "go").exists() and proc.poll() is None
        release.cancel()
        (tmp_path / "go").touch()
        assert proc.stderr.read() == ("[race_p2] error: bad\n[race_p2] no newline\n"
                                      f"[race_p2] failed with exit status 3; its log: {log}\n")
        assert proc.wait(timeout=10) == 3
        (tmp_path / "go").unlink()
        for path in (log, tmp_path / "logs" / "race_p2.attempts.log"):
            text = path.read_text()
            assert len(re.findall(r"^=== attempt \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC ===$", text,
                                  flags=re.M)) == attempt
            assert text.count("result\n") == attempt and text.count("error: bad\n") == attempt


@pytest.mark.parametrize("games, loaded", [("[g2048]", False), ("[g2048, shutbox, ludo]", False),
                                           ("[truco]", True)])
def test_parsing_the_snakefile_loads_no_kernel_library(tmp_path, games, loaded):
    """Every snakemake command parses the Snakefile: its imports stay light, without numba or zarr
    (they took 0.4 s of each command), unless the run plays Truco, whose rules need its
    kernels. Checked at the end of the parse of a dry run, over a finished 2x2 run directory (the
    run directory's check reads its layers' attributes)."""
    wf = workflow_copy(tmp_path)
    (wf / "small.yaml").write_text(f"games: {games}\ng2048: {{rows: 2, cols: 2}}\n")
    probe = ('\nimport sys as _sys\nprint("LOADED", sorted(m for m in ("numba", "zarr", "numcodecs", '
             '"matplotlib", "dask") if m in _sys.modules))\n')
    with open(wf / "Snakefile", "a") as f:
        f.write(probe)
    pipeline.solve(wf / "results" / "2048_2x2", 2, 2, log=open(os.devnull, "w"))
    proc = snakemake(wf, "-n", "--configfile", "small.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    line, = [l for l in proc.stdout.splitlines() if l.startswith("LOADED")]
    assert (line == "LOADED []") is not loaded, line
