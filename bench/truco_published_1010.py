"""Our 10-10 subgames beside the public solver's published 10x10 values.

The published values (``bench/data/truco_published_10x10.txt``, with its source) are player 0's
game values v on the +-1 scale in the game where player 0 deals (dealer 0), so player 0 is pé,
the player who plays second; its match-win probability is (1 + v) / 2. Ours: pé's match-win
probability, one minus the stored value (mano's) of each 10-10 subgame (games/truco/stages/grid.py
layout), or, while the 10-10 group is still being solved, its last fixed-point round's record
in the group's spill folder (marked "spilled"). Prints JSON: per vira class ours, theirs, the
difference, our NashConv, iterations and CPU seconds, and the averages (weighted by the vira
classes' probabilities, theirs under the same numbering).

    python bench/truco_published_1010.py results/tier_run
"""

import argparse
import json
from pathlib import Path

from strongsolve.games.truco import encoding as ab
from strongsolve.games.truco.stages.grid import GRID, stored_path
from strongsolve.games.truco.saved import read_subgame

PUBLISHED = Path(__file__).with_name("data") / "truco_published_10x10.txt"


def published(path=PUBLISHED):
    """{class: (iterations, epsilon, win probability)} of the published file ('#' comments)."""
    out = {}
    for line in Path(path).read_text().splitlines():
        if line and not line.startswith("#"):
            c, it, eps, v = line.split()
            out[int(c)] = (int(it), float(eps), (1.0 + float(v)) / 2.0)  # pe's win probability
    return out


def compare(root, pub=None):
    """The comparison printed by :func:`main` (a dict) for the results directory ``root``."""
    pub = published() if pub is None else pub
    probs = ab.vira_class_probabilities()
    rows = []
    for c in range(ab.N_VIRA_CLASSES):
        path = stored_path(root, 10, 10, c)
        if path is not None:
            attrs, source = read_subgame(path, arrays=False)[0], "stored"
        else:  # a group still being solved: its last fixed-point round waiting in the spill folder
            spilled = sorted(Path(root).joinpath(*GRID).glob(f".group-10-10/s10-10_v{c}_r*.json"))
            if not spilled:
                continue
            attrs, source = json.loads(spilled[-1].read_text()), f"spilled {spilled[-1].stem}"
        it, eps, theirs = pub[c]
        ours = 1.0 - attrs["value"]  # pe's match-win probability
        rows.append(dict(vira_class=c, ours=ours, theirs=theirs, ours_minus_theirs=ours - theirs,
                         our_nash_conv=attrs["nash_conv"], our_iterations=attrs["iterations"],
                         our_cpu_seconds=attrs["cpu_seconds"], their_epsilon=eps,
                         their_iterations=it, source=source))
    out = dict(root=str(root), classes=len(rows), rows=rows)
    if len(rows) == ab.N_VIRA_CLASSES:
        out["ours_average"] = sum(probs[r["vira_class"]] * r["ours"] for r in rows)
        out["theirs_average"] = sum(probs[r["vira_class"]] * r["theirs"] for r in rows)
        out["difference_range"] = [min(r["ours_minus_theirs"] for r in rows),
                                   max(r["ours_minus_theirs"] for r in rows)]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", help="a results directory holding the t1 tier")
    print(json.dumps(compare(ap.parse_args().results), indent=1))


if __name__ == "__main__":
    main()
