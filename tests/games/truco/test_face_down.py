"""Face-down play (the rule option ``face_down``, rules.py): the rules engine, and the hand trees
(with and without raises, on physical and abstract decks) against the plain reference of
tests/naive/truco.py, which replays every line of play from the start and builds information sets as
(player, own cards, the actions as that player saw them: an opponent's covered card is 'down').
"""

import random

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.subgames import raise_utility_table, utility_table
from strongsolve.games.truco.tree import (FOLD, MANO_WINS, NOBODY, PE_WINS, build_hand_tree,
                                          outcome_points)
from strongsolve.kernels.cfr import DECISION, TERMINAL, solve

from naive import truco as naive
from support.tree_digest import tree_digest

VIRA = "7c"  # the manilhas are the queens
DECK6 = ["Qc", "Qd", "7d", "7s", "Ad", "As"]  # two manilhas, two tied pairs
DECK7 = ["Qc", "Qh", "7d", "7s", "Ad", "As", "Kh"]


def _continuation(x, y):
    """A made-up continuation table W (mano's match-win probability before a hand at x-y)."""
    return 0.5 + 0.035 * (x - y) + 0.0013 * x * y - 0.0007 * y * y


W = {(x, y): _continuation(x, y) for x in range(12) for y in range(12)}


def _utility_by_points(score):
    """Mano's utility after each possible (mano's points, pé's points) of a hand at ``score``,
    written out from the match rules (12 wins; else the roles swap and W values the next hand)."""
    a, b = score

    def u(pm, pp):
        if a + pm >= R.TARGET:
            return 1.0
        if b + pp >= R.TARGET:
            return 0.0
        return 1.0 - W[(b + pp, a + pm)]
    pts = [(0, 0), (0, 1), (1, 0)] + [(v, 0) for v in R.LADDER] + [(0, v) for v in R.LADDER]
    return {p: u(*p) for p in pts}


def _table(score, raises):
    return raise_utility_table(*score, W) if raises else utility_table(*score, W)


def _eleven(score):
    return 0 if score == (11, 6) else 1 if score == (6, 11) else -1


def _physical(deck, score, raises, caps=None, face_down=True):
    vr = R.parse_card(VIRA) // 4
    strengths = [R.strength(R.parse_card(c), vr) for c in deck]
    hands, pairs, weights = ab.deal_pairs(np.ones(len(deck), np.int64))
    tree = build_hand_tree(np.array(strengths), np.array(hands), pairs, weights,
                           eleven=-1 if raises else _eleven(score), raises=raises,
                           raise_caps=caps, face_down=face_down)
    tree.set_utilities(_table(score, raises))
    tree.game.validate()
    return tree


def _abstract(deck, score, raises, caps=None, face_down=True):
    vr = R.parse_card(VIRA) // 4
    hands, pairs, weights = ab.deal_pairs(ab.deck_capacities([R.parse_card(c) for c in deck], vr))
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights,
                           eleven=-1 if raises else _eleven(score), raises=raises,
                           raise_caps=caps, face_down=face_down)
    tree.set_utilities(_table(score, raises))
    tree.game.validate()
    return tree


# --- the rules engine --------------------------------------------------------------------------

def _state(hands, score=(0, 0), face_down=True):
    return R.HandState(hands=tuple(tuple(R.parse_card(c) for c in h.split()) for h in hands),
                       vira=R.parse_card(VIRA), score=score, face_down=face_down)


def test_face_down_is_legal_from_the_second_trick_for_leader_and_follower():
    s = _state(["Qc 4d 5d", "3h 2h 6s"])
    assert not any(a.startswith("down:") for a in s.legal_actions())  # trick 1, mano to lead
    s.apply(f"play:{R.parse_card('4d')}")
    assert not any(a.startswith("down:") for a in s.legal_actions())  # trick 1, pé to follow
    s.apply(f"play:{R.parse_card('6s')}")  # pé wins trick 1 and leads trick 2
    assert s.to_move() == R.PE
    lead = s.legal_actions()
    assert [a for a in lead if a != "raise"] == [f"{how}:{R.parse_card(c)}" for c in ("3h", "2h")
                                                 for how in ("play", "down")]
    s.apply(f"down:{R.parse_card('2h')}")
    follow = s.legal_actions()
    assert f"down:{R.parse_card('Qc')}" in follow and f"down:{R.parse_card('5d')}" in follow
    assert s.covered == ((), (R.parse_card("2h"),))
    off = _state(["Qc 4d 5d", "3h 2h 6s"], face_down=False)
    off.apply(f"play:{R.parse_card('4d')}")
    off.apply(f"play:{R.parse_card('6s')}")
    assert not any(a.startswith("down:") for a in off.legal_actions())


