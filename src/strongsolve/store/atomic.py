"""Atomic writes of small files (JSON, CSV): a temporary name in the same directory, then a rename.

A write that fails (disk full, read-only or missing directory) raises :class:`StoreWriteError`, an
``OSError`` whose message names the file and what to do, and leaves nothing behind.

Temporaries that a killed writer left are removed only by a process that holds the writer lock of
their directory (:mod:`strongsolve.store.lock`): without it, a temporary may be another live
writer's, and removing it would break that writer's rename.
"""

import ctypes
import glob
import json
import os
import sys
import uuid
from pathlib import Path

from .lock import holds_writer_lock
from .space import write_failed


def fsync_dir(path):
    """Flush a directory's entries (a rename inside it) to disk, so a later file cannot survive a
    power loss that this one does not."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_file_system(path):
    """Flush every file and directory entry of the file system holding ``path`` to disk.

    One call for many small layers written without their own fsyncs (``write_layer(...,
    durable=False)``): a stage calls it before its block manifest, so every layer the manifest lists
    survives a power loss, at the cost of one flush per block instead of three or four fsyncs per
    layer. Linux's ``syncfs(2)`` flushes only that file system; elsewhere ``sync(2)``
    flushes all of them.

    Raises
    ------
    StoreWriteError
        If the flush fails (an I/O error of the disk), naming ``path``.
    """
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if _SYNCFS is None:
            os.sync()
        elif _SYNCFS(fd) != 0:
            err = ctypes.get_errno()
            raise write_failed(path, OSError(err, os.strerror(err)))
    finally:
        os.close(fd)


def _find_syncfs():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):  # a C library without syncfs (glibc < 2.14, some musl builds)
        return None


_SYNCFS = _find_syncfs()


def temporary_name(path):
    """A fresh hidden temporary name beside ``path`` (``.<name>.tmp-<random>``)."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")


def stale_temporaries(path):
    """Temporary names of ``path`` that a killed writer left behind."""
    path = Path(path)
    return sorted(path.parent.glob(f".{glob.escape(path.name)}.tmp-*")) if path.parent.is_dir() else []


def _discard(tmp):
    try:
        tmp.unlink(missing_ok=True)
    except OSError:  # e.g. its directory is a file: then it was never created
        pass


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, never a part.

    Temporary files a killed earlier write of the same path left behind are removed first, when this
    process holds the writer lock of a directory above ``path`` (else they may be a live writer's,
    and are left alone).

    A file that already holds exactly ``text`` is left as it is, its modification time too: a late
    run of a finished job (an orphan that waited for the writer lock) must not make Snakemake see an
    output as newer than the files built from it. (Snakemake removes a job's outputs before it runs
    the job, so its own jobs always write.)

    Raises
    ------
    StoreWriteError
        If the directory cannot be created or written, or the disk is full; the temporary file is
        removed.
    """
    path = Path(path)
    if _holds_text(path, text):
        return
    tmp = temporary_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if holds_writer_lock(path):
            for old in stale_temporaries(path):
                old.unlink(missing_ok=True)
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as err:
        _discard(tmp)
        raise write_failed(path, err) from err
    except BaseException:
        _discard(tmp)
        raise


def _holds_text(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def write_json_atomic(path, obj, keep_if_same_except=()):
    """Write ``obj`` as indented JSON, atomically (see :func:`write_text_atomic`).

    ``keep_if_same_except`` : keys of ``obj`` (e.g. ``("seconds",)``, a job's timing) whose values
    alone may differ from a JSON object already at ``path`` for that file to be left as it is.
    """
    if keep_if_same_except:
        try:
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
        except (OSError, ValueError):
            old = None
        if isinstance(old, dict) and (
                {k: v for k, v in old.items() if k not in keep_if_same_except}
                == {k: v for k, v in json.loads(json.dumps(obj)).items() if k not in keep_if_same_except}):
            return
    write_text_atomic(path, json.dumps(obj, indent=2) + "\n")
