"""External sort-unique of uint64 IDs in bounded memory.

The forward pass produces a layer's IDs chunk by chunk. :class:`SortedRuns` keeps the chunks as
they come (unsorted: sorting each chunk and then their union would sort every ID twice) until they
hold an eighth of ``memory_limit``, then sorts them into one unique run and spills it to disk (raw
little-endian uint64). :meth:`SortedRuns.merged` streams the sorted unique union as blocks by a
k-way merge over the runs (:func:`strongsolve.kernels.sort.merge_unique`), read window by window:
each block takes, from every run, the values up to a bound chosen so that no run contributes more
than its share, so a block never exceeds the block size. The runs are read with plain file reads,
not memory-mapped, since the pages of a mapping count in the process's resident memory until it is
closed. The result is the same set in the same order whatever the chunking or the limit (determinism).
A spill that meets a full disk raises :class:`strongsolve.store.errors.StoreWriteError` naming the
file, "disk full" and the fixes (numpy's own short-write error named neither).

Memory (the process, not only the runs, stays within ``memory_limit`` on top of the layer
window): sorting a run costs about three times its size at the moment of the sort
(:func:`strongsolve.kernels.sort.sort_unique_runs`: the chunks until they are scattered, the
scattered copy, the sorted buckets, the result; up to five times when one bucket holds nearly
every ID). So the runs held are at most
``memory_limit / 8`` (their spill sort peaks at half the limit) and a merged block at most
``memory_limit / 16`` (its windows and the pairwise merges' outputs, about three times its size
while it is built), which leaves room for a second SortedRuns and the tasks in flight.
"""

import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..store.errors import StoreWriteError
from ..store.space import write_error_reason
from .sort import merge_unique, require_uint64, sort_unique_runs


class SortedRuns:
    """Accumulate uint64 chunks; read back their sorted unique union in blocks.

    Parameters
    ----------
    memory_limit : int, optional
        Bytes of runs held in memory before spilling (None: never spill).
    spill_dir : str or Path, optional
        Where spilled runs go (a private subdirectory is made and removed by :meth:`close`).
    """

    def __init__(self, memory_limit=None, spill_dir=None):
        if memory_limit is not None and memory_limit < 1024:
            raise ValueError(f"memory_limit = {memory_limit!r} bytes is not allowed; allowed: >= 1024")
        self.memory_limit = memory_limit
        self._mem = []
        self._mem_bytes = 0
        self._dir = Path(spill_dir) / f"runs-{uuid.uuid4().hex[:8]}" if spill_dir else None
        self._files = []
        self.spilled_runs = 0

    def add(self, ids):
        """Add a chunk of IDs (uint64[N], any order, repeats allowed), held as given until a spill
        or the merge: its ``nbytes`` count toward the limit, so pass a compact array, not a view of
        a larger buffer.

        Raises
        ------
        TypeError
            If ``ids`` is not uint64.
        """
        require_uint64(ids, "SortedRuns")
        self._mem.append(ids)
        self._mem_bytes += ids.nbytes
        if self.memory_limit is not None and self._mem_bytes > self.memory_limit // 8:
            self._spill()

    def _spill(self):
        if self._dir is None:
            raise ValueError("memory_limit is set but no spill directory was given")
        batch, self._mem, self._mem_bytes = self._mem, [], 0
        run = sort_unique_runs(batch)  # empties the batch: the chunks go once scattered
        path = self._dir / f"run_{len(self._files):05d}.bin"
        with self._writing(path) as f:
            f.write(run.astype("<u8", copy=False).data)
        self._files.append((path, run.shape[0]))
        self.spilled_runs += 1

    def merged(self, block_bytes=None):
        """Yield the sorted unique union as consecutive uint64 blocks (increasing, disjoint).

        Parameters
        ----------
        block_bytes : int, optional
            Largest block (default: ``memory_limit / 16``; everything in one block when no limit is
            set and nothing was spilled).
        """
        if not self._files:
            if self._mem:
                batch, self._mem, self._mem_bytes = self._mem, [], 0
                yield sort_unique_runs(batch)
            return
        if self._mem:
            self._spill()
        block = max(1, (block_bytes or max(8192, self.memory_limit // 16)) // 8)
        pos = [0] * len(self._files)
        while True:
            active = [k for k, (_, length) in enumerate(self._files) if pos[k] < length]
            if not active:
                return
            step = max(1, block // len(active))
            windows = {k: np.fromfile(self._files[k][0], dtype="<u8", offset=8 * pos[k],
                                      count=min(step, self._files[k][1] - pos[k])).astype(np.uint64, copy=False)
                       for k in active}
            # inclusive bound: the smallest of the windows' ends, so no run gives more than `step`
            hi = min(w[-1] for w in windows.values())
            parts = []
            for k, window in windows.items():
                end = int(np.searchsorted(window, hi, side="right"))
                parts.append(window[:end])
                pos[k] += end
            del windows
            yield merge_unique(parts)

    def union(self):
        """The whole sorted unique union as one uint64 array.

        Without spilled runs this is one in-memory sort; with them the merged blocks go to a file
        first and are read back in one piece, so the union is never held twice."""
        if not self._files:
            return next(self.merged(), np.empty(0, np.uint64))
        path = self._dir / "union.bin"
        with self._writing(path) as f:
            for block in self.merged():
                f.write(block.astype("<u8", copy=False).data)
        out = np.fromfile(path, dtype=np.uint64)
        path.unlink()
        return out

    @contextmanager
    def _writing(self, path):
        """An open binary file at ``path`` (Python's writes raise ENOSPC with its errno, where
        numpy's ``tofile`` said only "N requested and M written"); a failed write raises
        :class:`StoreWriteError` naming the file and the fixes, and removes the file."""
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as f:
                yield f
        except OSError as err:
            path.unlink(missing_ok=True)
            out = StoreWriteError(
                f"cannot spill sorted IDs to {path}: {write_error_reason(err, self._dir)}. The "
                f"forward pass spills its sorted runs to disk when they pass memory_limit / 8 "
                f"(memory_limit = {self.memory_limit} bytes). Free space on that file system, or "
                "set memory_limit higher (config key memory_limit; null never spills) or the "
                "results directory (config key results) on a larger disk, then run the workflow "
                "again (finished layers are kept)")
            out.errno = err.errno
            raise out from err

    def close(self):
        """Remove the spilled runs."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._mem, self._files = [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
