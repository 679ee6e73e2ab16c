"""A digest of a Truco hand tree, shared by the tests that pin the trees built before a change."""

import hashlib

import numpy as np


def tree_digest(tree):
    """The first 16 hex digits of the SHA-256 of every array of ``tree`` (a ``HandTree``): the game's
    arrays in ``TabularGame`` field order, then the outcomes and the information-set keys."""
    g = tree.game
    h = hashlib.sha256()
    for a in (g.node_type, g.node_player, g.node_infoset, g.child_ptr, g.child, g.child_prob,
              g.infoset_ptr, g.node_depth, tree.outcome, tree.infoset_key):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]
