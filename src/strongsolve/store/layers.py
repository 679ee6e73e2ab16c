"""Per-layer zarr v3 groups: atomic writes, checksums in the attributes, verified loads.

A layer is a zarr group holding one or more 1-d arrays and JSON attributes. It is written to a
temporary directory beside its final path and renamed when complete, so a killed run never leaves a
layer that looks complete. The attributes carry, per array, its length, dtype and a BLAKE2b
checksum of its bytes, plus ``complete: true`` and whatever the stage adds (age, counts, the board
shape...), and a checksum of all of these attributes (``attrs_checksum``), so a flipped byte in
``zarr.json`` is caught too. Every chunk also carries a CRC32C (zarr's ``crc32c`` codec), so a
flipped byte is caught even by a reader that does not verify the whole array.

A layer is read in one pass of zarr's asynchronous API (its arrays side by side), run by
``zarr.core.sync.sync`` as zarr's own synchronous API does: each synchronous zarr call is a round
trip to zarr's event-loop thread, and a layer made of separate calls cost about ten of them (15-30
ms per layer, most of the file-handling time of a 3x3 solve). A layer is written as the files zarr
would write, byte for byte, encoded chunk by chunk without zarr's event loop and written with plain
file calls (:func:`_layer_files`: 0.3 ms of CPU per 3x3 layer, against 1.4 ms through a zarr
``MemoryStore`` and 6.8 ms through zarr's ``LocalStore``; a 4x3 value layer of 3.5e7 values,
1.2-1.4 CPU s against zarr's 1.5-1.8). A stage writes its small layers (at
most :data:`SMALL_LAYER_BYTES` of arrays) without their own fsyncs (``durable=False``) and flushes
the file system once before its block manifest
(:func:`.atomic.sync_file_system`): three or four fsyncs per layer were most of what was left.

:func:`read_attrs` and :func:`read_layer` check all of this and raise :class:`CorruptLayerError`,
naming the file and, when the caller passes a ``hint`` (a callable: layer path -> shell command;
each game's ``hints`` module has one), the command that rebuilds it. The store knows no game and no
workflow rule. Stages write layers ``<dir>/age_<n>.zarr`` and record each job's block of ages in
``<dir>/block_<first>-<last>.json`` (:func:`block_manifest`).
"""

import asyncio
import copy
import hashlib
import json
import os
import re
import shutil
from functools import lru_cache
from pathlib import Path

import google_crc32c
import numpy as np

from .atomic import fsync_dir, temporary_name
from .errors import CorruptLayerError
from .lock import holds_writer_lock
from .space import write_failed

# zarr and numcodecs are imported by the functions that write or read arrays: the workflow's
# Snakefile imports this module (a run's job list, its repair hints) and reads attributes only,
# which need neither (the Snakefile's imports took 0.4 s of every snakemake command otherwise).

FORMAT = "strongsolve-layer/1"
CHUNK = 1 << 20  # elements per zarr chunk: 8 MiB of uint64/float64, large enough to stream well
SMALL_LAYER_BYTES = 1 << 20
"""Bytes of arrays up to which a layer is small: encoded in memory, then written (one chunk per
array). Every 3x3 layer is (at most 60,000 afterstates: 480 KB of values); a stage keeps up to
:data:`.background.SMALL_PENDING` small writes pending, so they hold at most 16 MiB."""


def is_small(arrays):
    """Whether a layer of ``arrays`` (name -> numpy array) is small (:data:`SMALL_LAYER_BYTES`)."""
    return sum(np.asarray(a).nbytes for a in arrays.values()) <= SMALL_LAYER_BYTES


def checksum(array):
    """BLAKE2b-128 hex digest of a contiguous array's bytes, dtype and length."""
    a = np.ascontiguousarray(array)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{a.dtype.str}:{a.shape[0]}:".encode())
    h.update(a.view(np.uint8) if a.size else b"")
    return h.hexdigest()


def attrs_checksum(attrs):
    """BLAKE2b-128 hex digest of a layer's attributes (without ``attrs_checksum``), as canonical JSON."""
    doc = {k: v for k, v in attrs.items() if k != "attrs_checksum"}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def block_manifest(path):
    """The block manifest ``block_<first>-<last>.json`` beside the layer ``.../age_<n>.zarr`` whose
    range holds ``n``, or None."""
    path = Path(path)
    age = re.fullmatch(r"age_(\d+)\.zarr", path.name)
    if age is None or not path.parent.is_dir():
        return None
    n = int(age.group(1))
    for manifest in sorted(path.parent.glob("block_*-*.json")):
        block = re.fullmatch(r"block_(\d+)-(\d+)\.json", manifest.name)
        if block and int(block.group(1)) <= n <= int(block.group(2)):
            return manifest
    return None


