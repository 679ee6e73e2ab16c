"""Afterstate layers kept in memory from the forward to the backward stage of one process.

A small board solved in one job (:func:`.pipeline.solve_block`, the workflow's ``g2048_solve`` rule)
computes every afterstate layer and then needs them all again, in the reverse order, for the
backward pass. Reading and decoding them back from their files cost the 3x3 backward stage about a
third of its time (1,021 layers); holding the sorted IDs costs 8 bytes per afterstate
(251 MB for 3x3). :class:`KeptLayers` holds them up to a byte budget; the ages it could not hold
are read from their layers as before, so the result is the same whatever the budget.
"""

import numpy as np

KEEP_BYTES = 512 << 20
"""Default budget of :class:`KeptLayers`: every 3x3 layer (251 MB) fits, a 4x3 run does not have
to."""


class KeptLayers:
    """Sorted afterstate IDs by age, up to ``max_bytes`` of arrays.

    Parameters
    ----------
    max_bytes : int
        Budget of the arrays held (bytes); a layer that would exceed it is not held.
    """

    def __init__(self, max_bytes=KEEP_BYTES):
        self.max_bytes = int(max_bytes)
        self.bytes = 0
        self._layers = {}

    def add(self, age, ids):
        """Hold ``ids`` (uint64[A], the sorted afterstate IDs of ``age``) if the budget allows;
        returns whether it was held."""
        ids = np.asarray(ids, np.uint64)
        if age in self._layers or self.bytes + ids.nbytes > self.max_bytes:
            return False
        self._layers[age] = ids
        self.bytes += ids.nbytes
        return True

    def pop(self, age):
        """The IDs held for ``age`` (released from the budget), or None when not held."""
        ids = self._layers.pop(age, None)
        if ids is not None:
            self.bytes -= ids.nbytes
        return ids

    def __contains__(self, age):
        return age in self._layers

    def __len__(self):
        return len(self._layers)
