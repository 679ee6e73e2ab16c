"""A hand's raise tree as a ``kernels.forest_cfr.Forest``, built deal group by deal group.

The whole raise tree of a vira class (up to 9e8 nodes) is never held as a ``TabularGame``: the
deals of one hand are built together (``tree._build_raises``), their compact arrays kept and the
builder's arrays dropped. Three passes over the deals:

1. by mano's hand: each deal's node count, and mano's information sets (key, actions, depth);
   a key holds the hand, so the groups' keys are disjoint;
2. by pé's hand: pé's information sets;
3. by mano's hand again: each node's code, the information set found by key in the merged sorted
   keys (``np.unique`` order, the numbering of ``tree.build_hand_tree``) or the outcome.

With the information sets given (``infosets``: those of the public tree of the same subgame, which
lays out the same keys and slots), passes 1 and 2 are skipped: pass 3 takes each deal's node count
and each information set's depth as it goes, and checks every node's set and action count against
them.

The builder lays a deal out breadth first (its root, then the children of each node in turn), which
``Forest`` relies on; pass 3 checks it node by node.
"""

import numpy as np

from ...kernels.cfr import DECISION, TERMINAL
from ...kernels.forest_cfr import PLAYER_BIT, make_forest
from ...kernels.options import njit
from .tree import N_LEVELS, N_RAISE_OUTCOMES, _build_raises, deal_arrays


def _deal_groups(pairs, player):
    """Index arrays of the deals, one per hand of ``player``, in hand order."""
    order = np.argsort(pairs[:, player], kind="stable")
    bounds = np.flatnonzero(np.diff(pairs[order, player])) + 1
    return np.split(order, bounds)


@njit
def _deal_sizes(node_type, first_child, n_child, n_deals):
    """Nodes of each deal of a ``_build_raises`` output (its root included); ValueError if a deal is
    not laid out breadth first right after the previous one."""
    sizes = np.zeros(n_deals, np.int64)
    nxt = 1 + n_deals  # the deal's first node after its root
    for d in range(n_deals):
        end = nxt  # one past the children placed so far
        x = 1 + d
        j = nxt
        while True:
            if node_type[x] != TERMINAL:
                if first_child[x] != end:
                    raise ValueError("a deal's tree is not laid out breadth first")
                end += n_child[x]
            if j >= end:
                break
            x = j
            j += 1
        sizes[d] = 1 + end - nxt
        nxt = end
    return sizes


@njit
def _fill_codes(node_type, node_player, outcome, node_id, n_deals, sizes, out, out_start):
    """Write each deal's node codes (root first, then its other nodes) at ``out[out_start[d]:]``:
    information set (+ ``PLAYER_BIT`` for player 1) or ``-1 - outcome``."""
    nxt = 1 + n_deals
    for d in range(n_deals):
        b = out_start[d]
        for li in range(sizes[d]):
            x = 1 + d if li == 0 else nxt + li - 1
            if node_type[x] == DECISION:
                out[b + li] = node_id[x] + (PLAYER_BIT if node_player[x] == 1 else 0)
            else:
                out[b + li] = -1 - outcome[x]
        nxt += sizes[d] - 1


def build_raise_forest(strengths, hands, pairs, weights, three_ties="nobody", raise_caps=None,
                       log=None, infosets=None):
    """The raise tree of ``tree.build_hand_tree(..., raises=True)`` as a ``Forest``.

    Parameters
    ----------
    strengths, hands, pairs, weights, three_ties, raise_caps
        As ``tree.build_hand_tree`` (with ``raises=True``).
    log : callable or None
        Receives one line per pass.
    infosets : (int64[I], int64[I + 1]) or None
        The information sets' keys and action-slot offsets if known (e.g. a
        ``public_tree.build_public_raise_tree`` of the same arguments): one pass instead of three.

    Returns
    -------
    Forest
        Deals in the order of ``pairs`` sorted by mano's hand (stable); ``infoset_key`` and the
        slot layout equal ``build_hand_tree``'s ``infoset_key`` and ``game.infoset_ptr``.
        ``forest.raise_caps`` holds the caps used.

    Raises
    ------
    ValueError
        As ``tree.build_hand_tree``; with ``infosets``, if a node's information set is not among
        them or has another action count.
    """
    if three_ties not in ("nobody", "mano"):
        raise ValueError(f"bad three_ties {three_ties!r}: allowed 'nobody' or 'mano'")
    if raise_caps is not None and (len(raise_caps) != 2
                                   or not all(0 <= int(c) <= N_LEVELS - 1 for c in raise_caps)):
        raise ValueError(f"bad raise_caps {raise_caps!r}: two ladder indices 0..{N_LEVELS - 1}")
    strengths, hands, pairs, probs = deal_arrays(strengths, hands, pairs, weights)
    order = np.argsort(pairs[:, 0], kind="stable")
    pairs, probs = pairs[order], probs[order]
    top = np.array(raise_caps if raise_caps is not None else (N_LEVELS - 1,) * 2, np.int64)
    mano = three_ties == "mano"
    n_hands = len(hands)
    if infosets is not None:
        return _forest(_codes_of_known(strengths, hands, pairs, probs, mano, top, *infosets, log),
                       pairs, probs, n_hands, top, hands)
    sizes = np.zeros(len(pairs), np.int64)
    keys, nact, depth = [], [], []
    for player in (0, 1):
        for idx in _deal_groups(pairs, player):
            node_type, node_player, node_key, node_depth, _, first_child, n_child, _ = \
                _build_raises(strengths, hands, pairs[idx], probs[idx], mano, top)
            if player == 0:
                sizes[idx] = _deal_sizes(node_type, first_child, n_child, len(idx))
            mine = np.flatnonzero(node_player == player)
            k, first = np.unique(node_key[mine], return_index=True)
            keys.append(k)
            nact.append(n_child[mine[first]].astype(np.uint8))
            depth.append(node_depth[mine[first]])
        if log:
            log(f"forest pass {player + 1}/3: player {player}'s information sets counted")
    keys = np.concatenate(keys)
    o = np.argsort(keys, kind="stable")
    keys = keys[o]
    nact = np.concatenate(nact)[o]
    depth = np.concatenate(depth)[o]
    del o
    if len(keys) >= PLAYER_BIT:
        raise ValueError(f"{len(keys)} information sets: a Forest holds at most {PLAYER_BIT - 1}")
    deal_start = np.zeros(len(pairs) + 1, np.int64)
    np.cumsum(sizes, out=deal_start[1:])
    code = np.empty(int(deal_start[-1]), np.int32)
    for idx in _deal_groups(pairs, 0):
        node_type, node_player, node_key, _, outcome, _, _, _ = \
            _build_raises(strengths, hands, pairs[idx], probs[idx], mano, top)
        node_id = _node_ids(node_key, keys)
        _fill_codes(node_type, node_player, outcome, node_id, len(idx), sizes[idx], code,
                    deal_start[idx])
    if log:
        log(f"forest pass 3/3: {len(code) + 1} nodes, {len(keys)} information sets")
    return _forest((code, deal_start, keys, nact, depth), pairs, probs, n_hands, top, hands)


