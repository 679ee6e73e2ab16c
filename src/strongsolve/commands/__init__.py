"""Command families of the ``strongsolve`` console script (see :mod:`strongsolve.cli`)."""

import json
import sys


def emit(args, out, text):
    """Write a command's result: ``out`` as JSON to ``args.output`` (atomically) when given, then
    to stdout as JSON with ``--json``, else ``text``."""
    from ..store.atomic import write_json_atomic

    if args.output:
        write_json_atomic(args.output, out)
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
    else:
        print(text)
