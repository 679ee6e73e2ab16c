"""The raise ladder in the hand tree ("On their turn, before playing a card, a player may
raise (truco: 3, then 6, 9, 12). The other accepts, folds (the raiser scores the value before the
raise) or raises again. After an accept, only the accepting side may raise next."), against the
physical rules engine (rules.HandState) and the plain reference of tests/naive/truco.py; and the 11-row
trees, which have no raises, pinned to what they were before the ladder was added.
"""

import random

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.subgames import raise_utility_table
from strongsolve.games.truco.tree import (MAX_NODES_PER_DEAL_RAISES, NOBODY, N_RAISE_OUTCOMES,
                                          build_hand_tree, outcome_points)
from strongsolve.kernels.cfr import DECISION, TERMINAL, evaluate, solve

from naive import truco as naive
from support.tree_digest import tree_digest

VIRA = "7c"  # the manilhas are the queens (pagat)
DECK6 = ["Qc", "Qd", "7d", "7s", "Ad", "As"]  # two manilhas, two tied pairs
SCORE = (7, 9)  # mano 7, pé 9: a 6 (or more) wins the match for pé, a 9 for mano


def continuation(x, y):
    """A made-up continuation table W (mano's match-win probability before a hand at x-y)."""
    return 0.5 + 0.035 * (x - y) + 0.0013 * x * y - 0.0007 * y * y


def points_utility(pm, pp):
    """Mano's utility after the hand at SCORE scored (pm, pp), written out from the match rules."""
    a, b = SCORE
    if a + pm >= R.TARGET:
        return 1.0
    if b + pp >= R.TARGET:
        return 0.0
    return 1.0 - continuation(b + pp, a + pm)


W = {(x, y): continuation(x, y) for x in range(12) for y in range(12)}
POINTS = [(0, 0)] + [(v, 0) for v in R.LADDER] + [(0, v) for v in R.LADDER]


def test_outcome_points_and_utility_table():
    pts = outcome_points(raises=True)
    assert pts.shape == (N_RAISE_OUTCOMES, 2)
    assert sorted(map(tuple, pts[1:])) == sorted(POINTS)  # code 0 (FOLD) is a hand of eleven's
    assert tuple(pts[NOBODY]) == (0, 0)
    table = raise_utility_table(*SCORE, W)
    for code in range(1, N_RAISE_OUTCOMES):
        assert table[code] == pytest.approx(points_utility(*pts[code]), abs=1e-15)
    assert table[list(map(tuple, pts)).index((0, 3))] == 0.0  # 9 + 3 = 12: pé wins the match
    with pytest.raises(ValueError, match="11 row"):
        raise_utility_table(11, 3, W)


def _trees(deck):
    vr = R.parse_card(VIRA) // 4
    cards = [R.parse_card(c) for c in deck]
    hands, pairs, weights = ab.deal_pairs(ab.deck_capacities(cards, vr))
    abstract = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, raises=True)
    hands, pairs, weights = ab.deal_pairs(np.ones(len(cards), np.int64))
    physical = build_hand_tree(np.array([R.strength(c, vr) for c in cards]), np.array(hands), pairs,
                               weights, raises=True)
    table = raise_utility_table(*SCORE, W)
    for t in (abstract, physical):
        t.set_utilities(table)
        t.game.validate()
    return abstract, physical


@pytest.fixture(scope="module")
def reference():
    return naive.truco_hand_tree(DECK6, VIRA, SCORE, {p: points_utility(*p) for p in POINTS})


def test_raise_tree_value_matches_the_reference_lp(reference):
    exact = naive.truco_lp_value(reference)
    abstract, physical = _trees(DECK6)
    assert abstract.game.n_infosets < physical.game.n_infosets
    assert naive.truco_lp_value_of_tabular(abstract.game) == pytest.approx(exact, abs=1e-9)
    assert naive.truco_lp_value_of_tabular(physical.game) == pytest.approx(exact, abs=1e-9)
    res = solve(abstract.game, target_nash_conv=1e-6, max_iterations=20_000, check_every=25)
    assert res.nash_conv <= 1e-6
    assert abs(res.value - exact) <= res.nash_conv


