"""One writer per run directory: the lock every writing stage holds for its whole life.

The orphan of a ``kill -9`` of the Snakemake main process keeps writing while the rerun starts the
same job. Here the orphan is played by a process that holds the run's writer lock and fills a
temporary layer directory, as a live writer does mid-layer; the rerun's job is the real
``strongsolve 2048 forward`` command. It must wait (saying for whom), leave the orphan's temporary
alone, and then keep the orphan's layer (or, if the orphan died mid-write, remove its temporary and
compute the layer): every layer byte for byte as an uninterrupted run's.
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from strongsolve.store.lock import LOCK_NAME, holds_writer_lock, writer_lock

STRONGSOLVE = [sys.executable, "-m", "strongsolve"]
ENV = dict(os.environ, NUMBA_NUM_THREADS="1")
TIMEOUT = 120

# A stand-in for the orphaned job: it takes the run's writer lock, copies a finished layer into a
# temporary name beside its final name (a layer being written), says "writing", then waits for a
# line on stdin and renames the temporary into place, as write_layer does.
ORPHAN = textwrap.dedent("""
    import os, shutil, sys
    from strongsolve.store.lock import writer_lock
    run_dir, source, final, tmp = sys.argv[1:]
    with writer_lock(run_dir, "orphan"):
        shutil.copytree(source, tmp)
        print("writing", flush=True)
        sys.stdin.readline()
        os.rename(tmp, final)
