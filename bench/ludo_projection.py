"""Project a Ludo race of more pieces (four: the real game) from a measured values-solver run;
prints one JSON object.

Usage::

    python bench/ludo_projection.py workflow/boards/classic60.yaml --cpu-ns NS --sweeps S \
        --cores 16 --ssd-gb-per-s 3

``--cpu-ns`` and ``--sweeps`` come from a measured three-piece run (bench/RECORD.md): CPU seconds
(wall seconds times threads) over positions times sweeps, and its sweep count.

The model, each input stated in the output:

- **positions** C(R + P - 1, P)^2 (:func:`encoding.race_positions`), **bytes** 8 per position for
  the float64 values and 8 for the reduced rank extrapolation's two float32 changes.
- **CPU per position and sweep**: the measured run's (wall seconds x threads / (positions x
  sweeps)), times P / P_run for the longer move lists (one candidate per piece and face).
- **sweeps**: the measured run's count (the sweeps depend on the capture chains, which more
  pieces lengthen: a lower bound).
- **working set**: the sweep visits the blocks of leading progress from the highest down; a block
  reads blocks whose leading progress is at most the largest gain of one move (die and shortcuts
  together) above its own, and, for a capture by the side behind, lower blocks. Held in memory:
  the band of positions whose leading progress is within that gain (its largest over the sweep);
  everything else streams from disk once per sweep (values read and written, changes written).
- **disk time per sweep**: the bytes streamed over the SSD's speed, beside the CPU time over the
  cores (the larger of the two bounds the sweep).
"""

import argparse
import json
from math import comb

import numpy as np

from strongsolve.games.ludo import rules


def progress_counts(cells, pieces):
    """int64[pieces * N + 1]: multisets of ``pieces`` rest cells by their sum (the progress)."""
    top = pieces * int(max(cells))
    ways = np.zeros((pieces + 1, top + 1), np.int64)
    ways[0, 0] = 1
    for c in cells:  # each cell taken 0..pieces times
        for k in range(1, pieces + 1):
            ways[k, c:] += ways[k - 1, :top + 1 - c]
    return ways[pieces]


def largest_gain(board):
    """The most progress one move makes (die and jumps together), in cells."""
    gain = 0
    for c in board.rest_cells():
        for d, p in enumerate(board.die, 1):
            t = board.move(c, d)
            if p > 0 and t is not None:
                gain = max(gain, t - c)
    return gain


def band_positions(counts, gain):
    """Most positions whose leading side's progress lies in one window of ``gain + 1`` values."""
    cum = np.cumsum(counts)
    below = np.concatenate([[0], cum[:-1]])
    by_lead = counts * counts + 2 * counts * below  # positions whose larger progress is p
    window = np.convolve(by_lead, np.ones(gain + 1, np.int64), mode="valid")
    return int(window.max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("board")
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("--cpu-ns", type=float, required=True,
                    help="CPU ns per position and sweep of the measured run")
    ap.add_argument("--sweeps", type=int, required=True, help="sweeps of the measured run")
    ap.add_argument("--run-pieces", type=int, default=3)
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--ssd-gb-per-s", type=float, default=3.0)
    args = ap.parse_args()
    board = rules.load_board(args.board)
    cells = board.rest_cells()
    m = comb(len(cells) + args.pieces - 1, args.pieces)
    positions = m * m
    cpu_ns = args.cpu_ns * args.pieces / args.run_pieces
    gain = largest_gain(board)
    band = band_positions(progress_counts(cells, args.pieces), gain)
    streamed = positions * (8 + 8 + 8)  # values read and written, changes written
    cpu_s = positions * cpu_ns * 1e-9 / args.cores
    disk_s = streamed / (args.ssd_gb_per_s * 1e9)
    sweep_s = max(cpu_s, disk_s)
    print(json.dumps({
        "board": args.board, "pieces": args.pieces, "positions": positions,
        "value_bytes": 8 * positions, "change_bytes": 8 * positions,
        "disk_bytes": 16 * positions,
        "largest_gain_of_a_move": gain,
        "band_positions": band, "band_bytes_in_memory": 16 * band,
        "measured": {"pieces": args.run_pieces, "cpu_ns_per_position_sweep": round(args.cpu_ns, 1),
                     "sweeps": args.sweeps},
        "cpu_ns_per_position_sweep": round(cpu_ns, 1), "cores": args.cores,
        "ssd_gb_per_s": args.ssd_gb_per_s,
        "sweep_cpu_hours": round(cpu_s / 3600, 2), "sweep_disk_hours": round(disk_s / 3600, 2),
        "sweeps": args.sweeps, "solve_hours_at_least": round(args.sweeps * sweep_s / 3600, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
