"""Errors of the result store, in a module without heavy imports so that the CLI can catch them."""


class CorruptLayerError(RuntimeError):
    """A layer file is missing, incomplete, corrupt or from another run; the message names the file
    and how to rebuild it."""


class StoreWriteError(OSError):
    """A result could not be written (disk full, read-only directory...); nothing partial was left.

    ``errno`` is the underlying error's, so callers can still tell ENOSPC from EACCES.
    """


class CorruptResultError(CorruptLayerError):
    """A result file a user reads (``solution.json``, ``summary.csv``, a Truco subgame) cannot be
    read, has no checksum or does not match it; the message names the file and how to rebuild it.
    A :class:`CorruptLayerError`, so whatever catches those catches these."""
