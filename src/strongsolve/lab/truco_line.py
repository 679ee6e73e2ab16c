"""Truco atlas, line of play: both hands of a deal (typed or dealt at random, seeded) and the
equilibrium mix at every decision along a line the user clicks through.

Each decision is answered by :func:`games.truco.advice.policy_line` (``strongsolve truco policy
--line``) for the player to act, with that player's hand, so the page shows the CLI's numbers. The
state travels in the URL (hands, line); a fold ends the line (``fold`` as its last token, which the
lab strips before asking the CLI, since a line never holds a fold). Abstract card classes are shown
as the physical cards of the hand that fall in them; a click plays one of those cards. A decision
off the equilibrium path (after a deviation of either player) says so, as on the play page: its
policy is a best response to the other player's strategy (kernels/off_path.py).
"""

import random
from urllib.parse import urlencode

from ..games.truco.advice import OFF_PATH_NOTE, policy_line
from ..games.truco import rules as R
from ..games.truco.line import fold_state, hand_outcome, replay_line
from .layout import esc


def random_deal(vira, seed):
    """Two hands of three distinct cards, neither holding ``vira`` (card text), drawn by a
    generator seeded by ``seed`` (int); returned as card texts ``(player 0's, player 1's)``."""
    rest = [c for c in range(R.N_CARDS) if c != R.parse_card(vira)]
    cards = random.Random(seed).sample(rest, 2 * R.HAND_SIZE)
    return tuple(" ".join(R.card_text(c) for c in cards[i::2]) for i in (0, 1))


def check_deal(hand0, hand1, vira):
    """The two hands as card-int lists; ValueError naming a bad card, a card held twice or the
    vira in a hand."""
    hands = []
    for p, text in enumerate((hand0, hand1)):
        try:
            hands.append(R.parse_hand(text))
        except ValueError as err:
            raise ValueError(f"player {p}'s hand {text!r}: {err}") from None
        if R.parse_card(vira) in hands[-1]:
            raise ValueError(f"player {p}'s hand {text!r} holds the vira {vira}")
    both = set(hands[0]) & set(hands[1])
    if both:
        raise ValueError(f"both hands hold {' '.join(R.card_text(c) for c in sorted(both))}")
    return hands


TIE = 1e-9  # probabilities closer than this are one value: a tie (the 2048 pages' rule too)


def most_likely(actions):
    """Indices of the most likely actions of a mix: every action whose probability is within
    :data:`TIE` of the highest (a tie marks them all, e.g. a uniform mix).

    Parameters
    ----------
    actions : list of dict
        Each with ``probability`` (float), as :func:`games.truco.advice.policy_line` returns them.

    Returns
    -------
    set of int
        Empty only when ``actions`` is.
    """
    top = max((a["probability"] for a in actions), default=None)
    return {i for i, a in enumerate(actions) if top - a["probability"] <= TIE}


def row_class(*names):
    """`` class="..."`` of the truthy names, or "" (HTML)."""
    names = [n for n in names if n]
    return f' class="{" ".join(names)}"' if names else ""


LIKELY_NOTE = ('<p class="note likely-note">Highlighted probability: the most likely action of the '
               "mix (every one of them when they tie).</p>")


def off_path_note(out, k):
    """The off-path line of a decision's answer ``out`` (:func:`games.truco.advice.policy_line`;
    empty on the path), element id ``off-path-<k>`` (HTML)."""
    if not out["off_path"]:
        return ""
    return f'<p class="off-path" id="off-path-{k}">{esc(OFF_PATH_NOTE[0].upper() + OFF_PATH_NOTE[1:])}.</p>'


def action_token(action, card=None):
    """The line token of an action label of :func:`games.truco.line.action_labels`."""
    if card is not None:
        return f"down:{card}" if action == "play face down" else card
    return "truco" if action.startswith("raise") else action  # play (hand of eleven), accept, fold


