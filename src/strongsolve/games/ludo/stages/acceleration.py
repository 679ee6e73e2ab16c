"""Geometric-tail (Lyusternik) extrapolation of the value solver's sweeps, with a safeguard.

Captures send a piece home and make the slow modes of the race's sweeps (:mod:`.values`): after a
few sweeps the largest change shrinks by a nearly constant ratio r per sweep (0.66 to 0.91 on the
classic board, bench/RECORD.md). When the error is one geometric mode, a sweep's change c at a
position is followed by r c, r^2 c, ...: the fixed point lies ``c r / (1 - r)`` beyond the current
value (Lyusternik's extrapolation; Bertsekas and Tsitsiklis, *Parallel and Distributed Computation*,
1989, section 2.6). So after each sweep:

1. r is the ratio of the sweep's largest change to the one before. Once the last :data:`RATIOS`
   ratios agree within :data:`AGREE` (relative) and r < :data:`MAX_RATIO`, every value moves by
   ``factor * change * r / (1 - r)`` (``change``: that position's change in the sweep, float32, kept
   by the sweep beside the values: 4 bytes per position) and is clipped to [0, 1] (a win
   probability). The ratio history then starts again from the next sweep.
2. Safeguard: if the sweep after a jump changes some value by more than the sweep before it, the
   factor (1 at first) is halved for every later jump (and again after each such failure).
3. No jump while the largest change is below :data:`PLAIN_BELOW` times the tolerance: the last
   sweeps are plain ones, so the stop rule (a plain sweep changed no value by more than tol)
   certifies the fixed point as it does without the extrapolation.

The jump is elementwise (each position from its own value and change), so the values stay the same
bit for bit on any thread count. Its state (the largest changes since the last jump, the factor, the
pending check of a jump) is a small dict saved with each checkpoint; a checkpoint is written after
the jump decision and the next sweep overwrites every change, so a resumed solve continues exactly as
an unbroken one.
"""

import numpy as np
from numba import prange

from ....kernels.options import njit_parallel

RATIOS = 3  # successive ratios of largest changes that must agree before a jump
AGREE = 0.01  # their largest over their smallest at most 1 + AGREE
MAX_RATIO = 0.97  # no jump at a slower ratio: r / (1 - r) above 32 amplifies the change's noise
PLAIN_BELOW = 100.0  # no jump when the largest change is below this times the tolerance


@njit_parallel
def _jump(value, change, k):
    # value += k * change, clipped to [0, 1], each position on its own
    m = value.shape[0]
    for i in prange(m):
        for j in range(value.shape[1]):
            x = value[i, j] + k * np.float64(change[i, j])
            value[i, j] = min(1.0, max(0.0, x))


class Extrapolation:
    """The jump decisions of one solve (module docstring).

    Parameters
    ----------
    tol : float
        The solve's tolerance; no jump when the largest change is below ``PLAIN_BELOW * tol``.
    state : dict, optional
        :meth:`state` of a checkpoint to resume from (None: a fresh solve).

    Raises
    ------
    ValueError
        ``tol`` <= 0, or a ``state`` without the keys :meth:`state` writes.
    """

    def __init__(self, tol, state=None):
        if not tol > 0:
            raise ValueError(f"tol must be > 0, got {tol}")
        self.tol = float(tol)
        self.changes = []  # largest changes since the last jump, at most RATIOS + 1
        self.factor = 1.0
        self.before_jump = None  # the largest change of the sweep a jump followed, until checked
        self.jumps = 0
        if state is not None:
            try:
                self.changes = [float(x) for x in state["changes"]]
                self.factor = float(state["factor"])
                self.before_jump = (None if state["before_jump"] is None
                                    else float(state["before_jump"]))
                self.jumps = int(state["jumps"])
            except (KeyError, TypeError) as err:
                raise ValueError(f"extrapolation state {state!r} lacks {err}: resume from a "
                                 "checkpoint this version wrote, or remove the checkpoints") \
                    from None

    def state(self):
        """The state as a JSON-able dict (saved in a checkpoint's attributes)."""
        return {"changes": list(self.changes), "factor": self.factor,
                "before_jump": self.before_jump, "jumps": self.jumps}

    def ratio(self):
        """The ratio a jump would use now, or None when the history does not allow one."""
        c = self.changes
        if self.before_jump is not None or len(c) < RATIOS + 1 or c[-1] < PLAIN_BELOW * self.tol:
            return None
        if min(c[:-1]) <= 0:
            return None
        ratios = [b / a for a, b in zip(c[:-1], c[1:])]
        r = ratios[-1]
        if not (r < MAX_RATIO and max(ratios) <= (1.0 + AGREE) * min(ratios)):
            return None
        return r

    def after_sweep(self, value, change, delta):
        """Record a sweep's largest change ``delta`` and jump when the rule allows.

        Parameters
        ----------
        value : float64[M, M]
            Changed in place by a jump.
        change : float32[M, M]
            Each value's change in the sweep just made (new minus old).
        delta : float
            The sweep's largest change, ``max |change|`` computed in float64.

        Returns
        -------
        float or None
            The multiplier of the change that was added (``factor * r / (1 - r)``), or None when
            no jump was made.
        """
        if self.before_jump is not None:  # the sweep after a jump: check it, start a new history
            if delta > self.before_jump:
                self.factor *= 0.5
            self.before_jump = None
            self.changes = [float(delta)]
            return None
        self.changes = (self.changes + [float(delta)])[-(RATIOS + 1):]
        r = self.ratio()
        if r is None:
            return None
        k = self.factor * r / (1.0 - r)
        _jump(value, change, k)
        self.before_jump = float(delta)
        self.jumps += 1
        return k
