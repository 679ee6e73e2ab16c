"""Plain-Python reference of 2048: a memoised expectimax over boards (score and reach-a-tile),
the reachable sets and their canonical counts."""

# ---------------------------------------------------------------------------------------------
# 2048
#
# Rules (Kaneko & Yamashita 2025, "Strongly Solving 2048 4x3"; the original game by G. Cirulli):
# tiles slide toward the wall; equal neighbours merge once per move, the pair nearest the wall
# first; the reward is the sum of the new (merged) tiles; a move is legal iff the board changes.
# A spawn puts a 2 (probability p2) or a 4 (probability 1 - p2) on a uniformly chosen empty cell.
# The game starts with two spawns on the empty board and ends when no move is legal.
#
# Boards are tuples of rows, each a tuple of tile values (0 = empty). The solver is a memoised
# expectimax over boards: no ages and no symmetry. Symmetry lives apart, in ``symmetries`` and
# ``canonical``, only to count the reachable sets the way the fast solver reports them.
# ---------------------------------------------------------------------------------------------

DIRECTIONS = ("left", "right", "up", "down")


def slide_line(line):
    """Slide a line toward index 0 and merge; return (new_line, reward) with new_line a tuple."""
    tiles = [value for value in line if value]
    merged = []
    reward = 0
    i = 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
            # the pair nearest the wall merges first, and the new tile does not merge again
            merged.append(2 * tiles[i])
            reward += 2 * tiles[i]
            i += 2
        else:
            merged.append(tiles[i])
            i += 1
    return tuple(merged) + (0,) * (len(line) - len(merged)), reward


def _transpose(board):
    return tuple(zip(*board))


def _mirror_left_right(board):
    return tuple(tuple(reversed(row)) for row in board)


def _mirror_up_down(board):
    return tuple(reversed(board))


def _move_left(board):
    rows = []
    reward = 0
    for row in board:
        new_row, row_reward = slide_line(row)
        rows.append(new_row)
        reward += row_reward
    return tuple(rows), reward


def move(board, direction):
    """Apply a move; return (new_board, reward, changed).

    ``direction`` is one of ``DIRECTIONS``: left is toward column 0, up is toward row 0.
    """
    if direction == "left":
        new, reward = _move_left(board)
    elif direction == "right":
        new, reward = _move_left(_mirror_left_right(board))
        new = _mirror_left_right(new)
    elif direction == "up":
        new, reward = _move_left(_transpose(board))
        new = _transpose(new)
    elif direction == "down":
        new, reward = _move_left(_mirror_left_right(_transpose(board)))
        new = _transpose(_mirror_left_right(new))
    else:
        raise ValueError(f"direction {direction!r} is not one of {DIRECTIONS}")
    new = tuple(tuple(row) for row in new)
    return new, reward, new != board


def legal_moves(board):
    """Return [(direction, new_board, reward)] for every move that changes the board."""
    result = []
    for direction in DIRECTIONS:
        new, reward, changed = move(board, direction)
        if changed:
            result.append((direction, new, reward))
    return result


def age(board):
    """Sum of the tiles."""
    return sum(sum(row) for row in board)


def empty_board(rows, cols):
    return tuple((0,) * cols for _ in range(rows))


def _place(board, r, c, value):
    row = board[r][:c] + (value,) + board[r][c + 1:]
    return board[:r] + (row,) + board[r + 1:]


def spawns(board, p2=0.9):
    """Return [(board, probability)] for every spawn with non-zero probability."""
    if not 0.0 <= p2 <= 1.0:
        raise ValueError(f"p2 = {p2} is not a probability in [0, 1]")
    empty = [(r, c) for r, row in enumerate(board) for c, value in enumerate(row) if value == 0]
    outcomes = []
    for r, c in empty:
        for value, p in ((2, p2), (4, 1.0 - p2)):
            if p > 0.0:
                outcomes.append((_place(board, r, c, value), p / len(empty)))
    return outcomes


def start_distribution(rows, cols, p2=0.9):
    """Return {board: probability} of the start: two spawns on the empty board."""
    if rows * cols < 2:
        raise ValueError(f"a {rows}x{cols} board cannot hold the two start tiles")
    distribution = {}
    for first, p_first in spawns(empty_board(rows, cols), p2):
        for second, p_second in spawns(first, p2):
            distribution[second] = distribution.get(second, 0.0) + p_first * p_second
    return distribution


def reachable(rows, cols, p2=0.9, max_age=None):
    """Return (states, afterstates): the sets of boards reachable from the random start.

    With ``max_age``, only boards whose tiles sum to at most ``max_age`` are kept; this loses
    nothing below the cap, since a move keeps the tile sum and a spawn raises it.
    """
    states = {s for s in start_distribution(rows, cols, p2) if max_age is None or age(s) <= max_age}
    afterstates = set()
    frontier = list(states)
    while frontier:
        state = frontier.pop()
        for _, after, _ in legal_moves(state):
            if after in afterstates:
                continue
            afterstates.add(after)
            for child, _ in spawns(after, p2):
                if max_age is not None and age(child) > max_age:
                    continue
                if child not in states:
                    states.add(child)
                    frontier.append(child)
    return states, afterstates


