"""Benchmark the Elias-Fano layers of 2048 afterstate IDs.

Per age layer of the forward pass: the number of afterstates ``n``; for the raw canonical IDs and
each compact-ID option (base adjustment, cell omission, both; Kaneko & Yamashita 2025) the universe
``U``, the coded size in bits per ID, the Elias-Fano bound ``2 + ceil(log2(U/n))``, batch
``index_of`` lookups per second over a shuffled mix of members and non-members, and encode
throughput (IDs per second through ``EliasFanoBuilder``). Totals weight every layer by its size.
A sample-rate sweep on the largest layer shows the space/time trade-off of the select samples.

Usage::

    python bench/eliasfano.py [--json] [--layers 3x3[,4x3]] [--max-age N] [--sample-rate S]
"""

import argparse
import json
import sys
import time

import numpy as np

from strongsolve.codecs.eliasfano import DEFAULT_SAMPLE_RATE, EliasFanoBuilder, bits_bound
from strongsolve.games.g2048.encoding.compact_ids import encode_ids, universe
from strongsolve.games.g2048.stages.forward import forward_layers

OPTIONS = {"raw": (False, False), "base": (True, False), "omit": (False, True), "both": (True, True)}
CHUNK = 1 << 16
SWEEP_RATES = (32, 64, 128, 256, 512, 1024)


def encode(codes, U, sample_rate):
    """Build the sequence chunk by chunk, as a store would from sorted runs; return (seq, seconds)."""
    start = time.perf_counter()
    builder = EliasFanoBuilder(len(codes), U, sample_rate)
    for first in range(0, len(codes), CHUNK):
        builder.extend(codes[first:first + CHUNK])
    seq = builder.build()
    return seq, time.perf_counter() - start


