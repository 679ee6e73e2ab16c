"""Bytes on disk of a 2048 run's layers, as stored, and of alternative value codecs.

IDs (item 1): per age, the stored afterstate code's bits per afterstate (``afterstate_format`` 2:
Elias-Fano over the compact IDs; 1: over the raw IDs), against the Elias-Fano code of the raw IDs
rebuilt here (universe the largest ID + 1, as format 1 stored it), and the layer's bytes on disk.

Values (item 2, a solved run only): every value layer is read (float64, verified), cut into the
store's zarr chunks (``store.layers.CHUNK`` values) and compressed by each candidate pipeline of
numcodecs filters and compressors; each is decoded and compared bit for bit with the values
(``lossless``). The current codec is ``zstd1`` (zstd level 1 on the raw bytes, what
``store.layers.write_layer`` writes). Sizes exclude the zarr metadata and the 4-byte CRC32C per chunk,
the same for every candidate; ``value_bytes_on_disk`` counts everything.

Policy (item 3): bits per state of the optimal-play store, measured when ``policy/`` holds every
age, and from the state counts by the fuse's layout in any case (a forward-only run too).

Usage::

    python bench/storage.py RUN_DIR [--max-age N] [--codecs zstd1,shuffle-zstd1,...] [--json]

e.g. ``python bench/storage.py results/2048_3x3 --json``; a forward-only run (``--max-age``) gives
the IDs only.
"""

import argparse
import json
import sys
import time

import numcodecs
import numpy as np

from strongsolve.codecs.eliasfano import EliasFanoBuilder
from strongsolve.games.g2048.stages.policy import fuse_layout, policy_path
from strongsolve.games.g2048.advice import open_run
from strongsolve.store.layers import CHUNK, layer_bytes, read_attrs, read_layer


class BitsView:
    """Pseudo-filter: the values' bit patterns as int64 (a view, no conversion), so that Delta
    subtracts exactly (wrapping); a store would write them as an int64 array."""

    def encode(self, buf):
        return np.ascontiguousarray(buf).view("<i8")

    def decode(self, buf):
        return np.frombuffer(buf, "<i8").view("<f8")


def _int64_view(codecs):
    return [BitsView()] + codecs


BITSHUFFLE = numcodecs.Blosc.BITSHUFFLE
SHUFFLE = numcodecs.Blosc.SHUFFLE
CODECS = {
    "zstd1": [numcodecs.Zstd(level=1)],
    "zstd3": [numcodecs.Zstd(level=3)],
    "zstd5": [numcodecs.Zstd(level=5)],
    "zstd7": [numcodecs.Zstd(level=7)],
    "zstd9": [numcodecs.Zstd(level=9)],
    "zstd12": [numcodecs.Zstd(level=12)],
    "zstd15": [numcodecs.Zstd(level=15)],
    "zstd19": [numcodecs.Zstd(level=19)],
    "shuffle-zstd1": [numcodecs.Shuffle(elementsize=8), numcodecs.Zstd(level=1)],
    "shuffle-zstd3": [numcodecs.Shuffle(elementsize=8), numcodecs.Zstd(level=3)],
    "shuffle-zstd9": [numcodecs.Shuffle(elementsize=8), numcodecs.Zstd(level=9)],
    "shuffle-zstd19": [numcodecs.Shuffle(elementsize=8), numcodecs.Zstd(level=19)],
    "blosc-shuffle-zstd3": [numcodecs.Blosc("zstd", 3, SHUFFLE, 0)],
    "blosc-bitshuffle-zstd1": [numcodecs.Blosc("zstd", 1, BITSHUFFLE, 0)],
    "blosc-bitshuffle-zstd3": [numcodecs.Blosc("zstd", 3, BITSHUFFLE, 0)],
    "blosc-bitshuffle-zstd9": [numcodecs.Blosc("zstd", 9, BITSHUFFLE, 0)],
    "delta-zstd1": _int64_view([numcodecs.Delta("<i8"), numcodecs.Zstd(level=1)]),
    "delta-zstd3": _int64_view([numcodecs.Delta("<i8"), numcodecs.Zstd(level=3)]),
    "delta-shuffle-zstd1": _int64_view([numcodecs.Delta("<i8"), numcodecs.Shuffle(elementsize=8),
                                        numcodecs.Zstd(level=1)]),
    "delta-shuffle-zstd3": _int64_view([numcodecs.Delta("<i8"), numcodecs.Shuffle(elementsize=8),
                                        numcodecs.Zstd(level=3)]),
    "delta-bitshuffle-zstd3": _int64_view([numcodecs.Delta("<i8"),
                                           numcodecs.Blosc("zstd", 3, BITSHUFFLE, 0)]),
}


