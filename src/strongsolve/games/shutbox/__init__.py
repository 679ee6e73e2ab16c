"""Shut the Box: the flip-one game (minimum expected rolls) and the standard game (probability of
shutting the box, or expected open sum), solved exactly.

Role modules (the same in every game)
-------------------------------------
rules     the two rule sets, their parameters, rolls and the cards a roll offers
encoding  the variants as CSR expansions over masks of cards or tiles
stages    value or policy iteration, the exact solve in fractions, the saved policy tables
saved     the one reader and writer of a result file (JSON, checksummed)
advice    every choice at a position and a roll, with its value
hints     the command that writes a result file again
"""
