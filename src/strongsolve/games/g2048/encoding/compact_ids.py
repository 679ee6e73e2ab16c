"""Compact 2048 afterstate IDs for the Elias-Fano layers: base adjustment and cell omission.

The two ID tricks of the 4x3 solution (Kaneko & Yamashita 2025, "Strongly Solving 2048 4x3"),
applied to the board IDs of one age layer. A board ID holds cell ``i = row*cols + col`` as a 4-bit
exponent in bits ``4i..4i+3`` (0 = empty, k = tile 2^k), so a layer's universe is ``16**cells``.

- **Base adjustment.** At age ``a`` (the sum of the tiles) no tile exceeds ``a``, so no exponent
  exceeds ``m = min(15, floor(log2(a)))``. The cells are re-encoded as the digits of a base ``m + 1``
  number, cell 0 least significant, as in the board ID: ``code = sum_i e_i (m+1)^i``. Both codes
  compare boards cell by cell from the last cell down, so the order of IDs is kept, and the
  universe shrinks to ``(m+1)**cells``.
- **Cell omission.** The age determines one cell's tile from the others (``tile = age - sum of the
  other tiles``, which must be 0 or a power of two), so that cell is dropped and rebuilt on decode;
  the universe shrinks by one digit. We drop **cell 0, the least significant digit**, not the last
  cell: two distinct boards of the same age that agree on cells ``1..cells-1`` would agree on cell 0
  too, so boards that differ differ above cell 0, and dropping cell 0 (``code // base``) keeps their
  order strictly. Dropping the most significant cell does not keep it: on a 1x3 board at age 4,
  ``[0, 4, 0]`` (ID 0x020) < ``[2, 0, 2]`` (ID 0x101), but without the last cell their codes are
  0x20 > 0x01. So a sorted layer stays sorted and unique under every option, and can be Elias-Fano
  coded as it is, with no re-sort.

The functions take the board shape and the age of the layer; every ID must be a board of that
shape whose tiles sum to that age.
"""

import numpy as np
from numba import prange

from ....kernels.options import njit, njit_parallel
from ..rules.board import MAX_EXPONENT
from ..rules.shape import check_shape

_U0 = np.uint64(0)
_U15 = np.uint64(15)

# status codes of the kernels, per element
_OK = 0
_BAD_BITS = 1     # bits above the last cell (encode) or a code outside the universe (decode)
_BAD_AGE = 2      # the tiles do not sum to the age (the omitted tile is not 0 or a power of two)


def max_exponent(age):
    """Largest exponent a tile can have at ``age``: ``min(15, floor(log2(age)))``, 0 for age < 2.

    Raises
    ------
    ValueError
        If ``age`` is not a non-negative integer.
    """
    if isinstance(age, (bool, np.bool_)) or not isinstance(age, (int, np.integer)) or age < 0:
        raise ValueError(f"age {age!r} is not allowed; allowed: an integer >= 0 (sum of the tiles)")
    return min(MAX_EXPONENT, max(0, int(age).bit_length() - 1))


def _params(rows, cols, age, base_adjust, omit_cell):
    check_shape(rows, cols)
    m = max_exponent(age)
    for name, v in (("base_adjust", base_adjust), ("omit_cell", omit_cell)):
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {v!r}")
    base = m + 1 if base_adjust else 16
    return rows * cols, int(age), base, bool(omit_cell)


def universe(rows, cols, age, base_adjust=False, omit_cell=False):
    """Exclusive upper bound of the codes of the boards of one age layer.

    Parameters
    ----------
    rows, cols : int
        Board shape, 1..4 each.
    age : int
        Sum of the tiles of every board of the layer (points).
    base_adjust, omit_cell : bool
        The options of the module docstring.

    Returns
    -------
    int
        ``base ** digits`` with ``base = m + 1`` if ``base_adjust`` else 16, and ``digits = cells - 1``
        if ``omit_cell`` else ``cells``; at most ``2**64`` (a 4x4 board without options).

    Raises
    ------
    ValueError
        On a bad shape, age or option.
    """
    cells, _, base, omit = _params(rows, cols, age, base_adjust, omit_cell)
    return base ** (cells - omit)


