"""Off the equilibrium path on the CLI and the lab's play page: after the user's own deviation in
the 11-11 hand of a tiny deck (the lab fixture's solve of group 11), the CLI offers one move, says
the position is off the path, and that move is the best against the bot's stored strategy: its
value, over the bot's hands weighed by chance and the bot's mixes along the line, is the highest of
the moves offered (a brute force over the CLI's own numbers); the play page says so too."""

import html
import itertools

import pytest

from strongsolve.games.truco.advice import OFF_PATH_NOTE
from strongsolve.games.truco.stages.groups import solve_group
from strongsolve.lab.app import create_app

from support.lab import cli_json, run_cli
from support.truco import tiny_capacities

VIRA = "2d"  # vira class 8: the tiny deck's unseen cards (tests/support/truco.py)
DECK = ["2s", "2h", "2c", "7d", "7s", "3d", "3c"]
POSITION = ["--score", "11-11", "--dealer", 1, "--vira", VIRA]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The lab fixture's 11-11 subgames (tests/support/lab.py: group 11, tiny decks, 1e-6)."""
    root = tmp_path_factory.mktemp("off_path") / "results"
    solve_group(11, root, dict(target_nash_conv=1e-6, fixed_point_tol=1e-7, workers=1),
                log=lambda m: None, capacities=tiny_capacities)
    return root


def _mix(results, hand, line):
    return cli_json("truco", "policy", *POSITION, "--hand", hand, "--line", " ".join(line),
                    "--results", results, "--json")


def _card_prob(out, card):
    return sum(a["probability"] for a in out["actions"] if card in a["cards"])


def _value(results, hands, line, memo):
    """Player 0's (mano's) expected utility after ``line`` with the hands as dealt, both players
    following the CLI's answers, leaves scored by the stored utility table (outcome codes of
    games/truco/tree.py: 1 mano wins, 2 pé wins, 3 nobody)."""
    from strongsolve.games.truco import rules as R
    from strongsolve.games.truco.saved import read_subgame
    from strongsolve.games.truco.stages.grid import stored_path

    key = " ".join(line)
    if key not in memo:
        vr = R.card_rank(R.parse_card(VIRA))
        owner = {c: p for p in (0, 1) for c in hands[p].split()}
        leader, tricks = R.MANO, []
        for i in range(0, len(line) - 1, 2):
            res = R.trick_result(R.parse_card(line[i]), R.parse_card(line[i + 1]), leader, vr)
            tricks.append(res)
            leader = R.next_leader(res, leader)
        w = R.hand_winner(tricks) if len(line) % 2 == 0 and tricks else None
        if w is not None:
            utility = read_subgame(stored_path(results, 11, 11, 8), arrays=False)[0]["utility"]
            memo[key] = utility[3 if w < 0 else 1 + w]
        else:
            mover = leader if len(line) % 2 == 0 else 1 - owner[line[-1]]
            out = _mix(results, hands[mover], line)
            memo[key] = sum(a["probability"] * _value(results, hands, line + [a["cards"][0]], memo)
                            for a in out["actions"] if a["probability"] > 0)
    return memo[key]


def _leader_after(line):
    """Who leads the next trick after ``line`` (whole tricks of cards; 0 is mano)."""
    from strongsolve.games.truco import rules as R

    vr = R.card_rank(R.parse_card(VIRA))
    leader = R.MANO
    for i in range(0, len(line) - 1, 2):
        leader = R.next_leader(R.trick_result(R.parse_card(line[i]), R.parse_card(line[i + 1]),
                                              leader, vr), leader)
    return leader


def _off_path_decisions(results, hand):
    """(line, bot hands with their belief weights, the CLI's answer) of player 0's decision at
    trick 2 after a first card its own strategy plays with probability at most the subgame's
    off-path threshold: the bot's hands alike by chance, each weighed by the bot's mixes at its
    decisions of the line."""
    from strongsolve.games.truco.saved import read_subgame
    from strongsolve.games.truco.stages.grid import stored_path

    tau = read_subgame(stored_path(results, 11, 11, 8), arrays=False)[0]["off_path_reach"]
    rest = [c for c in DECK if c not in hand.split()]
    bots = [" ".join(b) for b in itertools.combinations(rest, 3)]
    first = _mix(results, hand, [])
    for lead in hand.split():
        if _card_prob(first, lead) > tau:
            continue
        for reply in rest:
            lines = [[lead, reply]]
            if _leader_after(lines[0]) == 1:  # the bot leads trick 2 before the user's decision
                lines = [[lead, reply, c] for c in rest if c != reply]
            for line in lines:
                weights = {}
                for bot in bots:
                    if all(c in bot.split() for c in line[1::2] + line[2::2]):
                        w = 1.0
                        for k in range(1, len(line)):
                            if line[k] in bot.split():
                                w *= _card_prob(_mix(results, bot, line[:k]), line[k])
                        weights[bot] = w
                if sum(weights.values()) == 0:
                    continue
                out = _mix(results, hand, line)
                if len(out["actions"]) > 1:
                    yield line, weights, out


