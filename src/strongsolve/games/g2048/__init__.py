"""2048 on small boards, strongly solved by age layers.

Role modules (the same in every game)
-------------------------------------
rules     boards, moves, spawns, shapes, targets and board text (a sub-package)
encoding  compact IDs, Elias-Fano afterstate codes, expansions (a sub-package)
stages    forward, backward, one block of both, report, plots, optimal-play store (a sub-package)
saved     a run directory: its layers' paths, verified reads and identity (``Run``)
advice    a solved run read back: the value and best move of any board
hints     the commands that rebuild a run's damaged or missing files

play      games played with the optimal policy, against the exact expected score
"""
