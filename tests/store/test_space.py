"""A full disk is named as such, with the file and the fix, even in a job's log on that disk.

The full disk is real: a tmpfs of a few hundred KiB mounted for the test (root may mount one; the
test is skipped, saying why, where mounting is not allowed), filled with a ballast file. A job's
log lies on the disk that fills: the job sets some space aside when it starts
(:func:`strongsolve.store.space.reserve_log_space`), so its error is written even so. (A disk that is
full before the job starts leaves no room for that; the workflow also shows a job's stderr on the
terminal.)
"""

import errno
import os
import shutil
import subprocess
import sys
import uuid

import numpy as np
import pytest

from strongsolve.kernels.external import SortedRuns
from strongsolve.store.errors import StoreWriteError
from strongsolve.store.space import LOG_RESERVE

ENV = dict(os.environ, NUMBA_NUM_THREADS="1")


@pytest.fixture
def tiny_fs(tmp_path):
    """A function (KiB) -> a freshly mounted tmpfs of that size, unmounted after the test."""
    mounts = []

    def mount(kib):
        where = tmp_path / f"fs{len(mounts)}"
        where.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if proc.returncode:
            pytest.skip(f"a real full disk needs `mount -t tmpfs` (root): {proc.stderr.strip()}")
        mounts.append(where)
        return where

    yield mount
    for where in mounts:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(directory, leave=0):
    """Fill the file system of ``directory`` up to the last byte, then free ``leave`` bytes."""
    with open(directory / f"ballast-{uuid.uuid4().hex[:6]}", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as err:
            assert err.errno == errno.ENOSPC
        f.truncate(f.tell() - leave)
    assert shutil.disk_usage(directory).free == leave


def test_spill_on_a_full_disk_names_disk_full_the_file_and_the_fix(tiny_fs):
    fs = tiny_fs(256)
    spill_dir = fs / ".spill" / "age_000042"
    ids = np.random.default_rng(16).integers(0, 2**63, 20_000, dtype=np.uint64)  # 160 KB sorted
    with SortedRuns(memory_limit=4096, spill_dir=spill_dir) as runs:
        runs.add(ids[:100])  # 800 bytes > 4096 / 8: the first run is spilled
        fill(fs)
        with pytest.raises(StoreWriteError) as info:
            runs.add(ids)
        run_file = next(spill_dir.glob("runs-*")) / "run_00001.bin"
        assert not run_file.exists()  # nothing partial left
    message = str(info.value)
    assert info.value.errno == errno.ENOSPC
    assert message.startswith(f"cannot spill sorted IDs to {run_file}: disk full (ENOSPC: no space "
                              f"left on device, 0 bytes free on the file system of {run_file.parent})")
    assert "(memory_limit = 4096 bytes). Free space on that file system, or set memory_limit higher" in message
    assert "requested and" not in message


def run_dir_copy(solved, fs):
    run_dir = fs / "2048_2x3"
    shutil.copytree(solved(2, 3), run_dir)
    (run_dir / "summary.csv").unlink(missing_ok=True)
    (run_dir / "solution.json").unlink(missing_ok=True)
    (run_dir / "logs").mkdir()
    return run_dir


def job(command, log):
    """Run a stage as a Snakemake rule does: ``... > {log} 2>&1``."""
    return subprocess.run(f"{command} > {log} 2>&1", shell=True, env=ENV, timeout=300)


def test_report_on_a_full_disk_writes_its_error_to_its_log_on_that_disk(solved, tiny_fs):
    source = solved(2, 3)
    kib = sum(-(-p.stat().st_size // 4096) * 4 for p in source.rglob("*") if p.is_file()) + 256
    fs = tiny_fs(kib)
    run_dir = run_dir_copy(solved, fs)
    log = run_dir / "logs" / "report.log"
    log.touch()
    fill(fs, leave=LOG_RESERVE)  # the job's own first writes fill the disk (here: its log reserve)
    proc = job(f"{sys.executable} -m strongsolve 2048 report {run_dir} --rows 2 --cols 3", log)
    assert proc.returncode == 1
    text = log.read_text()
    assert text.startswith(f"strongsolve: error: cannot write {run_dir / 'summary.csv'}: disk full "
                           f"(ENOSPC: no space left on device, 0 bytes free on the file system of "
                           f"{run_dir}); nothing was written for it. Free disk space"), text
    assert not (run_dir / "summary.csv").exists()
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".")]  # no temporary, no lock file


def test_forward_spill_on_a_full_disk_names_it_in_the_job_log(solved, tiny_fs):
    source = solved(2, 3)
    kib = sum(-(-p.stat().st_size // 4096) * 4 for p in source.rglob("*") if p.is_file()) + 256
    fs = tiny_fs(kib)
    run_dir = run_dir_copy(solved, fs)
    for n in range(60, 253, 2):  # the forward layers from age 60 on are to do again
        shutil.rmtree(run_dir / "afterstates" / f"age_{n:06d}.zarr")
    log = run_dir / "logs" / "forward.log"
    log.touch()
    fill(fs, leave=LOG_RESERVE)  # the job's own first writes fill the disk (here: its log reserve)
    proc = job(f"{sys.executable} -m strongsolve 2048 forward {run_dir} --rows 2 --cols 3 "
               "--ages 60-98 --memory-limit 1024", log)
    assert proc.returncode == 1
    text = log.read_text()
    spill = run_dir / ".spill" / "age_000060"
    assert f"strongsolve: error: cannot spill sorted IDs to {spill}/runs-" in text, text
    assert ": disk full (ENOSPC: no space left on device, 0 bytes free on the file system of " in text
    assert "set memory_limit higher" in text
