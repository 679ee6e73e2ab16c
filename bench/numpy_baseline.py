"""The 2048 forward pass as plain vectorised numpy: the baseline the numba kernels are measured against.

Written independently of ``strongsolve.games.g2048`` ("the same workload as a plain numpy
implementation in bench/ for the ratio"); it shares only the conventions of the reference design (DESIGN.md)
(Kaneko & Yamashita 2025): cell ``i = row*cols + col`` in bits ``4i..4i+3`` of a uint64 board ID
(exponent, 0 = empty); a move slides toward a wall and merges equal neighbours once, the pair nearest
the wall first; a spawn puts a 2 or a 4 on an empty cell; the canonical ID is the minimum ID over the
symmetry group (8 elements for a square board, 4 otherwise); ``states(n)`` = start states of age n +
2-spawns into ``afterstates(n-2)`` + 4-spawns into ``afterstates(n-4)``; ``afterstates(n)`` = canonical
results of every legal move of ``states(n)``. Counts include terminal states (no legal move).

The same work as the numba forward pass: moves through line tables (one entry per possible line),
canonical IDs through the symmetry group, sort-unique of each layer (``numpy.unique``), spawns. Every
step is a whole-array numpy operation on a chunk of IDs; no Python loop runs per board.

Usage::

    python bench/numpy_baseline.py [--board 3x3] [--max-age N] [--json]
"""

import argparse
import json
import sys
import time

import numpy as np

CHUNK = 1 << 18  # IDs per vectorised step: bounds the temporaries to tens of MB


def slide_table(length):
    """Every line of ``length`` cells slid toward cell 0.

    Returns
    -------
    uint64[16**length]
        Entry ``line`` (cell k in bits 4k..4k+3) is the line after the slide and its merges. Tiles
        above 2^15 cannot occur on the boards benchmarked here (at most 2^13 on 4x3).
    """
    lines = np.arange(16 ** length, dtype=np.uint64)
    cells = [(lines >> np.uint64(4 * k)) & np.uint64(15) for k in range(length)]
    out = [np.zeros_like(lines) for _ in range(length)]
    write = np.zeros(lines.size, np.int64)  # next output cell of each line
    held = np.zeros_like(lines)  # a tile waiting for its right neighbour (0: none)
    for tile in cells:
        present = tile != 0
        merge = present & (held == tile)
        flush = present & (held != 0) & ~merge  # the held tile stays as it is; this one is held
        for k in range(length):
            at = write == k
            out[k] = np.where(merge & at, held + np.uint64(1), np.where(flush & at, held, out[k]))
        write += (merge | flush).astype(np.int64)
        held = np.where(merge, np.uint64(0), np.where(present, tile, held))
    for k in range(length):
        out[k] = np.where((write == k) & (held != 0), held, out[k])
    result = np.zeros_like(lines)
    for k in range(length):
        result |= out[k] << np.uint64(4 * k)
    return result


def reverse_table(length):
    """Every line of ``length`` cells with its cells in reverse order (uint64[16**length])."""
    lines = np.arange(16 ** length, dtype=np.uint64)
    out = np.zeros_like(lines)
    for k in range(length):
        out |= ((lines >> np.uint64(4 * k)) & np.uint64(15)) << np.uint64(4 * (length - 1 - k))
    return out


