"""Progress of long work (strongsolve.progress): detail lines written in batches to a log, a status
line whose plain output stays sparse on a pipe, the workflow's display of the running jobs, and a
stage job whose per-age lines go to its log file, not to the terminal."""

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strongsolve.progress import (PLAIN_INTERVAL, JobDisplay, Progress, Reporter, Task,
                                  format_seconds, remove_stale_displays)

REPO = Path(__file__).resolve().parents[1]


class CountingStream(io.StringIO):
    def __init__(self):
        super().__init__()
        self.writes = 0

    def write(self, text):
        self.writes += 1
        return super().write(text)


def test_lines_wait_for_the_interval_then_go_in_one_write():
    log = CountingStream()
    with Progress(log, interval=3600) as progress:
        for k in range(5):
            progress.line(f"age {k}")
        assert log.getvalue() == "" and log.writes == 0
    assert log.getvalue() == "".join(f"age {k}\n" for k in range(5)) and log.writes == 1


def test_a_zero_interval_writes_every_line_at_once():
    log = CountingStream()
    progress = Progress(log, interval=0)
    progress.line("first")
    assert log.getvalue() == "first\n"
    progress.line("second")
    assert log.getvalue() == "first\nsecond\n" and log.writes == 2


def test_lines_gathered_before_a_failure_are_written():
    log = CountingStream()
    with pytest.raises(RuntimeError):
        with Progress(log, interval=3600) as progress:
            progress.line("age 4: computed")
            raise RuntimeError("disk full")
    assert log.getvalue() == "age 4: computed\n"


# ---- the status line of a long job: Reporter, Task, JobDisplay ----------------------------------


