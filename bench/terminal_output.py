"""What a person sees of a workflow run: the lines and the silences of ``snakemake`` on a terminal
and through a pipe.

Runs ``snakemake --cores N --config results=DIR`` in the current directory (the clone) once per
mode, each into a fresh results directory ``DIR`` (removed first):

- **tty**: under a pseudo-terminal (120 columns), as ``make run`` in a terminal;
- **pipe**: stdout and stderr into one pipe, as CI or ``| tee``.

Every chunk of output is timestamped as it comes. Per mode:

- ``wall_seconds``, ``exit_status``;
- ``newlines``: the newline characters written; ``lines``: the lines a person sees, i.e. what stays
  in the terminal's scrollback when the output is replayed on a minimal terminal that honours
  carriage return, erase line and cursor up (the live display redraws its lines in place with
  them); for the pipe both are its lines;
- ``longest_gap_seconds``: the longest time without any output (the live display redraws every
  0.5 s while a job runs); ``longest_gap_between_lines_seconds``: the longest time without a new
  line (tty: a line that stays; pipe: any line);
- ``longest_unchanged_status_seconds``: per job, the longest time its status (its live or plain
  line without the elapsed time) stayed the same while the job ran, from the lines seen;
- ``cpu_seconds``: per job with a Snakemake benchmark file (``*.tsv`` under ``DIR``) its
  ``cpu_time``, and their sum per game directory (``truco``, ``ludo_classic60``, ...).

The raw outputs are kept beside the JSON (``--keep DIR``): ``<mode>.out`` with a timestamp before
each chunk (pipe: each line), and ``tty.screen.txt``: the lines left on the terminal. Prints one
JSON document.

Usage::

    python bench/terminal_output.py [--cores 2] [--modes tty,pipe] [--results /tmp/quiet_run]
                                    [--keep bench/out/terminal] [-- extra snakemake arguments]
"""

import argparse
import csv
import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

ESCAPE = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")
JOB_LINE = re.compile(r"^\[([\w.+-]+)\] (.*) \((\d+ s|\d+ min \d\d s|\d+ h \d\d min)\)$")
COLUMNS, ROWS = 120, 40


class Screen:
    """A minimal terminal: carriage return, newline, erase line (``ESC[2K``, ``ESC[K``) and cursor
    up (``ESC[<n>A``); other escapes ignored. Lines longer than the terminal count once (the live
    display's lines never wrap)."""

    TOKEN = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+")

    def __init__(self):
        self.rows, self.row, self.col = [[]], 0, 0

    def feed(self, text):
        for m in self.TOKEN.finditer(text):
            token = m.group(0)
            if token == "\r":
                self.col = 0
            elif token == "\n":
                self.row += 1
                self.col = 0
                if self.row == len(self.rows):
                    self.rows.append([])
            elif token.startswith("\x1b["):
                params, op = token[2:-1], token[-1]
                if op == "K":  # erase: 2K the whole line, K (0K) from the cursor on
                    line = self.rows[self.row]
                    self.rows[self.row] = [] if params == "2" else line[:self.col]
                elif op == "A":
                    self.row = max(0, self.row - int(params or 1))
            else:
                line = self.rows[self.row]
                line[self.col:self.col + len(token)] = list(token)
                self.col += len(token)

    def lines(self):
        """The lines on the screen and in its scrollback, without the empty ones at the end."""
        out = ["".join(line) for line in self.rows]
        while out and not out[-1].strip():
            out.pop()
        return out

    def count(self):
        n = len(self.rows)
        while n and not "".join(self.rows[n - 1]).strip():
            n -= 1
        return n


def run_tty(command, env):
    """``command`` under a pseudo-terminal: (exit status, [(seconds, bytes)])."""
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    t0 = time.monotonic()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary,
                            env=env)
    os.close(secondary)
    chunks = []
    while True:
        ready, _, _ = select.select([primary], [], [], 1.0)
        if ready:
            try:
                data = os.read(primary, 65536)
            except OSError:  # EIO: every holder of the terminal's other side has closed it
                break
            if not data:
                break
            chunks.append((time.monotonic() - t0, data))
        elif proc.poll() is not None:
            break
    os.close(primary)
    return proc.wait(), chunks, time.monotonic() - t0


def run_pipe(command, env):
    """``command`` with stdout and stderr into one pipe: (exit status, [(seconds, line bytes)])."""
    t0 = time.monotonic()
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)
    chunks = [(time.monotonic() - t0, line) for line in iter(proc.stdout.readline, b"")]
    return proc.wait(), chunks, time.monotonic() - t0


