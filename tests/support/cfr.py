"""Kuhn poker as a ``TabularGame``: the small game the CFR and LP kernels are checked on."""

import numpy as np
from strongsolve.kernels.cfr import CHANCE, DECISION, TERMINAL, TabularGame


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