""")


def wait_for(condition, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def start_orphan(run_dir, source, age):
    final = run_dir / "afterstates" / f"age_{age:06d}.zarr"
    tmp = final.with_name(f".{final.name}.tmp-0rphan00")
    final.parent.mkdir(parents=True, exist_ok=True)
    orphan = subprocess.Popen([sys.executable, "-c", ORPHAN, str(run_dir), str(source), str(final),
                               str(tmp)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=ENV)
    assert orphan.stdout.readline() == "writing\n"
    return orphan, tmp


def start_forward(run_dir, ages, err_path):
    with open(err_path, "w") as err:
        return subprocess.Popen([*STRONGSOLVE, "2048", "forward", str(run_dir), "--rows", "2",
                                 "--cols", "3", "--ages", ages], stdout=err,  # per-age lines
                                stderr=err, env=ENV)


def layer_files(run_dir, stage, ages):
    """Relative path -> bytes of every file of the layers of ``ages``."""
    out = {}
    for n in ages:
        root = run_dir / stage / f"age_{n:06d}.zarr"
        out.update({p.relative_to(run_dir): p.read_bytes() for p in root.rglob("*") if p.is_file()})
    return out


def test_lock_is_reentrant_covers_the_directory_and_leaves_no_file(tmp_path):
    run_dir = tmp_path / "2048_2x3"
    assert not holds_writer_lock(run_dir / "values" / "age_000004.zarr")
    with writer_lock(run_dir):
        assert (run_dir / LOCK_NAME).read_text() == f"pid {os.getpid()}: {' '.join(sys.argv)}\n"
        with writer_lock(run_dir):  # a stage inside `solve`: no deadlock on our own lock
            assert holds_writer_lock(run_dir / "values" / "age_000004.zarr")
        assert holds_writer_lock(run_dir)
        assert not holds_writer_lock(tmp_path / "2048_2x4" / "values")
    assert not holds_writer_lock(run_dir)
    assert list(run_dir.iterdir()) == []  # released: the lock file went with it


def test_waiter_names_the_holder_then_proceeds_when_the_holder_is_killed(tmp_path):
    run_dir = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from strongsolve.store.lock import writer_lock
        with writer_lock(sys.argv[1]):
            print("held", flush=True)
            time.sleep(600)
        """), str(run_dir)], stdout=subprocess.PIPE, text=True, env=ENV)
    assert holder.stdout.readline() == "held\n"
    err_path = tmp_path / "waiter.err"
    with open(err_path, "w") as err:
        waiter = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
            import sys
            from strongsolve.store.lock import writer_lock
            with writer_lock(sys.argv[1], "the waiter"):
                print("got it", flush=True)
            """), str(run_dir)], stdout=subprocess.PIPE, stderr=err, text=True, env=ENV)
    wait_for(lambda: "waits" in err_path.read_text(), "the waiting message")
    time.sleep(0.3)
    assert waiter.poll() is None  # still waiting
    os.kill(holder.pid, signal.SIGKILL)  # as an orphan dies: the kernel drops its flock
    holder.wait()
    out, _ = waiter.communicate(timeout=TIMEOUT)
    assert out == "got it\n" and waiter.returncode == 0
    err = err_path.read_text()
    assert (f"strongsolve: the waiter waits: {run_dir.resolve()} is being written by another process "
            f"(pid {holder.pid}: -c {run_dir}); one writer per run directory, so this job waits until "
            "that one finishes or dies") in err
    assert f"strongsolve: the waiter got the lock of {run_dir.resolve()} after" in err


@pytest.fixture(scope="module")
def reference(solved):
    """An uninterrupted 2x3 run (pipeline.solve)."""
    return solved(2, 3)


def test_rerun_job_waits_for_a_live_orphan_and_keeps_its_layer(reference, tmp_path):
    run_dir = tmp_path / "2048_2x3"
    orphan, tmp = start_orphan(run_dir, reference / "afterstates" / "age_000004.zarr", 4)
    err_path = tmp_path / "rerun.err"
    rerun = start_forward(run_dir, "4-20", err_path)
    wait_for(lambda: "waits" in err_path.read_text(), "the rerun's waiting message")
    time.sleep(0.5)  # time enough to remove the orphan's temporary, were it allowed to
    assert rerun.poll() is None and tmp.is_dir()
    assert not (run_dir / "afterstates" / "age_000006.zarr").exists()
    orphan.communicate("\n", timeout=TIMEOUT)  # the orphan renames its layer into place and exits
    assert orphan.returncode == 0
    assert rerun.wait(timeout=TIMEOUT) == 0, err_path.read_text()
    err = err_path.read_text()
    assert f"by another process (pid {orphan.pid}: " in err
    status = dict(re.findall(r"forward age (\d+): .*, (verified \(kept\)|computed)", err))
    assert status == {"4": "verified (kept)", **{str(n): "computed" for n in range(6, 21, 2)}}
    ages = range(4, 21, 2)
    assert layer_files(run_dir, "afterstates", ages) == layer_files(reference, "afterstates", ages)
    assert sorted(p.name for p in run_dir.iterdir()) == ["afterstates"]  # no lock file, no spill
    assert not [p for p in (run_dir / "afterstates").iterdir() if p.name.startswith(".")]


def test_orphan_killed_mid_layer_its_temporary_is_removed_by_the_next_holder(reference, tmp_path):
    run_dir = tmp_path / "2048_2x3"
    orphan, tmp = start_orphan(run_dir, reference / "afterstates" / "age_000004.zarr", 4)
    (tmp / "zarr.json").unlink()  # half written
    err_path = tmp_path / "rerun.err"
    rerun = start_forward(run_dir, "4-20", err_path)
    wait_for(lambda: "waits" in err_path.read_text(), "the rerun's waiting message")
    assert tmp.is_dir()
    os.kill(orphan.pid, signal.SIGKILL)
    orphan.wait()
    assert rerun.wait(timeout=TIMEOUT) == 0, err_path.read_text()
    assert not tmp.exists()
    assert re.search(r"forward age 4: .*, computed in", err_path.read_text())
    ages = range(4, 21, 2)
    assert layer_files(run_dir, "afterstates", ages) == layer_files(reference, "afterstates", ages)


def test_a_file_system_without_locks_is_named(tmp_path, monkeypatch):
    import errno

    from strongsolve.store import lock

    def no_locks(handle, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(lock.fcntl, "flock", no_locks)
    with pytest.raises(OSError) as info:
        with writer_lock(tmp_path / "run"):
            pass
    assert info.value.errno == errno.ENOLCK
    assert str(info.value) == (f"[Errno 37] cannot lock {tmp_path / 'run' / LOCK_NAME} (No locks "
                               "available): one writer per run directory needs file locks (flock); "
                               "put the results directory (config key results) on a file system "
                               "that has them")
    assert not holds_writer_lock(tmp_path / "run")
