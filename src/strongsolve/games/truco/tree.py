"""Game tree of one Truco hand without raises, over any deck of typed cards, as a ``TabularGame``.

This covers the hands of the 11 row (rules.py): a hand of eleven (the player at 11 first plays the
hand or folds; a played hand has no raises) and the 11-11 hand (no decision before the cards, no
raises). A deck is a list of card *types* with a trick strength each and a number of unseen copies:
the abstract deck of abstraction.py (13 strength classes) or a physical deck (one type per card).

Tree: the root is a chance node over deal pairs (mano's hand, pé's hand) weighted by their number
of physical deals. Information sets are (player, own hand, public history): every played card is
face up, so the history is the sequence of played types. Moves with one legal action (the last
trick, or two cards of one type) are applied without a node. A node's depth is the number of public
actions before it, so every node of an information set has one depth.

Terminal outcomes (``outcome`` per node, -1 elsewhere): ``FOLD`` (the player at 11 folded: the
opponent scores 1), ``MANO_WINS``, ``PE_WINS`` (the hand's value: 3 in a hand of eleven), ``NOBODY``
(three tied tricks, unless ``three_ties="mano"``). A subgame maps outcomes to utilities.
"""

from dataclasses import dataclass

import numpy as np

from ...kernels.cfr import CHANCE, DECISION, TERMINAL, TabularGame
from ...kernels.options import njit

FOLD, MANO_WINS, PE_WINS, NOBODY = 0, 1, 2, 3
N_OUTCOMES = 4
MAX_NODES_PER_DEAL = 128  # about 1 + 2 + 3 + 9 + 18 + 36 at most; checked while building


@njit
def _hand_winner(r1, r2, r3, n, three_ties_mano):
    """Numba copy of rules.hand_winner (0 mano, 1 pé, -1 nobody, -2 undecided); 2 = tie."""
    if n < 2:
        return -2
    if n == 2:
        if r1 != 2 and (r2 == r1 or r2 == 2):
            return r1
        if r1 == 2 and r2 != 2:
            return r2
        return -2
    if r1 == 2 and r2 == 2:
        if r3 != 2:
            return r3
        return 0 if three_ties_mano else -1
    return r1 if r3 == 2 else r3


@njit
def _actions(hand, used, out):
    """Distinct types among the unused slots of a sorted hand (ascending); returns the count and
    writes the slot of each into ``out``."""
    k = 0
    last = -1
    for s in range(3):
        if (used >> s) & 1 == 0 and hand[s] != last:
            out[k] = s
            last = hand[s]
            k += 1
    return k


