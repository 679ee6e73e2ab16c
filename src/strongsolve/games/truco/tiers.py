"""The tiers of Truco's score grid and the summary file each tier's workflow job writes.

A score outside the 11 row belongs to the tier of its pruned raise ladder (pruning.py: ``t1`` =
min score 9-10, ``t2`` = 6-8, ``t3`` = 3-5, ``t4`` = 0-2); the 11 row is the tier ``row11``. The
grid is solved tier by tier (stages/grid.py); the repair hints name a tier's job by its output
(hints.py).
"""

from .pruning import tier as raise_tier
from .subgames import in_row11

TIERS = ("row11", "t1", "t2", "t3", "t4")
TIER_LOWEST_MIN = {"row11": 0, "t1": 9, "t2": 6, "t3": 3, "t4": 0}  # lowest min(a, b) of a tier


def score_tier(a, b):
    """The tier of a role-ordered score: ``"row11"`` or ``"t1"`` .. ``"t4"``."""
    return "row11" if in_row11(a, b) else f"t{raise_tier(a, b)}"


def tier_csv(grid_dir, tier, min_score):
    """The summary file the workflow's job for ``tier`` writes when it solves the region of scores
    with min(a, b) >= ``min_score``: ``<grid_dir>/<tier>_min<m>.csv``, m the larger of
    ``min_score`` and the tier's lowest minimum."""
    return f"{grid_dir}/{tier}_min{max(min_score, TIER_LOWEST_MIN[tier])}.csv"
