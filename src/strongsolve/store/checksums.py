"""SHA-256 checksums of the result files a user reads, written with them and verified on every load.

Zarr layers carry their own checksums (:mod:`layers`). The other results get one mechanism: the
SHA-256 of their canonical content, stored

- inside a JSON document, under the key ``"checksum"``, over the document without that key written
  as canonical JSON (sorted keys, no spaces; floats as Python's ``repr``, which reads back to the
  same bits), so that re-indenting the file does not matter but any changed value does
  (``solution.json``; the attributes of a Truco subgame);
- beside a text file, in a sidecar ``<name>.sha256`` over the file's bytes, in the format of
  ``sha256sum`` so that ``sha256sum -c summary.csv.sha256`` checks it too (``summary.csv``, which
  spreadsheet and CSV readers must see unchanged);
- for an array, over its dtype, shape and bytes (:func:`array_checksum`);
- inside a NumPy ``.npz`` archive, as one more member ``checksum``: the SHA-256 over every other
  member's name and :func:`array_checksum`, in name order (:func:`write_npz_checked`).

A load that finds the checksum missing or different, or the file unreadable, raises
:class:`CorruptResultError` naming the file and the command that rebuilds it, which the caller's
``hint`` gives (a callable: file path -> shell command, from the game's ``hints`` module): the
store knows no game and no workflow rule.
"""

import hashlib
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from .atomic import temporary_name, write_json_atomic, write_text_atomic
from .errors import CorruptResultError

CHECKSUM_KEY = "checksum"
PREFIX = "sha256:"


def _sha256(data):
    return PREFIX + hashlib.sha256(data).hexdigest()


def canonical_json(doc):
    """``doc`` as canonical JSON text (sorted keys, no spaces): the bytes its checksum covers."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=True)


def json_checksum(doc):
    """``"sha256:<hex>"`` of a JSON-able dict without its ``"checksum"`` key (canonical JSON)."""
    rest = {k: v for k, v in doc.items() if k != CHECKSUM_KEY}
    return _sha256(canonical_json(rest).encode())


def with_checksum(doc):
    """A copy of ``doc`` with its ``"checksum"`` key set (:func:`json_checksum`)."""
    return dict(doc, **{CHECKSUM_KEY: json_checksum(doc)})


def array_checksum(array):
    """``"sha256:<hex>"`` of an array's dtype, shape and bytes (C order)."""
    a = np.ascontiguousarray(array)
    head = f"{a.dtype.str}:{list(a.shape)}:".encode()
    return _sha256(head + a.tobytes())


def corrupt(path, problem, hint):
    """The :class:`CorruptResultError` for the result file ``path``: ``problem`` says what is wrong,
    ``hint(path)`` is the shell command that rebuilds it."""
    return CorruptResultError(f"{path} {problem}; it is damaged or was edited, so it is not used. "
                              f"Rebuild it with `{hint(Path(path))}`")


def verify_json(doc, path, hint):
    """Check a loaded document against its ``"checksum"`` key; return it without that key.

    Raises
    ------
    CorruptResultError
        If ``doc`` is not a JSON object, has no checksum, or does not match it.
    """
    if not isinstance(doc, dict) or CHECKSUM_KEY not in doc:
        raise corrupt(path, f'has no "{CHECKSUM_KEY}" key (written before checksums were kept, '
                            "or damaged)", hint)
    if doc[CHECKSUM_KEY] != json_checksum(doc):
        raise corrupt(path, "does not match its checksum", hint)
    return {k: v for k, v in doc.items() if k != CHECKSUM_KEY}


def write_json_checked(path, doc):
    """Write ``doc`` (a JSON-able dict) atomically as indented JSON with its ``"checksum"`` key.

    Raises
    ------
    StoreWriteError
        As :func:`atomic.write_text_atomic`.
    """
    write_json_atomic(path, with_checksum(doc))


