"""strongsolve: exact (strong) solutions of stochastic games, layer by layer.

Subpackages
-----------
kernels   game-agnostic numba kernels (Bellman backups, value/policy iteration, sort-unique)
codecs    Elias-Fano coding of sorted uint64 ID layers
store     per-layer zarr files: atomic writes, checksums, verified loads
games     one subpackage or module per game (rules and encoding only, plus stage drivers)
"""

__version__ = "0.1.0"