class NaiveSolution:
    """Memoised expectimax values of 2048 on one board shape.

    ``state_value(board)`` is the best over legal moves of reward + afterstate value (0 when no
    move is legal); ``afterstate_value(board)`` is the expectation over spawns of the state value.
    Both accept any board and are evaluated on demand, with an explicit stack instead of recursion.
    """

    def __init__(self, rows, cols, p2=0.9):
        self.rows = rows
        self.cols = cols
        self.p2 = p2
        self._state_values = {}
        self._afterstate_values = {}
        self.start = start_distribution(rows, cols, p2)
        self.expected_score = sum(p * self.state_value(board) for board, p in self.start.items())

    def state_value(self, board):
        self._evaluate(("state", board))
        return self._state_values[board]

    def afterstate_value(self, board):
        if all(value for row in board for value in row):
            raise ValueError(f"afterstate {board} has no empty cell for a spawn")
        self._evaluate(("after", board))
        return self._afterstate_values[board]

    def _evaluate(self, root):
        # Post-order walk: a node is valued once all its children are; values never form a cycle
        # because every spawn adds a tile.
        stack = [root]
        while stack:
            kind, board = stack[-1]
            if kind == "state":
                if board in self._state_values:
                    stack.pop()
                    continue
                options = legal_moves(board)
                pending = [("after", a) for _, a, _ in options if a not in self._afterstate_values]
                if pending:
                    stack.extend(pending)
                    continue
                self._state_values[board] = max(
                    (reward + self._afterstate_values[a] for _, a, reward in options), default=0.0
                )
            else:
                if board in self._afterstate_values:
                    stack.pop()
                    continue
                outcomes = spawns(board, self.p2)
                pending = [("state", s) for s, _ in outcomes if s not in self._state_values]
                if pending:
                    stack.extend(pending)
                    continue
                self._afterstate_values[board] = sum(p * self._state_values[s] for s, p in outcomes)
            stack.pop()


def solve(rows, cols, p2=0.9):
    """Solve the board shape; return a ``NaiveSolution``."""
    return NaiveSolution(rows, cols, p2)


def board_id(board):
    """Pack a board: cell i = row*cols + col holds log2(tile) (0 = empty) in bits 4i..4i+3."""
    packed = 0
    for i, value in enumerate(value for row in board for value in row):
        if value:
            exponent = value.bit_length() - 1
            if value != 1 << exponent or not 1 <= exponent <= 15:
                raise ValueError(f"tile {value} is not a power of two between 2 and 2**15")
            packed |= exponent << (4 * i)
    return packed


def board_from_id(packed, rows, cols):
    """Inverse of ``board_id``."""
    exponents = [(packed >> (4 * i)) & 0xF for i in range(rows * cols)]
    values = [1 << e if e else 0 for e in exponents]
    return tuple(tuple(values[r * cols:(r + 1) * cols]) for r in range(rows))


def symmetries(board):
    """Images of the board under its symmetry group: 8 (dihedral) if square, else 4."""
    images = [
        board,
        _mirror_left_right(board),
        _mirror_up_down(board),
        _mirror_up_down(_mirror_left_right(board)),
    ]
    if len(board) == len(board[0]):
        images += [_transpose(image) for image in list(images)]
    return [tuple(tuple(row) for row in image) for image in images]


def canonical(board):
    """The image of the board with the smallest ``board_id``."""
    return min(symmetries(board), key=board_id)


def canonical_counts(rows, cols, p2=0.9, max_age=None):
    """Return {age: (states, afterstates, terminal_states)} of the canonicalised reachable sets.

    ``max_age`` caps the ages as in ``reachable``.
    """
    return count_canonical(*reachable(rows, cols, p2, max_age))


def count_canonical(states, afterstates):
    """Return {age: (states, afterstates, terminal_states)} after canonicalising both sets."""
    counts = {}

    def bump(board, slot):
        row = counts.setdefault(age(board), [0, 0, 0])
        row[slot] += 1

    for state in {canonical(s) for s in states}:
        bump(state, 0)
        if not legal_moves(state):
            bump(state, 2)
    for after in {canonical(a) for a in afterstates}:
        bump(after, 1)
    return {a: tuple(row) for a, row in sorted(counts.items())}


# ---------------------------------------------------------------------------------------------
# 2048, reach-a-tile objective
#
# Maximise the probability of making a tile of at least ``target`` (the objective twenty48 solves,
# jdleesmiller/twenty48): a move whose result holds such a tile wins (value 1) and the game stops
# there; a state with no legal move has value 0. A plain memoised recursion over boards, using only
# ``legal_moves``, ``spawns`` and ``start_distribution`` of the 2048 section above (no symmetry, no
# ages, nothing from the package).
# ---------------------------------------------------------------------------------------------


class NaiveReachSolution:
    """P(make a tile >= ``target``) under optimal play, for any state or afterstate.

    ``states`` and ``afterstates`` hold every board valued so far; after construction they are
    exactly the boards reachable from the random start without making the target (a winning move
    ends the game, so its board is never valued).
    """

    def __init__(self, rows, cols, target, p2=0.9):
        self.target = target
        self.p2 = p2
        self.states = {}
        self.afterstates = {}
        self.start = start_distribution(rows, cols, p2)
        self.probability = sum(p * self.state_value(board) for board, p in self.start.items())

    def wins(self, board):
        return max(max(row) for row in board) >= self.target

    def move_values(self, board):
        """[(direction, value)] of every legal move: 1 if it makes the target, else its afterstate."""
        return [(d, 1.0 if self.wins(after) else self.afterstate_value(after))
                for d, after, _ in legal_moves(board)]

    def state_value(self, board):
        if board not in self.states:
            self.states[board] = max((v for _, v in self.move_values(board)), default=0.0)
        return self.states[board]

    def afterstate_value(self, board):
        if board not in self.afterstates:
            self.afterstates[board] = sum(p * self.state_value(s) for s, p in spawns(board, self.p2))
        return self.afterstates[board]


def solve_reach(rows, cols, target, p2=0.9):
    """Solve the reach-a-tile objective; return a ``NaiveReachSolution``."""
    return NaiveReachSolution(rows, cols, target, p2)
