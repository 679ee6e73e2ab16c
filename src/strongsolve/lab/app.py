"""The lab's Flask application: the home page and one blueprint per game.

:func:`create_app` binds the app to a results folder, which it only reads. The pages render what
each game's ``advice`` returns, in the layout of :mod:`.layout`.
"""

from pathlib import Path

from flask import Flask

from ..store.errors import CorruptLayerError
from . import g2048, ludo, shutbox, truco, truco_play
from .layout import esc, render_page


def create_app(results="results"):
    """The lab over a results folder.

    Parameters
    ----------
    results : str or Path
        The folder the workflow writes (``results`` by default); read only, and it may be missing
        or half solved.

    Returns
    -------
    flask.Flask
    """
    app = Flask(__name__)
    app.config["RESULTS"] = Path(results)
    pages = (g2048, shutbox, ludo, truco)
    for page in pages:
        app.register_blueprint(page.blueprint)
    app.register_blueprint(truco_play.blueprint)

    @app.route("/")
    def home():
        body = ['<p class="note">Results folder <code>' + esc(app.config["RESULTS"].resolve())
                + "</code> (read only).</p>"]
        for page in pages:
            body.append(page.status_html(app.config["RESULTS"]))
        return render_page("strongsolve lab", "\n".join(body))

    @app.errorhandler(CorruptLayerError)
    def damaged(err):  # a damaged result a page did not catch itself: its file and its repair
        return render_page("Damaged result", errors=[str(err)])

    @app.errorhandler(Exception)
    def fault(err):  # a fault the pages did not foresee: a message, never a stack trace
        from werkzeug.exceptions import HTTPException
        if isinstance(err, HTTPException):
            return err
        return render_page("Error", errors=[f"{type(err).__name__}: {err}"]), 500

    return app