def encode(codecs, values):
    data = values
    for c in codecs:
        data = c.encode(data)
    return bytes(data)


def decode(codecs, data):
    for c in reversed(codecs):
        data = c.decode(data)
    return np.frombuffer(data, np.float64) if not isinstance(data, np.ndarray) else data.view(
        np.float64).ravel()


def measure_codec(codecs, layers):
    """Compressed bytes of every chunk of ``layers`` (list of float64 arrays), encode and decode
    seconds, and whether every value decodes bit for bit."""
    size = 0
    enc = dec = 0.0
    lossless = True
    for v in layers:
        for lo in range(0, v.size, CHUNK):
            chunk = np.ascontiguousarray(v[lo:lo + CHUNK])
            t = time.perf_counter()
            data = encode(codecs, chunk)
            enc += time.perf_counter() - t
            t = time.perf_counter()
            back = decode(codecs, data)
            dec += time.perf_counter() - t
            size += len(data)
            lossless &= back.size == chunk.size and np.array_equal(back.view(np.uint64),
                                                                    chunk.view(np.uint64))
    return size, enc, dec, lossless


def raw_code_bits(ids):
    """Bits of the Elias-Fano code of the raw IDs, universe the largest ID + 1 (format 1)."""
    builder = EliasFanoBuilder(ids.size, int(ids[-1]) + 1 if ids.size else 1)
    builder.extend(ids)
    return builder.build().size_in_bits


