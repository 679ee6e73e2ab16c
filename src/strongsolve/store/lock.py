"""One writer per run directory: an OS lock (``flock``) that each writing job holds for its whole life.

A ``kill -9`` of the Snakemake main process alone leaves its running job alive (an orphan); an
immediate rerun then starts the same job again. Without a lock the two wrote the same ages: the
rerun's job removed the "stale" temporaries the orphan was still filling, and the orphan renamed its
gutted directory into place (a layer that looked complete without its arrays), or the rerun failed
with "already exists". So every stage that writes a run directory holds
:func:`writer_lock` on it: a later writer waits, saying on stderr which process it waits for, until
that one finishes or dies (the kernel drops a dead process's ``flock``, however it dies), and only
the lock holder removes temporaries (:func:`holds_writer_lock`).

The lock is per run directory, not per block of ages: block boundaries change with ``ages_per_job``
between runs (an orphan of block 4-130 and a rerun's block 4-66 write the same ages), and the
workflow already runs a run's jobs one after another (each block needs the one before it), so the
lock costs no parallelism.

The lock file ``<directory>/.writer.lock`` holds the holder's pid and command line. It is removed by
its holder on release, so a finished run leaves no trace; a waiter that then finds its locked file
unlinked opens the new one and tries again.
"""

import fcntl
import functools
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from .space import write_failed

LOCK_NAME = ".writer.lock"
POLL_SECONDS = 0.05  # between attempts while another writer holds the lock
REMIND_SECONDS = 60.0  # a waiting job says again that it still waits (a person reading its log)

_held = {}  # resolved directory -> [open lock file, nesting depth] of the locks this process holds


def holds_writer_lock(path):
    """Whether this process holds the writer lock of ``path`` or of a directory above it."""
    path = Path(path).resolve()
    return any(d == path or d in path.parents for d in _held)


def _holder(handle):
    """The holder's line of the lock file (``pid <n>: <command>``), or a placeholder."""
    try:
        handle.seek(0)
        text = handle.read().decode(errors="replace").strip()
    except OSError:
        text = ""
    return text or "a process that has not yet written its pid"


def _still_the_lock_file(handle, path):
    """Whether ``handle`` is still the file at ``path`` (its holder may have unlinked it on release)."""
    try:
        return os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        return False


def _acquire(directory, what, log):
    path = directory / LOCK_NAME
    waited_since = reminded = None
    while True:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            handle = open(path, "a+b", buffering=0)  # unbuffered: closing it writes nothing
        except OSError as err:
            raise write_failed(path, err) from err
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            now = time.monotonic()
            if waited_since is None or now - reminded >= REMIND_SECONDS:
                verb = "waits" if waited_since is None else "still waits"
                print(f"strongsolve: {what} {verb}: {directory} is being written by another process "
                      f"({_holder(handle)}); one writer per run directory, so this job waits until "
                      "that one finishes or dies (kill it to stop it early)", file=log, flush=True)
                waited_since = waited_since or now
                reminded = now
            handle.close()
            time.sleep(POLL_SECONDS)
            continue
        except OSError as err:  # ENOLCK: a file system without locks (some network mounts)
            handle.close()
            raise OSError(err.errno, f"cannot lock {path} ({err.strerror}): one writer per run "
                                     "directory needs file locks (flock); put the results directory "
                                     "(config key results) on a file system that has them") from err
        except BaseException:
            handle.close()
            raise
        if _still_the_lock_file(handle, path):
            break
        handle.close()  # the previous holder removed it while we waited: take the new one
    try:  # who holds it, for a waiter's message; the lock holds without it (e.g. on a full disk)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}: {' '.join(sys.argv)}\n".encode())
    except OSError:
        pass
    if waited_since is not None:
        print(f"strongsolve: {what} got the lock of {directory} after "
              f"{time.monotonic() - waited_since:.1f} s", file=log, flush=True)
    return handle


@contextmanager
def writer_lock(directory, what="this job", log=None):
    """Hold the writer lock of ``directory`` (created if missing) for the ``with`` block.

    Re-entrant within a process (a stage may run inside a caller that already holds it). While
    another process holds it, waits, printing once (and every :data:`REMIND_SECONDS`) the holder's
    pid and command to ``log``.

    Parameters
    ----------
    directory : str or Path
        The run directory (e.g. ``results/2048_2x4``).
    what : str
        Who waits, for the message (e.g. ``"2048 forward (pid 4242)"``).
    log : file, optional
        Where the waiting messages go (default: ``sys.stderr``, the job's log).

    Raises
    ------
    StoreWriteError
        An ``OSError``: the lock file cannot be created (the message names it).
    """
    directory = Path(directory).resolve()
    entry = _held.get(directory)
    if entry is None:
        entry = _held[directory] = [_acquire(directory, what, log or sys.stderr), 0]
    entry[1] += 1
    try:
        yield
    finally:
        entry[1] -= 1
        if entry[1] == 0:
            del _held[directory]
            handle = entry[0]
            try:  # unlink while still holding it, so no one waits on a file about to vanish
                os.unlink(directory / LOCK_NAME)
            except OSError:
                pass
            handle.close()  # releases the flock


def holding_run_lock(what):
    """Decorator: the stage ``fn(run, ...)`` runs holding :func:`writer_lock` of ``run.directory``
    for its whole life (``what`` names the stage in the waiting message, e.g. ``"2048 forward"``)."""
    def wrap(fn):
        @functools.wraps(fn)
        def locked(run, *args, **kwargs):
            with writer_lock(run.directory, f"{what} (pid {os.getpid()})"):
                return fn(run, *args, **kwargs)
        return locked
    return wrap
