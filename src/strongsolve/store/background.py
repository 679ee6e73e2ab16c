"""Overlap a stage's file writes and reads with its computation.

A layer write (zarr, checksums, fsync) or read costs 15-30 ms of mostly waiting, once per age; a
3x3 solve has 2 x 1021 small layers, so done in line they were a third of its wall time while the
second core sat idle. :class:`Background` runs them on helper threads: the stage submits the write
of age n and goes on with age n + 2; it prefetches the layer it will read next. Every write is still
atomic (store.layers); the stage waits for all of them (and re-raises their errors) before it writes
its block manifest, so a manifest never lists a layer that is not on disk.

A small layer's write was mostly its fsyncs (about 4 ms each, three or four per layer), and four
helper threads overlapped them. Small layers are now written without fsyncs and flushed
once per block (:func:`submit_layer_write`), so a write is a few file calls; one helper thread does
them, and :meth:`Background.submit_small` lets a stage keep up to ``small_depth`` small writes
pending besides its ``depth`` large ones, so memory stays bounded by ``depth`` large layers plus
``small_depth`` small ones.
"""

from concurrent.futures import ThreadPoolExecutor

from .layers import SMALL_LAYER_BYTES, write_layer

IO_WORKERS = 1
"""Helper threads of a 2048 stage's I/O. Four overlapped the fsyncs of small layers (5.4 ms per
layer against 17.6 ms one at a time, ext4, 2026-12-02); without those fsyncs, the extra threads only
contend for the GIL: the 3x3 solve in one job took 24.4 CPU s (5.8 system) with four, 19.3 (2.1
system) with one (`strongsolve 2048 solve-block`, 2 threads, load 6, 2026-12-02)."""
SMALL_PENDING = 16
"""Small layer writes a 2048 stage keeps pending (each at most
:data:`strongsolve.store.layers.SMALL_LAYER_BYTES` of arrays)."""


class Background:
    """Helper threads for I/O, with at most ``depth`` tasks pending (bounded memory), and up to
    ``small_depth`` small ones more.

    Use as a context manager; leaving it waits for every task and re-raises the first error. With
    one worker, tasks run in the order submitted.

    Parameters
    ----------
    depth : int
        Tasks submitted by :meth:`submit` that may be pending at once.
    workers : int
        Helper threads.
    small_depth : int
        Tasks submitted by :meth:`submit_small` that may be pending on top of ``depth``.
    """

    def __init__(self, depth=2, workers=1, small_depth=0):
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="strongsolve-io")
        self._pending = []  # (future, small), oldest first
        self._depth = depth
        self._small_depth = small_depth

    def _wait_oldest(self):
        self._pending.pop(0)[0].result()

    def submit(self, fn, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` on a helper thread; returns its future. Blocks while
        ``depth`` such tasks are pending (waiting for the oldest tasks first), and re-raises the
        error of a finished one."""
        while sum(not small for _, small in self._pending) >= self._depth:
            self._wait_oldest()
        return self._add(fn, args, kwargs, small=False)

    def submit_small(self, fn, *args, **kwargs):
        """As :meth:`submit`, for a task that holds little memory (a small layer's write,
        :data:`strongsolve.store.layers.SMALL_LAYER_BYTES`): it blocks only while ``depth +
        small_depth`` tasks are pending."""
        return self._add(fn, args, kwargs, small=True)

    def _add(self, fn, args, kwargs, small):
        while len(self._pending) >= self._depth + self._small_depth:
            self._wait_oldest()
        future = self._pool.submit(fn, *args, **kwargs)
        self._pending.append((future, small))
        return future

    def wait(self):
        """Wait for every pending task; re-raise the first error."""
        while self._pending:
            self._wait_oldest()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.wait()
        finally:
            self._pool.shutdown(wait=True)


def submit_layer_write(io, path, encode, nbytes, **write_options):
    """Encode a layer and write it on ``io``'s helper threads (:class:`Background`).

    ``encode()`` returns the layer's ``(arrays, attrs)``. For a small layer (``nbytes``, a bound of
    its arrays' bytes, at most :data:`.layers.SMALL_LAYER_BYTES`) it runs on the helper thread: a
    stage's coding and checksums (numba and hashlib, without the GIL) then overlap its next age
    instead of delaying it (1.4 of the 3x3 forward's 12.8 s on its one busy thread). A
    large layer is coded at once on the calling thread (its coders use numba's threads, and its
    coding buffers must not add to the next age's peak memory).

    A small layer is written without its own fsyncs, as one of several pending small writes; a
    large one is flushed to disk file by file. The stage calls
    :func:`.atomic.sync_file_system` after the last write and before its block manifest (one flush
    per block instead of three or four fsyncs per small layer: most of a 3x3 solve's file time).
    Returns the write's future; its errors (the coder's too) are re-raised by the stage's
    next wait.
    """
    if nbytes > SMALL_LAYER_BYTES:
        return io.submit(write_layer, path, *encode(), **write_options)

    def task():
        write_layer(path, *encode(), durable=False, **write_options)

    return io.submit_small(task)
