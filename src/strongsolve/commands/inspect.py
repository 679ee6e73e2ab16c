"""``strongsolve inspect RESULTS_DIR [--age N]``: the layers of a 2048 run, age by age."""

import json
import shlex


def register(subparsers):
    p = subparsers.add_parser(
        "inspect", help="per-age table of a 2048 run, or one layer with a few boards",
        description="Without --age: one row per age (states, afterstates, terminal states, bytes on "
                    "disk, bits per afterstate ID, min/mean/max afterstate value) and the start "
                    "states. With --age N: that layer's counts and a few of its boards as grids.")
    p.add_argument("run_dir", metavar="RESULTS_DIR", help="run directory, e.g. results/2048_3x3")
    p.add_argument("--age", type=int, default=None, help="show the layer of this age (even, >= 4)")
    p.add_argument("--boards", type=int, default=4,
                   help="with --age: how many boards to draw, evenly spaced in ID order (default 4)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(handler=run)


def _num(v, digits=6):
    return "-" if v is None else f"{v:.{digits}f}"


def _manifest_gaps(sol):
    """``(stage, ages, target)`` for each stage's run of consecutive layers that no block manifest
    covers (a job stopped before writing it, or it was deleted); ``target`` is what to force."""
    from ..games.g2048.hints import block_target
    from ..store.layers import block_manifest

    gaps = []
    for stage, path_of in (("afterstates", sol.run.afterstate_path), ("values", sol.run.values_path)):
        bare = [n for n in sol.ages() if path_of(n).is_dir() and block_manifest(path_of(n)) is None]
        for n in bare:
            target = block_target(path_of(n))
            if gaps and gaps[-1][0] == stage and gaps[-1][2] == target:
                gaps[-1][1].append(n)
            else:
                gaps.append((stage, [n], target))
    return gaps


def _problems(sol):
    """What is wrong with the run and the command that repairs each: ``[{"problem", "command"}]``.

    Raises
    ------
    CorruptLayerError
        If a layer is missing from a block whose manifest says it is done, or a finished run (its
        solution.json written, or the backward block of age 4 done) lacks a value layer: the message
        names the layer and the command that rebuilds it.
    """
    from ..games.g2048.hints import repair_command, rerun_command
    from ..store.layers import read_attrs

    directory = sol.run.directory
    for stage, path_of in (("afterstates", sol.run.afterstate_path), ("values", sol.run.values_path)):
        for manifest in sorted((directory / stage).glob("block_*-*.json")):
            first, _, last = manifest.stem[len("block_"):].partition("-")
            if first.isdigit() and last.isdigit():
                for n in range(int(first), int(last) + 1, 2):
                    if not path_of(n).is_dir():
                        read_attrs(path_of(n), repair_command)  # raises: missing, with the command that rebuilds it
    out = [{"problem": f"{p} is not a layer of this run (ages are even, from 4 to "
                       f"{sol.run.last_age}); every command ignores it",
            "command": f"rm -rf {shlex.quote(str(p))}"} for p in sol.stray_layers()]
    missing = sol.missing_values() if sol.has_values else []
    finished = ((directory / "solution.json").is_file()
                or any((directory / "values").glob("block_000004-*.json")))
    if missing and finished:
        read_attrs(sol.run.values_path(missing[0]), repair_command)  # raises: missing, with the command that rebuilds it
    if missing:
        out.append({"problem": f"backward pass unfinished: {len(missing)} of {len(sol.run.ages())} "
                               "value layers to go; finish it with",
                    "command": rerun_command(run_dir=directory)})
    for stage, ages, target in _manifest_gaps(sol):
        out.append({"problem": f"{stage} layers of ages {ages[0]} to {ages[-1]} have no block manifest "
                               "(a job stopped before writing it, or it was deleted); unless a run is "
                               "still going, rebuild it with",
                    "command": rerun_command(target, run_dir=directory)})
    if sol.solved and not (directory / "solution.json").is_file():
        out.append({"problem": f"{directory / 'solution.json'} is missing; write it again with",
                    "command": rerun_command(run_dir=directory)})
    return out


def _table(sol, args):
    problems = _problems(sol)
    rows = [r for r in sol.age_table() if r["states"] or r["afterstates"]]
    starts = []
    if sol.solved:
        ids, probs, values = sol.start_states()
        starts = [{"board": sol.describe(int(s)), "probability": float(p), "value": float(v)}
                  for s, p, v in zip(ids, probs, values)]
    doc = {"run": sol.run.directory.name, **sol.run.params(), "solved": sol.solved,
           "ages": rows, "start_states": starts, "problems": problems}
    if sol.solved:
        doc["expected_score"] = float(sum(s["probability"] * s["value"] for s in starts))
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    digits = 3 if sol.objective == "score" else 6
    print(f"{doc['run']}: {sol.rows}x{sol.cols}, p2 {sol.p2}, objective {sol.objective}"
          + (f" (target {sol.target_tile})" if sol.target_tile else "")
          + ("" if sol.solved else ", backward pass unfinished" if sol.has_values
             else ", forward only (no values)"))
    head = (f"{'age':>6} {'states':>12} {'afterstates':>12} {'terminal':>10} {'bytes':>10} "
            f"{'bits/ID':>8} {'min value':>12} {'mean value':>12} {'max value':>12}")
    print(head)
    for r in rows:
        bits = f"{r['bits_per_afterstate']:.1f}" if r["afterstates"] else "-"
        print(f"{r['age']:>6} {r['states']:>12} {r['afterstates']:>12} {r['terminal_states']:>10} "
              f"{r['bytes']:>10} {bits:>8} {_num(r['value_min'], digits):>12} "
              f"{_num(r['value_mean'], digits):>12} {_num(r['value_max'], digits):>12}")
    print(f"{'total':>6} {sum(r['states'] for r in rows):>12} {sum(r['afterstates'] for r in rows):>12} "
          f"{sum(r['terminal_states'] for r in rows):>10} {sum(r['bytes'] for r in rows):>10}")
    print("bits/ID: Elias-Fano coded size of the layer's afterstate IDs, per ID")
    if starts:
        unit = "expected score" if sol.objective == "score" else f"P(make {sol.target_tile})"
        print(f"start states ({unit}; random start {doc['expected_score']:.9g}):")
        for s in starts:
            print(f"  {s['board']:<30} probability {s['probability']:.6f}  value {s['value']:.9g}")
    for p in problems:
        print(f"problem: {p['problem']}: `{p['command']}`")


def _layer(sol, args):
    from ..games.g2048.rules.boardtext import draw_board

    if args.boards < 0:
        raise ValueError(f"--boards {args.boards} is not allowed; allowed: an integer >= 0")
    row = next((r for r in sol.age_table(values=False) if r["age"] == args.age), None)
    if row is None:
        ages = sol.ages()
        raise ValueError(f"--age {args.age} has no layer in {sol.run.directory}; allowed: an even "
                         f"age from {ages[0] if ages else 4} to {ages[-1] if ages else 4}")
    if sol.solved:
        ids, values = sol.layer(args.age)
    else:
        ids, values = sol.run.load_afterstates(args.age)[0], None
    k = min(args.boards, ids.size)
    picks = sorted({round(i * (ids.size - 1) / max(k - 1, 1)) for i in range(k)}) if k else []
    boards = [{"id": int(ids[i]), "board": sol.describe(int(ids[i])),
               "value": None if values is None else float(values[i])} for i in picks]
    if values is not None and values.size:
        row.update(value_min=float(values.min()), value_mean=float(values.mean()),
                   value_max=float(values.max()))
    if args.json:
        print(json.dumps({"run": sol.run.directory.name, **row, "boards": boards}, indent=2))
        return
    bits = f"{row['bits_per_afterstate']:.1f}" if row["afterstates"] else "-"
    print(f"{sol.run.directory.name}, age {args.age}: {row['states']} states "
          f"({row['terminal_states']} terminal), {row['afterstates']} afterstates, "
          f"{row['bytes']} bytes ({bits} bits/ID)")
    if row["value_mean"] is not None:
        print(f"afterstate values: min {row['value_min']:.9g}, mean {row['value_mean']:.9g}, "
              f"max {row['value_max']:.9g}")
    for b in boards:
        value = "" if b["value"] is None else f", value {b['value']:.9g}"
        print(f"afterstate {b['id']:#x}{value}:")
        print(draw_board(b["id"], sol.rows, sol.cols))


def run(args):
    from ..games.g2048.advice import Solution

    sol = Solution(args.run_dir)
    if args.age is None:
        _table(sol, args)
    else:
        _layer(sol, args)