def _hinted(message, path, hint):
    """``message`` and, with a ``hint`` callable, the command that rebuilds the layer ``path``."""
    return f"{message}; to rebuild it, run: `{hint(path)}`" if hint else message


def write_layer(path, arrays, attrs, zstd_level=1, durable=True, chunk=CHUNK):
    """Write a layer atomically.

    Parameters
    ----------
    path : str or Path
        Final directory of the zarr group (e.g. ``results/2048_3x3/afterstates/age_000042.zarr``).
    arrays : dict of str -> 1-d numpy array
    attrs : dict
        JSON-able attributes stored with the layer.
    zstd_level : int
        Compression level of the arrays' zstd codec (recorded in ``zarr.json``, so a reader needs
        no setting): 1, the fastest, by default; value layers use 3.
    durable : bool
        True: every file and the rename are flushed to disk (fsync) before this returns. False:
        the layer is still written under a temporary name and renamed when complete, so
        a killed process leaves it whole or absent, but nothing is flushed: the caller must call
        :func:`.atomic.sync_file_system` before it records the layer anywhere (a stage, before its
        block manifest). A power loss before that flush can leave the layer damaged, which its
        checksums reveal on the next read (:func:`read_layer`, naming the command that rebuilds it).
    chunk : int
        Elements per zarr chunk (recorded in ``zarr.json``): :data:`CHUNK` by default; a reader of a
        few rows of a matrix stored flat wants chunks of whole rows.

    Raises
    ------
    FileExistsError
        If ``path`` already exists: a layer is never silently overwritten.
    StoreWriteError
        An ``OSError``: the disk is full or the directory cannot be created or written. The message
        names the layer; the temporary directory is removed, so nothing that looks complete is left.
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists; refusing to overwrite a computed layer")
    tmp = temporary_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
        for name, a in arrays.items():
            if a.ndim != 1:
                raise ValueError(f"layer array {name!r} must be 1-d, got shape {a.shape}")
        meta = {name: {"length": int(a.shape[0]), "dtype": a.dtype.str, "checksum": checksum(a)}
                for name, a in arrays.items()}
        attrs = dict(attrs, format=FORMAT, arrays=meta, complete=True)
        attrs = dict(attrs, attrs_checksum=attrs_checksum(attrs))
        _write_files(tmp, _layer_files(arrays, attrs, zstd_level, chunk), durable)
        os.rename(tmp, path)
        if durable:
            fsync_dir(path.parent)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise write_failed(path, err) from err
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


async def _write_group(store, arrays, attrs, zstd_level, chunk):
    """Write a layer's group into ``store`` (a directory name, or a ``MemoryStore``)."""
    from zarr.api import asynchronous as zarr_async
    from zarr.codecs import BytesCodec, Crc32cCodec, ZstdCodec
    group = await zarr_async.open_group(store=store, mode="w-", zarr_format=3)

    async def write_array(name, a):
        z = await group.create_array(name, shape=a.shape, dtype=a.dtype,
                                     chunks=(max(1, min(chunk, a.shape[0])),),
                                     serializer=BytesCodec(),
                                     compressors=[ZstdCodec(level=zstd_level), Crc32cCodec()])
        if a.size:
            await z.setitem(slice(None), a)

    await asyncio.gather(*(write_array(name, a) for name, a in arrays.items()))
    await group.update_attributes(attrs)


async def _read_group(path, with_arrays, hint=None):
    from zarr.api import asynchronous as zarr_async
    group = await zarr_async.open_group(store=str(path), mode="r")
    attrs = _verified_attrs(path, dict(group.attrs), hint)
    if not with_arrays:
        return attrs, {}

    async def read_array(name, m):
        try:
            if not m["length"]:
                return np.empty(0, np.dtype(m["dtype"]))
            z = await group.getitem(name)
            return await z.getitem(slice(None))
        except Exception as err:
            return err

    meta = attrs["arrays"]
    names = list(meta)
    return attrs, dict(zip(names, await asyncio.gather(*(read_array(n, meta[n]) for n in names))))


@lru_cache(maxsize=None)
def _array_metadata(dtype_str, zstd_level):
    """The ``zarr.json`` of a one-element array of ``dtype_str`` as :func:`_write_group` makes it
    (a dict, zarr's key order), the template of :func:`_layer_files`."""
    from zarr.core.sync import sync
    from zarr.storage import MemoryStore
    files = {}
    sync(_write_group(MemoryStore(store_dict=files), {"a": np.zeros(1, np.dtype(dtype_str))}, {},
                      zstd_level, CHUNK))
    return json.loads(files["a/zarr.json"].to_bytes())


