"""The lab's one page layout: every page's HTML goes through :func:`render_page`.

Errors a user can cause (bad input, a missing or half-solved run) are shown on the page by
:func:`render_page`; the pages never let an exception reach the browser as a stack trace.
"""

import html
import shlex
from pathlib import Path

from flask import render_template_string

LAYOUT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} · strongsolve lab</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.2em 2em; color: #222; }
nav a { margin-right: 1.2em; } h1 { font-size: 1.4em; }
table.values { border-collapse: collapse; margin: .6em 0; }
table.values td, table.values th { border: 1px solid #bbb; padding: .2em .6em; text-align: right; }
tr.best { background: #d8f5d0; font-weight: bold; }
tr.chosen { background: #dde8fb; font-weight: bold; } a.do { margin-right: .8em; }
tr.likely td.prob { background: #ffe68a; font-weight: bold; }
.error { background: #fde2e1; border: 1px solid #d33; padding: .5em .8em; margin: .6em 0; }
.note { color: #555; } code { background: #f3f3f3; padding: 0 .25em; }
.board { border-collapse: separate; border-spacing: 4px; background: #bbada0; border-radius: 6px; }
.board td { width: 56px; height: 56px; text-align: center; font-size: 1.3em; font-weight: bold;
  background: #cdc1b4; border-radius: 4px; cursor: pointer; user-select: none; }
.board td[data-v="2"] { background: #eee4da; } .board td[data-v="4"] { background: #ede0c8; }
.board td[data-v="8"] { background: #f2b179; } .board td[data-v="16"] { background: #f59563; }
.board td[data-v="32"] { background: #f67c5f; } .board td[data-v="64"] { background: #f65e3b; }
.board td.big { background: #edcf72; }
.grid { border-collapse: collapse; font-size: 11px; }
.grid td { padding: 1px; border: 1px solid #ddd; }
.grid th { font-weight: normal; padding: 0 3px; }
.cell9 { display: grid; grid-template-columns: repeat(3, 9px); gap: 1px; }
.cell9 span { width: 9px; height: 9px; background: #ddd; display: block; }
.cell9 span.solved { background: #2a8a3a; } .grid td.here { outline: 2px solid #c00; }
</style></head><body>
<nav><a href="/">Lab</a><a href="/2048">2048</a><a href="/shutbox">Shut the Box</a>
<a href="/ludo">Ludo</a><a href="/truco">Truco</a></nav>
<h1>{{ title }}</h1>
{% for e in errors %}<div class="error">{{ e }}</div>{% endfor %}
{{ body|safe }}
</body></html>"""


def render_page(title, body="", errors=()):
    """The layout around a page body (HTML, already escaped) with error messages (plain text)."""
    return render_template_string(LAYOUT, title=title, body=body, errors=list(errors))


def esc(value):
    """HTML-escaped text of any value."""
    return html.escape(str(value))


def workflow_command(results, games, extra=""):
    """The Snakemake command that solves ``games`` (list of config game names) into ``results``."""
    config = "" if Path(results) == Path("results") else f"results={shlex.quote(str(results))} "
    return (f"snakemake --cores all --config {config}games='[{','.join(games)}]'"
            + (f" {extra}" if extra else ""))


def reload_on_change(select_id, page, param):
    """A script that, when the dropdown ``select_id`` changes, opens ``page`` with only
    ``param=<choice>``: the fields of the old choice (another board size, another piece count,
    another rule) would not fit the new one, so the form is built again for it."""
    return (f"<script>document.getElementById({select_id!r}).addEventListener('change', "
            f"function (ev) {{ window.location.href = {page!r} + '?{param}=' + "
            "encodeURIComponent(ev.target.value); });</script>")
