"""What the Truco raise-subgame benchmarks share (bench/truco_memory.py, bench/truco_forest.py):
the options that choose the subgame, and the process's peak memory."""

import argparse
import resource


def subgame_parser(hands_default, hands_help, iterations_default):
    """An ``argparse.ArgumentParser`` with the options ``--tier`` (the raise cap of both players,
    default 1), ``--vira-class`` (0), ``--hands`` (deals of the first N mano hands) and
    ``--iterations``, the last two with the given defaults."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", type=int, default=1)
    ap.add_argument("--vira-class", type=int, default=0)
    ap.add_argument("--hands", type=int, default=hands_default, help=hands_help)
    ap.add_argument("--iterations", type=int, default=iterations_default)
    return ap


def peak_mib():
    """The process's peak resident set size so far, in MiB (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
