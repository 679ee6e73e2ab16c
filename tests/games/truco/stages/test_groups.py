"""The 11-row driver, store and CLI, end to end on a tiny deck per vira class.

Each class keeps its structure in miniature (the vira's three remaining cards, two cards of another
common rank, the ouros and paus manilhas: 7 cards, 140 deals), so the groups 11, 10, 9, 8 solve in
seconds. Values are checked against the plain sequence-form LP of tests/naive/truco.py on the physical
cards, with the utilities the driver derived from the stored continuation values.
"""

import hashlib
import json
import shutil
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import yaml

from strongsolve import cli
from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco import rules as R
from strongsolve.games.truco.stages.groups import (DEFAULTS, play_probabilities, solve_group,
                                                   summary_rows)
from strongsolve.games.truco.saved import list_solved, read_subgame, subgame_path
from strongsolve.games.truco.tree import FOLD, MANO_WINS, NOBODY, PE_WINS

from naive import truco as naive
from support.truco import tiny_cards, tiny_capacities

GROUPS = (11, 10, 9, 8)
SCHEMA = Path(__file__).resolve().parents[4] / "workflow" / "schemas" / "truco.schema.yaml"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("truco_results")
    # two worker processes: one score per worker (8-11 / 11-8) and one score's classes split in two
    # (11-11)
    for x in GROUPS:
        solve_group(x, root, dict(target_nash_conv=1e-6, fixed_point_tol=1e-7,
                                  workers=1 + (x in (8, 11))),
                    log=lambda m: None, capacities=tiny_capacities)
    return root


def W(results, a, b):
    p = ab.vira_class_probabilities()
    return sum(p[c] * read_subgame(subgame_path(results, a, b, c), arrays=False)[0]["value"]
               for c in range(ab.N_VIRA_CLASSES))


def test_every_subgame_stored_and_converged(results):
    rows = list_solved(results)
    assert len(rows) == 9 * (1 + 2 * (len(GROUPS) - 1))
    for r in rows:
        assert r["nash_conv"] <= 1e-6 and r["fixed_point_residual"] <= 1e-7
        assert r["iterations"] >= 1 and r["seconds"] > 0


def test_utilities_chain_through_the_row(results):
    w1111 = W(results, 11, 11)
    w1110, w1011 = W(results, 11, 10), W(results, 10, 11)
    u = lambda a, b, c: read_subgame(subgame_path(results, a, b, c), arrays=False)[0]["utility"]
    # a group's own W is consistent up to the larger of the fixed-point tolerance and the NashConv
    # target (solve_scores), other groups' W exactly
    assert u(11, 11, 4)[NOBODY] == pytest.approx(1 - w1111, abs=1e-6)
    assert u(11, 10, 0)[FOLD] == pytest.approx(1 - w1111, abs=1e-12)  # 11-11, roles swapped
    assert u(11, 10, 0)[NOBODY] == pytest.approx(1 - w1011, abs=1e-6)
    assert u(10, 11, 2)[NOBODY] == pytest.approx(1 - w1110, abs=1e-6)
    assert u(11, 8, 1)[PE_WINS] == pytest.approx(1 - w1111, abs=1e-12)  # 8 + 3 = 11
    assert u(9, 11, 6)[MANO_WINS] == 1.0 and u(9, 11, 6)[PE_WINS] == 0.0  # 9 + 3 = 12 wins
    assert u(11, 9, 6)[FOLD] == pytest.approx(1 - W(results, 10, 11), abs=1e-12)


@pytest.mark.parametrize("a,b,c", [(11, 11, 0), (11, 11, 7), (11, 10, 2), (10, 11, 5), (8, 11, 8)])
def test_values_match_lp_on_physical_cards(results, a, b, c):
    attrs, _ = read_subgame(subgame_path(results, a, b, c), arrays=False)
    table = attrs["utility"]
    e = attrs["eleven"]
    value = 1 if e < 0 else R.MAO_DE_ONZE_VALUE
    fold = (0, 1) if e == 0 else (1, 0)
    utility = {(value, 0): table[MANO_WINS], (0, value): table[PE_WINS], (0, 0): table[NOBODY]}
    if e >= 0:
        utility[fold] = table[FOLD]
    vira, cards = tiny_cards(c)
    tree = naive.truco_hand_tree([R.card_text(x) for x in cards], R.card_text(vira), (a, b), utility)
    assert attrs["value"] == pytest.approx(naive.truco_lp_value(tree), abs=1e-6)