def _layer_files(arrays, attrs, zstd_level, chunk):
    """Yield the files of a layer (store key, bytes), byte for byte those zarr writes through
    :func:`_write_group` (tested), made without zarr's event loop: each zarr write hops to zarr's
    loop thread and each chunk's zstd encoding to a worker thread, and zarr fills a buffer for the
    last chunk and compares every chunk with the fill value besides (about 2.8 ms of CPU per 3x3
    layer against 0.6 ms here; 1.2-1.4 against 1.5-1.8 CPU s for a 4x3 value layer of 3.5e7
    values). ``chunk`` elements per chunk (fewer for a shorter array): zstd at
    ``zstd_level``, then its CRC32C, little-endian; the last chunk padded to full length with the
    fill value 0, as zarr stores it; an empty array, or a chunk whose bytes are all zero (the fill
    value 0, not -0.0: zarr compares bit patterns), has no chunk file (zarr's
    ``write_empty_chunks`` False). One chunk is encoded at a time, so a large layer's files are
    written as they are made."""
    from numcodecs import Zstd
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.group import GroupMetadata
    zstd = Zstd(level=zstd_level, checksum=False)
    yield "zarr.json", GroupMetadata(attributes=attrs).to_buffer_dict(
        default_buffer_prototype())["zarr.json"].to_bytes()
    for name, a in arrays.items():
        size = max(1, min(chunk, a.shape[0]))
        meta = copy.deepcopy(_array_metadata(a.dtype.str, zstd_level))
        meta["shape"] = [a.shape[0]]
        meta["chunk_grid"]["configuration"]["chunk_shape"] = [size]
        yield f"{name}/zarr.json", json.dumps(meta, allow_nan=True, indent=2).encode()
        little = a.astype(a.dtype.newbyteorder("<"), copy=False)
        for k, lo in enumerate(range(0, a.shape[0], size)):
            piece = little[lo:lo + size]
            if piece.shape[0] < size:
                piece = np.concatenate([piece, np.zeros(size - piece.shape[0], piece.dtype)])
            if piece.view(np.uint8).any():
                data = zstd.encode(piece)
                yield f"{name}/c/{k}", data + np.uint32(google_crc32c.value(data)).astype("<u4").tobytes()


def _write_files(root, files, durable):
    """Write the files of a layer (an iterable of store key and bytes, :func:`_layer_files`) under
    the new directory ``root``; with ``durable``, each flushed to disk before the caller's rename
    makes the layer visible. Plain system calls, each directory made once: Python's ``open`` and
    ``mkdir(parents=True)`` added about twenty ``stat``, ``ioctl`` and failing ``mkdir`` calls per
    layer."""
    root = str(root)
    os.mkdir(root)
    made = {""}
    for key, data in files:
        directory = os.path.dirname(key)
        if directory not in made:
            os.makedirs(os.path.join(root, directory), exist_ok=True)
            made.add(directory)
        fd = os.open(os.path.join(root, key), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)


def read_attrs(path, hint=None):
    """The attributes of a complete layer (verified against ``attrs_checksum``; arrays not read).

    Raises
    ------
    CorruptLayerError
        If the layer is missing, was not completed, or its attributes do not match their checksum.

    Notes
    -----
    The group's ``zarr.json`` is read as plain JSON (the zarr v3 group document zarr reads: its
    ``zarr_format``, ``node_type`` and ``attributes`` checked), not through zarr's event loop:
    0.03 against 0.47 ms of CPU per 3x3 layer (2026-12-02), for the report and plots, which read
    the attributes of every layer of a run (3,063 for 3x3).
    """
    path = Path(path)
    if not path.is_dir():
        raise CorruptLayerError(_hinted(f"layer {path} is missing", path, hint))
    try:
        doc = json.loads((path / "zarr.json").read_bytes())
        if not (isinstance(doc, dict) and doc.get("zarr_format") == 3 and doc.get("node_type") == "group"
                and isinstance(doc.get("attributes"), dict)):
            raise ValueError("not a zarr v3 group document")
    except (OSError, ValueError) as err:  # ValueError: bad JSON or UTF-8
        raise CorruptLayerError(_hinted(f"layer {path} cannot be opened ({err})", path, hint)) from err
    return _verified_attrs(path, doc["attributes"], hint)


