"""``strongsolve lab``: the local web app over a results folder (:mod:`strongsolve.lab`)."""


def register(subparsers):
    p = subparsers.add_parser("lab", help="explore the solved games in a local web app")
    p.add_argument("results", nargs="?", default="results",
                   help="results folder to read (default: results); it may be missing or half solved")
    p.add_argument("--port", type=int, default=8050, help="port (default 8050; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.set_defaults(handler=run)


def run(args):
    from werkzeug.serving import make_server

    from ..lab.app import create_app

    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port {args.port} is not a port; allowed 0..65535")
    try:
        server = make_server(args.host, args.port, create_app(args.results), threaded=True)
    except (OSError, SystemExit) as err:  # werkzeug prints and exits when the port is taken
        reason = getattr(err, "strerror", None) or "address in use or not allowed"
        raise ValueError(f"cannot serve at {args.host}:{args.port} ({reason}); give another "
                         f"port, e.g. `strongsolve lab {args.results} --port 0` (any free one)") from None
    print(f"strongsolve lab: serving {args.results} at http://{args.host}:{server.server_port}/ "
          "(Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
