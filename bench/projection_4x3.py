"""Projection of the full 4x3 solve on a many-core machine from measured rates by layer size.

Inputs, all measured or published:

- **rates by layer size**: the JSON of ``bench/scaling_4x3.py --configs threads_1`` over several
  blocks of ages; several runs' files pool their points (default:
  ``bench/data/rates_by_size_4x3_16ages_2026-12-08_86636de.json``, blocks of 16 ages at ages 100 to
  530, and the threads_1 records of the speed-up files below, ages 544-574, all measured on one
  2-vCPU AMD EPYC host within three hours. Blocks of 16 ages, half a job of the 4x3 preset, charge
  a block's start, its two input layers loaded and indexed, about as often as the full solve does;
  blocks of 2 to 6 ages (``rates_by_size_4x3_2026-12-08_86636de.json``, same host, and the files of
  earlier hosts beside it) charge it 8 to 16 times more often). Each
  threads_1 record gives a point (mean layer size of its block, rate per CPU second of the stage
  process: states/s for the forward, afterstates/s for the backward). The CPU seconds include the
  stage process's start-up (about 2 s), its I/O threads and its system time.
- **the trend**: per stage, a least-squares fit ``rate = a + b * log10(layer size)`` (log-linear),
  applied to every layer of the full solve. Outside the measured layer sizes it is not trusted to
  improve: below the smallest measured block the rate is the fit's at that block; above the largest
  it is the lower of the fit extrapolated and the fit's at the largest block (a falling trend goes
  on falling, a rising one is held).
- **the layers of the full solve**: the authors' published states per age (Kaneko & Yamashita 2025):
  every age 4..600 (``bench/data/kaneko_4x3_states_to_600.txt``) and every 100th age after 600
  (``bench/data/kaneko_4x3_states_every_100_ages.txt``), the samples scaled so that all of them sum
  to the published total of 1,152,817,492,752 states. Afterstates per age are taken as the states
  times the published ratio 739,648,886,170 / 1,152,817,492,752 (no per-age afterstate counts are
  published).
- **the parallel speed-up**: the measured 2-core speed-up S2 of each stage over one core, from the
  threads_2 records of that stage's last block in the ``--scaling`` files of ``bench/scaling_4x3.py``
  (default ``bench/data/scaling_4x3_544-574_2026-12-08_86636de_forward.json`` and ``_backward.json``:
  one block of 16 ages, as a job of the 4x3 preset holds, on a 2-vCPU AMD EPYC host, each config run
  twice interleaved (``--repeats 2``) with a core_1 record; earlier runs, on other hosts and blocks of 2
  ages too, are beside it). S2 = one core's time for the block / the threads_2 wall (medians when a
  config was run more than once): one core's time is the core_1 wall (the stage pinned to one CPU)
  when the files have one for those ages, else the threads_1 CPU seconds. Not threads_1's wall: its
  I/O thread (decoding, coding, checksums) runs on a second core beside the computing thread, so its
  wall is below the work it does (1.15 cores busy in the backward), and the core seconds below count
  that work; dividing them
  by a speed-up over threads_1's wall would count the I/O thread's work twice. S2 is carried to
  ``--cores`` by two models, since linear scaling already fails at 2 cores (S2 < 2); a measured S2
  above 2 is taken as 2 (the forward's one-thread path of commit 825bcf0 sorted its unions another
  way, with more memory, so one thread was not the baseline the models assume):

  - *per doubling*: every doubling of the cores keeps the measured efficiency S2 / 2,
    ``S(p) = p * (S2 / 2) ** log2(p)``;
  - *Amdahl*: a serial fraction ``f = 2 / S2 - 1`` fitted to S2, ``S(p) = 1 / (f + (1 - f) / p)``.

Wall time on ``--cores`` cores = core seconds (sum over layers of size / rate) / S(cores). Prints
JSON; ``--markdown`` prints the README's table instead.

    python bench/projection_4x3.py [RATES_JSON ...] [--scaling SCALING_JSON ...] [--cores 16] [--markdown]
"""

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from published_4x3 import PUBLISHED, published_states  # noqa: E402  (the per-age reader)
from scaling_4x3 import one_core_seconds  # noqa: E402  (one core's time for a block)