@pytest.mark.parametrize("hand", ["2s 7d 3c", "2h 7s 3d"])
def test_after_a_deviation_the_move_offered_is_the_best_against_the_bot(results, hand):
    found = 0
    for line, weights, out in _off_path_decisions(results, hand):
        assert out["off_path"] is True
        probs = sorted(a["probability"] for a in out["actions"])
        assert probs[-1] == 1.0 and sum(probs[:-1]) == 0.0  # one move, not a leftover mix
        total = sum(weights.values())
        values = {}
        for act in out["actions"]:
            card = act["cards"][0]
            values[card] = sum(w * _value(results, (hand, bot), line + [card], {})
                               for bot, w in weights.items() if w > 0) / total
        offered = next(a["cards"][0] for a in out["actions"] if a["probability"] == 1.0)
        assert values[offered] >= max(values.values()) - 1e-9, (line, values)
        code, text = run_cli("truco", "policy", *POSITION, "--hand", hand, "--line", " ".join(line),
                             "--results", results)
        assert code == 0 and OFF_PATH_NOTE in text.splitlines()
        found += 1
    assert found > 0


def test_on_the_path_nothing_is_said(results):
    out = _mix(results, "2s 7d 3c", [])
    assert out["off_path"] is False
    code, text = run_cli("truco", "policy", *POSITION, "--hand", "2s 7d 3c", "--line", "",
                         "--results", results)
    assert code == 0 and OFF_PATH_NOTE not in text


def test_the_play_page_says_a_position_is_off_the_path(results):
    hand = "2s 7d 3c"
    line, weights, _ = next(_off_path_decisions(results, hand))
    bot = next(b for b, w in weights.items() if w > 0)
    client = create_app(results).test_client()
    base = (f"/truco/play?score0=11&score1=11&dealer=1&vira={VIRA}&you=0&seed=5&hand0={hand}"
            f"&hand1={bot}&line=")
    now = html.unescape(client.get(base + " ".join(line)).get_data(as_text=True))
    note = OFF_PATH_NOTE[0].upper() + OFF_PATH_NOTE[1:] + "."
    assert f'<p class="off-path" id="off-path-now">{note}</p>' in now, now
    start = html.unescape(client.get(base).get_data(as_text=True))
    assert "off-path" not in start
    # played to the end: the table of that decision carries the note, the first one does not
    out = _mix(results, hand, line)
    k = len(line)  # the decision's index in the line
    move = next(a["cards"][0] for a in out["actions"] if a["probability"] == 1.0)
    end = html.unescape(client.get(base + " ".join(line + [move])).get_data(as_text=True))
    while 'id="hand-over"' not in end:  # the user's last card (forced) if the bot is done
        mine = [c for c in hand.split() if c not in " ".join(line + [move]).split()]
        line = line + [move]
        move = mine[0]
        end = html.unescape(client.get(base + " ".join(line + [move])).get_data(as_text=True))
    assert f'id="off-path-{k}"' in end and 'id="off-path-0"' not in end, end


@pytest.mark.parametrize("c", [0, 8])
def test_a_stored_subgame_is_refined_within_its_target(results, c):
    """The stored 11-11 policy on its tree (rebuilt from the class's deck): its mask is the
    reference's set of information sets off the path at the stored rung, its off-path rows
    are pure, its value and NashConv are the stored ``off_path_*`` ones and stay within the
    solve's target of the solve's value and NashConv."""
    import numpy as np

    from strongsolve.games.truco import encoding as ab
    from strongsolve.games.truco.saved import read_subgame
    from strongsolve.games.truco.stages.grid import stored_path
    from strongsolve.games.truco.tree import build_hand_tree
    from strongsolve.kernels.cfr import evaluate
    from strongsolve.kernels.off_path import OFF_PATH_REACHES

    from naive import truco as naive

    attrs, data = read_subgame(stored_path(results, 11, 11, c))
    hands, pairs, weights = ab.deal_pairs(tiny_capacities(c))
    tree = build_hand_tree(np.arange(13), np.array(hands), pairs, weights)
    tree.set_utilities(attrs["utility"])
    assert np.array_equal(tree.infoset_key, data["infoset_key"])
    game, policy, off = tree.game, data["policy"], data["off_path"]
    assert attrs["off_path_reach"] in OFF_PATH_REACHES and attrs["off_path_sets"] == off.sum() > 0
    nested = naive.truco_nested_from_tabular(game)
    ptr = game.infoset_ptr

    def stored(key, n):
        return [float(x) for x in policy[ptr[key]:ptr[key] + n]]

    # the mask is marked again on the refined profile until nothing is added, and a refined row
    # is pure, so the own reach of every set below an off-path one stays at most the threshold:
    # here the reference finds the same sets on the stored policy
    found = set()
    for p in range(2):
        found |= set(naive.truco_off_path_beliefs(nested, stored, p, attrs["off_path_reach"],
                                                  attrs["off_path_unreached"]))
    assert found == set(np.flatnonzero(off).tolist())
    for i in np.flatnonzero(off):
        assert sorted(policy[ptr[i]:ptr[i + 1]].tolist())[-1] == 1.0
    ev = evaluate(game, policy)
    assert ev["value"] == pytest.approx(attrs["off_path_value"], abs=1e-12)
    assert ev["nash_conv"] == pytest.approx(attrs["off_path_nash_conv"], abs=1e-12)
    target = attrs["params"]["target_nash_conv"]
    assert abs(ev["value"] - attrs["value"]) <= target
    assert ev["nash_conv"] <= max(attrs["nash_conv"], target)


