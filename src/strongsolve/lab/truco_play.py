"""Truco, play a hand against the equilibrium: the bot samples each of its actions from the solved
mix (:func:`games.truco.advice.policy_line`, the numbers of ``strongsolve truco policy --line``) with a
generator seeded by the seed and the decision's index; when the hand is over, each of the user's
decisions is shown with the value of every action it had. A decision off the equilibrium path (after
the user's own deviation) is marked as such: the policy there is a best response to the bot's
strategy (kernels/off_path.py), not an equilibrium mix.

The value of an action is the user's match-win probability if they take it and then both players
follow the equilibrium, with the two hands as dealt (known once the hand is over): an expectation
over the rest of the hand's tree under both mixes, its leaves scored by the subgame's stored
utility table (mano's match-win probability of each outcome code, games/truco/tree.py); the actions
whose values tie the best one within the solve's NashConv are marked and named (strongsolve/ties.py,
the 2048 tables' rule). The state
travels in the URL (deal seed, line), so the server keeps nothing.
"""

import random
from urllib.parse import urlencode

from flask import Blueprint, current_app, request

from .. import ties
from ..games.truco.advice import policy_line
from ..games.truco import rules as R
from ..games.truco.line import fold_state, replay_line
from ..games.truco.subgames import check_score
from ..games.truco.tree import FOLD, NOBODY, ladder_outcome
from ..store.errors import CorruptLayerError
from .inputs import SEED_LIMIT, whole_number
from .layout import esc, render_page
from .truco_line import (LIKELY_NOTE, action_token, check_deal, most_likely, off_path_note,
                         random_deal, row_class)

blueprint = Blueprint("truco_play", __name__)


class Hand:
    """One deal of one subgame: score (player 0's, player 1's), dealer, vira (text), both hands
    (card ints by player) and the results folder; the subgame is read once (``cache``)."""

    def __init__(self, score, dealer, vira, hands, results):
        self.score, self.dealer, self.vira, self.hands, self.results = score, dealer, vira, hands, results
        self.mano = 1 - dealer
        self.role_score = (score[self.mano], score[dealer])
        self.cache = {}

    def player(self, role):
        return self.mano if role == R.MANO else self.dealer

    def mix(self, words):
        """policy_line's answer for the player to act after ``words`` (tokens, no fold)."""
        # covered cards allowed here; policy_line holds them to the subgame's face_down rule
        state = replay_line(*self.role_score, R.parse_card(self.vira), " ".join(words),
                            face_down=True)
        hand = " ".join(R.card_text(c) for c in self.hands[self.player(state.to_move)])
        return state, policy_line(self.score, self.dealer, self.vira, hand, " ".join(words),
                                  self.results, cache=self.cache)

    def outcome(self, words):
        """The outcome code of the hand after ``words`` if it is over (a fold as the last token, or
        its last trick played), else None."""
        vira = R.parse_card(self.vira)
        if not self.cache:
            self.mix([])  # reads the subgame: its rules options and utility table
        three_ties = self.cache["attrs"].get("params", {}).get("three_ties", "nobody")
        if words and words[-1] == "fold":
            before = fold_state(*self.role_score, vira, " ".join(words), face_down=True)
            if before.eleven_pending:
                return FOLD
            return ladder_outcome(1 - before.to_move, before.level)  # the raiser wins the level held
        state = replay_line(*self.role_score, vira, " ".join(words), finished=True,
                            three_ties=three_ties, face_down=True)
        if state.winner is None:
            return None
        return NOBODY if state.winner < 0 else ladder_outcome(state.winner, state.level)

    def value(self, words, memo=None):
        """Mano's expected match-win probability after ``words`` when both follow the equilibrium."""
        memo = {} if memo is None else memo
        key = " ".join(words)
        if key not in memo:
            code = self.outcome(words)
            if code is not None:
                memo[key] = float(self.cache["attrs"]["utility"][code])
            else:
                _, out = self.mix(words)
                memo[key] = sum(act["probability"] * self.value(words + [first_token(act)], memo)
                                for act in out["actions"] if act["probability"] > 0)
        return memo[key]


def first_token(act):
    """The token of an action; a class of several cards is played as its first (the same strength,
    so the same tricks)."""
    return action_token(act["action"], act["cards"][0] if act["cards"] else None)


def bot_token(out, seed, k):
    """The bot's token at decision ``k``: an action drawn from the mix ``out`` by a generator seeded
    by (seed, k)."""
    u = random.Random(f"{seed}:{k}").random()
    acts = [a for a in out["actions"] if a["probability"] > 0]
    for act in acts:
        u -= act["probability"]
        if u < 0:
            return first_token(act)
    return first_token(acts[-1])  # rounding: the probabilities sum to 1 within 1e-12


def _inputs(errors):
    args = request.args
    try:
        score = tuple(whole_number(args.get(f"score{i}", "11"), f"player {i}'s score", -SEED_LIMIT,
                                   SEED_LIMIT) for i in (0, 1))
        check_score(*score)
        dealer = whole_number(args.get("dealer", "1"), "dealer", 0, 1)
        you = whole_number(args.get("you", "0"), "player", 0, 1)
        seed = whole_number(args.get("seed") or str(random.randrange(1 << 30)), "seed", 0, SEED_LIMIT)
        vira = args.get("vira", "7c")
        R.parse_card(vira)
    except ValueError as err:
        errors.append(str(err))
        return None
    return score, dealer, vira, you, seed


