"""The stages of a 2048 solve, as the workflow's jobs run them: the forward pass by age
(``forward``), the backward pass (``backward``), both for one block of ages (``pipeline``, with the
layers kept in memory between them, ``kept``), the report (``report``) and its plots (``plots``),
and the optimal-play store (``policy``)."""
