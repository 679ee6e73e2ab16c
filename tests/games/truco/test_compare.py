"""``strongsolve truco compare``: the share of real play where two solved subgames'
policies differ, checked against the plain walk of tests/naive/truco.py on a 7-card deck whose region
min(a, b) >= 9 (the 11 row and the {1, 3} tier) is solved here.

The deck: 4d 4s 4h 5d 5s 6d 6s. Vira 4x (class 0, 3 of 7): the 5s are manilhas; vira 5x (class 1,
2 of 7): the 6s are; vira 6x (class 2, 2 of 7): no manilha, the 7s being out of the deck. So some
hands of one class cannot be dealt under another (not comparable) and some can.
"""

import json
import shutil

import numpy as np
import pytest

from strongsolve.cli import main
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.compare import (compare, compare_neighbours, compare_plays, load_play,
                                             neighbour_pairs, neighbour_summary)
from strongsolve.games.truco.stages.grid import (deck_root, full_deck, grid_path, small_deck,
                                                 solve_tier, stored_path, stored_subgames)
from strongsolve.games.truco.saved import read_subgame, write_subgame
from strongsolve.games.truco.subgames import in_row11
from strongsolve.games.truco.tree import HandTree

from naive import truco as naive

CARDS = ["4d", "4s", "4h", "5d", "5s", "6d", "6s"]
VIRAS = {0: "4d", 1: "5d", 2: "6d"}  # a vira of each class (any vira of a class deals the same)
PARAMS = dict(target_nash_conv=1e-3, check_every=10)  # any profile will do: compare reads the stored one


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    results = tmp_path_factory.mktemp("compare") / "results"
    deck = small_deck(CARDS)
    for tier in ("row11", "t1"):
        solve_tier(tier, results, PARAMS, deck, min_score=9, log=lambda m: None)
    return results, deck


def test_deck_classes_are_the_viras_named():
    deck = small_deck(CARDS)
    assert np.allclose(deck.probabilities, [3 / 7, 2 / 7, 2 / 7])
    for c, vira in VIRAS.items():
        strengths = sorted(naive.truco_strength(x, vira) for x in CARDS if x != vira)
        assert strengths == sorted(t for t in range(R.N_STRENGTHS) for _ in range(deck.capacities[c][t]))


def _policy(results, deck, a, b, c):
    """policy(player, hand, history) of the stored subgame, for the plain walk."""
    attrs, data = read_subgame(stored_path(deck_root(results, deck), a, b, c))
    tree = HandTree(game=None, outcome=None, infoset_key=data["infoset_key"], hands=data["hands"],
                    n_types=R.N_STRENGTHS, eleven=attrs["eleven"], raises=not in_row11(a, b))
    hands = [tuple(int(t) for t in h) for h in data["hands"]]
    ptr = data["infoset_ptr"]

    def policy(player, hand, history):
        if hand not in hands:
            return None
        try:
            i = tree.infoset_of(player, hands.index(hand), None if history is None else list(history))
        except KeyError:
            return None
        return [float(p) for p in data["policy"][ptr[i]:ptr[i + 1]]]

    return policy


def _reference(results, deck, x, y, threshold):
    walk = lambda s: naive.truco_reach_by_infoset(CARDS, VIRAS[s[2]], s[:2],
                                                  _policy(results, deck, *s))
    rx, ry = walk(x), walk(y)
    return naive.truco_compare_shares(rx, ry, threshold), naive.truco_compare_shares(ry, rx, threshold)


def _buckets(w):
    out = {"all": w}
    out.update({("cards", d["cards"]): d for d in w["by_cards_played"]})
    out.update({("kind", d["kind"]): d for d in w["by_kind"]})
    return out


PAIRS = [((10, 10, 0), (10, 10, 1)),  # neighbouring viras, raise tier {1, 3}
         ((10, 10, 1), (10, 10, 2)),
         ((9, 10, 1), (10, 10, 1)),  # neighbouring scores of one tier
         ((11, 10, 0), (10, 10, 0)),  # a hand of eleven against a hand with raises
         ((11, 9, 2), (11, 10, 2)),  # the 11 row
         ((10, 11, 1), (11, 11, 1)),
         ((11, 10, 2), (11, 10, 1))]


