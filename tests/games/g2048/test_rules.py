"""2048 rules kernel (board IDs, moves, symmetry, age, start) against the plain reference, and the
layer look-ups of the backward pass."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from naive import g2048 as naive
from strongsolve.codecs.eliasfano import EliasFanoBuilder
from strongsolve.games.g2048.rules import board as fast
from strongsolve.games.g2048.encoding.expand import has_tile, layer_index_of_increasing

# Fixed lines from tests/cases.json "2048_moves" (source: the 2048 rules as implemented by
# the original game and the 4x3 solution of Kaneko & Yamashita 2025).
LINE_CASES = [
    ((2, 2, 2), (4, 2, 0), 4),
    ((2, 2, 2, 2), (4, 4, 0, 0), 8),
    ((4, 2, 2), (4, 4, 0), 4),
    ((2, 0, 2), (4, 0, 0), 4),
    ((4, 4, 8, 8), (8, 16, 0, 0), 24),
    ((2, 4, 8), (2, 4, 8), 0),
]


def test_line_cases_are_the_public_ones(cases):
    published = [
        (tuple(c["line"]), tuple(c["after"]), c["reward"])
        for c in cases["2048_moves"]["lines_toward_wall_first"]
    ]
    assert LINE_CASES == published


def embed(line, direction, copies):
    """A board holding ``line`` (read from the wall inward) ``copies`` times, toward ``direction``."""
    toward_far_end = direction in ("right", "down")
    cells = tuple(reversed(line)) if toward_far_end else tuple(line)
    rows = tuple(cells for _ in range(copies))
    if direction in ("up", "down"):
        rows = tuple(zip(*rows))
    return tuple(tuple(row) for row in rows)


@pytest.mark.parametrize("copies", [1, 2, 3, 4])
@pytest.mark.parametrize("direction", naive.DIRECTIONS)
@pytest.mark.parametrize("line, after, reward", LINE_CASES)
def test_line_cases_naive(line, after, reward, direction, copies):
    assert naive.slide_line(line) == (after, reward)
    board = embed(line, direction, copies)
    new, got_reward, changed = naive.move(board, direction)
    assert new == embed(after, direction, copies)
    assert got_reward == copies * reward
    assert changed == (after != line)


@pytest.mark.parametrize("copies", [1, 2, 3, 4])
@pytest.mark.parametrize("direction", naive.DIRECTIONS)
@pytest.mark.parametrize("line, after, reward", LINE_CASES)
def test_line_cases_fast(line, after, reward, direction, copies):
    board = embed(line, direction, copies)
    rows, cols = len(board), len(board[0])
    index = fast.DIRECTIONS.index(direction)
    new_id, got_reward, changed = fast.move(fast.encode(board), index, rows, cols)
    assert new_id == naive.board_id(embed(after, direction, copies))
    assert got_reward == copies * reward
    assert changed == (after != line)


def test_directions_order():
    assert fast.DIRECTIONS == naive.DIRECTIONS


SHAPES = [(r, c) for r in range(1, 5) for c in range(1, 5) if r * c >= 2]


@st.composite
def boards(draw, max_exponent=14, exponents=None):
    """Random boards of 1..4 x 1..4 cells (not 1x1) with exponents 0 (empty) .. max_exponent, or
    drawn from ``exponents``."""
    # 1x1 is no 2048 board (the start places two tiles), so the kernel rejects it.
    rows, cols = draw(st.sampled_from(SHAPES))
    cell = st.sampled_from(exponents) if exponents else st.integers(0, max_exponent)
    exponents = draw(st.lists(cell, min_size=rows * cols, max_size=rows * cols))
    values = [1 << e if e else 0 for e in exponents]
    return tuple(tuple(values[r * cols:(r + 1) * cols]) for r in range(rows))


def shape(board):
    return len(board), len(board[0])


# The first examples compile the numba kernels, so no per-example deadline.
property_settings = settings(max_examples=300, deadline=None)


@property_settings
@given(boards(max_exponent=15))
def test_encode_decode_match_naive(board):
    rows, cols = shape(board)
    board_id = fast.encode(board)
    assert board_id == naive.board_id(board)
    decoded = fast.decode(board_id, rows, cols)
    assert decoded.dtype == np.int64
    assert decoded.shape == (rows, cols)
    assert decoded.tolist() == [list(row) for row in board]


@property_settings
@given(boards(), st.sampled_from(naive.DIRECTIONS))
def test_move_matches_naive(board, direction):
    rows, cols = shape(board)
    new, reward, changed = naive.move(board, direction)
    new_id, fast_reward, fast_changed = fast.move(
        fast.encode(board), fast.DIRECTIONS.index(direction), rows, cols
    )
    assert (new_id, fast_reward, fast_changed) == (naive.board_id(new), reward, changed)


@property_settings
@given(boards(), st.sampled_from(naive.DIRECTIONS))
def test_move_keeps_age(board, direction):
    rows, cols = shape(board)
    board_id = fast.encode(board)
    new_id, _, _ = fast.move(board_id, fast.DIRECTIONS.index(direction), rows, cols)
    assert fast.age(board_id) == naive.age(board)
    assert fast.age(new_id) == fast.age(board_id)


@property_settings
@given(boards(max_exponent=15))
def test_canonical_matches_naive(board):
    rows, cols = shape(board)
    assert fast.canonical(fast.encode(board), rows, cols) == naive.board_id(naive.canonical(board))


@property_settings
@given(boards(max_exponent=15))
def test_canonical_invariant_under_symmetry(board):
    rows, cols = shape(board)
    images = naive.symmetries(board)
    assert len(images) == (8 if rows == cols else 4)
    expected = fast.canonical(fast.encode(board), rows, cols)
    for image in images:
        assert fast.canonical(fast.encode(image), len(image), len(image[0])) == expected


@pytest.mark.parametrize("rows, cols", SHAPES)
def test_canonicalize_batch_matches_naive(rows, cols):
    # the vectorised batch (the kernels canonicalise a chunk's boards at once) against the naive
    # canonical board, on random boards of every shape with all 16 exponents
    rng = np.random.default_rng(rows * 5 + cols)
    boards = [[[0 if e == 0 else 2 ** int(e) for e in row]
               for row in rng.integers(0, 16, (rows, cols))] for _ in range(400)]
    ids = np.array([fast.encode(b) for b in boards], dtype=np.uint64)
    out = ids.copy()
    fast.canonicalize(out, rows, cols, fast.tables(rows, cols).sym)
    expected = [naive.board_id(naive.canonical(b)) for b in boards]
    assert out.tolist() == expected


@property_settings
@given(boards(max_exponent=15), st.integers(0, 15), st.sampled_from([2, 4]))
def test_moves_after_spawn_match_naive(board, pick, tile):
    # the backward pass moves a spawned board from the moves of the board before the spawn
    rows, cols = shape(board)
    empty = [(r, c) for r in range(rows) for c in range(cols) if board[r][c] == 0]
    if not empty:
        return
    r, c = empty[pick % len(empty)]
    spawned = board[:r] + (board[r][:c] + (tile,) + board[r][c + 1:],) + board[r + 1:]
    _, _, line_result, line_reward, sym = fast.tables(rows, cols).kernel_args()
    moved = np.empty(4, np.uint64)
    line_rewards = np.empty((4, fast.MAX_LINES), np.int64)
    a = np.uint64(fast.encode(board))
    cm = fast.base_moves(a, rows, cols, line_result, line_reward, sym, moved, line_rewards)
    out, rewards = np.empty(4, np.uint64), np.empty(4, np.int64)
    fast.moves_after_spawn(a, np.uint64(cm), moved, line_rewards, r * cols + c, tile.bit_length() - 1,
                           rows, cols, line_result, line_reward, out, rewards)
    for d, direction in enumerate(naive.DIRECTIONS):
        new, reward, _ = naive.move(spawned, direction)
        if any(value > 32768 for row in new for value in row):
            assert rewards[d] == -1  # the kernel's overflow mark
        else:
            assert (int(out[d]), int(rewards[d])) == (naive.board_id(new), reward)


@property_settings
@given(boards(exponents=[0, 14, 15]), st.sampled_from(naive.DIRECTIONS))
def test_move_near_the_tile_cap_matches_naive(board, direction):
    # the kernels flag an overflow per pair of directions (board._slide_lines): check each one
    rows, cols = shape(board)
    new, reward, changed = naive.move(board, direction)
    index = fast.DIRECTIONS.index(direction)
    if any(value > 32768 for row in new for value in row):
        with pytest.raises(fast.TileOverflowError):
            fast.move(fast.encode(board), index, rows, cols)
    else:
        assert fast.move(fast.encode(board), index, rows, cols) == (naive.board_id(new), reward, changed)


@property_settings
@given(boards(max_exponent=15), st.integers(1, 15))
def test_has_tile_matches_naive(board, exponent):
    largest = max(value for row in board for value in row)
    assert has_tile(np.uint64(fast.encode(board)), exponent) == (largest >= 1 << exponent)


@property_settings
@given(boards(max_exponent=15))
def test_empty_cells_match_naive(board):
    rows, cols = shape(board)
    empty = [r * cols + c for r in range(rows) for c in range(cols) if board[r][c] == 0]
    board_id = np.uint64(fast.encode(board))
    assert int(fast.empty_cells(board_id, rows * cols)) == sum(1 << (4 * i) for i in empty)
    assert fast.count_empty(board_id, rows * cols) == len(empty)


@pytest.mark.parametrize("direction", naive.DIRECTIONS)
def test_merging_two_largest_tiles_overflows(direction):
    board = embed((32768, 32768), direction, 2)
    rows, cols = shape(board)
    assert naive.move(board, direction)[0] == embed((65536, 0), direction, 2)
    with pytest.raises(fast.TileOverflowError):
        fast.move(fast.encode(board), fast.DIRECTIONS.index(direction), rows, cols)
    assert issubclass(fast.TileOverflowError, ValueError)


@pytest.mark.parametrize("direction", naive.DIRECTIONS)
def test_largest_tile_slides_without_overflow(direction):
    board = embed((0, 32768, 16384, 16384), direction, 1)
    rows, cols = shape(board)
    new_id, reward, changed = fast.move(fast.encode(board), fast.DIRECTIONS.index(direction), rows, cols)
    assert (new_id, reward, changed) == (naive.board_id(embed((32768, 32768, 0, 0), direction, 1)), 32768, True)


def canonical_start(rows, cols, p2):
    """Naive start distribution with probabilities summed per canonical board ID."""
    summed = {}
    for board, p in naive.start_distribution(rows, cols, p2).items():
        key = naive.board_id(naive.canonical(board))
        summed[key] = summed.get(key, 0.0) + p
    return summed


@pytest.mark.parametrize("p2", [0.9, 0.6])
@pytest.mark.parametrize("rows, cols", SHAPES)
def test_start_states_match_naive(rows, cols, p2):
    ids, probs = fast.start_states(rows, cols) if p2 == 0.9 else fast.start_states(rows, cols, p2)
    assert ids.dtype == np.uint64
    assert probs.dtype == np.float64
    assert ids.shape == probs.shape
    assert np.all(ids[1:] > ids[:-1])
    assert abs(probs.sum() - 1.0) < 1e-12
    expected = canonical_start(rows, cols, p2)
    assert sorted(expected) == [int(i) for i in ids]
    for board_id, p in zip(ids, probs):
        assert abs(p - expected[int(board_id)]) < 1e-12


@njit
def look_up(layer, xs):
    out = np.empty(xs.shape[0], np.int64)
    layer_index_of_increasing(layer, xs, out)
    return out


@pytest.mark.parametrize("queries", ["dense", "sparse", "past_the_end"])
def test_layer_look_ups_match_searchsorted(queries):
    # the backward pass looks sorted batches up in a sorted array or an Elias-Fano layer
    rng = np.random.default_rng(len(queries))
    layer = np.unique(rng.integers(0, 1 << 40, 20_000).astype(np.uint64))
    size = {"dense": 50_000, "sparse": 30, "past_the_end": 200}[queries]
    xs = np.sort(np.concatenate([rng.choice(layer, size // 2),
                                 rng.integers(0, 1 << 41 if queries == "past_the_end" else 1 << 40,
                                              size - size // 2).astype(np.uint64)]))
    rank = np.searchsorted(layer, xs)
    hit = (rank < layer.size) & (layer[np.minimum(rank, layer.size - 1)] == xs)
    expected = np.where(hit, rank, -1)
    np.testing.assert_array_equal(look_up(layer, xs), expected)
    builder = EliasFanoBuilder(layer.size, int(layer[-1]) + 1)
    builder.extend(layer)
    np.testing.assert_array_equal(look_up(builder.build().arrays, xs), expected)
    # compact-coded layers (the stored form): tests/games/g2048/encoding/test_afterstate_code.py
