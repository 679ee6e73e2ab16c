"""Overlap a stage's file writes and reads with its computation (issue 8).

A layer write (zarr, checksums, fsync) or read costs 15-30 ms of mostly waiting, once per age; a
3x3 solve has 2 x 1021 small layers, so done in line they were a third of its wall time while the
second core sat idle. :class:`Background` runs them on one helper thread: the stage submits the
write of age n and goes on with age n + 2; it prefetches the layer it will read next. Every write is
still atomic (store.layers); the stage waits for all of them (and re-raises their errors) before it
writes its block manifest, so a manifest never lists a layer that is not on disk.
"""

from concurrent.futures import ThreadPoolExecutor


class Background:
    """One helper thread for I/O, with at most ``depth`` tasks pending (bounded memory).

    Use as a context manager; leaving it waits for every task and re-raises the first error.
    """

    def __init__(self, depth=2):
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="strongsolve-io")
        self._pending = []
        self._depth = depth

    def submit(self, fn, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` on the helper thread; returns its future. Blocks while
        ``depth`` tasks are pending, and re-raises the error of a finished one."""
        while len(self._pending) >= self._depth:
            self._pending.pop(0).result()
        future = self._pool.submit(fn, *args, **kwargs)
        self._pending.append(future)
        return future

    def wait(self):
        """Wait for every pending task; re-raise the first error."""
        while self._pending:
            self._pending.pop(0).result()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.wait()
        finally:
            self._pool.shutdown(wait=True)
