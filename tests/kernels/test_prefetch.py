"""kernels/prefetch.py: the hint is emitted as the CPU's prefetch instruction and changes nothing."""

import platform

import numba
import numpy as np
import pytest

from strongsolve.kernels.prefetch import prefetch


@numba.njit
def _gather(values, rows, cols, ahead):
    # sum values[rows[k], cols[k]], prefetching the entry `ahead` places on
    total = 0.0
    for k in range(rows.size):
        if ahead and k + ahead < rows.size:
            prefetch(values, rows[k + ahead], cols[k + ahead])
        total += values[rows[k], cols[k]]
    return total


def _case():
    rng = np.random.default_rng(7)
    values = rng.random((300, 500))
    rows = rng.integers(0, 300, 10_000)
    cols = rng.integers(0, 500, 10_000)
    return values, rows, cols


def test_prefetch_changes_no_value():
    values, rows, cols = _case()
    before = values.copy()
    plain = _gather(values, rows, cols, 0)
    assert plain == sum(values[r, c] for r, c in zip(rows.tolist(), cols.tolist()))
    for ahead in (1, 4, 64):
        assert _gather(values, rows, cols, ahead) == plain
    assert np.array_equal(values, before)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 mnemonic")
def test_prefetch_is_the_x86_prefetch_instruction():
    values, rows, cols = _case()
    _gather(values, rows, cols, 2)
    assembly = _gather.inspect_asm(_gather.signatures[0])
    assert "prefetcht0" in assembly