DATA = Path(__file__).with_name("data")
SCALING = [DATA / f"scaling_4x3_544-574_2026-12-08_86636de_{stage}.json" for stage in ("forward", "backward")]
RATES = [DATA / "rates_by_size_4x3_16ages_2026-12-08_86636de.json", *SCALING]
SAMPLED = DATA / "kaneko_4x3_states_every_100_ages.txt"
TOTAL_STATES = 1_152_817_492_752       # Kaneko & Yamashita 2025
TOTAL_AFTERSTATES = 739_648_886_170    # Kaneko & Yamashita 2025
STAGES = ("forward", "backward")


def rate_points(doc, stage, rate="per_cpu_s"):
    """(mean layer size, rate) of each threads_1 record of ``stage`` in a scaling_4x3.py JSON.

    Returns two float64 arrays of shape (records,): layers of the stage's unit (states for the
    forward, afterstates for the backward) and that unit per second. Raises ``ValueError`` if the JSON
    holds fewer than two blocks of different layer size for the stage.
    """
    recs = [r for r in doc["records"] if r["stage"] == stage and r["config"] == "threads_1"]
    sizes = np.array([r["count"] / len(r["per_age"]) for r in recs], dtype=np.float64)
    rates = np.array([r[rate] for r in recs], dtype=np.float64)
    if np.unique(sizes).size < 2:
        raise ValueError(f"projection: {stage} has {len(recs)} threads_1 record(s) of {np.unique(sizes).size} "
                         "layer size(s); a trend needs two. Measure more blocks, e.g. python "
                         "bench/scaling_4x3.py results/2048_4x3 --configs threads_1 --ages 100-110,572-574")
    return sizes, rates


def fit_log_linear(sizes, rates):
    """Least-squares ``rate = a + b * log10(size)``; returns (a, b) in the unit of ``rates``."""
    b, a = np.polyfit(np.log10(sizes), rates, 1)
    return float(a), float(b)


def core_seconds(fit, sizes, weights=None, smallest=None, largest=None):
    """Sum over layers of ``weight * size / rate(size)``: CPU seconds on one core.

    ``rate(size) = a + b * log10(size)`` with ``fit = (a, b)``, evaluated at ``max(size, smallest)``,
    and above ``largest`` at most the rate at ``largest`` (``None``: no bound). ``sizes`` (float64, any
    shape) are layer sizes > 0; ``weights`` (same shape, default 1) how many layers each stands for.
    Raises ``ValueError`` if the rate is <= 0 at some size.
    """
    a, b = fit
    sizes = np.asarray(sizes, dtype=np.float64)
    weights = np.ones_like(sizes) if weights is None else np.asarray(weights, dtype=np.float64)
    rates = a + b * np.log10(sizes if smallest is None else np.maximum(sizes, smallest))
    if largest is not None:
        rates = np.where(sizes > largest, np.minimum(rates, a + b * math.log10(largest)), rates)
    if (rates <= 0).any():
        bad = sizes[rates <= 0][0]
        raise ValueError(f"projection: the fit rate = {a:.4g} + {b:.4g} * log10(size) is <= 0 at a layer "
                         f"of {bad:.4g}; the trend cannot be extrapolated that far")
    return float(np.sum(weights * sizes / rates))


def speedup_per_doubling(s2, cores):
    """Speed-up on ``cores`` if each doubling of the cores keeps the 2-core efficiency ``s2 / 2``."""
    return cores * (s2 / 2) ** math.log2(cores)