def test_best_responses_match_the_reference(reference):
    # a profile that weights the k-th legal action by k + 1; the tree lists actions in the
    # reference's order (cards ascending, then raise; accept, fold, raise)
    def probs(n):
        return [(k + 1) / (n * (n + 1) / 2) for k in range(n)]

    _, physical = _trees(DECK6)
    g = physical.game
    strategy = np.concatenate([probs(int(n)) for n in np.diff(g.infoset_ptr)])
    got = evaluate(g, strategy)

    def value(node):
        if node["kind"] == "terminal":
            return node["utility"]
        p = node["probs"] if node["kind"] == "chance" else probs(len(node["children"]))
        return sum(q * value(c) for q, c in zip(p, node["children"]))

    assert got["value"] == pytest.approx(value(reference), abs=1e-12)
    for player, key in ((0, "br0"), (1, "br1")):
        want = naive.truco_best_response(reference, lambda k, n: probs(n), player)
        assert got[key] == pytest.approx(want, abs=1e-12)


def _public_actions(state, vr):
    """The tree's view of ``state``'s legal actions: (label, rules action) with one card per type."""
    out, seen = [], set()
    for a in state.legal_actions():
        if a.startswith("play:"):
            t = R.strength(int(a[5:]), vr)
            if t not in seen:
                seen.add(t)
                out.append((t, a))
        else:
            out.append((a, a))
    cards = sorted((x for x in out if isinstance(x[0], int)), key=lambda x: x[0])
    return cards + [x for x in out if not isinstance(x[0], int)]


def test_random_paths_follow_the_rules():
    rng = random.Random(99)
    vira = R.parse_card("5h")
    vr = vira // 4
    cap = ab.class_capacities(ab.vira_class(vr))
    rest = [c for c in range(R.N_CARDS) if c != vira]
    deals = [tuple(rng.sample(rest, 6)) for _ in range(60)]
    hands = sorted({ab.abstract_hand(d[i:i + 3], vr) for d in deals for i in (0, 3)})
    pairs = np.array([[hands.index(ab.abstract_hand(d[:3], vr)), hands.index(ab.abstract_hand(d[3:], vr))]
                      for d in deals])
    weights = [ab.pair_weight(hands[i], hands[j], cap) for i, j in pairs]
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, raises=True)
    g = tree.game
    g.validate()
    assert (g.n_nodes - 1 - len(deals)) / len(deals) < MAX_NODES_PER_DEAL_RAISES
    points = tree.outcome_points
    seen = {}
    for d, deal in enumerate(deals):
        for _ in range(60):
            state = R.HandState(hands=(deal[:3], deal[3:]), vira=vira, score=SCORE)
            x = int(g.child[g.child_ptr[0] + d])
            history = []
            while True:
                acts = _public_actions(state, vr)
                while state.points is None and len(acts) == 1:  # forced: no node in the tree
                    history.append(acts[0][0])
                    state.apply(acts[0][1])
                    acts = _public_actions(state, vr)
                assert g.node_depth[x] == 1 + len(history)
                if g.node_type[x] == TERMINAL:
                    assert state.points == tuple(points[tree.outcome[x]])
                    break
                assert state.points is None and g.node_type[x] == DECISION
                p = state.to_move()
                assert g.node_player[x] == p
                assert g.child_ptr[x + 1] - g.child_ptr[x] == len(acts)
                i = tree.infoset_of(p, int(pairs[d, p]), history)
                assert g.node_infoset[x] == i
                assert seen.setdefault(i, (p, int(pairs[d, p]), tuple(history))) == \
                    (p, int(pairs[d, p]), tuple(history))
                k = rng.randrange(len(acts))
                history.append(acts[k][0])  # a fold ends the hand, so it never enters a key
                state.apply(acts[k][1])
                x = int(g.child[g.child_ptr[x] + k])
    assert len(set(seen.values())) == len(seen)  # one information set per (player, hand, history)
    assert {int(o) for o in tree.outcome[tree.outcome >= 0]} >= set(range(1, N_RAISE_OUTCOMES)) - {NOBODY}


@pytest.mark.parametrize("eleven,counts,digest", [
    (-1, (6520795, 156848, 317436), "5aa4b72433394563"),
    (0, (6801031, 157251, 318242), "96ef2ad43eeeaad0"),
])
def test_row11_trees_unchanged(eleven, counts, digest):
    # nodes, information sets, action slots and a digest of every array, as built before the raise
    # ladder and blind play were added (vira class 0, the real deck)
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(0))
    tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, eleven=eleven)
    g = tree.game
    assert (g.n_nodes, g.n_infosets, int(g.infoset_ptr[-1])) == counts
    assert tree_digest(tree) == digest
    with pytest.raises(ValueError, match="hand of eleven"):
        outcome_points(eleven=0, raises=True)
    with pytest.raises(ValueError, match="eleven=0"):
        build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs[:3], weights[:3], eleven=0,
                        raises=True)
