"""Game tree of one Truco hand over any deck of typed cards, as a ``TabularGame``.

A deck is a list of card *types* with a trick strength each and a number of unseen copies: the
abstract deck of encoding.py (13 strength classes) or a physical deck (one type per card). Rules
are those of rules.py (``HandState``), in three variants:

- the hands of the 11 row, without raises: a hand of eleven (the player at 11 first plays the hand
  or folds; a played hand has no raises) and the 11-11 hand (no decision before the cards);
- the 11-11 hand played blind (the issue's option): every card a player plays is drawn uniformly
  from the cards left in their hand, so the card plays are chance nodes and nobody decides;
- a hand where neither player has 11, with the raise ladder of rules.py: on their turn, before a
  card, a player may raise along ``LADDER`` (1, 3, 6, 9, 12) if nobody accepted yet or they were
  the last to accept; the other accepts, folds (the raiser scores the value before the raise) or
  raises again (``HandState.legal_actions``). The ladder never depends on the score: a raise past
  what either side needs to win is still a raise (rules.py has no such exception).

Tree: the root is a chance node over deal pairs (mano's hand, pé's hand) weighted by their number
of physical deals. Information sets are (player, own hand, public history): every played card is
face up and raises are public, so the history is the sequence of played types with the raises and
answers between them. With the face-down option (``face_down``, rules.py) each card from trick 2
on may also be played face down, an action beside the face-up one (cards by type ascending, each
face up then face down, then the raise); the history is then the player's own view: the public one
with a card the opponent covered as "down", and the types of the cards the player covered. Moves with one legal action (a card of one type left or two cards of one
type, and no raise open to the mover) are applied without a node. A node's depth is the number of
public actions before it, so every node of an information set has one depth.

Terminal outcomes (``outcome`` per node, -1 elsewhere): ``FOLD`` (the player at 11 folded: the
opponent scores 1), ``MANO_WINS``, ``PE_WINS`` (the hand's value: 1, or 3 in a hand of eleven),
``NOBODY`` (three tied tricks, unless ``three_ties="mano"``). With raises the winner also carries the
ladder value: ``ladder_outcome(winner, level)`` is ``MANO_WINS`` / ``PE_WINS`` at 1 point and
``2 + 2 level + winner`` at ``LADDER[level]`` points (codes 4..11), whether the hand was won on the
cards or by a fold to a raise; ``FOLD`` never occurs. ``HandTree.outcome_points`` gives the points
of each code; a subgame maps outcomes to utilities (subgames.py).

Why one module of more than 500 lines: the three rule variants (cards only, raises, face-down
cards) share one node layout and one builder (the numba kernels that expand a deal), so that
every solver reads the same tree.
"""

from dataclasses import dataclass

import numpy as np

from ...kernels.cfr import CHANCE, DECISION, TERMINAL, TabularGame
from ...kernels.options import njit
from .rules import LADDER, MAO_DE_ONZE_FOLD, MAO_DE_ONZE_VALUE

FOLD, MANO_WINS, PE_WINS, NOBODY = 0, 1, 2, 3
N_OUTCOMES = 4  # without raises
N_LEVELS = len(LADDER)
N_RAISE_OUTCOMES = 2 + 2 * N_LEVELS  # with raises: codes 1..11 (FOLD unused)
MAX_NODES_PER_DEAL = 128  # about 1 + 2 + 3 + 9 + 18 + 36 at most; checked while building
MAX_NODES_PER_DEAL_RAISES = 16384  # 14683 with six distinct types all tied, the largest of any
# strength order of six cards (11248 on the abstract deck); checked while building
# with face-down play (rules.py): every card from trick 2 on may also be covered, so fewer moves are
# forced and each has twice the cards; the bounds below are checked while building too
MAX_NODES_PER_DEAL_FACE_DOWN = 1024  # 554 at most (a hand of eleven; every pair of hands of six types)
MAX_NODES_PER_DEAL_RAISES_FACE_DOWN = 262144  # 3984 at most with raise caps (1, 1), 12645 with
# (2, 2), over every pair of hands of six types; the whole ladder was not enumerated
# Raise history code: one base-RAISE_DIGITS digit per raise made (at most N_LEVELS - 1), the digit
# 1 + ANSWERS * position + answer, position = cards played before the raise (0..5), answer 0 pending,
# 1 accepted, 2 raised again; 0 for a raise not made.
ANSWERS = 3
RAISE_DIGITS = 1 + ANSWERS * 6
N_RAISE_CODES = RAISE_DIGITS ** (N_LEVELS - 1)


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
def _share(hand, used, s):
    """Probability that a card drawn uniformly from the unused slots of ``hand`` has the type of
    slot ``s`` (blind play counts physical cards: two of one type are twice as likely)."""
    same = 0
    left = 0
    for t in range(3):
        if (used >> t) & 1 == 0:
            left += 1
            if hand[t] == hand[s]:
                same += 1
    return same / left


