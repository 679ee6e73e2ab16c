"""The score grid by dynamic programming: tiers and groups in dependency
order, small decks, and a region of a small deck's grid solved through the real workflow and
checked against the plain recursion of tests/naive/truco.py (every hand with the whole raise ladder,
solved by the sequence-form LP)."""

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.hints import solve_command
from strongsolve.games.truco.stages.grid import (TIERS, continuation_value, deck_root, grid_path,
                                                 score_tier, small_deck, solve_tier, starting_values,
                                                 successors, tier_groups, tier_inputs)
from strongsolve.games.truco.stages.groups import check_params, solve_scores
from strongsolve.games.truco.saved import read_subgame
from strongsolve.games.truco.tree import outcome_points

from naive import truco as naive

REPO = Path(__file__).resolve().parents[4]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
DECK = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah"]  # two ranks; vira 7: manilha Q, vira A: manilha 2


def test_groups_cover_every_score_once_in_dependency_order():
    order = [g for t in TIERS for g in tier_groups(t)]
    flat = [s for g in order for s in g]
    assert sorted(flat) == [(a, b) for a in range(12) for b in range(12)]
    done = set()
    for group in order:
        for s in group:
            assert score_tier(*s) in TIERS
            for t in successors(*s):
                assert t in done or t in group, (s, t)  # a hand leads only to solved scores
        done.update(group)
    assert [len(tier_groups(t)) for t in TIERS] == [12, 3, 12, 21, 30]


def test_successors_follow_the_match_rules():
    # a hand at 9-10 (tier t1): pé wins 1 -> pé (11) is mano next; three ties -> 10-9; 3+ ends it
    assert successors(9, 10) == [(10, 9), (10, 10), (11, 9)]
    # a hand of eleven at 11-4: fold gives pé 1, a played hand is worth 3
    assert successors(11, 4) == [(4, 11), (5, 11), (7, 11)]


def test_a_tier_job_needs_only_the_11_row_groups_its_hands_lead_to():
    # t1 at min 9: 9-10 -> 11-9 (group 9), 10-9 -> 9-11 (group 9), 10-10 -> 11-10 / 10-11 (group
    # 10); every other outcome stays in t1 or ends the match (3 points from 9 reach 12)
    assert tier_inputs("G", "t1", 9, "R") == ["R/group_9", "R/group_10"]
    assert tier_inputs("G", "t1", 10, "R") == ["R/group_10"]
    # t2 at min 8: 8-8 +3 -> 8-11 (group 8), 9-8 pé +3 -> 11-9 (group 9), 8-10 mano +3 -> 10-11
    # (group 10); and the tier above's summary
    assert tier_inputs("G", "t2", 8, "R") == ["G/t1_min9.csv", "R/group_8", "R/group_9", "R/group_10"]
    # a small deck's t1 reads its own 11 row, solved by its row11 tier job
    assert tier_inputs("G", "t1", 9) == ["G/row11_min9.csv"]


def test_small_deck_classes():
    deck = small_deck(DECK)
    # vira 7x (4 of 7): three 7s and three As unseen; vira Ax (3 of 7): four 7s and two As
    assert np.allclose(deck.probabilities, [4 / 7, 3 / 7])
    seven, ace = R.strength(R.parse_card("7d"), R.RANKS.index("7")), R.strength(R.parse_card("Ad"), R.RANKS.index("7"))
    assert deck.capacities[0][seven] == 3 and deck.capacities[0][ace] == 3 and deck.capacities[0].sum() == 6
    assert sorted(deck.capacities[1][deck.capacities[1] > 0]) == [2, 4]
    with pytest.raises(ValueError, match="at least 7"):
        small_deck(DECK[:6])
    assert solve_command("results", deck, 9) == (
        "snakemake --cores all --config games='[truco]' truco='{scores: {min_score: 9}, deck: "
        "[7d, 7s, 7h, 7c, Ad, As, Ah]}'")


