"""A full disk, named as such: the reason text of a failed write, and room kept to report it.

numpy's ``tofile`` turns a short write into "8192 requested and 512 written" (no errno, no file),
and a job whose log lies on the full disk could not even write why it stopped. Writers
here report ``ENOSPC`` as "disk full" with the free bytes left, and every command sets a little disk
space aside beside its log up front (:func:`reserve_log_space`) and frees it right before it prints
its last error, so that the error can still be written.
"""

import errno
import os
import shutil
import stat
from pathlib import Path

from .errors import StoreWriteError

LOG_RESERVE = 1 << 14  # bytes: room for the last error message (and a traceback) many times over

_reserve = None  # descriptor of the unnamed file holding the reserved space


def is_disk_full(err):
    """Whether the OSError ``err`` means that no space (or quota) is left."""
    return getattr(err, "errno", None) in (errno.ENOSPC, errno.EDQUOT)


def free_bytes(path):
    """Bytes free for this user on the file system holding ``path`` (its nearest existing ancestor),
    or None if that cannot be asked."""
    probe = Path(path)
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    try:
        return shutil.disk_usage(probe).free
    except OSError:
        return None


def write_error_reason(err, path):
    """The reason part of a failed write's message: ``disk full (ENOSPC: ..., N bytes free on the
    file system of <path>)`` for a full disk or quota, else the error's own text."""
    if not is_disk_full(err):
        return err.strerror or str(err)
    name = errno.errorcode[err.errno]
    free = free_bytes(path)
    left = f", {free} bytes free on the file system of {path}" if free is not None else ""
    return f"disk full ({name}: {os.strerror(err.errno).lower()}{left})"


def reserve_log_space(fd=2, nbytes=LOG_RESERVE):
    """Set ``nbytes`` of disk aside on the file system of the log ``fd`` (a job's stderr), in an
    unnamed file (``O_TMPFILE``; the kernel frees it however the process ends), so that
    :func:`release_log_space` can give it back right before the last error is printed: a job whose
    log lies on the full disk can still say why it stopped. Does nothing (and raises nothing) for a
    terminal or a pipe, or where the file system does not support it."""
    global _reserve
    try:
        if _reserve is not None or not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        directory = os.path.dirname(os.readlink(f"/proc/self/fd/{fd}"))
        reserve = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o600)
    except (OSError, AttributeError):
        return
    try:
        os.posix_fallocate(reserve, 0, nbytes)
    except OSError:
        os.close(reserve)
        return
    _reserve = reserve


def release_log_space():
    """Free the space :func:`reserve_log_space` set aside (call it right before printing an error)."""
    global _reserve
    if _reserve is not None:
        os.close(_reserve)
        _reserve = None


def write_failed(path, err):
    """The :class:`StoreWriteError` for a failed write of ``path`` caused by the OSError ``err``."""
    reason = write_error_reason(err, Path(path).parent)
    if err.filename and str(err.filename) != str(path):
        blocker = Path(err.filename)
        # name the file that stands where a directory is needed: the failing name itself (mkdir says
        # "File exists") or, for a name below it (a write already under way), its nearest ancestor
        probe = blocker
        while not probe.exists() and probe.parent != probe:
            probe = probe.parent
        if probe.exists() and not probe.is_dir():
            reason, blocker = "not a directory", probe
        reason += f" ({blocker})"
    out = StoreWriteError(f"cannot write {path}: {reason}; nothing was written "
                          "for it. Free disk space or make the directory writable, then run "
                          "`snakemake --cores all` again (finished layers are kept)")
    out.errno = err.errno
    return out
