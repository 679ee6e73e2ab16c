"""Repair commands of a 2048 run's files: the command that rebuilds a damaged or missing layer,
block manifest, ``solution.json`` or ``summary.csv`` with the configuration the run was made with.

Repair hints end with a command the user can run as printed. It must rebuild *this* run, so:

- inside the workflow, the jobs hold the command that reruns its configuration
  (:data:`strongsolve.rerun.RERUN_VARIABLE`, set by ``workflow/rules/common.smk``);
- the report stage records it in ``solution.json`` (key ``"rerun"``), for the commands that read a
  finished run (query, play, inspect) outside Snakemake;
- when neither is there (a forward-only run, a deleted solution.json, a run made by
  ``strongsolve 2048 solve``), :func:`inferred_command` rebuilds one from the run's own files: a
  Snakemake command setting the run's parameters with ``--config`` when the run directory has
  Snakemake's job logs, else the ``strongsolve 2048 solve`` command.

A finished run's outputs are up to date for Snakemake, so a command forces the job that writes the
damaged file: a layer's block manifest ``<dir>/block_<first>-<last>.json`` (the job's declared
output), else the stage's rule (:data:`STAGE_RULES`). The store calls these through the ``hint``
callables the game passes in (:func:`repair_command`, :func:`file_hint`). Commands name paths
relative to the directory Snakemake ran in (the workflow directory) and are meant to be run there.
"""

import json
import os
import re
import shlex
from pathlib import Path

from ...rerun import RERUN_VARIABLE, forced, is_snakemake_command, shown_path, snakemake_command
from ...store.layers import block_manifest
from .rules.shape import last_age

SNAKEMAKE_LOGS = ("forward_*.log", "backward_*.log", "solve_*.log", "report.log")
"""Log files the workflow's 2048 rules write under ``<run>/logs/``: their presence marks a
Snakemake run."""


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
    results = shown_path(run_dir.parent, os.getcwd())
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
    """The command that builds the optimal-play store ``<run_dir>/policy/`` of a 2048 run
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
        Snakemake rules (str) or output files (Path: a block manifest, ``solution.json``) to force
        (:func:`strongsolve.rerun.forced`); ignored for a run that is not a Snakemake run
        (``strongsolve 2048 solve`` recomputes whatever is missing).
    run_dir : str or Path, optional
        The run directory, for the fallbacks of :func:`base_command`.

    Returns
    -------
    str
        A shell command; ``snakemake --cores all`` with the forced targets when nothing is known
        about the run.
    """
    return forced(base_command(run_dir) or "snakemake --cores all", *forcerun)


STAGE_RULES = {"afterstates": "g2048_forward", "values": "g2048_backward"}
"""The workflow rule that writes each stage's layers (directory name -> rule), in a run of several
blocks; a run of one block has a single rule for both (:data:`ONE_JOB_RULE`)."""
ONE_JOB_RULE = "g2048_solve"
"""The rule that writes both stages, the report and the plots of a run whose ages make one block
(workflow/rules/g2048.smk); its job log ``<run>/logs/solve_<first>-<last>.log`` tells such a run."""


def stage_rule(run_dir, stage):
    """The workflow rule that writes ``stage``'s layers in the run ``run_dir``: :data:`ONE_JOB_RULE`
    when the run's logs show its job (a run of one block has no other), else :data:`STAGE_RULES`."""
    logs = Path(run_dir) / "logs"
    if logs.is_dir() and any(logs.glob("solve_*.log")):
        return ONE_JOB_RULE
    return STAGE_RULES.get(stage, "g2048_backward")


def block_target(path):
    """What to force so that Snakemake rebuilds the layer ``.../<stage>/age_<n>.zarr``: the block
    manifest of its age (the job's declared output; the blocks of both stages are the same, so the
    other stage's manifests name it when this one's is gone), else the stage's rule
    (:func:`stage_rule`)."""
    path = Path(path)
    manifest = block_manifest(path)
    if manifest is None:
        other = {"afterstates": "values", "values": "afterstates"}.get(path.parent.name)
        twin = block_manifest(path.parent.parent / other / path.name) if other else None
        manifest = path.parent / twin.name if twin else None
    return manifest or stage_rule(path.parent.parent, path.parent.name)


def repair_command(path):
    """The shell command that rebuilds the damaged or missing layer ``path``: remove what is there
    (a corrupt layer is never overwritten), then rerun the workflow as the run was made, forcing the
    layer's block (a plain rerun of a finished run finds its outputs up to date and does nothing).
    The forced jobs keep every layer that verifies and recompute only the missing ones.

    Parameters
    ----------
    path : str or Path
        The layer, ``<run>/<stage>/age_<n>.zarr``, as the caller names it (paths in the command
        are the same, so it is meant for the directory the run's paths are relative to).

    Returns
    -------
    str
        ``rm -rf <path> && <rerun command> --forcerun <block manifest>`` (no ``rm`` when nothing is
        there); the rerun command comes from :func:`rerun_command`, or for a layer of the
        optimal-play store (``<run>/policy/``) from :func:`policy_command`.
    """
    path = Path(path)
    if path.parent.name == "policy":
        manifest = block_manifest(path)
        command = policy_command(path.parent.parent, *([manifest] if manifest else []))
    else:
        command = rerun_command(block_target(path), run_dir=path.parent.parent)
    return f"rm -rf {shlex.quote(str(path))} && {command}" if path.exists() else command


def file_hint(path):
    """The command that rebuilds the run's result file ``path`` (``solution.json``, ``summary.csv``)
    by forcing it by name (its rule depends on the run's blocks): the ``hint`` of the store's
    checksummed readers."""
    return rerun_command(Path(path), run_dir=Path(path).parent)


def foreign_store_command(path):
    """The command that removes the whole store holding ``path``, a layer of another run (another
    board, spawn or target: a store copied from another run), and builds this run's again: ``rm
    -rf <run>/<store> && `` the command that writes the store (:func:`policy_command` for the
    optimal-play store, whose missing blocks it rebuilds; :func:`rerun_command` for a solve stage,
    whose jobs then run again as their outputs are gone). The ``foreign`` of
    :func:`strongsolve.store.layers.read_layer`."""
    store = Path(path).parent
    run_dir = store.parent
    command = policy_command(run_dir) if store.name == "policy" else rerun_command(run_dir=run_dir)
    return f"rm -rf {shlex.quote(str(store))} && {command}"
