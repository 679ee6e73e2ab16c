"""Ludo page: a race position and a roll -> each piece's win probability and the best piece.

It reads what ``strongsolve ludo race --output R.json --policy-out R_policy.npz`` saved (the
workflow's ``results/ludo_<board>/race_p<k>.json`` and ``race_p<k>_policy.npz``): the board from the
JSON, the win probability of every position and the chosen piece per position and roll from the
npz (verified through :func:`games.ludo.saved.load_policy`). The choices, their values and the best
one are what :func:`games.ludo.advice.advise` returns (as `strongsolve ludo advise`): nothing is
solved again here, no expansion is built. Below them, a drawing of the board with the position's
pieces and each move's landing cell (:func:`ludo_board.board_svg`).
"""

from functools import lru_cache
from pathlib import Path

from flask import Blueprint, current_app, request

from ..games.ludo.advice import advise
from ..games.ludo.saved import load_policy, load_summary
from ..store.errors import CorruptResultError
from .inputs import SEED_LIMIT, shown, whole_number
from .layout import esc, reload_on_change, render_page, workflow_command
from .ludo_board import board_svg, legend_html

blueprint = Blueprint("ludo", __name__)


def race_files(results):
    """Ludo race result JSONs under ``results`` (sorted list of Path)."""
    results = Path(results)
    return sorted(results.glob("ludo_*/race_p*.json")) if results.is_dir() else []


def policy_path(path):
    """The policy file saved beside a race JSON (``race_p2.json`` -> ``race_p2_policy.npz``)."""
    path = Path(path)
    return path.with_name(path.stem + "_policy.npz")


@lru_cache(maxsize=4)
def _load(path, stamp):
    doc = load_summary(path)
    board, encoding, saved = load_policy(policy_path(path))
    if board.to_mapping() != doc["board"] or encoding.tuples.shape[1] != doc["pieces"]:
        raise ValueError(f"{policy_path(path)} does not belong to the board of {path}")
    return doc, board, encoding, saved


def load(path):
    """(result document, board, race encoding, saved arrays) of a race JSON; ValueError naming the file
    and the command that rebuilds it when the JSON or its policy file is missing or unreadable."""
    path = Path(path)
    npz = policy_path(path)
    if not npz.is_file():
        raise ValueError(f"{path} has no saved policy {npz.name}; rebuild both with `strongsolve ludo "
                         f"race BOARD.yaml --pieces N --policy-out {npz} --output {path}` (or the "
                         "workflow)")
    try:
        return _load(str(path), (path.stat().st_mtime_ns, npz.stat().st_mtime_ns))
    except CorruptResultError as err:
        raise ValueError(str(err)) from None
    except (OSError, KeyError, ValueError) as err:
        raise ValueError(f"{path}: cannot be read ({err})") from None


def status_html(results):
    files = race_files(results)
    out = ["<h2>Ludo</h2><ul>"]
    for p in files:
        try:
            load(p)  # verified here, so that a damaged race is listed as damaged with its repair
        except ValueError as err:
            out.append(f"<li>damaged: {esc(err)}</li>")
        else:
            out.append(f'<li><a href="/ludo?file={esc(p.parent.name)}/{esc(p.name)}">'
                       f'{esc(p.parent.name)}/{esc(p.name)}</a> solved</li>')
    if not files:
        out.append("<li>no Ludo race in this folder; solve it with "
                   f"<code>{esc(workflow_command(results, ['ludo']))}</code></li>")
    return "\n".join(out) + "</ul>"


def _cells(text, what, pieces):
    parts = [t for t in text.replace(" ", "").split(",") if t]
    try:
        if len(parts) != pieces:
            raise ValueError
        return [whole_number(t, "cell", 0, SEED_LIMIT) for t in parts]
    except ValueError:  # '²' is a digit to Python, not a cell
        raise ValueError(f"{what} {shown(text)} is not {pieces} cell number(s) separated by "
                         "commas") from None


@blueprint.route("/ludo")
def page():
    results = current_app.config["RESULTS"]
    files = race_files(results)
    if not files:
        return render_page("Ludo", errors=[
            f"no Ludo race in {results}; solve it with `{workflow_command(results, ['ludo'])}`"])
    errors = []
    name = request.args.get("file", f"{files[0].parent.name}/{files[0].name}")
    path = next((p for p in files if f"{p.parent.name}/{p.name}" == name), None)
    if path is None:
        errors.append(f"no Ludo race {name!r} in {results}")
        path = files[0]
    try:
        doc, board, encoding, saved = load(path)
    except ValueError as err:
        return render_page("Ludo", errors=errors + [str(err)])
    pieces = doc["pieces"]
    zero = ",".join(["0"] * pieces)
    own_t, opp_t = request.args.get("own", zero), request.args.get("opponent", zero)
    face_t = request.args.get("roll", "1")
    faces = saved["faces"].tolist()
    options = "".join(f'<option{" selected" if p == path else ""}>{esc(p.parent.name)}/{esc(p.name)}'
                      "</option>" for p in files)
    body = [f'<form method="get" action="/ludo"><label>Race <select name="file" id="file">{options}'
            f'</select></label><p>{pieces} piece(s) each on a board of length {doc["board"]["length"]}; '
            f'the first player wins with probability {doc["win_probability"]:.10f} under optimal play. '
            f'Cells a piece can rest on: {", ".join(map(str, encoding.cells.tolist()))}.</p>'
            f'<p>mover\'s pieces <input name="own" id="own" value="{esc(own_t)}"> opponent\'s pieces '
            f'<input name="opponent" id="opponent" value="{esc(opp_t)}"> roll <input name="roll" '
            f'id="roll" size="3" value="{esc(face_t)}"> <button type="submit" id="go">Values</button>'
            "</p></form>", reload_on_change("file", "/ludo", "file")]
    drawn = dict(own=(), opponent=(), landings=())  # the drawing's pieces: the position once valid
    if "own" in request.args:
        try:
            own = _cells(own_t, "mover's pieces", pieces)
            opp = _cells(opp_t, "opponent's pieces", pieces)
            try:
                face = whole_number(face_t, "roll", 0, SEED_LIMIT)
            except ValueError:
                raise ValueError(f"roll {shown(face_t)} is not a die face; allowed: {faces}") from None
            choices = advise(board, encoding, saved["value"], own, opp, face)
            node = encoding.node(own, opp)
            drawn = dict(own=own, opponent=opp, landings=[
                (c["move_from"], c["lands_on"], c["best"]) for c in choices if c["move_from"] is not None])
            rows = "".join(
                f'<tr id="piece-{c["move_from"] if c["move_from"] is not None else "pass"}"'
                f'{" class=best" if c["best"] else ""}><td>'
                f'{"move the piece on " + str(c["move_from"]) if c["move_from"] is not None else "pass"}'
                f'{" ← best" if c["best"] else ""}</td>'
                f'<td class="lands">{"" if c["lands_on"] is None else c["lands_on"]}</td>'
                f'<td class="value">{c["win_probability"]:.10f}</td></tr>' for c in choices)
            body.append(f'<p>position value (mover to play, before the roll): <span id="value">'
                        f'{saved["value"][node]:.10f}</span></p><table class="values" id="choices">'
                        "<tr><th>choice</th><th>lands on</th><th>mover's win probability</th></tr>" + rows + "</table>")
        except ValueError as err:
            errors.append(str(err))
    body.append(board_svg(board, **drawn) + legend_html())
    return render_page("Ludo", "\n".join(body), errors)
