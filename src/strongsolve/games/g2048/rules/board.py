"""2048 rules on an r x c board: board IDs, moves, rewards, spawns, age and symmetry.

Conventions (the reference design (DESIGN.md); Kaneko & Yamashita 2025, "Strongly Solving 2048 4x3", section 2):

- Cell ``i = row*cols + col`` holds a 4-bit exponent in bits ``4i..4i+3`` of a uint64 board ID
  (0 = empty, k = tile 2^k). The largest tile that fits is 2^15.
- A move slides the tiles toward a wall; equal neighbours merge once per move, the pair nearest the
  wall first; the reward is the sum of the new tiles' values (points). A move is legal iff it changes
  the board.
- A spawn puts a 2 (probability ``p2``, 0.9 in the original game) or a 4 (``1 - p2``) on a uniformly
  chosen empty cell. The random start is two spawns on the empty board.
- Age = sum of the tiles. A move keeps it; a spawn adds 2 or 4.
- Canonical ID = the minimum ID over the board's symmetry group: the 8 symmetries of the square when
  ``rows == cols``, else the 4 of the rectangle (identity, two mirrors, rotation by 180 degrees).

Moves go through precomputed line tables (one entry per possible line, 16^len entries); columns
are turned into rows by byte tables (the board in column-major order), so all four moves of a board
cost a few dozen table look-ups (2.2x faster than sliding each column cell by cell); the
mirrors, and for square boards the transpose, are masks and shifts.
:class:`Tables` holds them; :func:`tables` builds and caches them per board shape.

The kernels loop over :data:`MAX_LINES` lines and all 8 bytes of an ID whatever the board's shape
(lines and bytes a board lacks read as empty and change nothing), so LLVM unrolls the loops, and
:func:`moves`, :func:`canonical_id` and the backward pass's move helpers are inlined into their
callers (numba ``inline='always'``). Loops over the board's own sizes, known only at run time, and
calls made the forward pass's moves and canonicalisations 2.7x slower (113 -> 42 ns per
4x3 state).

Why one module of more than 500 lines: the rules are numba kernels (moves, merges, symmetries,
spawns on packed boards) that call one another; each is small, and kept beside the tables they
share.
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ....kernels.options import njit
from .shape import check_shape
from .spawn import cap_sum

DIRECTIONS = ("left", "right", "up", "down")
"""Move names by index: left = toward column 0, up = toward row 0."""

MAX_EXPONENT = 15
"""4 bits per cell: the largest tile is 2^15 = 32768."""

MAX_LINES = 4
"""Rows and columns of the largest board: the kernels' loops run this many times."""


class TileOverflowError(ValueError):
    """A merge would make a tile above 2^15, which does not fit in 4 bits."""


@dataclass(frozen=True)
class Tables:
    """Look-up tables of one board shape, passed to the numba kernels.

    Attributes
    ----------
    rows, cols : int
        Board shape, 1..4 each.
    line_result : uint16[4, 16**max(rows, cols)]
        For direction d (index into :data:`DIRECTIONS`) and a line in natural order (a row for
        left/right, a column read top to bottom for up/down, cell k in bits 4k..4k+3), the line after
        the move, in the same order.
    line_reward : int32[4, 16**max(rows, cols)]
        The merge reward in points, or -1 when a merge would make a tile above 2^15.
    mirrors : uint64[3, 3, 2 * MAX_LINES - 1]
        The mirror left-right (``mirrors[0]``), up-down (``mirrors[1]``) and, for a square board,
        the transpose (``mirrors[2]``; zero otherwise) as masks and shifts: ``mirrors[m, 0, j]``
        selects a group of cells (column j for left-right, row j for up-down, the j-th diagonal
        for the transpose), which moves left by ``mirrors[m, 1, j]`` bits and right by
        ``mirrors[m, 2, j]`` bits; zero for a group the board lacks. The image is the OR over j
        (the mirrors use the first MAX_LINES groups).
    to_cols : uint64[8, 256]
        For byte k of a board ID (cells 2k and 2k+1), those two cells moved to their place in the
        column-major ID (cell (r, c) in bits 4(c*rows + r)); a board's column-major ID is the OR
        over its bytes. For a square board this is the transpose. Rows of bytes past the board's
        cells are zero.
    from_cols : uint64[8, 256]
        The inverse: byte k of a column-major ID to its cells' place in the board ID.
    """

    rows: int
    cols: int
    line_result: np.ndarray
    line_reward: np.ndarray
    mirrors: np.ndarray
    to_cols: np.ndarray
    from_cols: np.ndarray

    @property
    def sym(self):
        """The layout tables as the kernels take them: ``(mirrors, to_cols, from_cols)``."""
        return self.mirrors, self.to_cols, self.from_cols

    @property
    def cells(self):
        return self.rows * self.cols

    def kernel_args(self):
        """The tuple ``(rows, cols, line_result, line_reward, sym)`` the numba kernels take."""
        return self.rows, self.cols, self.line_result, self.line_reward, self.sym


