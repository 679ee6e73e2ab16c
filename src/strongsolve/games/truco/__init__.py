"""Heads-up Truco Paulista: rules, lossless abstraction, hand trees, the score grid by CFR and DP.

Role modules (the same in every game)
-------------------------------------
rules     the rules over physical cards, pinned with their sources (pagat.com "Brazilian Truco")
encoding  strength classes, vira classes, abstract hands and deal pairs with physical weights
stages    the drivers of the workflow's jobs: ``groups`` (a group of the 11 row by discounted CFR,
          its fixed point, summaries) and ``grid`` (a tier of the score grid by DP over the score)
saved     one zarr group per solved subgame, written atomically, verified on every load
advice    the equilibrium mix at a decision, for physical cards (CLI and lab)
hints     the rule that rebuilds a stored subgame, the commands that solve the 11 row or a region

The game trees they share
-------------------------
tree      one hand as a ``kernels.cfr.TabularGame`` over any typed deck (cards, raises, answers)
forest    a hand's raise tree as a ``kernels.forest_cfr.Forest``, built deal group by deal group
pruning   the lossless pruning of the raise ladder
subgames  subgame keys (role-ordered score, vira class), the 11-row groups and utility tables
sizes     raise-tree sizes per tier and vira class, counted without holding a whole tree
line      a typed line of play, checked and mapped to an information set
compare   the share of real play where two solved subgames' equilibria differ
"""
