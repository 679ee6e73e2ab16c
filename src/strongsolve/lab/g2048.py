"""2048 page: pick a solved run, enter a board by clicking cells, see each move's value; play.

Numbers come from :class:`strongsolve.games.g2048.advice.Solution` (``Solution.query``, the
function behind ``strongsolve 2048 query``) and are printed with the CLI's own formatting.
"""

import random
from functools import lru_cache
from pathlib import Path

from flask import Blueprint, current_app, request

from ..games.g2048.rules.board import DIRECTIONS, decode, encode, move, start_states
from ..games.g2048.rules.boardtext import format_board, parse_board
from ..games.g2048.advice import Solution, format_value
from ..games.g2048.move_table import move_table
from ..games.g2048.hints import inferred_command
from ..store.errors import CorruptLayerError
from .inputs import SEED_LIMIT, decimal_number, whole_number
from .layout import esc, reload_on_change, render_page, workflow_command

blueprint = Blueprint("g2048", __name__)

POINTS_LIMIT = 1e12  # the points a game in the URL may carry


def run_dirs(results):
    """2048 run directories under ``results`` (sorted list of Path): those with a solution.json, a
    first afterstate layer, or a first layer of the optimal-play store (a store alone)."""
    results = Path(results)
    if not results.is_dir():
        return []
    return sorted(p for p in results.iterdir() if p.is_dir() and (
        (p / "solution.json").is_file() or (p / "afterstates" / "age_000004.zarr").is_dir()
        or (p / "policy" / "age_000004.zarr").is_dir()))


@lru_cache(maxsize=8)
def _solution(path, stamp):
    # one Solution (and its layer cache) per run directory; ``stamp`` renews it when the run changes
    return Solution(path)


def solution(path):
    """The cached :class:`Solution` of a run directory."""
    p = Path(path)
    doc = p / "solution.json"
    return _solution(str(p), doc.stat().st_mtime_ns if doc.is_file() else 0)


def _unsolved_reason(path):
    """None when the run at ``path`` is fully solved, else why not and the command that solves it."""
    try:
        sol = solution(path)
        if sol.solved or sol.policy_only:
            return None
    except Exception as err:  # noqa: BLE001 - any unreadable run is reported, not raised
        return f"{path.name}: cannot be read ({err})"
    command = inferred_command(path, to_last_age=True) or workflow_command(path.parent, ["g2048"])
    return (f"{path.name}: not solved to the last age ({len(sol.missing_values())} value layers "
            f"missing); solve the rest with `{command}`")


def status_html(results):
    """Home-page section: solved runs, unsolved runs with their commands."""
    runs = run_dirs(results)
    out = ["<h2>2048</h2><ul>"]
    for p in runs:
        reason = _unsolved_reason(p)
        state = "optimal-play store only: best moves" if reason is None and solution(p).policy_only \
            else "solved"
        out.append(f'<li><a href="/2048?run={esc(p.name)}">{esc(p.name)}</a> {state}</li>'
                   if reason is None else f"<li>{esc(reason)}</li>")
    if not runs:
        out.append("<li>no 2048 run in this folder; solve the 3x3 board with "
                   f"<code>{esc(workflow_command(results, ['g2048']))}</code></li>")
    return "\n".join(out) + "</ul>"


def _board_html(board_id, rows, cols, editable):
    grid = decode(board_id, rows, cols)
    cells = []
    for r in range(rows):
        tds = "".join(f'<td id="cell-{r}-{c}" data-v="{int(v)}"'
                      f'{" class=big" if v > 64 else ""}>{int(v) if v else ""}</td>'
                      for c, v in enumerate(grid[r]))
        cells.append(f"<tr>{tds}</tr>")
    attrs = ' id="board" title="click: next tile, shift-click: previous"' if editable else ' id="board"'
    return f'<table class="board"{attrs}>{"".join(cells)}</table>'


SCRIPT = """<script>
// clicking a cell steps its tile through 0, 2, 4, ... (shift-click steps back); the text field
// holds the board in the CLI's form, which the form submits
document.querySelectorAll('#board td').forEach(function (td) {
  td.addEventListener('click', function (ev) {
    var v = parseInt(td.dataset.v || '0');
    if (ev.shiftKey) { v = v <= 2 ? 0 : v / 2; } else { v = v === 0 ? 2 : Math.min(v * 2, 32768); }
    td.dataset.v = v; td.textContent = v ? v : ''; td.className = v > 64 ? 'big' : '';
    var rows = [];
    document.querySelectorAll('#board tr').forEach(function (tr) {
      var row = [];
      tr.querySelectorAll('td').forEach(function (c) { row.push(c.dataset.v !== '0' ? c.dataset.v : '.'); });
      rows.push(row.join(' '));
    });
    document.getElementById('board-text').value = rows.join(' / ');
  });
});
</script>"""


