"""A solved Ludo race on disk, the one reader and writer of its files: the expansion solver's policy
file (``--policy-out``, an ``.npz`` archive) and the values solver's checkpoints and solution.

**The policy file** holds the race's cells and tuples, its board (JSON), the die's faces, the win
probability of every position (``value``) and the chosen piece per position and face
(``move_from``), written and verified through :func:`strongsolve.store.checksums.write_npz_checked`
(a SHA-256 of every member). :func:`load_race` opens either kind of solution for
:func:`.advice.advise`.

**Values.** Layers of :mod:`strongsolve.store.layers` (a zarr group written under a temporary name and
renamed when complete, a BLAKE2b checksum of the array and of the attributes, a CRC32C per chunk)
holding one array, ``value``: the matrix of :mod:`.stages.values` flattened (row a = the mover's tuple
a), in chunks of whole rows, so that a reader of a few positions (``ludo advise``) decodes only
their rows' chunks. The attributes hold the board, the piece count, the sweep count and the last
sweep's largest change.

**Checkpoints** live in ``<solution>.checkpoints/sweep_<n>.zarr`` (the values after sweep n and
after the extrapolation's jump, if it made one, with the extrapolation's state in the attributes:
:mod:`.stages.acceleration`); a new one is written completely
before the older ones are removed. :meth:`Checkpoints.latest` verifies the newest (every byte) and
falls back to the one before it; a damaged one is reported by name and removed, never used.

**The result JSON** of ``ludo race`` and ``ludo rolls`` (``--output``: the win probability,
the expected rolls, the board) carries a SHA-256 of its document (``checksum``,
:func:`strongsolve.store.checksums.write_json_checked`), verified by :func:`load_summary`; written
by a workflow job it records the run's command (``rerun``, for repair hints: hints.py).

**The solution** is written once the sweeps converge (``converged: true``, the tolerance, the first
mover's win probability); then the checkpoints are removed.
"""

import re
import shutil
import time
from pathlib import Path

import numpy as np

import json

from ...rerun import RECORD_KEY, job_record
from ...store.checksums import read_json_checked, read_npz_checked, write_json_checked, write_npz_checked
from ...store.errors import CorruptLayerError
from ...store.layers import read_attrs, read_layer, write_layer
from ...store.lock import holds_writer_lock
from . import encoding, rules
from .hints import policy_command, policy_hint, summary_hint, values_command
from .stages.values import race_order

KIND = "ludo-race-values"
CHUNK_BYTES = 8 << 20  # about 8 MiB of values per chunk (whole rows)