@njit
def _trick(strengths, hand2, leader, lead, mover, s, down, r, nt, three_ties_mano):
    """Play slot ``s`` of ``mover`` (the leader if ``lead < 0``), face down if ``down``. Updates the
    trick results ``r`` in place; returns (leader, lead, nt, winner) with winner as in
    ``_hand_winner`` (-2: play on). ``lead`` is the leader's slot, plus 3 if it was played face
    down; a face-down card has strength -1 (rules.COVERED: it loses to any face-up card)."""
    if lead < 0:
        return leader, s + (3 if down else 0), nt, -2
    a = -1 if lead >= 3 else strengths[hand2[leader, lead]]
    b = -1 if down else strengths[hand2[mover, s]]
    res = 2 if a == b else (leader if a > b else mover)
    r[nt] = res
    nt += 1
    w = _hand_winner(r[0], r[1], r[2], nt, three_ties_mano)
    return (leader if res == 2 else res), -1, nt, w


@njit
def _new_nodes(cap):
    """The per-node arrays of a tree of up to ``cap`` nodes: type, player (-1), depth, outcome (-1),
    first child, number of children, probability of the edge into the node (chance), and the
    information-set key of each decision node (-1)."""
    return (np.zeros(cap, np.int8), np.full(cap, -1, np.int8), np.zeros(cap, np.int32),
            np.full(cap, -1, np.int8), np.zeros(cap, np.int64), np.zeros(cap, np.int64),
            np.zeros(cap, np.float64), np.full(cap, -1, np.int64))


@njit
def _with_room(nodes, need):
    """The arrays ``nodes`` of ``_new_nodes`` holding at least ``need`` nodes: themselves if they
    do, else copies with the capacity doubled until they do (new slots as ``_new_nodes`` sets
    them)."""
    cap = nodes[0].shape[0]
    if need <= cap:
        return nodes
    while need > cap:
        cap *= 2
    grown = _new_nodes(cap)
    n = nodes[0].shape[0]
    grown[0][:n] = nodes[0]
    grown[1][:n] = nodes[1]
    grown[2][:n] = nodes[2]
    grown[3][:n] = nodes[3]
    grown[4][:n] = nodes[4]
    grown[5][:n] = nodes[5]
    grown[6][:n] = nodes[6]
    grown[7][:n] = nodes[7]
    return grown


@njit
def _trimmed(nodes, n):
    """The first ``n`` entries of the arrays ``nodes`` of ``_new_nodes``, in the order the builders
    return them: type, player, key, depth, outcome, first child, number of children, probability
    of the edge in."""
    node_type, node_player, node_depth, outcome, first_child, n_child, child_prob, node_key = nodes
    return (node_type[:n], node_player[:n], node_key[:n], node_depth[:n], outcome[:n],
            first_child[:n], n_child[:n], child_prob[:n])


@njit
def _start_deal(d, probs, hands, pairs, node_depth, child_prob_node, hand2):
    """Set deal ``d``'s root, node ``1 + d`` under the chance root: depth 1, probability
    ``probs[d]``; write the deal's hands (mano's, pé's) into ``hand2`` (int64[2, 3]). Returns the
    root."""
    root = 1 + d
    child_prob_node[root] = probs[d]
    node_depth[root] = 1
    for p in range(2):
        for s in range(3):
            hand2[p, s] = hands[pairs[d, p], s]
    return root