def _moves_table(q, objective, hints=True):
    """The moves of a query as :func:`advice.move_table` words them; with ``hints``, the best
    moves marked (every one of them when they tie)."""
    if not q["moves"]:
        return '<p id="game-over">no legal move: the game is over</p>'
    table = move_table(q, objective)
    rows = []
    for m in table["rows"]:
        best = m["best"] and hints
        mark = (" ← tie" if len(table["best"]) > 1 else " ← best") if best else ""
        rows.append(f'<tr id="move-{m["move"]}"{" class=best" if best else ""}>'
                    f'<td>{m["move"]}{mark}</td><td class="reward">{m["reward"]}</td>'
                    f'<td class="afterstate">{m["afterstate_value"]}</td>'
                    f'<td class="total">{m["total"]}</td></tr>')
    tie = f'<p id="tie">{esc(table["tie"])}</p>' if table["tie"] and hints else ""
    return ('<table class="values" id="moves"><tr><th>move</th><th>reward</th>'
            "<th>afterstate value</th><th>total</th></tr>" + "".join(rows) + "</table>" + tie
            + f'<p class="note" id="legend">{esc(table["legend"])}</p>')


def _run_picker(runs, chosen):
    options = "".join(f'<option{" selected" if p.name == chosen else ""}>{esc(p.name)}</option>'
                      for p in runs)
    return f'<label>Run <select name="run" id="run">{options}</select></label>'


def _pick_run(errors):
    """(list of solved run dirs, chosen dir or None); an unsolved or unknown choice adds an error."""
    results = current_app.config["RESULTS"]
    runs = [p for p in run_dirs(results) if _unsolved_reason(p) is None]
    name = request.args.get("run")
    if name is not None and name not in [p.name for p in runs]:
        reason = _unsolved_reason(Path(results) / name) if (Path(results) / name) in run_dirs(results) \
            else f"no 2048 run named {name!r} in {results}"
        errors.append(f"run {name!r} cannot be used: {reason}")
    if not runs:
        errors.append("no solved 2048 run in " + str(results) + "; solve the 3x3 board with `"
                      + workflow_command(results, ["g2048"]) + "`")
        # the runs that are there but cannot be used, each with why (a damaged file and its repair)
        errors.extend(_unsolved_reason(p) for p in run_dirs(results) if p.name != name)
        return runs, None
    chosen = next((p for p in runs if p.name == name), runs[0])
    return runs, chosen


@blueprint.route("/2048")
def query_page():
    errors = []
    runs, chosen = _pick_run(errors)
    if chosen is None:
        return render_page("2048", errors=errors)
    sol = solution(chosen)
    text = request.args.get("board", "")
    board_id, q, best = None, None, None
    if "board" in request.args:
        try:
            if not text.strip():
                raise ValueError("no board given: click the cells to place tiles, or type one "
                                 "such as '2 . . / . . 4'")
            board_id = parse_board(text, sol.rows, sol.cols)
            if sol.policy_only:
                best = _store_best(sol, board_id)
            else:
                q = sol.query(board_id)
        except (ValueError, CorruptLayerError) as err:
            errors.append(str(err))
    shown = board_id if board_id is not None else 0
    unit = "expected future points" if sol.objective == "score" else f"P(make {sol.target_tile})"
    body = [f'<form method="get" action="/2048" id="query-form">{_run_picker(runs, chosen.name)} '
            f'<input name="board" id="board-text" size="40" '
            f'value="{esc(text or format_board(0, sol.rows, sol.cols))}"> '
            '<button id="query" type="submit">Values</button></form>',
            '<p class="note">Click a cell for the next tile, shift-click for the previous one. '
            f'<a href="/2048/play?run={esc(chosen.name)}" id="play-link">Play a game</a></p>',
            _board_html(shown, sol.rows, sol.cols, editable=True), SCRIPT,
            reload_on_change("run", "/2048", "run")]
    if best is not None:  # a store alone: its move, and what it cannot tell
        body.append(f'<p>best move from the optimal-play store: <b id="best">{esc(best)}</b></p>'
                    f'<p class="error" id="caveat">{esc(sol.unreachable_caveat())}</p>')
    if q is not None:
        body.append(f'<p>state of age {q["age"]}: value <span id="value">{move_table(q, sol.objective)["value"]}'
                    f'</span> ({unit})</p>' + _moves_table(q, sol.objective))
    return render_page("2048", "\n".join(body), errors)


