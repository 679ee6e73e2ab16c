"""The benchmark entry points run: bench/run.py on tiny boards, bench/numpy_baseline.py.

Timings are never asserted (the machine is shared); counts are, against the naive reference and the
published 4x3 counts (cases.json "2048_4x3_states_per_age", Kaneko & Yamashita 2025).
"""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from naive import g2048 as naive_g2048, ludo as naive_ludo

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import numpy_baseline  # noqa: E402


@pytest.fixture(scope="module")
def bench_doc():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--json", "--boards", "2x2,4x3",
                           "--max-age-4x3", "18", "--stages", "forward,backward", "--threads", "2"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def record(doc, stage, board):
    (rec,) = [r for r in doc["records"] if r["stage"] == stage and r["board"] == board]
    return rec


def test_machine_and_load_are_recorded(bench_doc):
    m = bench_doc["machine"]
    assert m["cpu_model"] and m["cpus_usable"] >= 1 and m["memory_bytes"] > 2**20
    assert len(bench_doc["load_start"]) == 3 and len(bench_doc["load_end"]) == 3
    assert bench_doc["threads"] == 2


def test_forward_counts_equal_the_naive_solver(bench_doc):
    rec = record(bench_doc, "forward", "2x2")
    counts = naive_g2048.canonical_counts(2, 2)
    ages = rec["per_age"]["ages"]
    assert ages == list(range(4, 2 ** 6 - 3, 2))
    expect = [counts.get(n, (0, 0, 0)) for n in ages]
    assert rec["per_age"]["states"] == [c[0] for c in expect]
    assert rec["per_age"]["afterstates"] == [c[1] for c in expect]
    assert rec["per_age"]["terminal"] == [c[2] for c in expect]
    assert rec["count"] == sum(c[0] for c in counts.values())
    assert rec["unit"] == "states"


def test_backward_counts_and_rates_are_sane(bench_doc):
    counts = naive_g2048.canonical_counts(2, 2)
    rec = record(bench_doc, "backward", "2x2")
    assert rec["synthetic_successors"] is False
    assert rec["count"] == sum(c[1] for c in counts.values())
    assert rec["per_age"]["afterstates"] == [counts.get(n, (0, 0, 0))[1] for n in rec["per_age"]["ages"]]
    for stage in ("forward", "backward"):
        r = record(bench_doc, stage, "2x2")
        assert r["wall_s"] > 0 and r["cpu_s"] > 0
        assert r["per_cpu_s"] == pytest.approx(r["count"] / r["cpu_s"])
        assert r["per_wall_s"] == pytest.approx(r["count"] / r["wall_s"])
        assert r["process_wall_s"] >= r["wall_s"]
        assert r["peak_rss_bytes"] >= r["base_rss_bytes"] > 10 * 2**20  # python + numpy + numba


def test_4x3_is_capped_and_matches_the_published_counts(bench_doc, cases):
    case = cases["2048_4x3_states_per_age"]
    fwd = record(bench_doc, "forward", "4x3")
    assert fwd["per_age"]["ages"] == case["ages"]
    assert fwd["per_age"]["states"] == case["states"]
    bwd = record(bench_doc, "backward", "4x3")
    assert bwd["synthetic_successors"] is True  # a throughput measurement, not a solve
    assert bwd["per_age"]["ages"] == case["ages"]
    assert bwd["per_age"]["afterstates"] == fwd["per_age"]["afterstates"]


def test_projection_follows_from_the_measured_rates(bench_doc):
    p = bench_doc["projection"]
    t = p["time"]
    fwd = max((r for r in bench_doc["records"] if r["stage"] == "forward"), key=lambda r: r["count"])
    assert fwd["board"] == "4x3"
    assert t["forward_s"] == pytest.approx(p["published"]["states"] / (fwd["per_cpu_s"] * 16))
    assert p["published"] == {"states": 1_152_817_492_752, "afterstates": 739_648_886_170,
                              "largest_layer": {"age": 9568, "states": 3.0e8},
                              "source": p["published"]["source"]}
    m = p["memory"]
    assert m["peak_bytes"] == max(m["forward_window_bytes"], m["backward_window_bytes"]) + m["memory_limit_bytes"]