def read_json_checked(path, hint):
    """Load a JSON document written by :func:`write_json_checked` and verify it.

    Parameters
    ----------
    path : str or Path
    hint : callable
        ``hint(path) -> str``: the shell command that rebuilds the file, for the error message.

    Returns
    -------
    dict
        The document without its ``"checksum"`` key.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    CorruptResultError
        If it is not valid JSON (e.g. truncated), has no checksum, or does not match it; the message
        names the file and the command that rebuilds it.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise
    except (ValueError, OSError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise corrupt(path, f"cannot be read as JSON ({err})", hint) from err
    return verify_json(doc, path, hint)


def sidecar_path(path):
    """The checksum file of ``path``: ``<name>.sha256`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".sha256")


def write_text_checked(path, text):
    """Write ``text`` atomically, then its checksum to the sidecar ``<name>.sha256`` (also atomic).

    A kill between the two writes leaves a file that does not match its sidecar: refused on load,
    never trusted.

    Raises
    ------
    StoreWriteError
        As :func:`atomic.write_text_atomic`.
    """
    path = Path(path)
    write_text_atomic(path, text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    write_text_atomic(sidecar_path(path), f"{digest}  {path.name}\n")


def read_text_checked(path, hint):
    """Read a text file written by :func:`write_text_checked` and verify it against its sidecar.

    Parameters
    ----------
    path : str or Path
    hint : callable
        ``hint(path) -> str``: the shell command that rebuilds the file, for the error message.

    Returns
    -------
    str

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    CorruptResultError
        If the sidecar is missing or unreadable, or the file's SHA-256 differs from it.
    """
    path = Path(path)
    data = path.read_bytes()
    side = sidecar_path(path)
    try:
        want = side.read_text().split()[0]
    except (OSError, ValueError, IndexError):
        raise corrupt(path, f"has no readable checksum file {side}", hint) from None
    if hashlib.sha256(data).hexdigest() != want:
        raise corrupt(path, f"does not match its checksum ({side})", hint)
    return data.decode()


def npz_checksum(arrays):
    """``"sha256:<hex>"`` over the members of an archive (name -> array, without ``checksum``):
    each name and :func:`array_checksum`, in name order."""
    parts = [f"{name}={array_checksum(arrays[name])}" for name in sorted(arrays) if name != CHECKSUM_KEY]
    return _sha256("\n".join(parts).encode())


def write_npz_checked(path, arrays, compress=True):
    """Write ``arrays`` (name -> array) as an ``.npz`` archive (zip-deflated unless ``compress`` is
    False: large float arrays that hardly compress) with the member ``checksum``
    (:func:`npz_checksum`), atomically (a temporary name beside ``path``, then a rename).

    Raises
    ------
    OSError
        Disk full or directory not writable; nothing is left at ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        with open(tmp, "wb") as f:
            (np.savez_compressed if compress else np.savez)(
                f, **arrays, **{CHECKSUM_KEY: np.array(npz_checksum(arrays))})
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_npz_checked(path, hint):
    """Load every member of an archive written by :func:`write_npz_checked` and verify it.

    Parameters
    ----------
    path : str or Path
    hint : callable
        ``hint(path) -> str``: the shell command that rebuilds the file, for the error message.

    Returns
    -------
    dict of str -> numpy array
        Without ``checksum``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    CorruptResultError
        If it is not a readable archive (truncated, not a zip), has no checksum, or does not match
        it; the message names the file and the command that rebuilds it.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        raise corrupt(path, f"cannot be read as an .npz archive ({err})", hint) from err
    stored = arrays.pop(CHECKSUM_KEY, None)
    if stored is None:
        raise corrupt(path, f'has no "{CHECKSUM_KEY}" member (written before checksums were kept, '
                            "or damaged)", hint)
    if str(stored) != npz_checksum(arrays):
        raise corrupt(path, "does not match its checksum", hint)
    return arrays
