"""A drawing of a Ludo board as inline SVG, built on the server from the board definition.

The board is a :class:`games.ludo.rules.Board` (a board file of ``workflow/boards/``, or the board
saved with a race): cells 0..N laid out in rows that snake back and forth, the start (0) and the
goal (N) marked, safe cells tinted, cells no piece can rest on (jump sources) dashed, every jump an
arrow (a shortcut forward in green, a trap backward in red), the pieces of a position as discs (the
mover's blue, the opponent's orange) and the landing cell of each move outlined (the best move's
solid). Every element carries a class the lab's tests count: ``cell`` (with ``start``, ``goal``,
``safe``, ``no-rest``), ``jump shortcut`` / ``jump trap``, ``piece own`` / ``piece opponent``,
``landing`` (with ``best``).
"""

from collections import Counter
from html import escape

CELL = 52  # px, the side of a cell's square
GAP = 6  # px between cells of a row
ROW_GAP = 22  # px between rows (room for the jump arrows' ends)
MARGIN = 28  # px around the board (room for the arcs of jumps along the edge)
PIECE_R = 7  # px, radius of a piece's disc
COLOURS = {"own": "#1f5fbf", "opponent": "#e07b1a", "shortcut": "#2a8a3a", "trap": "#c8322d",
           "landing": "#8a5a00"}


def columns(length):
    """Cells per row of the drawing of a board of ``length`` N (N + 1 cells): 10, fewer on a board
    that small."""
    return max(1, min(10, length + 1))


def cell_origin(cell, length):
    """(x, y) in px of the top-left corner of ``cell``'s square: row ``cell // columns``, left to
    right on even rows and right to left on odd ones (the track snakes, so neighbours touch)."""
    cols = columns(length)
    row, i = divmod(cell, cols)
    col = i if row % 2 == 0 else cols - 1 - i
    return MARGIN + col * (CELL + GAP), MARGIN + row * (CELL + ROW_GAP)


def _centre(cell, length):
    x, y = cell_origin(cell, length)
    return x + CELL / 2, y + CELL / 2


def _jump_path(src, dst, length):
    """A quadratic curve from the centre of ``src`` to the edge of ``dst``'s square, bent to the
    left of its direction so that a jump along a row does not hide the cells between."""
    (x0, y0), (x1, y1) = _centre(src, length), _centre(dst, length)
    dx, dy = x1 - x0, y1 - y0
    dist = max((dx * dx + dy * dy) ** 0.5, 1.0)
    bend = 0.22 * dist + 12
    cx, cy = (x0 + x1) / 2 - dy / dist * bend, (y0 + y1) / 2 + dx / dist * bend
    # stop short of the target's centre (its number stays readable), along the curve's last tangent
    tx, ty = x1 - cx, y1 - cy
    t = max((tx * tx + ty * ty) ** 0.5, 1.0)
    ex, ey = x1 - tx / t * CELL * 0.32, y1 - ty / t * CELL * 0.32
    return f"M{x0:.1f},{y0:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}"


def _pieces(cell, count, side, length):
    """Discs of ``count`` pieces of ``side`` ("own" or "opponent") on ``cell``: the mover's in the
    square's upper row, the opponent's in the lower, spread over its width."""
    x, y = cell_origin(cell, length)
    cy = y + (CELL * 0.55 if side == "own" else CELL * 0.8)
    step = min(2 * PIECE_R + 2, (CELL - 2 * PIECE_R - 4) / max(count - 1, 1))
    x0 = x + CELL / 2 - step * (count - 1) / 2
    who = "the mover's" if side == "own" else "the opponent's"
    return [f'<circle class="piece {side}" data-cell="{cell}" cx="{x0 + k * step:.1f}" '
            f'cy="{cy:.1f}" r="{PIECE_R}" fill="{COLOURS[side]}" stroke="#fff" stroke-width="1.2">'
            f"<title>{who} piece on {cell}</title></circle>" for k in range(count)]


