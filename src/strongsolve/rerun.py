"""The Snakemake command that reruns the workflow with the configuration it was run with.

A repair hint must rebuild *this* run: one that says only ``snakemake --cores all`` rebuilds the
default config.yaml run, not a preset's. ``workflow/rules/common.smk`` builds, from how Snakemake
was invoked (:func:`snakemake_command`: its ``--configfile`` files, ``--config`` values and
``--profile``), the command that reruns the same configuration, and exports it to the jobs as
:data:`RERUN_VARIABLE`; each game's ``hints`` module adds the targets to force. Nothing here knows a
game or a rule.
"""

import os
import shlex
from pathlib import Path

RERUN_VARIABLE = "STRONGSOLVE_RERUN"
"""Environment variable holding the base rerun command (set by the workflow for its jobs)."""

def shown_path(path, cwd):
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
        words += ["--configfile", *(shown_path(f, cwd) for f in configfiles)]
    if config_args:
        words += ["--config", *config_args]
    return shlex.join(words)


def is_snakemake_command(command):
    """True when ``command`` runs Snakemake (so ``--forcerun`` applies)."""
    words = shlex.split(command)
    return bool(words) and Path(words[0]).name == "snakemake"


def forced(command, *targets):
    """``command`` with ``--forcerun`` the Snakemake rules (str) or output files (Path) ``targets``.

    A file is named relative to the current directory when it lies below it, as the workflow's
    outputs are named (relative to the workflow directory, where the command is meant to run);
    Snakemake matches no other spelling. ``command`` is returned as is when it does not run
    Snakemake or nothing is to be forced.
    """
    if targets and is_snakemake_command(command):
        named = (shown_path(t, os.getcwd()) if isinstance(t, Path) else str(t) for t in targets)
        command += " --forcerun " + shlex.join(named)
    return command


def workflow_rerun_command(*targets):
    """The command that reruns the workflow's configuration (:data:`RERUN_VARIABLE`, else
    ``snakemake --cores all``), forcing ``targets`` (:func:`forced`)."""
    return forced(os.environ.get(RERUN_VARIABLE) or "snakemake --cores all", *targets)


RECORD_KEY = "rerun"
"""Key under which a result made inside the workflow records the command that reran its
configuration (:func:`job_record`), for repair hints given outside Snakemake."""


def job_record():
    """What a result written by a workflow job records of the run that made it: ``{"command":
    <the run's rerun command>}`` (:data:`RERUN_VARIABLE`), or None outside the workflow. Written
    with the result, atomically, so that a hint read from any result of a run rebuilds that run."""
    command = os.environ.get(RERUN_VARIABLE)
    return {"command": command} if command else None


def recorded(record):
    """The rerun command of a :func:`job_record` read back from a file (any JSON value), or None."""
    command = record.get("command") if isinstance(record, dict) else None
    return command if isinstance(command, str) and is_snakemake_command(command) else None


def target_command(command, target):
    """``command`` (a Snakemake rerun command) building only ``target`` (an output file or
    directory, a Path or str as the workflow names it) and forcing its job: ``snakemake <target>
    --cores all ... --forcerun <target>``. Named as the target, Snakemake runs that one job and
    nothing downstream of it (a plain ``--forcerun`` also reruns every job reading its output)."""
    target = shown_path(target, os.getcwd()) if isinstance(target, Path) else str(target)
    words = shlex.split(command)
    return forced(shlex.join(words[:1] + [target] + words[1:]), target)


def config_entry(command, key):
    """The value of ``--config key=VALUE`` in a Snakemake command, parsed as Snakemake parses it
    (YAML), or None when the command does not set ``key``."""
    import yaml

    words = shlex.split(command)
    if "--config" not in words:
        return None
    for word in words[words.index("--config") + 1:]:
        if word.startswith("--"):
            break
        name, _, value = word.partition("=")
        if name == key:
            return yaml.safe_load(value)
    return None


def with_config(command, key, value):
    """``command`` with ``--config key=VALUE`` set to ``value`` (a JSON-able value, written in YAML
    flow style without quotes where none is needed), replacing the command's own entry."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, width=10 ** 6, sort_keys=False).strip()
    if text.endswith("\n...") or text.endswith("..."):  # a plain scalar's end-of-document marker
        text = text.rsplit("...", 1)[0].strip()
    words = shlex.split(command)
    if "--config" not in words:
        words.append("--config")
    start = words.index("--config") + 1
    end = next((i for i in range(start, len(words)) if words[i].startswith("--")), len(words))
    entries = [w for w in words[start:end] if w.partition("=")[0] != key] + [f"{key}={text}"]
    # KEY='VALUE': the value quoted for the shell, the key left bare, as a person types it
    shown = [f"{k}={shlex.quote(v)}" for k, _, v in (e.partition("=") for e in entries)]
    return " ".join([shlex.join(words[:start])] + shown + ([shlex.join(words[end:])] if words[end:] else []))