@njit
def _build(strengths, hands, pairs, probs, eleven, three_ties_mano):
    n_pairs = pairs.shape[0]
    cap = 1 + n_pairs * MAX_NODES_PER_DEAL
    node_type = np.zeros(cap, np.int8)
    node_player = np.full(cap, -1, np.int8)
    node_depth = np.zeros(cap, np.int32)
    outcome = np.full(cap, -1, np.int8)
    first_child = np.zeros(cap, np.int64)
    n_child = np.zeros(cap, np.int64)
    child_prob_node = np.zeros(cap, np.float64)  # probability of the edge into the node (chance)
    base = strengths.shape[0] + 1
    n_hands = hands.shape[0]
    node_key = np.full(cap, -1, np.int64)  # information-set key of each decision node
    # per-deal queue of states, indexed by node id - offset
    q_used0 = np.zeros(MAX_NODES_PER_DEAL, np.int64)
    q_used1 = np.zeros(MAX_NODES_PER_DEAL, np.int64)
    q_leader = np.zeros(MAX_NODES_PER_DEAL, np.int64)
    q_lead = np.zeros(MAX_NODES_PER_DEAL, np.int64)
    q_res = np.zeros((MAX_NODES_PER_DEAL, 3), np.int64)
    q_nt = np.zeros(MAX_NODES_PER_DEAL, np.int64)
    q_code = np.zeros(MAX_NODES_PER_DEAL, np.int64)
    q_eleven = np.zeros(MAX_NODES_PER_DEAL, np.bool_)
    acts = np.zeros(3, np.int64)
    hand2 = np.zeros((2, 3), np.int64)
    node_type[0] = CHANCE
    first_child[0] = 1
    n_child[0] = n_pairs
    n_nodes = 1 + n_pairs
    for d in range(n_pairs):
        root = 1 + d
        child_prob_node[root] = probs[d]
        node_depth[root] = 1
        for p in range(2):
            for s in range(3):
                hand2[p, s] = hands[pairs[d, p], s]
        offset = n_nodes - 1  # node x > root sits at local slot x - offset; the root at slot 0
        q_used0[0] = 0
        q_used1[0] = 0
        q_leader[0] = 0
        q_lead[0] = -1
        q_nt[0] = 0
        q_res[0, :] = 0
        q_code[0] = 1
        q_eleven[0] = eleven >= 0
        node_type[root] = DECISION  # provisional until the state is resolved
        li = 0
        while li < n_nodes - offset:
            x = root if li == 0 else offset + li
            if node_type[x] == TERMINAL:
                li += 1
                continue
            if q_eleven[li]:
                p = eleven
                key = pairs[d, p] * 2 + p  # history code 0: before any card
                node_type[x] = DECISION
                node_player[x] = p
                node_key[x] = key
                first_child[x] = n_nodes
                n_child[x] = 2
                # play: the card-play start, collapsed below; fold: terminal
                c = n_nodes
                li_c = c - offset
                q_used0[li_c] = 0
                q_used1[li_c] = 0
                q_leader[li_c] = 0
                q_lead[li_c] = -1
                q_nt[li_c] = 0
                q_code[li_c] = 1
                q_eleven[li_c] = False
                node_depth[c] = node_depth[x] + 1
                outcome[c] = -1
                node_type[c] = DECISION  # provisional, resolved when reached
                f = n_nodes + 1
                node_type[f] = TERMINAL
                outcome[f] = FOLD
                node_depth[f] = node_depth[x] + 1
                n_nodes += 2
            else:
                # collapse forced moves and resolve tricks until a choice or the end
                u0, u1 = q_used0[li], q_used1[li]
                leader, lead, nt, code = q_leader[li], q_lead[li], q_nt[li], q_code[li]
                r = q_res[li].copy()
                depth = node_depth[x]
                while True:
                    mover = leader if lead < 0 else 1 - leader
                    used = u0 if mover == 0 else u1
                    k = _actions(hand2[mover], used, acts)
                    if k >= 2:
                        break
                    s = acts[0]
                    code = code * base + hand2[mover, s] + 1
                    depth += 1
                    if mover == 0:
                        u0 |= 1 << s
                    else:
                        u1 |= 1 << s
                    if lead < 0:
                        lead = s
                        continue
                    a = strengths[hand2[leader, lead]]
                    b = strengths[hand2[mover, s]]
                    res = 2 if a == b else (leader if a > b else mover)
                    r[nt] = res
                    nt += 1
                    if res != 2:
                        leader = res
                    lead = -1
                    w = _hand_winner(r[0], r[1], r[2], nt, three_ties_mano)
                    if w != -2:
                        k = 0
                        break
                node_depth[x] = depth
                if k == 0:
                    node_type[x] = TERMINAL
                    outcome[x] = MANO_WINS if w == 0 else (PE_WINS if w == 1 else NOBODY)
                else:
                    mover = leader if lead < 0 else 1 - leader
                    key = code * (2 * n_hands) + pairs[d, mover] * 2 + mover
                    node_type[x] = DECISION
                    node_player[x] = mover
                    node_key[x] = key
                    first_child[x] = n_nodes
                    n_child[x] = k
                    for j in range(k):
                        s = acts[j]
                        c = n_nodes + j
                        li_c = c - offset
                        v0, v1 = u0, u1
                        if mover == 0:
                            v0 |= 1 << s
                        else:
                            v1 |= 1 << s
                        node_depth[c] = depth + 1
                        q_code[li_c] = code * base + hand2[mover, s] + 1
                        q_eleven[li_c] = False
                        outcome[c] = -1
                        node_type[c] = DECISION
                        if lead < 0:
                            q_used0[li_c], q_used1[li_c] = v0, v1
                            q_leader[li_c], q_lead[li_c], q_nt[li_c] = leader, s, nt
                            q_res[li_c] = r
                            continue
                        a = strengths[hand2[leader, lead]]
                        b = strengths[hand2[mover, s]]
                        res = 2 if a == b else (leader if a > b else mover)
                        rr = r.copy()
                        rr[nt] = res
                        q_used0[li_c], q_used1[li_c] = v0, v1
                        q_leader[li_c] = leader if res == 2 else res
                        q_lead[li_c] = -1
                        q_nt[li_c] = nt + 1
                        q_res[li_c] = rr
                        w = _hand_winner(rr[0], rr[1], rr[2], nt + 1, three_ties_mano)
                        if w != -2:
                            node_type[c] = TERMINAL
                            outcome[c] = MANO_WINS if w == 0 else (PE_WINS if w == 1 else NOBODY)
                    n_nodes += k
            if n_nodes - offset > MAX_NODES_PER_DEAL - 3:
                raise ValueError("a deal's tree outgrew MAX_NODES_PER_DEAL")
            li += 1
    return (node_type[:n_nodes], node_player[:n_nodes], node_key[:n_nodes],
            node_depth[:n_nodes], outcome[:n_nodes], first_child[:n_nodes], n_child[:n_nodes],
            child_prob_node[:n_nodes])