def test_play_rates_are_probabilities(results):
    rows = summary_rows(results)
    elevens = [r for r in rows if r["eleven"] >= 0]
    assert len(elevens) == 9 * 2 * (len(GROUPS) - 1)
    assert all(0.0 <= r["play_rate"] <= 1.0 for r in elevens)


def run_cli(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_policy_vira_2_and_3_share_a_solution(results, capsys):
    # vira 2 and vira 3 are both class 8; "2s 7h 3c" under vira 2d and "3s Qh 4c" under vira 3d are
    # the same abstract hand (classes 3, 8, 12)
    outs = []
    for vira, hand in (("2d", "2s 7h 3c"), ("3d", "3s Qh 4c")):
        code, out, err = run_cli(["truco", "policy", "--score", "11-11", "--dealer", "1", "--vira", vira,
                                  "--hand", hand, "--results", str(results), "--json"], capsys)
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0]["vira_class"] == outs[1]["vira_class"] == 8
    assert [a["probability"] for a in outs[0]["actions"]] == [a["probability"] for a in outs[1]["actions"]]
    assert sum(a["probability"] for a in outs[0]["actions"]) == pytest.approx(1.0, abs=1e-12)
    assert [a["cards"] for a in outs[0]["actions"]] == [["7h"], ["2s"], ["3c"]]