def test_a_covered_card_loses_to_any_face_up_card_and_two_covered_cards_tie():
    vr = R.parse_card(VIRA) // 4
    qc, four = R.parse_card("Qc"), R.parse_card("4d")  # the best manilha, the weakest card
    assert R.trick_result(qc, four, R.MANO, vr, lead_down=True) == R.PE
    assert R.trick_result(four, qc, R.PE, vr, follow_down=True) == R.PE
    assert R.trick_result(qc, four, R.MANO, vr, True, True) == R.TIE
    assert R.trick_result(qc, four, R.MANO, vr) == R.MANO
    # in a hand: mano wins trick 1, covers the zap in trick 2 and loses it; two covered cards in
    # trick 3 (pé leads it) tie, which gives the hand to the trick-1 winner (rules.hand_winner)
    s = _state(["Qc 3d Kd", "4s 5s 6s"], score=(0, 0))
    for a in ("play:3d", "play:4s", "down:Qc", "play:5s", "down:6s", "down:Kd"):
        how, c = a.split(":")
        s.apply(f"{how}:{R.parse_card(c)}")
    assert s.results == [R.MANO, R.PE, R.TIE] and s.points == (1, 0)


@pytest.mark.parametrize("score", [(0, 0), (11, 4), (11, 11), (9, 10)])
def test_random_playouts_match_the_reference(score):
    rng = random.Random(21)
    for _ in range(300):
        cards = rng.sample(range(R.N_CARDS), 7)
        hands, vira = (tuple(cards[:3]), tuple(cards[3:6])), cards[6]
        state = R.HandState(hands=hands, vira=vira, score=score, face_down=True)
        text = lambda a: a.split(":")[0] + ":" + R.card_text(int(a.split(":")[1])) if ":" in a else a
        actions = []
        while True:
            ref = naive.truco_replay([[R.card_text(c) for c in h] for h in hands], R.card_text(vira),
                                     score, actions, face_down=True)
            if state.points is not None:
                assert ref == ("end", state.points)
                break
            legal = state.legal_actions()
            assert ref == ("move", state.to_move(), [text(a) for a in legal])
            a = rng.choice(legal)
            state.apply(a)
            actions.append(text(a))


# --- the trees against the reference --------------------------------------------------------------

@pytest.mark.parametrize("deck,score,raises,caps", [
    # mano up to 3, pé up to 6, so pé's counter-raise occurs (20 s; the whole ladder: 150 s)
    pytest.param(DECK6, (7, 9), True, (1, 2), marks=pytest.mark.slow),
    (DECK6, (10, 9), True, (1, 1)),  # the {1, 3} tier
    (DECK6, (11, 11), False, None),
    (DECK7, (11, 6), False, None),  # a hand of eleven, mano deciding
    (DECK7, (11, 11), False, None),
])
def test_trees_match_the_reference(deck, score, raises, caps):
    ref = naive.truco_face_down_tree(deck, VIRA, score, _utility_by_points(score),
                                     caps=caps or (4, 4))
    exact = naive.truco_lp_value(ref)
    physical = _physical(deck, score, raises, caps)
    g = physical.game
    # one decision node per reference node with a choice, one information set per view
    assert (int((g.node_type == DECISION).sum()), g.n_infosets) == naive.truco_choice_counts(ref)
    abstract = _abstract(deck, score, raises, caps)
    assert abstract.game.n_infosets < g.n_infosets
    for tree in (physical, abstract):
        assert naive.truco_lp_value_of_tabular(tree.game) == pytest.approx(exact, abs=1e-9)
    res = solve(abstract.game, target_nash_conv=1e-7, max_iterations=20_000, check_every=25)
    assert res.nash_conv <= 1e-7 and abs(res.value - exact) <= res.nash_conv
    off = naive.truco_lp_value(naive.truco_hand_tree(deck, VIRA, score, _utility_by_points(score)))
    if caps is None:
        assert naive.truco_lp_value_of_tabular(_abstract(deck, score, raises, face_down=False).game) \
            == pytest.approx(off, abs=1e-9)


