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

:class:`ReducedRank` (``solve_values(..., extrapolation="rre")``) removes several slow modes at
once from three sweeps' changes, at 8 bytes per position instead of 4 (its docstring).
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


def _safeguard(state):
    # the safeguard's part of a saved state, shared by both extrapolations: (factor, the largest
    # change before a jump still to be checked or None, jumps); KeyError or TypeError if malformed
    before = state["before_jump"]
    return float(state["factor"]), None if before is None else float(before), int(state["jumps"])


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
                self.factor, self.before_jump, self.jumps = _safeguard(state)
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


# Reduced rank extrapolation in cycles (module docstring of ReducedRank)
HISTORY = 2  # float32 change slots kept beside the values (8 bytes per position)
FIRST_CYCLE = 3  # the first cycle's first sweep (sweeps 1-2 move the values most and least evenly)
RRE_PLAIN_BELOW = 10.0  # no jump when the largest change is below this times the tolerance


@njit_parallel
def _combine_jump(value, change, slots, coef):
    # value += sum_i coef[i] * change[slots[i]], clipped to [0, 1], each position on its own
    m = value.shape[0]
    for i in prange(m):
        for j in range(value.shape[1]):
            x = value[i, j]
            for s in range(slots.size):
                x += coef[s] * np.float64(change[slots[s], i, j])
            value[i, j] = min(1.0, max(0.0, x))


