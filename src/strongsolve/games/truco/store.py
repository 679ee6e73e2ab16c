"""Solved Truco subgames on disk: one zarr v3 group per subgame, written atomically.

Layout: ``<results>/truco/row11/group_<x>/s<a>-<b>_v<c>.zarr`` (``a``, ``b`` role-ordered points
zero-padded, ``c`` the vira class). A group holds

- ``policy`` float64[M]: the average strategy, action slots of information set ``i`` at
  ``infoset_ptr[i]:infoset_ptr[i+1]`` (hand of eleven: [play, fold]; a card: the distinct types of
  the unplayed cards, ascending)
- ``infoset_ptr`` int64[I+1], ``infoset_key`` int64[I] (tree.HandTree.infoset_key), ``hands`` int64[H, 3]
- attributes: ``value`` (mano's match-win probability), ``nash_conv``, ``exploitability``,
  ``iterations``, ``seconds``, ``score``, ``vira_class``, ``eleven``, ``utility`` (the outcome
  table), ``fixed_point_residual``, ``n_nodes``.

A group directory is written under a temporary name next to its final place and renamed when
complete, so a reader never sees half a subgame.
"""

import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import zarr

GRID_DIR = ("truco", "row11")


def subgame_name(a, b, c):
    return f"s{a:02d}-{b:02d}_v{c}.zarr"


def group_dir(results, x):
    return Path(results).joinpath(*GRID_DIR, f"group_{x}")


def subgame_path(results, a, b, c):
    """Where subgame (a, b, c) of the 11 row is stored."""
    return group_dir(results, min(a, b)) / subgame_name(a, b, c)


def write_subgame(path, arrays, attrs):
    """Write one subgame group atomically (temporary sibling directory, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        root = zarr.open_group(str(tmp), mode="w")
        for name, arr in arrays.items():
            root.create_array(name, data=np.ascontiguousarray(arr))
        root.attrs.update(attrs)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_subgame(path, arrays=True):
    """Return (attrs dict, arrays dict) of a stored subgame; FileNotFoundError if absent."""
    path = Path(path)
    if not (path / "zarr.json").exists():
        raise FileNotFoundError(f"no solved subgame at {path}")
    root = zarr.open_group(str(path), mode="r")
    attrs = dict(root.attrs)
    data = {k: root[k][...] for k in ("policy", "infoset_ptr", "infoset_key", "hands")} if arrays else {}
    return attrs, data


def list_solved(results):
    """Attributes of every stored subgame under ``results`` (no arrays), as a list of dicts."""
    base = Path(results).joinpath(*GRID_DIR)
    out = []
    for p in sorted(base.glob("group_*/s*_v*.zarr")):
        out.append(read_subgame(p, arrays=False)[0])
    return out