def test_information_sets_hide_the_covered_card_from_the_opponent_only():
    # mano covers the 7 or the A in trick 2 of a deal: pé's decision after it is one information set
    # for both, mano's later decisions are two
    tree = _physical(DECK6, (7, 9), True)
    qc, qd, d7, s7, ad, as_ = range(6)  # types are deck positions
    hands = [tuple(h) for h in tree.hands]
    h_mano, h_pe = hands.index((qc, d7, ad)), hands.index((qd, s7, as_))
    # trick 1: Qc beats Qd? no: Qd is ouros, Qc paus: mano wins and leads trick 2
    seen_by_pe = tree.infoset_of(1, h_pe, [qc, qd, "down"])
    for t in (d7, ad):
        assert tree.infoset_of(1, h_pe, [qc, qd, "down"]) == seen_by_pe
        tree.infoset_of(0, h_mano, [qc, qd, f"down:{t}", as_, "raise"])  # mano's own view exists
    assert tree.infoset_of(0, h_mano, [qc, qd, f"down:{d7}", as_, "raise"]) != \
        tree.infoset_of(0, h_mano, [qc, qd, f"down:{ad}", as_, "raise"])
    with pytest.raises(KeyError):
        tree.infoset_of(1, h_pe, [qc, qd, f"down:{d7}"])  # pé never learns which card it was
    off = _physical(DECK6, (7, 9), True, face_down=False)
    with pytest.raises(ValueError, match="no face-down play"):
        off.infoset_of(1, h_pe, [qc, qd, "down"])


# digests of trees built by the code before the option (commit bd762e1), on the deals of the first
# 12 mano hands of vira class 4
@pytest.mark.parametrize("raises,caps,eleven,digest", [
    (True, (1, 1), -1, "30fbb484e0923953"),
    (True, (2, 4), -1, "4c4fbce824f8eed2"),
    (False, None, 1, "e73d7b95ac629525"),
    (False, None, -1, "101624d34e7e3f24"),
])
def test_face_down_off_builds_the_trees_of_before(raises, caps, eleven, digest):
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(4))
    keep = pairs[:, 0] < 12
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs[keep], weights[keep],
                           eleven=eleven, raises=raises, raise_caps=caps, face_down=False)
    assert tree_digest(tree) == digest


def test_bad_combinations():
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(0))
    with pytest.raises(ValueError, match="blind"):
        build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs[:3], weights[:3],
                        blind=True, face_down=True)
    strengths = np.arange(40) // 4  # a physical 40-card deck: keys would not fit int64
    hands40 = np.array([[0, 1, 2], [3, 4, 5]] * 5000)
    with pytest.raises(ValueError, match="overflow int64"):
        build_hand_tree(strengths, hands40, np.array([[0, 1]]), [1.0], raises=True, face_down=True)


# --- the option through the driver, the sizes command and --line ----------------------------------

