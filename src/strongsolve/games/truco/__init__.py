"""Heads-up Truco Paulista (issue 9): rules, lossless abstraction, hand trees, the 11-row solve.

Modules
-------
rules        the rules over physical cards, pinned with their sources (pagat.com "Brazilian Truco")
abstraction  strength classes, vira classes, abstract hands and deal pairs with physical weights
tree         one hand without raises as a ``kernels.cfr.TabularGame`` over any typed deck
subgames     subgame keys (role-ordered score, vira class), the 11-row groups and utilities
store        one zarr group per solved subgame, written atomically
solve        the stage driver: a group of the 11 row by discounted CFR, summaries (``python -m``)
"""
