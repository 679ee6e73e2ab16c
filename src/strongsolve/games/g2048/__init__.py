"""2048 on r x c boards (r, c <= 4): rules and encoding (board), layer expansion kernels (expand),
the stages of the strong solve (forward, backward, report) and their run layout (run)."""
