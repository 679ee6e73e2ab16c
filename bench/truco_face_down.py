"""One hand's subgames with or without face-down play, vira class by vira class (the face-down
option of games/truco/rules.py, compared with baixada-cards/truco-solver's published figures).

A score's group driver (``strongsolve truco solve-group`` for the 11 row, the grid for the others)
writes its subgames only when all are solved and its fixed point has converged; on a shared machine
this script gives each class's result as soon as it is solved instead: the same
``groups._solve_one`` chain (each class warm-started from the previous one's regrets), with the
value after three tied tricks held at ``--w`` (convention "three ties score nobody": the next hand
is at the score with the roles swapped, W(b, a) for a hand at a-b). That value enters only through
three tied tricks, so holding it off by d moves a value by at most ``p_nobody * d`` (printed).
The other continuation values (the scores a won hand leads to; none at 11-11) are the stored
subgames' under ``--results`` averaged over the vira classes (``grid.continuation_value``; mano is
the non-dealer). Raise subgames with face-down play take the public tree (kernels/public_cfr.py,
without the off-path refinement), the 11 row the tabular tree.

One JSON line per class is appended to OUT; classes already in OUT for the same score and
face-down setting are skipped, so a killed run continues where it stopped (``--classes`` splits
the classes between processes).

    .venv/bin/python bench/truco_face_down.py --score 11-11 --face-down on --target 1e-3 \\
        --w 0.446743 --out OUT
    .venv/bin/python bench/truco_face_down.py --score 10-10 --face-down on --target 1e-3 \\
        --w 0.4716171295721324 --results /path/to/results --out OUT
"""

import argparse
import json
from pathlib import Path

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.stages.grid import (continuation_value, deck_root, full_deck,
                                                 successors)
from strongsolve.games.truco.stages.groups import _solve_one, check_params, hand_utility_table

FIELDS = ("value", "nash_conv", "exploitability", "iterations", "seconds", "cpu_seconds", "n_nodes",
          "n_infosets", "p_nobody", "max_rss_mib", "face_down", "raise_caps")


def continuation(a, b, w, results):
    """{score: W} for the hand at (a, b): W(b, a) = ``w`` (three tied tricks), the other
    successors from the stored subgames under ``results`` (FileNotFoundError naming a missing one;
    ValueError if one is needed and ``results`` is None)."""
    W = {(b, a): w}
    need = [t for t in successors(a, b) if t != (b, a)]
    if need and results is None:
        raise ValueError(f"score {a}-{b} needs the stored values of {need}: pass --results")
    deck = full_deck()
    for t in need:
        W[t] = continuation_value(deck_root(results, deck), *t, deck, results)
    return W


def done_classes(path, score, face_down):
    """Vira classes already in the JSON lines file ``path`` for ``score`` and ``face_down``."""
    if not Path(path).exists():
        return set()
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return {r["vira_class"] for r in rows
            if r.get("score", "11-11") == score and r["face_down"] == face_down}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--score", default="11-11", help="role-ordered a-b (mano's points first)")
    parser.add_argument("--face-down", choices=("on", "off"), required=True)
    parser.add_argument("--target", type=float, default=1e-4, help="NashConv per class")
    parser.add_argument("--w", type=float, required=True,
                        help="W(b, a): mano's match-win probability after three tied tricks")
    parser.add_argument("--results", help="results root holding the successors' stored subgames")
    parser.add_argument("--classes", default=None, help="comma-separated vira classes (all)")
    parser.add_argument("--out", required=True, help="JSON lines file, appended")
    args = parser.parse_args(argv)
    try:
        a, b = (int(x) for x in args.score.split("-"))
    except ValueError:
        raise SystemExit(f"bad --score {args.score!r}: give a-b, e.g. 10-10")
    face_down = args.face_down == "on"
    prm = check_params(dict(face_down=face_down, target_nash_conv=args.target))
    W = continuation(a, b, args.w, args.results)
    table = hand_utility_table(a, b, W)
    classes = (range(ab.N_VIRA_CLASSES) if args.classes is None
               else [int(c) for c in args.classes.split(",")])
    bad = [c for c in classes if not 0 <= c < ab.N_VIRA_CLASSES]
    if bad:
        raise SystemExit(f"bad --classes {bad}: allowed 0..{ab.N_VIRA_CLASSES - 1}")
    prev = None
    for c in classes:
        if c in done_classes(args.out, args.score, face_down):
            continue
        deck = ab.deal_pairs(ab.class_capacities(c))
        _, _, rec, _, prev = _solve_one((a, b), c, deck, table, prm, None, prev, c == classes[0])
        row = {k: rec[k] for k in FIELDS}
        row.update(score=args.score, vira_class=c, target=args.target, w=args.w,
                   W={f"{x}-{y}": v for (x, y), v in sorted(W.items())}, utility=table.tolist())
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