@dataclass
class HandTree:
    """A hand's tree with its terminal outcomes and information-set keys.

    Attributes
    ----------
    game : TabularGame
        The tree; ``game.utility`` is set by ``set_utilities``.
    outcome : int8[N]
        Terminal outcome (FOLD, MANO_WINS, PE_WINS, NOBODY), -1 at other nodes.
    infoset_key : int64[I]
        ``code * 2 * n_hands + hand * 2 + player``; ``code`` is 0 before the hand-of-eleven decision,
        else the played types in base ``n_types + 1`` (digits type + 1) after a leading 1.
    hands : int64[H, 3]
        The hands (sorted types) indexed by the keys.
    eleven : int
        The player deciding a hand of eleven (0 mano, 1 pé), or -1.
    """

    game: TabularGame
    outcome: np.ndarray
    infoset_key: np.ndarray
    hands: np.ndarray
    n_types: int
    eleven: int

    def set_utilities(self, table):
        """Set player 0's (mano's) utility at each terminal from ``table``, float64[4] by outcome."""
        table = np.asarray(table, np.float64)
        if table.shape != (N_OUTCOMES,):
            raise ValueError(f"utility table must have {N_OUTCOMES} entries (FOLD, MANO_WINS, PE_WINS, NOBODY)")
        term = self.outcome >= 0
        self.game.utility[:] = 0.0
        self.game.utility[term] = table[self.outcome[term]]

    def infoset_of(self, player, hand_index, history=()):
        """Index of the information set of ``player`` holding hand ``hand_index`` after the played
        types ``history`` (``None`` for the hand-of-eleven decision); KeyError if absent."""
        if history is None:
            code = 0
        else:
            code = 1
            for t in history:
                code = code * (self.n_types + 1) + int(t) + 1
        key = code * 2 * len(self.hands) + hand_index * 2 + player
        i = int(np.searchsorted(self._sorted_keys, key))
        if i >= len(self._sorted_keys) or self._sorted_keys[i] != key:
            raise KeyError(f"no information set for player {player}, hand {hand_index}, history {history}")
        return int(self._key_order[i])

    def __post_init__(self):
        self._key_order = np.argsort(self.infoset_key, kind="stable")
        self._sorted_keys = self.infoset_key[self._key_order]


def build_hand_tree(strengths, hands, pairs, weights, eleven=-1, three_ties="nobody"):
    """Build the tree of one hand without raises.

    Parameters
    ----------
    strengths : int array (T,)
        Trick strength of each card type.
    hands : int array (H, 3)
        Hands as sorted types.
    pairs : int array (P, 2)
        Deal pairs (mano's hand index, pé's hand index).
    weights : array (P,)
        Physical deals behind each pair (any positive numbers; normalised to probabilities).
    eleven : {-1, 0, 1}
        The player at 11 who first plays or folds (0 mano, 1 pé), or -1 for no such decision.
    three_ties : {"nobody", "mano"}
        Who gets a hand of three tied tricks (rules.hand_winner).

    Returns
    -------
    HandTree

    Raises
    ------
    ValueError
        On a bad ``eleven``/``three_ties`` or inconsistent shapes.
    """
    if eleven not in (-1, 0, 1):
        raise ValueError(f"bad eleven {eleven!r}: allowed -1 (none), 0 (mano), 1 (pé)")
    if three_ties not in ("nobody", "mano"):
        raise ValueError(f"bad three_ties {three_ties!r}: allowed 'nobody' or 'mano'")
    strengths = np.ascontiguousarray(strengths, np.int64)
    hands = np.ascontiguousarray(hands, np.int64)
    pairs = np.ascontiguousarray(pairs, np.int64)
    weights = np.asarray(weights, np.float64)
    if hands.ndim != 2 or hands.shape[1] != 3 or pairs.ndim != 2 or pairs.shape[1] != 2 \
            or len(weights) != len(pairs) or np.any(weights <= 0):
        raise ValueError("hands must be (H, 3), pairs (P, 2), weights (P,) positive")
    probs = weights / weights.sum()
    (node_type, node_player, node_key, node_depth, outcome, first_child, n_child,
     prob_in) = _build(strengths, hands, pairs, probs, eleven, three_ties == "mano")
    # information sets numbered in key order
    dec = np.flatnonzero(node_key >= 0)
    iset_key, first, inverse = np.unique(node_key[dec], return_index=True, return_inverse=True)
    node_infoset = np.full(len(node_type), -1, np.int32)
    node_infoset[dec] = inverse
    iset_nact = n_child[dec[first]]
    child_ptr = np.zeros(len(node_type) + 1, np.int64)
    np.cumsum(n_child, out=child_ptr[1:])
    n_edges = int(child_ptr[-1])
    child = (np.repeat(first_child, n_child)
             + np.arange(n_edges, dtype=np.int64) - np.repeat(child_ptr[:-1], n_child))
    child_prob = np.where(np.repeat(node_type == CHANCE, n_child), prob_in[child], 0.0)
    infoset_ptr = np.zeros(len(iset_nact) + 1, np.int64)
    np.cumsum(iset_nact, out=infoset_ptr[1:])
    game = TabularGame(node_type=node_type.copy(), node_player=node_player.copy(),
                       node_infoset=node_infoset, child_ptr=child_ptr, child=child,
                       child_prob=child_prob, utility=np.zeros(len(node_type)),
                       infoset_ptr=infoset_ptr, node_depth=node_depth.copy())
    return HandTree(game=game, outcome=outcome.copy(), infoset_key=iset_key.copy(), hands=hands,
                    n_types=len(strengths), eleven=eleven)
