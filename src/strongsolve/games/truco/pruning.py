"""Lossless pruning of the raise ladder: drop the raises that cannot change who wins the match.

A raise is proposed while a stake ``v`` is on the table: the accepted value of the hand (rules.LADDER
1, 3, 6, 9, 12), or, for a counter-raise, the value the counter-raise accepts. Two rules:

``"min"`` (symmetric): at role-ordered score (a, b) a raise is pruned when ``min(a, b) + v >= 12``.
``"player"`` (per player): player P's raise is pruned when ``s_P + v >= 12`` (P's own points).

Why "min" keeps every value (our rules, rules.py):

1. The stake only grows, so once a raise is pruned every later raise is pruned too: from there on
   the pruned game G' has no raises.
2. With ``min(a, b) + v >= 12`` every end of the hand at a stake of at least ``v`` ends the match:
   the trick winner, or the raiser when the other folds, reaches 12; three tied tricks score
   nobody at any stake (or mano, with ``three_ties="mano"``, again ending the match). So a
   terminal's utility depends on who won, never on the stake reached after ``v``.
3. Lift a profile s' of G' to the full game G: the answerer of a pruned raise accepts, nobody
   makes a pruned raise, and every other decision is taken as s' takes it at the public history
   with the pruned raises and their accepts removed (a move G' plays without a node, one card type
   left and no raise, gets probability 1). Against lift(s'_j) a player i who makes pruned raises
   sees them accepted and reaches a terminal with the same winner as the G' play without them;
   by 2 its utility is the same, and every G' strategy of i is a G strategy. So i's best response
   in G to lift(s'_j) has the value of i's best response in G' to s'_j, for i = 0 and 1, and
   lift(s') has the value of s'. With s' an equilibrium of G', lift(s') is one of G: the game
   values are equal, and the exploitability of any lifted profile is that of s'.

Why "player" keeps every value when the utility table allows it: a pruned raise by P is made at
``v >= 3`` (outside the 11 row ``s_P <= 10``, and ``s_P + 1 >= 12`` is impossible), so P accepted
last and the opponent O cannot raise any more in G'; in G, O's lift accepts and never raises later.
A fold to P's raise, or P winning, still ends the match for P; but O winning now scores O the
final stake ``v' >= v`` instead of ``v``. If O's utility is non-decreasing in the points O wins
over the ladder values from ``v`` up, P's pruned raise never gains, and step 3 goes through
(``player_prune_is_lossless`` checks this on the hand's utility table; the table is known before
the hand is solved, so the choice is exact per subgame). The match values W are not monotone by
any rule we know of, hence the check.

Tiers (the "min" rule; ``raise_cap``): a player at ``m`` points may raise from the ladder values
``v`` with ``m + v < 12``: m = 9, 10 -> ladder {1, 3}; 6..8 -> {1, 3, 6}; 3..5 -> {1, 3, 6, 9};
0..2 -> the whole ladder. The public solver baixada-cards/truco-solver (EXACT_SOLVING.md) uses the
same "min" rule and the per-player refinement.

Public histories here are lists of tokens as in ``tree.HandTree.infoset_of``: played card types
(ints) and ``"raise"`` / ``"accept"`` (a ``"raise"`` answering a pending raise is a counter-raise).
"""

import numpy as np

from .rules import COVERED, LADDER, TARGET
from .tree import ANSWERS, N_LEVELS, N_RAISE_CODES, RAISE_DIGITS, ladder_outcome

PRUNE_MODES = ("none", "min", "player")


def raise_cap(points):
    """Ladder index (1..4) up to which a player at ``points`` (0..10) may usefully raise: the count
    of ladder values ``v`` below 12 (1, 3, 6, 9) with ``points + v < 12``."""
    if not 0 <= points <= 10:
        raise ValueError(f"bad points {points}: raises exist at 0..10 points (11 plays without them)")
    return sum(1 for v in LADDER[:-1] if points + v < TARGET)


