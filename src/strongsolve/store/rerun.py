"""The command that reruns a 2048 run with the configuration it was made with (issue 16).

Repair hints (a corrupt or missing layer, a missing block manifest or solution.json) end with a
command the user can run as printed. It must rebuild *this* run: a hint that says only
``snakemake --cores all`` rebuilds the default config.yaml run, not a preset's. So:

- ``workflow/rules/common.smk`` builds, from how Snakemake was invoked (:func:`snakemake_command`:
  its ``--configfile`` files, ``--config`` values and ``--profile``), the command that reruns the
  same configuration, and exports it to the jobs as :data:`RERUN_VARIABLE`.
- the report stage records it in ``solution.json`` (key ``"rerun"``), for the commands that read a
  finished run (query, play, inspect) outside Snakemake.
- when neither is there (a forward-only run, a deleted solution.json, a run made by
  ``strongsolve 2048 solve``), :func:`inferred_command` rebuilds one from the run's own files: a
  Snakemake command setting the run's parameters with ``--config`` when the run directory has
  Snakemake's job logs, else the ``strongsolve 2048 solve`` command.

Commands name paths relative to the directory Snakemake ran in (the workflow directory) and are
meant to be run there.
"""

import json
import os
import re
import shlex
from pathlib import Path

RERUN_VARIABLE = "STRONGSOLVE_RERUN"
"""Environment variable holding the base rerun command (set by the workflow for its jobs)."""

SNAKEMAKE_LOGS = ("forward_*.log", "backward_*.log", "solve_*.log", "report.log")
"""Log files the workflow's 2048 rules write under ``<run>/logs/``: their presence marks a
Snakemake run."""


def _shown_path(path, cwd):
    """``path`` relative to ``cwd`` when it lies below it (shorter, and valid in a copy of the
    workflow directory), else absolute."""
    path = Path(path).absolute()
    try:
        return str(path.relative_to(Path(cwd).absolute()))
    except ValueError:
        return str(path)


def profile_argument(argv):
    """The value of ``--profile`` in a Snakemake command line (a list of words), or None."""
    for i, word in enumerate(argv):
        if word == "--profile" and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith("--profile="):
            return word.split("=", 1)[1]
    return None


def snakemake_command(configfiles=(), config_args=(), profile=None, cwd="."):
    """The Snakemake command that runs the workflow with the same configuration.

    Parameters
    ----------
    configfiles : sequence of str or Path
        The ``--configfile`` files of the invocation, in order (Snakemake keeps them as absolute
        paths: ``workflow.config_settings.configfiles``).
    config_args : sequence of str
        The ``--config`` entries as typed, ``KEY=VALUE`` (``workflow.config_settings.config_args``).
    profile : str, optional
        The ``--profile`` of the invocation (the workflow's own profiles/default is read anyway).
    cwd : str or Path
        The directory Snakemake runs in; configfiles below it are given relative to it.

    Returns
    -------
    str
        ``snakemake --cores all [--profile P] [--configfile F ...] [--config K=V ...]``, each word
        quoted for a POSIX shell. ``--config`` comes last, so ``--forcerun ...`` can be appended.
    """
    words = ["snakemake", "--cores", "all"]
    if profile:
        words += ["--profile", profile]
    if configfiles:  # one flag for all: a repeated --configfile would keep only its last files
        words += ["--configfile", *(_shown_path(f, cwd) for f in configfiles)]
    if config_args:
        words += ["--config", *config_args]
    return shlex.join(words)


def is_snakemake_command(command):
    """True when ``command`` runs Snakemake (so ``--forcerun`` applies)."""
    words = shlex.split(command)
    return bool(words) and Path(words[0]).name == "snakemake"


def recorded_command(run_dir):
    """The ``"rerun"`` command recorded in ``<run_dir>/solution.json``, or None (no file, unreadable,
    or written before the key existed)."""
    try:
        command = json.loads((Path(run_dir) / "solution.json").read_text()).get("rerun")
    except (OSError, ValueError, AttributeError):
        return None
    return command if isinstance(command, str) and command else None


def _manifests(run_dir, stage):
    """``[(first, last, path)]`` of a stage's block manifests, by first age."""
    out = []
    for path in sorted((Path(run_dir) / stage).glob("block_*-*.json")):
        m = re.fullmatch(r"block_(\d+)-(\d+)\.json", path.name)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), path))
    return out


def _run_params(run_dir):
    """Rows, cols, p2 and target tile of a run, from any of its block manifests or layer attributes
    (plain JSON files, read without verifying: only to name a command), or None."""
    run_dir = Path(run_dir)
    sources = [p for stage in ("afterstates", "values") for *_, p in _manifests(run_dir, stage)]
    sources += sorted(run_dir.glob("*/age_*.zarr/zarr.json"))
    for source in sources:
        try:
            doc = json.loads(source.read_text())
        except (OSError, ValueError):
            continue
        doc = doc.get("attributes", doc) if isinstance(doc, dict) else {}
        if all(k in doc for k in ("rows", "cols", "p2", "target_tile")):
            return {k: doc[k] for k in ("rows", "cols", "p2", "target_tile")}
    return None


