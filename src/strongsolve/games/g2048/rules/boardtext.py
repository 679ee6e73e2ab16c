"""2048 boards as text: the one-line form the CLI reads (``"2 4 . / . 8 . / . . 2"``) and grids.

Rows are separated by ``/``, tiles by spaces; a tile is a number (its value, a power of two >= 2)
and an empty cell is ``.`` or ``0``.
"""

from .board import MAX_EXPONENT, decode, encode


def parse_board(text, rows, cols):
    """Read a board written as rows separated by ``/``.

    Parameters
    ----------
    text : str
        E.g. ``"2 4 . / . 8 . / . . 2"``.
    rows, cols : int
        The board shape the text must have.

    Returns
    -------
    int
        The board ID (cell i = row*cols + col in bits 4i..4i+3).

    Raises
    ------
    ValueError
        If the text has another shape than ``rows x cols``, or a tile is not ``.``, ``0`` or a
        power of two from 2 to 2^15; the message names the bad row or tile.
    """
    lines = [line.split() for line in str(text).split("/")]
    if len(lines) != rows:
        raise ValueError(f"board {text!r} has {len(lines)} rows separated by '/'; this run is "
                         f"{rows}x{cols}, so {rows} rows of {cols} tiles are needed")
    grid = []
    for r, line in enumerate(lines):
        if len(line) != cols:
            raise ValueError(f"row {r + 1} of board {text!r} has {len(line)} tiles; this run is "
                             f"{rows}x{cols}, so every row needs {cols} tiles ('.' or 0 for empty)")
        row = []
        for c, tile in enumerate(line):
            value = 0 if tile == "." else _tile_value(tile)
            if value is None:
                raise ValueError(f"tile {tile!r} at row {r + 1}, column {c + 1} is not allowed; "
                                 f"allowed: a power of two from 2 to {1 << MAX_EXPONENT}, or '.' or "
                                 "0 for an empty cell")
            row.append(value)
        grid.append(row)
    return encode(grid)


def _tile_value(token):
    """The tile value of a token, or None if it is not 0 or a power of two in 2..2^15."""
    if not (token.isascii() and token.isdigit()):
        return None
    value = int(token)
    if value == 0 or (value >= 2 and value & (value - 1) == 0 and value <= 1 << MAX_EXPONENT):
        return value
    return None


def format_board(board_id, rows, cols):
    """The one-line form of a board, readable by :func:`parse_board` (``"2 4 . / . 8 ."``)."""
    grid = decode(board_id, rows, cols)
    return " / ".join(" ".join(str(v) if v else "." for v in row) for row in grid)


def draw_board(board_id, rows, cols, indent="  "):
    """The board as a grid, one line per row, tiles right-aligned (a multi-line string)."""
    grid = decode(board_id, rows, cols)
    width = max(1, max(len(str(v)) for v in grid.ravel()))
    return "\n".join(indent + " ".join((str(v) if v else ".").rjust(width) for v in row)
                     for row in grid)
