"""Time the value-only Ludo race solver (strongsolve.games.ludo_values): seconds per sweep
(wall and CPU) on a given number of numba threads, peak RSS, and optionally the sweeps to a
tolerance; prints one JSON object.

Usage::

    nice python bench/ludo_values.py workflow/boards/classic60.yaml --pieces 3 --sweeps 2
    nice python bench/ludo_values.py bench/data/ludo_half30.yaml --pieces 3 --tol 1e-12 \
        --check-tol 1e-15
    nice python bench/ludo_values.py workflow/boards/classic60.yaml --pieces 2 --tol 1e-12
    nice python bench/ludo_values.py workflow/boards/classic60.yaml --pieces 2 --tol 1e-12 --compare

``--compare`` solves the race with plain sweeps and with the extrapolation
(strongsolve.games.ludo.stages.acceleration) and reports both sweep counts, the jumps and the largest
value difference; ``--max-ratio``, ``--agree`` and ``--ratios`` override that module's jump rule.
``--method`` picks the extrapolation, with ``--tol`` and ``--compare``: reduced rank (``rre``, the
solver's default) or the geometric tail (``tail``)::

    nice python bench/ludo_values.py bench/data/ludo_half30.yaml --pieces 3 --tol 1e-12 --method tail

``--start zero`` starts the sweeps from zeros instead of the solver's default, the race without
captures (strongsolve.games.ludo.stages.initial)::

    nice python bench/ludo_values.py bench/data/ludo_half30.yaml --pieces 3 --tol 1e-12 --start zero

``--digest`` (with ``--sweeps``) adds the BLAKE2b digest of the values after the sweeps, to compare
runs on different thread counts without keeping their values::

    python bench/ludo_values.py workflow/boards/classic60.yaml --sweeps 2 --threads 1 --digest
"""

import argparse
import hashlib
import json
import resource
import time

import numpy as np

