# Shared helpers: validated config, stale-lock cleanup, run directory, age blocks.
import fcntl
import gc
import os
import shutil
import sys
import threading
from pathlib import Path

from strongsolve.config import ConfigError, apply_preset, validate

# Jobs run `strongsolve ...` and `python ...` of the environment running Snakemake (the project's
# .venv), even when that environment is not activated.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

try:
    config.update(validate(apply_preset(config, Path(workflow.basedir) / "workflow/presets"),
                           Path(workflow.basedir) / "workflow/schemas"))
except ConfigError as err:
    sys.exit(f"strongsolve: config error: {err}")

# The command that reruns this same configuration (its --configfile files, --config values and
# --profile), for the repair hints of the jobs and solution.json's "rerun": a hint that
# said only `snakemake --cores all` rebuilt the default run instead of a preset's. A job's own
# Snakemake (cluster executors) keeps the main process's value.
from strongsolve.rerun import RERUN_VARIABLE, profile_argument, snakemake_command

if workflow.is_main_process or RERUN_VARIABLE not in os.environ:
    os.environ[RERUN_VARIABLE] = snakemake_command(
        workflow.config_settings.configfiles, workflow.config_settings.config_args or (),
        profile_argument(sys.argv), cwd=os.getcwd())

# after the validation, so that a bad config is refused before numba loads
from strongsolve.games.g2048.saved import ForeignRunError, Run, blocks, check_run_directory, run_name