@njit
def ladder_outcome(winner, level):
    """Outcome code of a hand with raises won by ``winner`` (0 mano, 1 pé) at ladder index ``level``
    (rules.LADDER: 1, 3, 6, 9, 12 points): MANO_WINS / PE_WINS at 1 point, else 2 + 2 level + winner."""
    return 1 + winner if level == 0 else 2 + 2 * level + winner


@njit
def _card_digits(t, n_types, down, face_down):
    """History digits of a card of type ``t`` for (its player, the opponent): ``t + 1`` face up;
    face down, ``n_types + 1 + t`` for its player (who knows the card) and 0 for the opponent (who
    sees only that a card was covered). Without ``face_down`` the base is ``n_types + 1``."""
    if down:
        return n_types + 1 + t, 0
    return t + 1, t + 1


@njit
def _build_raises(strengths, hands, pairs, probs, three_ties_mano, top, face_down=False):
    """The raise tree; ``top[p]`` (int64[2]) is the ladder index up to which player p may raise:
    a raise from accepted level ``l`` to ``l + 1`` is open to p only while ``l < top[p]``
    (``N_LEVELS - 1`` both: the whole ladder; pruning.py lowers it without changing values).
    ``face_down``: from trick 2 on each card may also be played face down (rules.py); each node's
    key is then its player's view of the history (``_card_digits``)."""
    n_pairs = pairs.shape[0]
    n_hands = hands.shape[0]
    n_types = strengths.shape[0]
    base = 2 * n_types + 1 if face_down else n_types + 1
    cap = 1 + n_pairs * 64  # grown by doubling; a deal of 3 + 3 distinct types needs thousands
    (node_type, node_player, node_depth, outcome, first_child, n_child, child_prob_node,
     node_key) = _new_nodes(cap)
    m = MAX_NODES_PER_DEAL_RAISES_FACE_DOWN if face_down else MAX_NODES_PER_DEAL_RAISES
    margin = 6 if face_down else 3  # room for one node's children past the check below
    q_used = np.zeros((m, 2), np.int64)
    q_leader = np.zeros(m, np.int64)
    q_lead = np.zeros(m, np.int64)
    q_res = np.zeros((m, 3), np.int64)
    q_nt = np.zeros(m, np.int64)
    q_code = np.zeros((m, 2), np.int64)  # played types as mano and pé see them, as in _build
    q_level = np.zeros(m, np.int64)  # accepted ladder index
    q_raiser = np.zeros(m, np.int64)  # who may raise next: -1 either, else the side that accepted
    q_pend = np.zeros(m, np.int64)  # the side that must answer a raise, -1 none
    q_rcode = np.zeros(m, np.int64)  # raise history, RAISE_DIGITS per raise
    acts = np.zeros(3, np.int64)
    hand2 = np.zeros((2, 3), np.int64)
    pw = np.ones(N_LEVELS, np.int64)
    for i in range(1, N_LEVELS):
        pw[i] = pw[i - 1] * RAISE_DIGITS
    node_type[0] = CHANCE
    first_child[0] = 1
    n_child[0] = n_pairs
    n_nodes = 1 + n_pairs
    for d in range(n_pairs):
        (node_type, node_player, node_depth, outcome, first_child, n_child, child_prob_node,
         node_key) = _with_room((node_type, node_player, node_depth, outcome, first_child, n_child,
                                 child_prob_node, node_key), n_nodes + m)
        root = _start_deal(d, probs, hands, pairs, node_depth, child_prob_node, hand2)
        offset = n_nodes - 1
        q_used[0, 0] = 0
        q_used[0, 1] = 0
        q_leader[0] = 0
        q_lead[0] = -1
        q_res[0, :] = 0
        q_nt[0] = 0
        q_code[0, 0] = 1
        q_code[0, 1] = 1
        q_level[0] = 0
        q_raiser[0] = -1
        q_pend[0] = -1
        q_rcode[0] = 0
        node_type[root] = DECISION
        li = 0
        while li < n_nodes - offset:
            x = root if li == 0 else offset + li
            if node_type[x] == TERMINAL:
                li += 1
                continue
            u = q_used[li].copy()
            leader, lead, nt = q_leader[li], q_lead[li], q_nt[li]
            code = q_code[li].copy()
            level, raiser, pend, rcode = q_level[li], q_raiser[li], q_pend[li], q_rcode[li]
            r = q_res[li].copy()
            depth = node_depth[x]
            played = 0
            for p in range(2):
                for s in range(3):
                    played += (u[p] >> s) & 1
            w = -2
            k = 0
            if pend < 0:
                # play forced cards (one type left, no raise open to the mover) without a node
                while True:
                    mover = leader if lead < 0 else 1 - leader
                    k = _actions(hand2[mover], u[mover], acts)
                    if face_down and nt >= 1:
                        k *= 2  # each card face up or face down
                    if k >= 2 or (level < top[mover] and (raiser < 0 or raiser == mover)):
                        break
                    s = acts[0]
                    code[0] = code[0] * base + hand2[mover, s] + 1
                    code[1] = code[1] * base + hand2[mover, s] + 1
                    depth += 1
                    played += 1
                    u[mover] |= 1 << s
                    leader, lead, nt, w = _trick(strengths, hand2, leader, lead, mover, s, False, r,
                                                 nt, three_ties_mano)
                    if w != -2:
                        break
            node_depth[x] = depth
            if w != -2:
                node_type[x] = TERMINAL
                outcome[x] = NOBODY if w < 0 else ladder_outcome(w, level)
                li += 1
                continue
            player = pend if pend >= 0 else (leader if lead < 0 else 1 - leader)
            if pend >= 0:
                n_act = 3 if level + 1 < top[player] else 2  # accept, fold, raise again
            else:
                n_act = k + (1 if level < top[player] and (raiser < 0 or raiser == player) else 0)
            node_type[x] = DECISION
            node_player[x] = player
            node_key[x] = ((code[player] * N_RAISE_CODES + rcode) * (2 * n_hands)
                           + pairs[d, player] * 2 + player)
            first_child[x] = n_nodes
            n_child[x] = n_act
            two = face_down and pend < 0 and nt >= 1  # each card type twice: face up, face down
            for j in range(n_act):
                c = n_nodes + j
                lc = c - offset
                node_depth[c] = depth + 1
                node_type[c] = DECISION  # provisional, resolved when reached
                outcome[c] = -1
                q_used[lc] = u
                q_leader[lc], q_lead[lc], q_nt[lc] = leader, lead, nt
                q_code[lc] = code
                q_res[lc] = r
                q_level[lc], q_raiser[lc], q_pend[lc], q_rcode[lc] = level, raiser, -1, rcode
                if pend >= 0:
                    if j == 1:  # fold: the raiser scores the value before the raise
                        node_type[c] = TERMINAL
                        outcome[c] = ladder_outcome(1 - player, level)
                        continue
                    q_rcode[lc] = rcode + (1 + j // 2) * pw[level]  # answered: accepted / raised
                    q_level[lc] = level + 1
                    if j == 0:
                        q_raiser[lc] = player
                    else:  # raising again accepts the pending raise and proposes the next
                        q_rcode[lc] += (1 + ANSWERS * played) * pw[level + 1]
                        q_pend[lc] = 1 - player
                elif j == k:  # raise
                    q_rcode[lc] = rcode + (1 + ANSWERS * played) * pw[level]
                    q_pend[lc] = 1 - player
                else:
                    s = acts[j // 2] if two else acts[j]
                    down = two and j % 2 == 1
                    own, seen = _card_digits(hand2[player, s], n_types, down, face_down)
                    q_code[lc, player] = code[player] * base + own
                    q_code[lc, 1 - player] = code[1 - player] * base + seen
                    q_used[lc, player] = u[player] | (1 << s)
                    rr = r.copy()
                    q_leader[lc], q_lead[lc], q_nt[lc], wc = _trick(strengths, hand2, leader, lead,
                                                                   player, s, down, rr, nt,
                                                                   three_ties_mano)
                    q_res[lc] = rr
                    if wc != -2:
                        node_type[c] = TERMINAL
                        outcome[c] = NOBODY if wc < 0 else ladder_outcome(wc, level)
            n_nodes += n_act
            if n_nodes - offset > m - margin:
                raise ValueError("a deal's tree outgrew MAX_NODES_PER_DEAL_RAISES(_FACE_DOWN)")
            li += 1
    return _trimmed((node_type, node_player, node_depth, outcome, first_child, n_child,
                     child_prob_node, node_key), n_nodes)


@njit
def _build(strengths, hands, pairs, probs, eleven, three_ties_mano, blind, face_down=False):
    """The tree without raises (module docstring); ``face_down`` as in ``_build_raises``."""
    n_pairs = pairs.shape[0]
    m = MAX_NODES_PER_DEAL_FACE_DOWN if face_down else MAX_NODES_PER_DEAL
    margin = 5 if face_down else 3  # room for one node's children past the check below
    # without face-down play every deal fits its share; with it the arrays grow by doubling
    cap = 1 + n_pairs * (64 if face_down else MAX_NODES_PER_DEAL)
    (node_type, node_player, node_depth, outcome, first_child, n_child, child_prob_node,
     node_key) = _new_nodes(cap)
    n_types = strengths.shape[0]
    base = 2 * n_types + 1 if face_down else n_types + 1
    n_hands = hands.shape[0]
    # per-deal queue of states, indexed by node id - offset
    q_used0 = np.zeros(m, np.int64)
    q_used1 = np.zeros(m, np.int64)
    q_leader = np.zeros(m, np.int64)
    q_lead = np.zeros(m, np.int64)
    q_res = np.zeros((m, 3), np.int64)
    q_nt = np.zeros(m, np.int64)
    q_code = np.zeros((m, 2), np.int64)  # the played types as mano and as pé see them
    q_eleven = np.zeros(m, np.bool_)
    acts = np.zeros(3, np.int64)
    hand2 = np.zeros((2, 3), np.int64)
    code = np.zeros(2, np.int64)
    node_type[0] = CHANCE
    first_child[0] = 1
    n_child[0] = n_pairs
    n_nodes = 1 + n_pairs
    for d in range(n_pairs):
        if face_down:  # without it the arrays were made large enough
            (node_type, node_player, node_depth, outcome, first_child, n_child, child_prob_node,
             node_key) = _with_room((node_type, node_player, node_depth, outcome, first_child,
                                     n_child, child_prob_node, node_key), n_nodes + m)
        root = _start_deal(d, probs, hands, pairs, node_depth, child_prob_node, hand2)
        offset = n_nodes - 1  # node x > root sits at local slot x - offset; the root at slot 0
        q_used0[0] = 0
        q_used1[0] = 0
        q_leader[0] = 0
        q_lead[0] = -1
        q_nt[0] = 0
        q_res[0, :] = 0
        q_code[0, :] = 1
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
                q_code[li_c, :] = 1
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
                leader, lead, nt = q_leader[li], q_lead[li], q_nt[li]
                code[0], code[1] = q_code[li, 0], q_code[li, 1]
                r = q_res[li].copy()
                depth = node_depth[x]
                while True:
                    mover = leader if lead < 0 else 1 - leader
                    used = u0 if mover == 0 else u1
                    k = _actions(hand2[mover], used, acts)
                    if face_down and not blind and nt >= 1:
                        k *= 2  # each card face up or face down
                    if k >= 2:
                        break
                    s = acts[0]
                    code[0] = code[0] * base + hand2[mover, s] + 1
                    code[1] = code[1] * base + hand2[mover, s] + 1
                    depth += 1
                    if mover == 0:
                        u0 |= 1 << s
                    else:
                        u1 |= 1 << s
                    leader, lead, nt, w = _trick(strengths, hand2, leader, lead, mover, s, False, r,
                                                 nt, three_ties_mano)
                    if w != -2:
                        k = 0
                        break
                node_depth[x] = depth
                if k == 0:
                    node_type[x] = TERMINAL
                    outcome[x] = MANO_WINS if w == 0 else (PE_WINS if w == 1 else NOBODY)
                else:
                    mover = leader if lead < 0 else 1 - leader
                    used = u0 if mover == 0 else u1
                    two = face_down and not blind and nt >= 1  # each type face up, face down
                    if blind:  # the card is drawn from the hand: a chance node, no information set
                        node_type[x] = CHANCE
                    else:
                        node_type[x] = DECISION
                        node_player[x] = mover
                        node_key[x] = code[mover] * (2 * n_hands) + pairs[d, mover] * 2 + mover
                    first_child[x] = n_nodes
                    n_child[x] = k
                    for j in range(k):
                        s = acts[j // 2] if two else acts[j]
                        down = two and j % 2 == 1
                        c = n_nodes + j
                        if blind:
                            child_prob_node[c] = _share(hand2[mover], used, s)
                        li_c = c - offset
                        v0, v1 = u0, u1
                        if mover == 0:
                            v0 |= 1 << s
                        else:
                            v1 |= 1 << s
                        node_depth[c] = depth + 1
                        own, seen = _card_digits(hand2[mover, s], n_types, down, face_down)
                        q_code[li_c, mover] = code[mover] * base + own
                        q_code[li_c, 1 - mover] = code[1 - mover] * base + seen
                        q_eleven[li_c] = False
                        outcome[c] = -1
                        node_type[c] = DECISION
                        q_used0[li_c], q_used1[li_c] = v0, v1
                        rr = r.copy()
                        q_leader[li_c], q_lead[li_c], q_nt[li_c], w = _trick(
                            strengths, hand2, leader, lead, mover, s, down, rr, nt, three_ties_mano)
                        q_res[li_c] = rr
                        if w != -2:
                            node_type[c] = TERMINAL
                            outcome[c] = MANO_WINS if w == 0 else (PE_WINS if w == 1 else NOBODY)
                    n_nodes += k
            if n_nodes - offset > m - margin:
                raise ValueError("a deal's tree outgrew MAX_NODES_PER_DEAL(_FACE_DOWN)")
            li += 1
    return _trimmed((node_type, node_player, node_depth, outcome, first_child, n_child,
                     child_prob_node, node_key), n_nodes)


def outcome_points(eleven=-1, raises=False):
    """Points (mano's, pé's) scored at each outcome code of a hand.

    Parameters
    ----------
    eleven : {-1, 0, 1}
        The player deciding a hand of eleven, or -1.
    raises : bool
        A hand with the raise ladder (then ``eleven`` must be -1).

    Returns
    -------
    int64[N_OUTCOMES, 2] or int64[N_RAISE_OUTCOMES, 2]
        Rules (rules.py): a folded hand of eleven gives the opponent ``MAO_DE_ONZE_FOLD`` (1), a
        played one is worth ``MAO_DE_ONZE_VALUE`` (3), the 11-11 hand 1; with raises a code carries
        its ladder value. Rows of codes that cannot occur (FOLD outside a hand of eleven) are 0.
    """
    if raises:
        if eleven != -1:
            raise ValueError(f"eleven={eleven}: a hand of eleven has no raises")
        pts = np.zeros((N_RAISE_OUTCOMES, 2), np.int64)
        for level, v in enumerate(LADDER):
            for w in (0, 1):
                pts[ladder_outcome(w, level), w] = v
        return pts
    v = MAO_DE_ONZE_VALUE if eleven >= 0 else 1
    pts = np.array([[0, 0], [v, 0], [0, v], [0, 0]], np.int64)
    if eleven >= 0:
        pts[FOLD, 1 - eleven] = MAO_DE_ONZE_FOLD
    return pts


@dataclass
class HandTree:
    """A hand's tree with its terminal outcomes and information-set keys.

    Attributes
    ----------
    game : TabularGame
        The tree; ``game.utility`` is set by ``set_utilities``.
    outcome : int8[N]
        Terminal outcome code (module docstring), -1 at other nodes.
    infoset_key : int64[I]
        ``hist * 2 * n_hands + hand * 2 + player``. Without raises ``hist`` is ``code``: 0 before the
        hand-of-eleven decision, else the played types in base ``n_types + 1`` (digits type + 1)
        after a leading 1. With raises ``hist = code * N_RAISE_CODES + raise code`` (module
        constants). A blind tree has no information sets. With ``face_down`` the base is
        ``2 n_types + 1`` and ``code`` is the player's own view: a card played face up is digit
        type + 1, one the player covered ``n_types + 1 + type`` (they know it), one the opponent
        covered 0 (only the covering is public).
    hands : int64[H, 3]
        The hands (sorted types) indexed by the keys.
    eleven : int
        The player deciding a hand of eleven (0 mano, 1 pé), or -1.
    raises : bool
        Whether the tree has the raise ladder.
    blind : bool
        Whether the cards are played blind (chance nodes).
    strengths : int64[n_types] or None
        Trick strength of each card type.
    raise_caps : (int, int)
        With raises, the ladder index up to which mano and pé may raise (``build_hand_tree``).
    face_down : bool
        Whether cards may be played face down from trick 2 on (rules.py).
    """

    game: TabularGame
    outcome: np.ndarray
    infoset_key: np.ndarray
    hands: np.ndarray
    n_types: int
    eleven: int
    raises: bool = False
    blind: bool = False
    strengths: np.ndarray = None
    raise_caps: tuple = (N_LEVELS - 1, N_LEVELS - 1)
    face_down: bool = False

    @property
    def outcome_points(self):
        """int64[n_outcomes, 2]: points (mano's, pé's) of each outcome code (``outcome_points``)."""
        return outcome_points(self.eleven, self.raises)

    def set_utilities(self, table):
        """Set player 0's (mano's) utility at each terminal from ``table``, float64 by outcome code
        (``N_OUTCOMES`` entries without raises, ``N_RAISE_OUTCOMES`` with)."""
        table = np.asarray(table, np.float64)
        n = N_RAISE_OUTCOMES if self.raises else N_OUTCOMES
        if table.shape != (n,):
            raise ValueError(f"utility table must have {n} entries, one per outcome code; got shape {table.shape}")
        term = self.outcome >= 0
        self.game.utility[:] = 0.0
        self.game.utility[term] = table[self.outcome[term]]

    def infoset_of(self, player, hand_index, history=()):
        """Index of the information set of ``player`` holding hand ``hand_index`` after the
        ``history`` as that player saw it: played types (ints) and, with raises, ``"raise"`` /
        ``"accept"``; with ``face_down``, ``"down:<type>"`` for a card the player covered and
        ``"down"`` for one the opponent covered. ``None`` for the hand-of-eleven decision. KeyError
        if absent, ValueError on a bad token."""
        base = 2 * self.n_types + 1 if self.face_down else self.n_types + 1
        if history is None:
            hist = 0
        else:
            code, rcode, nraise, played = 1, 0, 0, 0
            pending = False
            for t in history:
                if isinstance(t, str) and t.split(":")[0] == "down":
                    if not self.face_down:
                        raise ValueError(f"bad history token {t!r}: this tree has no face-down play")
                    own = t.split(":")[1:]
                    code = code * base + (self.n_types + 1 + int(own[0]) if own else 0)
                    played += 1
                    continue
                if t == "raise" or t == "accept":
                    if not self.raises:
                        raise ValueError(f"bad history token {t!r}: this tree has no raises")
                    if pending:  # the pending raise is answered
                        rcode += (1 if t == "accept" else 2) * RAISE_DIGITS ** (nraise - 1)
                        pending = False
                    elif t == "accept":
                        raise ValueError("bad history: 'accept' without a pending raise")
                    if t == "raise":
                        rcode += (1 + ANSWERS * played) * RAISE_DIGITS ** nraise
                        nraise += 1
                        pending = True
                else:
                    code = code * base + int(t) + 1
                    played += 1
            hist = code * N_RAISE_CODES + rcode if self.raises else code
        key = hist * 2 * len(self.hands) + hand_index * 2 + player
        i = int(np.searchsorted(self._sorted_keys, key))
        if i >= len(self._sorted_keys) or self._sorted_keys[i] != key:
            raise KeyError(f"no information set for player {player}, hand {hand_index}, history {history}")
        return int(self._key_order[i])

    def __post_init__(self):
        self._key_order = np.argsort(self.infoset_key, kind="stable")
        self._sorted_keys = self.infoset_key[self._key_order]


def deal_arrays(strengths, hands, pairs, weights):
    """The deals of ``build_hand_tree`` as the builders take them.

    Parameters
    ----------
    strengths, hands, pairs, weights
        As in ``build_hand_tree``: (T,), (H, 3), (P, 2) ints and (P,) positive weights.

    Returns
    -------
    strengths : int64[T]
    hands : int64[H, 3]
    pairs : int64[P, 2]
        The first three, contiguous.
    probs : float64[P]
        The weights normalised to sum 1.

    Raises
    ------
    ValueError
        If a shape is wrong or a weight is not positive.
    """
    strengths = np.ascontiguousarray(strengths, np.int64)
    hands = np.ascontiguousarray(hands, np.int64)
    pairs = np.ascontiguousarray(pairs, np.int64)
    weights = np.asarray(weights, np.float64)
    if hands.ndim != 2 or hands.shape[1] != 3 or pairs.ndim != 2 or pairs.shape[1] != 2 \
            or len(weights) != len(pairs) or np.any(weights <= 0):
        raise ValueError("hands must be (H, 3), pairs (P, 2), weights (P,) positive")
    return strengths, hands, pairs, weights / weights.sum()


def build_hand_tree(strengths, hands, pairs, weights, eleven=-1, three_ties="nobody", raises=False,
                    blind=False, raise_caps=None, face_down=False):
    """Build the tree of one hand.

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
    raises : bool
        Give both players the raise ladder (a hand where neither has 11); needs ``eleven=-1``.
    blind : bool
        Play every card uniformly at random from the player's remaining cards (the 11-11 option);
        needs ``eleven=-1`` and no raises.
    raise_caps : (int, int) or None
        With raises: the ladder index (0..4) up to which mano and pé may raise (a raise from
        accepted index ``l`` is open to a player while ``l`` is below their cap); ``None`` is the
        whole ladder (4, 4). ``pruning.raise_caps`` gives the caps that keep every value.
    face_down : bool
        From trick 2 on, each card may also be played face down (rules.py: it cannot win the
        trick, two covered cards tie, the opponent does not see which card it was): an extra
        action beside each card; information-set keys as in ``HandTree.infoset_key``. Not with
        ``blind`` (nobody chooses a card). False builds exactly the trees of before the option.

    Returns
    -------
    HandTree

    Raises
    ------
    ValueError
        On a bad ``eleven``/``three_ties``, an impossible combination of options, inconsistent
        shapes, or a deal whose tree outgrows the per-deal bound.
    """
    if eleven not in (-1, 0, 1):
        raise ValueError(f"bad eleven {eleven!r}: allowed -1 (none), 0 (mano), 1 (pé)")
    if three_ties not in ("nobody", "mano"):
        raise ValueError(f"bad three_ties {three_ties!r}: allowed 'nobody' or 'mano'")
    if (raises or blind) and eleven != -1:
        raise ValueError(f"eleven={eleven} allows neither raises nor blind play (a hand of eleven)")
    if raises and blind:
        raise ValueError("raises=True and blind=True: blind play is the 11-11 hand, which has no raises")
    if face_down and blind:
        raise ValueError("face_down=True and blind=True: in blind play nobody chooses a card to cover")
    strengths, hands, pairs, probs = deal_arrays(strengths, hands, pairs, weights)
    if raise_caps is not None and (not raises or len(raise_caps) != 2
                                   or not all(0 <= int(c) <= N_LEVELS - 1 for c in raise_caps)):
        raise ValueError(f"bad raise_caps {raise_caps!r}: two ladder indices 0..{N_LEVELS - 1} "
                         "(mano's, pé's), only with raises=True")
    if face_down:  # the keys' largest value must fit int64 (a leading 1 and six digits)
        biggest = (2 * len(strengths) + 1) ** 7 * (N_RAISE_CODES if raises else 1) * 2 * len(hands)
        if biggest >= 2 ** 63:
            raise ValueError(f"face_down with {len(strengths)} card types and {len(hands)} hands: "
                             "information-set keys would overflow int64; use the abstract deck")
    if raises:
        top = np.array(raise_caps if raise_caps is not None else (N_LEVELS - 1,) * 2, np.int64)
        built = _build_raises(strengths, hands, pairs, probs, three_ties == "mano", top,
                              bool(face_down))
    else:
        built = _build(strengths, hands, pairs, probs, eleven, three_ties == "mano", blind,
                       bool(face_down))
    node_type, node_player, node_key, node_depth, outcome, first_child, n_child, prob_in = built
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
                    n_types=len(strengths), eleven=eleven, raises=bool(raises), blind=bool(blind),
                    strengths=strengths,
                    raise_caps=tuple(int(c) for c in top) if raises else (N_LEVELS - 1,) * 2,
                    face_down=bool(face_down))