class FakeClock:
    """Seconds that move only when the test says (steps of 0.25 s: exact binary fractions)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_long_loop_prints_a_bounded_number_of_plain_lines():
    # 4,000 ages over 1,000 fake seconds on a pipe: a line every PLAIN_INTERVAL (15 s) seconds, the
    # first one 15 s after the start, instead of 4,000
    clock, out = FakeClock(), io.StringIO()
    report = Reporter(stream=out, live=False, clock=clock)
    assert report.mode == "plain" and PLAIN_INTERVAL == 15.0
    with Task("2048 forward", 4000, "ages", report=report) as task:
        for done in range(1, 4001):
            clock.now = done * 0.25
            task.update(f"age {2 * done + 2}", done=done)
    lines = out.getvalue().splitlines()
    assert len(lines) == 66  # at 15, 30, ..., 990 s (1,000 s is not 15 s after 990 s)
    # at 15 s: 60 ages done, 4 ages/s, 3,940 ages left: 985 s
    assert lines[0] == "2048 forward: age 122 (60/4,000 ages, 4.0 ages/s, ETA 16 min 25 s)"
    assert lines[-1] == "2048 forward: age 7922 (3,960/4,000 ages, 4.0 ages/s, ETA 10 s)"


def test_a_short_job_prints_no_status_line():
    clock, out = FakeClock(), io.StringIO()
    with Task("shutbox", report=Reporter(stream=out, live=False, clock=clock)) as task:
        for k in range(100):
            clock.now = k * 0.125  # 12.4 s in all
            task.update(f"step {k}")
    assert out.getvalue() == ""


def test_the_status_file_holds_the_last_status(tmp_path):
    clock, path = FakeClock(), tmp_path / "123.status"
    report = Reporter(status_file=path, clock=clock)
    assert report.mode == "file"
    with Task("ludo race, 2 piece(s)", report=report) as task:
        task.update("listing the positions")
        assert path.read_text() == "ludo race, 2 piece(s): listing the positions\n"
        clock.now = 0.25  # within LIVE_INTERVAL: kept back, then written when the task ends
        task.update("optimal play, sweep 1, largest change 0.5")
        assert path.read_text() == "ludo race, 2 piece(s): listing the positions\n"
    assert path.read_text() == "ludo race, 2 piece(s): optimal play, sweep 1, largest change 0.5\n"
    assert [p.name for p in tmp_path.iterdir()] == ["123.status"]  # no temporary left


def test_seconds_for_a_person():
    assert [format_seconds(s) for s in (0.4, 59.6, 60, 3599, 3600, 7 * 3600 + 125)] == [
        "0 s", "1 min 00 s", "1 min 00 s", "59 min 59 s", "1 h 00 min", "7 h 02 min"]


def test_the_display_writes_a_plain_line_per_long_job(tmp_path, capfd):
    display = JobDisplay(tmp_path / "progress", live=False, interval=30.0).start()
    try:
        assert os.environ["STRONGSOLVE_PROGRESS_DIR"] == str(tmp_path / "progress")
        # jobs are named by their process id (logged.sh's): this process and its parent
        long_job = tmp_path / "progress" / f"{os.getpid()}.job"
        short_job = tmp_path / "progress" / f"{os.getppid()}.job"
        long_job.write_text("race_p2\n")
        long_job.with_suffix(".status").write_text("ludo race, 2 piece(s): optimal play\n")
        short_job.write_text("flip_one\n")
        started = time.time() - 40
        os.utime(long_job, (started, started))
        deadline = time.monotonic() + 10
        err = ""
        while "race_p2" not in err:
            assert time.monotonic() < deadline
            time.sleep(0.1)
            err += capfd.readouterr().err
    finally:
        display.stop()
    line, = err.splitlines()  # the job running for 40 s; none yet for the one that just started
    assert re.fullmatch(r"\[race_p2\] ludo race, 2 piece\(s\): optimal play \(4\d s\)", line), line
    assert not (tmp_path / "progress").exists() and "STRONGSOLVE_PROGRESS_DIR" not in os.environ
    display = JobDisplay(tmp_path / "again", live=False, interval=30.0)
    (tmp_path / "again").mkdir()
    job = tmp_path / "again" / f"{os.getpid()}.job"
    job.write_text("race_p2\n")
    os.utime(job, (started, started))
    job.with_suffix(".status").write_text("ludo race, 2 piece(s): optimal play\n")
    ended = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True).stdout.strip()
    killed = tmp_path / "again" / f"{ended}.job"  # a job killed before removing its files
    killed.write_text("race_p1\n")
    rows = display.jobs(now=started + 75)
    assert rows == [(str(os.getpid()), "race_p2", "ludo race, 2 piece(s): optimal play", 75.0)]
    assert not killed.exists()
    # a killed run's display directory goes when the next run starts, a live one stays
    (tmp_path / "runs" / ended).mkdir(parents=True)
    (tmp_path / "runs" / str(os.getpid())).mkdir()
    remove_stale_displays(tmp_path / "runs")
    assert [d.name for d in (tmp_path / "runs").iterdir()] == [str(os.getpid())]
    assert JobDisplay.job_line(*rows[0][1:]) == "[race_p2] ludo race, 2 piece(s): optimal play (1 min 15 s)"


def test_a_stage_job_writes_its_per_age_lines_to_its_log_and_a_start_line_to_the_terminal(tmp_path):
    # the 2x2 board (ages 4 to 60, tests/naive/g2048.py's board) solved as the g2048_solve rule does
    log = tmp_path / "results" / "2048_2x2" / "logs" / "solve_000004-000060.log"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               STRONGSOLVE_PROGRESS_DIR=str(tmp_path / "progress"))
    env.pop("STRONGSOLVE_PROGRESS_FILE", None)
    (tmp_path / "progress").mkdir()
    proc = subprocess.run(["bash", str(REPO / "workflow/scripts/logged.sh"), str(log), "strongsolve",
                           "2048", "solve-block", "results/2048_2x2", "--rows", "2", "--cols", "2",
                           "--ages", "4-60", "--report"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    assert len(re.findall(r"^forward age \d+: ", text, flags=re.M)) == 29  # ages 4, 6, ..., 60
    assert len(re.findall(r"^backward age \d+: ", text, flags=re.M)) == 29
    terminal = proc.stderr.splitlines()
    assert terminal[0] == f"[solve_000004-000060] started (log: {log})"
    assert not [line for line in terminal if " age " in line]
    # the start, the answer, the plots written: a few lines, none per age
    assert terminal[1].startswith("[solve_000004-000060] expected score ") and len(terminal) < 8, terminal
    assert list((tmp_path / "progress").iterdir()) == []  # the job's status files left with it


LIVE_SCRIPT = """
import os, subprocess, sys, time
from strongsolve.progress import JobDisplay
display = JobDisplay(sys.argv[1], live=True).start()
print("snakemake line 1", flush=True)
open(os.path.join(sys.argv[1], f"{os.getpid()}.job"), "w").write("race_p2\\n")
open(os.path.join(sys.argv[1], f"{os.getpid()}.status"), "w").write("ludo race, 2 piece(s): optimal play, sweep 7\\n")
subprocess.run(["sh", "-c", "echo '[race_p2] a job line' >&2"])
time.sleep(1.5)
print("snakemake line 2", file=sys.stderr, flush=True)
display.stop()
print("after the display", flush=True)
"""


def test_the_live_display_shows_every_line_and_a_line_per_job_on_a_terminal(tmp_path):
    import pty
    import select as sel

    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", LIVE_SCRIPT, str(tmp_path / "progress")],
                            stdout=secondary, stderr=secondary, stdin=subprocess.DEVNULL)
    os.close(secondary)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = sel.select([primary], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other side closed
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    assert proc.wait(timeout=10) == 0, out
    # a live line is redrawn after a carriage return: every redraw counts as a line here
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode()).replace("\r", "\n")
    # Snakemake's and the jobs' lines, in order, each once; the job's live line while it runs
    lines = [line for line in text.split("\n") if line.strip()]
    assert [line for line in lines if not line.startswith("[race_p2] ludo")] == [
        "snakemake line 1", "[race_p2] a job line", "snakemake line 2", "after the display"]
    assert re.search(r"\[race_p2\] ludo race, 2 piece\(s\): optimal play, sweep 7 \(\d s\)", text)
    assert not (tmp_path / "progress").exists()


def test_the_terminal_keeps_snakemake_errors_and_progress_not_its_job_blocks():
    import logging

    from snakemake_interface_logger_plugins.common import LogEvent

    from strongsolve.progress import terminal_record

    def record(message, event=None):
        rec = logging.LogRecord("snakemake.logging", logging.INFO, __file__, 1, message, None, None)
        if event is not None:
            rec.event = event
        return rec

    assert not terminal_record(record("", LogEvent.JOB_INFO))  # the rule block of a job
    assert not terminal_record(record("Execute 2 jobs...", LogEvent.JOB_STARTED))
    assert not terminal_record(record("Select jobs to execute..."))
    assert terminal_record(record("", LogEvent.JOB_ERROR))
    assert terminal_record(record("3 of 13 steps (23%) done", LogEvent.PROGRESS))
    assert terminal_record(record("", LogEvent.JOB_FINISHED))
    assert terminal_record(record("Building DAG of jobs..."))