def test_sizes_count_the_face_down_tree(capsys):
    import json

    from strongsolve import cli
    from strongsolve.games.truco.sizes import raise_tree_sizes

    cap = ab.class_capacities(2)
    got = raise_tree_sizes(cap, (1, 2), hands_limit=2, face_down=True)
    hands, pairs, weights = ab.deal_pairs(cap)
    keep = pairs[:, 0] < 2
    g = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs[keep], weights[keep],
                        raises=True, raise_caps=(1, 2), face_down=True).game
    assert got == dict(deals=int(keep.sum()), nodes=g.n_nodes,
                       decision_nodes=int((g.node_type == DECISION).sum()),
                       terminal_nodes=int((g.node_type == TERMINAL).sum()),
                       infosets=g.n_infosets, action_slots=int(g.infoset_ptr[-1]))
    assert got["nodes"] > raise_tree_sizes(cap, (1, 2), hands_limit=2)["nodes"]
    assert cli.main(["truco", "sizes", "--tiers", "1", "--classes", "2", "--hands-limit", "2",
                     "--face-down", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["face_down"] is True
    assert row["nodes"] == raise_tree_sizes(cap, (1, 1), hands_limit=2, face_down=True)["nodes"]


def test_bad_face_down_parameter():
    from strongsolve.games.truco.stages.groups import check_params

    with pytest.raises(ValueError, match="bad face_down 'yes'"):
        check_params({"face_down": "yes"})
    assert check_params({"face_down": True})["face_down"] is True


@pytest.fixture(scope="module")
def solved_1111(tmp_path_factory):
    from strongsolve.games.truco.stages.groups import solve_group
    from support.truco import tiny_capacities

    root = tmp_path_factory.mktemp("truco_face_down")
    solve_group(11, root, dict(target_nash_conv=1e-6, fixed_point_tol=1e-7, face_down=True),
                log=lambda m: None, capacities=tiny_capacities)
    return root


def test_policy_line_with_covered_cards(solved_1111, capsys):
    import json

    from strongsolve import cli
    from strongsolve.games.truco.line import replay_line
    from strongsolve.games.truco.saved import group_dir, read_subgame, subgame_name
    from support.truco import tiny_capacities, tiny_cards

    c = 4
    vira, cards = tiny_cards(c)  # Q vira: three queens (commons), two 3s, the J manilhas d and c
    t = [R.card_text(x) for x in cards]
    vr = vira // 4
    attrs, data = read_subgame(group_dir(solved_1111, 11) / subgame_name(11, 11, c))
    assert attrs["face_down"] is True and attrs["params"]["face_down"] is True
    hands, pairs, weights = ab.deal_pairs(tiny_capacities(c))
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, face_down=True)
    assert np.array_equal(tree.infoset_key, data["infoset_key"])
    # mano (player 0, holding three queens... two of them here) leads a queen, pé takes the trick
    # with a 3 and covers a card: mano sees "down"
    mano_cards = [cards[0], cards[1], cards[5]]
    base = ["--score", "11-11", "--dealer", "1", "--vira", R.card_text(vira),
            "--results", str(solved_1111), "--json"]
    line = f"{t[0]} {t[3]} down"
    assert cli.main(["truco", "policy", *base, "--hand", " ".join(t[i] for i in (0, 1, 5)),
                     "--line", line]) == 0
    got = json.loads(capsys.readouterr().out)
    h = hands.index(ab.abstract_hand(mano_cards, vr))
    i = tree.infoset_of(0, h, [R.strength(cards[0], vr), R.strength(cards[3], vr), "down"])
    want = list(data["policy"][data["infoset_ptr"][i]:data["infoset_ptr"][i + 1]])
    assert [a["probability"] for a in got["actions"]] == want
    assert [a["action"] for a in got["actions"]] == ["play", "play face down"] * 2
    # mano takes trick 2 with a queen and leads the manilha to trick 3; pé, who covered the other
    # 3, must name it; the named card gives pé's own view
    pe = " ".join(t[i] for i in (3, 4, 6))
    assert cli.main(["truco", "policy", *base, "--hand", pe, "--line", f"{line} {t[1]} {t[5]}"]) == 2
    assert "name it as down:<card>" in capsys.readouterr().err
    assert cli.main(["truco", "policy", *base, "--hand", pe,
                     "--line", f"{t[0]} {t[3]} down:{t[4]} {t[1]} {t[5]}"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [a["action"] for a in got["actions"]] == ["play", "play face down"]
    h = hands.index(ab.abstract_hand([cards[3], cards[4], cards[6]], vr))
    s = [R.strength(x, vr) for x in (cards[0], cards[3], cards[4], cards[1], cards[5])]
    i = tree.infoset_of(1, h, [s[0], s[1], f"down:{s[2]}", s[3], s[4]])
    want = list(data["policy"][data["infoset_ptr"][i]:data["infoset_ptr"][i + 1]])
    assert [a["probability"] for a in got["actions"]] == want
    with pytest.raises(ValueError, match="only from the second trick"):
        replay_line(11, 11, vira, "down", face_down=True)
    with pytest.raises(ValueError, match="no face-down play"):
        replay_line(11, 11, vira, f"{t[0]} {t[3]} down")


@pytest.mark.parametrize("score,mode", [((9, 10), "min"), ((10, 1), "player")])
def test_raise_pruning_stays_lossless_with_face_down_play(score, mode):
    # pruning.py's lift (history_of_key, strip_pruned) on face-down trees: a random profile of the
    # pruned game and its lift to the whole ladder have the same value and best responses
    from strongsolve.games.truco.pruning import lift_policy, raise_caps
    from strongsolve.kernels.cfr import evaluate

    table = raise_utility_table(*score, W)
    full, pruned = _abstract(DECK6, score, True), _abstract(DECK6, score, True,
                                                            raise_caps(*score, mode))
    for t in (full, pruned):
        t.set_utilities(table)
    rng = np.random.default_rng(5)
    g = pruned.game
    profile = np.concatenate([rng.dirichlet(np.ones(int(n))) for n in np.diff(g.infoset_ptr)])
    got = evaluate(full.game, lift_policy(pruned, profile, full))
    want = evaluate(g, profile)
    for k in ("value", "br0", "br1", "nash_conv"):
        assert got[k] == pytest.approx(want[k], abs=1e-12), k
