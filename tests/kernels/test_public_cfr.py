"""The public-tree (vector-form) CFR of raise subgames against the per-deal forest CFR on the same
games: the information sets and slot layout, every player's DCFR update from the same accumulators
(regrets and strategy sums equal to round-off), the exact best responses and outcome
probabilities of any profile, the fixed point of whole solves, and the grid driver's use of it.

Why updates are compared from the same accumulators rather than whole runs: regret matching is
discontinuous at zero regret, and many regrets of these trees are exactly zero in exact arithmetic
(two card orders with the same outcomes). The forest's sums, taken deal by deal, leave some of them
at 0.0 where the public tree's, taken over the opponent's range first, leave 1e-17: the next
strategies then differ at those information sets (uniform against pure), legitimately. Each update
from identical inputs must agree to round-off, and the solves must reach the same values.
"""

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.forest import build_raise_forest
from strongsolve.games.truco.stages.grid import small_deck
from strongsolve.games.truco.public_tree import build_public_raise_tree, hand_sets, item_sets
from strongsolve.games.truco.stages.groups import _solve_one, check_params
from strongsolve.games.truco.tree import N_RAISE_OUTCOMES, build_hand_tree
from strongsolve.kernels import forest_cfr as fc
from strongsolve.kernels import public_cfr as pc
from strongsolve.kernels import cfr
from strongsolve.kernels.cfr import dcfr_weights, normalise_sums, regret_matching

DECK9 = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah", "Kd", "Ks"]
DECK7 = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah"]
STRENGTHS = np.arange(13)
CASES = [(DECK9, 0, (1, 1)), (DECK9, 1, (2, 1)), (DECK9, 0, (0, 2)), (DECK7, 1, (4, 4))]


def _deal(cards, vclass):
    hands, pairs, weights = ab.deal_pairs(small_deck(cards).capacities[vclass])
    return np.array(hands), pairs, weights


def _full_slice(n_hands):
    hands, pairs, weights = ab.deal_pairs(ab.class_capacities(0))
    keep = pairs[:, 0] < n_hands
    return np.array(hands), pairs[keep], weights[keep]


def _both(deal, caps, seed, three_ties="nobody"):
    hands, pairs, weights = deal
    table = np.random.default_rng(seed).random(N_RAISE_OUTCOMES)
    forest = build_raise_forest(STRENGTHS, hands, pairs, weights, raise_caps=caps,
                                three_ties=three_ties)
    game = build_public_raise_tree(STRENGTHS, hands, pairs, weights, raise_caps=caps,
                                   three_ties=three_ties)
    forest.set_utilities(table)
    game.set_utilities(table)
    return forest, game


def _forest_update(f, regret, strat_sum, strategy, p, pos, neg, avg):
    """The forest's half iteration for player p (``forest_cfr._dcfr_loop``'s body, serial)."""
    regret_matching(regret, f.infoset_ptr, strategy)
    scratch = int(np.diff(f.deal_start).max())
    fc._update_player_serial(f.node_code, f.deal_start, f.deal_prob, f.hand_ptr, f.hand_deals,
                             f.infoset_ptr, f.infoset_local, f.group_slots, f.utility, strategy, p,
                             regret, strat_sum, scratch, pos, neg, avg)


def test_hand_sets_hold_the_hands_containing_each_multiset():
    hands = np.array(ab.multisets(small_deck(DECK9).capacities[0]))
    set_ptr, set_hand, add = hand_sets(hands, 13)
    assert set_hand[set_ptr[0]:set_ptr[1]].tolist() == list(range(len(hands)))
    # walk the multisets by adding types: each set is exactly the hands containing its multiset
    seen = {0: ()}
    frontier = [0]
    while frontier:
        s = frontier.pop()
        for t in range(13):
            c = int(add[s, t])
            held = [h for h, hand in enumerate(hands.tolist())
                    if all(hand.count(u) >= (seen[s] + (t,)).count(u) for u in range(13))]
            if c < 0:
                assert held == [] or len(seen[s]) == 3
                continue
            assert set_hand[set_ptr[c]:set_ptr[c + 1]].tolist() == held
            if c not in seen:
                seen[c] = tuple(sorted(seen[s] + (t,)))
                frontier.append(c)
    assert len(seen) == len(set_ptr) - 1


