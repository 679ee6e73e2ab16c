"""Compare a 4x3 run's states per age with the authors' published counts.

The published counts (``bench/data/kaneko_4x3_states_to_600.txt``, ages 4..600, with its source)
come from the authors of "Strongly Solving 2048 4x3" (Kaneko & Yamashita, 2025). The run's counts are
its ``summary.csv`` (written by the report; the forward pass's layers hold the same numbers). Prints
JSON: ages compared, the ages that differ (age, ours, published), and both totals over the compared
ages; exits 1 if any age differs or the run has no age in common with the file.

    python bench/published_4x3.py results/2048_4x3
"""

import argparse
import csv
import json
import sys
from pathlib import Path

PUBLISHED = Path(__file__).with_name("data") / "kaneko_4x3_states_to_600.txt"


def published_states(path=PUBLISHED):
    """{age: states} of the published file (comment lines start with '#')."""
    out = {}
    for line in Path(path).read_text().splitlines():
        if line and not line.startswith("#"):
            age, states = line.split()
            out[int(age)] = int(states)
    return out


def compare(summary_csv, published=None):
    """The comparison printed by :func:`main` (a dict), for a ``summary.csv`` of a 4x3 run."""
    published = published_states() if published is None else published
    with open(summary_csv) as f:
        ours = {int(r["age"]): int(r["states"]) for r in csv.DictReader(f)}
    common = sorted(set(ours) & set(published))
    return dict(summary=str(summary_csv), ages_compared=len(common),
                first_age=common[0] if common else None, last_age=common[-1] if common else None,
                differ=[(a, ours[a], published[a]) for a in common if ours[a] != published[a]],
                states_ours=sum(ours[a] for a in common),
                states_published=sum(published[a] for a in common))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="a 4x3 run directory (its summary.csv), e.g. results/2048_4x3")
    args = ap.parse_args(argv)
    summary = Path(args.run) / "summary.csv"
    if not summary.exists():
        raise SystemExit(f"no {summary}: run the 4x3 forward pass first, e.g. snakemake --cores all "
                         "--configfile workflow/presets/2048_4x3.yaml --config max_age=600")
    result = compare(summary)
    print(json.dumps(result, indent=1))
    return 0 if result["ages_compared"] and not result["differ"] else 1


if __name__ == "__main__":
    sys.exit(main())
