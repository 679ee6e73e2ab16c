"""Truco atlas: Marcador (score), Repartidor (dealer), Muestra (vira) -> the subgame and its mix.

Score and dealer pick the role-ordered subgame (mano, the non-dealer, first); the vira picks its
class, so vira 2 and vira 3 (one class) show the same mix, each with its own card labels. The grid
shows all 144 x 9 subgames, solved ones coloured. Everything is read through
:func:`games.truco.saved.read_subgame` and :func:`games.truco.advice.policy` (``strongsolve truco``).
"""

import random
from urllib.parse import urlencode

from flask import Blueprint, current_app, request

from ..games.truco.advice import N_SUBGAMES, policy
from ..games.truco import encoding as ab
from ..games.truco import rules as R
from ..games.truco.advice import next_solve_hint
from ..games.truco.hints import subgame_hint
from ..games.truco.saved import read_subgame
from ..games.truco.stages.grid import stored_subgames
from ..games.truco.subgames import N_SCORES, check_score
from ..store.errors import CorruptLayerError
from .inputs import SEED_LIMIT, whole_number
from .layout import esc, render_page
from .truco_line import LIKELY_NOTE, line_html, most_likely, random_deal, row_class

blueprint = Blueprint("truco", __name__)

ALL_CARDS = [R.card_text(c) for c in range(R.N_CARDS)]


def solved_subgames(results):
    """The stored subgames, each read on its own so that one damaged file hides no other.

    Returns
    -------
    solved : dict
        ``{(mano points, pé points, vira class): attributes}`` of the readable subgames.
    damaged : list of str
        Why each other subgame cannot be read: its file and the command that rebuilds it.
    """
    solved, damaged = {}, []
    # the 11 row's jobs' layout and the grid's (the grid's copy wins, as the solver reads them)
    for path in stored_subgames(results).values():
        try:
            r = read_subgame(path, arrays=False)[0]
            solved[(r["score"][0], r["score"][1], r["vira_class"])] = r
        except CorruptLayerError as err:  # names the file and its repair
            damaged.append(str(err))
        except (OSError, KeyError, TypeError, IndexError) as err:
            damaged.append(f"{path}: cannot be read ({type(err).__name__}: {err}); solve it again "
                           f"with `{subgame_hint(path)}`")
    return solved, damaged


def _hint_html(hint):
    """``advice.next_solve_hint``'s "what: command" as "; what: <code>command</code>"."""
    if hint is None:
        return ""
    what, command = hint.split(": ", 1)
    return f"; {esc(what)}: <code>{esc(command)}</code>"


def _damaged_html(damaged):
    items = "".join(f"<li>damaged: {esc(m)}</li>" for m in damaged)
    return f'<ul id="damaged">{items}</ul>' if damaged else ""


def status_html(results):
    solved, damaged = solved_subgames(results)
    n = len(solved)
    link = f'<a href="/truco">{n} of {N_SUBGAMES} subgames solved</a>'
    hint = next_solve_hint(results, [k[:2] for k in solved])
    more = _hint_html(hint)
    return f"<h2>Truco</h2><ul><li>{link}{more}</li></ul>" + _damaged_html(damaged)


def _grid_html(solved, here):
    head = "".join(f"<th>{b}</th>" for b in range(N_SCORES))
    rows = []
    for a in range(N_SCORES):
        tds = []
        for b in range(N_SCORES):
            spans = []
            for c in range(ab.N_VIRA_CLASSES):
                r = solved.get((a, b, c))
                tip = (f"{a}-{b} class {c}: value {r['value']:.6f}, exploitability "
                       f"{r['exploitability']:.1e}, {r['seconds']:.1f} s" if r else
                       f"{a}-{b} class {c}: unsolved")
                # solved: green, darker where mano's match-win probability is higher
                style = f' style="background: hsl(130, 55%, {80 - 55 * r["value"]:.0f}%)"' if r else ""
                spans.append(f'<span id="sg-{a}-{b}-{c}" class="{"solved" if r else "unsolved"}" '
                             f'title="{esc(tip)}"{style}></span>')
            mark = ' class="here"' if (a, b) == here else ""
            tds.append(f'<td{mark}><div class="cell9">{"".join(spans)}</div></td>')
        rows.append(f"<tr><th>{a}</th>{''.join(tds)}</tr>")
    return ('<table class="grid" id="grid"><tr><th>mano \\ pé</th>' + head + "</tr>"
            + "".join(rows) + "</table>")


