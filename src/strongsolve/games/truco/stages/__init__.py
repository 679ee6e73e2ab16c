"""The drivers of the workflow's Truco jobs: ``groups`` solves a group of the 11 row (discounted
CFR, the fixed point between its two hands of eleven), ``grid`` a tier of the score grid (DP over
the score from the 11 row down). Both are run by ``strongsolve truco`` subcommands."""