def status_stretches(timed_segments):
    """Per job name, the longest seconds its status text stayed the same, from (seconds, text)
    segments holding ``[name] status (elapsed)`` lines."""
    last = {}  # name -> (status, since, last seen)
    longest = {}
    for t, text in timed_segments:
        m = JOB_LINE.match(text.strip())
        if not m:
            continue
        name, status = m.group(1), m.group(2)
        status0, since, _ = last.get(name, (None, t, t))
        if status != status0:
            since = t
        last[name] = (status, since, t)
        longest[name] = max(longest.get(name, 0.0), t - since)
    return {k: round(v, 1) for k, v in sorted(longest.items())}


def gaps(times):
    return round(max((b - a for a, b in zip(times, times[1:])), default=0.0), 1)


def analyse(mode, status, chunks, wall):
    """The JSON record of one mode (module docstring)."""
    text = b"".join(c for _, c in chunks).decode("utf-8", "replace")
    segments = []  # (seconds, one segment between carriage returns and newlines, escapes removed)
    for t, c in chunks:
        for seg in re.split(r"[\r\n]", ESCAPE.sub("", c.decode("utf-8", "replace"))):
            if seg.strip():
                segments.append((t, seg))
    record = {"exit_status": status, "wall_seconds": round(wall, 1), "newlines": text.count("\n"),
              "longest_gap_seconds": gaps([t for t, _ in chunks]),
              "longest_unchanged_status_seconds": status_stretches(segments)}
    if mode == "tty":
        # the time a line that stays appears: replay chunk by chunk; a line stays once the screen
        # holds more lines than ever before (the live lines below it are redrawn, not added)
        screen, seen, times = Screen(), 0, []
        for t, c in chunks:
            screen.feed(c.decode("utf-8", "replace"))
            n = screen.count() - 1  # the row under the cursor may still be redrawn
            if n > seen:
                times.append(t)
                seen = n
        record["lines"] = len(screen.lines())
        record["screen"] = screen.lines()
        record["longest_gap_between_lines_seconds"] = gaps(times)
    else:
        record["lines"] = record["newlines"]
        record["longest_gap_between_lines_seconds"] = record["longest_gap_seconds"]
    return record


def cpu_seconds(results):
    """{job benchmark file: cpu_time} under ``results`` and the sums per game directory."""
    jobs, per_game = {}, {}
    for tsv in sorted(Path(results).rglob("*.tsv")):
        with open(tsv) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        if not rows or "cpu_time" not in rows[0]:
            continue
        cpu = float(rows[-1]["cpu_time"])
        jobs[str(tsv.relative_to(results))] = round(cpu, 1)
        game = tsv.relative_to(results).parts[0]
        per_game[game] = round(per_game.get(game, 0.0) + cpu, 1)
    return {"jobs": jobs, "per_game": per_game}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--modes", default="tty,pipe")
    ap.add_argument("--results", default="/tmp/quiet_run",
                    help="results directory of each run (removed first; the last run's is kept)")
    ap.add_argument("--keep", default="bench/out/terminal", help="where the raw outputs go")
    ap.add_argument("extra", nargs="*", help="more snakemake arguments (after --)")
    args = ap.parse_args(argv)
    snakemake = Path(sys.executable).with_name("snakemake")
    keep = Path(args.keep)
    keep.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, COLUMNS=str(COLUMNS), LINES=str(ROWS))
    env.pop("STRONGSOLVE_PROGRESS_DIR", None)
    env.pop("STRONGSOLVE_PROGRESS_FILE", None)
    out = {"command": [str(snakemake), "--cores", str(args.cores), "--config",
                       f"results={args.results}", *args.extra], "modes": {}}
    for mode in args.modes.split(","):
        shutil.rmtree(args.results, ignore_errors=True)
        load = os.getloadavg()
        status, chunks, wall = (run_tty if mode == "tty" else run_pipe)(out["command"], env)
        record = analyse(mode, status, chunks, wall)
        record["load_average_before_after"] = [round(load[0], 2), round(os.getloadavg()[0], 2)]
        record["cpu_seconds"] = cpu_seconds(args.results)
        with open(keep / f"{mode}.out", "wb") as f:
            for t, c in chunks:
                f.write(f"{t:9.3f} ".encode() + c + (b"" if c.endswith(b"\n") else b"\n"))
        (keep / f"{mode}.screen.txt").write_text("\n".join(record.pop("screen", [])) + "\n")
        out["modes"][mode] = record
        (keep / f"{mode}.json").write_text(json.dumps(record, indent=1) + "\n")  # each as it ends
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
