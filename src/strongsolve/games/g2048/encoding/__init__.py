"""How 2048 positions are numbered and stored: compact IDs of canonical boards (``compact_ids``),
a layer's afterstates as Elias-Fano codes (``afterstate_code``), and the expansion of states and
afterstates into their successors (``expand``)."""
