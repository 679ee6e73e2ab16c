"""A 2048 solve on disk: its parameters, its directory layout, and verified access to its layers.

Layout of ``results/<run>/`` (``run`` = ``2048_<r>x<c>``, plus ``_p2-<p>`` for a non-default spawn
distribution, ``p`` exact, and ``_reach<tile>`` for the reach-a-tile objective; :func:`run_name`)::

    afterstates/age_000042.zarr   forward pass: sorted canonical afterstate IDs of age 42, with the
                                  counts of states, terminal states and afterstates in the attributes
    afterstates/block_*.json      one per Snakemake job: the ages it completed and their counts
    values/age_000042.zarr        backward pass: float64 values aligned with the IDs (points for the
                                  score objective, probability for reach-a-tile)
    values/block_*.json
    summary.csv, solution.json    report (with checksums: summary.csv.sha256, a "checksum" key)
    logs/, plots/

A run has a layer for every even age from 4 to :attr:`Run.last_age` (:func:`shape.last_age`; for
reach-a-tile bounded by the target), so the Snakemake job list is known before the solve.
Ages past the last state have empty layers, which the forward pass writes without computing once
two consecutive afterstate layers are empty (:mod:`forward`).
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...store.errors import CorruptLayerError
from ...store.layers import checksum, read_attrs, read_layer
from .hints import foreign_store_command, repair_command
from .rules.shape import check_shape, last_age
from .rules.targets import check_target

# The kernels (:mod:`.afterstate_code`, :mod:`.board`: numba) are imported where they are used: the
# workflow's Snakefile imports this module to build the job list, and should not load numba (issue
# 20: the Snakefile's imports took 0.4 s of every snakemake command).

DEFAULT_P2 = 0.9


def encode_afterstates(ids, rows, cols, age):
    """Stored code of a sorted unique afterstate layer of ``age``: Elias-Fano over its compact IDs
    (format 2 of :mod:`.afterstate_code`).

    Parameters
    ----------
    ids : uint64[A], strictly increasing, every one a board of age ``age``
    rows, cols, age : int

    Returns
    -------
    layer : afterstate_code.AfterstateLayer
    arrays : dict of str -> uint64 array
        ``{"words": ...}``: the code's four arrays in one (:meth:`EliasFano.to_words`).
    attrs : dict
        ``afterstate_format``, ``id_code``, ``eliasfano`` (the code's parameters) and
        ``bits_per_afterstate`` (serialized bits per ID).
    """
    from .encoding.afterstate_code import encode_layer
    return encode_layer(ids, rows, cols, age)


def blocks(ages, ages_per_job):
    """Split a list of ages into consecutive blocks of at most ``ages_per_job`` ages (a job each)."""
    return [ages[i:i + ages_per_job] for i in range(0, len(ages), ages_per_job)]


def decode_all(layer):
    """All IDs of an opened afterstate layer (:class:`afterstate_code.AfterstateLayer`, either
    format) as one sorted uint64 array of board IDs."""
    return layer.ids()


def p2_text(p2):
    """``p2`` as text that reads back to the same float: the short ``%g`` form when exact
    (``0.8``, ``1``), else ``repr`` (``0.8000004``, ``0.30000000000000004``), so that two runs share
    a name only if their p2 are the same number."""
    short = f"{p2:g}"
    return short if float(short) == p2 else repr(float(p2))


def run_name(rows, cols, p2=DEFAULT_P2, target_tile=0):
    """Directory name of a run: ``2048_3x3``, ``2048_3x3_p2-0.8``, ``2048_3x3_reach512``.

    Every parameter is in the name exactly (:func:`p2_text`): two runs that differ in any of them
    get two directories.
    """
    name = f"2048_{rows}x{cols}"
    if p2 != DEFAULT_P2:
        name += f"_p2-{p2_text(p2)}"
    if target_tile:
        name += f"_reach{target_tile}"
    return name


class ForeignRunError(ValueError):
    """A run directory holds the results of a run with other parameters."""


def check_run_directory(run):
    """Refuse a run directory that holds another run's results, before anything is written or removed.

    Snakemake removes a job's existing outputs before it runs the job (a rerun because the
    parameters changed), so this is checked when the workflow starts, not in the job. The
    block manifests and the first layer of each stage are compared with ``run.params()``; files
    that cannot be read are left to the jobs' own checks (a damaged layer is rebuilt, not foreign).

    Raises
    ------
    ForeignRunError
        Naming the file, the parameter that differs, and the command that moves the directory to
        the name of the run it holds.
    """
    want = run.params()
    for stage in ("afterstates", "values"):
        folder = run.directory / stage
        if not folder.is_dir():
            continue
        sources = sorted(folder.glob("block_*.json")) + sorted(folder.glob("age_*.zarr"))[:1]
        for path in sources:
            try:
                have = json.loads(path.read_text()) if path.suffix == ".json" else read_attrs(path, repair_command)
            except (OSError, ValueError, CorruptLayerError):
                continue
            if not isinstance(have, dict):
                continue
            for key, value in want.items():
                if have.get(key) != value:
                    raise ForeignRunError(_foreign_message(run, path, have, key))


def _foreign_message(run, path, have, key):
    text = (f"{run.directory} holds another run: {path} has {key} = {have.get(key)!r}, this run has "
            f"{key} = {run.params()[key]!r}. Nothing was changed.")
    try:
        other = run.directory.with_name(run_name(int(have["rows"]), int(have["cols"]),
                                                 float(have["p2"]), int(have["target_tile"] or 0)))
    except (KeyError, TypeError, ValueError):
        other = None
    if other is not None and other != run.directory and not other.exists():
        return text + (f" Move it to the name of the run it holds with `mv {run.directory} {other}`, "
                       "then run again")
    return text + " Move it away (or set another `results` directory), then run again"


@dataclass(frozen=True)
class Run:
    """One solve: board shape, spawn distribution and objective, under ``directory``.

    Parameters
    ----------
    directory : Path
    rows, cols : int
        1..4 each.
    p2 : float
        Probability that a spawn is a 2 (else a 4); 0.9 in the original game.
    target_tile : int
        0 for the score objective; for reach-a-tile a power of two that no start state
        holds and the board can make (:func:`targets.check_target`).

    Raises
    ------
    ValueError
        On a bad shape, ``p2`` or target, naming the value and what is allowed.
    """

    directory: Path
    rows: int
    cols: int
    p2: float = DEFAULT_P2
    target_tile: int = 0

    def __post_init__(self):
        check_shape(self.rows, self.cols)
        if not 0.0 <= self.p2 <= 1.0:
            raise ValueError(f"spawn probability p2 = {self.p2!r} is not allowed; allowed: 0 <= p2 <= 1")
        t = self.target_tile
        if t and (t < 4 or t & (t - 1) or t > 1 << 15):
            raise ValueError(f"target_tile = {t!r} is not allowed; allowed: a power of two from 4 to "
                             "32768, or 0 for the score objective")
        if t:
            check_target(self.rows, self.cols, self.p2, t)
        object.__setattr__(self, "directory", Path(self.directory))

    @property
    def tables(self):
        from .rules.board import tables
        return tables(self.rows, self.cols)

    @property
    def target_exp(self):
        return self.target_tile.bit_length() - 1 if self.target_tile else 0

    @property
    def last_age(self):
        """The last age of the run's job list (:func:`shape.last_age`: bounded by the target for
        reach-a-tile)."""
        return last_age(self.rows, self.cols, self.target_tile, self.p2)

    def ages(self, max_age=None):
        """Ages 4, 6, ..., up to ``max_age`` (default, and at most: the last age)."""
        return list(range(4, min(max_age or self.last_age, self.last_age) + 1, 2))

    def params(self):
        """Attributes every layer of this run carries and every load checks."""
        return {"game": "2048", "rows": self.rows, "cols": self.cols, "p2": self.p2,
                "target_tile": self.target_tile}

    def afterstate_path(self, age):
        return self.directory / "afterstates" / f"age_{age:06d}.zarr"

    def values_path(self, age):
        return self.directory / "values" / f"age_{age:06d}.zarr"

    def manifest_path(self, stage, first, last):
        return self.directory / stage / f"block_{first:06d}-{last:06d}.json"

    def load_index(self, age):
        """The afterstate layer of ``age``, opened (:class:`afterstate_code.AfterstateLayer`, either
        format; an empty one beyond the last age), and the layer's attributes. Raises
        CorruptLayerError (see store.layers), also for a layer whose code is malformed or whose
        format this version does not read (the message names the command that rebuilds it)."""
        if age > self.last_age:
            return encode_afterstates(np.empty(0, np.uint64), self.rows, self.cols, age)[0], \
                {"num_afterstates": 0}
        from .encoding.afterstate_code import from_stored
        path = self.afterstate_path(age)
        arrays, attrs = read_layer(path, dict(self.params(), age=age), repair_command, foreign_store_command)
        try:
            return from_stored(arrays, attrs, self.rows, self.cols, age), attrs
        except (KeyError, ValueError) as err:
            raise CorruptLayerError(f"layer {path} is not a valid afterstate layer ({err}); to "
                                    f"rebuild it, run: `{repair_command(path)}`") from err

    def load_afterstates(self, age):
        """Sorted canonical afterstate IDs of ``age`` (uint64[A], decoded from the stored layer)
        and the layer's attributes. Raises CorruptLayerError (see store.layers), also when a stored
        code does not decode to a board of the age."""
        layer, attrs = self.load_index(age)
        try:
            return decode_all(layer), attrs
        except ValueError as err:
            path = self.afterstate_path(age)
            raise CorruptLayerError(f"layer {path} does not decode to boards of age {age} ({err}); "
                                    f"to rebuild it, run: `{repair_command(path)}`") from err

    def load_values(self, age, ids=None):
        """Values (float64[A]) of the afterstates of ``age``; checks they belong to the IDs' layer."""
        if age > self.last_age:
            return np.empty(0, np.float64)
        expect = dict(self.params(), age=age)
        if ids is not None:
            expect["afterstates_checksum"] = checksum(ids)
        arrays, _ = read_layer(self.values_path(age), expect, repair_command, foreign_store_command)
        return arrays["values"]

    def layer_attrs(self, stage, age):
        path = self.afterstate_path(age) if stage == "afterstates" else self.values_path(age)
        return read_attrs(path, repair_command)
