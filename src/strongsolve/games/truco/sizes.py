"""Sizes of the raise trees per tier and vira class, counted without holding a whole tree.

A full-deck raise tree (about 9e8 nodes per vira class with the whole ladder) does not fit in
memory, so the counts are taken deal group by deal group: the deals of one mano hand are built
together (``tree._build_raises``), counted, and dropped. Mano's information sets (own hand, public
history) only occur in the deals of that hand, so unique keys within the group count them exactly;
a second pass groups the deals by pé's hand for pé's information sets.

``solver_bytes`` turns the counts into the memory of the in-memory solver (``kernels.cfr.solve`` on
a ``TabularGame``), from the dtypes of the arrays it holds; ``forest_peak_bytes`` into that of the
forest solver (``kernels.forest_cfr``: 4 bytes per node, 24 per action slot, 21 per information set,
32 per deal; while it warm-starts from the previous vira class, 16 per slot and 37 per
information set instead). ``FULL_DECK_TIERS`` holds the full deck's counts
(measured with ``strongsolve truco sizes``), from which the workflow sizes a tier job's memory.
"""

import numpy as np

from ...kernels.cfr import DECISION, TERMINAL
from ...kernels import forest_cfr as fc
from ...kernels import off_path as op
from . import encoding as ab
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


# Full deck, vira class 0, symmetric pruning (``strongsolve truco sizes``, 2026-12-01; the nine
# classes gave the same counts for t1): nodes (root included), information sets, action slots, deals
FULL_DECK_TIERS = {1: (50_079_167, 2_767_309, 5_702_400, 140_118),
                   2: (154_629_209, 11_494_361, 23_767_656, 140_118),
                   3: (391_286_567, 33_393_136, 70_687_026, 140_118),
                   4: (895_521_171, 84_085_760, 180_543_104, 140_118)}
# the interpreter, numpy, numba and the compiled kernels, threads' scratch and builder chunks
# (measured: bench/truco_forest.py, peak RSS minus the arrays on the t1 subgame)
FOREST_OVERHEAD_BYTES = 768 * 2 ** 20


def forest_peak_bytes(nodes, slots, infosets, deals):
    """Peak bytes of a forest-solver subgame job: the larger of its two phases, plus
    ``FOREST_OVERHEAD_BYTES``. Warm start: the forest without accumulators, the previous vira
    class's keys, slot offsets and regrets read from the spill files (16 bytes per information set,
    8 per slot) and the transferred regrets (8 per slot). Solve: the forest with its three
    accumulators (``kernels.forest_cfr.forest_bytes``); the transfer's arrays are gone by then and
    the other subgames of the group wait on disk (solve._spill)."""
    solve = fc.forest_bytes(nodes, slots, infosets, deals)
    warm = solve - fc.BYTES_PER_SLOT * slots + 16 * infosets + 16 * slots
    return max(solve, warm) + FOREST_OVERHEAD_BYTES


def forest_arithmetic(nodes, slots, infosets, deals):
    """``forest_peak_bytes`` written out term by term, e.g. for the ``sizes`` command."""
    b = forest_peak_bytes(nodes, slots, infosets, deals)
    common = f"{fc.BYTES_PER_NODE} B x {nodes:,} nodes + {fc.BYTES_PER_DEAL} B x {deals:,} deals"
    solve = (f"{fc.BYTES_PER_SLOT} B x {slots:,} slots + {fc.BYTES_PER_INFOSET} B x "
             f"{infosets:,} infosets")
    warm = f"16 B x {slots:,} slots + {fc.BYTES_PER_INFOSET + 16} B x {infosets:,} infosets"
    return (f"{common} + max(solve: {solve}; warm start: {warm}) + "
            f"{FOREST_OVERHEAD_BYTES // 2 ** 20} MiB = {b / 2 ** 30:.2f} GiB")


# decision nodes of the full deck's forests, vira class 0 (counted on the built forests, 2026-12-06);
# the other tiers are bounded with the larger measured share of the nodes
DECISION_NODES = {1: 22_983_752, 2: 69_335_036}
DECISION_SHARE = max(DECISION_NODES[t] / FULL_DECK_TIERS[t][0] for t in DECISION_NODES)