def measure(run_dir, max_age=None, codec_names=None):
    run = open_run(run_dir)
    ages = [n for n in run.ages(max_age) if run.afterstate_path(n).is_dir()]
    id_rows = []
    values = []
    value_disk = 0
    for n in ages:
        ids, attrs = run.load_afterstates(n)
        id_rows.append({"age": n, "afterstates": int(ids.size),
                        "format": attrs.get("afterstate_format", 1),
                        "stored_bits": attrs["eliasfano"]["size_in_bits"],
                        "raw_bits": raw_code_bits(ids),
                        "bytes_on_disk": layer_bytes(run.afterstate_path(n))})
        if run.values_path(n).is_dir():
            values.append(run.load_values(n, ids))
            value_disk += layer_bytes(run.values_path(n))
    total = sum(r["afterstates"] for r in id_rows)
    doc = {"run": str(run_dir), "rows": run.rows, "cols": run.cols, "ages": len(ages),
           "max_age": ages[-1] if ages else None, "afterstates": total,
           "formats": sorted({r["format"] for r in id_rows}),
           "ids": {
               "stored_bits_per_afterstate": sum(r["stored_bits"] for r in id_rows) / max(total, 1),
               "raw_bits_per_afterstate": sum(r["raw_bits"] for r in id_rows) / max(total, 1),
               "bytes_on_disk_per_afterstate": sum(r["bytes_on_disk"] for r in id_rows) / max(total, 1),
               "code_bytes": sum(-(-r["stored_bits"] // 8) for r in id_rows),
               "bytes_on_disk": sum(r["bytes_on_disk"] for r in id_rows)}}
    if values:
        n_values = sum(v.size for v in values)
        doc["values"] = {"count": n_values, "value_bytes_on_disk": value_disk,
                         "bytes_on_disk_per_value": value_disk / n_values,
                         "distinct_fraction": float(np.unique(np.concatenate(values)).size / n_values),
                         "distinct_per_layer_fraction": sum(np.unique(v).size for v in values) / n_values,
                         "zero_fraction": sum(int((v == 0).sum()) for v in values) / n_values,
                         "equal_previous_fraction": sum(int((v[1:] == v[:-1]).sum())
                                                        for v in values) / n_values,
                         "codecs": {}}
        for name in codec_names or CODECS:
            size, enc, dec, lossless = measure_codec(CODECS[name], values)
            doc["values"]["codecs"][name] = {
                "bytes": size, "bytes_per_value": size / n_values, "lossless": bool(lossless),
                "encode_mb_per_s": 8 * n_values / 1e6 / max(enc, 1e-9),
                "decode_mb_per_s": 8 * n_values / 1e6 / max(dec, 1e-9)}
    doc["policy"] = policy_sizes(run, ages)
    doc["per_age"] = id_rows
    return doc


def policy_sizes(run, ages):
    """Bits of the optimal-play store per state: measured on the ``policy/``
    layers when they exist, and by layout from the forward layers' state counts (the fuse of ``k``
    non-terminal states takes ``ceil(fuse_layout(k)[2] / 4)`` bytes, what ``build_fuse`` writes)."""
    states = sum(read_attrs(run.afterstate_path(n))["num_states"] for n in ages)
    live = [read_attrs(run.afterstate_path(n)) for n in ages]
    live = [a["num_states"] - a["num_terminal"] for a in live]
    by_layout = sum(-(-fuse_layout(k)[2] // 4) for k in live)
    doc = {"states": states, "non_terminal_states": sum(live), "bytes_by_layout": by_layout,
           "bits_per_state_by_layout": 8 * by_layout / max(states, 1),
           "bits_per_non_terminal_state_by_layout": 8 * by_layout / max(sum(live), 1)}
    if ages and all(policy_path(run, n).is_dir() for n in ages):
        stored = sum(read_attrs(policy_path(run, n))["array_length"] for n in ages)
        measured = sum(read_layer(policy_path(run, n))[0]["slots"].nbytes for n in ages)
        doc.update(bytes=measured, slots=stored, bits_per_state=8 * measured / max(states, 1),
                   bits_per_non_terminal_state=8 * measured / max(sum(live), 1),
                   bytes_on_disk=sum(layer_bytes(policy_path(run, n)) for n in ages))
    return doc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a run directory, e.g. results/2048_3x3")
    parser.add_argument("--max-age", type=int, default=None, help="last age (default: every layer)")
    parser.add_argument("--codecs", default=None,
                        help=f"comma-separated value codecs (default all: {','.join(CODECS)})")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--per-age", action="store_true", help="keep the per-age rows in the JSON")
    args = parser.parse_args(argv)
    names = args.codecs.split(",") if args.codecs else None
    unknown = sorted(set(names or []) - set(CODECS))
    if unknown:
        parser.error(f"unknown codec(s) {unknown}; allowed: {','.join(CODECS)}")
    doc = measure(args.run_dir, args.max_age, names)
    if not args.per_age:
        doc.pop("per_age")
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        print()
        return
    i = doc["ids"]
    print(f"{doc['run']}: {doc['afterstates']} afterstates in {doc['ages']} ages (format "
          f"{doc['formats']}): stored {i['stored_bits_per_afterstate']:.2f} bits/ID, raw "
          f"{i['raw_bits_per_afterstate']:.2f}, on disk {i['bytes_on_disk_per_afterstate'] * 8:.2f}")
    p = doc["policy"]
    print(f"  policy: {p['bits_per_state_by_layout']:.3f} bits/state by layout"
          + (f", {p['bits_per_state']:.3f} stored" if "bits_per_state" in p else ""))
    for name, c in doc.get("values", {}).get("codecs", {}).items():
        print(f"  values {name:<24} {c['bytes_per_value']:.3f} B/value  lossless {c['lossless']}  "
              f"encode {c['encode_mb_per_s']:.0f} MB/s  decode {c['decode_mb_per_s']:.0f} MB/s")


if __name__ == "__main__":
    main()