@pytest.mark.parametrize("rows, cols", [(2, 2), (2, 3), (3, 2)])
def test_numpy_baseline_counts_equal_the_naive_solver(rows, cols):
    counts = naive_g2048.canonical_counts(rows, cols)
    got = {n: (s, after.size, t) for n, s, t, after in numpy_baseline.forward(rows, cols)}
    assert got == {n: counts.get(n, (0, 0, 0)) for n in got}
    assert max(got) == 2 ** (rows * cols + 2) - 4


def test_ludo_rule_variants_base_reading_is_the_solver_rule(tmp_path):
    # bench/ludo_rule_variants.py shares no code with the solver: its base reading must
    # give the solver's value under the old move rule, and a changed reading another value
    import ludo_rule_variants as variants
    from strongsolve.games.ludo import rules
    from strongsolve.games.ludo.stages import expansion

    data = {"length": 9, "jumps": {3: 6, 7: 2}, "overshoot": "stay", "die": 3, "safe": [5],
            "pass_by_overshoot": False}
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(data))
    board = variants.read_board(str(path))
    flags = dict.fromkeys(variants.FLAGS, False)
    base, base_one, _ = variants.solve(*board, tuple(flags.values()), 1e-13)
    for pieces, value in ((2, base), (1, base_one)):
        solver = expansion.solve_race(rules.Board.from_mapping(data), pieces, tol=1e-14)
        assert value == pytest.approx(solver.win_probability, abs=1e-11)
    one, _, _ = variants.solve(*board, tuple(dict(flags, stack_one=True).values()), 1e-13)
    assert abs(one - base) > 1e-6


def test_ludo_fresh_matches_the_plain_python_reference():
    # bench/ludo_fresh.py (a third race solver written only from the rule text) against
    # naive_ludo.ludo_race_reference, both move rules, 1 and 2 pieces, each of its code paths
    import ludo_fresh

    board = {"length": 7, "jumps": {2: 4, 6: 1}, "chain_jumps": True, "overshoot": "stay", "die": 3,
             "safe": [5], "roll_again_on": None}
    reference_board = dict(board, die=[1 / 3] * 3)
    for pieces in (1, 2):
        for rule, pass_by_overshoot in (((), False), (("new_rule",), True)):
            want = naive_ludo.ludo_race_reference(reference_board, pieces, pass_by_overshoot)
            want = want[(0,) * pieces, (0,) * pieces]
            for extra, jacobi in (((), False), (("ordered",), False), ((), True)):
                got = ludo_fresh.solve(board, pieces, 1e-14, 10000, start=0.0,
                                       variants=frozenset(rule + extra), jacobi=jacobi)[0]
                assert got == pytest.approx(want, abs=1e-11), (pieces, rule, extra, jacobi)
    # a changed reading changes the two-piece value
    base = ludo_fresh.solve(board, 2, 1e-14, 10000)[0]
    first = ludo_fresh.solve(board, 2, 1e-14, 10000, variants=frozenset({"first_home"}))[0]
    assert abs(first - base) > 1e-6