@pytest.mark.parametrize("cards,vclass,caps", CASES)
def test_public_layout_equals_the_forest(cards, vclass, caps):
    forest, game = _both(_deal(cards, vclass), caps, 0)
    assert np.array_equal(game.infoset_key, forest.infoset_key)
    assert np.array_equal(game.infoset_ptr, forest.infoset_ptr)
    assert game.raise_caps == forest.raise_caps
    assert pc.deal_node_count(game) == forest.n_nodes


def _updates_agree(reference_update, game, iterations):
    """Run ``iterations`` DCFR updates of both players with ``reference_update(regret, strat_sum,
    strategy, p, pos, neg, avg)`` and the public tree's from the same accumulators each time,
    asserting equal current strategies and regrets / strategy sums equal to 1e-12 (relative);
    returns the reference's regrets, strategy sums and the largest relative difference seen."""
    m = game.n_slots
    ra, sa, sta, stb = np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m)
    worst = 0.0
    for t in range(iterations):
        pos, neg, avg = dcfr_weights(float(t + 1), 1.5, 0.0, 2.0)
        for p in range(2):
            rb, sb = ra.copy(), sa.copy()
            reference_update(ra, sa, sta, p, pos, neg, avg)
            pc.update_player(game, rb, sb, stb, p, pos, neg, avg)
            assert np.array_equal(sta, stb)  # the same current strategy from the same regrets
            scale = max(1.0, np.abs(ra).max(), np.abs(sa).max())
            worst = max(worst, np.abs(ra - rb).max() / scale, np.abs(sa - sb).max() / scale)
            assert np.abs(ra - rb).max() <= 1e-12 * scale, (t, p)
            assert np.abs(sa - sb).max() <= 1e-12 * scale, (t, p)
    return ra, sa, worst


@pytest.mark.parametrize("cards,vclass,caps,ties", [c + ("nobody",) for c in CASES]
                         + [(DECK9, 0, (1, 1), "mano")])
def test_every_update_equals_the_forest_to_round_off(cards, vclass, caps, ties):
    forest, game = _both(_deal(cards, vclass), caps, 1, ties)
    ra, sa, worst = _updates_agree(lambda *args: _forest_update(forest, *args), game, 40)
    assert np.abs(ra).max() > 1e-3 and worst > 0.0  # the updates did something, in another order


def test_update_on_a_slice_of_the_full_deck_equals_the_forest():
    forest, game = _both(_full_slice(4), (1, 1), 2)
    assert np.array_equal(game.infoset_key, forest.infoset_key)
    m = forest.n_slots
    ra, sa, st = np.zeros(m), np.zeros(m), np.zeros(m)
    for t in range(3):
        pos, neg, avg = dcfr_weights(float(t + 1), 1.5, 0.0, 2.0)
        for p in range(2):
            rb, sb = ra.copy(), sa.copy()
            _forest_update(forest, ra, sa, st, p, pos, neg, avg)
            pc.update_player(game, rb, sb, np.zeros(m), p, pos, neg, avg)
            assert np.abs(ra - rb).max() <= 1e-12 * max(1.0, np.abs(ra).max())
            assert np.abs(sa - sb).max() <= 1e-12 * max(1.0, np.abs(sa).max())


@pytest.mark.parametrize("cards,vclass,caps", CASES)
def test_best_responses_and_outcome_probabilities_equal_the_forest(cards, vclass, caps):
    forest, game = _both(_deal(cards, vclass), caps, 4)
    rng = np.random.default_rng(7)
    strategy = np.empty(forest.n_slots)
    normalise_sums(rng.random(forest.n_slots) ** 3, forest.infoset_ptr, strategy)
    ef = fc.evaluate(forest, strategy)
    ep = pc.evaluate(game, strategy)
    for k in ("value", "br0", "br1", "nash_conv", "exploitability"):
        assert ep[k] == pytest.approx(ef[k], abs=1e-12), k
    assert np.abs(ep["outcome_probabilities"] - ef["outcome_probabilities"]).max() <= 1e-12
    assert ep["outcome_probabilities"].sum() == pytest.approx(1.0, abs=1e-12)
    assert ep["nash_conv"] > 1e-3  # a random profile is far from an equilibrium