def raise_caps(a, b, mode="min"):
    """(mano's, pé's) raise caps for ``tree.build_hand_tree`` at role-ordered score (a, b).

    Parameters
    ----------
    a, b : int
        Mano's and pé's points, 0..10 (the 11 row has no raises).
    mode : {"none", "min", "player"}
        The whole ladder, the symmetric rule, or the per-player rule (module docstring; lossless
        only where ``player_prune_is_lossless`` holds).

    Returns
    -------
    (int, int)

    Raises
    ------
    ValueError
        On a score outside 0..10 or an unknown mode.
    """
    if mode not in PRUNE_MODES:
        raise ValueError(f"bad prune mode {mode!r}: allowed {PRUNE_MODES}")
    ca, cb = raise_cap(a), raise_cap(b)
    if mode == "none":
        return (N_LEVELS - 1, N_LEVELS - 1)
    if mode == "min":
        return (max(ca, cb),) * 2  # the cap of the lower score
    return (ca, cb)


def tier(a, b):
    """The tier of a score outside the 11 row: the symmetric cap ``raise_cap(min(a, b))`` (1..4)."""
    return raise_cap(min(a, b))


def player_prune_is_lossless(table, a, b):
    """Whether the per-player rule keeps every value of the hand at (a, b) with utility ``table``.

    Parameters
    ----------
    table : float64[N_RAISE_OUTCOMES]
        Mano's utility of each outcome code (``subgames.raise_utility_table``).
    a, b : int
        Mano's and pé's points (0..10).

    Returns
    -------
    bool
        True when, for each player P whose raises the rule prunes from ladder index ``t_P`` on,
        the opponent's utility of winning is non-decreasing over the indices ``t_P .. 4``.
    """
    table = np.asarray(table, np.float64)
    caps = raise_caps(a, b, "player")
    for p in (0, 1):
        o = 1 - p
        sign = 1.0 if o == 0 else -1.0  # the opponent's utility, from mano's table
        u = [sign * table[ladder_outcome(o, lvl)] for lvl in range(caps[p], N_LEVELS)]
        if any(u[i + 1] < u[i] for i in range(len(u) - 1)):
            return False
    return True


