"""The ``strongsolve`` console script.

Each command family lives in its own module under ``strongsolve.commands`` and exposes
``register(subparsers)``; heavy imports (numba kernels) happen inside the handlers so ``--help`` is fast.
"""

import argparse
import gc
import importlib
import sys

# module name under strongsolve.commands, in the order shown by --help
COMMAND_MODULES = ["g2048", "inspect", "shutbox", "ludo", "truco", "lab"]


class UserError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="strongsolve",
        description="Exact (strong) solutions of stochastic games: 2048 on small boards, Shut the Box, "
                    "Ludo, Truco. See README.md.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"strongsolve.commands.{name}").register(sub)
    return parser


def main(argv=None):
    from .store.errors import CorruptLayerError
    from .store.space import release_log_space, reserve_log_space

    reserve_log_space()  # a job's log on a disk that fills up can still say why the job stopped
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args) or 0
    except (UserError, ValueError, FileNotFoundError, FileExistsError, CorruptLayerError) as err:
        release_log_space()
        print(f"strongsolve: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`
        sys.stderr.close()
        return 0
    except OSError as err:  # disk full, read-only directory: nothing partial is left (atomic writes)
        release_log_space()
        print(f"strongsolve: error: {err}", file=sys.stderr)
        return 1
    except BaseException:  # a traceback: it too needs room in the log
        release_log_space()
        raise


def run():
    """The ``strongsolve`` program: :func:`main`, then exit without the interpreter's last
    garbage collections.

    At exit Python collects garbage over every object still alive, module by module; in a 2048 job
    that holds numba's compiled kernels and matplotlib that took 0.2-0.35 s of CPU per process,
    after all its work was done (0.35 s between the last line of a 3x3 solve and its end).
    ``gc.freeze()`` moves those objects out of the collector's reach: they are still released by
    reference counting, files still closed and ``atexit`` handlers still run; a reference cycle
    left among them is returned to the operating system with the rest of the process.
    """
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    run()