@pytest.mark.parametrize("cards,vclass,caps", CASES[:2])
def test_solves_reach_the_same_fixed_point(cards, vclass, caps):
    forest, game = _both(_deal(cards, vclass), caps, 5)
    a = fc.solve(forest, target_nash_conv=1e-6, max_iterations=5000, check_every=10)
    b = pc.solve(game, target_nash_conv=1e-6, max_iterations=5000, check_every=10)
    assert a.nash_conv <= 1e-6 and b.nash_conv <= 1e-6
    # both values lie within NashConv of the game value
    assert b.value == pytest.approx(a.value, abs=a.nash_conv + b.nash_conv)
    # each solver's equilibrium, evaluated by the other, has the same NashConv
    assert fc.evaluate(forest, b.strategy)["nash_conv"] == pytest.approx(b.nash_conv, abs=1e-12)
    assert pc.evaluate(game, a.strategy)["nash_conv"] == pytest.approx(a.nash_conv, abs=1e-12)
    # the first iterations are equal to round-off (no zero regret has changed sign yet)
    a1 = fc.solve(forest, target_nash_conv=1e-14, max_iterations=1, check_every=1)
    b1 = pc.solve(game, target_nash_conv=1e-14, max_iterations=1, check_every=1)
    assert np.abs(a1.regret - b1.regret).max() <= 1e-14
    assert np.abs(a1.strat_sum - b1.strat_sum).max() <= 1e-12


def test_warm_start_continues_and_is_not_overwritten():
    _, game = _both(_deal(DECK9, 0), (1, 1), 6)
    a = pc.solve(game, target_nash_conv=1e-14, max_iterations=10, check_every=5)
    warm = (a.regret.copy(), a.strat_sum.copy(), a.iterations)
    b = pc.solve(game, target_nash_conv=1e-14, max_iterations=10, check_every=5, warm_start=warm)
    c = pc.solve(game, target_nash_conv=1e-14, max_iterations=20, check_every=5)
    assert b.iterations == 20
    assert np.array_equal(b.regret, c.regret) and np.array_equal(b.strat_sum, c.strat_sum)
    assert np.array_equal(warm[0], a.regret)


def test_face_down_checks():
    hands, pairs, weights = _deal(DECK9, 0)
    with pytest.raises(ValueError, match="face_down: true needs solver: public, auto or tabular"):
        check_params(dict(solver="forest", face_down=True))
    for solver in ("public", "auto", "tabular"):
        assert check_params(dict(solver=solver, face_down=True))["face_down"] is True
    with pytest.raises(ValueError, match="utility table must have 12 entries"):
        build_public_raise_tree(STRENGTHS, hands, pairs, weights).set_utilities(np.zeros(3))


def test_grid_driver_gives_the_forest_record_with_the_public_solver():
    deck = ab.deal_pairs(small_deck(DECK9).capacities[0])
    table = np.random.default_rng(8).random(N_RAISE_OUTCOMES)
    recs = {}
    for solver in ("forest", "public"):
        prm = check_params(dict(solver=solver, target_nash_conv=1e-5, max_iterations=3000,
                                check_every=10))
        recs[solver] = _solve_one((9, 10), 0, deck, table, prm, None, None, True)[2]
    f, p = recs["forest"], recs["public"]
    assert f["nash_conv"] <= 1e-5 and p["nash_conv"] <= 1e-5
    assert p["value"] == pytest.approx(f["value"], abs=2e-5)
    assert p["p_nobody"] == pytest.approx(f["p_nobody"], abs=1e-2)
    for k in ("n_nodes", "n_infosets", "raise_caps", "prune"):
        assert f[k] == p[k], k
    for k in ("infoset_ptr", "infoset_key", "hands"):
        assert np.array_equal(f["arrays"][k], p["arrays"][k]), k


