"""Sizes of the raise trees per tier and vira class, counted without holding a whole tree.

A full-deck raise tree (about 9e8 nodes per vira class with the whole ladder) does not fit in
memory, so the counts are taken deal group by deal group: the deals of one mano hand are built
together (``tree._build_raises``), counted, and dropped. Mano's information sets (own hand, public
history) only occur in the deals of that hand, so unique keys within the group count them exactly;
a second pass groups the deals by pé's hand for pé's information sets.

``solver_bytes`` turns the counts into the memory of the current in-memory solver
(``kernels.cfr.solve`` on a ``TabularGame``), from the dtypes of the arrays it holds.
"""

import numpy as np

from ...kernels.cfr import DECISION, TERMINAL
from . import abstraction as ab
from .rules import N_STRENGTHS
from .tree import _build_raises

# bytes the in-memory CFR holds per node, per edge, per action slot and per information set
# (kernels/cfr.py and tree.py arrays; an edge per node but the root's children)
BYTES_PER_NODE = (1 + 1 + 4 + 8 + 8 + 4 + 8  # type, player, infoset, child_ptr, utility, depth, level order
                  + 1  # HandTree.outcome
                  + 3 * 8  # CFR: reach of the others, own reach, value
                  + 2 * 8)  # best response: reach weights, values
BYTES_PER_EDGE = 8 + 8  # child, child_prob
BYTES_PER_SLOT = 7 * 8  # regret, strategy sum, current strategy, new regrets, new strategy, average, BR q
BYTES_PER_INFOSET = 8 + 8 + 1 + 8  # infoset_ptr, key, player, BR choice


def solver_bytes(nodes, slots, infosets):
    """Bytes of the in-memory CFR solver for a tree of these counts (arrays only, no builder)."""
    return nodes * (BYTES_PER_NODE + BYTES_PER_EDGE) + slots * BYTES_PER_SLOT \
        + infosets * BYTES_PER_INFOSET


def raise_tree_sizes(cap, caps=(4, 4), three_ties="nobody", infosets=True, hands_limit=None,
                     face_down=False):
    """Count the raise tree of a deck without building it whole.

    Parameters
    ----------
    cap : int array (13,)
        Unseen cards per strength class (``abstraction.class_capacities``).
    caps : (int, int)
        Raise caps of mano and pé (``pruning.raise_caps``).
    three_ties : {"nobody", "mano"}
    infosets : bool
        Also count information sets and action slots (a second pass over the deals).
    hands_limit : int or None
        Only the deals of the first ``hands_limit`` mano hands (a sample; the counts are then of
        that part of the tree).
    face_down : bool
        The face-down rule (rules.py; ``tree.build_hand_tree(face_down=True)``).

    Returns
    -------
    dict
        ``deals`` (abstract deal pairs), ``nodes`` (root included), ``decision_nodes``,
        ``terminal_nodes``, and with ``infosets`` also ``infosets`` and ``action_slots``.
    """
    hands, pairs, weights = ab.deal_pairs(cap)
    hands = np.array(hands, np.int64)
    if hands_limit is not None:
        keep = pairs[:, 0] < hands_limit
        pairs, weights = pairs[keep], weights[keep]
    probs = weights / weights.sum()
    strengths = np.arange(N_STRENGTHS, dtype=np.int64)
    top = np.array(caps, np.int64)
    mano_mode = three_ties == "mano"
    out = dict(deals=len(pairs), nodes=1, decision_nodes=0, terminal_nodes=0)
    if infosets:
        out.update(infosets=0, action_slots=0)
    for player in ((0, 1) if infosets else (0,)):
        groups = np.argsort(pairs[:, player], kind="stable")
        bounds = np.flatnonzero(np.diff(pairs[groups, player])) + 1
        for idx in np.split(groups, bounds):
            node_type, node_player, node_key, _, _, _, n_child, _ = _build_raises(
                strengths, hands, pairs[idx], probs[idx], mano_mode, top, bool(face_down))
            if player == 0:
                out["nodes"] += len(node_type) - 1
                out["decision_nodes"] += int(np.count_nonzero(node_type == DECISION))
                out["terminal_nodes"] += int(np.count_nonzero(node_type == TERMINAL))
            if infosets:
                mine = np.flatnonzero(node_player == player)
                keys, first = np.unique(node_key[mine], return_index=True)
                out["infosets"] += len(keys)
                out["action_slots"] += int(n_child[mine[first]].sum())
    return out


def tier_sizes(classes=range(ab.N_VIRA_CLASSES), tiers=(1, 2, 3, 4), infosets=True, log=None,
               hands_limit=None, face_down=False):
    """One row per (tier, vira class): the counts of ``raise_tree_sizes`` with both caps at the
    tier (the symmetric rule of pruning.py) and the bytes of the in-memory solver; ``face_down``
    as in ``raise_tree_sizes`` (each row records it)."""
    rows = []
    for t in tiers:
        for c in classes:
            r = raise_tree_sizes(ab.class_capacities(c), (t, t), infosets=infosets,
                                 hands_limit=hands_limit, face_down=face_down)
            row = dict(tier=t, vira_class=c, face_down=bool(face_down), **r)
            if infosets:
                row["solver_bytes"] = solver_bytes(r["nodes"], r["action_slots"], r["infosets"])
            rows.append(row)
            if log:
                log(row)
    return rows
