"""Every 2048 board of a shape, grouped by age: the exhaustive inputs of the encoding tests."""

import functools

import numpy as np


@functools.lru_cache(maxsize=None)
def all_boards_by_age(rows, cols, top=7):
    """Every board of a shape with exponents 0..top, grouped by age, sorted."""
    cells = rows * cols
    grid = np.indices((top + 1,) * cells).reshape(cells, -1)[::-1]  # cell 0 varies fastest
    ids = (grid.astype(np.uint64).T << (4 * np.arange(cells, dtype=np.uint64))).sum(1,
                                                                                   dtype=np.uint64)
    ages = np.where(grid > 0, 1 << grid, 0).sum(0)
    order = np.argsort(ids)
    ids, ages = ids[order], ages[order]
    return {int(a): ids[ages == a] for a in np.unique(ages)}