@pytest.mark.parametrize("score,solver,expected", [((10, 10), "auto", "public"),
                                                   ((7, 7), "auto", "public"),
                                                   ((4, 4), "auto", "forest"),
                                                   ((1, 1), "auto", "forest"),
                                                   ((1, 1), "public", "public"),
                                                   ((10, 10), "forest", "forest")])
def test_auto_takes_the_public_tree_in_the_tiers_of_measured_memory(monkeypatch, score, solver,
                                                                     expected):
    import strongsolve.games.truco.stages.groups as solve_module

    class Built(Exception):
        pass

    def recorder(name):
        def build(*args, **kwargs):
            raise Built(name, kwargs["raise_caps"])
        return build

    monkeypatch.setattr(solve_module, "build_public_raise_tree", recorder("public"))
    monkeypatch.setattr(solve_module, "build_raise_forest", recorder("forest"))
    deck = _full_slice(3)
    assert len(deck[1]) >= solve_module.FOREST_MIN_DEALS
    table = np.zeros(N_RAISE_OUTCOMES)
    with pytest.raises(Built) as built:
        _solve_one(score, 0, deck, table, check_params(dict(solver=solver)), None, None, True)
    name, caps = built.value.args
    assert name == expected
    assert (max(caps) <= solve_module.PUBLIC_MAX_CAP) == (name == "public") or solver != "auto"


# ---------------------------------------------------------------- face-down play

# (deck, vira class, raise caps): (0, 0) is the tree without raises (no raise is ever open)
FD_CASES = [(DECK9, 0, (1, 1)), (DECK9, 1, (0, 0)), (DECK7, 1, (2, 1)), (DECK9, 0, (0, 0))]


def _both_face_down(deal, caps, seed, three_ties="nobody"):
    hands, pairs, weights = deal
    table = np.random.default_rng(seed).random(N_RAISE_OUTCOMES)
    tree = build_hand_tree(STRENGTHS, hands, pairs, weights, raises=True, raise_caps=caps,
                           three_ties=three_ties, face_down=True)
    game = build_public_raise_tree(STRENGTHS, hands, pairs, weights, raise_caps=caps,
                                   three_ties=three_ties, face_down=True)
    tree.set_utilities(table)
    game.set_utilities(table)
    return tree, game


def _tabular_update(tree, regret, strat_sum, strategy, p, pos, neg, avg):
    """The tabular solver's half iteration for player p (``cfr._dcfr_iterations``'s body)."""
    g = tree.game
    regret_matching(regret, g.infoset_ptr, strategy)
    n, m = g.n_nodes, len(regret)
    reach_other, reach_own, value = np.empty(n), np.empty(n), np.empty(n)
    regret_new, strat_new = np.zeros(m), np.zeros(m)
    cfr._reach(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child, g.child_prob,
               g.infoset_ptr, strategy, p, reach_other, reach_own)
    cfr._values_and_regrets(g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child,
                            g.child_prob, g.utility, g.infoset_ptr, strategy, p, reach_other,
                            reach_own, value, regret_new, strat_new)
    for i in np.flatnonzero(tree.infoset_key % 2 == p):
        cfr.discount_and_add(regret, strat_sum, g.infoset_ptr[i], g.infoset_ptr[i + 1], regret_new,
                             strat_new, g.infoset_ptr[i], pos, neg, avg)


def test_item_sets_hold_the_items_of_each_public_state():
    hands = np.array(ab.multisets(small_deck(DECK9).capacities[0]))
    st = item_sets(hands, 13)
    items = [(int(st["item_hand"][k]), tuple(int(t) for t in st["item_cover"][k] if t >= 0))
             for k in range(st["n_items"])]
    assert len(set(items)) == len(items) and items[:len(hands)] == [(h, ()) for h in range(len(hands))]
    # walk the sets by playing a card face up or covering one: members are the items (h, c) with k
    # covers and F + c within h
    seen = {0: ((), 0)}
    frontier = [0]
    while frontier:
        s = frontier.pop()
        f, k = seen[s]
        members = st["set_item"][st["set_ptr"][s]:st["set_ptr"][s + 1]].tolist()
        want = [i for i, (h, c) in enumerate(items) if len(c) == k and all(
            hands[h].tolist().count(u) >= (f + c).count(u) for u in range(13))]
        assert members == want, (f, k)
        assert st["set_hand"][st["set_ptr"][s]:st["set_ptr"][s + 1]].tolist() == [
            items[i][0] for i in members]
        nexts = [(int(st["add"][s, t]), (tuple(sorted(f + (t,))), k)) for t in range(13)]
        nexts.append((int(st["add_down"][s]), (f, k + 1)))
        for c, key in nexts:
            if c >= 0 and c not in seen:
                seen[c] = key
                frontier.append(c)
    assert len(seen) == len(st["set_ptr"]) - 1
    for i, (h, c) in enumerate(items):
        if c:
            assert items[st["item_parent"][i]] == (h, c[:-1]) and st["item_label"][i] == c[-1]
        for t in range(13):
            j = st["item_add"][i, t]
            assert (j >= 0) == (len(c) < 2 and hands[h].tolist().count(t) > c.count(t))
            assert j < 0 or items[j] == (h, c + (t,))


