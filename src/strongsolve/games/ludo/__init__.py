"""Ludo / aeroplane chess on one shared track: one piece's expected rolls and two-player races.

Modules
-------
rules     board files and the move rule (``Board``), one piece's expected rolls
encoding  the positions of a race (ranked tuples of rest cells) and their CSR expansion
stages    the two race solvers: ``expansion`` (value iteration over the whole expansion, the
          policy) and ``values`` (the values only, successors computed on the fly)
saved     the one reader and writer of a race's files: the policy ``.npz`` (checksummed), the
          values layers and their checkpoints
advice    every legal choice at a position and a roll, with the mover's win probability
hints     the commands that write a race's files again
"""
