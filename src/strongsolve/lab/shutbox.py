"""Shut the Box page: a position and a roll -> each legal choice's value and the best.

It reads the JSON files of ``strongsolve shutbox --policy --output`` (the workflow's
``results/shutbox_<n>/``) through :mod:`games.shutbox.saved` (verified against their checksums) and
shows what :func:`games.shutbox.advice.advise` returns, as ``strongsolve shutbox advise`` prints it:
every choice, the position after it, its value and the best one.
"""

from pathlib import Path

from flask import Blueprint, current_app, request

from ..games.shutbox.advice import advise
from ..games.shutbox.rules import ONE_DIE_SUM, roll_totals
from ..games.shutbox.saved import load_result, load_values
from ..store.errors import CorruptResultError
from .inputs import SEED_LIMIT, shown, whole_number
from .layout import esc, reload_on_change, render_page, workflow_command

blueprint = Blueprint("shutbox", __name__)


def result_files(results):
    """Shut the Box result JSONs under ``results`` (sorted list of Path)."""
    results = Path(results)
    return sorted(results.glob("shutbox_*/*.json")) if results.is_dir() else []


def load(path):
    """The result document of ``path``; ValueError naming the file when it cannot answer queries."""
    try:
        doc = load_result(path)
    except CorruptResultError as err:
        raise ValueError(str(err)) from None
    except OSError as err:
        raise ValueError(f"{path}: cannot be read ({err})") from None
    if "policy" not in doc:
        raise ValueError(f"{path}: saved without its policy table; solve it again with --policy, e.g. "
                         f"`strongsolve shutbox --rule {doc['rule']} --cards {doc['cards']} --faces "
                         f"{doc['faces']} --policy --output {path}`")
    return doc


def status_html(results):
    files = result_files(results)
    out = ["<h2>Shut the Box</h2><ul>"]
    for p in files:
        try:
            doc = load(p)
            out.append(f'<li><a href="/shutbox?file={esc(p.parent.name)}/{esc(p.name)}">'
                       f'{esc(p.parent.name)}/{esc(p.name)}</a> solved: {doc["rule"]}, '
                       f'{doc["cards"]} cards, value {doc["value"]} {doc["unit"]}</li>')
        except ValueError as err:
            out.append(f"<li>damaged: {esc(err)}</li>")
    if not files:
        out.append("<li>no Shut the Box result in this folder; solve it with "
                   f"<code>{esc(workflow_command(results, ['shutbox']))}</code></li>")
    return "\n".join(out) + "</ul>"


def _is_whole(text):
    try:
        whole_number(text, "", 0, SEED_LIMIT)
    except ValueError:
        return False
    return True


def _tiles(mask, n):
    return [t + 1 for t in range(n) if mask >> t & 1]


def _fmt(v):
    return f"{v:.10f}"


