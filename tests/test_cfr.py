"""Discounted CFR and the exact best response on Kuhn poker.

Kuhn poker: H. W. Kuhn, "A simplified two-person poker", Contributions to the Theory of Games I (1950);
the first player's equilibrium value is -1/18 (also OpenSpiel's kuhn_poker documentation).
"""

import numpy as np
import pytest

from strongsolve.kernels.cfr import CHANCE, DECISION, TERMINAL, TabularGame, evaluate, solve

import naive


def kuhn_game():
    """Kuhn poker as a TabularGame, built breadth-first (so parents precede children)."""
    # histories: "" -> p0 {check 'c', bet 'b'}; "c" -> p1 {c, b}; "b" -> p1 {fold 'f', call 'k'};
    # "cb" -> p0 {f, k}; terminals: cc, bf, bk, cbf, cbk
    actions = {"": "cb", "c": "cb", "b": "fk", "cb": "fk"}
    types, players, isets, depth, utils = [], [], [], [], []
    kids, probs = [], []
    iset_index = {}
    frontier = [(None, "", 0)]
    table = []
    while frontier:
        nxt = []
        for deal, hist, d in frontier:
            table.append((deal, hist, d))
        for deal, hist, d in frontier:
            if deal is None:
                for a in range(3):
                    for b in range(3):
                        if a != b:
                            nxt.append(((a, b), "", d + 1))
            elif hist in actions:
                for act in actions[hist]:
                    nxt.append((deal, hist + act, d + 1))
        frontier = nxt
    index = {(deal, hist): i for i, (deal, hist, d) in enumerate(table)}
    for deal, hist, d in table:
        depth.append(d)
        children = []
        if deal is None:
            types.append(CHANCE); players.append(-1); isets.append(-1); utils.append(0.0)
            for a in range(3):
                for b in range(3):
                    if a != b:
                        children.append(index[((a, b), "")])
                        probs.append(1 / 6)
        elif hist in actions:
            p = len(hist) % 2
            key = (p, deal[p], hist)
            iset_index.setdefault(key, len(iset_index))
            types.append(DECISION); players.append(p); isets.append(iset_index[key]); utils.append(0.0)
            for act in actions[hist]:
                children.append(index[(deal, hist + act)])
                probs.append(0.0)
        else:
            types.append(TERMINAL); players.append(-1); isets.append(-1)
            win = 1.0 if deal[0] > deal[1] else -1.0
            utils.append({"cc": win, "bf": 1.0, "cbf": -1.0, "bk": 2 * win, "cbk": 2 * win}[hist])
        kids.append(children)
    ptr = np.zeros(len(table) + 1, np.int64)
    ptr[1:] = np.cumsum([len(k) for k in kids])
    return TabularGame(
        node_type=np.array(types, np.int8), node_player=np.array(players, np.int8),
        node_infoset=np.array(isets, np.int32), child_ptr=ptr,
        child=np.array([c for k in kids for c in k], np.int64), child_prob=np.array(probs),
        utility=np.array(utils), infoset_ptr=np.arange(len(iset_index) + 1, dtype=np.int64) * 2,
        node_depth=np.array(depth, np.int32)), iset_index


def test_kuhn_value_and_exploitability():
    game, _ = kuhn_game()
    res = solve(game, target_nash_conv=1e-4, max_iterations=20_000, check_every=20)
    assert res.nash_conv <= 1e-4
    assert abs(res.value - (-1 / 18)) <= 1e-4
    ev = evaluate(game, res.strategy)
    assert ev["br1"] - 1e-12 <= ev["value"] <= ev["br0"] + 1e-12


def test_kuhn_lp_reference_matches():
    # the plain sequence-form LP in tests/naive.py solves the same tree exactly
    game, _ = kuhn_game()
    assert naive.truco_lp_value_of_tabular(game) == pytest.approx(-1 / 18, abs=1e-9)


def test_best_response_of_uniform_profile():
    # against uniform play, a best response is checked against brute-force enumeration of pure
    # strategies (2^6 per player in Kuhn)
    game, isets = kuhn_game()
    uniform = np.full(int(game.infoset_ptr[-1]), 0.5)
    ev = evaluate(game, uniform)
    for p, key in ((0, "br0"), (1, "br1")):
        assert ev[key] == pytest.approx(naive.truco_pure_best_response(game, uniform, p), abs=1e-12)
    assert ev["value"] == pytest.approx(naive.truco_profile_value(game, uniform), abs=1e-12)


def test_malformed_tree_is_rejected():
    game, _ = kuhn_game()
    game.child_prob[:6] = 0.2
    with pytest.raises(ValueError, match="chance probabilities"):
        solve(game)
