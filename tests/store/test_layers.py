"""Atomic writes, checksums and verified loads of the result store.

Every corruption below must be refused with :class:`CorruptLayerError` naming the file and how to
rebuild it; every write error must raise :class:`StoreWriteError` and leave nothing that looks
complete. The chunk and attribute tests flip every single byte, not a sample.
"""

import errno
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from strongsolve.games.g2048.hints import repair_command
from strongsolve.store.atomic import write_json_atomic, write_text_atomic
from strongsolve.store.errors import StoreWriteError
from strongsolve.store.layers import (
    CHUNK,
    CorruptLayerError,
    attrs_checksum,
    block_manifest,
    checksum,
    layer_bytes,
    read_attrs,
    read_layer,
    remove_stale_temporaries,
    write_layer,
)
from strongsolve.store.lock import writer_lock
from strongsolve.store.space import write_failed

IDS = np.array([3, 17, 18, 2**40 + 5, 2**63 + 1], np.uint64)
VALUES = np.array([0.0, 1.5, -2.25, 1e300, 123.456], np.float64)
ATTRS = {"game": "2048", "rows": 2, "cols": 3, "p2": 0.9, "age": 42, "num_states": 7}


@pytest.fixture
def layer(tmp_path):
    """A complete layer at .../afterstates/age_000042.zarr with its block manifest beside it."""
    path = tmp_path / "afterstates" / "age_000042.zarr"
    write_layer(path, {"ids": IDS, "values": VALUES}, ATTRS)
    write_json_atomic(tmp_path / "afterstates" / "block_000004-000040.json", {"ages": []})
    write_json_atomic(tmp_path / "afterstates" / "block_000042-000050.json", {"ages": []})
    return path


def snapshot(root):
    """Relative path -> bytes of every file under ``root``."""
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_refused(path, match=None):
    """read_layer refuses ``path`` with a message naming it, its block manifest and the rebuild."""
    with pytest.raises(CorruptLayerError, match=match) as info:
        read_layer(path, dict(ATTRS), repair_command)
    message = str(info.value)
    assert str(path) in message
    assert (f"to rebuild it, run: `rm -rf {path} && snakemake --cores all --forcerun "
            f"{path.parent / 'block_000042-000050.json'}`") in message
    return message


def test_roundtrip_keeps_arrays_and_attributes(layer):
    arrays, attrs = read_layer(layer, {"age": 42, "rows": 2})
    assert arrays["ids"].dtype == np.uint64 and np.array_equal(arrays["ids"], IDS)
    assert arrays["values"].dtype == np.float64 and np.array_equal(arrays["values"], VALUES)
    assert {k: attrs[k] for k in ATTRS} == ATTRS
    assert attrs["complete"] is True
    assert attrs["arrays"]["ids"] == {"length": 5, "dtype": "<u8", "checksum": checksum(IDS)}
    assert read_attrs(layer) == attrs


def _small_arrays(case, length):
    rng = np.random.default_rng(length)
    if case == "zeros":  # all the fill value: zarr writes no chunk
        return {"ids": np.zeros(length, np.uint64), "values": np.zeros(length)}
    if case == "signed zeros":
        return {"values": np.full(length, -0.0), "flags": np.zeros(length, np.uint8)}
    if case == "mixed":  # a few dtypes, NaN and infinities among the values
        values = rng.random(length)
        values[::7] = np.nan
        values[1::11] = -np.inf
        return {"small": rng.integers(-5, 5, length).astype(np.int16), "values": values,
                "bytes": rng.integers(0, 3, length).astype(np.uint8)}
    return {"ids": np.sort(rng.integers(0, 2**63, length).astype(np.uint64)), "values": rng.random(length)}


def _zarr_written(directory, arrays, attrs, zstd_level, chunk):
    """The files zarr's own LocalStore writes for a layer (the reference of write_layer's bytes)."""
    from zarr.core.sync import sync
    from strongsolve.store import layers
    meta = {name: {"length": int(a.shape[0]), "dtype": a.dtype.str, "checksum": checksum(a)}
            for name, a in arrays.items()}
    full = dict(attrs, format=layers.FORMAT, arrays=meta, complete=True)
    sync(layers._write_group(str(directory), arrays, dict(full, attrs_checksum=attrs_checksum(full)),
                             zstd_level, chunk))
    return snapshot(directory)


