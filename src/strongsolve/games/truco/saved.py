"""Solved Truco subgames on disk: one zarr v3 group per subgame, written atomically.

Layout: ``<results>/truco/row11/group_<x>/s<a>-<b>_v<c>.zarr`` (``a``, ``b`` role-ordered points
zero-padded, ``c`` the vira class). A group holds

- ``policy`` float64[M]: the average strategy, action slots of information set ``i`` at
  ``infoset_ptr[i]:infoset_ptr[i+1]`` (hand of eleven: [play, fold]; a card: the distinct types of
  the unplayed cards, ascending), refined off the equilibrium path: at an information set that
  its player's own strategy reaches with probability at most the attribute ``off_path_reach``
  (one of ``kernels.off_path.OFF_PATH_REACHES``), or (attribute ``off_path_unreached`` true) that
  the opponent's strategy never reaches, a best response to the other player's refined strategy
  from there (that module defines it)
- ``off_path`` bool[I]: which information sets are off the path (their rows are best responses)
- ``infoset_ptr`` int64[I+1], ``infoset_key`` int64[I] (tree.HandTree.infoset_key), ``hands`` int64[H, 3]
- attributes: ``format_version`` (:data:`FORMAT_VERSION`), ``value`` (mano's match-win
  probability), ``nash_conv``, ``exploitability`` (those of the solve's average strategy),
  ``off_path_value``, ``off_path_nash_conv`` (those of the stored, refined policy),
  ``off_path_reach``, ``off_path_unreached``, ``off_path_sets`` (information sets refined),
  ``off_path_seconds``,
  ``off_path_check_seconds``, ``iterations``,
  ``seconds``, ``score``, ``vira_class``, ``eleven``, ``utility`` (the outcome table),
  ``fixed_point_residual``, ``n_nodes``; written by a workflow job, ``rerun`` (the command
  of the run that made it, for repair hints: hints.py).

A subgame of another format version (1: written before the off-path refinement, without
``off_path``) is refused by :func:`read_subgame` with the command that solves it again.

Beside a subgame of the grid, ``s<a>-<b>_v<c>.accum.npz`` may keep the CFR accumulators it ended
with (``write_accumulators``): regrets and strategy sums float64[M], the iteration count and the
NashConv checks, so that a tighter target continues the solve where it stopped.

A group directory is written under a temporary name next to its final place and renamed when
complete, so a reader never sees half a subgame.

Every subgame carries SHA-256 checksums (:mod:`store.checksums`): ``arrays`` in the attributes maps
each array to its dtype, shape and checksum, and ``checksum`` covers all the attributes (values,
policy checksums...). :func:`read_subgame` verifies them and turns any damage, including a chunk
that zarr cannot decompress, into a :class:`CorruptResultError` naming the file and the command that
rebuilds its group.
"""

import json
import os
import re
import shutil
import uuid
from pathlib import Path

import numpy as np
import zarr

from .hints import subgame_hint
from ...rerun import RECORD_KEY, job_record
from ...store.checksums import (array_checksum, corrupt, read_npz_checked, verify_json,
                                with_checksum, write_npz_checked)
from ...store.errors import CorruptResultError

GRID_DIR = ("truco", "row11")
ARRAYS = ("policy", "off_path", "infoset_ptr", "infoset_key", "hands")
FORMAT_VERSION = 2
"""The layout of a stored subgame (the module docstring): 2 adds the off-path refinement and its
mask; 1 (no ``format_version`` attribute) had neither."""


def subgame_name(a, b, c):
    return f"s{a:02d}-{b:02d}_v{c}.zarr"


def group_dir(results, x):
    return Path(results).joinpath(*GRID_DIR, f"group_{x}")


def subgame_path(results, a, b, c):
    """Where subgame (a, b, c) of the 11 row is stored."""
    return group_dir(results, min(a, b)) / subgame_name(a, b, c)


