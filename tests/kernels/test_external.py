"""Bounded memory and scale-out give the same bytes: an external sort forced to spill many
runs per layer, small chunks, and a real dask.distributed LocalCluster, against the in-memory path."""

import io
from pathlib import Path

import distributed
import numpy as np
import pytest
import zarr

from strongsolve.games.g2048.stages.forward import expand_layer, forward_layers
from strongsolve.games.g2048.stages.pipeline import solve
from strongsolve.kernels.external import SortedRuns


def layer_contents(run_dir):
    """{relative layer path: (attributes, {array: values})} of every zarr layer of a run."""
    out = {}
    for path in sorted(Path(run_dir).glob("*/age_*.zarr")):
        group = zarr.open_group(path, mode="r")
        out[str(path.relative_to(run_dir))] = (
            dict(group.attrs), {name: group[name][:] for name in group.array_keys()})
    return out


def assert_same_run(a, b):
    la, lb = layer_contents(a), layer_contents(b)
    assert la.keys() == lb.keys() and la
    for key in la:
        assert la[key][0] == lb[key][0], key
        for name, values in la[key][1].items():
            assert values.dtype == lb[key][1][name].dtype
            assert values.tobytes() == lb[key][1][name].tobytes(), (key, name)
    assert (Path(a) / "solution.json").read_bytes() == (Path(b) / "solution.json").read_bytes()
    assert (Path(a) / "summary.csv").read_text().splitlines()[0] == "age,states,afterstates,terminal_states,bytes,bits_per_afterstate"


def test_sorted_runs_spill_and_merge_like_numpy(tmp_path):
    rng = np.random.default_rng(7)
    chunks = [rng.integers(0, 5000, rng.integers(0, 900)).astype(np.uint64) for _ in range(40)]
    with SortedRuns(memory_limit=4096, spill_dir=tmp_path) as runs:
        for c in chunks:
            runs.add(c)
        assert runs.spilled_runs > 5
        blocks = list(runs.merged(block_bytes=1024))
    assert all(b.size <= 128 for b in blocks) and len(blocks) > 10
    merged = np.concatenate(blocks)
    assert np.array_equal(merged, np.unique(np.concatenate(chunks)))
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # spilled runs are removed


@pytest.mark.parametrize("memory_limit", [None, 4096, 1 << 20])
def test_sorted_runs_union_like_numpy(tmp_path, memory_limit):
    rng = np.random.default_rng(11)
    chunks = [rng.integers(0, 2**40, rng.integers(0, 1500)).astype(np.uint64) for _ in range(30)]
    chunks += [c[: c.size // 2] for c in chunks[:10]]  # repeats across runs
    with SortedRuns(memory_limit=memory_limit, spill_dir=tmp_path) as runs:
        for c in chunks:
            runs.add(c)
        assert (runs.spilled_runs > 3) == (memory_limit == 4096)
        union = runs.union()
    np.testing.assert_array_equal(union, np.unique(np.concatenate(chunks)))
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]  # runs and the union file removed


def test_expand_layer_spilling_equals_in_memory(tmp_path):
    layers = {layer.age: layer for layer in forward_layers(2, 3, 60)}
    from strongsolve.games.g2048.rules.board import tables
    t = tables(2, 3)
    for n in (30, 44, 60):
        a = expand_layer(n, t, 0.9, 0, layers[n - 2].afterstates, layers[n - 4].afterstates)
        b = expand_layer(n, t, 0.9, 0, layers[n - 2].afterstates, layers[n - 4].afterstates, chunk=7,
                         memory_limit=1024, spill_dir=tmp_path)
        assert (a.num_states, a.num_terminal) == (b.num_states, b.num_terminal)
        assert np.array_equal(a.afterstates, b.afterstates)


@pytest.mark.slow
def test_memory_limit_and_small_chunks_give_identical_layers(tmp_path):
    quiet = io.StringIO()
    solve(tmp_path / "mem", 2, 3, log=quiet)
    solve(tmp_path / "ooc", 2, 3, log=quiet, chunk=50, memory_limit=2048)
    assert_same_run(tmp_path / "mem", tmp_path / "ooc")


@pytest.mark.slow
def test_local_cluster_gives_identical_layers(tmp_path):
    quiet = io.StringIO()
    solve(tmp_path / "mem", 2, 3, log=quiet)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        solve(tmp_path / "cluster", 2, 3, log=quiet, chunk=500, client=client)
    assert_same_run(tmp_path / "mem", tmp_path / "cluster")


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["2", "3"])
def test_threaded_sorts_and_index_builds_give_identical_layers(tmp_path, monkeypatch, threads):
    # the forward's unions scattered and sorted by bucket on threads, the backward's hash indexes
    # built by ranges of slots on threads, even on 2x3's small layers
    from strongsolve.kernels import hashindex, sort
    quiet = io.StringIO()
    monkeypatch.setenv("STRONGSOLVE_THREADS", "1")
    solve(tmp_path / "one", 2, 3, log=quiet)
    monkeypatch.setenv("STRONGSOLVE_THREADS", threads)
    monkeypatch.setattr(sort, "PARALLEL_SORT_MIN", 64)
    monkeypatch.setattr(hashindex, "PARALLEL_BUILD_MIN", 64)
    calls = {"sort": 0, "index": 0}
    runs, ranges = sort._runs_scatter, hashindex._build_task
    monkeypatch.setattr(sort, "_runs_scatter", lambda *a: (calls.__setitem__("sort", calls["sort"] + 1), runs(*a))[1])
    monkeypatch.setattr(hashindex, "_build_task", lambda *a: (calls.__setitem__("index", calls["index"] + 1), ranges(*a))[1])
    solve(tmp_path / "threads", 2, 3, log=quiet, chunk=50)
    assert calls["sort"] > 100 and calls["index"] > 100  # the threaded paths did run
    assert_same_run(tmp_path / "one", tmp_path / "threads")