def rows_per_chunk(m):
    """Rows of an M x M value matrix in one chunk: at least one, about :data:`CHUNK_BYTES`."""
    return max(1, CHUNK_BYTES // (8 * m))


def identity(board, pieces):
    """The attributes that say which race a layer holds (board and piece count)."""
    return {"kind": KIND, "board": board.to_mapping(), "pieces": int(pieces),
            "order": "progress, then lexicographic"}


def _write(path, value, attrs):
    m = int(round(np.sqrt(value.size)))
    write_layer(path, {"value": value.reshape(-1)}, dict(attrs, tuples=m), zstd_level=1,
                chunk=rows_per_chunk(m) * m)


class Checkpoints:
    """Checkpoints of one value-only solve (module docstring).

    Parameters
    ----------
    directory : str or Path
        ``<solution>.checkpoints``.
    board : rules.Board
    pieces : int
    every_minutes : float or None
        Save when this much time passed since the solve began or since the last save.
    every_sweeps : int or None
        Save every this many sweeps.
    log : callable
        Gets one line per event (saved, resumed, damaged).
    """

    def __init__(self, directory, board, pieces, every_minutes=30.0, every_sweeps=None,
                 log=print):
        self.directory = Path(directory)
        self.identity = identity(board, pieces)
        self.every_minutes = every_minutes
        self.every_sweeps = every_sweeps
        self.log = log
        self.last_time = time.monotonic()
        self.last_sweeps = 0

    def paths(self):
        """Complete checkpoints, newest first."""
        if not self.directory.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.directory.iterdir()
                 if (m := re.fullmatch(r"sweep_(\d+)\.zarr", p.name))]
        return [p for _, p in sorted(found, reverse=True)]

    def latest(self):
        """``(value float64[M*M], sweeps, largest change, extrapolation state)`` of the newest
        checkpoint that verifies (the state: the dict of :meth:`.stages.acceleration.Extrapolation.state`,
        None when the solve had no extrapolation), or None; damaged ones are reported through ``log`` and removed, and so are the temporaries
        of a checkpoint a killed solve was writing, when this process holds the writer lock
        (:mod:`strongsolve.store.lock`) of a directory above them.

        Raises
        ------
        ValueError
            If a checkpoint that verifies holds another race (another board or piece count): it is
            not removed; the message says how to.
        """
        if self.directory.is_dir() and holds_writer_lock(self.directory):
            for stale in self.directory.glob(".sweep_*.zarr.tmp-*"):
                shutil.rmtree(stale, ignore_errors=True)
        for path in self.paths():
            try:
                attrs = read_attrs(path)
                other = {k: attrs.get(k) for k in self.identity}
                if other != self.identity:
                    raise ValueError(
                        f"{path} is a checkpoint of another race ({other['pieces']} piece(s), "
                        f"board {other['board']}); remove it (`rm -rf {self.directory}`) or write "
                        "this race's values elsewhere (--values-out)")
                arrays, attrs = read_layer(path)
            except CorruptLayerError as err:
                self.log(f"checkpoint {path} is damaged ({err}); it is not used and is "
                         "removed")
                shutil.rmtree(path)
                continue
            self.log(f"resuming from checkpoint {path}: sweep {attrs['sweeps']}, largest change "
                     f"{attrs['last_change']:.3g}")
            self.last_sweeps = attrs["sweeps"]
            return (arrays["value"], int(attrs["sweeps"]), float(attrs["last_change"]),
                    attrs.get("extrapolation"))
        return None

    def due(self, sweeps):
        """Whether to save after ``sweeps`` sweeps."""
        if self.every_sweeps is not None and sweeps - self.last_sweeps >= self.every_sweeps:
            return True
        return (self.every_minutes is not None
                and time.monotonic() - self.last_time >= 60.0 * self.every_minutes)

    def save(self, value, sweeps, delta, state=None):
        """Write ``value`` (float64[M*M]) as ``sweep_<sweeps>.zarr``, then remove older ones.
        ``state`` (a JSON-able dict or None): the extrapolation's state after that sweep, kept in
        the attributes (``extrapolation``).

        Raises
        ------
        StoreWriteError
            Disk full or directory not writable (nothing partial left; older checkpoints kept).
        """
        began = time.monotonic()
        path = self.directory / f"sweep_{sweeps:06d}.zarr"
        if not path.exists():
            _write(path, value, dict(self.identity, sweeps=int(sweeps), last_change=float(delta),
                                     converged=False, extrapolation=state))
        for old in self.paths():
            if old != path:
                shutil.rmtree(old)
        self.last_time = time.monotonic()
        self.last_sweeps = sweeps
        self.log(f"checkpoint {path} written ({self.last_time - began:.1f} s)")

    def clear(self):
        """Remove every checkpoint (after the solution is saved)."""
        shutil.rmtree(self.directory, ignore_errors=True)


def checkpoint_directory(solution_path):
    """``<solution>.checkpoints`` beside the solution."""
    path = Path(solution_path)
    return path.with_name(path.name + ".checkpoints")


def save_solution(path, solution, tol, board_file=None):
    """Write a converged :class:`.stages.values.ValueSolution` as a layer at ``path``.

    Raises
    ------
    FileExistsError
        If ``path`` exists (a layer is never overwritten).
    StoreWriteError
        Disk full or directory not writable.
    """
    race = solution.race
    attrs = dict(identity(race.board, race.pieces), converged=True, tol=float(tol),
                 sweeps=int(solution.sweeps), last_change=float(solution.residual),
                 win_probability=float(solution.win_probability), board_file=board_file)
    _write(path, solution.value, attrs)