@njit
def compact_id(b, cells, age, base, omit):
    """Code of board ID ``b`` (uint64), unchecked; for numba kernels.

    ``(cells, age, base, omit)`` come from :func:`kernel_params` (``age`` is not needed to code, but
    both directions take the same parameters). A backward-pass kernel codes a successor's canonical
    ID with this, then looks the code up in the Elias-Fano layer (``ef_index_of``).
    """
    b_base = np.uint64(base)
    code = _U0
    for i in range(cells - 1, 0 if omit else -1, -1):
        code = code * b_base + ((b >> np.uint64(4 * i)) & _U15)
    return code


@njit
def board_id(code, cells, age, base, omit):
    """``(board ID, ok)`` of a code (uint64, bool), for numba kernels; parameters as
    :func:`compact_id`. ``ok`` is False when the code has digits beyond the last cell or does not
    decode to a board of age ``age`` (then the ID is meaningless)."""
    b_base = np.uint64(base)
    c = code
    total = 0
    b = _U0
    for i in range(1 if omit else 0, cells):
        e = c % b_base
        c //= b_base
        if e != _U0:
            total += 1 << np.int64(e)
        b |= e << np.uint64(4 * i)
    if c != _U0:
        return b, False
    if not omit:
        return b, total == age
    # the omitted tile: 0 (empty) or a power of two 2..2^15
    rest = age - total
    if rest == 0:
        return b, True
    if rest < 2 or rest > (1 << 15) or (rest & (rest - 1)) != 0:
        return b, False
    # k = log2(rest) = the set bits of rest - 1 (< 2**15), counted without a loop
    x = rest - 1
    x -= (x >> 1) & 0x5555
    x = (x & 0x3333) + ((x >> 2) & 0x3333)
    x = (x + (x >> 4)) & 0x0F0F
    k = (x + (x >> 8)) & 0x1F
    return b | np.uint64(k), True


@njit
def _age_of(b, cells):
    total = 0
    for i in range(cells):
        e = (b >> np.uint64(4 * i)) & _U15
        if e != _U0:
            total += 1 << np.int64(e)
    return total


PARALLEL_MIN = 1 << 18
"""IDs from which a layer is coded on numba's threads; below it, on the calling thread. Starting
and joining the threads costs more than a small layer's work, much more when the other core is busy:
a 3x3 layer of 56,561 IDs took 131 ns per ID to encode on 2 threads against 7.8 on one, with another
process on the second core (every 3x3 layer is below 60,000 IDs)."""


def _encode_py(ids, cells, age, base, omit, out, status):
    top = np.uint64(4 * cells)
    for t in prange(ids.shape[0]):
        b = ids[t]
        out[t] = compact_id(b, cells, age, base, omit)
        if cells < 16 and (b >> top) != _U0:
            status[t] = _BAD_BITS
        elif _age_of(b, cells) != age:
            status[t] = _BAD_AGE
        else:
            status[t] = _OK


_encode = njit(_encode_py)
_encode_parallel = njit_parallel(_encode_py)


def _decode_py(codes, cells, age, base, omit, limit, out, status):
    # limit: the universe, or 0 when it is 2**64 (every code is inside). ``out`` may be ``codes``
    # (each place is read before it is written); a bad code's place is left as it was, so that the
    # error can name the code
    for t in prange(codes.shape[0]):
        code = codes[t]
        b, ok = board_id(code, cells, age, base, omit)
        if limit != _U0 and code >= limit:
            status[t] = _BAD_BITS
        elif not ok:
            status[t] = _BAD_AGE
        else:
            status[t] = _OK
            out[t] = b


_decode = njit(_decode_py)
_decode_parallel = njit_parallel(_decode_py)