def _node_ids(node_key, keys):
    """int32 per node of a ``_build_raises`` output: its information set's index in the sorted
    ``keys`` (-1 at chance and terminal nodes); AssertionError if a key is missing."""
    dec = node_key >= 0
    u, inv = np.unique(node_key[dec], return_inverse=True)
    ids = np.searchsorted(keys, u)
    if np.any(ids >= len(keys)) or np.any(keys[np.minimum(ids, len(keys) - 1)] != u):
        raise AssertionError("a node's information set was not counted in passes 1-2")
    node_id = np.full(len(node_key), -1, np.int32)
    node_id[dec] = ids[inv.ravel()]
    return node_id


def _codes_of_known(strengths, hands, pairs, probs, mano, top, keys, ptr, log):
    """Pass 3 alone with the information sets given (module docstring): the codes, deal starts,
    keys, action counts and depths ``_forest`` takes."""
    keys = np.ascontiguousarray(keys, np.int64)
    nact = np.diff(np.asarray(ptr, np.int64))
    depth = np.full(len(keys), -1, np.int64)
    sizes = np.zeros(len(pairs), np.int64)
    chunks = []
    for idx in _deal_groups(pairs, 0):
        node_type, node_player, node_key, node_depth, outcome, first_child, n_child, _ = \
            _build_raises(strengths, hands, pairs[idx], probs[idx], mano, top)
        sizes[idx] = _deal_sizes(node_type, first_child, n_child, len(idx))
        try:
            node_id = _node_ids(node_key, keys)
        except AssertionError:
            node_id = None
        dec = node_key >= 0
        if node_id is None or np.any(nact[node_id[dec]] != n_child[dec]):
            raise ValueError("the given information sets are not this tree's (another deck, raise "
                             "caps or three-ties rule?)")
        depth[node_id[dec]] = node_depth[dec]
        start = np.zeros(len(idx) + 1, np.int64)
        np.cumsum(sizes[idx], out=start[1:])
        chunk = np.empty(int(start[-1]), np.int32)
        _fill_codes(node_type, node_player, outcome, node_id, len(idx), sizes[idx], chunk, start)
        chunks.append((idx, chunk))
    if np.any(depth < 0):
        raise ValueError("the given information sets are not this tree's: some occur in no deal")
    deal_start = np.zeros(len(pairs) + 1, np.int64)
    np.cumsum(sizes, out=deal_start[1:])
    code = np.empty(int(deal_start[-1]), np.int32)
    for idx, chunk in chunks:  # a group's deals are consecutive (pairs sorted by mano's hand)
        code[deal_start[idx[0]]:deal_start[idx[-1] + 1]] = chunk
    if log:
        log(f"forest pass 3/3 with the information sets given: {len(code) + 1} nodes")
    return code, deal_start, keys, nact.astype(np.uint8), depth


def _forest(parts, pairs, probs, n_hands, top, hands):
    """The ``Forest`` of pass 3's output ``parts`` (codes, deal starts, keys, action counts,
    depths)."""
    code, deal_start, keys, nact, depth = parts
    forest = make_forest(code, deal_start, probs, pairs.astype(np.int32), n_hands, keys, nact,
                         depth, N_RAISE_OUTCOMES)
    forest.raise_caps = tuple(int(c) for c in top)
    forest.hands = hands
    return forest