@pytest.mark.parametrize("x,y", PAIRS)
def test_shares_equal_the_plain_walk(solved, x, y):
    results, deck = solved
    out = compare(results, deck, x, y, threshold=0.1)
    ref_first, ref_second = _reference(results, deck, x, y, 0.1)
    for w, ref in ((out["weights"]["first"], ref_first), (out["weights"]["second"], ref_second)):
        got = _buckets(w)
        assert set(got) == set(ref)
        for b, (play, differ, of_all, tv, nc) in ref.items():
            d = got[b]
            assert d["share_of_play"] == pytest.approx(play, abs=1e-9), b
            assert d["differ_share"] == pytest.approx(differ, abs=1e-9), b
            assert d["differ_share_of_all"] == pytest.approx(of_all, abs=1e-9), b
            assert d["not_comparable_share"] == pytest.approx(nc, abs=1e-9), b
            assert (d["mean_tv"] is None) == (tv is None)
            if tv is not None:
                assert d["mean_tv"] == pytest.approx(tv, abs=1e-9), b
    # the decisions per hand are the walk's total reach
    walk = naive.truco_reach_by_infoset(CARDS, VIRAS[x[2]], x[:2], _policy(results, deck, *x))
    assert out["weights"]["first"]["decisions_per_hand"] == pytest.approx(
        sum(r["reach"] for r in walk.values()), abs=1e-9)


def test_some_pairs_differ_and_some_hands_are_not_comparable(solved):
    # guards the reference test above against a vacuous pass: its pairs do exercise both
    results, deck = solved
    w = compare(results, deck, (10, 10, 0), (10, 10, 1))["weights"]["first"]
    assert w["differ_share"] > 0.01 and w["not_comparable_share"] > 0.01
    assert {d["kind"] for d in w["by_kind"]} >= {"card_or_raise", "answer"}
    kinds = compare(results, deck, (11, 10, 0), (10, 10, 0))["weights"]["first"]["by_kind"]
    assert [d["kind"] for d in kinds if d["kind"] == "eleven"] == ["eleven"]


@pytest.mark.parametrize("s", [(10, 10, 0), (11, 9, 2), (11, 11, 1)])
def test_a_subgame_against_itself_differs_nowhere(solved, s):
    results, deck = solved
    out = compare(results, deck, s, s, threshold=0.0)
    for w in out["weights"].values():
        assert w["differ_share"] == 0 and w["mean_tv"] == 0 and w["not_comparable_share"] == 0
        assert all(d["differ_share"] == 0 for d in w["by_cards_played"] + w["by_kind"])
        assert sum(d["share_of_play"] for d in w["by_cards_played"]) == pytest.approx(1.0, abs=1e-12)


def test_neighbours_are_every_adjacent_pair_each_compared_as_alone(solved):
    results, deck = solved
    solved_set = stored_subgames(deck_root(results, deck))
    assert len(solved_set) == 9 * 3  # scores 9..11 x 9..11, three classes
    rows = compare_neighbours(results, deck, 0.1)
    # per score 2 vira pairs (9 scores); per class 12 score pairs on the 3 x 3 square
    assert sorted(r["pair"] for r in rows) == ["score"] * 36 + ["vira"] * 18
    assert len(neighbour_pairs(solved_set)) == 54
    row = next(r for r in rows if r["first"]["score"] == [9, 10] and r["second"]["score"] == [10, 10]
               and r["first"]["vira_class"] == 1)
    alone = compare(results, deck, (9, 10, 1), (10, 10, 1), 0.1)
    assert row["weights"] == alone["weights"]
    summary = neighbour_summary(rows)
    vira = [r["weights"][w]["differ_share"] for r in rows if r["pair"] == "vira" for w in ("first", "second")]
    assert summary["vira"]["differ_share"] == pytest.approx(sum(vira) / len(vira), abs=1e-12)
    for m in summary.values():  # buckets partition each pair's play, so their means add up
        for group in ("by_cards_played", "by_kind"):
            assert sum(b["share_of_play"] for b in m[group]) == pytest.approx(1.0, abs=1e-12)
            assert sum(b["differ_share_of_all"] for b in m[group]) == pytest.approx(
                m["differ_share"], abs=1e-12)
    assert [b["kind"] for b in summary["score"]["by_kind"]] == ["card", "card_or_raise", "answer",
                                                                  "eleven"]
    by = {(tuple(b["first"]), tuple(b["second"])): b for b in summary["score"]["by_scores"]}
    assert len(by) == 12 and all(b["pairs"] == 3 for b in by.values())
    one = [compare(results, deck, (9, 10, c), (10, 10, c))["weights"] for c in range(3)]
    want = [w[k]["differ_share"] for w in one for k in ("first", "second")]
    assert by[(9, 10), (10, 10)]["differ_share"] == pytest.approx(sum(want) / 6, abs=1e-12)
    assert by[(9, 10), (10, 10)]["max_differ_share"] == max(want)