def speedup_amdahl(s2, cores):
    """Amdahl's speed-up on ``cores`` with the serial fraction ``2 / s2 - 1`` that gives ``s2`` on 2."""
    serial = 2 / s2 - 1
    return 1 / (serial + (1 - serial) / cores)


def two_core_speedup(records, stage):
    """S2: one core's time for a block of ages / the wall of 2 threads (module docstring).

    ``records`` are bench/scaling_4x3.py records (dicts with ``stage``, ``config``, ``ages``,
    ``wall_s``, ``cpu_s``), several files pooled in order: the block of ages of the last threads_2
    record of ``stage`` is taken, the median wall of its threads_2 records against one core's time
    for it (``scaling_4x3.one_core_seconds``: the median of its core_1 records, else of its threads_1
    ones). Raises ``ValueError`` naming the command that measures what is missing.
    """
    mine = [r for r in records if r["stage"] == stage]
    twos = [r for r in mine if r["config"] == "threads_2"]
    if not twos:
        raise ValueError(f"projection: no threads_2 record of the {stage} in the scaling JSON; measure one "
                         f"with python bench/scaling_4x3.py results/2048_4x3 --stages {stage} --configs "
                         "core_1,threads_2")
    two = twos[-1]
    block = [r for r in mine if r["ages"] == two["ages"]]
    base = one_core_seconds(block)
    if base is None:
        raise ValueError(f"projection: the {stage}'s threads_2 record of ages {two['ages'][0]}-{two['ages'][-1]} "
                         "has no core_1 or threads_1 record of the same ages to compare with; measure them "
                         f"together with python bench/scaling_4x3.py results/2048_4x3 --stages {stage} "
                         f"--ages {two['ages'][0]}-{two['ages'][-1]} --configs core_1,threads_2")
    return base / float(np.median([r["wall_s"] for r in block if r["config"] == "threads_2"]))


def full_solve_layers(to_600=PUBLISHED, sampled=SAMPLED, total=TOTAL_STATES):
    """States per layer of the full 4x3 solve and how many layers each stands for.

    Returns (sizes, weights), float64 arrays: every age of ``to_600`` with weight 1, then the samples
    of ``sampled`` with one common weight that makes the weighted sum equal ``total``. Raises
    ``ValueError`` if the sampled ages overlap the complete ones.
    """
    full, sample = published_states(to_600), published_states(sampled)
    if min(sample) <= max(full):
        raise ValueError(f"projection: {sampled} starts at age {min(sample)}, within the ages of {to_600} "
                         f"(to {max(full)})")
    known = sum(full.values())
    scale = (total - known) / sum(sample.values())
    sizes = np.array(list(full.values()) + list(sample.values()), dtype=np.float64)
    weights = np.array([1.0] * len(full) + [scale] * len(sample))
    return sizes, weights


def project(rates_doc, scaling_doc, cores=16, rate="per_cpu_s", layers=None,
            afterstate_ratio=TOTAL_AFTERSTATES / TOTAL_STATES):
    """The projection as a dict (see the module docstring).

    ``layers`` (sizes, weights) defaults to :func:`full_solve_layers`; the backward's layers are the
    sizes times ``afterstate_ratio``. Times are in seconds.
    """
    sizes, weights = full_solve_layers() if layers is None else layers
    out = {"cores": cores, "rate": rate, "layers": int(sizes.size), "largest_layer": float(sizes.max()),
           "states": float(np.sum(sizes * weights)), "stages": {}}
    for stage in STAGES:
        points = rate_points(rates_doc, stage, rate)
        fit = fit_log_linear(*points)
        stage_sizes = sizes if stage == "forward" else sizes * afterstate_ratio
        cpu = core_seconds(fit, stage_sizes, weights, smallest=points[0].min(), largest=points[0].max())
        s2 = two_core_speedup(scaling_doc["records"], stage)
        # above 2 on 2 threads (the forward's one-thread path of 825bcf0 sorted its unions another
        # way, with more memory) no model may go beyond linear
        s2_model = min(s2, 2.0)
        speedups = {"linear": float(cores), "per_doubling": speedup_per_doubling(s2_model, cores),
                    "amdahl": speedup_amdahl(s2_model, cores)}
        out["stages"][stage] = {
            "points": [[float(x), float(y)] for x, y in zip(*points)], "fit_a": fit[0], "fit_b_per_decade": fit[1],
            "measured_layers": [float(points[0].min()), float(points[0].max())],
            "rate_at_largest": min(fit[0] + fit[1] * math.log10(v) for v in (stage_sizes.max(), points[0].max())),
            "count": float(np.sum(stage_sizes * weights)), "core_seconds": cpu, "speedup_2": s2,
            "speedup_2_model": s2_model, "speedup": speedups, "wall_s": {k: cpu / s for k, s in speedups.items()}}
    out["wall_s"] = {k: sum(out["stages"][s]["wall_s"][k] for s in STAGES) for k in ("linear", "per_doubling", "amdahl")}
    return out


