"""`strongsolve truco policy --line`: the equilibrium mix of the player to act
after a line of play, on subgames solved on tiny decks (test_truco_row11's, one per vira class):
the 11 row's groups 11, 10, 9 and the tier t1 (scores 9-9 .. 10-10, ladder {1, 3})."""

import json

import numpy as np
import pytest

from strongsolve import cli
from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.stages.grid import Deck, grid_path, solve_tier
from strongsolve.games.truco.line import replay_line
from strongsolve.games.truco.stages.groups import solve_group
from strongsolve.games.truco.saved import read_subgame
from strongsolve.games.truco.tree import build_hand_tree

from support.truco import tiny_capacities, tiny_cards

PARAMS = dict(target_nash_conv=1e-5, fixed_point_tol=1e-6)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("truco_line")
    for x in (11, 10, 9):
        solve_group(x, root, PARAMS, log=lambda m: None, capacities=tiny_capacities)
    deck = Deck("full", ab.vira_class_probabilities(), [tiny_capacities(c) for c in range(9)])
    solve_tier("t1", root, PARAMS, deck, min_score=9, log=lambda m: None)
    return root


def run(capsys, *argv):
    code = cli.main(["truco", "policy", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


C = 4  # vira class of the tiny deck used below
VIRA, CARDS = tiny_cards(C)  # the vira's three other cards, two of another rank, two manilhas
T = [R.card_text(x) for x in CARDS]


def expected(results, score, role, hand_cards, history):
    """The stored policy at an information set, found through a tree built here."""
    attrs, data = read_subgame(grid_path(results, *score, C))
    hands, pairs, weights = ab.deal_pairs(tiny_capacities(C))
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, raises=True,
                           raise_caps=tuple(attrs["raise_caps"]))
    assert np.array_equal(tree.infoset_key, data["infoset_key"])
    h = hands.index(ab.abstract_hand(hand_cards, VIRA // 4))
    i = tree.infoset_of(role, h, history)
    return list(data["policy"][data["infoset_ptr"][i]:data["infoset_ptr"][i + 1]])


def test_policy_after_a_raise_and_cards(results, capsys):
    # score 10-10, player 1 deals: player 0 is mano. Mano raises (truco), pé accepts, mano leads
    # T[0]; pé (holding T[3], T[4], T[5]) is to act
    vr = VIRA // 4
    line = f"truco accept {T[0]}"
    hand = f"{T[3]} {T[4]} {T[5]}"
    code, out, err = run(capsys, "--score", "10-10", "--dealer", "1", "--vira", R.card_text(VIRA),
                         "--hand", hand, "--line", line, "--results", str(results), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["player"] == 1 and not got["pruned_raise"] and got["raise_caps"] == [1, 1]
    want = expected(results, (10, 10), 1, CARDS[3:6], ["raise", "accept", R.strength(CARDS[0], vr)])
    # pé accepted, so the rules let pé raise to 6: a raise the pruning drops (10 + 3 >= 12),
    # never made at equilibrium
    assert [a["probability"] for a in got["actions"]] == want + [0.0]
    assert [a["action"] for a in got["actions"]] == ["play"] * len(want) + ["raise to 6"]
    assert sum(a["probability"] for a in got["actions"]) == pytest.approx(1.0, abs=1e-12)


def test_pruned_raise_is_accepted(results, capsys):
    # the rules allow pé to counter-raise to 6 at 9-9, a raise the pruning drops (9 + 3 >= 12):
    # the equilibrium answer is to accept
    code, out, err = run(capsys, "--score", "9-9", "--dealer", "1", "--vira", R.card_text(VIRA),
                         "--hand", f"{T[0]} {T[1]} {T[2]}", "--line", "truco truco",
                         "--results", str(results), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["pruned_raise"] and got["player"] == 0
    assert [(a["action"], a["probability"]) for a in got["actions"]] == [
        ("accept", 1.0), ("fold", 0.0), ("raise to 9", 0.0)]


def test_hand_of_eleven_line(results, capsys):
    code, out, err = run(capsys, "--score", "11-9", "--dealer", "1", "--vira", R.card_text(VIRA),
                         "--hand", f"{T[0]} {T[1]} {T[2]}", "--line", "", "--results", str(results),
                         "--json")
    assert code == 0, err
    got = json.loads(out)
    assert [a["action"] for a in got["actions"]] == ["play", "fold"] and got["player"] == 0


def test_illegal_lines_and_unsolved_subgames(results, capsys):
    base = ["--dealer", "1", "--vira", R.card_text(VIRA), "--hand", f"{T[0]} {T[1]} {T[2]}",
            "--results", str(results)]
    code, _, err = run(capsys, "--score", "10-10", "--line", "accept", *base)
    assert code == 2 and "token 1 ('accept')" in err and "no raise to accept" in err
    code, _, err = run(capsys, "--score", "11-9", "--line", "truco", *base)
    assert code == 2 and "first decides: 'play'" in err
    code, _, err = run(capsys, "--score", "10-10", "--line", f"{T[0]} {T[0]}", *base)
    assert code == 2 and "already played" in err
    code, _, err = run(capsys, "--score", "5-7", "--line", "", *base)
    assert code == 2 and "no solved subgame for score 5-7" in err
    assert err.rstrip().endswith(f"solve it with: snakemake --cores all --config games='[truco]' "
                                 f"truco='{{scores: {{min_score: 5}}}}' results={results}")
    with pytest.raises(ValueError, match="hand is over"):
        # mano wins two tricks with the manilhas
        replay_line(10, 10, VIRA, f"{R.card_text(CARDS[6])} {T[0]} {R.card_text(CARDS[5])} {T[1]}")