@pytest.mark.slow
def test_workflow_overhead_compares_the_workflow_with_its_kernels(tmp_path, naive_2048):
    # bench/workflow_overhead.py on 2x2: the kernels alone and the whole Snakemake solve
    # side by side; their counts against the naive solver, the ratio from the two wall times
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "workflow_overhead.py"), "--board", "2x2",
                           "--threads", "2", "--workdir", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    (rep,) = doc["repeats"]
    assert doc["best"] == rep and doc["board"] == "2x2" and doc["threads"] == 2
    counts = naive_g2048.canonical_counts(2, 2)
    assert rep["kernels"]["forward"]["count"] == rep["snakemake"]["states"] == sum(c[0] for c in counts.values())
    assert rep["kernels"]["backward"]["count"] == rep["snakemake"]["afterstates"] == sum(c[1] for c in counts.values())
    assert rep["snakemake"]["expected_score"] == pytest.approx(naive_2048(2, 2).solution.expected_score, rel=1e-12)
    assert rep["ratio_wall"] == rep["snakemake"]["wall_s"] / rep["kernels"]["wall_s"]
    assert rep["kernels"]["wall_s"] == rep["kernels"]["forward"]["wall_s"] + rep["kernels"]["backward"]["wall_s"]
    assert rep["snakemake"]["jobs"] == 1  # one block: g2048_solve (forward, backward, report, plots)
    assert set(rep["snakemake"]["stage_seconds"]) == {"forward", "backward"}
    assert doc["target"] == {"snakemake_wall_s": 15.0, "ratio_wall": 1.5}


def test_layer_io_reads_and_writes_every_layer(tmp_path, capsys):
    # bench/layer_io.py: the file work of a solved run, part by part
    import layer_io
    from strongsolve.games.g2048.stages import pipeline
    with open(os.devnull, "w") as log:
        pipeline.solve(tmp_path / "run", 2, 3, log=log)
    doc = layer_io.main([str(tmp_path / "run"), "--rows", "2", "--cols", "3", "--workdir", str(tmp_path)])
    counts = naive_g2048.canonical_counts(2, 3)
    assert doc["afterstates"] == sum(c[1] for c in counts.values())
    assert doc["layers_per_stage"] == len(range(4, 2 ** 8 - 3, 2))
    assert set(doc["parts"]) == {"read_afterstates", "read_values", "read_attrs", "encode_afterstates",
                                 "write_afterstates", "write_values"}
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(doc))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # the written layers are removed


def test_published_4x3_counts_agree_with_the_cases_and_flag_a_wrong_age(cases, tmp_path):
    # the stored published file (ages 4..600) against the counts of cases.json (ages 4..18), and
    # the comparison of a summary.csv: equal ages pass, a changed count is named
    import published_4x3

    pub = published_4x3.published_states()
    case = cases["2048_4x3_states_per_age"]
    assert sorted(pub) == list(range(4, 601, 2))
    assert [pub[a] for a in case["ages"]] == case["states"]
    assert sum(pub[a] for a in range(4, 201, 2)) == 557_461_476  # the total to age 200 (README)
    summary = tmp_path / "summary.csv"
    summary.write_text("age,states\n" + "".join(f"{a},{s}\n" for a, s in zip(case["ages"], case["states"])))
    ok = published_4x3.compare(summary)
    assert ok["ages_compared"] == 8 and ok["differ"] == [] and ok["states_ours"] == sum(case["states"])
    summary.write_text("age,states\n4,22\n6,71\n")
    assert published_4x3.compare(summary)["differ"] == [(6, 71, 72)]
    assert published_4x3.main([str(tmp_path)]) == 1


