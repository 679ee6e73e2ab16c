"""The answer of a solved Ludo race at a position and a roll: every legal choice with the mover's
win probability (used by ``strongsolve ludo advise`` and the lab's Ludo page).
"""

from collections import Counter
from pathlib import Path

import numpy as np

from . import encoding
from .encoding import _after_roll, _move_table
from .stages import values as value_solver


def advise(board, encoding, value, own, opponent, face):
    """Every legal choice of the player to move after rolling ``face``, valued from a solved race.

    Parameters
    ----------
    board : Board
    encoding : RaceEncoding
        Of the solved race (:func:`race_encoding` of the same board and piece count).
    value : float64[M*M]
        Win probability of the player to move at every node (:attr:`RaceSolution.value`).
    own, opponent : tuple of int
        Cells of the mover's and the opponent's pieces (any order).
    face : int
        The roll, 1..faces, with probability > 0.

    Returns
    -------
    list of dict
        Per choice, the moves in increasing cell order then the pass: ``move_from`` (cell of the
        piece moved, None for the pass), ``lands_on`` (its cell after the move, jumps taken; None
        for the pass), ``own_after``, ``opponent_after`` (cells), ``bonus_roll``
        and ``win_probability`` (of the mover, under optimal play afterwards); ``best`` is True on
        the first choice of highest win probability (the one the solver plays).

    Raises
    ------
    ValueError
        A cell a piece cannot rest on, a wrong piece count, pieces of both players on one cell that
        is not safe (0 and the goal hold any), a face not on the die, or a game already over.
    """
    x = encoding.node(own, opponent)
    if not 1 <= face <= board.faces or board.die[face - 1] == 0:
        raise ValueError(f"roll {face} is not a face of the die (faces 1..{board.faces} with "
                         f"probability > 0)")
    shared = sorted(set(own) & set(opponent) - {0, board.length} - set(board.safe))
    if shared:
        raise ValueError(f"position {','.join(map(str, own))}/{','.join(map(str, opponent))} is "
                         f"impossible: cell {shared[0]} holds pieces of both players, and it is not "
                         f"safe (safe cells: {', '.join(map(str, sorted(board.safe))) or 'none'}; 0 "
                         f"and {board.length} hold any), so the last piece to land there would have "
                         "captured the other")
    cells = encoding.cells
    goal = len(cells) - 1
    m = encoding.n_tuples
    mine, theirs = encoding.tuples[x // m], encoding.tuples[x % m]
    if (mine == goal).all() or (theirs == goal).all():
        raise ValueError(f"the game {tuple(own)}/{tuple(opponent)} is over: "
                         f"{'the mover' if (mine == goal).all() else 'the opponent'} has every "
                         "piece at the goal")
    move, capture_ok = _move_table(board, cells)
    p = mine.shape[0]
    own_out, opp_out = np.empty((p + 1, p), np.int64), np.empty((p + 1, p), np.int64)
    moved = np.empty(p + 1, np.int64)
    n = _after_roll(mine, theirs, face - 1, move, capture_ok, goal, board.pass_by_overshoot,
                    own_out, opp_out, moved)
    bonus = board.roll_again_on == face
    out = []
    for c in range(n):
        a, b = tuple(cells[own_out[c]].tolist()), tuple(cells[opp_out[c]].tolist())
        won = (own_out[c] == goal).all()
        if won:
            q = 1.0
        elif bonus:
            q = float(value[encoding.node(a, b)])
        else:
            q = 1.0 - float(value[encoding.node(b, a)])
        source = None if moved[c] < 0 else int(cells[moved[c]])
        # the moved piece's cell after the move: the one cell gained (none: it stayed put)
        gained = Counter(a) - Counter(int(v) for v in own)
        lands = None if source is None else next(iter(gained), source)
        out.append({"move_from": source, "lands_on": lands, "own_after": a,
                    "opponent_after": b, "bonus_roll": bool(bonus and not won),
                    "win_probability": q, "best": False})
    best = max(range(n), key=lambda i: out[i]["win_probability"])
    out[best]["best"] = True
    return out


def piece_count_message(result, position, roll, board, pieces, own, opp):
    """Why a position with another piece count than the saved race gets no advice, and the
    commands that answer what can be answered (the design's four-piece example).

    Parameters
    ----------
    result : str or Path
        The saved race (``ludo advise``'s RESULT).
    position, roll : str
        The position and roll as typed (``--position``, ``--roll``), repeated in the commands.
    board : rules.Board
    pieces : int
        Pieces per player of the saved race.
    own, opp : tuple of int
        The position's cells.

    Returns
    -------
    str
    """

    if len(own) != len(opp):
        return (f"position {position}: both players need the same number of pieces, got "
                f"{len(own)} and {len(opp)}")
    k = len(own)
    text = (f"position {position} has {k} piece(s) each, but {result} holds the race "
            f"of {pieces} piece(s) each")
    rest = set(board.rest_cells())
    off = sorted({c for c in (*own, *opp) if c not in rest})
    if off:
        jumps = ", ".join(f"{c} -> {board.jumps[c]}" for c in off if c in board.jumps)
        many = len(off) > 1
        text += (f"; {'cells' if many else 'cell'} {', '.join(map(str, off))} "
                 f"{'are not cells' if many else 'is not a cell'} a piece can rest on in this "
                 "board"
                 + (f" (jump {'sources' if many else 'source'}: {jumps})" if jumps else ""))
    values = Path(result).with_name(f"race_p{k}_values.zarr")  # the workflow's names
    if values.is_dir():
        return text + (f"; advise from the {k}-piece race saved beside it: `strongsolve ludo "
                       f"advise {values} --position {position} --roll {roll}`")
    largest = encoding.largest_race_pieces(board)
    sibling = Path(result).with_name(f"race_p{k}_policy.npz")
    if k <= largest:
        if sibling.is_file():
            return text + (f"; advise from the {k}-piece race saved beside it: `strongsolve ludo "
                           f"advise {sibling} --position {position} --roll {roll}`")
        return text + (f"; solve the {k}-piece race first: `strongsolve ludo race BOARD.yaml "
                       f"--pieces {k} --policy-out {sibling}`, then run `strongsolve ludo advise "
                       f"{sibling} --position {position} --roll {roll}`")
    text += (f". The {k}-piece game is not solved exactly: {encoding.race_positions(board, k):,} "
             f"positions on this board, more than the {encoding.MAX_RACE_NODES:,} the expansion "
             f"solver holds; {largest} piece(s) each is the largest race it solves here")
    need = value_solver.value_bytes(board, k, extrapolation=True)
    plain = value_solver.value_bytes(board, k)
    limit = value_solver.default_memory_limit()
    if need <= limit or plain <= limit:
        held, option = (need, "") if need <= limit else (plain, " --no-extrapolation")
        text += (f". The values solver holds it ({held / 1e9:.2f} GB): `strongsolve ludo race "
                 f"BOARD.yaml --pieces {k}{option} --values-out {values}`, then "
                 f"`strongsolve ludo advise {values} --position {position} --roll {roll}`")
    else:
        text += (f"; its values alone take {plain / 1e9:,.0f} GB, more than 80% of this machine's "
                 "memory")
    if k > pieces:  # a smaller race: advice on some of the pieces, in another game
        mine = [c for c in own if c in rest][:pieces]
        theirs = [c for c in opp if c in rest][:pieces]
        if len(mine) == pieces and len(theirs) == pieces:
            sub = f"{','.join(map(str, mine))}/{','.join(map(str, theirs))}"
            text += (f". Advice in the race of {pieces} piece(s) each, the other pieces left out "
                     f"(another game, not an answer for this position): `strongsolve ludo advise "
                     f"{result} --position {sub} --roll {roll}`")
    return text


def advise_position(result, position):
    """The advice interface every game shares (``games.<game>.advice.advise_position``): a saved
    result and a position in, every choice with its value out.

    Parameters
    ----------
    result : str or Path
        A saved race: a policy file (``--policy-out``) or a values layer (``--values-out``).
    position : dict
        ``{"own": cells of the mover's pieces, "opponent": the opponent's, "roll": face}``.

    Returns
    -------
    list of dict
        As :func:`advise`, each with ``choice`` (``"move c"`` or ``"pass"``) and ``value`` (the
        mover's win probability after it) and ``best``.
    """
    from .saved import load_race

    board, enc, value = load_race(result)
    out = advise(board, enc, value, tuple(position["own"]), tuple(position["opponent"]),
                 int(position["roll"]))
    for c in out:
        c["choice"] = "pass" if c["move_from"] is None else f"move {c['move_from']}"
        c["value"] = c["win_probability"]
    return out
