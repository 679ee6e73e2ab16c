"""The 11-11 hand with and without face-down play, vira class by vira class (the face-down option of
games/truco/rules.py, compared with baixada-cards/truco-solver's published 11-11 figures).

The row-11 driver (``strongsolve truco solve-group --x 11``) writes its nine
subgames only when all are solved and its fixed point on W(11, 11) has converged; on a shared
machine this script gives each class's result as soon as it is solved instead: the same
``solve._solve_one`` chain (each class warm-started from the previous one's regrets), with W(11, 11)
held at a given value. W(11, 11) enters only through three tied tricks, so holding it off by d moves
a value by at most ``p_nobody * d`` (``p_nobody`` is printed; about 2.5e-4 with face-down play).
One JSON line per class is appended to OUT.

    .venv/bin/python bench/truco_face_down_1111.py --face-down on --target 1e-3 --w 0.446743 --out OUT
"""

import argparse
import json

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.stages.groups import _solve_one, check_params
from strongsolve.games.truco.subgames import utility_table

FIELDS = ("value", "nash_conv", "exploitability", "iterations", "seconds", "cpu_seconds", "n_nodes",
          "n_infosets", "p_nobody", "max_rss_mib", "face_down")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--face-down", choices=("on", "off"), required=True)
    parser.add_argument("--target", type=float, default=1e-4, help="NashConv per class")
    parser.add_argument("--w", type=float, required=True, help="W(11, 11) for three tied tricks")
    parser.add_argument("--out", required=True, help="JSON lines file, appended")
    args = parser.parse_args(argv)
    prm = check_params(dict(face_down=args.face_down == "on", target_nash_conv=args.target))
    table = utility_table(11, 11, {(11, 11): args.w})
    prev = None
    for c in range(ab.N_VIRA_CLASSES):
        deck = ab.deal_pairs(ab.class_capacities(c))
        _, _, rec, _, prev = _solve_one((11, 11), c, deck, table, prm, None, prev, c == 0)
        row = {k: rec[k] for k in FIELDS}
        row.update(vira_class=c, target=args.target, w1111=args.w)
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
