"""Trees kept on disk for the subgames of a tier that share them (games/truco/tree_cache.py): read
back equal to a fresh build, built once per set of arguments, a damaged file built again, and a
group solved with them bit for bit what it is without."""

import numpy as np
import pytest

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.forest import build_raise_forest
from strongsolve.games.truco.public_tree import build_public_raise_tree
from strongsolve.games.truco.stages.grid import deck_root, small_deck, solve_tier, successors
from strongsolve.games.truco.stages.groups import check_params, solve_scores
from strongsolve.games.truco.tree_cache import cached_build, tree_key
from strongsolve.games.truco.rules import N_STRENGTHS

DECK = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah"]


def class_args(c=0):
    deck = small_deck(DECK)
    hands, pairs, weights = ab.deal_pairs(deck.capacities[c])
    return (np.arange(N_STRENGTHS), np.array(hands), pairs, weights)


def assert_same_tree(a, b):
    va, vb = vars(a), vars(b)
    assert va.keys() == vb.keys()
    for k in va:
        if isinstance(va[k], np.ndarray):
            assert va[k].dtype == vb[k].dtype and np.array_equal(va[k], vb[k]), k
        else:
            assert va[k] == vb[k], k


def counting(builder):
    calls = []

    def build(*args, **kwargs):
        calls.append(1)
        return builder(*args, **kwargs)
    return build, calls


@pytest.mark.parametrize("builder", [build_public_raise_tree, build_raise_forest])
def test_a_kept_tree_is_built_once_and_read_back_equal(tmp_path, builder):
    build, calls = counting(builder)
    args = class_args()
    first = cached_build(tmp_path, build, *args, three_ties="nobody", raise_caps=(1, 3))
    again = cached_build(tmp_path, build, *args, three_ties="nobody", raise_caps=(1, 3))
    assert len(calls) == 1 and len(list(tmp_path.iterdir())) == 1
    assert_same_tree(again, builder(*args, three_ties="nobody", raise_caps=(1, 3)))
    assert_same_tree(first, again)
    assert first is not again
    # other arguments: another tree, kept beside the first
    cached_build(tmp_path, build, *args, three_ties="nobody", raise_caps=(3, 1))
    cached_build(tmp_path, build, *class_args(1), three_ties="nobody", raise_caps=(1, 3))
    assert len(calls) == 3 and len(list(tmp_path.iterdir())) == 3
    # no folder: built every time, nothing kept
    cached_build(None, build, *args, three_ties="nobody", raise_caps=(1, 3))
    assert len(calls) == 4


def test_the_key_follows_every_argument():
    args = class_args()
    key = tree_key(build_public_raise_tree, args, dict(raise_caps=(1, 3)))
    assert key == tree_key(build_public_raise_tree, tuple(np.copy(a) for a in args),
                           dict(raise_caps=(1, 3)))
    weights = args[3].copy()
    weights[0] += 1
    others = [tree_key(build_public_raise_tree, args, dict(raise_caps=(1, 2))),
              tree_key(build_public_raise_tree, args, dict(raise_caps=(1, 3), face_down=True)),
              tree_key(build_public_raise_tree, args[:3] + (weights,), dict(raise_caps=(1, 3))),
              tree_key(build_public_raise_tree, (args[0].astype(np.int32),) + args[1:],
                       dict(raise_caps=(1, 3))),
              tree_key(build_raise_forest, args, dict(raise_caps=(1, 3)))]
    assert len({key, *others}) == 6


@pytest.mark.parametrize("damage", ["flip", "cut", "empty"])
def test_a_damaged_kept_tree_is_named_and_built_again(tmp_path, capsys, damage):
    build, calls = counting(build_public_raise_tree)
    args = class_args()
    cached_build(tmp_path, build, *args, raise_caps=(1, 3))
    (path,) = tmp_path.iterdir()
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x10
    elif damage == "cut":
        data = data[:len(data) // 3]
    else:
        data = b""
    path.write_bytes(bytes(data))
    tree = cached_build(tmp_path, build, *args, raise_caps=(1, 3))
    assert len(calls) == 2
    assert f"ignoring the damaged kept tree {path}" in capsys.readouterr().err
    assert_same_tree(tree, build_public_raise_tree(*args, raise_caps=(1, 3)))
    cached_build(tmp_path, build, *args, raise_caps=(1, 3))  # the rebuilt file is whole
    assert len(calls) == 2 and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_group_solved_with_kept_trees_is_the_same_bit_for_bit(tmp_path):
    """The group 9-10 / 10-9 of the small deck on the public-tree solver: with the trees kept, each
    class's public tree and refinement forest are built once for both scores and every fixed-point
    round, and every record and array equals the solve that builds its own."""
    deck = small_deck(DECK)
    decks = {c: ab.deal_pairs(deck.capacities[c]) for c in deck.classes}
    group = [(9, 10), (10, 9)]
    W = {t: 0.5 + 0.01 * (t[0] - t[1]) for s in group for t in successors(*s) if t not in group}
    prm = check_params(dict(target_nash_conv=1e-4, check_every=10, max_iterations=10**6,
                            fixed_point_tol=1e-6, max_fixed_point_rounds=30, solver="public"))
    quiet = lambda m: None
    lines = []
    kept, _ = solve_scores(group, W, decks, deck.probabilities, prm, lines.append, "g",
                           tree_dir=tmp_path / "trees")
    own, _ = solve_scores(group, W, decks, deck.probabilities, prm, quiet, "g")
    assert own.keys() == kept.keys() and len(own) == 2 * len(deck.classes)
    for k in own:
        for field in ("value", "nash_conv", "iterations", "p_nobody", "utility", "off_path_sets"):
            assert kept[k][field] == own[k][field], (k, field)
        for name, arr in own[k]["arrays"].items():
            assert np.array_equal(kept[k]["arrays"][name], arr), (k, name)
    assert len({m.split(" round ")[1].split()[0] for m in lines}) >= 2  # rounds shared the trees
    names = sorted(p.name.split("-")[0] for p in (tmp_path / "trees").iterdir())
    assert names == sorted(["build_public_raise_tree", "build_raise_forest"] * len(deck.classes))


def test_a_tier_removes_its_kept_trees(tmp_path):
    """The kept trees live for one tier job: none is left beside the stored subgames, those a
    killed job left included (they may be of another version of the builders)."""
    deck = small_deck(DECK)
    prm = dict(target_nash_conv=1e-3, check_every=10, max_iterations=10**6, fixed_point_tol=1e-5,
               max_fixed_point_rounds=30, solver="public")
    quiet = lambda m: None
    solve_tier("row11", tmp_path, dict(prm, solver="auto"), deck, min_score=10, log=quiet)
    grid = deck_root(tmp_path, deck) / "truco" / "grid"
    stale = grid / ".trees" / "build_public_raise_tree-0.pickle"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"left by a killed job")
    rows = solve_tier("t1", tmp_path, prm, deck, min_score=10, log=quiet)
    assert len(rows) == len(deck.classes) and not (grid / ".trees").exists()
