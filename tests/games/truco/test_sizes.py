"""Raise-tree sizes counted deal group by deal group (games/truco/sizes.py) equal the counts of the
tree built whole, and `strongsolve truco sizes` prints them."""

import json

import numpy as np
import pytest

from strongsolve import cli
from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.rules import N_STRENGTHS
from strongsolve.games.truco.sizes import raise_tree_sizes, solver_bytes
from strongsolve.games.truco.tree import build_hand_tree
from strongsolve.kernels.cfr import DECISION, TERMINAL


@pytest.mark.parametrize("caps", [(1, 1), (2, 3), (4, 4)])
def test_counts_equal_the_built_tree(caps):
    cap = ab.class_capacities(3)
    got = raise_tree_sizes(cap, caps, hands_limit=3)
    hands, pairs, weights = ab.deal_pairs(cap)
    keep = pairs[:, 0] < 3
    g = build_hand_tree(np.arange(N_STRENGTHS), np.array(hands), pairs[keep], weights[keep],
                        raises=True, raise_caps=caps).game
    assert got == dict(deals=int(keep.sum()), nodes=g.n_nodes,
                       decision_nodes=int((g.node_type == DECISION).sum()),
                       terminal_nodes=int((g.node_type == TERMINAL).sum()),
                       infosets=g.n_infosets, action_slots=int(g.infoset_ptr[-1]))


def test_cli_sizes(capsys):
    assert cli.main(["truco", "sizes", "--tiers", "1", "--classes", "5", "--hands-limit", "2",
                     "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    want = raise_tree_sizes(ab.class_capacities(5), (1, 1), hands_limit=2)
    assert {k: row[k] for k in want} == want
    assert row["solver_bytes"] == solver_bytes(want["nodes"], want["action_slots"], want["infosets"])
    assert cli.main(["truco", "sizes", "--tiers", "5"]) == 2
    assert "bad --tiers '5'" in capsys.readouterr().err


def test_cli_sizes_projects_the_forest_solver(capsys):
    from strongsolve.games.truco.sizes import FULL_DECK_TIERS, tier_job_mb

    assert cli.main(["truco", "sizes", "--tiers", "1", "--classes", "5", "--hands-limit", "2",
                     "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    # 4 B per node, 32 per deal, 768 MiB of interpreter and scratch, and the larger of the solve
    # (24 B per slot, 21 per information set) and the warm start (the previous class's regrets,
    # keys and slot offsets and the new regrets: 16 B per slot, 37 per information set)
    def peak(nodes, slots, infosets, deals):
        return (4 * nodes + 32 * deals + max(24 * slots + 21 * infosets, 16 * slots + 37 * infosets)
                + 768 * 2 ** 20)

    assert row["forest_bytes"] == peak(row["nodes"], row["action_slots"], row["infosets"], row["deals"])
    assert cli.main(["truco", "sizes", "--tiers", "1", "--classes", "5", "--hands-limit", "2"]) == 0
    out = capsys.readouterr().out
    assert f"forest peak = 4 B x {row['nodes']:,} nodes + 32 B x {row['deals']:,} deals" in out
    nodes, infosets, slots, deals = FULL_DECK_TIERS[4]
    assert peak(nodes, slots, infosets, deals) < 12 * 2 ** 30
    # the job's peak is the off-path refinement's
    assert tier_job_mb("t4") == int(refinement(4) * 1.1 / 10 ** 6) + 1
    with pytest.raises(ValueError, match="bad tier 't5'"):
        tier_job_mb("t5")


def test_tier_job_mb_quotes_the_solver_auto_takes():
    from strongsolve.games.truco.sizes import FULL_DECK_TIERS, PUBLIC_PEAK_MIB, tier_job_mb

    def mb(b):
        return int(b * 1.1 / 10 ** 6) + 1

    # auto: the public tree where its peak is measured (t1, t2), the forest below; either at least
    # the off-path refinement's peak
    assert PUBLIC_PEAK_MIB == {1: 2_075, 2: 4_298}
    assert tier_job_mb("t1") == tier_job_mb("t1", "public") == mb(max(2_075 * 2 ** 20, refinement(1)))
    assert tier_job_mb("t2") == mb(max(4_298 * 2 ** 20, refinement(2)))
    assert tier_job_mb("t3") == tier_job_mb("t3", "forest")
    # forced public below t2: the line through the two measured tiers, in action slots
    s1, s2, s3 = (FULL_DECK_TIERS[t][2] for t in (1, 2, 3))
    mib3 = 2_075 + (4_298 - 2_075) * (s3 - s1) / (s2 - s1)
    assert tier_job_mb("t3", "public") == mb(max(mib3 * 2 ** 20, refinement(3)))
    # the tabular solver holds its own tree (kernels/cfr.py), no forest refiner
    nodes, infosets, slots, deals = FULL_DECK_TIERS[1]
    assert tier_job_mb("t1", "tabular") == mb(nodes * (75 + 16) + slots * 56 + infosets * 25)
    with pytest.raises(ValueError, match="bad solver 'cfr'"):
        tier_job_mb("t1", "cfr")


def refinement(tier):
    """The refinement's peak bytes written out (kernels/off_path.py, forest_cfr.py): the forest with
    its accumulators (4 B per node, 24 per slot, 21 per information set, 32 per deal), the refiner
    (19 B per node, 8 per decision node, 26 per information set, 16 per slot) and 768 MiB; decision
    nodes counted on the t1 and t2 forests, else the larger of their shares of the nodes."""
    from strongsolve.games.truco.sizes import FULL_DECK_TIERS

    nodes, infosets, slots, deals = FULL_DECK_TIERS[tier]
    decisions = {1: 22_983_752, 2: 69_335_036}.get(tier)
    if decisions is None:
        decisions = int(nodes * max(22_983_752 / 50_079_167, 69_335_036 / 154_629_209))
    return (4 * nodes + 24 * slots + 21 * infosets + 32 * deals
            + 19 * nodes + 8 * decisions + 26 * infosets + 16 * slots + 768 * 2 ** 20)
