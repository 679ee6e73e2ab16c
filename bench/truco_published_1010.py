"""Our 10-10 subgames beside the public solver's published 10x10 values.

The published values (``bench/data/truco_published_10x10.txt``, with its source) are player 0's
game values v on the +-1 scale in the game where player 0 deals (dealer 0), so player 0 is pé,
the player who plays second; its match-win probability is (1 + v) / 2. Ours: pé's match-win
probability, one minus the stored value (mano's) of each 10-10 subgame (games/truco/stages/grid.py
layout), or, while the 10-10 group is still being solved, its last fixed-point round's record
in the group's spill folder (marked "spilled"). Prints JSON: per vira class ours, theirs, the
difference, our NashConv, iterations and CPU seconds, and the averages (weighted by the vira
classes' probabilities, theirs under the same numbering). With ``--face-down FILE`` (the JSON lines
of ``bench/truco_face_down.py --score 10-10 --face-down on``), each class also gets our value with
face-down play in the 10-10 hand (``ours_face_down``), its difference to theirs and to ours
without it.

    python bench/truco_published_1010.py results/tier_run
    python bench/truco_published_1010.py results/tier_run --face-down facedown_1010.jsonl
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


def face_down_values(path, score="10-10"):
    """{class: row} of the face-down rows of ``score`` in a ``truco_face_down.py`` JSON lines file
    (the last row of a class wins)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return {r["vira_class"]: r for r in rows if r.get("score") == score and r["face_down"]}


def compare(root, pub=None, face_down=None):
    """The comparison printed by :func:`main` (a dict) for the results directory ``root``;
    ``face_down``: a ``truco_face_down.py`` JSON lines file, or None."""
    pub = published() if pub is None else pub
    fd = face_down_values(face_down) if face_down else {}
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
        if c in fd:
            on = 1.0 - fd[c]["value"]
            rows[-1].update(ours_face_down=on, ours_face_down_minus_theirs=on - theirs,
                            face_down_minus_off=on - ours, face_down_nash_conv=fd[c]["nash_conv"],
                            face_down_iterations=fd[c]["iterations"],
                            face_down_cpu_seconds=fd[c]["cpu_seconds"],
                            face_down_p_nobody=fd[c]["p_nobody"])
    out = dict(root=str(root), classes=len(rows), rows=rows)
    if fd:
        on = [r for r in rows if "ours_face_down" in r]
        out["face_down_classes"] = [r["vira_class"] for r in on]
        out["face_down_difference_range"] = [min(r["ours_face_down_minus_theirs"] for r in on),
                                             max(r["ours_face_down_minus_theirs"] for r in on)]
    if len(rows) == ab.N_VIRA_CLASSES:
        out["ours_average"] = sum(probs[r["vira_class"]] * r["ours"] for r in rows)
        out["theirs_average"] = sum(probs[r["vira_class"]] * r["theirs"] for r in rows)
        out["difference_range"] = [min(r["ours_minus_theirs"] for r in rows),
                                   max(r["ours_minus_theirs"] for r in rows)]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", help="a results directory holding the t1 tier")
    ap.add_argument("--face-down", help="JSON lines of bench/truco_face_down.py --score 10-10")
    args = ap.parse_args()
    print(json.dumps(compare(args.results, face_down=args.face_down), indent=1))


if __name__ == "__main__":
    main()
