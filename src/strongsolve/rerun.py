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