@blueprint.route("/shutbox")
def page():
    results = current_app.config["RESULTS"]
    files = result_files(results)
    errors = []
    if not files:
        return render_page("Shut the Box", errors=[
            f"no Shut the Box result in {results}; solve it with `{workflow_command(results, ['shutbox'])}`"])
    name = request.args.get("file", f"{files[0].parent.name}/{files[0].name}")
    path = next((p for p in files if f"{p.parent.name}/{p.name}" == name), None)
    if path is None:
        errors.append(f"no Shut the Box result {name!r} in {results}")
        path = files[0]
    try:
        doc = load(path)
    except ValueError as err:
        return render_page("Shut the Box", errors=errors + [str(err)])
    n, faces, flip = doc["cards"], doc["faces"], doc["rule"] == "flip-one"
    picked = request.args.getlist("tile")
    mask = 0 if flip else (1 << n) - 1
    if "tile" in request.args or "x" in request.args or "total" in request.args:
        mask = 0
        for t in picked:
            try:
                mask |= 1 << (whole_number(t, "tile", 1, n) - 1)
            except ValueError:  # '²' and '٣' are digits to Python, not tiles
                errors.append(f"tile {shown(t)} is not a tile of this game; allowed: 1..{n}")
    what = "set cards" if flip else "open tiles"
    options = "".join(f'<option{" selected" if p == path else ""}>{esc(p.parent.name)}/{esc(p.name)}</option>'
                      for p in files)
    boxes = "".join(f'<label><input type="checkbox" name="tile" value="{t}" id="tile-{t}"'
                    f'{" checked" if mask >> (t - 1) & 1 else ""}>{t}</label> ' for t in range(1, n + 1))
    form = [f'<form method="get" action="/shutbox"><label>Result <select name="file" id="file">{options}'
            f'</select></label> <p>{doc["rule"]}, {doc["objective"]}, {n} cards, {faces}-faced dice; '
            f'value from the start {doc["value"]} {doc["unit"]}</p><p>{what}: {boxes}</p>']
    body, table = [], ""
    if flip:
        x, y = request.args.get("x", "1"), request.args.get("y", "1")
        form.append(f'<p>roll <input name="x" id="x" size="3" value="{esc(x)}"> '
                    f'<input name="y" id="y" size="3" value="{esc(y)}"></p>')
        if "x" in request.args and not errors:
            try:
                xi, yi = (whole_number(d, "die", 1, faces) for d in (x, y))
            except ValueError:
                errors.append(f"roll {shown(x)} {shown(y)} is impossible; each die shows 1..{faces}")
            else:
                if mask == (1 << n) - 1:
                    errors.append("every card is set: the game is over, there is no roll")
                else:
                    _, value = load_values(path)
                    choices = advise("flip-one", doc["objective"], n, False, value,
                                     _tiles(((1 << n) - 1) ^ mask, n), (xi, yi))
                    rows = "".join(
                        f'<tr id="choice-{c["flip"] or 0}"{" class=best" if c["best"] else ""}><td>'
                        f'{"flip " + str(c["flip"]) if c["flip"] else "pass"}'
                        f'{" ← best" if c["best"] else ""}</td>'
                        f'<td>{" ".join(str(t) for t in range(1, n + 1) if t not in c["open_after"]) or "none"}'
                        f'</td><td class="value">{_fmt(c["value"])}</td></tr>' for c in choices)
                    table = ('<table class="values" id="choices"><tr><th>choice</th><th>set cards after'
                             '</th><th>expected rolls after this one</th></tr>' + rows + "</table>")
    else:
        total = request.args.get("total", "")
        form.append(f'<p>roll total <input name="total" id="total" size="3" value="{esc(total)}"></p>')
        if total and not errors:
            open_sum = sum(_tiles(mask, n))
            one = doc["one_die"] and open_sum <= ONE_DIE_SUM
            allowed = roll_totals(faces, 1 if one else 2)[0].tolist()
            if mask == 0:
                errors.append("every tile is shut: the game is over")
            elif not (_is_whole(total) and int(total) in allowed):
                errors.append(f"roll total {shown(total)} is impossible here; allowed: "
                              f"{allowed[0]}..{allowed[-1]} ({'one die' if one else 'two dice'})")
            else:
                _, value = load_values(path)
                choices = advise("standard", doc["objective"], n, doc["one_die"], value,
                                 _tiles(mask, n), total=int(total))
                rows = "".join(
                    f'<tr id="choice-{sum(1 << (t - 1) for t in c["shut"])}"'
                    f'{" class=best" if c["best"] else ""}><td>'
                    f'{"shut " + " ".join(map(str, c["shut"])) if c["shut"] else "game over"}'
                    f'{" ← best" if c["best"] else ""}</td>'
                    f'<td>{" ".join(map(str, c["open_after"])) or "none"}</td>'
                    f'<td class="value">{_fmt(c["value"])}</td></tr>' for c in choices)
                table = (f'<table class="values" id="choices"><tr><th>choice</th><th>open tiles after'
                         f'</th><th>{doc["unit"]}</th></tr>' + rows + "</table>")
    form.append('<button type="submit" id="go">Values</button></form>')
    body = form + [reload_on_change("file", "/shutbox", "file"), table]
    return render_page("Shut the Box", "\n".join(body), errors)