def lookup_queries(codes, U, count, rng):
    """A shuffled mix of ``count`` queries: half members, half non-members (uint64)."""
    members = rng.choice(codes, count // 2)  # with replacement: a small layer gives a full batch
    others = rng.integers(0, min(U, 1 << 63), 2 * (count - count // 2) + 16, dtype=np.uint64)
    others = others[np.isin(others, codes, invert=True)][:count - count // 2]
    return rng.permutation(np.concatenate([members, others]))


def time_lookups(seq, queries, min_seconds):
    """Lookups per second of ``seq.index_of_batch(queries)``, repeated for at least ``min_seconds``."""
    done = 0
    start = time.perf_counter()
    while True:
        seq.index_of_batch(queries)
        done += len(queries)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return done / elapsed, done, elapsed


def measure_layer(ids, rows, cols, age, sample_rate, max_queries, rng):
    out = {"age": age, "n": int(len(ids)), "options": {}}
    for name, (base_adjust, omit_cell) in OPTIONS.items():
        U = universe(rows, cols, age, base_adjust, omit_cell)
        start = time.perf_counter()
        codes = encode_ids(ids, rows, cols, age, base_adjust, omit_cell)
        compact_seconds = time.perf_counter() - start
        seq, ef_seconds = encode(codes, U, sample_rate)
        # a fixed batch size, so the parallel launch is amortised alike on small and large layers
        queries = lookup_queries(codes, U, max_queries, rng)
        rate, done, seconds = time_lookups(seq, queries, 0.0)
        out["options"][name] = {
            "universe": str(U),
            "bits_per_id": seq.size_in_bits / len(ids),
            "bound_bits_per_id": bits_bound(len(ids), U),
            "size_in_bits": seq.size_in_bits,
            "low_bits": seq.low_bits,
            "lookups_per_s": rate,
            "_lookups": done, "_lookup_s": seconds,
            "encode_ids_per_s": len(ids) / ef_seconds, "_encode_s": ef_seconds,
            "compact_ids_per_s": len(ids) / max(compact_seconds, 1e-9), "_compact_s": compact_seconds,
        }
    return out


def sweep(ids, rows, cols, age, max_queries, rng):
    """Bits per ID and lookups per second at several sample rates (both options), one layer."""
    codes = encode_ids(ids, rows, cols, age, True, True)
    U = universe(rows, cols, age, True, True)
    queries = lookup_queries(codes, U, max_queries, rng)
    rows_out = []
    for rate in SWEEP_RATES:
        seq, _ = encode(codes, U, rate)
        rows_out.append({"sample_rate": rate, "bits_per_id": seq.size_in_bits / len(ids),
                         "lookups_per_s": time_lookups(seq, queries, 0.0)[0]})
    return {"age": age, "n": int(len(ids)), "rates": rows_out}


def totals(layers):
    """Size-weighted totals per option: bits per ID, and rates as total work over total time."""
    out = {}
    n = sum(layer["n"] for layer in layers)
    for name in OPTIONS:
        opts = [layer["options"][name] for layer in layers]
        out[name] = {
            "n": n,
            "bits_per_id": sum(o["size_in_bits"] for o in opts) / n,
            "bound_bits_per_id": sum(o["bound_bits_per_id"] * L["n"] for o, L in zip(opts, layers)) / n,
            "lookups_per_s": sum(o["_lookups"] for o in opts) / sum(o["_lookup_s"] for o in opts),
            "encode_ids_per_s": n / sum(o["_encode_s"] for o in opts),
            "compact_ids_per_s": n / sum(o["_compact_s"] for o in opts),
        }
    return out


def parse_shape(text):
    try:
        rows, cols = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"bad board shape {text!r}: use ROWSxCOLS, e.g. 3x3") from None
    return rows, cols


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--layers", default="3x3", help="board shapes, comma-separated (e.g. 3x3,4x3)")
    parser.add_argument("--max-age", type=int, default=None, help="last age (default: the last one)")
    parser.add_argument("--sample-rate", type=int, default=DEFAULT_SAMPLE_RATE)
    parser.add_argument("--max-queries", type=int, default=20000, help="lookups per layer and option")
    parser.add_argument("--sweep-queries", type=int, default=200_000,
                        help="lookups per sample rate in the sweep on the largest layer")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    # compile the kernels before timing anything
    warm = np.arange(1, 9, dtype=np.uint64) * np.uint64(2)
    encode(warm, 32, 2)[0].index_of_batch(warm)
    encode_ids(np.array([0x11], np.uint64), 2, 2, 4)

    report = {"sample_rate": args.sample_rate, "max_age": args.max_age, "shapes": {}}
    for shape in args.layers.split(","):
        rows, cols = parse_shape(shape)
        start = time.perf_counter()
        layers, largest, empty = [], None, 0
        forward_seconds = 0.0
        for layer in forward_layers(rows, cols, args.max_age):
            forward_seconds += time.perf_counter() - start
            ids = layer.afterstates
            if len(ids) == 0:
                empty += 1
            else:
                layers.append(measure_layer(ids, rows, cols, layer.age, args.sample_rate,
                                            args.max_queries, rng))
                if largest is None or len(ids) > len(largest[1]):
                    largest = (layer.age, ids)
            start = time.perf_counter()
        report["shapes"][shape] = {
            "layers": layers, "empty_layers": empty, "forward_seconds": forward_seconds,
            "totals": totals(layers),
            "sample_rate_sweep": sweep(largest[1], rows, cols, largest[0], args.sweep_queries, rng),
        }

    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        print_table(report)
    return report


def print_table(report):
    for shape, res in report["shapes"].items():
        print(f"== {shape}: {len(res['layers'])} non-empty layers, {res['empty_layers']} empty; "
              f"forward pass {res['forward_seconds']:.1f} s; sample rate {report['sample_rate']}")
        print(f"{'age':>6} {'n':>9}  " + "  ".join(f"{k + ' b/ID':>10} {'bound':>5}" for k in OPTIONS)
              + f"  {'lookup/s':>10} {'enc ID/s':>10}")
        step = max(1, len(res["layers"]) // 40)
        for layer in res["layers"][::step]:
            o = layer["options"]
            print(f"{layer['age']:>6} {layer['n']:>9}  "
                  + "  ".join(f"{o[k]['bits_per_id']:>10.2f} {o[k]['bound_bits_per_id']:>5}"
                              for k in OPTIONS)
                  + f"  {o['both']['lookups_per_s']:>10.3g} {o['both']['encode_ids_per_s']:>10.3g}")
        print("totals (size-weighted):")
        for k, t in res["totals"].items():
            print(f"  {k:>5}: {t['bits_per_id']:.3f} bits/ID (bound {t['bound_bits_per_id']:.3f}), "
                  f"{t['lookups_per_s']:.3g} lookups/s, {t['encode_ids_per_s']:.3g} IDs/s encoded, "
                  f"{t['compact_ids_per_s']:.3g} IDs/s compacted")
        sw = res["sample_rate_sweep"]
        print(f"sample rates on the largest layer (age {sw['age']}, n = {sw['n']}, both options):")
        for r in sw["rates"]:
            print(f"  s = {r['sample_rate']:>5}: {r['bits_per_id']:.3f} bits/ID, "
                  f"{r['lookups_per_s']:.3g} lookups/s")


if __name__ == "__main__":
    main()
