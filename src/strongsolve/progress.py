"""Progress lines of a stage, written in batches.

A 2048 stage prints one line per age. Written one at a time, each line is a system call after which
the printing thread must win the GIL back from the stage's helper threads: 1.8 ms of wall time per
line in the 3x3 solve job (2,042 lines, 3.6 s, under load), on the thread that hands the kernels
their next layer. :class:`Progress` gathers the lines and writes them together, at most every
``interval`` seconds and when the stage ends, so a log is never more than ``interval`` behind.
"""

import sys
import time

INTERVAL = 0.25
"""Seconds between two writes of :class:`Progress` (the log's largest lag)."""


class Progress:
    """Lines for ``log`` (a text stream), written in batches.

    Use as a context manager: leaving it writes what is left, also when the stage fails.

    Parameters
    ----------
    log : text stream
        Where the lines go (a stage's ``log``, sys.stderr by default).
    interval : float
        Seconds: a line is written at the latest with the first line added this long after the
        previous write, or when the context ends.
    """

    def __init__(self, log=sys.stderr, interval=INTERVAL):
        self.log = log
        self.interval = interval
        self._lines = []
        self._last = time.monotonic()

    def line(self, text):
        """Add one line (without its newline)."""
        self._lines.append(text)
        if time.monotonic() - self._last >= self.interval:
            self.flush()

    def flush(self):
        """Write the lines gathered so far in one call, and flush ``log``."""
        if self._lines:
            self.log.write("\n".join(self._lines) + "\n")
            self._lines = []
        self.log.flush()
        self._last = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.flush()
