"""The lab tests' small results folder, made by the CLI (Truco by its stage driver), and the CLI
run in this process."""

import contextlib
import io
import json

from strongsolve import cli
from strongsolve.games.truco.stages.groups import solve_group

from support.truco import tiny_capacities

LUDO_BOARD = """length: 12
jumps: {3: 7, 9: 2}
chain_jumps: false
overshoot: stay
die: 3
safe: [5]
roll_again_on: null
"""


def run_cli(*argv):
    """(exit code, stdout) of the strongsolve CLI run in this process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue()


def cli_json(*argv):
    code, out = run_cli(*argv)
    assert code == 0, out
    return json.loads(out)


def build_lab_results(root):
    """A results folder with a 2x3 2048 run, two Shut the Box results, two Ludo races (one and two pieces) and the Truco
    subgames of the groups 11 and 10 on a tiny deck per vira class, each made by its CLI (Truco by
    its stage driver), under ``root`` (a new folder); returns ``root``."""
    assert run_cli("2048", "solve", root / "2048_2x3", "--rows", 2, "--cols", 3)[0] == 0
    assert run_cli("shutbox", "--cards", 4, "--faces", 3, "--policy",
                   "--output", root / "shutbox_4" / "flip_one.json")[0] == 0
    assert run_cli("shutbox", "--rule", "standard", "--cards", 5, "--faces", 3, "--policy",
                   "--output", root / "shutbox_4" / "standard_5_max-shut.json")[0] == 0
    board = root.parent / "small.yaml"
    board.write_text(LUDO_BOARD)
    assert run_cli("ludo", "race", board, "--pieces", 1, "--policy-out",
                   root / "ludo_small" / "race_p1_policy.npz",
                   "--output", root / "ludo_small" / "race_p1.json")[0] == 0
    assert run_cli("ludo", "race", board, "--pieces", 2, "--policy-out",
                   root / "ludo_small" / "race_p2_policy.npz",
                   "--output", root / "ludo_small" / "race_p2.json")[0] == 0
    for x in (11, 10):  # 11-11, and the hands of eleven 11-10 / 10-11 (which need 11-11)
        solve_group(x, root, dict(target_nash_conv=1e-6, fixed_point_tol=1e-7, workers=1),
                    log=lambda m: None, capacities=tiny_capacities)
    return root