def test_cli_hand_of_eleven_matches_store(results, capsys):
    # player 1 has 11, player 0 deals: player 1 is mano and decides; role-ordered score (11, 8)
    vira, cards = tiny_cards(5)
    hand = " ".join(R.card_text(x) for x in cards[:3])
    code, out, err = run_cli(["truco", "policy", "--score", "8-11", "--dealer", "0", "--vira",
                              R.card_text(vira), "--hand", hand, "--results", str(results), "--json"],
                             capsys)
    assert code == 0, err
    got = json.loads(out)
    assert got["role_score"] == [11, 8] and got["player"] == 1 and got["decision"] == "hand_of_eleven"
    abstract = ab.abstract_hand(cards[:3], vira // 4)
    want = {h: p for h, _, p in play_probabilities(subgame_path(results, 11, 8, 5))}[abstract]
    assert got["actions"][0]["probability"] == pytest.approx(want, abs=1e-15)
    code, text, _ = run_cli(["truco", "policy", "--score", "8-11", "--dealer", "0", "--vira",
                             R.card_text(vira), "--hand", hand, "--results", str(results)], capsys)
    assert code == 0 and "hand of eleven" in text


def test_cli_errors_and_grid(results, capsys):
    code, _, err = run_cli(["truco", "policy", "--score", "5-5", "--dealer", "0", "--vira", "7c",
                            "--hand", "Ac 3h 4s", "--results", str(results)], capsys)
    assert code == 2 and "no player at 11" in err
    code, _, err = run_cli(["truco", "policy", "--score", "11-0", "--dealer", "0", "--vira", "7c",
                            "--hand", "Ac 3h 4s", "--results", str(results)], capsys)
    assert code == 2 and "no solved subgame" in err
    # the message names the command that solves the missing subgame
    assert err.rstrip().endswith(f"solve the 11 row with: snakemake --cores all --config games='[truco]' "
                                 f"truco='{{solve_row11: true}}' results={results}")
    code, _, err = run_cli(["truco", "policy", "--score", "11-8", "--dealer", "0", "--vira", "7c",
                            "--hand", "Ac 7c 4s", "--results", str(results)], capsys)
    assert code == 2 and "holds the vira" in err
    code, out, _ = run_cli(["truco", "grid", "--results", str(results)], capsys)
    assert code == 0 and out.startswith("63 of 1296 subgames solved")
    assert f"solve the 11 row with: snakemake --cores all --config games='[truco]' " \
        f"truco='{{solve_row11: true}}' results={results}" in out.splitlines()[0]
    code, out, _ = run_cli(["truco", "grid", "--results", str(results), "--json"], capsys)
    assert json.loads(out)["solved"] == 63


def test_cli_grid_on_an_empty_run_names_the_command(tmp_path, capsys):
    code, out, _ = run_cli(["truco", "grid", "--results", str(tmp_path)], capsys)
    assert code == 0 and out.strip() == (
        f"0 of 1296 subgames solved (role-ordered score mano-pé x vira class); solve the 11 row "
        f"with: snakemake --cores all --config games='[truco]' truco='{{solve_row11: true}}' "
        f"results={tmp_path}")


def test_schema_defaults_match_the_driver():
    schema = yaml.safe_load(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    for key, value in DEFAULTS.items():
        assert schema["properties"][key]["default"] == value
    bad = {"target_nash_conv": 0}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_transfer_regrets_by_key():
    from strongsolve.games.truco.stages.groups import transfer_regrets
    from strongsolve.games.truco.tree import build_hand_tree

    trees = []
    for c in (2, 3):
        hands, pairs, weights = ab.deal_pairs(tiny_capacities(c))
        trees.append(build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights, eleven=1))
    a, b = trees
    reg = np.arange(int(a.game.infoset_ptr[-1]), dtype=np.float64) + 1.0
    same = transfer_regrets(a.infoset_key, a.game.infoset_ptr, reg, a.infoset_key, a.game.infoset_ptr)
    assert np.array_equal(same, reg)
    moved = transfer_regrets(a.infoset_key, a.game.infoset_ptr, reg, b.infoset_key, b.game.infoset_ptr)
    src = {int(k): i for i, k in enumerate(a.infoset_key)}
    for i, k in enumerate(b.infoset_key):
        lo, hi = b.game.infoset_ptr[i], b.game.infoset_ptr[i + 1]
        if int(k) in src:
            slo = a.game.infoset_ptr[src[int(k)]]
            assert np.array_equal(moved[lo:hi], reg[slo:slo + hi - lo])
        else:
            assert not moved[lo:hi].any()
    assert 0 < len(set(src) & set(map(int, b.infoset_key))) < len(b.infoset_key)


# ---- checksums of the stored subgames -------------------------------------------------

REBUILD_GROUPS = "snakemake --cores all --forcerun truco_row11_group"


def hand_of_eleven_policy(results, capsys):
    vira, cards = tiny_cards(5)
    hand = " ".join(R.card_text(x) for x in cards[:3])
    return run_cli(["truco", "policy", "--score", "8-11", "--dealer", "0", "--vira", R.card_text(vira),
                    "--hand", hand, "--results", str(results)], capsys)


def test_edited_subgame_value_is_refused(results, tmp_path, capsys):
    copy = shutil.copytree(results, tmp_path / "results")
    meta = subgame_path(copy, 11, 8, 5) / "zarr.json"
    doc = json.loads(meta.read_text())
    assert doc["attributes"]["value"] != 0.99
    doc["attributes"]["value"] = 0.99
    meta.write_text(json.dumps(doc, indent=2))
    want = (f"strongsolve: error: {meta} does not match its checksum; it is damaged or was edited, so "
            f"it is not used. Rebuild it with `{REBUILD_GROUPS}`\n")
    code, out, err = hand_of_eleven_policy(copy, capsys)
    assert (code, out, err) == (2, "", want)
    code, out, err = run_cli(["truco", "grid", "--results", str(copy)], capsys)
    assert (code, out, err) == (2, "", want)


def test_corrupt_subgame_chunk_is_refused_naming_the_file(results, tmp_path, capsys):
    copy = shutil.copytree(results, tmp_path / "results")
    array = subgame_path(copy, 11, 8, 5) / "policy"
    chunks = sorted(p for p in array.rglob("*") if p.is_file() and p.name != "zarr.json")
    assert chunks, "the policy array has no chunk file"
    data = bytearray(chunks[0].read_bytes())
    data[len(data) // 2:] = b"\xff" * (len(data) - len(data) // 2)
    chunks[0].write_bytes(bytes(data))
    code, out, err = hand_of_eleven_policy(copy, capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"strongsolve: error: {array} ")
    assert err.endswith(f"Rebuild it with `{REBUILD_GROUPS}`\n") and "Traceback" not in err
    code, out, _ = hand_of_eleven_policy(results, capsys)  # the original is untouched
    assert code == 0 and "hand of eleven" in out


def test_subgame_checksums_are_sha256_of_the_stored_content(results):
    """Recomputed here with hashlib from the zarr.json and the arrays, not with the store's code."""
    path = subgame_path(results, 11, 8, 5)
    attrs = json.loads((path / "zarr.json").read_text())["attributes"]
    rest = {k: v for k, v in attrs.items() if k != "checksum"}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"))
    assert attrs["checksum"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    _, data = read_subgame(path)
    for name, a in data.items():
        head = f"{a.dtype.str}:{list(a.shape)}:".encode()
        assert attrs["arrays"][name]["checksum"] == "sha256:" + hashlib.sha256(head + a.tobytes()).hexdigest()