def refinement_peak_bytes(tier):
    """Peak bytes of a full-deck subgame job of ``tier`` (1..4) while its solve is refined off the
    path (kernels/off_path.py): the forest with its accumulators, the refiner's arrays
    (``off_path.refiner_bytes``; decision nodes ``DECISION_NODES`` or ``DECISION_SHARE`` of the
    nodes) and ``FOREST_OVERHEAD_BYTES``."""
    nodes, infosets, slots, deals = FULL_DECK_TIERS[tier]
    decisions = DECISION_NODES.get(tier, int(nodes * DECISION_SHARE))
    return (fc.forest_bytes(nodes, slots, infosets, deals)
            + op.refiner_bytes(nodes, decisions, infosets, slots) + FOREST_OVERHEAD_BYTES)


# Peak RSS of one public-tree worker (kernels/public_cfr.py; MiB), measured on full-deck subgames:
# t1 over a whole tier job to NashConv 1e-3 (two fixed-point rounds, warm starts included), t2 while
# its tree is built (bench/RECORD.md, "Truco: the public-tree (vector-form) CFR", 2026-12-04)
PUBLIC_PEAK_MIB = {1: 2_075, 2: 4_298}


def public_peak_mib(tier):
    """Peak MiB of a full-deck public-tree subgame job of ``tier`` (1..4): ``PUBLIC_PEAK_MIB`` where
    measured, else the straight line through the two measured tiers in the tier's action slots
    (``FULL_DECK_TIERS``), an extrapolation."""
    if tier in PUBLIC_PEAK_MIB:
        return PUBLIC_PEAK_MIB[tier]
    (s1, m1), (s2, m2) = [(FULL_DECK_TIERS[t][2], PUBLIC_PEAK_MIB[t]) for t in (1, 2)]
    return m1 + (m2 - m1) * (FULL_DECK_TIERS[tier][2] - s1) / (s2 - s1)


def tier_job_mb(tier, solver="auto"):
    """Megabytes (10**6 bytes, Snakemake's ``mem_mb``) per worker of a full-deck grid job of
    ``tier`` ("t1".."t4" or 1..4) with ``solver`` (config ``truco.solver``: "auto" takes the public
    tree up to t2 and the forest below, as ``stages.groups`` does; "forest", "public" or "tabular"),
    with a 10% margin: the forest's and the tabular solver's from ``FULL_DECK_TIERS``, the public
    tree's from ``public_peak_mib``; the forest's and the public tree's at least the refinement's
    (``refinement_peak_bytes``).

    Raises
    ------
    ValueError
        On a bad tier or solver.
    """
    t = int(str(tier).lstrip("t")) if str(tier).lstrip("t").isdigit() else None
    if t not in FULL_DECK_TIERS:
        raise ValueError(f"bad tier {tier!r}: allowed t1, t2, t3, t4")
    if solver == "auto":
        solver = "public" if t in PUBLIC_PEAK_MIB else "forest"
    nodes, infosets, slots, deals = FULL_DECK_TIERS[t]
    if solver == "forest":
        b = forest_peak_bytes(nodes, slots, infosets, deals)
    elif solver == "tabular":
        b = solver_bytes(nodes, slots, infosets)
    elif solver == "public":
        b = public_peak_mib(t) * 2 ** 20
    else:
        raise ValueError(f"bad solver {solver!r}: allowed auto, forest, public, tabular")
    if solver != "tabular":
        b = max(b, refinement_peak_bytes(t))
    return int(b * 1.1 / 10 ** 6) + 1


def raise_tree_sizes(cap, caps=(4, 4), three_ties="nobody", infosets=True, hands_limit=None,
                     face_down=False):
    """Count the raise tree of a deck without building it whole.

    Parameters
    ----------
    cap : int array (13,)
        Unseen cards per strength class (``encoding.class_capacities``).
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
    tier (the symmetric rule of pruning.py), the bytes of the in-memory solver (``solver_bytes``)
    and the peak bytes of the forest solver (``forest_peak_bytes``); ``face_down`` as in
    ``raise_tree_sizes`` (each row records it)."""
    rows = []
    for t in tiers:
        for c in classes:
            r = raise_tree_sizes(ab.class_capacities(c), (t, t), infosets=infosets,
                                 hands_limit=hands_limit, face_down=face_down)
            row = dict(tier=t, vira_class=c, face_down=bool(face_down), **r)
            if infosets:
                row["solver_bytes"] = solver_bytes(r["nodes"], r["action_slots"], r["infosets"])
                row["forest_bytes"] = forest_peak_bytes(r["nodes"], r["action_slots"],
                                                        r["infosets"], r["deals"])
            rows.append(row)
            if log:
                log(row)
    return rows