from strongsolve.games.ludo import advice, encoding, rules
from strongsolve.games.ludo.stages import acceleration
from strongsolve.games.ludo.stages import values as ludo_values


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def advise_timing(board, pieces, held, sweeps, delta):
    """Seconds to checkpoint the values ``held[0]``, to read them back whole (as a resume does,
    after ``held`` lets them go), and to advise from them; peak RSS after the write and after the
    read."""
    import shutil
    import tempfile
    from pathlib import Path

    from strongsolve.games.ludo import saved as store
    from strongsolve.store.layers import layer_bytes, read_layer

    tmp = Path(tempfile.mkdtemp(prefix="ludo_values_bench_", dir="."))
    try:
        points = store.Checkpoints(tmp, board, pieces, log=lambda line: None)
        t = time.perf_counter()
        points.save(held[0].reshape(-1), sweeps, delta)
        write = time.perf_counter() - t
        rss_write = peak_rss()
        held.clear()
        [path] = points.paths()
        size = layer_bytes(path)
        t = time.perf_counter()
        read_layer(path)
        read = time.perf_counter() - t
        rss_read = peak_rss()
        # the design's example position (31 for 30, a trap source), its first `pieces`
        # pieces of each side; on another board, the first rest cells after 0
        own, opp = (8, 15, 42, 3)[:pieces], (10, 25, 31, 50)[:pieces]
        rest = board.rest_cells()
        if not set(own + opp) <= set(rest):
            own, opp = tuple(rest[1:1 + pieces]), tuple(rest[1 + pieces:1 + 2 * pieces])
        t = time.perf_counter()
        saved = store.SavedValues(path, require_converged=False)
        choices = advice.advise(board, saved.race.lex_encoding(), saved.lex_values(), own, opp, 5)
        advise = time.perf_counter() - t
        return {"checkpoint_write_seconds": round(write, 2), "checkpoint_bytes": size,
                "peak_rss_after_write_bytes": rss_write,
                "checkpoint_read_verify_seconds": round(read, 2),
                "peak_rss_after_read_bytes": rss_read,
                "advise_position": f"{','.join(map(str, own))}/{','.join(map(str, opp))} roll 5",
                "advise_seconds_in_process": round(advise, 3), "advise_rows_read": len(saved.rows),
                "advise_choices": len(choices)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("board")
    ap.add_argument("--pieces", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sweeps", type=int, help="run this many sweeps from zero and time each")
    ap.add_argument("--digest", action="store_true",
                    help="with --sweeps: print the BLAKE2b digest of the values after them")
    ap.add_argument("--tol", type=float, help="solve to this largest change per sweep instead")
    ap.add_argument("--advise-timing", action="store_true",
                    help="with --sweeps: write the values as a checkpoint (timed), read it back "
                         "whole as a resume does (timed), and time advice on one position from it "
                         "(rows read on demand, as `ludo advise`)")
    ap.add_argument("--check-tol", type=float,
                    help="with --tol: solve again to this tighter tolerance and report the largest "
                         "value difference (the error the looser stop leaves)")
    ap.add_argument("--no-extrapolation", action="store_true",
                    help="with --tol: plain sweeps only")
    ap.add_argument("--compare", action="store_true",
                    help="with --tol: solve with plain sweeps and with the extrapolation; report "
                         "both sweep counts and the largest value difference")
    ap.add_argument("--method", choices=["tail", "rre"], default="rre",
                    help="the extrapolation: reduced rank (rre, default) or geometric tail")
    ap.add_argument("--start", choices=ludo_values.STARTS, default="independent",
                    help="with --tol: the values the sweeps start from (the solver's default: the "
                         "race without captures)")
    ap.add_argument("--max-ratio", type=float, help="override acceleration.MAX_RATIO")
    ap.add_argument("--agree", type=float, help="override acceleration.AGREE")
    ap.add_argument("--ratios", type=int, help="override acceleration.RATIOS")
    args = ap.parse_args()
    for name in ("max_ratio", "agree", "ratios"):
        if getattr(args, name) is not None:
            setattr(acceleration, name.upper(), getattr(args, name))
    board = rules.load_board(args.board)
    threads = ludo_values.set_threads(args.threads)
    out = {"board": args.board, "pieces": args.pieces, "threads": threads,
           "positions": encoding.race_positions(board, args.pieces),
           "value_bytes": ludo_values.value_bytes(board, args.pieces)}
    began = time.perf_counter()
    race = ludo_values.race_tables(board, args.pieces)
    out["tables_seconds"] = round(time.perf_counter() - began, 3)
    sweeps = []

    def progress(sweep, delta, seconds):
        sweeps.append({"sweep": sweep, "largest_change": delta, "wall_seconds": round(seconds, 3),
                       "cpu_seconds": round(time.process_time() - progress.cpu, 3)})
        progress.cpu = time.process_time()

    if args.sweeps:
        value = np.zeros((race.n_tuples, race.n_tuples))
        sweep = ludo_values.Sweeper(race, 1e-12)
        progress.cpu = time.process_time()
        for i in range(args.sweeps):
            t = time.perf_counter()
            delta = sweep(value)
            progress(i + 1, delta, time.perf_counter() - t)
        out["peak_rss_after_sweeps_bytes"] = peak_rss()
        if args.digest:
            out["values_blake2b"] = hashlib.blake2b(memoryview(value).cast("B")).hexdigest()
        if args.advise_timing:
            held = [value]
            del value
            out["advise_timing"] = advise_timing(board, args.pieces, held, args.sweeps, delta)
    elif args.compare:
        out["method"] = args.method
        out["start"] = args.start
        out["rule"] = {"ratios": acceleration.RATIOS, "agree": acceleration.AGREE,
                       "max_ratio": acceleration.MAX_RATIO, "plain_below": acceleration.PLAIN_BELOW}
        solved = {}
        for name, on in (("plain", False), ("extrapolated", args.method)):
            changes = []
            began = time.process_time()
            sol = ludo_values.solve_values(board, args.pieces, tol=args.tol, extrapolation=on,
                                           progress=lambda n, d, s: changes.append(d),
                                           start=args.start)
            solved[name] = sol
            out[name] = {"sweeps_to_tol": sol.sweeps, "jumps": sol.jumps,
                         "win_probability": sol.win_probability, "residual": sol.residual,
                         "cpu_seconds": round(time.process_time() - began, 2),
                         "largest_changes": changes}
        out.update(tol=args.tol, largest_value_difference=float(
            np.abs(solved["plain"].value - solved["extrapolated"].value).max()))
    else:
        progress.cpu = time.process_time()
        method = False if args.no_extrapolation else args.method
        sol = ludo_values.solve_values(board, args.pieces, tol=args.tol, progress=progress,
                                       extrapolation=method, start=args.start)
        out.update(win_probability=sol.win_probability, sweeps_to_tol=sol.sweeps, tol=args.tol,
                   residual=sol.residual, jumps=sol.jumps,
                   extrapolation=method, start=args.start)
        if args.check_tol:
            tight = ludo_values.solve_values(board, args.pieces, tol=args.check_tol,
                                             extrapolation=method, start=args.start)
            out.update(check_tol=args.check_tol, check_sweeps=tight.sweeps,
                       largest_value_difference=float(np.abs(tight.value - sol.value).max()),
                       check_win_probability=tight.win_probability)
    out["per_sweep"] = sweeps
    walls = [s["wall_seconds"] for s in sweeps]
    cpus = [s["cpu_seconds"] for s in sweeps]
    out["median_wall_seconds_per_sweep"] = float(np.median(walls)) if walls else None
    out["median_cpu_seconds_per_sweep"] = float(np.median(cpus)) if cpus else None
    out["cpu_ns_per_position_sweep"] = (round(1e9 * out["median_cpu_seconds_per_sweep"]
                                              / out["positions"], 1) if cpus else None)
    out["peak_rss_bytes"] = peak_rss()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