def write_subgame(path, arrays, attrs):
    """Write one subgame atomically (a temporary sibling directory, then a rename), with the
    checksums of its arrays and attributes.

    Parameters
    ----------
    path : str or Path
        Final directory (:func:`subgame_path`).
    arrays : dict of str -> numpy array
        :data:`ARRAYS` (see the module docstring).
    attrs : dict
        JSON-able attributes (numpy scalars allowed); ``arrays``, ``format_version`` and
        ``checksum`` are set here.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        _write_zarr(tmp, arrays, attrs)
        # a subgame solved again (a tighter target): the old copy is renamed aside, not deleted,
        # until the new one is in place, so no kill leaves neither on disk
        old = path.with_name(f".{path.name}.old-{uuid.uuid4().hex[:8]}")
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_group(path, subgames):
    """Write a group directory of subgames atomically: each subgame straight into a temporary
    sibling directory, then the whole group renamed into place once (replacing an older copy).

    Parameters
    ----------
    path : str or Path
        Final directory (:func:`group_dir`).
    subgames : iterable of (str, dict, dict)
        ``(name, arrays, attrs)`` of each subgame (:func:`subgame_name`; arrays and attributes as
        :func:`write_subgame` takes them).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        for name, arrays, attrs in subgames:
            _write_zarr(tmp / name, arrays, attrs)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_zarr(path, arrays, attrs):
    """The zarr group of one subgame at ``path`` (a new directory), checksums included."""
    arrays = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    meta = {name: {"dtype": a.dtype.str, "shape": list(a.shape), "checksum": array_checksum(a)}
            for name, a in arrays.items()}
    record = job_record()  # the run's command, for the repair hints of a damaged copy (hints.py)
    if record:
        attrs = dict(attrs, **{RECORD_KEY: record})
    # through JSON first, so that the checksum covers exactly what zarr stores and returns
    attrs = json.loads(json.dumps(dict(attrs, arrays=meta, format_version=FORMAT_VERSION),
                                  default=_json_scalar, allow_nan=True))
    root = zarr.open_group(str(path), mode="w")
    for name, arr in arrays.items():
        root.create_array(name, data=arr)
    root.attrs.update(with_checksum(attrs))


def _json_scalar(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"{type(x).__name__} {x!r} cannot be stored in a subgame's attributes")


def read_subgame(path, arrays=True):
    """Load a stored subgame, verified against its checksums.

    Parameters
    ----------
    path : str or Path
        :func:`subgame_path`.
    arrays : bool
        Also read (and verify) the arrays :data:`ARRAYS`; else only the attributes.

    Returns
    -------
    attrs : dict
        Without ``checksum`` (``arrays`` holds the arrays' dtypes, shapes and checksums).
    data : dict of str -> numpy array
        Empty unless ``arrays``.

    Raises
    ------
    FileNotFoundError
        If no subgame is stored at ``path``.
    CorruptResultError
        If the attributes or an array cannot be read or do not match their checksums (an edited
        value, a corrupt chunk), or the score and vira class stored are not those of the file's
        name (another subgame copied over it), or it is of another format version
        (:data:`FORMAT_VERSION`); the message names the file and the command that rebuilds it.
    """
    path = Path(path)
    if not (path / "zarr.json").exists():
        raise FileNotFoundError(f"no solved subgame at {path}")
    hint = subgame_hint
    try:
        root = zarr.open_group(str(path), mode="r")
        doc = dict(root.attrs)
    except Exception as err:  # zarr raises several types for a damaged zarr.json
        raise corrupt(path / "zarr.json", f"cannot be read ({err})", hint) from err
    attrs = verify_json(doc, path / "zarr.json", hint)
    _check_identity(path, attrs, hint)
    _check_version(path, attrs, hint)
    meta = attrs.get("arrays")
    if not isinstance(meta, dict) or set(meta) != set(ARRAYS):
        raise corrupt(path / "zarr.json", f"lists the arrays {meta!r}, not {list(ARRAYS)}", hint)
    data = {}
    for name in ARRAYS if arrays else ():
        try:
            a = root[name][...]
        except Exception as err:  # a corrupt chunk: zstd, CRC or shape errors, whatever zarr raises
            raise corrupt(path / name, f"cannot be read ({type(err).__name__}: {err})",
                          hint) from err
        if array_checksum(a) != meta[name]["checksum"]:
            raise corrupt(path / name, "does not match its checksum", hint)
        data[name] = a
    return attrs, data