def history_of_key(tree, index):
    """Decode information set ``index`` of a raise tree: (player, hand index, history as the player
    saw it; with face-down play a covered card is "down:<type>" if the player's, else "down")."""
    key = int(tree.infoset_key[index])
    n_hands = len(tree.hands)
    player = key % 2
    hand = (key // 2) % n_hands
    hist = key // (2 * n_hands)
    code, rcode = divmod(hist, N_RAISE_CODES)
    types = []
    while code > 1:
        code, t = divmod(code, 2 * tree.n_types + 1 if tree.face_down else tree.n_types + 1)
        types.append("down" if t == 0 else f"down:{t - tree.n_types - 1}" if t > tree.n_types
                     else t - 1)
    types.reverse()
    raises = []  # (position, answer) per raise made
    while rcode:
        rcode, d = divmod(rcode, RAISE_DIGITS)
        raises.append(((d - 1) // ANSWERS, (d - 1) % ANSWERS))
    tokens = []
    for pos in range(len(types) + 1):
        for at, answer in raises:
            if at == pos:
                tokens.append("raise")  # a counter-raise answers the previous raise by raising
                if answer == 1:
                    tokens.append("accept")
        if pos < len(types):
            tokens.append(types[pos])
    return player, hand, tokens


def strip_pruned(tokens, strengths, caps, full_caps=(N_LEVELS - 1, N_LEVELS - 1)):
    """Remove the raises that ``caps`` prune (and their accepts) from a public history of the game
    with ``full_caps``.

    Parameters
    ----------
    tokens : list
        Public history (module docstring).
    strengths : int array
        Trick strength of each card type (who leads each trick follows from them).
    caps, full_caps : (int, int)
        Raise caps of the pruned game and of the game the history is from.

    Returns
    -------
    (list, str)
        The history in the pruned game, and the state: ``"ok"``, ``"answer"`` (the next decision
        answers a pruned raise: the lift accepts it) or ``"off"`` (a raise followed a pruned one:
        a history no lifted profile reaches unless both players deviate).

    Raises
    ------
    ValueError
        If the history breaks the rules of the game with ``full_caps``.
    """
    out = []
    leader, lead = 0, None  # who leads the trick, the type led (None: no card on the table)
    level, raiser, pend, pend_pruned = 0, -1, -1, False  # the full game's raise state
    raiser_kept = -1  # who may raise next in the pruned game
    off = False
    for tok in tokens:
        mover = leader if lead is None else 1 - leader
        if tok == "raise":
            actor = pend if pend >= 0 else mover
            if pend >= 0:
                level += 1  # a counter-raise accepts the pending raise first
            elif raiser not in (-1, actor):
                raise ValueError(f"illegal raise in {tokens}: only the last to accept may raise")
            if level >= full_caps[actor]:
                raise ValueError(f"illegal raise in {tokens}: past the ladder of this game")
            pruned = level >= caps[actor]
            if pend >= 0 and not pend_pruned:
                out.append("raise" if not pruned else "accept")
                if pruned:
                    raiser_kept = actor
            elif not pruned:
                if pend >= 0 or raiser_kept not in (-1, actor):
                    off = True  # a raise the pruned game cannot make after a pruned one
                out.append("raise")
            pend, pend_pruned = 1 - actor, pruned
        elif tok == "accept":
            if pend < 0:
                raise ValueError(f"'accept' without a pending raise in {tokens}")
            level += 1
            raiser = pend
            if not pend_pruned:
                out.append("accept")
                raiser_kept = pend
            pend, pend_pruned = -1, False
        else:
            if pend >= 0:
                raise ValueError(f"a card played while a raise is pending in {tokens}")
            if isinstance(tok, str):  # "down" / "down:<type>": a card played face down
                if tok.split(":")[0] != "down":
                    raise ValueError(f"bad token {tok!r} in {tokens}")
                out.append(tok)
                s = COVERED
            else:
                out.append(int(tok))
                s = strengths[int(tok)]
            if lead is None:
                lead = s
            else:
                x, y = lead, s
                res = 2 if x == y else (leader if x > y else mover)
                leader = leader if res == 2 else res
                lead = None
    if off:
        return out, "off"
    return out, ("answer" if pend >= 0 and pend_pruned else "ok")


def lift_map(pruned, full):
    """How ``lift_policy`` fills each action slot of ``full``: (source slot of ``pruned`` or -1,
    constant used where the source is -1), int64[M] and float64[M]."""
    ptr = full.game.infoset_ptr
    src = np.full(int(ptr[-1]), -1, np.int64)
    const = np.zeros(int(ptr[-1]))
    for i in range(full.game.n_infosets):
        lo, hi = int(ptr[i]), int(ptr[i + 1])
        player, hand, tokens = history_of_key(full, i)
        hist, state = strip_pruned(tokens, full.strengths, pruned.raise_caps, full.raise_caps)
        if state == "off":
            const[lo:hi] = 1.0 / (hi - lo)
        elif state == "answer":
            const[lo] = 1.0  # accept
        else:
            try:
                j = pruned.infoset_of(player, hand, hist)
            except KeyError:  # a forced card in the pruned tree: the card, not the raise
                if hi - lo != 2:
                    raise RuntimeError(f"information set {i} of the full tree ({tokens}) has no "
                                       "counterpart in the pruned tree") from None
                const[lo] = 1.0
                continue
            plo, phi = int(pruned.game.infoset_ptr[j]), int(pruned.game.infoset_ptr[j + 1])
            src[lo:lo + phi - plo] = np.arange(plo, phi)
    return src, const


def lift_policy(pruned, policy, full, mapping=None):
    """A profile of a pruned raise tree carried to the tree with more raises (step 3 of the module
    docstring).

    Parameters
    ----------
    pruned, full : tree.HandTree
        Raise trees of the same deck, ``pruned.raise_caps`` at most ``full.raise_caps``.
    policy : float64[M']
        Action probabilities of ``pruned`` (slots of ``pruned.game.infoset_ptr``).
    mapping : tuple or None
        ``lift_map(pruned, full)``, to reuse across profiles.

    Returns
    -------
    float64[M]
        Action probabilities of ``full``: an answer to a pruned raise accepts, a pruned raise gets 0,
        a move the pruned tree plays without a node gets 1 on its card, histories no lifted profile
        reaches (a raise after a pruned raise) are uniform.
    """
    src, const = mapping if mapping is not None else lift_map(pruned, full)
    return np.where(src >= 0, np.asarray(policy, np.float64)[np.maximum(src, 0)], const)