class ReducedRank:
    """Reduced rank extrapolation (RRE) of the sweeps in cycles of ``HISTORY + 1`` sweeps.

    The error of the sweeps near the fixed point is a mix of several slow modes, not one: on the
    bench boards the sweep's linearized iteration has a cluster of eigenvalues of modulus 0.63-0.67
    (one real, a complex pair) above others of modulus 0.4-0.6 (Ritz values of the changes;
    bench/RECORD.md, 2026-12-06), which the one-ratio jump of :class:`Extrapolation` cannot remove
    together. RRE (Mesina 1977, Eddy 1979; Smith, Ford and Sidi, SIAM Review 29, 1987; Sidi,
    *Vector Extrapolation Methods with Applications*, SIAM 2017, ch. 1) removes k of them from k + 1
    successive changes u_0..u_k (u_i = x_{i+1} - x_i, x_i the values before sweep i of the cycle):
    the weights g (sum 1) minimizing ``|sum_i g_i u_i|_2`` give the new values
    ``sum_i g_i x_{i+1} = x_{k+1} - sum_{l=1..k} (g_0 + ... + g_{l-1}) u_l``, then clipped to [0, 1].

    Memory: k = ``HISTORY`` changes in float32 slots (4 bytes per position each). The k + 1
    changes' dot products (a (k + 1) x (k + 1) Gram matrix, float64) are summed by the sweep that
    makes each change, before it overwrites the oldest slot (:class:`.values.Sweeper`), so u_0 is
    never needed beside u_1..u_k.

    Rules: cycles start at sweep :data:`FIRST_CYCLE`, and a new one right after each jump.
    Safeguard: if the sweep after a jump changes some value by more than the sweep before it,
    later jumps are scaled by a factor halved each such time (1 at first), and doubled back (up to
    1) after each jump that did not. No jump when the largest change is below
    :data:`RRE_PLAIN_BELOW` times the tolerance, so the last sweeps are plain and the stop rule
    certifies as without extrapolation. The jump is elementwise and the dot products are added in
    task order, so the values are the same bit for bit on any thread count.

    Checkpoints: the state (factor, pending check, jumps) is a small dict; the slots are not saved,
    so a checkpoint may only be written between cycles (:meth:`can_checkpoint`), where a resumed
    solve continues exactly as an unbroken one.

    Parameters
    ----------
    tol : float
    state : dict, optional
        :meth:`state` of a checkpoint to resume from.

    Raises
    ------
    ValueError
        ``tol`` <= 0, or a ``state`` that is not one of this class.
    """

    slots = HISTORY

    def __init__(self, tol, state=None):
        if not tol > 0:
            raise ValueError(f"tol must be > 0, got {tol}")
        self.tol = float(tol)
        self.order = []  # slots of the cycle's changes, oldest first
        self.gram = np.zeros((0, 0))
        self.factor = 1.0
        self.before_jump = None
        self.jumps = 0
        if state is not None:
            try:
                if state["method"] != "rre":
                    raise KeyError("method")
                self.factor, self.before_jump, self.jumps = _safeguard(state)
            except (KeyError, TypeError) as err:
                raise ValueError(f"extrapolation state {state!r} is not a reduced rank one ({err}): "
                                 "resume with the extrapolation that wrote it, or remove the "
                                 "checkpoints") from None

    def state(self):
        """The state as a JSON-able dict (saved in a checkpoint's attributes, between cycles)."""
        return {"method": "rre", "factor": self.factor, "before_jump": self.before_jump,
                "jumps": self.jumps}

    def can_checkpoint(self):
        """Whether the values and :meth:`state` alone resume the solve (no change is held)."""
        return not self.order

    def slots_for(self, sweeps):
        """``(reads, dest)`` for the sweep after ``sweeps`` sweeps: the slots whose products the
        sweep sums, and the slot its change goes to (0 and no reads outside a cycle)."""
        if not self.order and sweeps + 1 < FIRST_CYCLE:
            return (), 0
        if len(self.order) < HISTORY:
            free = [s for s in range(HISTORY) if s not in self.order]
            return tuple(self.order), free[0]
        return tuple(self.order), self.order[0]

    def after_sweep(self, value, change, delta, products, sweeps):
        """Take the sweep's change (already in its slot) and jump at the end of a cycle.

        Parameters
        ----------
        value : float64[M, M]
            Changed in place by a jump.
        change : float32[HISTORY, M, M]
            The slots (:class:`.values.Sweeper`'s ``change``).
        delta : float
            The sweep's largest change.
        products : float64[len(reads) + 1]
            The sweep's change dotted with the slots it read, then with itself.
        sweeps : int
            Sweeps made, this one included.

        Returns
        -------
        numpy.ndarray or None
            The coefficients of the slots added to the values (:meth:`slots_for` order), or None.
        """
        if self.before_jump is not None:  # the sweep after a jump: the safeguard
            self.factor = 0.5 * self.factor if delta > self.before_jump else min(1.0, 2 * self.factor)
            self.before_jump = None
        if not self.order and sweeps < FIRST_CYCLE:
            return None
        reads, dest = self.slots_for(sweeps - 1)
        k = len(self.order)
        gram = np.zeros((k + 1, k + 1))
        gram[:k, :k] = self.gram
        gram[k, :k] = gram[:k, k] = products[:k]
        gram[k, k] = products[k]
        if k < HISTORY:
            self.order.append(dest)
            self.gram = gram
            return None
        # k + 1 = HISTORY + 1 changes: u_0 (overwritten by this sweep's) and u_1..u_k
        slots = self.order[1:] + [dest]
        self.order, self.gram = [], np.zeros((0, 0))
        if delta < RRE_PLAIN_BELOW * self.tol:
            return None
        # min g' G g subject to sum(g) = 1, by its KKT system (least squares: G may be singular
        # when the changes span fewer than k + 1 modes)
        kkt = np.ones((k + 2, k + 2))
        kkt[:k + 1, :k + 1] = gram / max(gram.diagonal().max(), 1e-300)  # scaled to the ones
        kkt[k + 1, k + 1] = 0.0
        rhs = np.zeros(k + 2)
        rhs[k + 1] = 1.0
        try:
            g = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:k + 1]
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(g)):
            return None
        coef = -self.factor * np.cumsum(g)[:-1]  # of u_1..u_k
        _combine_jump(value, change, np.asarray(slots, np.int64), coef)
        self.before_jump = float(delta)
        self.jumps += 1
        return coef