@pytest.mark.parametrize("cards,vclass,caps", FD_CASES)
def test_face_down_layout_equals_the_tabular_tree(cards, vclass, caps):
    tree, game = _both_face_down(_deal(cards, vclass), caps, 0)
    assert game.face_down
    assert np.array_equal(game.infoset_key, tree.infoset_key)
    assert np.array_equal(game.infoset_ptr, tree.game.infoset_ptr)
    assert pc.deal_node_count(game) == tree.game.n_nodes
    assert np.any(game.edge_label >= 0) and np.any(game.edge_dup)


@pytest.mark.parametrize("cards,vclass,caps,ties", [c + ("nobody",) for c in FD_CASES[:3]]
                         + [(DECK9, 0, (1, 1), "mano")])
def test_face_down_updates_equal_the_tabular_solver(cards, vclass, caps, ties):
    tree, game = _both_face_down(_deal(cards, vclass), caps, 1, ties)
    ra, sa, _ = _updates_agree(lambda *args: _tabular_update(tree, *args), game, 6)
    assert np.abs(ra).max() > 1e-3 and np.abs(sa).max() > 1e-3


@pytest.mark.parametrize("cards,vclass,caps", FD_CASES + [(None, 0, (1, 1))])
def test_face_down_best_responses_equal_the_tabular_solver(cards, vclass, caps):
    tree, game = _both_face_down(_deal(cards, vclass) if cards else _full_slice(1), caps, 4)
    strategy = np.empty(game.n_slots)
    normalise_sums(np.random.default_rng(7).random(game.n_slots) ** 3, game.infoset_ptr, strategy)
    et = cfr.evaluate(tree.game, strategy)
    ep = pc.evaluate(game, strategy)
    for k in ("value", "br0", "br1", "nash_conv"):
        assert abs(ep[k] - et[k]) <= 1e-12 * max(1.0, abs(et[k])), k
    assert ep["nash_conv"] > 1e-3  # a random profile is far from an equilibrium
    # the outcome probabilities: the tabular tree's terminal reaches summed by outcome code
    reach = cfr.reach_probabilities(tree.game, strategy)
    want = np.bincount(tree.outcome[tree.outcome >= 0], reach[tree.outcome >= 0],
                       minlength=N_RAISE_OUTCOMES)
    assert np.abs(ep["outcome_probabilities"] - want).max() <= 1e-12


def test_face_down_update_on_a_slice_of_the_full_deck_equals_the_tabular_solver():
    # 13 types: more than 16 edges at a node of trick 2 (each type face up and face down)
    tree, game = _both_face_down(_full_slice(1), (1, 1), 2)
    assert game.hand_mask.dtype == np.uint32 and np.diff(game.edge_ptr).max() > 16
    assert np.array_equal(game.infoset_key, tree.infoset_key)
    assert pc.deal_node_count(game) == tree.game.n_nodes
    m = game.n_slots
    ra, sa, st = np.zeros(m), np.zeros(m), np.zeros(m)
    for t in range(3):
        pos, neg, avg = dcfr_weights(float(t + 1), 1.5, 0.0, 2.0)
        for p in range(2):
            rb, sb = ra.copy(), sa.copy()
            _tabular_update(tree, ra, sa, st, p, pos, neg, avg)
            pc.update_player(game, rb, sb, np.zeros(m), p, pos, neg, avg)
            assert np.abs(ra - rb).max() <= 1e-12 * max(1.0, np.abs(ra).max())
            assert np.abs(sa - sb).max() <= 1e-12 * max(1.0, np.abs(sa).max())