@blueprint.route("/truco/play")
def play():
    results = current_app.config["RESULTS"]
    errors = []
    got = _inputs(errors)
    if got is None:
        return render_page("Truco: play a hand", "", errors)
    score, dealer, vira, you, seed = got
    line = request.args.get("line", "").split()
    hand0, hand1 = request.args.get("hand0", ""), request.args.get("hand1", "")
    if not (hand0 and hand1):
        hand0, hand1 = random_deal(vira, seed)
    state_args = dict(score0=score[0], score1=score[1], dealer=dealer, vira=vira, you=you, seed=seed,
                      hand0=hand0, hand1=hand1)
    body = []
    try:
        hand = Hand(score, dealer, vira, check_deal(hand0, hand1, vira), results)
        while hand.outcome(line) is None:  # the bot moves until the user's turn or the hand's end
            _, out = hand.mix(line)
            if out["player"] == you:
                break
            line.append(bot_token(out, seed, len(line)))
        code = hand.outcome(line)
    except (ValueError, FileNotFoundError, CorruptLayerError) as err:  # the message names the fix
        return render_page("Truco: play a hand", "", [str(err)])
    mine = " ".join(R.card_text(c) for c in hand.hands[you])
    body.append(f'<p>Score {score[0]}-{score[1]}, player {dealer} deals, vira {esc(vira)}, seed {seed}. '
                f'You are player {you} and hold <b id="your-hand">{esc(mine)}</b>.</p>'
                f'<p>Play so far: <span id="play-line">{esc(" ".join(line) or "(none)")}</span></p>')
    if code is None:
        _, out = hand.mix(line)
        links = []
        for act in out["actions"]:
            for t in [action_token(act["action"], c) for c in act["cards"]] or [action_token(act["action"])]:
                href = "/truco/play?" + urlencode(dict(state_args, line=" ".join(line + [t])))
                text = f"play {t}" if t in act["cards"] else t
                links.append(f'<a class="do" id="act-{esc(t)}" href="{esc(href)}">{esc(text)}</a>')
        body.append(f'<p id="your-turn">Your move: {" ".join(links)}</p>' + off_path_note(out, "now"))
        return render_page("Truco: play a hand", "\n".join(body), errors)
    utility = float(hand.cache["attrs"]["utility"][code])
    mine_value = utility if hand.mano == you else 1.0 - utility
    other = " ".join(R.card_text(c) for c in hand.hands[1 - you])
    body.append(f'<p id="hand-over">The hand is over; the bot held {esc(other)}. Your match-win '
                f'probability after it: <b id="result-value">{mine_value:.6f}</b>.</p>'
                "<p>Your decisions, each action valued as your match-win probability if you took it "
                "and both then followed the equilibrium, with the hands as dealt:</p>")
    memo = {}
    for k in range(len(line)):
        _, out = hand.mix(line[:k])
        if out["player"] != you:
            continue
        rows = []
        likely = most_likely(out["actions"])
        labels = [act["action"] + (" " + "/".join(act["cards"]) if act["cards"] else "")
                  for act in out["actions"]]
        values = []
        for act in out["actions"]:
            v = hand.value(line[:k] + [first_token(act)], memo)
            values.append(v if hand.mano == you else 1.0 - v)
        # values within the solve's NashConv tie (strongsolve/ties.py, as the 2048 tables)
        top = ties.best(labels, values, 0.0, out["nash_conv"])
        for i, act in enumerate(out["actions"]):
            chosen = line[k] in ([action_token(act["action"], c) for c in act["cards"]]
                                 or [action_token(act["action"])])
            mark = ("← tie" if len(top) > 1 else "← best") if labels[i] in top else ""
            rows.append(f'<tr id="dec-{k}-{i}"{row_class(chosen and "chosen", i in likely and "likely")}>'
                        f'<td class="label">{esc(labels[i])}</td><td class="prob">{act["probability"]:.6f}'
                        f'</td><td class="value">{values[i]:.6f}</td><td class="mark">{mark}</td></tr>')
        tie = (f'<p class="tie" id="tie-{k}">{esc(ties.tie_note(top, f"{max(values):.6f}"))} '
               f'(values within the solve\'s NashConv {out["nash_conv"]:.1e}).</p>' if len(top) > 1 else "")
        body.append(f'<p>after <i>{esc(" ".join(line[:k]) or "(the deal)")}</i>:</p>'
                    + off_path_note(out, k) + f'<table class="values" id="dec-{k}"><tr><th>action</th><th>equilibrium '
                    "probability</th><th>your value</th><th></th></tr>" + "".join(rows) + "</table>" + tie)
    body.append(LIKELY_NOTE)
    again = {k: v for k, v in dict(state_args, seed=seed + 1).items() if k not in ("hand0", "hand1")}
    body.append(f'<p><a id="again" href="/truco/play?{esc(urlencode(again))}">another hand</a></p>')
    return render_page("Truco: play a hand", "\n".join(body), errors)