def markdown(p):
    """The README's table of a :func:`project` result."""
    h = 3600
    lines = [f"| stage | rate per core (fit, per CPU s) | core hours | {p['cores']} cores, linear | "
             f"{p['cores']} cores, per doubling | {p['cores']} cores, Amdahl |", "|---|---|---|---|---|---|"]
    for stage in STAGES:
        s = p["stages"][stage]
        unit = "states" if stage == "forward" else "afterstates"
        lines.append(
            f"| {stage}, {s['count']:,.0f} {unit} | {s['fit_a']:.3g} {s['fit_b_per_decade']:+.3g} x log10(layer); "
            f"{s['rate_at_largest']:.3g}/s at the largest layer | {s['core_seconds'] / h:.1f} | "
            f"{s['wall_s']['linear'] / h:.1f} h | {s['wall_s']['per_doubling'] / h:.1f} h "
            f"(x{s['speedup']['per_doubling']:.2f}) | {s['wall_s']['amdahl'] / h:.1f} h (x{s['speedup']['amdahl']:.2f}) |")
    w = p["wall_s"]
    lines.append(f"| total | | {sum(p['stages'][s]['core_seconds'] for s in STAGES) / h:.1f} | {w['linear'] / h:.1f} h | "
                 f"{w['per_doubling'] / h:.1f} h | {w['amdahl'] / h:.1f} h |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rates", nargs="*", default=[str(p) for p in RATES],
                    help="scaling_4x3.py JSONs with threads_1 blocks (their points are pooled)")
    ap.add_argument("--scaling", action="append", default=None,
                    help="scaling_4x3.py JSON with threads_2 speed-ups (repeatable: each stage's from the "
                         "last file that has it)")
    ap.add_argument("--cores", type=int, default=16)
    ap.add_argument("--rate", default="per_cpu_s", choices=("per_cpu_s", "per_wall_s", "per_computed_s"))
    ap.add_argument("--markdown", action="store_true", help="print the README table instead of JSON")
    args = ap.parse_args(argv)
    if args.cores < 1:
        raise SystemExit(f"projection: --cores {args.cores} is not allowed; give a core count >= 1")
    scaling = args.scaling or [str(p) for p in SCALING]
    docs = []
    for path in [*args.rates, *scaling]:
        if not Path(path).exists():
            raise SystemExit(f"projection: no {path}; make it with python bench/scaling_4x3.py results/2048_4x3 "
                             "... > FILE")
        docs.append(json.loads(Path(path).read_text()))
    try:
        split = len(args.rates)
        rates = {"records": [r for doc in docs[:split] for r in doc["records"]]}
        speedups = {"records": [r for doc in docs[split:] for r in doc["records"]]}
        p = project(rates, speedups, cores=args.cores, rate=args.rate)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    print(markdown(p) if args.markdown else json.dumps(p, indent=1))
    return p


if __name__ == "__main__":
    main()