def inferred_command(run_dir, to_last_age=False):
    """A command that reruns the run in ``run_dir`` with the same parameters, from its own files.

    A Snakemake run (its job logs are in ``<run_dir>/logs``) gets ``snakemake --cores all --config
    ...`` with the run's results directory (relative to the current directory when below it),
    board, spawn probabilities, objective, ages per job
    (the length of its first block) and, for a forward-only run, ``max_age`` (the last age of its
    forward blocks; not with ``to_last_age``, which asks for the command that solves the run to the
    end); only the 2048 game is selected. Any other run gets ``strongsolve 2048 solve`` with the
    run's parameters (``--max-age`` for a forward-only run).

    Returns
    -------
    str or None
        None when the directory holds no manifest or layer to read the parameters from.
    """
    from ..games.g2048.shape import last_age  # lazy: the store does not need the game to load

    run_dir = Path(run_dir)
    params = _run_params(run_dir)
    if params is None:
        return None
    rows, cols, p2 = int(params["rows"]), int(params["cols"]), float(params["p2"])
    target = int(params["target_tile"] or 0)
    forward, values = _manifests(run_dir, "afterstates"), _manifests(run_dir, "values")
    solved = (run_dir / "solution.json").exists() or values or any((run_dir / "values").glob("age_*.zarr"))
    max_age = None
    if not (solved or to_last_age) and forward and forward[-1][1] < last_age(rows, cols, target, p2):
        max_age = forward[-1][1]
    logs = run_dir / "logs"
    if not any(any(logs.glob(pattern)) for pattern in SNAKEMAKE_LOGS):
        words = ["strongsolve", "2048", "solve", str(run_dir), "--rows", str(rows), "--cols", str(cols),
                 "--p2", repr(p2), "--target-tile", str(target)]
        return shlex.join(words + (["--max-age", str(max_age)] if max_age else []))
    blocks = forward or values
    per_job = (blocks[0][1] - blocks[0][0]) // 2 + 1 if blocks else None
    g2048 = (f"{{rows: {rows}, cols: {cols}, spawn: {{p2: {p2!r}, p4: {1.0 - p2!r}}}, "
             + (f"objective: reach_tile, target_tile: {target}" if target else "objective: score")
             + (f", ages_per_job: {per_job}" if per_job else "") + "}")
    # named as rerun_command names the files it forces, so that both name the same outputs
    results = _shown_path(run_dir.parent, os.getcwd())
    config = [f"results={results}", "preset=", "games=[g2048]", f"g2048={g2048}",
              f"max_age={max_age if max_age else 'null'}"]
    return snakemake_command(config_args=config)


def base_command(run_dir=None):
    """The command that reruns the run: :data:`RERUN_VARIABLE` inside the workflow, else the one
    recorded in ``run_dir``'s solution.json, else :func:`inferred_command`; None if none is known."""
    command = os.environ.get(RERUN_VARIABLE)
    if not command and run_dir is not None:
        command = recorded_command(run_dir) or inferred_command(run_dir)
    return command or None


POLICY_TARGET = "g2048_policy_all"
"""The workflow target that builds a 2048 run's optimal-play store (not a default target)."""


def policy_command(run_dir, *forcerun):
    """The command that builds the optimal-play store ``<run_dir>/policy/`` of a 2048 run (issue 18)
    from its solved layers.

    Parameters
    ----------
    run_dir : str or Path
    *forcerun : str or Path
        Policy block manifests to force (their layers are to be rebuilt; a finished block is
        otherwise up to date for Snakemake).

    Returns
    -------
    str
        For a Snakemake run (:func:`base_command`): its rerun command with the target
        :data:`POLICY_TARGET`, and ``--forcerun`` the manifests. Otherwise ``strongsolve 2048
        policy`` with the run's parameters (it writes every age that is missing); ``ROWS`` and
        ``COLS`` stand in for the board when no file of the run names it.
    """
    command = base_command(run_dir)
    if command and is_snakemake_command(command):
        words = shlex.split(command)
        command = shlex.join(words[:1] + [POLICY_TARGET] + words[1:])
        return command + (" --forcerun " + shlex.join(map(str, forcerun)) if forcerun else "")
    params = _run_params(run_dir)
    words = ["strongsolve", "2048", "policy", str(run_dir)]
    if params is None:
        return shlex.join(words) + " --rows ROWS --cols COLS"
    return shlex.join(words + ["--rows", str(int(params["rows"])), "--cols",
                               str(int(params["cols"])), "--p2", repr(float(params["p2"])),
                               "--target-tile", str(int(params["target_tile"] or 0))])


def rerun_command(*forcerun, run_dir=None):
    """The command that reruns the run, forcing the jobs that write ``forcerun``.

    Parameters
    ----------
    *forcerun : str or Path
        Snakemake rules (str) or output files (Path: a block manifest, ``solution.json``) to force;
        ignored for a run that is not a Snakemake run (``strongsolve 2048 solve`` recomputes
        whatever is missing). A file is named relative to the current directory when it lies below
        it, as the workflow's outputs are named (relative to the workflow directory, where the
        command is meant to run); Snakemake matches no other spelling.
    run_dir : str or Path, optional
        The run directory, for the fallbacks of :func:`base_command`.

    Returns
    -------
    str
        A shell command; ``snakemake --cores all`` with the forced targets when nothing is known
        about the run.
    """
    command = base_command(run_dir) or "snakemake --cores all"
    if forcerun and is_snakemake_command(command):
        named = (_shown_path(t, os.getcwd()) if isinstance(t, Path) else str(t) for t in forcerun)
        command += " --forcerun " + shlex.join(named)
    return command