def read_layer(path, expect=None, hint=None, foreign=None):
    """Load and verify a layer.

    Parameters
    ----------
    path : str or Path
    expect : dict, optional
        Attributes that must match (e.g. ``{"rows": 3, "cols": 3, "age": 42}``).
    hint : callable, optional
        ``hint(path) -> str``: the shell command that rebuilds the layer, appended to every error
        message (the game's ``hints`` module); none without it.
    foreign : callable, optional
        ``foreign(path) -> str``: the shell command that removes the whole store the layer is in and
        builds it again, for a layer of another run (``expect`` mismatch): a store one of whose
        layers was copied from another run is not trusted for its other layers either, so one
        command clears it all rather than one layer per attempt. ``hint`` without it.

    Returns
    -------
    arrays : dict of str -> numpy array
    attrs : dict

    Raises
    ------
    CorruptLayerError
        If the layer is missing, incomplete, from another run (``expect`` mismatch), or an array's
        length, dtype, chunk CRC or checksum does not match its attributes. The message names the
        file and how to rebuild it.
    """
    path = Path(path)
    attrs, loaded = _open_layer(path, with_arrays=True, hint=hint)
    for key, want in (expect or {}).items():
        if attrs.get(key) != want:
            repair = foreign or hint
            raise CorruptLayerError(f"layer {path} has {key} = {attrs.get(key)!r} but this run needs "
                                    f"{want!r}; it belongs to another run"
                                    + (f", so the store {path.parent} is not this run's. Remove it "
                                       f"and build it again: `{foreign(path)}`" if foreign else
                                       ". Use another results "
                                       + (f"directory, or to rebuild it, run: `{repair(path)}`"
                                          if repair else "directory")))
    arrays = {}
    for name, meta in attrs["arrays"].items():
        a = loaded[name]
        if isinstance(a, Exception):
            raise CorruptLayerError(_hinted(f"layer {path}: array {name!r} cannot be read ({a})", path,
                                            hint)) from a
        a = np.asarray(a)
        if a.dtype.str != meta["dtype"] or a.shape != (meta["length"],) or checksum(a) != meta["checksum"]:
            raise CorruptLayerError(_hinted(f"layer {path}: array {name!r} does not match its checksum "
                                            "(corrupt or truncated)", path, hint))
        arrays[name] = a
    return arrays, attrs


def _open_layer(path, with_arrays, hint=None):
    """``(attrs, arrays)`` of a layer in one zarr pass: the attributes verified, the arrays (name ->
    numpy array, or the exception met reading it; empty unless ``with_arrays``) not yet."""
    path = Path(path)
    if not path.is_dir():
        raise CorruptLayerError(_hinted(f"layer {path} is missing", path, hint))
    from zarr.core.sync import sync
    try:
        return sync(_read_group(path, with_arrays, hint))
    except CorruptLayerError:
        raise
    except Exception as err:  # zarr raises several types for a damaged zarr.json
        raise CorruptLayerError(_hinted(f"layer {path} cannot be opened ({err})", path, hint)) from err


def _verified_attrs(path, attrs, hint=None):
    if attrs.get("format") != FORMAT or attrs.get("complete") is not True:
        raise CorruptLayerError(_hinted(f"layer {path} is not a complete {FORMAT} layer", path, hint))
    if attrs.get("attrs_checksum") != attrs_checksum(attrs):
        raise CorruptLayerError(_hinted(f"layer {path}: its attributes (zarr.json) do not match their "
                                        "checksum (corrupt)", path, hint))
    return attrs


def layer_bytes(path):
    """Bytes of the files of a layer directory, its tree walked with ``os.scandir`` (0.021 ms per
    3x3 layer against 0.072 ms with ``Path.rglob``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist (callers read the layer's attributes first, which names it).
    """
    total = 0
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                total += layer_bytes(entry.path)
            elif entry.is_file(follow_symlinks=False):
                total += entry.stat(follow_symlinks=False).st_size
    return total


def remove_stale_temporaries(paths):
    """Remove the temporary directories a killed run left for the layers ``paths`` (a list; only
    theirs: jobs running side by side write other layers in the same directory). Each directory is
    listed once, however many layers it holds.

    Raises
    ------
    RuntimeError
        If this process does not hold the writer lock (:func:`strongsolve.store.lock.writer_lock`)
        of a directory above a layer: a temporary may then be a live writer's.
    """
    for p in map(Path, paths):
        if not holds_writer_lock(p):
            raise RuntimeError(f"removing the temporaries of {p} needs the writer lock of its run "
                               "directory (strongsolve.store.lock.writer_lock)")
    by_dir = {}
    for p in map(Path, paths):
        by_dir.setdefault(p.parent, set()).add(p.name)
    for directory, names in by_dir.items():
        if not directory.is_dir():
            continue
        for entry in os.scandir(directory):
            name, dot, _ = entry.name[1:].partition(".tmp-")
            if entry.name.startswith(".") and dot and name in names:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