def _store_best(sol, board_id):
    """The best move of ``board_id`` from the run's optimal-play store (a run holding only it), as
    ``strongsolve 2048 query --best-only`` gives it ("none" when no move is legal)."""
    from ..games.g2048.stages.policy import PolicyStore

    best = sol.best_move(board_id, policy=PolicyStore(sol.run))
    return best if best is not None else "none: no legal move, the game is over"


def _spawn(after, rows, cols, p2, rng):
    """A random tile (2 with probability p2, else 4) in a random empty cell of ``after``."""
    grid = decode(after, rows, cols).tolist()
    empty = [(r, c) for r in range(rows) for c in range(cols) if grid[r][c] == 0]
    r, c = rng.choice(empty)
    grid[r][c] = 2 if rng.random() < p2 else 4
    return encode(grid)


@blueprint.route("/2048/play")
def play_page():
    """A game against chance: the state travels in the URL (board, points, seed), so the server
    keeps nothing; each move spawns a tile drawn from a generator seeded by the seed and the
    move count."""
    errors = []
    runs, chosen = _pick_run(errors)
    if chosen is None:
        return render_page("Play 2048", errors=errors)
    sol = solution(chosen)
    hints = request.args.get("hints", "1") == "1"
    try:
        seed = whole_number(request.args.get("seed", str(random.randrange(1 << 30))), "seed", 0,
                            SEED_LIMIT)
        # points a game can hold: far above any expected score, far below float's range
        points = decimal_number(request.args.get("points", "0"), "points", 0, POINTS_LIMIT)
        step = whole_number(request.args.get("step", "0"), "move number", 0, SEED_LIMIT)
        text = request.args.get("board")
        if text:
            board = parse_board(text, sol.rows, sol.cols)
        else:
            ids, probs = start_states(sol.rows, sol.cols, sol.p2)
            board = int(random.Random(seed).choices(list(ids), weights=list(probs))[0])
        chosen_move = request.args.get("move")
        if chosen_move:
            if chosen_move not in DIRECTIONS:
                raise ValueError(f"move {chosen_move!r} is unknown; allowed: {', '.join(DIRECTIONS)}")
            after, reward, legal = move(board, DIRECTIONS.index(chosen_move), sol.rows, sol.cols)
            if not legal:
                raise ValueError(f"move {chosen_move} changes nothing on "
                                 f"{format_board(board, sol.rows, sol.cols)}")
            if not sol.target_tile:
                points += reward
            step += 1
            board = _spawn(after, sol.rows, sol.cols, sol.p2, random.Random(f"{seed}:{step}"))
        q = sol.query(board)
    except ValueError as err:
        return render_page("Play 2048", errors=[str(err)])
    expected = sol.expected_score()
    f = lambda v: format_value(v, sol.objective)  # noqa: E731
    state = f"run={esc(chosen.name)}&seed={seed}&step={step}&points={points:g}&hints={int(hints)}" \
            f"&board={esc(format_board(board, sol.rows, sol.cols))}"
    buttons = "".join(f'<a class="mv" id="play-{d}" href="/2048/play?{state}&move={d}">{d}</a> '
                      for d in DIRECTIONS if any(m["move"] == d for m in q["moves"]))
    comparison = (f'<p>points so far <span id="points">{points:g}</span>; expected from here with '
                  f'optimal play <span id="projected">{f(points + q["value"])}</span>; optimal '
                  f'expected score from the start <span id="optimal">{f(expected)}</span></p>'
                  if sol.objective == "score" else
                  f'<p>P(make {sol.target_tile}) from here <span id="projected">{f(q["value"])}</span>;'
                  f' from the start <span id="optimal">{f(expected)}</span></p>')
    toggle = state.replace(f"hints={int(hints)}", f"hints={int(not hints)}")
    body = [f"<p>{chosen.name}, move {step}. {buttons or 'Game over.'} "
            f'<a href="/2048/play?{toggle}" id="hints-toggle">{"hide" if hints else "show"} hints</a> '
            f'<a href="/2048/play?run={esc(chosen.name)}" id="new-game">new game</a></p>',
            _board_html(board, sol.rows, sol.cols, editable=False), comparison]
    if hints:
        body.append(_moves_table(q, sol.objective))
    body.append('<p class="note">Arrow keys play the moves.</p>' + ARROW_SCRIPT)
    return render_page("Play 2048", "\n".join(body), errors)


ARROW_SCRIPT = """<script>
// an arrow key follows the link of its move (absent when the move is illegal)
document.addEventListener('keydown', function (ev) {
  var d = {ArrowLeft: 'left', ArrowRight: 'right', ArrowUp: 'up', ArrowDown: 'down'}[ev.key];
  var link = d && document.getElementById('play-' + d);
  if (link) { ev.preventDefault(); window.location.href = link.href; }
});
</script>"""