def assert_utilities_follow_the_match_rule(root, scores, W, gap):
    """Every stored utility table is the match rule applied to the stored W of the next scores: to
    1e-12 (the DP's chaining, whatever the solver's precision) where the hand leaves the group, to
    ``gap`` (the fixed point's, the target NashConv) after three tied tricks, which swap the roles."""
    for a, b in scores:
        for c in (0, 1):
            attrs, _ = read_subgame(grid_path(root, a, b, c), arrays=False)
            pts = outcome_points(-1, raises=True) if max(a, b) < 11 else \
                outcome_points(0 if (a == 11 and b < 11) else 1 if (b == 11 and a < 11) else -1)
            for code, (pm, pp) in enumerate(pts):
                if code == 0 and (a == 11) == (b == 11):
                    continue  # FOLD: an outcome of a hand of eleven only
                u = 1.0 if a + pm >= 12 else 0.0 if b + pp >= 12 else 1.0 - W[(b + pp, a + pm)]
                tol = gap if (pm, pp) == (0, 0) else 1e-12
                assert attrs["utility"][code] == pytest.approx(u, abs=tol), (a, b, c, code)


def workflow_copy(tmp_path):
    for name in ("Snakefile", "config.yaml", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    return tmp_path


CONFIG = """games: [truco]
truco:
  deck: [7d, 7s, 7h, 7c, Ad, As, Ah]
  scores: {min_score: 9}
  target_nash_conv: 1.0e-9
  check_every: 50
  max_iterations: 2000000
  fixed_point_tol: 1.0e-10
  max_fixed_point_rounds: 30
"""


@pytest.mark.slow
def test_workflow_solves_a_small_deck_region_like_the_plain_recursion(tmp_path):
    wf = workflow_copy(tmp_path)
    (wf / "small.yaml").write_text(CONFIG)
    run = lambda: subprocess.run([str(SNAKEMAKE), "--cores", "2", "--configfile", "small.yaml"],
                                 cwd=wf, capture_output=True, text=True, timeout=900)
    proc = run()
    assert proc.returncode == 0, proc.stderr[-3000:]
    deck = small_deck(DECK)
    root = deck_root(wf / "results", deck)
    grid = root / "truco" / "grid"
    scores = [(a, b) for a in range(9, 12) for b in range(9, 12)]
    rows = []
    for name in ("row11_min9.csv", "t1_min9.csv"):
        with open(grid / name) as f:
            rows += list(csv.DictReader(f))
    assert sorted((int(r["mano"]), int(r["pe"]), int(r["vira_class"])) for r in rows) == \
        sorted((a, b, c) for a, b in scores for c in (0, 1))
    for r in rows:
        assert float(r["nash_conv"]) <= 1e-9 and int(r["iterations"]) > 0
        assert float(r["seconds"]) > 0 and float(r["max_rss_mib"]) > 0
    # the DP's W against the plain recursion: each subgame's value is within its NashConv (1e-9)
    # of the game value, and errors add up along the chain of hands (at most 5 here)
    want = naive.truco_grid_values(DECK, 9)
    for s in scores:  # the stored table of the whole grid is this recursion's output
        assert want[s] == pytest.approx(GRID_TABLE["W"]["%d-%d" % s], abs=1e-12), s
    W = {s: continuation_value(root, *s, deck) for s in scores}
    for s in scores:
        assert W[s] == pytest.approx(want[s], abs=5e-9), s
    # the region's summary: every subgame once, with its score's W
    with open(root / "truco" / "grid_summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert sorted((int(r["mano"]), int(r["pe"]), int(r["vira_class"])) for r in summary) == \
        sorted((a, b, c) for a, b in scores for c in (0, 1))
    for r in summary:
        assert float(r["W"]) == pytest.approx(W[(int(r["mano"]), int(r["pe"]))], abs=1e-15)
    assert_utilities_follow_the_match_rule(root, scores, W, 1e-9)
    # resume: a lost subgame's group (its fixed point with it) and the tier summary are rebuilt;
    # the other subgames are kept
    lost = grid_path(root, 10, 10, 1)
    shutil.rmtree(lost)
    (grid / "t1_min9.csv").unlink()
    before = {p.name: (p / "zarr.json").stat().st_mtime_ns for p in grid.glob("s*.zarr")}
    proc = run()
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = {p.name: (p / "zarr.json").stat().st_mtime_ns for p in grid.glob("s*.zarr")}
    group = {grid_path(root, 10, 10, c).name for c in (0, 1)}
    assert {n: t for n, t in after.items() if n not in group} == \
        {n: t for n, t in before.items() if n not in group}
    assert all(after[n] != before.get(n) for n in group)
    assert (grid / "t1_min9.csv").exists()
    log = (grid / "logs" / "t1_min9.log").read_text()
    assert "group [(9, 10), (10, 9)] already solved" in log and "group 10-10 round 0" in log


# W of every score of the 7-card deck by the plain recursion (tests/naive/truco.py, LP per hand over the
# whole raise ladder); 34 minutes to recompute, so stored with its source and command
GRID_TABLE = json.loads((Path(__file__).resolve().parents[3] / "truco_grid_7card.json").read_text())

# the exact solver (solver: lp, the sequence-form LP of every subgame): the CFR's per-subgame error,
# within its NashConv of the game value, would add up along the chain of hands (measured with the
# CFR: 2.1e-8 at NashConv 1e-8, 2.7e-9 at 1e-9); the target only closes the three-tie fixed point
WHOLE_GRID_CONFIG = CONFIG.replace("min_score: 9", "min_score: 0").replace(
    "target_nash_conv: 1.0e-9", "target_nash_conv: 1.0e-10") + "  workers: 2\n  solver: lp\n"


@pytest.mark.slow
def test_workflow_solves_the_whole_small_deck_grid_like_the_plain_recursion(tmp_path):
    """All 144 scores x 2 vira classes of the 7-card deck through the real workflow (row11, t1 .. t4
    in dependency order), W against the plain recursion's table."""
    assert GRID_TABLE["deck"] == DECK == naive.TRUCO_GRID_DECK
    wf = workflow_copy(tmp_path)
    (wf / "small.yaml").write_text(WHOLE_GRID_CONFIG)
    proc = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--configfile", "small.yaml"],
                          cwd=wf, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    deck = small_deck(DECK)
    root = deck_root(wf / "results", deck)
    with open(root / "truco" / "grid_summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert not list((root / "truco" / "grid").glob(".group-*"))  # checkpoints gone once stored
    every = [(a, b, c) for a in range(12) for b in range(12) for c in (0, 1)]
    assert sorted((int(r["mano"]), int(r["pe"]), int(r["vira_class"])) for r in summary) == every
    assert {r["tier"] for r in summary} == set(TIERS)
    for r in summary:
        assert abs(float(r["nash_conv"])) <= 1e-12 and int(r["iterations"]) > 0
    scores = [(a, b) for a in range(12) for b in range(12)]
    W = {s: continuation_value(root, *s, deck) for s in scores}
    assert_utilities_follow_the_match_rule(root, scores, W, 1e-10)
    errors = {s: abs(W[s] - GRID_TABLE["W"]["%d-%d" % s]) for s in scores}
    worst = max(errors, key=errors.get)
    assert errors[worst] <= 1e-9, (worst, errors[worst])  # the accuracy the grid promises


def assert_same_solutions(out, whole):
    """Two ``solve_scores`` outputs equal bit for bit: records and arrays of every subgame."""
    assert out.keys() == whole.keys()
    for k in whole:
        for field in ("value", "nash_conv", "iterations", "p_nobody", "utility"):
            assert out[k][field] == whole[k][field], (k, field)
        for name, arr in whole[k]["arrays"].items():
            assert np.array_equal(out[k]["arrays"][name], arr), (k, name)


def group_9_10():
    """The small deck, its classes' deals, the group 9-10 / 10-9 and a made-up W of the scores
    its hands lead to outside the group."""
    deck = small_deck(DECK)
    decks = {c: ab.deal_pairs(deck.capacities[c]) for c in deck.classes}
    group = [(9, 10), (10, 9)]
    W = {t: 0.5 + 0.01 * (t[0] - t[1]) for s in group for t in successors(*s) if t not in group}
    return deck, decks, group, W


def group_killed_after_round_0(tmp_path):
    """The group 9-10 / 10-9 of the small deck solved once unbroken (spill folder tmp_path /
    "unbroken") and once killed after its round 0 (tmp_path / "killed"). Returns ``solve(log,
    spill, prm)``, which runs it again, its parameters and the unbroken solution."""
    deck, decks, group, W = group_9_10()
    prm = check_params(dict(target_nash_conv=1e-6, check_every=50, max_iterations=10**6,
                            fixed_point_tol=1e-9, max_fixed_point_rounds=30))
    solve = lambda log, spill, p=prm: solve_scores(group, W, decks, deck.probabilities, p, log,
                                                   "g", spill_dir=spill)
    whole, _ = solve(lambda m: None, tmp_path / "unbroken")

    class Killed(Exception):
        pass

    def killed_after_round_0(line):
        if "round 0: W" in line:
            raise Killed

    with pytest.raises(Killed):
        solve(killed_after_round_0, tmp_path / "killed")
    return solve, prm, whole


def test_a_killed_group_resumes_from_its_finished_subgames(tmp_path):
    """Each subgame of each fixed-point round is checkpointed in the group's spill folder: a job
    killed after round 0 solves only round 1 again, and ends with what an unbroken run gives."""
    solve, prm, whole = group_killed_after_round_0(tmp_path)
    lines = []
    out, _ = solve(lines.append, tmp_path / "killed")
    resumed = [m for m in lines if m.endswith(f"(resumed from {tmp_path / 'killed'})")]
    assert len(resumed) == 4 and all(" round 0 " in m for m in resumed)
    assert any(" round 1 " in m and "resumed" not in m for m in lines)
    assert_same_solutions(out, whole)
    # other solver parameters: the checkpoints are not theirs
    lines = []
    solve(lines.append, tmp_path / "killed", dict(prm, target_nash_conv=1e-7))
    assert lines and not any("resumed" in m for m in lines)


def test_only_the_last_round_is_refined_off_the_path(tmp_path):
    """The first round's W is a guess: its solves keep the average strategy (no off-path sets,
    no rung tried); the stored solves, of the last round, are refined. A first round that already
    is the fixed point (a tolerance every round meets) is followed by one refined round."""
    import json

    deck, decks, group, W = group_9_10()
    prm = check_params(dict(target_nash_conv=1e-4, check_every=10, max_iterations=10**6,
                            fixed_point_tol=1e-6, max_fixed_point_rounds=30))
    lines = []
    out, _ = solve_scores(group, W, decks, deck.probabilities, prm, lines.append, "g",
                          spill_dir=tmp_path / "spill")
    last = max(int(m.split(" round ")[1].split()[0].rstrip(":")) for m in lines)
    assert last >= 1
    metas = {int(path.stem.rsplit("_r", 1)[1]): json.loads(path.read_text())
             for path in (tmp_path / "spill").glob("*.json")}
    assert all(m["off_path_rungs"] == 0 and m["off_path_sets"] == 0 for r, m in metas.items() if r == 0)
    assert all(m["off_path_rungs"] >= 1 for r, m in metas.items() if r == last)
    assert all(r["off_path_rungs"] >= 1 for r in out.values())

    lines = []
    out, _ = solve_scores(group, W, decks, deck.probabilities, dict(prm, fixed_point_tol=1.0),
                          lines.append, "g")
    rounds = sorted({m.split(" round ")[1].split()[0].rstrip(":") for m in lines})
    assert rounds == ["0", "1"]
    assert all(r["off_path_rungs"] >= 1 for r in out.values())


def test_a_tighter_target_solves_again_the_groups_of_the_subgames_above_it(tmp_path):
    """A region solved to a loose NashConv, then asked for a tighter one: each group holding a
    subgame stored above the new target is solved again and replaced in place, whole; the other
    groups are kept untouched."""
    deck = small_deck(DECK)
    root = deck_root(tmp_path, deck)
    grid = root / "truco" / "grid"
    loose = dict(target_nash_conv=1e-3, check_every=10, max_iterations=10**6,
                 fixed_point_tol=1e-5, max_fixed_point_rounds=30, solver="tabular")
    tight = dict(loose, target_nash_conv=1e-6)
    quiet = lambda m: None
    solve_tier("row11", tmp_path, tight, deck, min_score=9, log=quiet)
    row11 = {p.name: (p / "zarr.json").stat().st_mtime_ns for p in grid.glob("s*.zarr")}
    solve_tier("t1", tmp_path, loose, deck, min_score=9, log=quiet)
    stored = lambda: {p.name: read_subgame(p, arrays=False)[0] for p in grid.glob("s*.zarr")}
    before = stored()
    above = {n for n, a in before.items() if a["nash_conv"] > 1e-6}
    assert above and above.isdisjoint(row11)  # the loose t1 solve left some above 1e-6
    # the group solved again starts its fixed point from its stored W, not from a neighbour's
    for group in tier_groups("t1"):
        start = starting_values(root, group, deck)
        for s in group:
            assert start[s] == continuation_value(root, *s, deck), s
    lines = []
    rows = solve_tier("t1", tmp_path, tight, deck, min_score=9, log=lines.append)
    after = stored()
    assert after.keys() == before.keys() and len(rows) == 8
    # a group with a subgame above 1e-6 is written whole (its fixed point moves); the others kept
    name_of = lambda s, c: grid_path(root, *s, c).name
    resolved = {name_of(s, c) for g in tier_groups("t1") for s in g for c in deck.classes
                if any(name_of(t, k) in above for t in g for k in deck.classes)}
    for name, attrs in after.items():
        if name in above:
            assert any(name in m and "solving it again" in m for m in lines), name
        if name in resolved:
            assert attrs["nash_conv"] <= 1e-6 and attrs["params"]["target_nash_conv"] == 1e-6, name
        else:
            assert attrs == before[name], name
    assert {p.name: (p / "zarr.json").stat().st_mtime_ns for p in grid.glob("s*.zarr")
            if p.name in row11} == row11
    assert not list(grid.glob(".*"))  # no old copy nor temporary left
    lines = []
    solve_tier("t1", tmp_path, tight, deck, min_score=9, log=lines.append)
    assert stored() == after and not any("solving it again" in m for m in lines)


@pytest.mark.parametrize("solver", ["forest", "tabular"])
def test_a_subgame_killed_mid_solve_continues_from_its_checkpoint(tmp_path, monkeypatch, solver):
    """A subgame saves its CFR accumulators while it is solved (``solve.Partial``): a job killed in
    the middle of one continues from the last checkpoint and ends bit for bit where an unbroken
    run does."""
    from strongsolve.games.truco.stages import groups as solve_module
    deck = small_deck(DECK)
    decks = {c: ab.deal_pairs(deck.capacities[c]) for c in deck.classes}
    group = [(10, 10)]
    W = {t: 0.5 + 0.01 * (t[0] - t[1]) for t in successors(10, 10) if t not in group}
    prm = check_params(dict(target_nash_conv=1e-7, check_every=10, max_iterations=10**6,
                            fixed_point_tol=1e-9, max_fixed_point_rounds=30, solver=solver))
    solve = lambda spill: solve_scores(group, W, decks, deck.probabilities, prm, lambda m: None,
                                       "g", spill_dir=spill)
    whole, _ = solve(tmp_path / "unbroken")
    assert whole[((10, 10), 0)]["iterations"] > 30

    class Killed(Exception):
        pass

    checks = []

    def killed_after_the_third_step(s, c, every=60.0, target=None):
        def progress(iterations, nash_conv, seconds):
            checks.append(iterations)
            if len(checks) == 3:
                raise Killed
        return progress

    monkeypatch.setattr(solve_module, "CHECKPOINT_SECONDS", 0.0)
    real_progress = solve_module._progress_line
    monkeypatch.setattr(solve_module, "_progress_line", killed_after_the_third_step)
    with pytest.raises(Killed):
        solve(tmp_path / "killed")
    saved = json.loads((tmp_path / "killed" / "s10-10_v0_r0_partial.json").read_text())
    assert checks == [10, 20, 30] and saved["iters"] == 30 and saved["start_iters"] == 0
    assert sorted(p.name for p in (tmp_path / "killed").glob("*partial_i*.npy")) == [
        "s10-10_v0_r0_partial_i30_regret.npy", "s10-10_v0_r0_partial_i30_strat_sum.npy"]
    monkeypatch.setattr(solve_module, "_progress_line", real_progress)
    out, _ = solve(tmp_path / "killed")
    assert_same_solutions(out, whole)
    assert not list((tmp_path / "killed").glob("*partial*"))  # gone once the subgames are whole


def test_a_damaged_checkpoint_is_ignored_and_the_subgame_solved_from_its_start(tmp_path, capsys):
    """A checkpoint whose arrays cannot be read is reported, removed and not used."""
    from strongsolve.games.truco.stages.groups import Partial
    prm = check_params({})
    table = [0.5] * 4
    partial = Partial(tmp_path, (10, 10), 0, 0, table, prm)
    partial.saver(0, 0.0, 0.0, every=0.0)(np.zeros(6), np.ones(6), 20, [(10, 0.5), (20, 0.25)])
    assert partial.load()[2:4] == (20, 0)
    (tmp_path / "s10-10_v0_r0_partial_i20_regret.npy").write_bytes(b"\x93NUMPY broken")
    assert Partial(tmp_path, (10, 10), 0, 0, table, prm).load() is None
    assert "ignoring the damaged checkpoint" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    # another utility table or other parameters: not this solve's checkpoint, left alone
    partial.saver(0, 0.0, 0.0, every=0.0)(np.zeros(6), np.ones(6), 30, [])
    assert Partial(tmp_path, (10, 10), 0, 0, [0.4] * 4, prm).load() is None
    assert Partial(tmp_path, (10, 10), 0, 0, table, dict(prm, target_nash_conv=1e-5)).load() is None
    assert Partial(tmp_path, (10, 10), 0, 0, table, prm).load()[2] == 30


def test_a_tighter_target_leaves_no_subgame_solved_for_stale_continuation_values(tmp_path):
    """A region solved to 1e-3, then asked for 1e-6 (the workflow reruns both tier jobs): a
    subgame already below 1e-6 was solved for the utility table of the 1e-3 values of the scores
    its hands lead to (its partner's, through three ties, or another group's); kept as it is, the
    region's W would be off the plain recursion by the 1e-3 solve's error. Every stored table must
    follow the match rule on the W stored now, and W must be as close as a fresh 1e-6 solve's."""
    deck = small_deck(DECK)
    root = deck_root(tmp_path, deck)
    loose = dict(target_nash_conv=1e-3, check_every=50, max_iterations=10**6,
                 fixed_point_tol=1e-5, max_fixed_point_rounds=30)
    tight = dict(loose, target_nash_conv=1e-6)
    quiet = lambda m: None
    for prm in (loose, tight):
        for tier in ("row11", "t1"):
            solve_tier(tier, tmp_path, prm, deck, min_score=9, log=quiet)
    scores = [(a, b) for a in range(9, 12) for b in range(9, 12)]
    W = {s: continuation_value(root, *s, deck) for s in scores}
    # ties to the fixed point's tolerance, max(fixed_point_tol, target), as a fresh solve
    assert_utilities_follow_the_match_rule(root, scores, W, 1e-5)
    for s in scores:  # a fresh 1e-6 solve: 1.2e-6 at most (the 1e-3 one: 1.2e-4)
        assert W[s] == pytest.approx(GRID_TABLE["W"]["%d-%d" % s], abs=3e-6), s


def test_a_damaged_stored_subgame_names_the_tier_job_which_then_solves_it_again(tmp_path):
    """A stored grid subgame whose zarr.json is damaged: reading it names the file and the tier
    job's rule (not the 11 row's), and rerunning that tier job replaces it with a solved copy."""
    from strongsolve.store.errors import CorruptResultError
    deck = small_deck(DECK)
    root = deck_root(tmp_path, deck)
    prm = dict(target_nash_conv=1e-6, check_every=50, max_iterations=10**6,
               fixed_point_tol=1e-5, max_fixed_point_rounds=30)
    quiet = lambda m: None
    for tier in ("row11", "t1"):
        solve_tier(tier, tmp_path, prm, deck, min_score=9, log=quiet)
    good = read_subgame(grid_path(root, 9, 10, 0), arrays=False)[0]
    for s in ((9, 10), (11, 10)):  # of the tier job itself, and of the tier above it
        damaged = grid_path(root, *s, 0) / "zarr.json"
        damaged.write_text(damaged.read_text()[:200])
        with pytest.raises(CorruptResultError, match=f"{damaged}.*--forcerun truco_grid_tier"):
            read_subgame(damaged.parent, arrays=False)
    lines = []
    for tier in ("row11", "t1"):
        solve_tier(tier, tmp_path, prm, deck, min_score=9, log=lines.append)
    assert sum("damaged" in m for m in lines) == 2
    fresh = read_subgame(grid_path(root, 9, 10, 0), arrays=False)[0]
    assert fresh["nash_conv"] <= 1e-6 and fresh["value"] == pytest.approx(good["value"], abs=1e-5)
    scores = [(a, b) for a in range(9, 12) for b in range(9, 12)]
    W = {s: continuation_value(root, *s, deck) for s in scores}
    assert_utilities_follow_the_match_rule(root, scores, W, 1e-5)
    assert not list((root / "truco" / "grid").glob(".*"))


def test_a_damaged_spilled_round_is_solved_again_to_the_unbroken_result(tmp_path, capsys):
    """A killed job's spilled subgame of a round whose record (JSON) or arrays (.npy) are damaged
    (a truncated or empty file) is reported, naming the file, and solved again: the group ends bit
    for bit where an unbroken run does."""
    solve, prm, whole = group_killed_after_round_0(tmp_path)
    spill = tmp_path / "killed"
    record, array = spill / "s10-9_v1_r0.json", spill / "s9-10_v0_r0_regret.npy"
    record.write_text(record.read_text()[:40])
    array.write_bytes(b"")
    capsys.readouterr()
    lines = []
    out, _ = solve(lines.append, spill)
    err = capsys.readouterr().err
    assert f"ignoring the damaged checkpoint {record}" in err
    assert f"ignoring the damaged checkpoint {spill / 's9-10_v0_r0.json'}" in err and "EOFError" in err
    assert sum("resumed" in m for m in lines) == 2  # the two round-0 subgames left whole
    assert_same_solutions(out, whole)


def test_an_empty_checkpoint_array_is_ignored(tmp_path, capsys):
    """An empty .npy of a mid-subgame checkpoint (what a crash of the machine can leave of a file
    renamed before it reached the disk) is reported and removed like any damaged one."""
    from strongsolve.games.truco.stages.groups import Partial
    prm = check_params({})
    partial = Partial(tmp_path, (10, 10), 0, 0, [0.5] * 4, prm)
    partial.saver(0, 0.0, 0.0, every=0.0)(np.zeros(6), np.ones(6), 20, [(10, 0.5), (20, 0.25)])
    (tmp_path / "s10-10_v0_r0_partial_i20_strat_sum.npy").write_bytes(b"")
    assert Partial(tmp_path, (10, 10), 0, 0, [0.5] * 4, prm).load() is None
    assert "ignoring the damaged checkpoint" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("solver", ["public", "tabular"])
def test_a_subgame_continued_from_its_kept_accumulators_is_the_unbroken_solve(tmp_path, solver):
    """Accumulators kept beside a subgame (written and read back through the store, checksummed)
    continue its DCFR where it stopped: the continued solve's regrets and strategy sums are bit for
    bit those of one unbroken run of as many iterations."""
    from strongsolve.games.truco.saved import read_accumulators, write_accumulators
    from strongsolve.games.truco.stages.groups import _solve_one

    deck = small_deck(DECK)
    s, c = (10, 10), 0
    W = {t: 0.5 for t in successors(*s)}
    from strongsolve.games.truco.stages.groups import hand_utility_table
    table = hand_utility_table(*s, W)
    pairs = ab.deal_pairs(deck.capacities[c])
    prm = lambda **kw: check_params(dict(dict(check_every=5, max_iterations=10**5, solver=solver),
                                         **kw))
    loose = _solve_one(s, c, pairs, table, prm(target_nash_conv=1e-2), None, None, True)
    path = tmp_path / "s10-10_v0.zarr"
    regret, strat_sum, iters = loose[3]
    write_accumulators(path, regret, strat_sum, iters, loose[2]["checks"])
    kept = read_accumulators(path)
    assert kept[2] == iters == loose[2]["iterations"] > 0
    assert np.array_equal(kept[0], regret) and np.array_equal(kept[1], strat_sum)
    assert kept[3] == [tuple(x) for x in loose[2]["checks"]]
    cont = _solve_one(s, c, pairs, table, prm(target_nash_conv=1e-5), kept, None, True)
    total = cont[2]["iterations"]
    assert total > iters and cont[2]["nash_conv"] <= 1e-5
    # one run of `total` iterations from nothing (a target it does not reach before the budget
    # ends): the same accumulators and the same average strategy's value
    unbroken = _solve_one(s, c, pairs, table, prm(target_nash_conv=1e-9, max_iterations=total),
                          None, None, True)
    assert unbroken[2]["iterations"] == total
    for a, b in zip(cont[3][:2], unbroken[3][:2]):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert cont[2]["value"] == unbroken[2]["value"]


def test_a_tier_keeps_its_accumulators_and_a_tighter_target_continues_from_them(tmp_path):
    """With ``keep_accumulators``, every subgame of the tier has its accumulators beside it (its
    iterations), and asking for a tighter target continues each re-solved subgame from them; a
    damaged file is reported and that subgame starts over."""
    from strongsolve.games.truco.saved import accumulators_path, read_accumulators

    deck = small_deck(DECK)
    root = deck_root(tmp_path, deck)
    grid = root / "truco" / "grid"
    loose = dict(target_nash_conv=1e-3, check_every=10, max_iterations=10**6,
                 fixed_point_tol=1e-5, max_fixed_point_rounds=30, solver="tabular")
    quiet = lambda m: None
    solve_tier("row11", tmp_path, loose, deck, min_score=10, log=quiet, keep_accumulators=True)
    solve_tier("t1", tmp_path, loose, deck, min_score=10, log=quiet, keep_accumulators=True)
    stored = {p: read_subgame(p, arrays=False)[0] for p in sorted(grid.glob("s*.zarr"))}
    assert len(stored) == 2 + 2 * 2 + 2  # 11-11, 11-10 and 10-11, 10-10 (two classes each)
    for p, attrs in stored.items():
        assert read_accumulators(p)[2] == attrs["iterations"], p
    damaged = grid / "s10-10_v1.zarr"
    accumulators_path(damaged).write_bytes(b"not an archive")
    lines = []
    solve_tier("t1", tmp_path, dict(loose, target_nash_conv=1e-6), deck, min_score=10,
               log=lines.append, keep_accumulators=True)
    before = stored[grid / "s10-10_v0.zarr"]["iterations"]
    assert any("s10-10_v0.zarr continues from its kept accumulators at iteration "
               f"{before}" in m for m in lines), lines
    assert any("not continuing s10-10_v1.zarr" in m and "cannot be read" in m for m in lines)
    after = read_subgame(grid / "s10-10_v0.zarr", arrays=False)[0]
    assert after["nash_conv"] <= 1e-6 and after["iterations"] > before
    assert read_accumulators(grid / "s10-10_v0.zarr")[2] == after["iterations"]
    assert read_accumulators(damaged)[2] == read_subgame(damaged, arrays=False)[0]["iterations"]
    assert not list(grid.glob(".*"))