def _steps(score, dealer, vira, hands, line, results):
    """[(prefix tokens, policy_line output, chosen token or None)] along ``line``; the last entry's
    chosen token is None (the decision to click), or the hand ended (a fold, or its last trick)."""
    words = line.split()
    folded = bool(words) and words[-1] == "fold"
    if folded:
        fold_state(score[1 - dealer], score[dealer], R.parse_card(vira), line, face_down=True)
        words = words[:-1]
    mano = 1 - dealer
    a, b = score[mano], score[dealer]
    steps = []
    for k in range(len(words) + 1):
        prefix = " ".join(words[:k])
        try:
            # covered cards allowed here; policy_line holds them to the subgame's face_down rule
            state = replay_line(a, b, R.parse_card(vira), prefix, face_down=True)
        except ValueError as err:
            if k == len(words) and "the hand is over" in str(err):
                return steps, "the hand is over: its last trick is played; " + _outcome(
                    a, b, vira, line, mano, dealer)
            raise
        player = mano if state.to_move == R.MANO else dealer
        for p in (0, 1):  # each card of the line from the hand of the player who played it
            role = R.MANO if p == mano else 1 - R.MANO
            for c in state.played[role]:
                if c not in hands[p]:
                    raise ValueError(f"line {prefix!r} has player {p} play {R.card_text(c)}, which "
                                     f"is not in their hand")
        hand = " ".join(R.card_text(c) for c in hands[player])
        out = policy_line(score, dealer, vira, hand, prefix, results)
        chosen = words[k] if k < len(words) else ("fold" if folded else None)
        steps.append((words[:k], out, chosen))
    return steps, (f"player {steps[-1][1]['player']} folds: the hand is over; "
                   + _outcome(a, b, vira, line, mano, dealer) if folded else None)


def _outcome(a, b, vira, line, mano, dealer):
    """Who won the finished hand of ``line`` and the points, as words."""
    role, points = hand_outcome(a, b, R.parse_card(vira), line, face_down=True)
    if role == -1:
        return "the three tricks tie: nobody scores"
    return f"player {mano if role == R.MANO else dealer} wins the hand and scores {points} point(s)"


def line_html(results, score, dealer, vira, hand0, hand1, line):
    """HTML of the line section: one table per decision (ids ``mix-<k>``, rows ``step-<k>-<i>``
    with cells ``label`` and ``prob``, the chosen row of class ``chosen``, the most likely rows of
    class ``likely``: :func:`most_likely`), the off-path line of a decision off the equilibrium
    path (:func:`off_path_note`) and links that extend the line (ids ``do-<token>``). Raises ValueError or FileNotFoundError as ``policy_line``."""
    hands = check_deal(hand0, hand1, vira)
    steps, ended = _steps(score, dealer, vira, hands, line, results)
    base = dict(score0=score[0], score1=score[1], dealer=dealer, vira=vira, hand0=hand0, hand1=hand1)
    out = [f'<p id="hand-value">Player 0 wins the match with probability <b id="line-value0">'
           f'{steps[0][1]["value_player0"]:.6f}</b> (the subgame\'s value before the deal); '
           f'exploitability {steps[0][1]["exploitability"]:.2e}.</p><ol id="line-steps">']
    for k, (prefix, res, chosen) in enumerate(steps):
        rows, links = [], []
        likely = most_likely(res["actions"])
        for i, act in enumerate(res["actions"]):
            tokens = [action_token(act["action"], c) for c in act["cards"]] or [action_token(act["action"])]
            mark = row_class(chosen in tokens and "chosen", i in likely and "likely")
            label = act["action"] + (" " + "/".join(act["cards"]) if act["cards"] else "")
            rows.append(f'<tr id="step-{k}-{i}"{mark}><td class="label">{esc(label)}</td>'
                        f'<td class="prob">{act["probability"]:.6f}</td></tr>')
            if chosen is None and not ended:
                for t in tokens:
                    href = "/truco?" + urlencode(dict(base, line=" ".join(prefix + [t])))
                    text = f"play {t}" if t in act["cards"] else t
                    links.append(f'<a class="do" id="do-{esc(t)}" href="{esc(href)}">{esc(text)}</a>')
        note = " (a raise the lossless pruning drops: accept)" if res["pruned_raise"] else ""
        out.append(f'<li id="step-{k}">after <i>{esc(" ".join(prefix) or "(the deal)")}</i>: player '
                   f'{res["player"]} to act, holding {esc(" ".join(res["hand"]))}{note}'
                   + off_path_note(res, k) + f'<table class="values" id="mix-{k}"><tr><th>action</th><th>probability</th></tr>'
                   + "".join(rows) + "</table>"
                   + (f'<p id="choices">your move: {" ".join(links)}</p>' if links else "") + "</li>")
    out.append("</ol>" + LIKELY_NOTE)
    if ended:
        out.append(f'<p id="line-end">{esc(ended)}.</p>')
    out.append(f'<p><a id="restart" href="/truco?{esc(urlencode(dict(base, line="")))}">start the '
               "line again</a></p>")
    return "".join(out)
