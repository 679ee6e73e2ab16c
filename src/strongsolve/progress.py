"""Progress of long work, for a person and for the log.

Two kinds of output:

- **Detail lines** (one per 2048 age, one per Ludo sweep): :class:`Progress` writes them, in
  batches, to a stage's ``log``. The stage commands that Snakemake runs give it their stdout, which
  workflow/scripts/logged.sh writes to the job's log file only.
- **A status line** (stage, age, states, rate, ETA; iteration and NashConv of a CFR solve): a
  :class:`Task` hands it to the process's :class:`Reporter`, which shows it in one of three ways:

  - ``file``: under the workflow's terminal display (:class:`JobDisplay`), the job's status file
    (``STRONGSOLVE_PROGRESS_FILE``, set by logged.sh), rewritten at most every
    :data:`LIVE_INTERVAL` seconds; the display draws one live line per running job from these files.
  - ``live``: a command run by hand with stderr on a terminal and stdout elsewhere: one line
    redrawn in place on stderr (rich).
  - ``plain``: anything else (a pipe, CI, a log): a line on stderr at most every
    :data:`PLAIN_INTERVAL` seconds, the first one that long after the start, so short jobs print
    none and long ones are never silent for longer.

Written one at a time, the detail lines cost: each is a system call after which the printing thread
must win the GIL back from the stage's helper threads (1.8 ms of wall time per line in the 3x3 solve
job, 2,042 lines, 3.6 s, under load), hence the batches of :class:`Progress`.
"""

import atexit
import os
import select
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

INTERVAL = 0.25
"""Seconds between two writes of :class:`Progress` (the log's largest lag)."""

LIVE_INTERVAL = 0.5
"""Seconds between two rewrites of a live status line (file or terminal)."""

PLAIN_INTERVAL = 15.0
"""Seconds between two plain status lines of one process (a pipe, CI): at most 4 a minute."""

STATUS_FILE_VARIABLE = "STRONGSOLVE_PROGRESS_FILE"
"""Environment variable naming a job's status file (set by workflow/scripts/logged.sh)."""

DISPLAY_DIR_VARIABLE = "STRONGSOLVE_PROGRESS_DIR"
"""Environment variable naming the directory of the status files that a :class:`JobDisplay` reads
(set by the display, read by logged.sh)."""


class Progress:
    """Lines for ``log`` (a text stream), written in batches.

    Use as a context manager: leaving it writes what is left, also when the stage fails.

    Parameters
    ----------
    log : text stream
        Where the lines go (a stage's ``log``, sys.stderr by default).
    interval : float
        Seconds: a line is written at the latest with the first line added this long after the
        previous write, or when the context ends.
    """

    def __init__(self, log=sys.stderr, interval=INTERVAL):
        self.log = log
        self.interval = interval
        self._lines = []
        self._last = time.monotonic()

    def line(self, text):
        """Add one line (without its newline)."""
        self._lines.append(text)
        if time.monotonic() - self._last >= self.interval:
            self.flush()

    def flush(self):
        """Write the lines gathered so far in one call, and flush ``log``."""
        if self._lines:
            self.log.write("\n".join(self._lines) + "\n")
            self._lines = []
        self.log.flush()
        self._last = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.flush()