def _values_html(solved, vclass):
    """Mano's match-win probability of the solved subgames of one vira class over the 144 scores
    (a heat map: darker green is higher; unsolved scores blank)."""
    head = "".join(f"<th>{b}</th>" for b in range(N_SCORES))
    rows = []
    for a in range(N_SCORES):
        tds = []
        for b in range(N_SCORES):
            r = solved.get((a, b, vclass))
            tds.append(f'<td id="v-{a}-{b}" style="background: hsl(130, 55%, {85 - 50 * r["value"]:.0f}%)">'
                       f'{r["value"]:.4f}</td>' if r else f'<td id="v-{a}-{b}"></td>')
        rows.append(f"<tr><th>{a}</th>{''.join(tds)}</tr>")
    return (f"<p>Mano's match-win probability, vira class {vclass} (rows mano's points, columns "
            'pé\'s):</p><table class="values" id="values"><tr><th></th>' + head + "</tr>"
            + "".join(rows) + "</table>")


def _int_arg(name, default, errors, what):
    # any whole number reads; check_score then names the allowed points 0..11
    try:
        return whole_number(request.args.get(name, str(default)), what, -SEED_LIMIT, SEED_LIMIT)
    except ValueError as err:
        errors.append(str(err))
        return default


@blueprint.route("/truco")
def page():
    results = current_app.config["RESULTS"]
    errors = []
    s0 = _int_arg("score0", 11, errors, "player 0's score")
    s1 = _int_arg("score1", 11, errors, "player 1's score")
    dealer_t = request.args.get("dealer", "1")
    vira = request.args.get("vira", "7c")
    hand = request.args.get("hand", "").strip()
    hand0 = request.args.get("hand0", "").strip()
    hand1 = request.args.get("hand1", "").strip()
    line = request.args.get("line", "").strip()
    seed_t = request.args.get("seed", "").strip()
    solved, damaged = solved_subgames(results)
    here, vclass = None, None
    try:
        check_score(s0, s1)
    except ValueError as err:
        errors.append(str(err).replace("bad score", "score"))
    if dealer_t not in ("0", "1"):
        errors.append(f"dealer {dealer_t!r} is not a player; allowed 0 or 1")
    try:
        vira_card = R.parse_card(vira)
        vclass = ab.vira_class(vira_card // R.N_SUITS)
    except ValueError as err:
        errors.append(f"vira: {err}")
    num = lambda name, v: (f'<input type="number" name="{name}" id="{name}" value="{esc(v)}" '  # noqa: E731
                           'style="width:4em">')  # the server, not the browser, checks 0..11
    dealer_opts = "".join(f'<option{" selected" if dealer_t == d else ""}>{d}</option>' for d in "01")
    vira_opts = "".join(f'<option{" selected" if c == vira else ""}>{c}</option>' for c in ALL_CARDS)
    body = [f'<form method="get" action="/truco"><p>Marcador: player 0 {num("score0", s0)} player 1 '
            f'{num("score1", s1)} &nbsp; Repartidor <select name="dealer" id="dealer">{dealer_opts}'
            f'</select> &nbsp; Muestra (vira) <select name="vira" id="vira">{vira_opts}</select></p>'
            f'<p>hand of the deciding player <input name="hand" id="hand" value="{esc(hand)}" '
            'placeholder="e.g. Ac 3h 4s"> <button type="submit" id="go">Show</button></p>'
            f'<p>line of play: player 0\'s hand <input name="hand0" id="hand0" value="{esc(hand0)}" '
            f'placeholder="e.g. 2s 7h 3c"> player 1\'s hand <input name="hand1" id="hand1" '
            f'value="{esc(hand1)}" placeholder="e.g. Ac Kd 4s"> <button type="submit" id="line-go">'
            'Play through</button> or seed <input name="seed" id="seed" value="'
            f'{esc(seed_t)}" style="width:6em"> <button type="submit" name="deal" value="random" '
            'id="deal">Random deal</button></p></form>',
            f'<p id="solved-count">{len(solved)} of {N_SUBGAMES} subgames solved'
            + _hint_html(next_solve_hint(results, [k[:2] for k in solved])) + "</p>",
            _damaged_html(damaged)]
    if not errors:
        dealer = int(dealer_t)
        mano = 1 - dealer
        score = (s0, s1)
        a, b = score[mano], score[dealer]
        here = (a, b)
        body.append(f'<p id="roles">Player {dealer} deals, so player {mano} is mano: the role-ordered '
                    f'score (mano, pé) is <b id="role-score">{a}-{b}</b>. Rotating the dealer to player '
                    f'{mano} flips it to {b}-{a}. Vira {esc(vira)} is of class <b id="vira-class">'
                    f'{vclass}</b>.</p>')
        r = solved.get((a, b, vclass))
        play = "/truco/play?" + urlencode(dict(score0=s0, score1=s1, dealer=dealer, vira=vira, you=0))
        if r is None:
            body.append(f'<p id="subgame">subgame {a}-{b} class {vclass} is not solved.</p>')
        else:  # a hand is offered only where the bot has a solved mix to play
            body.append(f'<p><a id="play-link" href="{esc(play)}">Play a hand</a> as player 0 against '
                        "the equilibrium (a random deal; the bot samples from the solved mix).</p>")
            value0 = r["value"] if mano == 0 else 1.0 - r["value"]
            body.append(f'<p id="subgame">subgame {a}-{b} class {vclass}: player 0 wins the match with '
                        f'probability <span id="value0">{value0:.6f}</span> (mano '
                        f'{r["value"]:.6f}); exploitability {r["exploitability"]:.2e}</p>')
        if hand:
            try:
                out = policy(score, dealer, vira, hand, results)
            except (ValueError, FileNotFoundError, CorruptLayerError) as err:
                errors.append(str(err))  # it names the command that solves the missing subgame
            else:
                what = "hand of eleven" if out["decision"] == "hand_of_eleven" else "first card at 11-11"
                likely = most_likely(out["actions"])
                rows = "".join(f'<tr id="action-{i}"{row_class(i in likely and "likely")}>'
                               f'<td class="label">{act["action"]}'
                               f'{" " + "/".join(act["cards"]) if act["cards"] else ""}</td>'
                               f'<td class="prob">{act["probability"]:.6f}</td></tr>'
                               for i, act in enumerate(out["actions"]))
                body.append(f'<p>player {out["player"]} holds {" ".join(out["hand"])}: {what}</p>'
                            '<table class="values" id="mix"><tr><th>action</th><th>probability</th>'
                            "</tr>" + rows + "</table>" + LIKELY_NOTE)
    if not errors and request.args.get("deal") == "random":
        try:
            seed = whole_number(seed_t, "seed", 0, SEED_LIMIT) if seed_t else random.randrange(1 << 30)
        except ValueError as err:
            errors.append(str(err))
        else:
            hand0, hand1 = random_deal(vira, seed)
            line = ""
            body.append(f'<p id="dealt">Dealt with seed {seed}: player 0 holds {hand0}, player 1 holds '
                        f'{hand1}.</p>')
    if not errors and (hand0 or hand1):
        try:
            body.append("<h2>Line of play</h2>" + line_html(results, (s0, s1), int(dealer_t), vira,
                                                              hand0, hand1, line))
        except (FileNotFoundError, ValueError, CorruptLayerError) as err:  # the message names the fix
            errors.append(str(err))
    body.append('<div style="display: flex; gap: 2em; align-items: flex-start"><div>')
    if vclass is not None:
        body.append(_values_html(solved, vclass))
    body.append('</div><div style="max-width: 30em"><p class="note">Grid: rows mano\'s points, columns pé\'s points; each cell holds the '
                "nine vira classes (green: solved, darker where mano's match-win probability is higher; "
                "grey: unsolved; hover for value, exploitability, "
                "seconds). The red outline marks the chosen score.</p>" + _grid_html(solved, here)
                + "</div></div>")
    return render_page("Truco atlas", "\n".join(body), errors)
