"""Value layers' codec and the storage benchmark.

Bit-for-bit checks compare the bytes read back with the float64 bytes written; the benchmark's ID
sizes are checked against the layers' own attributes and ``solution.json``.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strongsolve.games.g2048.stages.backward import VALUES_ZSTD_LEVEL
from strongsolve.games.g2048.saved import Run
from strongsolve.store.layers import read_layer, write_layer

REPO = Path(__file__).resolve().parents[2]


def zstd_level(array_dir):
    meta = json.loads((Path(array_dir) / "zarr.json").read_text())
    (zstd,) = [c for c in meta["codecs"] if c["name"] == "zstd"]
    return zstd["configuration"]["level"]


@pytest.mark.parametrize("level", [1, 3, 9])
def test_a_layer_reads_back_bit_for_bit_at_any_zstd_level(tmp_path, level):
    rng = np.random.default_rng(level)
    values = np.concatenate([rng.random(5000) * 1e4, np.zeros(300), [-0.0, np.inf, -np.inf, np.nan,
                                                                     5e-324, 1.7976931348623157e308]])
    path = tmp_path / "age_000010.zarr"
    write_layer(path, {"values": values}, {"age": 10}, zstd_level=level)
    back = read_layer(path)[0]["values"]
    assert back.tobytes() == values.tobytes()
    assert zstd_level(path / "values") == level


@pytest.fixture(scope="module")
def run_2x3(solved):
    return Run(solved(2, 3), 2, 3)


def test_value_layers_are_written_at_the_values_level_and_id_layers_at_1(run_2x3):
    assert VALUES_ZSTD_LEVEL == 3
    for n in run_2x3.ages()[::25]:
        assert zstd_level(run_2x3.values_path(n) / "values") == VALUES_ZSTD_LEVEL
        assert zstd_level(run_2x3.afterstate_path(n) / "words") == 1


def test_storage_bench_reports_the_stored_sizes_and_only_lossless_codecs(run_2x3):
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "storage.py"), str(run_2x3.directory),
                           "--json", "--codecs", "zstd1,zstd3,shuffle-zstd1,delta-zstd1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    solution = json.loads((run_2x3.directory / "solution.json").read_text())
    assert doc["afterstates"] == solution["num_afterstates"]
    assert doc["ids"]["code_bytes"] == solution["afterstate_bytes"]
    assert doc["formats"] == [2]
    assert doc["ids"]["stored_bits_per_afterstate"] < doc["ids"]["raw_bits_per_afterstate"]
    values = doc["values"]
    assert values["count"] == solution["num_afterstates"]
    assert set(values["codecs"]) == {"zstd1", "zstd3", "shuffle-zstd1", "delta-zstd1"}
    assert all(c["lossless"] and c["bytes"] > 0 for c in values["codecs"].values())