def test_face_down_solves_agree_with_the_tabular_solver():
    tree, game = _both_face_down(_deal(DECK9, 0), (1, 1), 5)
    # a fixed number of iterations (the target is never reached): one check at the end
    a = cfr.solve(tree.game, target_nash_conv=1e-14, max_iterations=300, check_every=300)
    b = pc.solve(game, target_nash_conv=1e-14, max_iterations=300, check_every=300)
    assert a.iterations == b.iterations == 300
    assert a.nash_conv < 1e-2 and b.nash_conv < 1e-2
    # both values lie within NashConv of the game value
    assert b.value == pytest.approx(a.value, abs=a.nash_conv + b.nash_conv)
    # each solver's profile, evaluated by the other, has the same NashConv
    assert cfr.evaluate(tree.game, b.strategy)["nash_conv"] == pytest.approx(b.nash_conv, abs=1e-12)
    assert pc.evaluate(game, a.strategy)["nash_conv"] == pytest.approx(a.nash_conv, abs=1e-12)


def test_face_down_off_builds_the_public_tree_of_before():
    hands, pairs, weights = _deal(DECK9, 0)
    game = build_public_raise_tree(STRENGTHS, hands, pairs, weights, raise_caps=(1, 1))
    assert not game.face_down and game.hand_mask.dtype == np.uint16
    assert not np.any(game.edge_label >= 0) and not np.any(game.edge_dup)
    assert np.array_equal(game.set_item, game.set_hand)


def test_grid_driver_solves_face_down_on_the_public_tree_as_the_tabular_solver():
    deck = ab.deal_pairs(small_deck(DECK9).capacities[0])
    table = np.random.default_rng(8).random(N_RAISE_OUTCOMES)
    recs = {}
    for solver in ("tabular", "public"):
        prm = check_params(dict(solver=solver, target_nash_conv=1e-5, max_iterations=3000,
                                check_every=10, face_down=True))
        recs[solver] = _solve_one((9, 10), 0, deck, table, prm, None, None, True)[2]
    t, p = recs["tabular"], recs["public"]
    assert t["nash_conv"] <= 1e-5 and p["nash_conv"] <= 1e-5
    assert p["value"] == pytest.approx(t["value"], abs=2e-5)
    assert p["face_down"] is True and t["face_down"] is True
    for k in ("n_nodes", "n_infosets", "raise_caps", "prune"):
        assert t[k] == p[k], k
    for k in ("infoset_ptr", "infoset_key", "hands"):
        assert np.array_equal(t["arrays"][k], p["arrays"][k]), k
    # no off-path refinement on the public face-down tree: the policy is the average strategy
    assert p["off_path_sets"] == 0 and not p["arrays"]["off_path"].any()
    assert p["off_path_nash_conv"] == p["nash_conv"]


@pytest.mark.parametrize("score,solver,expected", [((10, 10), "auto", "public"),
                                                   ((1, 1), "auto", "tabular"),
                                                   ((1, 1), "public", "public")])
def test_face_down_raise_subgames_take_the_public_tree(monkeypatch, score, solver, expected):
    import strongsolve.games.truco.stages.groups as solve_module

    class Built(Exception):
        pass

    def recorder(name):
        def build(*args, **kwargs):
            raise Built(name, kwargs.get("face_down"))
        return build

    monkeypatch.setattr(solve_module, "build_public_raise_tree", recorder("public"))
    monkeypatch.setattr(solve_module, "build_raise_forest", recorder("forest"))
    monkeypatch.setattr(solve_module, "build_hand_tree", recorder("tabular"))
    deck = _full_slice(3)
    with pytest.raises(Built) as built:
        _solve_one(score, 0, deck, np.zeros(N_RAISE_OUTCOMES),
                   check_params(dict(solver=solver, face_down=True)), None, None, True)
    assert built.value.args == (expected, True)
