"""Built trees kept on disk for the other subgames of a tier that share them.

A raise subgame's public tree (public_tree.py) and the forest its off-path refinement walks
(forest.py) depend on the vira class's deals, the raise caps, the three-tie rule and face-down
play, not on the score: the score enters through the utility table, set after the build
(``set_utilities``). The {1, 3} tier's four scores and two fixed-point rounds build each class's
public tree eight times and its forest four times (5.4 and 13 CPU s for the full deck's class 0,
bench/RECORD.md); kept once, the other solves read it back in well under a second.

A kept tree is a pickle followed by the CRC32C of its bytes (4 bytes, little-endian), written
under a temporary name and renamed: a file cut short or damaged is reported, removed and built
again, never used.
"""

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

import google_crc32c
import numpy as np

_CHUNK = 1 << 26  # bytes read at a time for the checksum


def tree_key(build, args, kwargs):
    """A hex digest naming ``build(*args, **kwargs)``'s result: the builder's qualified name and
    every argument (arrays by dtype, shape and bytes; tuples, lists and dicts element by element;
    anything else by ``repr``)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{build.__module__}.{build.__qualname__}".encode())

    def feed(x):
        if isinstance(x, np.ndarray):
            a = np.ascontiguousarray(x)
            h.update(f"|array {a.dtype.str} {a.shape}|".encode())
            h.update(memoryview(a).cast("B"))
        elif isinstance(x, (tuple, list)):
            h.update(f"|{type(x).__name__} {len(x)}|".encode())
            for y in x:
                feed(y)
        elif isinstance(x, dict):
            h.update(f"|dict {len(x)}|".encode())
            for k in sorted(x):
                feed(k)
                feed(x[k])
        else:
            h.update(f"|{type(x).__name__} {x!r}|".encode())

    feed(list(args))
    feed(dict(kwargs))
    return h.hexdigest()


def _crc_of(f, size):
    """CRC32C of the first ``size`` bytes of the open binary file ``f``."""
    crc, left = 0, size
    while left > 0:
        chunk = f.read(min(_CHUNK, left))
        if not chunk:
            break
        crc = google_crc32c.extend(crc, chunk)
        left -= len(chunk)
    return crc


def _read(path):
    """The tree kept at ``path``; ValueError if its checksum does not match."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size - 4
        if size <= 0:
            raise ValueError(f"{size + 4} bytes: shorter than a checksum")
        crc = _crc_of(f, size)
        stored = int.from_bytes(f.read(4), "little")
        if crc != stored:
            raise ValueError(f"CRC32C {crc:08x} of the content, {stored:08x} stored")
        f.seek(0)
        return pickle.load(f)


def _write(path, tree):
    """``tree`` pickled to ``path`` with its CRC32C, under a temporary name then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w+b") as f:
            pickle.dump(tree, f, protocol=5)
            size = f.tell()
            f.seek(0)
            crc = _crc_of(f, size)
            f.seek(size)
            f.write(crc.to_bytes(4, "little"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cached_build(tree_dir, build, *args, **kwargs):
    """``build(*args, **kwargs)``, read from ``tree_dir`` if an earlier call with the same
    arguments kept it there, else built and kept.

    Parameters
    ----------
    tree_dir : path or None
        The folder of kept trees (created if missing); None builds without keeping.
    build : callable
        A builder whose result depends on its arguments alone and pickles (``PublicGame``,
        ``Forest``); the caller sets anything score-dependent (the utilities) after this call.

    Returns
    -------
    The built tree, a fresh copy per call (the caller may change it).

    A kept file that cannot be read back whole (cut short by a crash of the machine, damaged) is
    named on stderr, removed and built again.
    """
    if tree_dir is None:
        return build(*args, **kwargs)
    path = Path(tree_dir) / f"{build.__name__}-{tree_key(build, args, kwargs)}.pickle"
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except Exception as err:  # any damage: the tree is built again from its arguments
        print(f"ignoring the damaged kept tree {path} ({type(err).__name__}: {err}); building it "
              "again", file=sys.stderr, flush=True)
        path.unlink(missing_ok=True)
    tree = build(*args, **kwargs)
    _write(path, tree)
    return tree
