"""``strongsolve shutbox advise``: every choice after a roll, valued from a solution
saved with ``--policy --output``, against the exact references of naive/shutbox.py."""

import json
from itertools import combinations

import pytest

from naive import shutbox as naive
from strongsolve.cli import main


def saved(tmp_path, capsys, *options):
    path = tmp_path / "solution.json"
    assert main(["shutbox", *options, "--policy", "--output", str(path)]) == 0
    capsys.readouterr()
    return path


def advise(capsys, path, open_cards, roll):
    assert main(["shutbox", "advise", str(path), "--open", open_cards, "--roll", roll,
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)["choices"]


def test_flip_one_every_position_and_roll(tmp_path, capsys):
    n, f = 4, 2
    path = saved(tmp_path, capsys, "--cards", str(n), "--faces", str(f))
    ref = naive.flip_one_exact(n, f)  # {mask of set cards: expected rolls}
    goal = (1 << n) - 1
    for mask in range(goal):
        open_cards = " ".join(str(c) for c in range(1, n + 1) if not mask >> (c - 1) & 1)
        for x in range(1, f + 1):
            for y in range(x, f + 1):
                choices = advise(capsys, path, open_cards, f"{x},{y}")
                options = naive.flip_one_options(mask, x, y, n)
                assert len(choices) == len(options)
                for c in choices:
                    nxt = mask if c["flip"] is None else mask ^ (1 << (c["flip"] - 1))
                    assert nxt in options
                    assert c["value"] == pytest.approx(float(ref[nxt]), rel=1e-12)
                best = [c for c in choices if c["best"]]
                assert len(best) == 1
                assert best[0]["value"] == pytest.approx(float(min(ref[o] for o in options)),
                                                         rel=1e-12)


@pytest.mark.parametrize("objective", ["max-shut", "min-sum"])
def test_standard_choices_and_the_start_value(tmp_path, capsys, objective):
    # the best choice per total, weighted by the totals' probabilities, is the exact start value
    n, f = 6, 4
    path = saved(tmp_path, capsys, "--cards", str(n), "--faces", str(f), "--rule", "standard",
                 "--objective", objective)
    tiles = list(range(1, n + 1))
    total = 0.0
    for x in range(1, f + 1):
        for y in range(1, f + 1):
            choices = advise(capsys, path, " ".join(map(str, tiles)), f"{x},{y}")
            subsets = [list(c) for k in range(1, n + 1) for c in combinations(tiles, k)
                       if sum(c) == x + y]
            assert sorted(c["shut"] for c in choices) == sorted(subsets or [[]])
            total += [c["value"] for c in choices if c["best"]][0] / f ** 2
    assert total == pytest.approx(float(naive.standard_value(n, f, objective)), rel=1e-12)


def test_game_end_one_die_and_errors(tmp_path, capsys):
    path = saved(tmp_path, capsys, "--cards", "6", "--faces", "6", "--rule", "standard",
                 "--objective", "min-sum", "--one-die")
    # open 2 and 4 (sum 6): one die; a 5 shuts nothing, the game ends with 6 points open
    assert advise(capsys, path, "2 4", "5") == [{"shut": [], "open_after": [2, 4], "value": 6.0,
                                                 "best": True}]
    assert main(["shutbox", "advise", str(path), "--open", "2 4", "--roll", "2,3"]) == 2
    assert "this position rolls 1 die, got the roll 2,3" in capsys.readouterr().err
    assert main(["shutbox", "advise", str(path), "--open", "2 9", "--roll", "5"]) == 2
    assert "card 9 is outside 1..6" in capsys.readouterr().err
    bare = tmp_path / "bare.json"
    assert main(["shutbox", "--cards", "3", "--output", str(bare)]) == 0
    capsys.readouterr()
    assert main(["shutbox", "advise", str(bare), "--open", "1", "--roll", "1,2"]) == 2
    err = capsys.readouterr().err
    assert "not a Shut the Box solution with its values" in err and "--policy --output" in err