@pytest.mark.slow
def test_scaling_runs_every_config_on_the_same_layers(tmp_path):
    # bench/scaling_4x3.py on 2x3 ages 20-24 of a forward run made here: each config
    # (one core, 1 thread, 2 threads, 2 dask.distributed workers) gives the naive solver's counts;
    # timings unchecked
    from strongsolve.games.g2048.stages import pipeline
    source = tmp_path / "source"
    pipeline.solve(source, 2, 3, max_age=28, log=io.StringIO())
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "scaling_4x3.py"), str(source), "--ages", "20-24",
                           "--workdir", str(tmp_path), "--record", str(tmp_path / "RECORD.md")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    counts = naive_g2048.canonical_counts(2, 3)
    assert [(r["stage"], r["config"]) for r in doc["records"]] == [
        (stage, config) for stage in ("forward", "backward")
        for config in ("core_1", "threads_1", "threads_2", "workers_2")]
    for r in doc["records"]:
        assert [a["age"] for a in r["per_age"]] == [20, 22, 24]
        if r["stage"] == "forward":
            assert [(a["states"], a["afterstates"], a["terminal"]) for a in r["per_age"]] == [
                counts[n] for n in (20, 22, 24)]
            assert r["count"] == sum(counts[n][0] for n in (20, 22, 24))
        else:
            assert [a["afterstates"] for a in r["per_age"]] == [counts[n][1] for n in (20, 22, 24)]
        first = next(f for f in doc["records"] if f["stage"] == r["stage"])
        assert r["per_age"] == first["per_age"]  # same checksums in every config
        one, core = (next(f for f in doc["records"] if f["stage"] == r["stage"] and f["config"] == c)
                     for c in ("threads_1", "core_1"))
        assert r["speedup"] == one["wall_s"] / r["wall_s"]
        assert r["speedup_cores"] == core["wall_s"] / r["wall_s"]
        if r["threads"] == 2:  # both cores busy doing one core's work: 2 x threads_1's wall / core_1's
            assert r["speedup_limit"] == 2 * one["wall_s"] / core["wall_s"]
        else:
            assert "speedup_limit" not in r
        assert len(r["cpus"]) == (1 if r["config"] == "core_1" else len(os.sched_getaffinity(0)))
    assert (tmp_path / "RECORD.md").read_text().count("\n") == 1
    assert not list(tmp_path.glob("scaling-*"))  # the temporary runs are removed


