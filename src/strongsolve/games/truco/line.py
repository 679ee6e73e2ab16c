"""A line of play typed by a user (``"7c Kd truco accept"``), checked against the rules and mapped
to the information set of the player to act in a solved subgame.

Tokens: a card (``7c``) is played by the player whose turn it is; ``truco`` (or ``raise``) raises
to the next ladder value (a raise answering a raise is a counter-raise); ``accept`` accepts the
pending raise; ``play`` is the decision of the player at 11 to play a hand of eleven. Folding ends
the hand, so a line never holds it. With the face-down rule (rules.py, ``face_down``) a card played
face down is ``down:7c`` when its card is known (the acting player's own covered card must be named
so) or ``down`` when it is not (the opponent's: nobody sees it). Only public information is checked
here (legal order, cards not seen twice); the acting player's own cards come from their hand.
"""

from dataclasses import dataclass, field

from . import rules as R

RAISE_WORDS = ("truco", "raise")


@dataclass
class LineState:
    """The public state after a line, in roles (0 mano, 1 pé)."""

    to_move: int
    tokens: list  # tree tokens: strength types, "raise"/"accept", and "down:<type>" for a card the
    # player to act covered, "down" for one the opponent covered (tree.HandTree.infoset_of)
    eleven_pending: bool  # the player at 11 has not decided yet
    pending: bool  # the player to move answers a raise
    level: int  # accepted ladder index
    can_raise: bool  # the player to move may raise (or counter-raise)
    played: tuple = field(default_factory=lambda: ([], []))  # physical cards played per role
    winner: int = None  # with finished=True, after the hand's last trick: R.MANO, R.PE or -1 (nobody)
    can_cover: bool = False  # the player to move may play a card face down (face_down, trick 2 on)


def replay_line(a, b, vira, line, finished=False, three_ties="nobody", face_down=False):
    """Replay ``line`` (text) at role-ordered score (a, b) with the vira card ``vira`` (int);
    ``face_down``: the subgame's rule option (``down`` / ``down:<card>`` tokens allowed).

    With ``finished``, a line whose last card ends the hand is allowed: the state returned has
    ``winner`` set (``rules.hand_winner`` under ``three_ties``) and nobody to move (``to_move`` -1).

    Returns
    -------
    LineState

    Raises
    ------
    ValueError
        Naming the first token that breaks the rules (or an unknown token), or a line after which
        the hand is over (unless ``finished`` and that is its last token).
    """
    vr = R.card_rank(vira)
    eleven = 0 if (a == 11 and b < 11) else 1 if (b == 11 and a < 11) else -1
    raises_ok = a < 11 and b < 11
    decided = eleven < 0
    level, raiser, pend = 0, -1, -1
    leader, lead, results = R.MANO, None, []
    played = ([], [])
    n_played = [0, 0]
    seen = {vira}
    steps = []  # (token or ("down", actor, card or None)) in order; tokens are fixed at the end
    words = line.replace(",", " ").split()
    for i, w in enumerate(words):
        where = f"token {i + 1} ({w!r}) of line {line!r}"
        mover = leader if lead is None else 1 - leader
        actor = eleven if not decided else pend if pend >= 0 else mover
        low = w.lower()
        if not decided:
            if low != "play":
                raise ValueError(f"illegal {where}: the player at 11 first decides: 'play' (or fold, "
                                 "which ends the hand)")
            decided = True
            continue
        if low in RAISE_WORDS:
            top = level + 1 if pend >= 0 else level
            if not raises_ok or top >= len(R.LADDER) - 1 or (pend < 0 and raiser not in (-1, actor)):
                raise ValueError(f"illegal {where}: player {'mano' if actor == 0 else 'pé'} may not "
                                 "raise here")
            if pend >= 0:
                level += 1
            pend = 1 - actor
            steps.append("raise")
        elif low == "accept":
            if pend < 0:
                raise ValueError(f"illegal {where}: no raise to accept")
            level += 1
            raiser, pend = pend, -1
            steps.append("accept")
        elif low in ("fold", "play"):
            raise ValueError(f"illegal {where}: " + ("a fold ends the hand" if low == "fold"
                                                      else "no hand of eleven to play"))
        else:
            down = low == "down" or low.startswith("down:")
            if down and not face_down:
                raise ValueError(f"illegal {where}: this game has no face-down play (truco.face_down "
                                 "is false)")
            if down and not results:
                raise ValueError(f"illegal {where}: a card may be played face down only from the "
                                 "second trick on")
            card = R.parse_card(w.split(":", 1)[1]) if ":" in w else None if down else R.parse_card(w)
            if pend >= 0:
                raise ValueError(f"illegal {where}: a raise is pending (accept, fold or raise)")
            if card in seen:
                raise ValueError(f"illegal {where}: {w} is the vira or was already played")
            if n_played[actor] == R.HAND_SIZE:
                raise ValueError(f"illegal {where}: that player has no card left")
            n_played[actor] += 1
            if card is not None:
                seen.add(card)
                played[actor].append(card)
            steps.append(("down", actor, None if card is None else R.strength(card, vr)) if down
                         else R.strength(card, vr))
            if lead is None:
                lead = (card, down)  # the card is None when covered and unknown
            else:
                res = R.trick_result(lead[0], card, leader, vr, lead[1], down)
                results.append(res)
                leader, lead = R.next_leader(res, leader), None
                if R.hand_winner(results) is not None:
                    if finished and i == len(words) - 1:
                        return LineState(-1, _tokens(steps, None), False, False, level, False,
                                         played, winner=R.hand_winner(results, three_ties))
                    raise ValueError(f"the hand is over after {where}: nothing to decide")
    mover = leader if lead is None else 1 - leader
    to_move = eleven if not decided else pend if pend >= 0 else mover
    top = level + 1 if pend >= 0 else level
    can = raises_ok and top < len(R.LADDER) - 1 and (pend >= 0 or raiser in (-1, to_move))
    return LineState(to_move, _tokens(steps, to_move, line), not decided, pend >= 0, level, can,
                     played, can_cover=face_down and bool(results) and decided and pend < 0)