def _slide_toward_wall(exps):
    """Slide one line (exponents, wall first) toward the wall. Returns (new exponents, reward, overflow)."""
    tiles = [e for e in exps if e]
    out, reward, overflow, k = [], 0, False, 0
    while k < len(tiles):
        if k + 1 < len(tiles) and tiles[k] == tiles[k + 1]:
            e = tiles[k] + 1
            overflow |= e > MAX_EXPONENT
            out.append(min(e, MAX_EXPONENT))
            reward += 1 << e
            k += 2
        else:
            out.append(tiles[k])
            k += 1
    return out + [0] * (len(exps) - len(out)), reward, overflow


def _line_table(length, toward_start):
    size = 16 ** length
    result = np.zeros(size, np.uint64)
    reward = np.zeros(size, np.int64)
    for line in range(size):
        exps = [(line >> (4 * k)) & 15 for k in range(length)]
        wall_first = exps if toward_start else exps[::-1]
        moved, r, overflow = _slide_toward_wall(wall_first)
        if not toward_start:
            moved = moved[::-1]
        result[line] = sum(e << (4 * k) for k, e in enumerate(moved))
        reward[line] = -1 if overflow else r
    return result, reward


def _layout_tables(rows, cols):
    mirrors = np.zeros((3, 3, 2 * MAX_LINES - 1), np.uint64)
    for j in range(cols):  # left-right: column j goes to column cols-1-j
        shift = 4 * (cols - 1 - 2 * j)
        mask = sum(15 << (4 * (r * cols + j)) for r in range(rows))
        mirrors[0, :, j] = mask, max(shift, 0), max(-shift, 0)
    for j in range(rows):  # up-down: row j goes to row rows-1-j
        shift = 4 * cols * (rows - 1 - 2 * j)
        mask = ((1 << (4 * cols)) - 1) << (4 * cols * j)
        mirrors[1, :, j] = mask, max(shift, 0), max(-shift, 0)
    if rows == cols:  # transpose: cell (r, r + d) goes to (r + d, r), 4 (n - 1) d bits further
        for j, d in enumerate(range(1 - rows, rows)):
            mask = sum(15 << (4 * (r * cols + r + d)) for r in range(rows) if 0 <= r + d < cols)
            shift = 4 * (rows - 1) * d
            mirrors[2, :, j] = mask, max(shift, 0), max(-shift, 0)
    cells = rows * cols
    to_cols = np.zeros((8, 256), np.uint64)
    from_cols = np.zeros((8, 256), np.uint64)
    for k in range((cells + 1) // 2):
        for v in range(256):
            for half, cell in ((0, 2 * k), (1, 2 * k + 1)):
                e = (v >> (4 * half)) & 15
                if cell < cells:
                    r, c = divmod(cell, cols)  # row-major cell -> its column-major place
                    to_cols[k, v] |= e << (4 * (c * rows + r))
                    c, r = divmod(cell, rows)  # column-major cell -> its row-major place
                    from_cols[k, v] |= e << (4 * (r * cols + c))
    return mirrors, to_cols, from_cols


@lru_cache(maxsize=None)
def tables(rows, cols):
    """Build (once per shape) the :class:`Tables` of an ``rows x cols`` board.

    Raises
    ------
    ValueError
        From :func:`check_shape`.
    """
    check_shape(rows, cols)
    size = 16 ** max(rows, cols)
    # narrow entries (a line has at most 16 bits, a line's reward is below 2^17): the tables of the
    # 4-cell lines take 768 KB instead of 4 MB and stay in a core's L2 cache
    line_result = np.zeros((4, size), np.uint16)
    line_reward = np.zeros((4, size), np.int32)
    for d, (length, toward_start) in enumerate(((cols, True), (cols, False), (rows, True), (rows, False))):
        res, rew = _line_table(length, toward_start)
        line_result[d, : len(res)] = res
        line_reward[d, : len(rew)] = rew
    return Tables(rows, cols, line_result, line_reward, *_layout_tables(rows, cols))


# ---------------------------------------------------------------------------------------------
# numba kernels on one board ID (all arithmetic in uint64: numba turns mixed uint64/int64 into float)

_U4 = np.uint64(4)
_U15 = np.uint64(15)
_U0 = np.uint64(0)


@njit
def _bytes_map(x, table):
    """OR of ``table[k, byte k of x]`` over the bytes of ``x``: moves each cell by a byte table."""
    out = _U0
    for k in range(8):
        out |= table[k, (x >> np.uint64(8 * k)) & np.uint64(255)]
    return out


@njit(inline='always')
def moves(b, rows, cols, line_result, line_reward, sym, out, rewards):
    """Apply the four moves to board ``b``.

    Writes ``out[d]`` (uint64, the board after move d, in :data:`DIRECTIONS` order) and
    ``rewards[d]`` (int64, merge points, -1 when a merge would make a tile above 2^15). Move d is
    legal iff ``out[d] != b``. Rows are moved through the line tables directly; columns are rows of
    the column-major ID (``sym`` = :attr:`Tables.sym`), moved the same way and mapped back.
    """
    _, to_cols, from_cols = sym
    out[0], out[1], rewards[0], rewards[1] = _slide_lines(b, cols, 0, line_result, line_reward)
    up, down, rewards[2], rewards[3] = _slide_lines(_bytes_map(b, to_cols), rows, 2, line_result,
                                                    line_reward)
    out[2] = _bytes_map(up, from_cols)
    out[3] = _bytes_map(down, from_cols)


@njit
def _slide_lines(x, length, d, line_result, line_reward):
    """Move the lines of ``length`` cells packed in ``x`` by directions ``d`` and ``d + 1`` (toward
    the start and toward the end of each line). Returns both results and both rewards.

    A line overflows (a merge above 2^15) in one direction iff it does in the other (it holds two
    2^15 tiles with no other tile between them, and either direction merges a pair of them), so
    both rewards are -1 as soon as one line's are."""
    mask = (np.uint64(1) << np.uint64(4 * length)) - np.uint64(1)
    first = _U0
    second = _U0
    r_first = 0
    r_second = 0
    worst = 0
    for k in range(MAX_LINES):
        shift = np.uint64(4 * k * length)
        line = (x >> shift) & mask
        first |= np.uint64(line_result[d, line]) << shift
        second |= np.uint64(line_result[d + 1, line]) << shift
        r_first += line_reward[d, line]
        r_second += line_reward[d + 1, line]
        worst = min(worst, line_reward[d, line])
    if worst < 0:
        return first, second, -1, -1
    return first, second, r_first, r_second


@njit(inline='always')
def base_moves(a, rows, cols, line_result, line_reward, sym, moved, line_rewards):
    """The four moves of board ``a`` kept line by line, for :func:`moves_after_spawn`.

    Writes ``moved[d]`` (uint64[4], the board after move d, as :func:`moves`) and
    ``line_rewards[d, k]`` (int64[4, MAX_LINES], the merge points of line k: row k for left and
    right, column k for up and down; -1 on overflow; 0 for a line the board lacks). Returns the
    column-major ID of ``a``.
    """
    _, to_cols, from_cols = sym
    rmask = (np.uint64(1) << np.uint64(4 * cols)) - np.uint64(1)
    cmask = (np.uint64(1) << np.uint64(4 * rows)) - np.uint64(1)
    cm = _bytes_map(a, to_cols)
    moved[:] = _U0
    up = _U0
    down = _U0
    for k in range(MAX_LINES):
        shift = np.uint64(4 * k * cols)
        line = (a >> shift) & rmask
        moved[0] |= np.uint64(line_result[0, line]) << shift
        moved[1] |= np.uint64(line_result[1, line]) << shift
        line_rewards[0, k] = line_reward[0, line]
        line_rewards[1, k] = line_reward[1, line]
    for k in range(MAX_LINES):
        shift = np.uint64(4 * k * rows)
        line = (cm >> shift) & cmask
        up |= np.uint64(line_result[2, line]) << shift
        down |= np.uint64(line_result[3, line]) << shift
        line_rewards[2, k] = line_reward[2, line]
        line_rewards[3, k] = line_reward[3, line]
    moved[2] = _bytes_map(up, from_cols)
    moved[3] = _bytes_map(down, from_cols)
    return cm


@njit(inline='always')
def moves_after_spawn(a, cm, moved, line_rewards, cell, exponent, rows, cols, line_result,
                      line_reward, out, rewards):
    """:func:`moves` of ``a`` with tile 2^exponent spawned on the empty ``cell``, from the moves of
    ``a`` (:func:`base_moves`: ``cm``, ``moved``, ``line_rewards``): a spawn changes one row and one
    column, so only those two lines are moved again (the backward pass moves every spawn
    of every afterstate). Writes ``out`` and ``rewards`` exactly as :func:`moves` would."""
    r = cell // cols
    c = cell - r * cols
    e = np.uint64(exponent)
    rmask = (np.uint64(1) << np.uint64(4 * cols)) - np.uint64(1)
    cmask = (np.uint64(1) << np.uint64(4 * rows)) - np.uint64(1)
    row_shift = np.uint64(4 * r * cols)
    row = ((a >> row_shift) & rmask) | (e << np.uint64(4 * c))
    col_shift = np.uint64(4 * c * rows)
    col = ((cm >> col_shift) & cmask) | (e << np.uint64(4 * r))
    for d in range(2):
        out[d] = (moved[d] & ~(rmask << row_shift)) | (np.uint64(line_result[d, row]) << row_shift)
        rewards[d] = _replaced_total(line_rewards[d], r, line_reward[d, row])
    for d in range(2, 4):
        result = np.uint64(line_result[d, col])
        board = moved[d]
        for j in range(MAX_LINES):  # cell j of the column is cell (j, c) of the board (if any)
            place = np.uint64(4 * (j * cols + c))
            board = (board & ~(_U15 << place)) | (((result >> np.uint64(4 * j)) & _U15) << place)
        out[d] = board
        rewards[d] = _replaced_total(line_rewards[d], c, line_reward[d, col])


@njit
def _replaced_total(line_rewards, k, new):
    """Total reward of the lines (``line_rewards``, int64[MAX_LINES]) with line ``k``'s reward
    replaced by ``new``."""
    total = 0
    for j in range(MAX_LINES):
        total = _add_reward(total, new if j == k else line_rewards[j])
    return total


@njit
def _add_reward(total, line):
    """Sum of line rewards, -1 (overflow) as soon as one line overflows."""
    if total < 0 or line < 0:
        return -1
    return total + line


@njit(inline='always')
def _terms(mirrors, m):
    """Mirror ``m`` (0 or 1) of :attr:`Tables.mirrors` as a tuple (mask, left, right) x MAX_LINES:
    values the compiler can keep in registers across a loop (an array element it must reload
    whenever the loop writes to another array, which blocks vectorising the loop)."""
    t = mirrors[m]
    return (t[0, 0], t[1, 0], t[2, 0], t[0, 1], t[1, 1], t[2, 1], t[0, 2], t[1, 2], t[2, 2],
            t[0, 3], t[1, 3], t[2, 3])


@njit(inline='always')
def _transpose_terms(mirrors):
    """The transpose (:attr:`Tables.mirrors` ``[2]``) as a tuple of its 2 * MAX_LINES - 1 = 7
    (mask, left, right) terms (see :func:`_terms`)."""
    t = mirrors[2]
    return (t[0, 0], t[1, 0], t[2, 0], t[0, 1], t[1, 1], t[2, 1], t[0, 2], t[1, 2], t[2, 2],
            t[0, 3], t[1, 3], t[2, 3], t[0, 4], t[1, 4], t[2, 4], t[0, 5], t[1, 5], t[2, 5],
            t[0, 6], t[1, 6], t[2, 6])


@njit(inline='always')
def _term(x, t, j):
    return ((x & t[3 * j]) << t[3 * j + 1]) >> t[3 * j + 2]


@njit(inline='always')
def _mirror(x, t):
    """Image of ``x`` under the mirror whose :func:`_terms` are ``t`` (MAX_LINES = 4 terms)."""
    return _term(x, t, 0) | _term(x, t, 1) | _term(x, t, 2) | _term(x, t, 3)


@njit(inline='always')
def _transpose(x, t):
    """Transpose of the square board ``x``, ``t`` = :func:`_transpose_terms`."""
    return (_term(x, t, 0) | _term(x, t, 1) | _term(x, t, 2) | _term(x, t, 3) | _term(x, t, 4)
            | _term(x, t, 5) | _term(x, t, 6))


@njit(inline='always')
def _umin(x, y):
    return x if x < y else y


@njit(inline='always')
def _rectangle_min(x, left_right, up_down):
    """Minimum of ``x`` and its images under the two mirrors and the rotation by 180 degrees."""
    h = _mirror(x, left_right)
    return _umin(_umin(x, h), _umin(_mirror(x, up_down), _mirror(h, up_down)))


@njit(inline='always')
def _canonical(b, square, left_right, up_down, transpose):
    if not square:
        return _rectangle_min(b, left_right, up_down)
    return _umin(_rectangle_min(b, left_right, up_down),
                 _rectangle_min(_transpose(b, transpose), left_right, up_down))


@njit(inline='always')
def canonical_id(b, rows, cols, sym):
    """Minimum of the board's images under its symmetry group (``sym`` = :attr:`Tables.sym`): the
    rectangle group of ``b``, and for a square board also that of its transpose. For many boards
    :func:`canonicalize` is several times faster."""
    mirrors = sym[0]
    return _canonical(b, rows == cols, _terms(mirrors, 0), _terms(mirrors, 1),
                      _transpose_terms(mirrors))


@njit
def canonicalize(boards, rows, cols, sym):
    """Replace each board ID of ``boards`` (uint64[N]) by its :func:`canonical_id`, in place.

    The masks are read once, so LLVM vectorises the loop (0.9 against 6.9 ns per 4x3
    board; the kernels therefore collect the boards of a chunk and canonicalise them here rather
    than one by one)."""
    mirrors = sym[0]
    left_right = _terms(mirrors, 0)
    up_down = _terms(mirrors, 1)
    transpose = _transpose_terms(mirrors)
    square = rows == cols
    for i in range(boards.shape[0]):
        boards[i] = _canonical(boards[i], square, left_right, up_down, transpose)


@njit
def age_id(b, cells):
    """Sum of the tiles of board ``b`` (points)."""
    total = 0
    for i in range(cells):
        e = (b >> np.uint64(4 * i)) & _U15
        if e:
            total += 1 << e
    return total


_NIBBLE_ONES = np.uint64(0x1111111111111111)
_NIBBLE_PAIRS = np.uint64(0x0F0F0F0F0F0F0F0F)
_BYTE_ONES = np.uint64(0x0101010101010101)


@njit
def empty_cells(b, cells):
    """The empty cells of board ``b`` as a uint64 with bit 4i set for each empty cell i < ``cells``
    (branch-free: the forward pass spawns into them)."""
    occupied = (b | (b >> np.uint64(1)) | (b >> np.uint64(2)) | (b >> np.uint64(3))) & _NIBBLE_ONES
    return ~occupied & (_NIBBLE_ONES >> np.uint64(4 * (16 - cells)))


@njit
def count_empty(b, cells):
    """Number of empty cells of board ``b`` (``cells`` = rows * cols)."""
    per_byte = empty_cells(b, cells)
    per_byte = (per_byte + (per_byte >> np.uint64(4))) & _NIBBLE_PAIRS  # 0..2 in each byte
    return int((per_byte * _BYTE_ONES) >> np.uint64(56))  # the sum of the bytes, in the top byte


# ---------------------------------------------------------------------------------------------
# Python API on single boards (validating; for tests, the CLI and reports)

def encode(board):
    """Pack a board into its ID.

    Parameters
    ----------
    board : sequence of rows of tile values (0 = empty), e.g. ``[[2, 4, 0], [0, 8, 0]]``

    Returns
    -------
    int
        The board ID (cell i = row*cols + col in bits 4i..4i+3).

    Raises
    ------
    ValueError
        If the rows differ in length, or a tile is not 0 or a power of two in 2..2^15.
    """
    rows = [list(r) for r in board]
    if not rows or any(len(r) != len(rows[0]) for r in rows) or not rows[0]:
        raise ValueError(f"board {board!r} is not a rectangle of tiles")
    cols = len(rows[0])
    b = 0
    for r, row in enumerate(rows):
        for c, tile in enumerate(row):
            tile = int(tile)
            if tile == 0:
                continue
            e = tile.bit_length() - 1
            if tile < 2 or tile != 1 << e or e > MAX_EXPONENT:
                raise ValueError(f"tile {tile} at row {r}, column {c} is not allowed; allowed: "
                                 f"0 (empty) or a power of two from 2 to {1 << MAX_EXPONENT}")
            b |= e << (4 * (r * cols + c))
    return b


def decode(board_id, rows, cols):
    """Unpack a board ID into an int64 array of shape (rows, cols) of tile values (0 = empty)."""
    board_id = int(board_id)
    exps = [(board_id >> (4 * i)) & 15 for i in range(rows * cols)]
    return np.array([(1 << e) if e else 0 for e in exps], np.int64).reshape(rows, cols)


def move(board_id, direction, rows, cols):
    """Apply one move.

    Parameters
    ----------
    board_id : int
    direction : int
        Index into :data:`DIRECTIONS`.

    Returns
    -------
    (new_id, reward, changed) : (int, int, bool)
        Reward in points; ``changed`` is the move's legality.

    Raises
    ------
    TileOverflowError
        If a merge would make a tile above 2^15.
    """
    if direction not in range(4):
        raise ValueError(f"direction {direction!r} is not allowed; allowed: 0..3 ({DIRECTIONS})")
    out, rewards = np.empty(4, np.uint64), np.empty(4, np.int64)
    moves(np.uint64(board_id), rows, cols, *tables(rows, cols).kernel_args()[2:], out, rewards)
    new, reward = out[direction], rewards[direction]
    if reward < 0:
        raise TileOverflowError(f"move {DIRECTIONS[direction]} of board {int(board_id):#x} would make a "
                                f"tile above {1 << MAX_EXPONENT}; 4 bits per cell hold at most 2^15")
    return int(new), int(reward), int(new) != int(board_id)


def canonical(board_id, rows, cols):
    """Canonical ID: the minimum ID over the board's symmetry group."""
    return int(canonical_id(np.uint64(board_id), rows, cols, tables(rows, cols).sym))


def age(board_id):
    """Sum of the tiles (points)."""
    return int(age_id(np.uint64(board_id), 16))


def start_states(rows, cols, p2=0.9):
    """The random start: two spawns on the empty board, canonicalised.

    Returns
    -------
    ids : uint64[S]
        Sorted canonical IDs of the two-tile start boards.
    probs : float64[S]
        Their probabilities (summed over symmetric images); they sum to 1, and to at most 1 when
        added in index order (:func:`spawn.cap_sum`, :func:`spawn.expected_value`).
    """
    t = tables(rows, cols)
    n = rows * cols
    p = {1: p2, 2: 1.0 - p2}
    acc = {}
    for i in range(n):
        for j in range(i + 1, n):
            for a in (1, 2):
                for b in (1, 2):
                    prob = 2.0 * p[a] * p[b] / (n * (n - 1))
                    if prob == 0.0:
                        continue
                    cid = int(canonical_id(np.uint64((a << (4 * i)) | (b << (4 * j))), rows, cols, t.sym))
                    acc[cid] = acc.get(cid, 0.0) + prob
    ids = np.array(sorted(acc), np.uint64)
    return ids, cap_sum([acc[int(i)] for i in ids])
