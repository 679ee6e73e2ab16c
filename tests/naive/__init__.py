"""Plain-Python reference solvers, one module per game (g2048, truco, ludo, shutbox).

Each is a slow, obviously correct brute force written separately from the fast numba kernels in
``src/strongsolve``: no numba, no layering tricks, no shared code with the package. The tests
compare the fast solvers against these references on small instances.
"""