class SavedValues:
    """A saved solution opened for lookups: only the rows asked for are read (``ludo advise``).

    Parameters
    ----------
    path : str or Path
        The layer written by :func:`save_solution`.
    require_converged : bool
        False opens a checkpoint too (bench/ludo_values.py times advice on a race it cannot solve
        here).

    Raises
    ------
    ValueError
        Not such a layer, damaged attributes, or a checkpoint rather than a converged solution;
        the message names the file and the command that writes a good one.
    """

    def __init__(self, path, require_converged=True):
        import zarr

        self.path = Path(path)
        try:
            attrs = read_attrs(self.path)
        except CorruptLayerError as err:
            raise ValueError(f"{err}; solve the race again: `{values_command({}, path)}`") \
                from None
        if attrs.get("kind") != KIND:
            raise ValueError(f"{path} is a layer but not a Ludo race's values (kind "
                             f"{attrs.get('kind')!r})")
        if require_converged and not attrs.get("converged"):
            raise ValueError(f"{path} is a checkpoint (sweep {attrs.get('sweeps')}, largest change "
                             f"{attrs.get('last_change')}), not a converged solution; finish the "
                             "solve by running its `strongsolve ludo race ... --values-out` again")
        self.attrs = attrs
        self.board = rules.Board.from_mapping(attrs["board"])
        self.pieces = int(attrs["pieces"])
        self.race = race_order(self.board, self.pieces)
        self.m = self.race.n_tuples
        if attrs["tuples"] != self.m:
            raise ValueError(f"{path}: {attrs['tuples']} tuples stored, its board gives {self.m}; "
                             f"solve it again: `{values_command(attrs, path)}`")
        self.array = zarr.open_array(str(self.path / "value"), mode="r")
        self.rows = {}

    def row(self, a):
        """float64[M]: the values of the mover's tuple ``a`` against every opponent tuple.

        Raises
        ------
        ValueError
            If its chunk fails its CRC32C (damaged); the message names the file and the command.
        """
        if a not in self.rows:
            try:
                self.rows[a] = np.asarray(self.array[a * self.m:(a + 1) * self.m])
            except Exception as err:  # zarr's checksum codec raises several types
                raise ValueError(f"{self.path}: row {a} cannot be read ({err}): the file is "
                                 f"damaged; solve the race again: "
                                 f"`{values_command(self.attrs, self.path)}`") from None
        return self.rows[a]

    def lex_values(self):
        """The values indexed as :func:`advice.advise` takes them (lexicographic node numbers),
        reading rows on demand."""
        return LexValues(self.race, self.row)