@pytest.mark.slow
def test_scaling_repeats_interleave_the_configs(tmp_path):
    # bench/scaling_4x3.py --repeats 2 on the backward of 2x3 ages 20-24: the configs in the order
    # A B, then B A; every run the same layers; speed-ups over the median of threads_1's walls
    from strongsolve.games.g2048.stages import pipeline
    source = tmp_path / "source"
    pipeline.solve(source, 2, 3, max_age=28, log=io.StringIO())
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "scaling_4x3.py"), str(source), "--ages", "20-24",
                           "--stages", "backward", "--configs", "threads_1,threads_2", "--repeats", "2",
                           "--workdir", str(tmp_path), "--record", str(tmp_path / "RECORD.md")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert doc["repeats"] == 2
    assert [(r["config"], r["repeat"]) for r in doc["records"]] == [
        ("threads_1", 0), ("threads_2", 0), ("threads_2", 1), ("threads_1", 1)]
    ones = [r["wall_s"] for r in doc["records"] if r["config"] == "threads_1"]
    ones_cpu = [r["cpu_s"] for r in doc["records"] if r["config"] == "threads_1"]
    for r in doc["records"]:
        assert r["per_age"] == doc["records"][0]["per_age"]
        assert r["speedup"] == pytest.approx((ones[0] + ones[1]) / 2 / r["wall_s"], rel=1e-12)
        assert r["speedup_cores"] == pytest.approx((ones_cpu[0] + ones_cpu[1]) / 2 / r["wall_s"], rel=1e-12)
        if r["config"] == "threads_2":  # one core's time is threads_1's CPU seconds here (no core_1)
            assert r["speedup_limit"] == pytest.approx(2 * (ones[0] + ones[1]) / (ones_cpu[0] + ones_cpu[1]),
                                                       rel=1e-12)
    row = (tmp_path / "RECORD.md").read_text()
    assert row.count("\n") == 1 and "backward threads_1 #1:" in row and "backward threads_1 #2:" in row
    assert row.count("over 1 thread with 2 cores fully busy") == 2  # the two threads_2 runs
    bad = subprocess.run([sys.executable, str(REPO / "bench" / "scaling_4x3.py"), str(source), "--repeats", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--repeats 0 is not allowed" in bad.stderr


def _rates_record(stage, config, count, rate, ages=2):
    return {"stage": stage, "config": config, "count": count, "per_cpu_s": rate,
            "per_age": [{"age": 4 + 2 * i} for i in range(ages)]}


def test_projection_arithmetic_on_a_made_up_input(tmp_path):
    # bench/projection_4x3.py: the log-linear fit, the sum of layer / rate, the two
    # speed-up models, all on numbers small enough to work out by hand (below each assert)
    import projection_4x3 as proj

    rates = {"records": [
        _rates_record("forward", "threads_1", 20, 2.0),      # mean layer 10 -> 2 states/s
        _rates_record("forward", "threads_1", 2000, 4.0),    # mean layer 1000 -> 4 states/s
        _rates_record("forward", "threads_2", 2000, 99.0),   # not one thread: ignored
        _rates_record("backward", "threads_1", 30, 1.0, ages=3),   # mean 10 -> 1 afterstate/s
        _rates_record("backward", "threads_1", 2000, 3.0)]}        # mean 1000 -> 3
    # the 2-core speed-up is over one core's work: threads_1's CPU seconds (not its wall, which
    # its I/O thread on the second core shortens), or core_1's wall when measured
    block = [4, 6]

    def timed(stage, config, wall_s, cpu_s=None):
        return {"stage": stage, "config": config, "ages": block, "wall_s": wall_s, "cpu_s": cpu_s}

    scaling = {"records": [timed("forward", "threads_1", 25.0, 30.0), timed("forward", "threads_2", 20.0, 35.0),
                           timed("backward", "threads_1", 12.0, 16.0), timed("backward", "threads_2", 10.0, 19.0)]}
    assert proj.two_core_speedup(scaling["records"], "forward") == 1.5     # 30 / 20
    assert proj.two_core_speedup(scaling["records"], "backward") == 1.6    # 16 / 10
    # forward: rate = 1 + 1 * log10(layer); backward: rate = 0 + 1 * log10(layer)
    assert proj.fit_log_linear(*proj.rate_points(rates, "forward")) == pytest.approx((1.0, 1.0))
    assert proj.fit_log_linear(*proj.rate_points(rates, "backward")) == pytest.approx((0.0, 1.0), abs=1e-12)
    layers = (proj.np.array([100.0, 10000.0]), proj.np.array([1.0, 2.0]))
    p = proj.project(rates, scaling, cores=16, layers=layers, afterstate_ratio=0.1)
    fwd, bwd = p["stages"]["forward"], p["stages"]["backward"]
    # the layer of 10000 is above the largest measured (1000): the rising trend is held at rate 4
    assert fwd["core_seconds"] == pytest.approx(100 / 3 + 2 * 10000 / 4)   # 5033.33 s
    assert bwd["core_seconds"] == pytest.approx(10 / 1 + 2 * 1000 / 3)     # 676.67 s
    assert fwd["count"] == 20100 and bwd["count"] == pytest.approx(2010)
    assert fwd["speedup"]["per_doubling"] == pytest.approx(16 * 0.75 ** 4)            # 5.0625
    assert fwd["speedup"]["amdahl"] == pytest.approx(1 / (1 / 3 + (2 / 3) / 16))      # 24 / 9
    assert bwd["speedup"]["per_doubling"] == pytest.approx(16 * 0.8 ** 4)             # 6.5536
    assert bwd["speedup"]["amdahl"] == pytest.approx(1 / (0.25 + 0.75 / 16))          # 3.368
    assert p["wall_s"]["linear"] == pytest.approx((5033.3333333 + 676.6666667) / 16)
    assert p["wall_s"]["amdahl"] == pytest.approx(5033.3333333 * 9 / 24 + 676.6666667 * 0.296875)
    assert "| total | | 1.6 | 0.1 h |" in proj.markdown(p)  # 5710 s = 1.59 core hours
    # a 2-core speed-up above 2 is taken as 2: both models are then linear, never beyond
    scaling["records"][1]["wall_s"] = 12.5
    fwd = proj.project(rates, scaling, cores=16, layers=layers, afterstate_ratio=0.1)["stages"]["forward"]
    assert (fwd["speedup_2"], fwd["speedup_2_model"]) == (2.4, 2.0)                   # 30 / 12.5
    assert fwd["speedup"] == {"linear": 16.0, "per_doubling": 16.0, "amdahl": 16.0}
    # several records of a block (--repeats, or --scaling files pooled): the median wall, not the last
    scaling["records"][1]["wall_s"] = 20.0
    scaling["records"] += [timed("forward", "threads_2", 24.0), timed("forward", "threads_2", 16.0)]
    fwd = proj.project(rates, scaling, cores=16, layers=layers, afterstate_ratio=0.1)["stages"]["forward"]
    assert fwd["speedup_2"] == 1.5 and fwd["speedup"]["per_doubling"] == pytest.approx(16 * 0.75 ** 4)
    # a stage pinned to one core (core_1) is the baseline when the block has it
    scaling["records"].append(timed("forward", "core_1", 36.0, 35.5))
    assert proj.two_core_speedup(scaling["records"], "forward") == 1.8     # 36 / 20
    with pytest.raises(ValueError, match="no threads_2 record of the backward"):
        proj.project(rates, {"records": scaling["records"][:2]}, cores=16, layers=layers)
    block = [8, 10]  # a threads_2 record of another block than the one-core records
    with pytest.raises(ValueError, match="ages 8-10 has no core_1 or threads_1 record"):
        proj.two_core_speedup(scaling["records"] + [timed("forward", "threads_2", 9.0)], "forward")
    # a falling trend goes on falling above the largest measured layer; below the smallest it is held
    assert proj.core_seconds((10.0, -1.0), [1e4], smallest=10, largest=1000) == pytest.approx(1e4 / 6)
    assert proj.core_seconds((0.0, 1.0), [1.0], smallest=10, largest=1000) == pytest.approx(1.0)

    # the layers of the full solve: complete ages weight 1, samples scaled to the total
    full, sample = tmp_path / "full.txt", tmp_path / "sample.txt"
    full.write_text("# comment\n4 10\n6 20\n")
    sample.write_text("100 5\n200 15\n")
    sizes, weights = proj.full_solve_layers(full, sample, total=230)
    assert sizes.tolist() == [10, 20, 5, 15] and weights.tolist() == [1, 1, 10, 10]  # (230 - 30) / 20
    sample.write_text("6 5\n")
    with pytest.raises(ValueError, match="within the ages"):
        proj.full_solve_layers(full, sample, total=230)
    # a fit that reaches rate 0 inside the layers, and a single layer size, are refused
    with pytest.raises(ValueError, match="<= 0 at a layer of 1"):
        proj.core_seconds((0.0, 1.0), [1.0, 100.0])
    with pytest.raises(ValueError, match="a trend needs two"):
        proj.rate_points({"records": rates["records"][:1]}, "forward")


@pytest.mark.slow
def test_scaling_measures_several_blocks_on_one_thread(tmp_path):
    # bench/scaling_4x3.py --configs threads_1 over two blocks (rates by layer size): one
    # record per block and stage, the naive solver's counts, the largest layer of each block, one
    # RECORD.md row per block
    from strongsolve.games.g2048.stages import pipeline
    source = tmp_path / "source"
    pipeline.solve(source, 2, 3, max_age=28, log=io.StringIO())
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "scaling_4x3.py"), str(source), "--ages",
                           "12-14,20-24", "--configs", "threads_1", "--workdir", str(tmp_path),
                           "--record", str(tmp_path / "RECORD.md")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    counts = naive_g2048.canonical_counts(2, 3)
    assert doc["ages"] == [[12, 14], [20, 22, 24]]
    assert [(r["ages"], r["stage"], r["config"]) for r in doc["records"]] == [
        (ages, stage, "threads_1") for ages in ([12, 14], [20, 22, 24]) for stage in ("forward", "backward")]
    for r in doc["records"]:
        column = 0 if r["stage"] == "forward" else 1
        assert r["count"] == sum(counts[n][column] for n in r["ages"])
        assert r["largest_layer"] == max(counts[n][column] for n in r["ages"])
        assert r["per_cpu_s"] == r["count"] / r["cpu_s"] and r["speedup"] == 1.0
    rows = (tmp_path / "RECORD.md").read_text().splitlines()
    assert [row.split(", ages ")[1].split(" ")[0] for row in rows] == ["12-14", "20-24"]
    bad = subprocess.run([sys.executable, str(REPO / "bench" / "scaling_4x3.py"), str(source), "--configs",
                          "threads_3"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--configs 'threads_3' is not allowed" in bad.stderr


def test_traffic_counts_equal_the_naive_solver(tmp_path):
    # bench/traffic_4x3.py on 2x3 ages 20-24 of a run made here: the arrays it counts
    # against a plain-Python count of spawns, states, moves, afterstates and expansion candidates
    import traffic_4x3
    from strongsolve.games.g2048.stages import pipeline
    pipeline.solve(tmp_path / "run", 2, 3, max_age=30, log=io.StringIO())
    forward, backward = traffic_4x3.count(tmp_path / "run", [20, 22, 24], 2, 3)
    states, afterstates = naive_g2048.reachable(2, 3)
    canon_states = {naive_g2048.canonical(b) for b in states}
    canon_after = {naive_g2048.canonical(b) for b in afterstates}
    starts = {naive_g2048.canonical(b) for b, p in naive_g2048.start_distribution(2, 3).items() if p > 0}

    def of_age(boards, n):
        return [b for b in boards if naive_g2048.age(b) == n]

    for f, b, n in zip(forward, backward, (20, 22, 24)):
        empties = [sum(v == 0 for row in a for v in row) for m in (n - 2, n - 4) for a in of_age(canon_after, m)]
        assert f["spawned"] == sum(empties) + len(of_age(starts, n))
        assert f["states"] == len(of_age(canon_states, n))
        assert f["moved"] == sum(len(naive_g2048.legal_moves(s)) for s in of_age(canon_states, n))
        assert f["afterstates"] == b["afterstates"] == len(of_age(canon_after, n))
        assert f["afterstates"] <= f["moved_after_hash"] <= f["moved"]
        assert f["state_sort_passes"] == f["afterstate_sort_passes"] == 3  # 24-bit IDs: 3 digits vary
        spawned = [s for a in of_age(canon_after, n) for s, _ in naive_g2048.spawns(a)]
        assert b["outcomes"] == len(spawned)
        assert b["candidates"] == sum(len(naive_g2048.legal_moves(s)) for s in spawned)
        assert b["random_lines"] == b["candidates"] + b["afterstates"]
    assert traffic_4x3.radix_passes(np.array([0x10, 0x1010], np.uint64)) == 1
    assert traffic_4x3.radix_passes(np.array([0x10, 0x10], np.uint64)) == 0
    assert traffic_4x3.sort_bytes(10, 3) == 10 * 8 * 7


def test_ludo_projection_counts_equal_an_enumeration():
    # bench/ludo_projection.py counts positions by progress with a generating function; here by
    # listing every multiset of rest cells on a small board
    from itertools import combinations_with_replacement

    import ludo_projection
    from strongsolve.games.ludo import encoding, rules

    board = rules.Board.from_mapping({"length": 9, "jumps": {2: 5, 7: 3}, "die": 3})
    cells = board.rest_cells()
    for pieces in (1, 2, 3):
        tuples = list(combinations_with_replacement(cells, pieces))
        by_sum = np.bincount([sum(t) for t in tuples], minlength=pieces * 9 + 1)
        counts = ludo_projection.progress_counts(cells, pieces)
        assert counts.tolist() == by_sum.tolist()
        assert int(counts.sum()) ** 2 == encoding.race_positions(board, pieces)
        gain = ludo_projection.largest_gain(board)
        assert gain == 5  # from 0, a roll of 2 lands on 2 and takes the shortcut to 5
        lead = [max(sum(a), sum(b)) for a in tuples for b in tuples]
        window = max(sum(lo <= x <= lo + gain for x in lead) for lo in range(pieces * 9 + 1))
        assert ludo_projection.band_positions(counts, gain) == window