def format_seconds(seconds):
    """``"42 s"``, ``"3 min 05 s"`` or ``"2 h 07 min"`` (whole seconds, for a person)."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _alive(pid):
    """Whether process ``pid`` (text) exists; True for a name that is no process id."""
    try:
        os.kill(int(pid), 0)
    except ValueError:
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or fake stream
        return False


class Reporter:
    """Where one process's status lines go (module docstring: ``file``, ``live`` or ``plain``).

    Parameters
    ----------
    stream : text stream, optional
        The terminal or pipe (sys.stderr by default, looked up when first used).
    status_file : path, optional
        ``file`` mode: the job's status file, rewritten atomically (temp name, then rename).
    live : bool, optional
        ``live`` mode (one line redrawn in place) when no status file; default: ``stream`` is a
        terminal and stdout is not (a stage's detail lines on stdout would cut through the line).
    interval : float, optional
        Least seconds between two lines shown (:data:`LIVE_INTERVAL` in the ``file`` and ``live``
        modes, :data:`PLAIN_INTERVAL` in ``plain``). In ``plain`` mode the first line waits that
        long after the reporter's start too.
    clock : callable
        Seconds, monotonic (tests pass a fake clock).
    """

    def __init__(self, stream=None, status_file=None, live=None, interval=None, clock=time.monotonic):
        self._stream = stream
        self.status_file = Path(status_file) if status_file else None
        if self.status_file is not None:
            self.mode = "file"
        else:
            if live is None:  # detail lines on the same terminal would break a live line
                live = _isatty(self.stream) and not _isatty(sys.stdout)
            self.mode = "live" if live else "plain"
        self.interval = interval if interval is not None else (
            PLAIN_INTERVAL if self.mode == "plain" else LIVE_INTERVAL)
        self.clock = clock
        self._last = clock() if self.mode == "plain" else -float("inf")
        self._pending = None
        self._owner = os.getpid()  # a forked worker shows plain lines (the live line is its parent's)
        self._live = None

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    def show(self, text):
        """Show ``text`` as the current status, unless a line went out less than ``interval``
        seconds ago (then it is kept and shown by :meth:`flush` or a later call). Returns whether
        it was shown."""
        now = self.clock()
        interval = self.interval
        if self.mode == "live" and os.getpid() != self._owner:  # a worker's lines are plain
            interval = max(interval, PLAIN_INTERVAL)
        if now - self._last < interval:
            self._pending = text
            return False
        self._pending = None
        self._last = now
        self._write(text)
        return True

    def flush(self):
        """Show the status kept back by :meth:`show` in ``file`` and ``live`` modes (``plain`` mode
        drops it: its lines are sparse on purpose)."""
        if self._pending is not None and self.mode != "plain":
            self._write(self._pending)
            self._last = self.clock()
        self._pending = None

    def note(self, text):
        """A line that always goes out at once on ``stream`` (a stage's start or result), above the
        live line in ``live`` mode."""
        if self._live is not None and os.getpid() == self._owner:
            self._live.console.print(text, markup=False, highlight=False, soft_wrap=True)
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self):
        """End the live line (``live`` mode) or empty the status file (``file`` mode)."""
        self._pending = None
        if self._live is not None and os.getpid() == self._owner:
            self._live.stop()
            self._live = None
        elif self.mode == "file" and os.getpid() == self._owner:
            self._write("")

    def _write(self, text):
        if self.mode == "file":
            self._write_file(text)
        elif self.mode == "live" and os.getpid() == self._owner:
            self._write_live(text)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def _write_file(self, text):
        path = self.status_file
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(text + "\n")
            os.replace(tmp, path)
        except OSError:  # the display is gone (its directory removed): the status is not worth a failure
            pass

    def _write_live(self, text):
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        line = Text(text, no_wrap=True, overflow="ellipsis")
        if self._live is None:
            console = Console(file=self.stream, highlight=False)
            self._live = Live(line, console=console, auto_refresh=False, transient=True)
            self._live.start()
            console.show_cursor(True)  # a killed process must not leave the terminal without one
            atexit.register(self.close)
        self._live.update(line, refresh=True)


_REPORTER = None


def reporter():
    """The process's :class:`Reporter`: ``file`` mode when ``STRONGSOLVE_PROGRESS_FILE`` is set
    (a workflow job under the terminal display), else ``live`` on a terminal, else ``plain``."""
    global _REPORTER
    if _REPORTER is None:
        _REPORTER = Reporter(status_file=os.environ.get(STATUS_FILE_VARIABLE) or None)
    return _REPORTER


class Task:
    """A named piece of work whose status goes to a :class:`Reporter`, with its rate and ETA.

    Use as a context manager (leaving it shows the last status kept back and ends a live line).

    Parameters
    ----------
    name : str
        What is running, first on the line (e.g. ``"2048 forward"``).
    total : int, optional
        Units of the whole work (e.g. ages of the block), for the rate and the ETA.
    unit : str
        The units' name (``"ages"``).
    report : Reporter, optional
        Default: :func:`reporter`.
    clock : callable
        Seconds, monotonic (the reporter's clock by default).
    """

    def __init__(self, name, total=None, unit="", report=None, clock=None):
        self.name = name
        self.total = total
        self.unit = unit
        self.report = report if report is not None else reporter()
        self.clock = clock if clock is not None else self.report.clock
        self.start = self.clock()

    def line(self, text, done=None):
        """The status line: ``name: text`` and, with ``done`` units of ``total``, the count, the
        rate and the time left at that rate."""
        out = f"{self.name}: {text}" if text else self.name
        if done is None:
            return out
        elapsed = self.clock() - self.start
        count = f"{done:,}/{self.total:,} {self.unit}" if self.total else f"{done:,} {self.unit}"
        extra = [count.strip()]
        if elapsed > 0 and done > 0:
            rate = done / elapsed
            extra.append(f"{rate:,.1f} {self.unit}/s" if rate < 100 else f"{rate:,.0f} {self.unit}/s")
            if self.total:
                extra.append(f"ETA {format_seconds((self.total - done) / rate)}")
        return f"{out} ({', '.join(extra)})"

    def update(self, text, done=None):
        """Show the status (throttled by the reporter); returns whether it was shown."""
        return self.report.show(self.line(text, done))

    def note(self, text):
        """A line shown at once (the reporter's :meth:`Reporter.note`)."""
        self.report.note(text)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.report.flush()
        if self.report.mode == "live":
            self.report.close()


def remove_stale_displays(parent):
    """Remove the directories ``parent/<pid>`` of displays whose process is gone (a killed run)."""
    for old in Path(parent).glob("*"):
        if old.is_dir() and old.name.isdigit() and not _alive(old.name):
            shutil.rmtree(old, ignore_errors=True)


def terminal_record(record):
    """Whether a record of Snakemake's logger goes to the terminal under the live display
    (a ``logging`` filter): not the job blocks (``rule x:``, its input, output, log, wildcards...;
    each job prints one line naming its log instead, workflow/scripts/logged.sh), nor the
    scheduler's ``Select jobs to execute...`` and ``Execute N jobs...``. Errors, finished jobs and
    the step counts stay. Records are told apart by their ``event`` (Snakemake's logger plugin
    interface, ``LogEvent``) and message."""
    event = str(getattr(record, "event", "") or "")
    if event in ("job_info", "job_started"):
        return False
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 (a record this filter cannot read goes through)
        return True
    return message != "Select jobs to execute..."


class JobDisplay:
    """What a workflow run shows of its running jobs: on a terminal one live line per job (rich),
    elsewhere a plain line per job at most every :data:`PLAIN_INTERVAL` seconds.

    Started in the main Snakemake process (workflow/rules/common.smk). Each job run through
    workflow/scripts/logged.sh registers in ``directory`` (``<pid>.job``: its name) and its
    :class:`Reporter` writes its status to ``<pid>.status``; a job's line is
    ``[name] status (elapsed)``.

    - ``live``: file descriptors 1 and 2 become a pipe that one thread reads: Snakemake's lines and
      the jobs' stderr lines (the jobs inherit the pipe) are printed as they come, above the live
      lines, which are redrawn every :data:`LIVE_INTERVAL` seconds.
    - plain: a thread writes, for every job running for :data:`PLAIN_INTERVAL` seconds or more, its
      line once per that interval to descriptor 2, so a long job is never silent for longer, even
      in a stretch its status does not cover (imports, a kernel between two reports).

    Parameters
    ----------
    directory : path
        Where the jobs' status files go (made here, removed by :meth:`stop`).
    live : bool
        The live lines (the terminal) or the plain ones.
    interval : float
        Plain mode: seconds between two lines of one job.
    """

    def __init__(self, directory, live, interval=PLAIN_INTERVAL):
        self.directory = Path(directory)
        self.live_mode = live
        self.interval = interval
        self._thread = None
        self._saved = None
        self._stopping = threading.Event()

    def start(self):
        """Register the directory for the jobs (``STRONGSOLVE_PROGRESS_DIR``) and start the display's
        thread; in ``live`` mode take over the terminal (descriptors 1 and 2) first."""
        self.directory.mkdir(parents=True, exist_ok=True)
        os.environ[DISPLAY_DIR_VARIABLE] = str(self.directory)
        if self.live_mode:
            self._start_live()
            target, args = self._run_live, (self._read_end,)
        else:
            target, args = self._run_plain, ()
        self._thread = threading.Thread(target=target, args=args, daemon=True,
                                        name="strongsolve-display")
        self._thread.start()
        atexit.register(self.stop)
        return self

    def _start_live(self):
        from rich.console import Console
        from rich.live import Live

        sys.stdout.flush()
        sys.stderr.flush()
        self._saved = os.dup(2)
        self._read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        os.close(write_end)
        terminal = os.fdopen(self._saved, "w", encoding="utf-8", errors="replace", closefd=False)
        self.console = Console(file=terminal, force_terminal=True, highlight=False)
        self.live = Live(console=self.console, auto_refresh=False, transient=True)
        self.live.start()
        self.console.show_cursor(True)  # a kill -9 must not leave the terminal without a cursor

    def stop(self, timeout=5.0):
        """Give the terminal back (in ``live`` mode what was written so far is shown, the live lines
        removed), stop the thread, remove the directory. Safe to call more than once."""
        if self._thread is None:
            return
        self._stopping.set()
        if self.live_mode:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(self._saved, 1)  # closes this process's write ends of the pipe: the thread sees EOF
            os.dup2(self._saved, 2)
        self._thread.join(timeout)
        self._thread = None
        if self.live_mode:
            self.live.stop()
            self.console.file.flush()
            os.close(self._saved)
        os.environ.pop(DISPLAY_DIR_VARIABLE, None)
        shutil.rmtree(self.directory, ignore_errors=True)

    def jobs(self, now=None):
        """The running jobs, oldest first: list of (pid, name, status, seconds running)."""
        now = time.time() if now is None else now
        rows = []
        for job in self.directory.glob("*.job"):
            try:
                name = job.read_text().strip()
                started = job.stat().st_mtime
            except OSError:  # the job just ended
                continue
            if not _alive(job.stem):  # killed before it could remove its files
                job.unlink(missing_ok=True)
                job.with_suffix(".status").unlink(missing_ok=True)
                continue
            try:
                status = job.with_suffix(".status").read_text().strip()
            except OSError:
                status = ""
            rows.append((started, job.stem, name, status or "running", now - started))
        return [row[1:] for row in sorted(rows)]

    @staticmethod
    def job_line(name, status, seconds):
        """``[name] status (elapsed)``."""
        return f"[{name}] {status} ({format_seconds(seconds)})"

    def _run_plain(self):
        shown = {}  # pid -> seconds running at its last line
        while not self._stopping.wait(1.0):
            running = self.jobs()
            for pid, name, status, seconds in running:
                if seconds >= shown.get(pid, 0.0) + self.interval:
                    shown[pid] = seconds
                    os.write(2, (self.job_line(name, status, seconds) + "\n").encode("utf-8", "replace"))
            for pid in set(shown) - {row[0] for row in running}:
                del shown[pid]

    def _redraw(self):
        from rich.console import Group
        from rich.text import Text

        self.live.update(Group(*(Text(self.job_line(*row[1:]), no_wrap=True, overflow="ellipsis")
                                 for row in self.jobs())), refresh=True)

    def _print(self, line):
        from rich.text import Text

        self.console.print(Text.from_ansi(line.decode("utf-8", "replace")), soft_wrap=True)

    def _run_live(self, fd):
        # every byte of the pipe must be read, whatever happens: a full pipe would stop Snakemake
        # and its jobs. If drawing fails, the rest is copied to the terminal as it comes.
        pending = b""
        last = 0.0
        broken = False
        while True:
            ready, _, _ = select.select([fd], [], [], LIVE_INTERVAL)
            chunk = os.read(fd, 65536) if ready else b""
            if ready and not chunk:
                break
            if broken:
                os.write(self._saved, chunk)
                continue
            try:
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._print(line)
                # a job that just ended leaves its line at once: its Snakemake lines come now
                if time.monotonic() - last >= (0.1 if ready else LIVE_INTERVAL):
                    last = time.monotonic()
                    self._redraw()
            except Exception as err:  # noqa: BLE001 (any failure of the drawing)
                broken = True
                os.write(self._saved, pending + f"\n(progress display stopped: {err!r})\n".encode())
                pending = b""
        if pending and not broken:
            self._print(pending)
        os.close(fd)