def hold_run_lock(snakemake_dir=Path(".snakemake")):
    """Remove Snakemake's lock files if no other run of this workflow is alive in this directory.

    Snakemake's locks (.snakemake/locks) outlive a kill -9 or a power loss and then block every rerun
    until `snakemake --unlock`. Each main Snakemake process here holds an OS lock (flock) on
    .snakemake/strongsolve.flock until it exits: the kernel drops it when the process dies, however it
    dies. If we get it, no other run is alive, so any leftover lock file is stale. If another run holds
    it, Snakemake's own locks stay and refuse overlapping runs as usual. Returns the open lock file
    (kept for the life of the process) or None.
    """
    if not workflow.is_main_process:
        return None  # a job's own Snakemake (cluster executors): the main process holds the lock
    snakemake_dir.mkdir(exist_ok=True)
    handle = open(snakemake_dir / "strongsolve.flock", "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another run holds it (or the file system has no locks): leave the locks alone
        handle.close()
        print("strongsolve: another Snakemake run seems active in this directory; its locks are kept",
              file=sys.stderr)
        return None
    shutil.rmtree(snakemake_dir / "locks", ignore_errors=True)
    return handle


RUN_LOCK = hold_run_lock()

RESULTS = config["results"]
G = config["g2048"]
G2048_RUN = Run(
    Path(RESULTS) / run_name(G["rows"], G["cols"], G["spawn"]["p2"],
                             G["target_tile"] if G["objective"] == "reach_tile" else 0),
    G["rows"], G["cols"], G["spawn"]["p2"],
    G["target_tile"] if G["objective"] == "reach_tile" else 0,
)
try:  # here, not in a job: Snakemake removes a rerun job's outputs before running it
    check_run_directory(G2048_RUN)
except ForeignRunError as err:
    sys.exit(f"strongsolve: error: {err}")
G2048_DIR = str(G2048_RUN.directory)
MAX_AGE = config["max_age"]
G2048_SOLVED = MAX_AGE is None or MAX_AGE >= G2048_RUN.last_age
G2048_BLOCKS = blocks(G2048_RUN.ages(None if G2048_SOLVED else MAX_AGE), G["ages_per_job"])


def block_of(age):
    """The (first, last) block holding ``age``, or None outside the solved ages."""
    for b in G2048_BLOCKS:
        if b[0] <= age <= b[-1]:
            return b
    return None


def block_name(b):
    return f"{b[0]:06d}-{b[-1]:06d}"


def forward_inputs(wildcards):
    """Manifests of the blocks holding ages first - 2 and first - 4 (the spawns' sources)."""
    first = int(wildcards.first)
    needed = {block_name(b) for b in map(block_of, (first - 2, first - 4)) if b and b[0] < first}
    return [f"{G2048_DIR}/afterstates/block_{n}.json" for n in sorted(needed)]


def policy_inputs(wildcards):
    """This block's manifests (its afterstates and values) and those of the blocks holding ages
    first - 2 and first - 4 (the states of an age are spawns into them)."""
    return [f"{G2048_DIR}/{stage}/block_{wildcards.first}-{wildcards.last}.json"
            for stage in ("afterstates", "values")] + forward_inputs(wildcards)


def backward_inputs(wildcards):
    """This block's forward manifest, and the manifests of the blocks holding ages last + 2 and last + 4
    (forward and values: the three-layer window)."""
    last = int(wildcards.last)
    out = [f"{G2048_DIR}/afterstates/block_{wildcards.first}-{wildcards.last}.json"]
    for b in {tuple(b) for b in map(block_of, (last + 2, last + 4)) if b and b[0] > last}:
        out += [f"{G2048_DIR}/afterstates/block_{block_name(b)}.json",
                f"{G2048_DIR}/values/block_{block_name(b)}.json"]
    return sorted(set(out))


# relative to the working directory (the clone), so that a moved or copied run keeps the same shell
# commands (an absolute path would change them, and Snakemake reruns jobs whose code changed)
JOB_SCRIPT = os.path.relpath(Path(workflow.basedir) / "workflow" / "scripts" / "logged.sh")


def logged(command):
    """The shell line of a job running ``command`` through workflow/scripts/logged.sh: its output
    written to the job's log and to the log of every attempt, its stderr (progress lines, errors)
    shown on the terminal too, as it comes.

    Snakemake deletes a job's log (``log:``, e.g. ``logs/forward_000004-000098.log``) before it runs
    the job, so that log holds the last attempt; ``logs/forward_000004-000098.attempts.log`` keeps
    every attempt (a killed one too), appended after a header line ``=== attempt <UTC time> ===``.
    Terminal lines are tagged with the log's name (``[forward_000004-000098] ...``). The job fails
    with the command's exit status. ``command`` starts with a program (``env VAR=value program``
    to set variables).
    """
    return f'bash "{JOB_SCRIPT}" {{log}} {command}'


# Environment variables the jobs read, asserted by the Snakefile's `envvars:` and passed on to remote
# jobs: PATH (above: the project's environment first) and STRONGSOLVE_RERUN (the repair command that
# fault messages print, set by common.smk; listed once it is set).
JOB_ENVVARS = [name for name in ("PATH", "STRONGSOLVE_RERUN") if name in os.environ]


DISPLAY = None


def start_display():
    """Start the display of the running jobs (:class:`strongsolve.progress.JobDisplay`) in this
    main Snakemake process: on a terminal one live line per running job under Snakemake's own lines
    (:func:`quiet_job_blocks`) and the jobs' tagged stderr lines; elsewhere (a pipe, CI) a plain
    line per job at most every 15 s, so that a long job is never silent for longer. Jobs of a
    cluster executor print their own plain lines to their logs: no display then."""
    global DISPLAY
    if DISPLAY is None and workflow.is_main_process and workflow.local_exec:
        from strongsolve.progress import JobDisplay, remove_stale_displays

        # .snakemake/progress/<pid>: the status files of this run (what a killed run left, removed)
        remove_stale_displays(Path(".snakemake") / "progress")
        live = sys.stdout.isatty() and sys.stderr.isatty()
        DISPLAY = JobDisplay(Path(".snakemake") / "progress" / str(os.getpid()), live=live).start()
        if live:
            quiet_job_blocks()


def quiet_job_blocks():
    """On the terminal, Snakemake's rule block of each job (10 lines) and its scheduler's
    "Select jobs..." lines give way to the job's own start line (workflow/scripts/logged.sh):
    a filter (:func:`strongsolve.progress.terminal_record`) on the stream handlers of Snakemake's
    logger, not on its log file. Errors, finished jobs and step counts stay."""
    import logging

    from strongsolve.progress import terminal_record

    for handler in logging.getLogger("snakemake.logging").handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.addFilter(terminal_record)


def stop_display():
    """Give the terminal back (what the display holds is shown first)."""
    global DISPLAY
    if DISPLAY is not None:
        DISPLAY.stop()
        DISPLAY = None


def exit_promptly():
    """Let the Snakemake process exit as soon as the run ends.

    - Cancel the timers Snakemake's scheduler leaves pending. With its default
      ``--max-jobs-per-timespan`` (100/1s) the job scheduler arms a 1 s ``threading.Timer`` after
      each round, to look for jobs again; a Timer is no daemon thread, so Python waited for the last
      one before the process exited, and every run ended about a second after its last job (1.15 s
      of the 1.9 s of a one-rule Snakefile, Snakemake 9.27).
    - Freeze the garbage collector's objects (``gc.freeze()``), as the ``strongsolve`` program does
      (:func:`strongsolve.cli.run`): Python's last collections over Snakemake's and the Snakefile's
      modules took 0.26-0.32 s after Snakemake's "Elapsed time" line, against 0.03 s frozen.
    - Stop the terminal's progress display (:func:`stop_display`), so that Snakemake's last lines
      reach the terminal after everything before them.

    The Snakefile's ``onsuccess`` and ``onerror`` handlers call this once the scheduler is done.
    """
    stop_display()
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
    gc.freeze()
