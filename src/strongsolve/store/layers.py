"""Per-layer zarr v3 groups: atomic writes, checksums in the attributes, verified loads.

A layer is a zarr group holding one or more 1-d arrays and JSON attributes. It is written to a
temporary directory beside its final path and renamed when complete, so a killed run never leaves a
layer that looks complete (issue 5). The attributes carry, per array, its length, dtype and a BLAKE2b
checksum of its bytes, plus ``complete: true`` and whatever the stage adds (age, counts, the board
shape...). Every chunk also carries a CRC32C (zarr's ``crc32c`` codec), so a flipped byte is caught
even by a reader that does not verify the whole array.

:func:`read_layer` checks all of this and raises :class:`CorruptLayerError`, naming the file and
how to rebuild it, on any mismatch.
"""

import hashlib
import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import zarr
from zarr.codecs import BytesCodec, Crc32cCodec, ZstdCodec

FORMAT = "strongsolve-layer/1"
CHUNK = 1 << 20  # elements per zarr chunk: 8 MiB of uint64/float64, large enough to stream well


class CorruptLayerError(RuntimeError):
    """A layer file is missing, incomplete, corrupt or from another run."""


def checksum(array):
    """BLAKE2b-128 hex digest of a contiguous array's bytes, dtype and length."""
    a = np.ascontiguousarray(array)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{a.dtype.str}:{a.shape[0]}:".encode())
    h.update(a.view(np.uint8) if a.size else b"")
    return h.hexdigest()


def _rebuild_hint(path):
    return (f"delete {path} and run `snakemake --cores all` again to rebuild it "
            "(only the missing layers are recomputed)")


def write_layer(path, arrays, attrs):
    """Write a layer atomically.

    Parameters
    ----------
    path : str or Path
        Final directory of the zarr group (e.g. ``results/2048_3x3/afterstates/age_000042.zarr``).
    arrays : dict of str -> 1-d numpy array
    attrs : dict
        JSON-able attributes stored with the layer.

    Raises
    ------
    FileExistsError
        If ``path`` already exists: a layer is never silently overwritten.
    OSError
        If the disk is full or the directory is not writable; the temporary directory is removed.
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists; refusing to overwrite a computed layer")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        group = zarr.open_group(tmp, mode="w-", zarr_format=3)
        meta = {}
        for name, a in arrays.items():
            a = np.ascontiguousarray(a)
            if a.ndim != 1:
                raise ValueError(f"layer array {name!r} must be 1-d, got shape {a.shape}")
            z = group.create_array(name, shape=a.shape, dtype=a.dtype,
                                   chunks=(max(1, min(CHUNK, a.shape[0])),),
                                   serializer=BytesCodec(),
                                   compressors=[ZstdCodec(level=1), Crc32cCodec()])
            if a.size:
                z[:] = a
            meta[name] = {"length": int(a.shape[0]), "dtype": a.dtype.str, "checksum": checksum(a)}
        group.attrs.update(dict(attrs, format=FORMAT, arrays=meta, complete=True))
        _fsync_tree(tmp)
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _fsync_tree(root):
    """Flush every file of a finished layer to disk before the rename makes it visible."""
    for dirpath, _, files in os.walk(root):
        for f in files:
            fd = os.open(os.path.join(dirpath, f), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def read_attrs(path):
    """The attributes of a complete layer (arrays not verified).

    Raises
    ------
    CorruptLayerError
        If the layer is missing or was not completed.
    """
    path = Path(path)
    if not path.is_dir():
        raise CorruptLayerError(f"layer {path} is missing; {_rebuild_hint(path)}")
    try:
        attrs = dict(zarr.open_group(path, mode="r").attrs)
    except Exception as err:  # zarr raises several types for a damaged zarr.json
        raise CorruptLayerError(f"layer {path} cannot be opened ({err}); {_rebuild_hint(path)}") from err
    if attrs.get("format") != FORMAT or attrs.get("complete") is not True:
        raise CorruptLayerError(f"layer {path} is not a complete {FORMAT} layer; {_rebuild_hint(path)}")
    return attrs


def read_layer(path, expect=None):
    """Load and verify a layer.

    Parameters
    ----------
    path : str or Path
    expect : dict, optional
        Attributes that must match (e.g. ``{"rows": 3, "cols": 3, "age": 42}``).

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
    attrs = read_attrs(path)
    for key, want in (expect or {}).items():
        if attrs.get(key) != want:
            raise CorruptLayerError(f"layer {path} has {key} = {attrs.get(key)!r} but this run needs "
                                    f"{want!r}; it belongs to another run. Use another results "
                                    f"directory, or {_rebuild_hint(path)}")
    group = zarr.open_group(path, mode="r")
    arrays = {}
    for name, meta in attrs["arrays"].items():
        try:
            z = group[name]
            a = z[:] if meta["length"] else np.empty(0, np.dtype(meta["dtype"]))
        except Exception as err:
            raise CorruptLayerError(f"layer {path}: array {name!r} cannot be read ({err}); "
                                    f"{_rebuild_hint(path)}") from err
        a = np.asarray(a)
        if a.dtype.str != meta["dtype"] or a.shape != (meta["length"],) or checksum(a) != meta["checksum"]:
            raise CorruptLayerError(f"layer {path}: array {name!r} does not match its checksum "
                                    f"(corrupt or truncated); {_rebuild_hint(path)}")
        arrays[name] = a
    return arrays, attrs


def layer_bytes(path):
    """Bytes on disk of a layer directory."""
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def remove_stale_temporaries(path):
    """Remove the temporary directories a killed run left for the layer ``path`` (only that layer's:
    jobs running side by side write other layers in the same directory)."""
    path = Path(path)
    if path.parent.is_dir():
        for p in path.parent.glob(f".{path.name}.tmp-*"):
            shutil.rmtree(p, ignore_errors=True)
