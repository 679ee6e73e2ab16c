"""The rules of 2048 on an R x C board: boards packed in 64 bits and their moves (``board``), spawn
probabilities (``spawn``), board shapes and the last age (``shape``), reach-a-tile targets
(``targets``), and boards as text (``boardtext``)."""