def stored_paths(results):
    """The directories of every stored subgame under ``results`` (sorted list of Path)."""
    return sorted(Path(results).joinpath(*GRID_DIR).glob("group_*/s*_v*.zarr"))


_NAME = re.compile(r"s(\d{2})-(\d{2})_v(\d)\.zarr")


def _check_identity(path, attrs, hint):
    """A subgame copied over another's file passes its own checksums: its score and vira class are
    checked against the name it is read under (:func:`subgame_name`)."""
    named = _NAME.fullmatch(path.name)
    if named is None:
        return  # a subgame read from a path of the caller's choosing: nothing to compare with
    a, b, c = map(int, named.groups())
    if attrs.get("score") != [a, b] or attrs.get("vira_class") != c:
        raise corrupt(path / "zarr.json", f"holds subgame {attrs.get('score')} of vira class "
                      f"{attrs.get('vira_class')}, not {a}-{b} of class {c} as its name says", hint)


def _check_version(path, attrs, hint):
    """A subgame of another layout (:data:`FORMAT_VERSION`) is refused, naming the command that
    solves it again: its checksums hold, but its policy lacks the off-path refinement."""
    version = attrs.get("format_version", 1)
    if version != FORMAT_VERSION:
        raise CorruptResultError(
            f"{path} is a solved subgame of format version {version}, written before the policy "
            "held a best response off the equilibrium path; this version of strongsolve reads "
            f"format {FORMAT_VERSION} only. Solve it again with `{hint(path)}`")


def list_solved(results):
    """Attributes of every stored subgame under ``results`` (no arrays), as a list of dicts.

    Raises
    ------
    CorruptResultError
        At the first damaged subgame (:func:`read_subgame`).
    """
    return [read_subgame(p, arrays=False)[0] for p in stored_paths(results)]


def accumulators_path(path):
    """Where the CFR accumulators of the subgame stored at ``path`` are kept:
    ``s<a>-<b>_v<c>.accum.npz`` beside its ``.zarr``."""
    path = Path(path)
    return path.with_name(path.name.removesuffix(".zarr") + ".accum.npz")


def write_accumulators(path, regret, strat_sum, iterations, checks):
    """Keep the DCFR accumulators a subgame's solve ended with beside it (``accumulators_path``),
    atomically, with a checksum, uncompressed (16 bytes per action slot: 91 MB for a full-deck t1
    subgame).

    Parameters
    ----------
    path : path
        The subgame's ``.zarr`` (written next, or already there).
    regret, strat_sum : float64[M]
        Cumulative regrets and strategy sums per action slot (``kernels.cfr.CFRResult``).
    iterations : int
        DCFR iterations done (the discounting of the next ones depends on it).
    checks : list of (int, float)
        (iterations, NashConv) of the solve's checks (``kernels.cfr.next_check`` schedules from
        them), so that a continued solve runs the iterations and checks an unbroken one would.
    """
    write_npz_checked(accumulators_path(path), dict(
        regret=np.ascontiguousarray(regret, np.float64),
        strat_sum=np.ascontiguousarray(strat_sum, np.float64),
        iterations=np.array(int(iterations)),
        checks=np.array([(int(t), float(e)) for t, e in checks], np.float64).reshape(-1, 2)),
        compress=False)


def read_accumulators(path):
    """The accumulators kept beside the subgame at ``path`` (``write_accumulators``) as the warm
    start ``kernels.cfr.solve`` takes: ``(regret, strat_sum, iterations, checks)``.

    Raises
    ------
    FileNotFoundError
        If none are kept.
    CorruptResultError
        If the file is damaged (naming it and the command that rebuilds the subgame's group).
    """
    z = read_npz_checked(accumulators_path(path), lambda p: subgame_hint(path))
    checks = [(int(t), float(e)) for t, e in z["checks"]]
    return z["regret"], z["strat_sum"], int(z["iterations"]), checks