def kernel_params(rows, cols, age, base_adjust=False, omit_cell=False):
    """``(cells, age, base, omit)``: the arguments :func:`compact_id` and :func:`board_id` take
    after the ID or code, validated like :func:`universe`."""
    return _params(rows, cols, age, base_adjust, omit_cell)


def _uint64_input(values, name):
    values = np.asarray(values)
    if values.ndim != 1 or (values.size and values.dtype != np.uint64):
        raise ValueError(f"{name} must be a one-dimensional uint64 array, got "
                         f"{values.dtype}{list(values.shape)}")
    return np.ascontiguousarray(values, np.uint64)


def encode_ids(ids, rows, cols, age, base_adjust=False, omit_cell=False):
    """Code the board IDs of one age layer.

    Parameters
    ----------
    ids : uint64[k]
        Board IDs (4 bits per cell), every one of age ``age``.
    rows, cols, age, base_adjust, omit_cell
        As in :func:`universe`.

    Returns
    -------
    uint64[k]
        The codes, each below :func:`universe`; strictly increasing if ``ids`` is.

    Raises
    ------
    ValueError
        If an ID has bits above the last cell or its tiles do not sum to ``age`` (the message names
        the first such ID and its position), or on bad parameters.
    """
    cells, age, base, omit = _params(rows, cols, age, base_adjust, omit_cell)
    ids = _uint64_input(ids, "ids")
    out = np.empty_like(ids)
    status = np.empty(ids.shape[0], np.int8)
    (_encode_parallel if ids.shape[0] >= PARALLEL_MIN else _encode)(ids, cells, age, base, omit, out, status)
    bad = np.flatnonzero(status)
    if bad.size:
        t = int(bad[0])
        if status[t] == _BAD_BITS:
            why = f"has bits above the last cell of a {rows}x{cols} board"
        else:
            why = f"has tiles summing to {_age_of(ids[t], cells)}, not the layer's age {age}"
        raise ValueError(f"board ID {int(ids[t]):#x} at position {t} {why}")
    return out


def decode_ids(codes, rows, cols, age, base_adjust=False, omit_cell=False, in_place=False):
    """Rebuild the board IDs from the codes of :func:`encode_ids` (same parameters).

    Parameters
    ----------
    codes : uint64[k]
    in_place : bool
        Write the IDs over ``codes`` (a contiguous uint64 array the caller no longer needs) instead
        of a new array: a 4x3 layer of 3.5e7 afterstates then needs 280 MB less while it is read.

    Returns
    -------
    uint64[k]
        The board IDs (``codes`` itself when ``in_place``).

    Raises
    ------
    ValueError
        If a code is outside :func:`universe`, or does not decode to a board of age ``age`` (with
        ``omit_cell``: the omitted tile would not be 0 or a power of two); the message names the
        first such code and its position. With ``in_place``, also if ``codes`` is not a contiguous
        uint64 array (it would be copied).
    """
    cells, age, base, omit = _params(rows, cols, age, base_adjust, omit_cell)
    given = codes
    codes = _uint64_input(codes, "codes")
    if in_place and codes is not given:
        raise ValueError("decode_ids(in_place=True) needs a contiguous uint64 array of codes, got "
                         f"{np.asarray(given).dtype}{list(np.shape(given))}; pass in_place=False")
    out = codes if in_place else np.empty_like(codes)
    status = np.empty(codes.shape[0], np.int8)
    limit = base ** (cells - omit)
    (_decode_parallel if codes.shape[0] >= PARALLEL_MIN else _decode)(
        codes, cells, age, base, omit, np.uint64(limit % (1 << 64)), out, status)
    bad = np.flatnonzero(status)
    if bad.size:
        t = int(bad[0])
        if status[t] == _BAD_BITS:
            why = f"is outside the universe {limit}"
        else:
            why = f"does not decode to a board of age {age}"
        raise ValueError(f"code {int(codes[t])} at position {t} {why}")
    return out