@pytest.mark.parametrize("case", ["random", "zeros", "signed zeros", "mixed"])
@pytest.mark.parametrize("length", [0, 1, 5, 3000])
@pytest.mark.parametrize("zstd_level", [1, 3])
@pytest.mark.parametrize("chunk", [None, 1000, 700])
def test_a_layer_is_written_as_the_files_zarr_writes(tmp_path, case, length, zstd_level, chunk):
    # layers are encoded chunk by chunk without zarr's event loop and written with plain file
    # calls: the same files, byte for byte, as zarr's own LocalStore writes; chunk 700 leaves a
    # partial last chunk (zarr pads it), and the zero cases have chunks zarr does not write
    arrays = _small_arrays(case, length)
    if case == "zeros" and length == 3000:  # one chunk of nonzero values among zero ones
        arrays["values"][1500:1600] = 1.0
    attrs = dict(ATTRS, mean=float("nan"), none=None, nested={"a": [1, 2.5]})
    options = {} if chunk is None else {"chunk": chunk}
    write_layer(tmp_path / "ours" / "age_000042.zarr", arrays, attrs, zstd_level=zstd_level, **options)
    ours = snapshot(tmp_path / "ours" / "age_000042.zarr")
    assert ours == _zarr_written(tmp_path / "zarr", arrays, attrs, zstd_level, chunk or CHUNK)
    if case == "random":
        per_array = -(-length // (chunk or CHUNK))
        chunks = [f"{name}/c/{k}" for name in ("ids", "values") for k in range(per_array)]
        assert sorted(map(str, ours)) == sorted(chunks + ["ids/zarr.json", "values/zarr.json", "zarr.json"])
    loaded, got = read_layer(tmp_path / "ours" / "age_000042.zarr", ATTRS)
    assert all(np.array_equal(loaded[k], arrays[k], equal_nan=True) for k in arrays)
    assert all(np.signbit(loaded[k]).tolist() == np.signbit(arrays[k]).tolist()
               for k in arrays if arrays[k].dtype.kind == "f")
    assert sorted(os.listdir(tmp_path / "ours")) == ["age_000042.zarr"]  # no temporary left


def test_small_layer_threshold():
    from strongsolve.store.layers import SMALL_LAYER_BYTES, is_small
    assert is_small({"ids": np.empty(SMALL_LAYER_BYTES // 8, np.uint64)})
    assert not is_small({"ids": np.empty(SMALL_LAYER_BYTES // 16, np.uint64),
                         "values": np.empty(SMALL_LAYER_BYTES // 16 + 1, np.float64)})


def test_empty_array_roundtrip(tmp_path):
    path = tmp_path / "age_000004.zarr"
    write_layer(path, {"ids": np.empty(0, np.uint64)}, {"age": 4})
    arrays, attrs = read_layer(path)
    assert arrays["ids"].dtype == np.uint64 and arrays["ids"].size == 0
    assert attrs["arrays"]["ids"]["length"] == 0


def test_checksum_depends_on_bytes_dtype_and_length():
    a = np.arange(4, dtype=np.uint64)
    assert checksum(a) == checksum(a.copy())
    assert checksum(a) != checksum(a.astype(np.int64))  # same bytes, other dtype
    assert checksum(a) != checksum(a[:3])
    b = a.copy()
    b[2] ^= np.uint64(1 << 17)
    assert checksum(a) != checksum(b)


def test_write_refuses_to_overwrite(layer):
    before = snapshot(layer)
    with pytest.raises(FileExistsError, match="refusing to overwrite"):
        write_layer(layer, {"ids": IDS[:2]}, ATTRS)
    assert snapshot(layer) == before


def test_layer_from_another_run_is_refused(layer):
    with pytest.raises(CorruptLayerError, match=r"has rows = 2 but this run needs 3; it belongs to another run"):
        read_layer(layer, {"rows": 3})


def test_every_flipped_byte_of_a_chunk_is_refused(layer):
    chunk = layer / "ids" / "c" / "0"
    original = chunk.read_bytes()
    assert len(original) > 20
    for i in range(len(original)):
        flipped = bytearray(original)
        flipped[i] ^= 0x01 << (i % 8)
        chunk.write_bytes(bytes(flipped))
        assert_refused(layer, match=r"array 'ids' (cannot be read|does not match its checksum)")
    chunk.write_bytes(original)
    assert np.array_equal(read_layer(layer)[0]["ids"], IDS)


def test_truncated_or_missing_chunk_is_refused(layer):
    chunk = layer / "values" / "c" / "0"
    original = chunk.read_bytes()
    chunk.write_bytes(original[: len(original) // 2])
    assert_refused(layer)
    chunk.unlink()  # zarr would read the fill value (zeros) silently: the checksum catches it
    assert_refused(layer, match="does not match its checksum")


def test_every_flipped_byte_of_the_attributes_is_refused(layer):
    meta = layer / "zarr.json"
    original = meta.read_bytes()
    doc = original.decode()
    start = doc.index('"attributes"')
    end = doc.index('"zarr_format"')
    assert end > start + 200  # the attributes block: counts, checksums, format, complete
    for i in range(start, end):
        flipped = bytearray(original)
        flipped[i] ^= 0x01 << (i % 7)
        meta.write_bytes(bytes(flipped))
        assert_refused(layer)
        with pytest.raises(CorruptLayerError):
            read_attrs(layer)
    meta.write_bytes(original)
    read_layer(layer)


def test_attribute_change_that_stays_valid_json_is_refused(layer):
    meta = layer / "zarr.json"
    doc = json.loads(meta.read_text())
    doc["attributes"]["num_states"] = 8
    meta.write_text(json.dumps(doc, indent=2))
    message = assert_refused(layer, match=r"attributes \(zarr.json\) do not match their checksum")
    assert "zarr.json" in message


def test_incomplete_or_missing_layer_is_refused(tmp_path, layer):
    meta = layer / "zarr.json"
    doc = json.loads(meta.read_text())
    del doc["attributes"]["complete"]
    meta.write_text(json.dumps(doc))
    assert_refused(layer, match="is not a complete")
    missing = tmp_path / "afterstates" / "age_000044.zarr"
    with pytest.raises(CorruptLayerError) as info:  # nothing to delete: the command alone
        read_layer(missing, hint=repair_command)
    assert str(info.value) == (f"layer {missing} is missing; to rebuild it, run: `snakemake --cores all "
                               f"--forcerun {missing.parent / 'block_000042-000050.json'}`")


def test_without_a_hint_the_store_names_no_command(tmp_path, layer):
    missing = tmp_path / "afterstates" / "age_000044.zarr"
    with pytest.raises(CorruptLayerError) as info:
        read_layer(missing)
    assert str(info.value) == f"layer {missing} is missing"
    with pytest.raises(CorruptLayerError) as info:
        read_layer(layer, {"rows": 3})
    assert str(info.value).endswith("it belongs to another run. Use another results directory")


def test_block_manifest_is_the_one_holding_the_age(tmp_path, layer):
    d = tmp_path / "afterstates"
    assert block_manifest(d / "age_000042.zarr") == d / "block_000042-000050.json"
    assert block_manifest(d / "age_000050.zarr") == d / "block_000042-000050.json"
    assert block_manifest(d / "age_000040.zarr") == d / "block_000004-000040.json"
    assert block_manifest(d / "age_000052.zarr") is None
    assert block_manifest(tmp_path / "other.zarr") is None


def test_stale_temporaries_are_removed_and_never_look_complete(tmp_path, layer):
    d = layer.parent
    stale = d / ".age_000044.zarr.tmp-0badc0de"
    (stale / "ids").mkdir(parents=True)
    (stale / "zarr.json").write_text("{}")
    with pytest.raises(CorruptLayerError, match="is missing"):
        read_layer(d / "age_000044.zarr")
    other = d / ".age_000046.zarr.tmp-0badf00d"  # another layer's, being written by another job
    other.mkdir()
    with pytest.raises(RuntimeError, match="needs the writer lock of its run directory"):
        remove_stale_temporaries([d / "age_000044.zarr"])  # it may be a live writer's
    assert stale.is_dir()
    with writer_lock(tmp_path):
        remove_stale_temporaries([d / "age_000044.zarr", d / "age_000048.zarr"])
    assert not stale.exists()
    assert layer.is_dir() and other.is_dir()  # only those layers' temporaries go


def test_write_text_atomic_replaces_and_cleans_temporaries(tmp_path):
    path = tmp_path / "summary.csv"
    stale = tmp_path / ".summary.csv.tmp-deadbeef"
    stale.write_text("half a fi")
    write_text_atomic(path, "age,states\n4,2\n")  # no writer lock: the temporary may be a live writer's
    assert stale.read_text() == "half a fi"
    with writer_lock(tmp_path):
        write_text_atomic(path, "age,states\n4,3\n")
    assert path.read_text() == "age,states\n4,3\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.csv"]


def test_write_into_a_directory_taken_by_a_file_fails_cleanly(tmp_path, layer):
    # Root ignores permission bits, so the unwritable directory is a path whose name a file holds.
    blocked = tmp_path / "values"
    blocked.write_text("not a directory")
    before = snapshot(tmp_path)
    with pytest.raises(StoreWriteError) as info:
        write_layer(blocked / "age_000042.zarr", {"values": VALUES}, ATTRS)
    assert str(info.value).startswith(f"cannot write {blocked / 'age_000042.zarr'}: not a directory ({blocked})")
    assert "nothing was written" in str(info.value)
    assert isinstance(info.value, OSError) and info.value.errno is not None
    with pytest.raises(StoreWriteError, match=f"cannot write {blocked / 'block_000042-000050.json'}"):
        write_json_atomic(blocked / "block_000042-000050.json", {})
    assert snapshot(tmp_path) == before


def test_disk_full_while_writing_a_layer_leaves_nothing(tmp_path):
    """A file-size limit (RLIMIT_FSIZE, which binds root too) makes a chunk write fail with EFBIG in
    the middle of the layer, as a full disk would; run in a child so pytest's own files are spared."""
    code = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        from strongsolve.store.layers import write_layer
        from strongsolve.store.atomic import write_text_atomic
        from strongsolve.store.errors import StoreWriteError
        write_text_atomic({str(tmp_path / "summary.csv")!r}, "old\\n")
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        ids = np.random.default_rng(5).integers(0, 2**63, 100_000).astype(np.uint64)
        for write in (lambda: write_layer({str(tmp_path / "age_000042.zarr")!r}, {{"ids": ids}}, {{}}),
                      lambda: write_text_atomic({str(tmp_path / "summary.csv")!r}, "x" * 10_000)):
            try:
                write()
            except StoreWriteError as err:
                print(err.errno, err)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{errno.EFBIG} cannot write {tmp_path / 'age_000042.zarr'}: File too large")
    assert lines[1].startswith(f"{errno.EFBIG} cannot write {tmp_path / 'summary.csv'}: File too large")
    # no layer, no temporary directory, and the old summary untouched
    assert sorted(os.listdir(tmp_path)) == ["summary.csv"]
    assert (tmp_path / "summary.csv").read_text() == "old\n"


def test_a_write_already_under_way_names_the_file_in_the_way(tmp_path):
    # the directory became a file while a layer's temporary directory was being filled (a write on
    # the stage's I/O thread): the error names that file, not the temporary name below it
    (tmp_path / "values").write_text("")
    below = tmp_path / "values" / ".age_000042.zarr.tmp-0badc0de" / "zarr.json"
    err = write_failed(tmp_path / "values" / "age_000042.zarr",
                       NotADirectoryError(errno.ENOTDIR, "Not a directory", str(below)))
    assert f"cannot write {tmp_path}/values/age_000042.zarr: not a directory ({tmp_path}/values); " in str(err)
    assert err.errno == errno.ENOTDIR


def test_identical_rewrite_leaves_the_file_and_its_mtime(tmp_path):
    # A late orphan that waited for the writer lock rewrites a finished job's outputs: Snakemake must
    # not see them as newer than the files built from them.
    path = tmp_path / "summary.csv"
    write_text_atomic(path, "age,states\n4,2\n")
    os.utime(path, ns=(10**9, 10**9))
    write_text_atomic(path, "age,states\n4,2\n")
    assert path.stat().st_mtime_ns == 10**9
    manifest = tmp_path / "block_000004-000098.json"
    write_json_atomic(manifest, {"ages": [{"age": 4}], "seconds": 1.5})
    os.utime(manifest, ns=(10**9, 10**9))
    write_json_atomic(manifest, {"ages": [{"age": 4}], "seconds": 0.25}, keep_if_same_except=("seconds",))
    assert manifest.stat().st_mtime_ns == 10**9 and json.loads(manifest.read_text())["seconds"] == 1.5
    write_json_atomic(manifest, {"ages": [{"age": 6}], "seconds": 0.25}, keep_if_same_except=("seconds",))
    assert json.loads(manifest.read_text()) == {"ages": [{"age": 6}], "seconds": 0.25}
    write_text_atomic(path, "age,states\n4,3\n")
    assert path.read_text() == "age,states\n4,3\n"


@pytest.mark.parametrize("size", [0, 100, 5000, 300_000])
def test_layer_bytes_is_the_size_of_every_file_of_the_layer(tmp_path, size):
    path = tmp_path / "age_000042.zarr"
    rng = np.random.default_rng(size)
    write_layer(path, {"ids": rng.integers(0, 2**40, size).astype(np.uint64), "more": np.arange(size % 7)},
                {"age": 42})
    files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
    assert len(files) >= 3  # the group's zarr.json and each array's (chunks: not when all zero)
    assert layer_bytes(path) == sum(os.path.getsize(f) for f in files)