def test_errors_name_the_problem_and_the_fix(solved, tmp_path):
    results, deck = solved
    with pytest.raises(FileNotFoundError, match=r"8-10 .*class 0.*not solved.*min_score: 8\}, deck: \[4d"):
        compare(results, deck, (8, 10, 0), (10, 10, 0))
    with pytest.raises(FileNotFoundError, match=r"solve_row11: true"):
        load_play(tmp_path, full_deck(), 11, 10, 0)
    with pytest.raises(ValueError, match="bad vira class 3: the deck_4d4s4h5d5s6d6s deck has classes 0..2"):
        compare(results, deck, (10, 10, 3), (10, 10, 0))
    with pytest.raises(ValueError, match="bad score 12-3"):
        compare(results, deck, (12, 3, 0), (10, 10, 0))
    with pytest.raises(ValueError, match="bad threshold 1.5"):
        compare(results, deck, (10, 10, 0), (10, 10, 1), threshold=1.5)
    with pytest.raises(FileNotFoundError, match=r"no two neighbouring subgames.*min_score: 10"):
        compare_neighbours(tmp_path, deck)
    # a subgame stored where another deck's belongs
    src = grid_path(deck_root(results, deck), 10, 10, 0)
    shutil.copytree(src, grid_path(tmp_path, 10, 10, 0))
    with pytest.raises(ValueError, match="is a subgame of the deck deck_4d4s4h5d5s6d6s, not of the full"):
        load_play(tmp_path, full_deck(), 10, 10, 0)
    # two subgames of different decks
    other = small_deck(["4d", "4s", "4h", "5d", "5s", "6d", "6h"])
    solve_tier("row11", tmp_path, PARAMS, other, min_score=11, log=lambda m: None)
    with pytest.raises(ValueError, match="subgames of different decks"):
        compare_plays(load_play(results, deck, 11, 11, 0), load_play(tmp_path, other, 11, 11, 0))
    # a stored tree that is not the one its score and class build (raise caps edited)
    attrs, data = read_subgame(src)
    bad = tmp_path / "bad"
    write_subgame(grid_path(deck_root(bad, deck), 10, 10, 0), data, dict(attrs, raise_caps=[2, 2]))
    with pytest.raises(ValueError, match=r"does not match the stored one.*solve it again with: snakemake"):
        load_play(bad, deck, 10, 10, 0)


def test_command_line(solved, capsys):
    results, deck = solved
    base = ["truco", "compare", "--deck", " ".join(CARDS), "--results", str(results)]
    assert main(base + ["10-10:0", "10-10:1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"] == compare(results, deck, (10, 10, 0), (10, 10, 1))["weights"]
    assert main(base + ["11-9:2", "11-10:2", "--threshold", "0.05"]) == 0
    text = capsys.readouterr().out
    assert "whole hand" in text and "eleven" in text and "0 cards played" in text
    assert main(base + ["--neighbours"]) == 0
    text = capsys.readouterr().out
    assert "vira neighbours: 18 pairs" in text and "score neighbours: 36 pairs" in text
    assert main(base + ["8-9:0", "9-9:0"]) == 2
    assert "solve it with: snakemake" in capsys.readouterr().err
    assert main(base + ["9-9"]) == 2
    assert "give two subgames" in capsys.readouterr().err
    assert main(base + ["9-9", "9-10:0"]) == 2
    assert "bad subgame '9-9'" in capsys.readouterr().err
