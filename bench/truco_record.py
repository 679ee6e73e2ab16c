"""Append every solved Truco subgame's measurements to the dated record ``bench/truco_subgames.csv``
(date, commit, tier, subgame, iterations, NashConv, seconds, peak RSS).

Reads ``grid_summary.csv`` (the workflow writes it after every tier job), so the numbers are the
ones each job measured while it solved, not a rerun. ``solved_at`` is the time the subgame's store
was written (UTC, from its ``zarr.json``); ``recorded_commit`` the commit checked out when this
script ran (a subgame does not store the commit that solved it). A subgame already in the record
with the same measurements (same iterations and CPU seconds) is not appended again; a re-solve is.
Prints what it appended as JSON.

    python bench/truco_record.py --results results --tier t1
"""

import argparse
import csv
import datetime
import json
import os
import subprocess
from pathlib import Path

from strongsolve.games.truco.stages.grid import stored_path

RECORD = Path(__file__).with_name("truco_subgames.csv")
COLUMNS = ["solved_at", "recorded_commit", "tier", "mano", "pe", "vira_class", "value", "nash_conv",
           "exploitability", "iterations", "seconds", "cpu_seconds", "max_rss_mib", "n_nodes"]


def _written(results, row):
    path = stored_path(results, int(row["mano"]), int(row["pe"]), int(row["vira_class"]))
    stamp = (path / "zarr.json").stat().st_mtime
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default="results", help="the results root of the full deck")
    ap.add_argument("--tier", action="append", help="tiers to record (default: all in the summary)")
    ap.add_argument("--record", default=str(RECORD))
    args = ap.parse_args(argv)
    summary = Path(args.results) / "truco" / "grid_summary.csv"
    if not summary.exists():
        raise SystemExit(f"no {summary}: solve a region first, e.g. snakemake --cores all "
                         "--config games='[truco]' truco='{scores: {min_score: 9}}'")
    with open(summary) as f:
        rows = [r for r in csv.DictReader(f) if args.tier is None or r["tier"] in args.tier]
    record = Path(args.record)
    seen = set()
    if record.exists():
        with open(record) as f:
            seen = {(r["mano"], r["pe"], r["vira_class"], r["iterations"], r["cpu_seconds"])
                    for r in csv.DictReader(f)}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).parent).stdout.strip()
    new = [dict({k: r.get(k, "") for k in COLUMNS}, solved_at=_written(args.results, r),
                recorded_commit=commit)
           for r in rows
           if (r["mano"], r["pe"], r["vira_class"], r["iterations"], r["cpu_seconds"])
           not in seen]
    text = record.read_text() if record.exists() else ",".join(COLUMNS) + "\n"
    with open(record.with_name(record.name + ".tmp"), "w", newline="") as f:
        f.write(text)
        csv.DictWriter(f, COLUMNS, lineterminator="\n").writerows(new)
    os.replace(record.with_name(record.name + ".tmp"), record)
    print(json.dumps(dict(record=str(record), appended=len(new), already=len(rows) - len(new)),
                     indent=1))


if __name__ == "__main__":
    main()
