"""The two solvers of a Ludo race: ``expansion`` (the whole expansion in memory, value iteration
and the optimal policy) and ``values`` (one float64 per position, for races too large to expand)."""