def board_svg(board, own=(), opponent=(), landings=()):
    """The board with a position on it, as an ``<svg id="board">`` element (a str of SVG markup).

    Parameters
    ----------
    board : games.ludo.rules.Board
        Its length N (cells 0..N), jumps, safe cells, and the cells a piece can rest on
        (:meth:`Board.rest_cells`; the others are jump sources and are drawn dashed).
    own, opponent : sequence of int
        Cells of the mover's and the opponent's pieces (any order; several on one cell are drawn
        side by side). Empty: no pieces drawn.
    landings : iterable of (int, int, bool)
        ``(move_from, lands_on, best)`` per move, as :func:`games.ludo.advice.advise` returns them
        (a pass has no landing and is left out by the caller). Moves landing on one cell share one
        outline, solid when one of them is the best.

    Returns
    -------
    str
        SVG markup: one ``g.cell`` per cell 0..N (id ``cell-<c>``), one ``path.jump`` per jump
        (``shortcut`` when the target is ahead of the source, ``trap`` when behind), one
        ``circle.piece`` per piece and one ``rect.landing`` per landing cell.

    Raises
    ------
    ValueError
        A piece or a landing on a cell outside 0..N.
    """
    n = board.length
    for cell in (*own, *opponent, *(c for _, c, _ in landings), *(c for c, _, _ in landings)):
        if not 0 <= cell <= n:
            raise ValueError(f"cell {cell} is outside the board 0..{n}")
    cols = columns(n)
    rows = n // cols + 1
    width = 2 * MARGIN + cols * CELL + (cols - 1) * GAP
    height = 2 * MARGIN + rows * CELL + (rows - 1) * ROW_GAP
    rest = set(board.rest_cells())
    out = [f'<svg id="board" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="board of {n + 1} cells" '
           'font-family="system-ui, sans-serif">',
           "<defs>" + "".join(
               f'<marker id="head-{kind}" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" '
               f'markerHeight="5" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
               f'fill="{COLOURS[kind]}"/></marker>' for kind in ("shortcut", "trap")) + "</defs>"]
    for c in range(n + 1):
        x, y = cell_origin(c, n)
        kinds = ["cell"]
        fill, label, what = "#f6f3ec", str(c), f"cell {c}"
        if c == 0:
            kinds.append("start")
            fill, label, what = "#fff0b8", "0 start", "cell 0: the start, where pieces enter"
        elif c == n:
            kinds.append("goal")
            fill, label, what = "#fff0b8", f"{n} goal", f"cell {n}: the goal"
        if c in board.safe:
            kinds.append("safe")
            fill = "#d4e9ff" if c not in (0, n) else fill
            what += " (safe: no capture here)"
        if c not in rest:
            kinds.append("no-rest")
            kind = "shortcut" if board.jumps.get(c, c) > c else "trap"
            what += f" ({kind} to {board.jumps[c]}: no piece rests here)" if c in board.jumps else ""
        dash = ' stroke-dasharray="4 3"' if c not in rest else ""
        out.append(f'<g class="{" ".join(kinds)}" id="cell-{c}"><title>{escape(what)}</title>'
                   f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" rx="5" fill="{fill}" '
                   f'stroke="#8d8576" stroke-width="1.2"{dash}/>'
                   f'<text x="{x + 4}" y="{y + 13}" font-size="11" fill="#444">{escape(label)}</text>'
                   + (f'<text x="{x + CELL - 4}" y="{y + 13}" font-size="10" text-anchor="end" '
                      f'fill="#1f5fbf">safe</text>' if "safe" in kinds and c not in (0, n) else "")
                   + "</g>")
    for src, dst in sorted(board.jumps.items()):
        kind = "shortcut" if dst > src else "trap"
        out.append(f'<path class="jump {kind}" data-from="{src}" data-to="{dst}" '
                   f'd="{_jump_path(src, dst, n)}" fill="none" stroke="{COLOURS[kind]}" '
                   f'stroke-width="2.4" stroke-opacity="0.8" marker-end="url(#head-{kind})">'
                   f"<title>{kind} {src} → {dst}</title></path>")
    by_cell = {}
    for src, dst, best in landings:
        froms, was_best = by_cell.get(dst, ([], False))
        by_cell[dst] = (froms + [src], was_best or bool(best))
    for dst, (froms, best) in sorted(by_cell.items()):
        x, y = cell_origin(dst, n)
        pieces = " and ".join(map(str, froms))
        style = 'stroke-width="4"' if best else 'stroke-width="2.5" stroke-dasharray="6 3"'
        out.append(f'<rect class="landing{" best" if best else ""}" data-cell="{dst}" '
                   f'data-from="{" ".join(map(str, froms))}" x="{x - 3}" y="{y - 3}" '
                   f'width="{CELL + 6}" height="{CELL + 6}" rx="7" fill="none" '
                   f'stroke="{COLOURS["landing"]}" {style}><title>the piece on {pieces} lands here'
                   f'{" (the best move)" if best else ""}</title></rect>')
    for side, cells in (("own", own), ("opponent", opponent)):
        for cell, count in sorted(Counter(cells).items()):
            out.extend(_pieces(cell, count, side, n))
    out.append("</svg>")
    return "".join(out)


def legend_html():
    """One line saying what the drawing's marks mean (HTML)."""
    dot = '<span style="color: {}">{}</span>'.format
    return (f'<p class="note" id="board-legend">{dot(COLOURS["own"], "●")} the mover\'s pieces, '
            f'{dot(COLOURS["opponent"], "●")} the opponent\'s; {dot(COLOURS["shortcut"], "→")} '
            f'shortcut, {dot(COLOURS["trap"], "→")} trap (a piece landing on the arrow\'s start '
            "flies to its end; dashed cells hold no piece); blue cells are safe; an outlined cell is "
            "where a move lands (solid: the best move).</p>")