def test_the_line_page_says_a_position_is_off_the_path(results):
    hand = "2s 7d 3c"
    line, weights, _ = next(_off_path_decisions(results, hand))
    bot = next(b for b, w in weights.items() if w > 0)
    client = create_app(results).test_client()
    base = (f"/truco?score0=11&score1=11&dealer=1&vira={VIRA}&hand0={hand}&hand1={bot}&line=")
    page = html.unescape(client.get(base + " ".join(line)).get_data(as_text=True))
    note = OFF_PATH_NOTE[0].upper() + OFF_PATH_NOTE[1:] + "."
    k = len(line)  # the decision's index in the line
    assert f'<p class="off-path" id="off-path-{k}">{note}</p>' in page, page
    assert 'id="off-path-0"' not in page  # the deal's first decision is on the path
    start = html.unescape(client.get(base).get_data(as_text=True))
    assert 'id="step-0"' in start and "off-path" not in start


def test_the_play_page_names_actions_whose_values_tie(results):
    """At the end of a hand, each decision's actions whose values (the user's match-win
    probability with the hands as dealt, recomputed here from the CLI's answers) are within the
    solve's NashConv of the best are marked "← tie" and named in a line; a lone best is "← best"."""
    import re

    client = create_app(results).test_client()
    seen = {"tie": 0, "best": 0}
    hand = "2s 7d 3c"
    bots = [" ".join(b) for b in itertools.combinations([c for c in DECK if c not in hand.split()], 3)]
    for bot in bots:
        base = (f"/truco/play?score0=11&score1=11&dealer=1&vira={VIRA}&you=0&seed=5&hand0={hand}"
                f"&hand1={bot}&line=")
        line = []
        page = html.unescape(client.get(base).get_data(as_text=True))
        while 'id="hand-over"' not in page:  # the user plays the first card offered each time
            line = re.search(r'<span id="play-line">([^<]*)</span>', page).group(1)
            line = [] if line == "(none)" else line.split()
            card = re.search(r'id="act-([^"]+)"', page).group(1)
            page = html.unescape(client.get(base + " ".join(line + [card])).get_data(as_text=True))
        line = re.search(r'<span id="play-line">([^<]*)</span>', page).group(1).split()
        for k in range(0, len(line)):
            if line[k] not in hand.split():
                continue
            out = _mix(results, hand, line[:k])
            if len(out["actions"]) < 2:
                continue
            values = {a["cards"][0]: _value(results, (hand, bot), line[:k] + [a["cards"][0]], {})
                      for a in out["actions"]}  # player 0 is mano and the user
            top = max(values.values())
            tied = [c for c in values if top - values[c] <= out["nash_conv"]]
            marks = re.findall(rf'<tr id="dec-{k}-\d+"[^>]*><td class="label">play ([^<]+)</td>'
                               r'.*?<td class="mark">([^<]*)</td>', page)
            assert marks, page
            want = "← tie" if len(tied) > 1 else "← best"
            assert [(c, m) for c, m in marks] == [(c, want if c in tied else "") for c, _ in marks]
            note = re.search(rf'<p class="tie" id="tie-{k}">([^<]*)</p>', page)
            if len(tied) > 1:
                names = [f"play {c}" for c, _ in marks if c in tied]
                assert note.group(1).startswith(", ".join(names[:-1]) + f" and {names[-1]} tie at "
                                                f"{top:.6f}"), note.group(1)
                seen["tie"] += 1
            else:
                assert note is None
                seen["best"] += 1
    assert seen["tie"] > 0 and seen["best"] > 0, seen
