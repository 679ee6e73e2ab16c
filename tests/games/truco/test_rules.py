"""Truco rules engine and lossless abstraction against the plain reference in tests/naive/truco.py.

Rules: pagat.com "Brazilian Truco" (https://www.pagat.com/put/truco_br.html) and the issue's
heads-up reading; see src/strongsolve/games/truco/rules.py.
"""

import random
from itertools import combinations, product
from math import comb

import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.tree import _hand_winner

from naive import truco as naive


def test_strength_order_matches_reference_for_every_vira():
    for vira_rank in range(R.N_RANKS):
        vira = R.card_text(vira_rank * 4)
        for a, b in product(range(R.N_CARDS), repeat=2):
            sa, sb = R.strength(a, vira_rank), R.strength(b, vira_rank)
            want = naive.truco_beats(R.card_text(a), R.card_text(b), vira)
            assert (sa > sb) - (sa < sb) == want


def test_manilhas_and_named_cards():
    # vira 7: the manilhas are the queens, zap (Qc) > copas > espadas > ouros (pagat)
    v = R.parse_card("7c") // 4
    assert [R.strength(R.parse_card(c), v) for c in ("Qd", "Qs", "Qh", "Qc")] == [9, 10, 11, 12]
    assert R.strength(R.parse_card("3d"), v) == 8 and R.strength(R.parse_card("4c"), v) == 0
    # vira 3: the fours become manilhas
    assert R.strength(R.parse_card("4c"), R.parse_card("3h") // 4) == 12


@pytest.mark.parametrize("three_ties", ["nobody", "mano"])
def test_hand_winner_matches_reference(three_ties):
    for n in (1, 2, 3):
        for res in product((R.MANO, R.PE, R.TIE), repeat=n):
            if n == 3 and R.hand_winner(res[:2], three_ties) is not None:
                continue  # the hand ended after two tricks
            want = naive.truco_hand_result(["t" if r == R.TIE else r for r in res], three_ties)
            got = R.hand_winner(res, three_ties)
            assert got == want
            fast = _hand_winner(*(list(res) + [0] * (3 - n)), n, three_ties == "mano")
            assert fast == (-2 if want is None else want)


@pytest.mark.parametrize("score", [(0, 0), (7, 9), (11, 4), (4, 11), (11, 11), (10, 10)])
def test_random_playouts_match_reference(score):
    rng = random.Random(1000 + 31 * score[0] + score[1])
    for _ in range(150):
        cards = rng.sample(range(R.N_CARDS), 7)
        hands = (tuple(cards[:3]), tuple(cards[3:6]))
        state = R.HandState(hands=hands, vira=cards[6], score=score)
        txt = [[R.card_text(c) for c in h] for h in hands]
        actions = []
        while True:
            ref = naive.truco_replay(txt, R.card_text(cards[6]), score, actions)
            if ref[0] == "end":
                assert state.points == ref[1]
                break
            legal = state.legal_actions()
            assert state.to_move() == ref[1]
            as_text = [f"play:{R.card_text(int(a[5:]))}" if a.startswith("play:") else a for a in legal]
            assert sorted(as_text) == sorted(ref[2])
            k = rng.randrange(len(legal))
            state.apply(legal[k])
            actions.append(as_text[k])


def test_raise_ladder_and_fold_points():
    hands = (tuple(map(R.parse_card, ["4d", "5d", "6d"])), tuple(map(R.parse_card, ["4s", "5s", "6s"])))
    s = R.HandState(hands=hands, vira=R.parse_card("Kc"))
    for act in ["raise", "raise", "raise"]:  # truco, six (accepting 3), nine (accepting 6)
        s.apply(act)
    assert s.level == 2 and s.pending == R.PE and "raise" in s.legal_actions()
    s.apply("fold")  # pé folds the nine: mano scores 6
    assert s.points == (6, 0)


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="bad card"):
        R.parse_card("9c")
    with pytest.raises(ValueError, match="3 distinct"):
        R.parse_hand("Ac Ac 3h")
    with pytest.raises(ValueError, match="bad score"):
        R.HandState(hands=((0, 1, 2), (3, 4, 5)), vira=6, score=(12, 0))
    with pytest.raises(ValueError, match="bad vira class"):
        ab.class_capacities(9)


def test_abstraction_counts_and_weights():
    rows = ab.abstraction_sizes()
    assert len(rows) == ab.N_VIRA_CLASSES
    for r in rows:
        assert r["physical_hands"] == comb(39, 3) == 9139
        assert r["physical_deals"] == comb(39, 3) * comb(36, 3) == 9139 * 7140
        assert r["abstract_hands"] == 403 and r["abstract_pairs"] == 140118
    assert ab.vira_class(8) == ab.vira_class(9) == 8  # vira 2 and vira 3 share a structure
    assert ab.vira_class_probabilities().sum() == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("vira_text", ["3h", "2d", "7c"])
def test_abstract_weights_by_physical_enumeration(vira_text):
    vira = R.parse_card(vira_text)
    vr = vira // 4
    cap = ab.class_capacities(ab.vira_class(vr))
    deck = [c for c in range(R.N_CARDS) if c != vira]
    hand_count = {}
    for h in combinations(deck, 3):
        k = ab.abstract_hand(h, vr)
        hand_count[k] = hand_count.get(k, 0) + 1
    hands = ab.multisets(cap)
    assert sorted(hand_count) == sorted(hands)
    assert all(hand_count[h] == ab.hand_weight(h, cap) for h in hands)
    # deal pairs: for a sample of mano hands, enumerate pé's hands from the 36 cards left
    reps = {}
    for h in combinations(deck, 3):
        reps.setdefault(ab.abstract_hand(h, vr), h)
    rng = random.Random(7)
    for h0 in rng.sample(hands, 25):
        rest = [c for c in deck if c not in reps[h0]]
        counts = {}
        for h1 in combinations(rest, 3):
            k = ab.abstract_hand(h1, vr)
            counts[k] = counts.get(k, 0) + 1
        for h1 in hands:
            assert counts.get(h1, 0) * hand_count[h0] == ab.pair_weight(h0, h1, cap)
