"""Command families of the ``strongsolve`` console script (see :mod:`strongsolve.cli`)."""

import json
import sys


def emit(args, out, text, write=None):
    """Write a command's result: ``out`` as JSON to ``args.output`` when given (by ``write(path,
    out)``, a game's ``saved`` writer; else atomically as plain JSON), then to stdout as JSON with
    ``--json``, else ``text``."""
    from ..store.atomic import write_json_atomic

    if args.output:
        (write or write_json_atomic)(args.output, out)
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
    else:
        print(text)