class Board:
    """Tables and whole-array operations of an ``rows x cols`` board."""

    def __init__(self, rows, cols):
        self.rows, self.cols, self.cells = rows, cols, rows * cols
        self.slide_row, self.rev_row = slide_table(cols), reverse_table(cols)
        self.slide_col, self.rev_col = slide_table(rows), reverse_table(rows)
        self.row_mask = np.uint64(16 ** cols - 1)

    def _cell(self, ids, i):
        return (ids >> np.uint64(4 * i)) & np.uint64(15)

    def _rows(self, ids):
        return [(ids >> np.uint64(4 * r * self.cols)) & self.row_mask for r in range(self.rows)]

    def _columns(self, ids):
        return [sum(self._cell(ids, r * self.cols + c) << np.uint64(4 * r) for r in range(self.rows))
                for c in range(self.cols)]

    def _from_rows(self, rows):
        return sum(row << np.uint64(4 * r * self.cols) for r, row in enumerate(rows))

    def _from_columns(self, columns):
        out = np.zeros_like(columns[0])
        for c, col in enumerate(columns):
            for r in range(self.rows):
                out |= ((col >> np.uint64(4 * r)) & np.uint64(15)) << np.uint64(4 * (r * self.cols + c))
        return out

    def moves(self, ids):
        """The four moves (left, right, up, down) of every board: a list of four uint64 arrays."""
        rows, cols = self._rows(ids), self._columns(ids)
        sr, rr, sc, rc = self.slide_row, self.rev_row, self.slide_col, self.rev_col
        return [self._from_rows([sr[x] for x in rows]),
                self._from_rows([rr[sr[rr[x]]] for x in rows]),
                self._from_columns([sc[x] for x in cols]),
                self._from_columns([rc[sc[rc[x]]] for x in cols])]

    def canonical(self, ids):
        """Minimum over the symmetry group of every board (uint64 array)."""
        images = [ids]
        if self.rows == self.cols:
            n = self.rows
            t = np.zeros_like(ids)
            for r in range(n):
                for c in range(n):
                    t |= self._cell(ids, r * n + c) << np.uint64(4 * (c * n + r))
            images.append(t)
        best = None
        for x in images:
            rows = self._rows(x)
            mirrored = [self.rev_row[row] for row in rows]
            for img in (x, self._from_rows(mirrored), self._from_rows(rows[::-1]),
                        self._from_rows(mirrored[::-1])):
                best = img if best is None else np.minimum(best, img)
        return best

    def spawns(self, ids, exponent):
        """Canonical boards made by putting tile 2^exponent on each empty cell (with repeats)."""
        parts = []
        for i in range(self.cells):
            free = ids[self._cell(ids, i) == 0]
            parts.append(free | np.uint64(exponent << (4 * i)))
        return self.canonical(np.concatenate(parts)) if parts else np.empty(0, np.uint64)

    def starts(self):
        """Canonical two-tile start boards, as a dict age -> sorted unique uint64 IDs."""
        out = {}
        for i in range(self.cells):
            for j in range(i + 1, self.cells):
                for a in (1, 2):
                    for b in (1, 2):
                        out.setdefault(2 ** a + 2 ** b, []).append((a << (4 * i)) | (b << (4 * j)))
        return {n: np.unique(self.canonical(np.array(v, np.uint64))) for n, v in out.items()}


def forward(rows, cols, max_age=None):
    """Enumerate the layers age by age.

    Parameters
    ----------
    rows, cols : int
        Board shape (2..4 each; 4x4 is outside the 4-bit tile cap of this baseline).
    max_age : int, optional
        Last age (default: the last reachable one, 2^(rows*cols+2) - 4).

    Yields
    ------
    (age, num_states, num_terminal, afterstates) : (int, int, int, uint64[A] sorted unique)
    """
    board = Board(rows, cols)
    starts = board.starts()
    last = max_age if max_age is not None else 2 ** (rows * cols + 2) - 4
    layers = {}
    empty = np.empty(0, np.uint64)
    for n in range(4, last + 1, 2):
        parts = [starts.get(n, empty)]
        for source, exponent in ((layers.get(n - 2, empty), 1), (layers.get(n - 4, empty), 2)):
            for lo in range(0, source.size, CHUNK):
                parts.append(np.unique(board.spawns(source[lo:lo + CHUNK], exponent)))
        states = np.unique(np.concatenate(parts))
        terminal = 0
        runs = [empty]
        for lo in range(0, states.size, CHUNK):
            s = states[lo:lo + CHUNK]
            moved = board.moves(s)
            legal = [m != s for m in moved]
            terminal += int(np.count_nonzero(~(legal[0] | legal[1] | legal[2] | legal[3])))
            runs.append(np.unique(board.canonical(np.concatenate([m[ok] for m, ok in zip(moved, legal)]))))
        after = np.unique(np.concatenate(runs))
        layers = {a: v for a, v in layers.items() if a > n - 4}
        layers[n] = after
        yield n, int(states.size), terminal, after


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--board", default="3x3", help="ROWSxCOLS (default 3x3)")
    parser.add_argument("--max-age", type=int, default=None, help="last age (default: the last one)")
    parser.add_argument("--json", action="store_true", help="print the per-age counts as JSON")
    args = parser.parse_args(argv)
    rows, cols = (int(x) for x in args.board.lower().split("x"))
    wall, cpu = time.perf_counter(), time.process_time()
    layers = [(n, s, t, int(a.size)) for n, s, t, a in forward(rows, cols, args.max_age)]
    doc = {"board": args.board, "max_age": layers[-1][0] if layers else None,
           "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
           "ages": [x[0] for x in layers], "states": [x[1] for x in layers],
           "terminal": [x[2] for x in layers], "afterstates": [x[3] for x in layers]}
    if args.json:
        json.dump(doc, sys.stdout)
        print()
    else:
        print(f"{args.board} to age {doc['max_age']}: {sum(doc['states'])} states, "
              f"{sum(doc['afterstates'])} afterstates, {doc['wall_s']:.2f} s wall, {doc['cpu_s']:.2f} s CPU")


if __name__ == "__main__":
    main()