def _tokens(steps, player, line=""):
    """The tree tokens of a line as ``player`` saw it: their own covered cards by strength type
    (ValueError if one is not named), the opponent's as "down" (None: nobody's view, "down")."""
    out = []
    for st in steps:
        if isinstance(st, tuple):
            _, actor, t = st
            if actor == player and player is not None:
                if t is None:
                    raise ValueError(f"line {line!r}: the player to act covered a card; name it "
                                     "as down:<card> (e.g. down:7c)")
                out.append(f"down:{t}")
            else:
                out.append("down")
        else:
            out.append(st)
    return out


def check_hand(state, hand, vira):
    """ValueError unless ``hand`` (3 card ints) can be the acting player's: it holds the cards that
    player played, none the opponent played, not the vira."""
    p = state.to_move
    if vira in hand:
        raise ValueError(f"the hand {[R.card_text(c) for c in hand]} holds the vira")
    for c in state.played[p]:
        if c not in hand:
            raise ValueError(f"the line has the player to act playing {R.card_text(c)}, which is not "
                             f"in their hand {' '.join(R.card_text(x) for x in hand)}")
    for c in state.played[1 - p]:
        if c in hand:
            raise ValueError(f"the opponent played {R.card_text(c)}, which is in the hand given")


def action_labels(state, hand, vira):
    """Labels of the acting player's actions, in the tree's order (cards by strength, then the
    raise; or accept, fold, raise; or play, fold for a hand of eleven), each with its cards."""
    if state.eleven_pending:
        return [("play", []), ("fold", [])]
    nxt = R.LADDER[min(state.level + (2 if state.pending else 1), len(R.LADDER) - 1)]
    if state.pending:
        out = [("accept", []), ("fold", [])]
    else:
        vr = R.card_rank(vira)
        left = [c for c in hand if c not in state.played[state.to_move]]
        out = []
        for t in sorted({R.strength(c, vr) for c in left}):
            cards = [R.card_text(c) for c in left if R.strength(c, vr) == t]
            out.append(("play", cards))
            if state.can_cover:
                out.append(("play face down", cards))
    if state.can_raise:
        out.append((f"raise to {nxt}", []))
    return out



def fold_state(a, b, vira, line, face_down=False):
    """The state before the fold that ends ``line`` (text, its last token ``fold``), checked: a
    player may fold only a hand of eleven not yet decided or a pending raise (:func:`action_labels`);
    at 11-11 nobody may raise and nobody decides a hand of eleven, so a fold is never offered there.

    Raises
    ------
    ValueError
        As :func:`replay_line`, or naming the line when the position before its fold offers none.
    """
    words = line.replace(",", " ").split()
    before = " ".join(words[:-1])
    state = replay_line(a, b, vira, before, face_down=face_down)
    if not (state.eleven_pending or state.pending):
        offered = "play a card" + (" or raise" if state.can_raise else "")
        raise ValueError(f"illegal fold at the end of line {line!r} at score {a}-{b}: a player may "
                         f"fold only a hand of eleven or a pending raise; after "
                         f"{before or '(the deal)'!r} the player to act may only {offered}")
    return state


def hand_outcome(a, b, vira, line, face_down=False):
    """Who wins a finished hand and the points, at role-ordered score (a, b) with the vira card
    ``vira`` (int); ``line`` (text) ends with the hand's last card or with ``fold``.

    Returns
    -------
    (int, int)
        The winning role (``R.MANO``, ``R.PE``, or -1 when the three tricks tie and nobody
        scores) and the points it scores (``rules.LADDER`` at the accepted level; at a hand of
        eleven ``MAO_DE_ONZE_VALUE``, or ``MAO_DE_ONZE_FOLD`` when the side at 11 folds).

    Raises
    ------
    ValueError
        As :func:`replay_line`, or when the hand is not over after ``line``.
    """
    words = line.replace(",", " ").split()
    eleven = (a == 11) != (b == 11)
    if words and words[-1].lower() == "fold":
        state = fold_state(a, b, vira, line, face_down=face_down)
        points = R.MAO_DE_ONZE_FOLD if state.eleven_pending else R.LADDER[state.level]
        return 1 - state.to_move, points
    state = replay_line(a, b, vira, line, finished=True, face_down=face_down)
    if state.to_move != -1:
        raise ValueError(f"the hand is not over after line {line!r}")
    if state.winner == -1:
        return -1, 0
    return state.winner, (R.MAO_DE_ONZE_VALUE if eleven else R.LADDER[state.level])