class LexValues:
    """``values[node]`` for a node of :func:`encoding.race_encoding` (lexicographic), from a
    value matrix in progress order given as ``row(a)``; what :func:`advice.advise` reads."""

    def __init__(self, race, row):
        self.race = race
        self.row = row

    def __getitem__(self, node):
        m = self.race.n_tuples
        return self.row(int(self.race.of_lex[node // m]))[int(self.race.of_lex[node % m])]


POLICY_README = ("node = rank(own) * M + rank(opponent), rank = row of tuples (indices into cells); "
                 "value = win probability of the player to move; move_from[node, face] = cell of the "
                 "piece to move, -1 pass, -2 ended game")


def save_policy(path, solution):
    """Write the expansion solver's :class:`.stages.expansion.RaceSolution` as the policy file
    ``path`` (module docstring), atomically.

    Arrays: ``cells`` int64[R], ``tuples`` int64[M, P], ``board`` (JSON text), ``faces`` int64[F],
    ``value`` float64[M*M], ``move_from`` int16[M*M, F], ``readme`` (text).
    """
    race = solution.race
    exp = race.expansion
    faces = [d for d, p in enumerate(race.board.die, 1) if p > 0]
    n = exp.n_nodes
    best = np.full((n, len(faces)), -2, np.int16)  # -2: ended game, -1: pass
    counts = np.diff(exp.node_ptr)
    live = counts > 0
    chosen = exp.out_ptr[:-1] + solution.policy
    piece = race.piece[chosen]
    cell = np.where(piece >= 0, race.encoding.cells[np.maximum(piece, 0)], -1)
    best[live] = cell.reshape(-1, len(faces))
    write_npz_checked(path, dict(cells=race.encoding.cells, tuples=race.encoding.tuples,
                                 board=np.array(json.dumps(race.board.to_mapping())),
                                 faces=np.array(faces), value=solution.value, move_from=best,
                                 readme=np.array(POLICY_README)))


def load_policy(path):
    """The arrays of a policy file (:func:`save_policy`) with its board and race encoding, verified.

    Returns
    -------
    board : rules.Board
    encoding : encoding.RaceEncoding
    arrays : dict of str -> numpy array
        As :func:`save_policy` writes them.

    Raises
    ------
    CorruptResultError
        A damaged or edited file (its checksum), naming the command that writes it again.
    ValueError
        Not a race solution with its board, or positions that do not match its board.
    """
    arrays = read_npz_checked(path, policy_hint)
    try:
        stored = {key: arrays[key] for key in ("board", "cells", "tuples", "value")}
    except KeyError as err:
        raise ValueError(f"{path}: not a race solution with its board ({err}); write one with "
                         f"`{policy_command(path)}`") from None
    board = rules.Board.from_mapping(json.loads(str(stored["board"])))
    pieces = stored["tuples"].shape[1]
    enc = encoding.race_encoding(board, pieces)
    if not (np.array_equal(enc.cells, stored["cells"]) and np.array_equal(enc.tuples, stored["tuples"])
            and stored["value"].shape == (enc.n_tuples ** 2,)):
        raise ValueError(f"{path}: its positions do not match its board; write it again with "
                         f"`{policy_command(path, pieces)}`")
    return board, enc, arrays


def load_race(path):
    """``(board, encoding, value)`` of a saved race, what :func:`.advice.advise` reads: a values
    layer (``--values-out``, rows read on demand) or a policy file (``--policy-out``).

    Raises
    ------
    ValueError, CorruptResultError
        Not a saved race, or damaged; the message names the file and the command that writes a
        readable one.
    """
    path = Path(path)
    if path.is_dir():
        saved = SavedValues(path)
        return saved.board, saved.race.lex_encoding(), saved.lex_values()
    policy = path.with_name(path.stem + "_policy.npz")
    if path.suffix == ".json" and policy.is_file():  # the race's JSON: its values are beside it
        raise ValueError(f"{path} is the race's summary; advise reads its saved solution: "
                         f"`strongsolve ludo advise {policy} ...`")
    try:
        board, enc, arrays = load_policy(path)
    except FileNotFoundError as err:
        raise ValueError(f"{path}: not a race solution with its board ({err}); write one with "
                         f"`{policy_command(path)}`") from None
    return board, enc, arrays["value"]


def write_summary(path, doc):
    """Write a result document of ``ludo race`` or ``ludo rolls`` to ``path`` with its checksum,
    atomically; inside a workflow job with the run's command (``rerun``).

    Raises
    ------
    StoreWriteError
        Disk full or directory not writable; nothing is left at ``path``.
    """
    record = job_record()
    write_json_checked(path, dict(doc, **{RECORD_KEY: record}) if record else doc)


def load_summary(path):
    """The verified result document ``path`` (``race_p<k>.json``, ``rolls_<die>.json``), without
    its checksum.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    CorruptResultError
        Unreadable, without a checksum or not matching it (an edited win probability); the message
        names the file and the command that writes it again (hints.summary_hint).
    ValueError
        A verified document that is not a Ludo result.
    """
    doc = read_json_checked(path, summary_hint)
    if doc.get("game") not in ("ludo", "ludo-race"):
        raise ValueError(f"{path}: not a Ludo result (game {doc.get('game')!r}); write it again "
                         f"with `{summary_hint(path)}`")
    return doc
