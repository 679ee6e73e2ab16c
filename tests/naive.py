"""Plain-Python reference solvers for every game, one section per game.

Each section is a slow, obviously correct brute force written separately from the fast numba
kernels in ``src/strongsolve``: no numba, no layering tricks, no shared code with the package.
The tests compare the fast solvers against these references on small instances. Sections are
appended at the end of this module, one per game.
"""

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
# Truco Paulista (heads-up, one hand) and zero-sum extensive-form games
#
# Rules (pagat.com "Brazilian Truco", https://www.pagat.com/put/truco_br.html; miniTruco's
# regras_en.txt for ties; the issue "Truco Paulista, part 1" for the heads-up reading): 40 cards
# 4 5 6 7 Q J K A 2 3 x ouros espadas copas paus; the manilhas are the rank after the vira's in that
# cycle and beat every common card, paus > copas > espadas > ouros; common cards of one rank tie.
# Mano leads trick 1; a trick's winner leads the next, after a tie the same player leads again.
# Two tricks win; a tied first trick goes to the next decided trick; a later tie after a decided
# first trick goes to the first trick's winner; three ties: nobody. Raises 1 -> 3 -> 6 -> 9 -> 12 on
# one's turn before a card; the answer is accept, fold (the raiser scores the value before the
# raise) or raise again; after an accept only the acceptor may raise. With exactly one side at 11
# that side plays for 3 without raises or folds (the other scores 1); at 11-11 no raises.
#
# The engine replays an action list from the start every time (no incremental state), cards are
# strings like "7c", and players are roles: 0 mano, 1 pé. The zero-sum solvers work on plain
# nested trees and solve exactly with the sequence-form linear program (Koller, Megiddo and von
# Stengel 1996) through scipy's HiGHS.
# ---------------------------------------------------------------------------------------------

TRUCO_ORDER = "4567QJKA23"
TRUCO_SUITS = "dshc"
TRUCO_LADDER = [1, 3, 6, 9, 12]


def truco_beats(a, b, vira):
    """+1 if card a beats card b, -1 if b beats a, 0 for a tie (strings like '7c')."""
    manilha = TRUCO_ORDER[(TRUCO_ORDER.index(vira[0]) + 1) % 10]

    def key(card):
        if card[0] == manilha:
            return (1, TRUCO_SUITS.index(card[1]))
        return (0, TRUCO_ORDER.index(card[0]))

    ka, kb = key(a), key(b)
    return (ka > kb) - (ka < kb)


def truco_hand_result(tricks, three_ties="nobody"):
    """Winner (0, 1), -1 for nobody, or None to play on; tricks hold 0, 1 or 't'."""
    if tricks.count(0) >= 2:
        return 0
    if tricks.count(1) >= 2:
        return 1
    decided = [r for r in tricks if r != "t"]
    if tricks and tricks[0] == "t" and decided:
        return decided[0]
    if tricks and tricks[0] != "t" and "t" in tricks[1:]:
        return tricks[0]
    if len(tricks) == 3:
        return 0 if three_ties == "mano" else -1
    return None


def truco_replay(hands, vira, score, actions, three_ties="nobody", face_down=False, caps=(4, 4)):
    """Replay ``actions`` and return ('move', player, legal) or ('end', (points mano, points pé)).

    Actions: 'play:<card>', 'raise', 'accept', 'fold', 'play_hand', and with ``face_down``
    'down:<card>': from the second trick on a card may be played face down; it loses to any card
    played face up and two face-down cards tie (truco-engine's compare_plays; portalinsights: "a
    carta coberta não vale nada", only in the 2nd and 3rd trick). ``caps``: the ladder index
    (0..4) up to which mano and pé may raise (a raise from value index i needs i < cap; a
    counter-raise to index i + 2 needs i + 1 < cap).
    """
    at11 = [score[0] == 11, score[1] == 11]
    eleven = at11.index(True) if at11.count(True) == 1 else None
    raises_ok = not any(at11)
    value, raiser, waiting, raised_to = 1, None, None, None
    remaining = [list(hands[0]), list(hands[1])]
    table, tricks, leader = [], [], 0
    decided_eleven = eleven is None
    i = 0
    while True:
        if not decided_eleven:
            player, legal = eleven, ["play_hand", "fold"]
        elif waiting is not None:
            player = waiting
            legal = ["accept", "fold"] + (["raise"] if raised_to < 12 and
                                          TRUCO_LADDER.index(raised_to) < caps[player] else [])
        else:
            player = leader if not table else 1 - leader
            legal = []
            for c in remaining[player]:
                legal.append("play:" + c)
                if face_down and tricks:
                    legal.append("down:" + c)
            if raises_ok and value < 12 and raiser in (None, player) \
                    and TRUCO_LADDER.index(value) < caps[player]:
                legal.append("raise")
        if i == len(actions):
            return ("move", player, legal)
        act = actions[i]
        i += 1
        if act not in legal:
            raise ValueError(f"illegal {act} at {actions[:i - 1]}")
        if act == "play_hand":
            decided_eleven, value = True, 3
        elif act == "fold":
            pts = [0, 0]
            if not decided_eleven:
                pts[1 - player] = 1
            else:
                pts[1 - player] = value
            return ("end", tuple(pts))
        elif act == "raise":
            if waiting is None:
                raised_to = TRUCO_LADDER[TRUCO_LADDER.index(value) + 1]
            else:  # a counter-raise accepts the pending raise first
                value = raised_to
                raised_to = TRUCO_LADDER[TRUCO_LADDER.index(raised_to) + 1]
            waiting = 1 - player
        elif act == "accept":
            value, raiser, waiting = raised_to, player, None
        else:
            card = act[5:]
            remaining[player].remove(card)
            table.append((player, card if act.startswith("play:") else None))
            if len(table) == 2:
                (p1, c1), (p2, c2) = table
                if c1 is None or c2 is None:  # a covered card loses; two covered cards tie
                    b = (c1 is not None) - (c2 is not None)
                else:
                    b = truco_beats(c1, c2, vira)
                res = "t" if b == 0 else (p1 if b > 0 else p2)
                tricks.append(res)
                leader = p1 if res == "t" else res
                table = []
                w = truco_hand_result(tricks, three_ties)
                if w is not None:
                    pts = [0, 0]
                    if w >= 0:
                        pts[w] = value
                    return ("end", tuple(pts))


def truco_hand_tree(deck, vira, score, utility, three_ties="nobody"):
    """Nested game tree of one hand over every deal of ``deck`` (card strings, vira excluded).

    Every ordered deal (mano's 3 cards, pé's 3 cards) is equally likely. ``utility`` maps the
    final points (mano's, pé's) to mano's utility. Information sets: (player, own cards as a sorted
    tuple, all public actions so far). Raises are part of the tree when the score allows them.
    """
    from itertools import combinations

    deals = [(h0, h1) for h0 in combinations(deck, 3)
             for h1 in combinations([c for c in deck if c not in h0], 3)]

    def expand(hands, actions):
        state = truco_replay(hands, vira, score, actions, three_ties)
        if state[0] == "end":
            return {"kind": "terminal", "utility": utility[state[1]]}
        _, player, legal = state
        key = (player, tuple(sorted(hands[player])), tuple(actions))
        return {"kind": "decision", "player": player, "key": key,
                "children": [expand(hands, actions + [a]) for a in legal]}

    return {"kind": "chance", "probs": [1 / len(deals)] * len(deals),
            "children": [expand(d, []) for d in deals]}


def truco_face_down_tree(deck, vira, score, utility, three_ties="nobody", caps=(4, 4)):
    """``truco_hand_tree`` with face-down play (``truco_replay(face_down=True)``) and raise caps.

    Information sets: (player, own cards sorted, the actions so far as that player saw them): a
    card the opponent played face down shows as 'down', one the player covered keeps its name.
    """
    from itertools import combinations

    deals = [(h0, h1) for h0 in combinations(deck, 3)
             for h1 in combinations([c for c in deck if c not in h0], 3)]

    def expand(hands, actions, actors):
        state = truco_replay(hands, vira, score, actions, three_ties, face_down=True, caps=caps)
        if state[0] == "end":
            return {"kind": "terminal", "utility": utility[state[1]]}
        _, player, legal = state
        seen = tuple("down" if a.startswith("down:") and who != player else a
                     for a, who in zip(actions, actors))
        key = (player, tuple(sorted(hands[player])), seen)
        return {"kind": "decision", "player": player, "key": key,
                "children": [expand(hands, actions + [a], actors + [player]) for a in legal]}

    return {"kind": "chance", "probs": [1 / len(deals)] * len(deals),
            "children": [expand([list(d[0]), list(d[1])], [], []) for d in deals]}


def truco_choice_counts(tree):
    """(decision nodes, information sets) of a nested tree counting only nodes with two or more
    actions (the package's trees apply a forced move without a node)."""
    nodes, keys = 0, set()
    stack = [tree]
    while stack:
        n = stack.pop()
        if n["kind"] == "terminal":
            continue
        if n["kind"] == "decision" and len(n["children"]) >= 2:
            nodes += 1
            keys.add(n["key"])
        stack.extend(n["children"])
    return nodes, len(keys)


def truco_nested_from_tabular(game):
    """The nested form of a ``TabularGame`` (keys are its information-set indices)."""
    def build(n):
        lo, hi = int(game.child_ptr[n]), int(game.child_ptr[n + 1])
        kids = [build(int(c)) for c in game.child[lo:hi]]
        t = int(game.node_type[n])
        if t == 0:
            return {"kind": "terminal", "utility": float(game.utility[n])}
        if t == 1:
            return {"kind": "chance", "probs": [float(p) for p in game.child_prob[lo:hi]],
                    "children": kids}
        return {"kind": "decision", "player": int(game.node_player[n]),
                "key": int(game.node_infoset[n]), "children": kids}
    return build(0)


def truco_lp_value(tree):
    """Player 0's equilibrium value of a nested zero-sum tree, by the sequence-form LP."""
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    seqs = [{(): 0}, {(): 0}]  # per player: sequence -> index, () the empty sequence
    parent = [{}, {}]  # per player: information set -> parent sequence
    payoff = {}

    def walk(node, last, prob):
        kind = node["kind"]
        if kind == "terminal":
            k = (last[0], last[1])
            payoff[k] = payoff.get(k, 0.0) + prob * node["utility"]
            return
        if kind == "chance":
            for p, child in zip(node["probs"], node["children"]):
                walk(child, last, prob * p)
            return
        pl, key = node["player"], node["key"]
        if parent[pl].setdefault(key, last[pl]) != last[pl]:
            raise ValueError("imperfect recall")
        for a, child in enumerate(node["children"]):
            s = (key, a)
            seqs[pl].setdefault(s, len(seqs[pl]))
            nxt = list(last)
            nxt[pl] = s
            walk(child, nxt, prob)

    walk(tree, [(), ()], 1.0)
    n0, n1 = len(seqs[0]), len(seqs[1])
    isets1 = {k: i + 1 for i, k in enumerate(parent[1])}
    # variables: x (n0 sequences of player 0), q (1 + information sets of player 1)
    nq = 1 + len(isets1)
    rows, cols, vals = [], [], []
    # F^T q - A^T x <= 0, one row per sequence of player 1
    for (s0, s1), v in payoff.items():
        rows.append(seqs[1][s1]); cols.append(seqs[0][s0]); vals.append(-v)
    rows.append(0); cols.append(n0); vals.append(1.0)
    for key, par in parent[1].items():
        rows.append(seqs[1][par]); cols.append(n0 + isets1[key]); vals.append(-1.0)
    for s, idx in seqs[1].items():
        if s != ():
            rows.append(idx); cols.append(n0 + isets1[s[0]]); vals.append(1.0)
    a_ub = coo_matrix((vals, (rows, cols)), shape=(n1, n0 + nq)).tocsr()
    # E x = e: the empty sequence is 1; each information set's actions sum to its parent
    isets0 = {k: i + 1 for i, k in enumerate(parent[0])}
    er, ec, ev = [0], [0], [1.0]
    for key, par in parent[0].items():
        er.append(isets0[key]); ec.append(seqs[0][par]); ev.append(-1.0)
    for s, idx in seqs[0].items():
        if s != ():
            er.append(isets0[s[0]]); ec.append(idx); ev.append(1.0)
    a_eq = coo_matrix((ev, (er, ec)), shape=(1 + len(isets0), n0 + nq)).tocsr()
    b_eq = np.zeros(1 + len(isets0))
    b_eq[0] = 1.0
    c = np.zeros(n0 + nq)
    c[n0] = -1.0
    bounds = [(0, None)] * n0 + [(None, None)] * nq
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n1), A_eq=a_eq, b_eq=b_eq, bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(res.message)
    return -res.fun


def truco_lp_value_of_tabular(game):
    return truco_lp_value(truco_nested_from_tabular(game))


def truco_profile_value(game, strategy):
    """Player 0's expected utility of a behaviour profile on a ``TabularGame`` (recursive)."""
    def val(n):
        lo, hi = int(game.child_ptr[n]), int(game.child_ptr[n + 1])
        t = int(game.node_type[n])
        if t == 0:
            return float(game.utility[n])
        if t == 1:
            return sum(float(p) * val(int(c)) for p, c in zip(game.child_prob[lo:hi], game.child[lo:hi]))
        base = int(game.infoset_ptr[game.node_infoset[n]])
        return sum(float(strategy[base + k]) * val(int(c)) for k, c in enumerate(game.child[lo:hi]))
    return val(0)


def truco_pure_best_response(game, strategy, player):
    """Best response value of ``player`` (max for 0, min for 1 of player 0's utility) against the
    other player's part of ``strategy``, by enumerating every pure strategy of ``player``."""
    from itertools import product

    isets = sorted({int(game.node_infoset[n]) for n in range(len(game.node_type))
                    if game.node_type[n] == 2 and game.node_player[n] == player})
    sizes = [int(game.infoset_ptr[i + 1] - game.infoset_ptr[i]) for i in isets]
    best = None
    for choice in product(*[range(s) for s in sizes]):
        prof = list(strategy)
        for i, a, s in zip(isets, choice, sizes):
            for k in range(s):
                prof[int(game.infoset_ptr[i]) + k] = 1.0 if k == a else 0.0
        v = truco_profile_value(game, prof)
        if best is None or (v > best if player == 0 else v < best):
            best = v
    return best


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


# ---------------------------------------------------------------------------------------------
# Shut the Box and Ludo
#
# Flip-one Shut the Box: cards 1..n start clear; roll two f-faced dice (ordered roll (x, y) with
# probability 1/f^2), flip one existing card among x, y, x+y (toggle); if none exists the roll
# passes; minimise the expected rolls until all cards are set. Solved exactly with fractions:
# policy iteration whose evaluation is Gaussian elimination over rationals.
# Standard Shut the Box (Wikipedia "Shut the box"; D. Butler, durangobill.com/ShutTheBox.html):
# shut open tiles summing to the roll total; the game ends when no set fits. Memoised recursion
# over frozensets of open tiles, in fractions.
# Ludo (HDU 4405): one piece = a Markov chain over cells solved by Gaussian elimination
# in fractions; two-player race = dict-based negamax value iteration over (own, opponent) tuples.
# Monte Carlo simulators play any of these games with policy callbacks.
# ---------------------------------------------------------------------------------------------

from fractions import Fraction as _F


def _solve_linear(unknowns, equations):
    """Gauss-Jordan elimination over fractions. ``equations[u] = (const, {v: coef})`` means
    ``x_u = const + sum coef * x_v``; returns {u: x_u}."""
    index = {u: i for i, u in enumerate(unknowns)}
    n = len(unknowns)
    rows = []
    for u in unknowns:
        const, coefs = equations[u]
        row = [_F(0)] * (n + 1)
        row[index[u]] += 1
        for v, c in coefs.items():
            row[index[v]] -= c
        row[n] = _F(const)
        rows.append(row)
    for col in range(n):
        pivot = next(r for r in range(col, n) if rows[r][col] != 0)
        rows[col], rows[pivot] = rows[pivot], rows[col]
        p = rows[col][col]
        rows[col] = [v / p for v in rows[col]]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return {u: rows[index[u]][n] for u in unknowns}


def flip_one_options(mask, x, y, n):
    """Masks reachable after roll (x, y) from ``mask`` (bit c-1 = card c set); [mask] to pass."""
    cards = sorted({c for c in (x, y, x + y) if c <= n})
    return [mask ^ (1 << (c - 1)) for c in cards] or [mask]


def flip_one_exact(n, f):
    """Exact optimal expected rolls of flip-one Shut the Box: {mask: Fraction, or None where the
    goal cannot be reached} (goal = 2^n - 1, value 0).

    Exact policy iteration: start from the policy "flip a clear card if one is offered" when it is
    proper, evaluate by elimination, switch to strictly better options, repeat."""
    goal = (1 << n) - 1
    rolls = [(x, y) for x in range(1, f + 1) for y in range(1, f + 1)]
    p = _F(1, f * f)
    masks = [m for m in range(goal)]
    # a proper start: move toward the goal along shortest paths of the option graph
    dist = {goal: 0}
    frontier = [goal]
    while frontier:
        nxt = []
        for m in masks:
            if m in dist:
                continue
            for x, y in rolls:
                if any(o in dist and dist[o] == dist[frontier[0]] for o in flip_one_options(m, x, y, n)):
                    dist[m] = dist[frontier[0]] + 1
                    nxt.append(m)
                    break
        frontier = nxt
    # toggles are reversible, so masks that cannot reach the goal never mix with those that can:
    # they have infinite expected rolls (None) and drop out of the linear system
    infinite = {m: None for m in masks if m not in dist}
    masks = [m for m in masks if m in dist]
    policy = {}
    for m in masks:
        for x, y in rolls:
            opts = flip_one_options(m, x, y, n)
            policy[m, x, y] = min(opts, key=lambda o: dist.get(o, 10 ** 9))
    while True:
        eqs = {}
        for m in masks:
            coefs = {}
            for x, y in rolls:
                o = policy[m, x, y]
                if o != goal:
                    coefs[o] = coefs.get(o, 0) + p
            eqs[m] = (1, coefs)
        value = _solve_linear(masks, eqs) if masks else {}
        value[goal] = _F(0)
        changed = False
        for m in masks:
            for x, y in rolls:
                best = min(flip_one_options(m, x, y, n), key=lambda o: value[o])
                if value[best] < value[policy[m, x, y]]:
                    policy[m, x, y] = best
                    changed = True
        if not changed:
            return {**value, **infinite}


def standard_value(n, f, objective, one_die=False):
    """Exact optimal value of standard Shut the Box from all tiles open (Fraction).

    objective "max-shut": probability of shutting every tile; "min-sum": expected open sum."""
    from functools import lru_cache
    from itertools import combinations

    def totals(open_tiles):
        if one_die and sum(open_tiles) <= 6:
            return {t: _F(1, f) for t in range(1, f + 1)}
        dist = {}
        for x in range(1, f + 1):
            for y in range(1, f + 1):
                dist[x + y] = dist.get(x + y, 0) + _F(1, f * f)
        return dist

    @lru_cache(maxsize=None)
    def value(open_tiles):
        if not open_tiles:
            return _F(1) if objective == "max-shut" else _F(0)
        total = _F(0)
        for t, p in totals(open_tiles).items():
            options = [open_tiles - frozenset(c) for k in range(1, len(open_tiles) + 1)
                       for c in combinations(sorted(open_tiles), k) if sum(c) == t]
            if not options:
                end = _F(0) if objective == "max-shut" else _F(sum(open_tiles))
                total += p * end
            elif objective == "max-shut":
                total += p * max(value(o) for o in options)
            else:
                total += p * min(value(o) for o in options)
        return total

    return value(frozenset(range(1, n + 1)))


def simulate_flip_one(n, f, choose, rng, games):
    """Rolls per game of flip-one Shut the Box; ``choose(mask, x, y, options)`` returns the next
    mask among ``options`` (from :func:`flip_one_options`)."""
    goal = (1 << n) - 1
    out = []
    for _ in range(games):
        mask, rolls = 0, 0
        while mask != goal:
            x, y = rng.randint(1, f), rng.randint(1, f)
            rolls += 1
            mask = choose(mask, x, y, flip_one_options(mask, x, y, n))
        out.append(rolls)
    return out


def simulate_standard(n, f, one_die, choose, rng, games):
    """Final open-tile sets of standard Shut the Box games; ``choose(open_tiles, total, options)``
    returns one of the frozensets ``options`` (tiles left open after the move)."""
    from itertools import combinations

    out = []
    for _ in range(games):
        open_tiles = frozenset(range(1, n + 1))
        while open_tiles:
            if one_die and sum(open_tiles) <= 6:
                total = rng.randint(1, f)
            else:
                total = rng.randint(1, f) + rng.randint(1, f)
            options = [open_tiles - frozenset(c) for k in range(1, len(open_tiles) + 1)
                       for c in combinations(sorted(open_tiles), k) if sum(c) == total]
            if not options:
                break
            open_tiles = choose(open_tiles, total, options)
        out.append(open_tiles)
    return out


def ludo_move(board, cell, face):
    """Cell reached by one piece, or None if it cannot move. ``board``: dict with the board-file
    keys (``die`` a list of Fractions of faces 1..k here)."""
    n = board["length"]
    if cell == n:
        return None
    t = cell + face
    if t > n:
        overshoot = board.get("overshoot", "stay")
        if overshoot == "stay":
            return None
        t = n if overshoot == "finish" else 2 * n - t
    jumps = board.get("jumps", {})
    if t in jumps:
        t = jumps[t]
        while board.get("chain_jumps", False) and t in jumps:
            t = jumps[t]
    return t


def ludo_expected_rolls(board):
    """Exact expected rolls of one piece from every cell 0..N: {cell: Fraction or None (infinite)}."""
    n = board["length"]
    die = board["die"]
    succ = {c: [(ludo_move(board, c, d) if ludo_move(board, c, d) is not None else c, p)
                for d, p in enumerate(die, 1) if p > 0] for c in range(n)}
    # cells from which the goal is reachable at all, then those that cannot drift into a dead cell
    can = {n}
    grew = True
    while grew:
        grew = False
        for c in range(n):
            if c not in can and any(t in can for t, _ in succ[c]):
                can.add(c)
                grew = True
    bad = set(range(n + 1)) - can
    grew = True
    while grew:
        grew = False
        for c in range(n):
            if c not in bad and any(t in bad for t, _ in succ[c]):
                bad.add(c)
                grew = True
    cells = [c for c in range(n) if c not in bad]
    eqs = {}
    for c in cells:
        coefs = {}
        for t, p in succ[c]:
            if t != n:
                coefs[t] = coefs.get(t, 0) + p
        eqs[c] = (1, coefs)
    value = _solve_linear(cells, eqs) if cells else {}
    value[n] = _F(0)
    return {c: value.get(c) for c in range(n + 1)}


def simulate_ludo_rolls(board, rng, games, start=0):
    """Rolls needed by one piece from ``start`` to N, per game (the die drawn with ``rng``)."""
    faces = list(range(1, len(board["die"]) + 1))
    weights = [float(p) for p in board["die"]]
    out = []
    for _ in range(games):
        cell, rolls = start, 0
        while cell != board["length"]:
            d = rng.choices(faces, weights)[0]
            rolls += 1
            t = ludo_move(board, cell, d)
            cell = cell if t is None else t
        out.append(rolls)
    return out


def race_moves(board, own, opp, face):
    """[(piece cell, own', opp', won)] for every distinct movable piece of the mover, in increasing
    cell order; captures send opponent pieces on the landing cell (not 0, N or safe) to 0."""
    n = board["length"]
    safe = set(board.get("safe", ()))
    out = []
    for c in sorted(set(own)):
        t = ludo_move(board, c, face)
        if t is None:
            continue
        new_own = list(own)
        new_own[new_own.index(c)] = t
        new_opp = [0 if (q == t and t not in safe and t not in (0, n)) else q for q in opp]
        new_own = tuple(sorted(new_own))
        out.append((c, new_own, tuple(sorted(new_opp)), all(q == n for q in new_own)))
    return out


def race_values(board, pieces, tol=1e-13):
    """Win probability of the player to move under optimal play, {(own, opp): float}, by
    dict-based negamax value iteration (Gauss-Seidel order of a plain dict) over every pair of
    sorted tuples of cells 0..N (ended games excluded)."""
    from itertools import combinations_with_replacement

    n = board["length"]
    again = board.get("roll_again_on")
    tuples = list(combinations_with_replacement(range(n + 1), pieces))
    done = tuple([n] * pieces)
    states = [(a, b) for a in tuples for b in tuples if a != done and b != done]
    value = {s: 0.0 for s in states}

    def q(own, opp, face):
        moves = race_moves(board, own, opp, face)
        if not moves:
            return value[own, opp] if face == again else 1.0 - value[opp, own]
        best = 0.0
        for _, o2, p2, won in moves:
            if won:
                v = 1.0
            elif face == again:
                v = value[o2, p2]
            else:
                v = 1.0 - value[p2, o2]
            best = max(best, v)
        return best

    while True:
        delta = 0.0
        for own, opp in states:
            v = sum(float(p) * q(own, opp, d) for d, p in enumerate(board["die"], 1) if p > 0)
            delta = max(delta, abs(v - value[own, opp]))
            value[own, opp] = v
        if delta <= tol:
            return value


def simulate_race(board, pieces, policy_a, policy_b, rng, games):
    """Games won by A (moving first) out of ``games``. A policy is called as
    ``policy(own, opp, face, moves)`` with ``moves`` from :func:`race_moves` and returns the index
    of the chosen move."""
    faces = list(range(1, len(board["die"]) + 1))
    weights = [float(p) for p in board["die"]]
    again = board.get("roll_again_on")
    wins = 0
    for _ in range(games):
        sides = [tuple([0] * pieces), tuple([0] * pieces)]
        policies = (policy_a, policy_b)
        turn = 0
        while True:
            face = rng.choices(faces, weights)[0]
            own, opp = sides[turn], sides[1 - turn]
            moves = race_moves(board, own, opp, face)
            if moves:
                _, own, opp, won = moves[policies[turn](own, opp, face, moves)]
                sides[turn], sides[1 - turn] = own, opp
                if won:
                    wins += turn == 0
                    break
            if face != again:
                turn = 1 - turn
    return wins


# ---------------------------------------------------------------------------------------------
# Truco: blind play at 11-11 and best responses (tree options)
#
# Blind play (the 11-11 option): each player plays the cards of their hand in a uniformly
# random order. Two references: a replay of every deal and every pair of play orders through
# ``truco_replay``, and, for the full deck, trick-by-trick draws of card strengths (the cards played
# to tricks 1..3 by mano and by pé form a uniform ordered draw of six distinct cards, and a trick's
# result only compares its two cards). Best response: plain recursion on the nested trees above.
# ---------------------------------------------------------------------------------------------

def truco_blind_value(deck, vira, utility, three_ties="nobody"):
    """Mano's expected utility of a blind 11-11 hand over every deal of ``deck`` and every pair of
    play orders (3! x 3!); ``utility`` maps points (mano's, pé's) to mano's utility."""
    from itertools import combinations, permutations

    total, count = 0.0, 0
    for h0 in combinations(deck, 3):
        for h1 in combinations([c for c in deck if c not in h0], 3):
            for o0 in permutations(h0):
                for o1 in permutations(h1):
                    actions, nxt = [], [0, 0]
                    while True:
                        state = truco_replay([list(h0), list(h1)], vira, (11, 11), actions, three_ties)
                        if state[0] == "end":
                            break
                        p = state[1]
                        actions.append("play:" + (o0, o1)[p][nxt[p]])
                        nxt[p] += 1
                    total += utility[state[1]]
                    count += 1
    return total / count


def truco_blind_value_by_tricks(strengths, utility, three_ties="nobody"):
    """The same value from the card strengths alone (one entry per unseen card; equal strengths
    tie): trick i pits mano's i-th card against pé's, drawn without replacement."""
    counts = {}
    for s in strengths:
        counts[s] = counts.get(s, 0) + 1
    n = len(strengths)

    def end_value(tricks):
        w = truco_hand_result(tricks, three_ties)
        if w is None:
            return None
        return utility[(1, 0)] if w == 0 else utility[(0, 1)] if w == 1 else utility[(0, 0)]

    def rec(left, tricks):
        v = end_value(tricks)
        if v is not None:
            return v
        m = sum(left.values())
        total = 0.0
        for s, cs in left.items():
            if cs == 0:
                continue
            for t, ct in left.items():
                ct2 = ct - (1 if t == s else 0)
                if ct2 <= 0:
                    continue
                p = cs / m * ct2 / (m - 1)
                res = "t" if s == t else (0 if s > t else 1)
                nxt = dict(left)
                nxt[s] -= 1
                nxt[t] -= 1
                total += p * rec(nxt, tricks + [res])
        return total

    assert n >= 6
    return rec(counts, [])


def truco_best_response(tree, strategy, player):
    """Best-response value (player 0's utility: max for player 0, min for 1) of ``player`` against
    ``strategy(key, n_actions) -> probabilities`` of the other player, on a nested tree."""
    nodes = {}  # key of player's information sets -> [(node, reach of chance and opponent)]

    def collect(node, reach):
        kind = node["kind"]
        if kind == "terminal":
            return
        if kind == "chance":
            for p, child in zip(node["probs"], node["children"]):
                collect(child, reach * p)
            return
        if node["player"] == player:
            nodes.setdefault(node["key"], []).append((node, reach))
            for child in node["children"]:
                collect(child, reach)
        else:
            probs = strategy(node["key"], len(node["children"]))
            for p, child in zip(probs, node["children"]):
                collect(child, reach * p)

    choice = {}

    def weighted(node, reach):
        # reach-weighted utility below ``node`` with ``player`` best-responding
        kind = node["kind"]
        if kind == "terminal":
            return reach * node["utility"]
        if kind == "chance":
            return sum(weighted(c, reach * p) for p, c in zip(node["probs"], node["children"]))
        if node["player"] != player:
            probs = strategy(node["key"], len(node["children"]))
            return sum(weighted(c, reach * p) for p, c in zip(probs, node["children"]))
        a = best(node["key"])
        return weighted(node["children"][a], reach)

    def best(key):
        if key not in choice:
            members = nodes[key]
            q = [sum(weighted(n["children"][a], r) for n, r in members)
                 for a in range(len(members[0][0]["children"]))]
            choice[key] = q.index(max(q) if player == 0 else min(q))
        return choice[key]

    collect(tree, 1.0)
    return weighted(tree, 1.0)


# ---------------------------------------------------------------------------------------------
# Truco: the score grid of a small deck
#
# A plain recursion over role-ordered scores: mano's match-win probability before a hand at (a, b)
# is the average over every vira card of the deck of the hand's LP value, whose terminal utility
# after points (pm, pp) is 1 if a + pm >= 12, 0 if b + pp >= 12, else 1 - W(b + pp, a + pm) (the
# roles swap). The hand is the whole raise ladder (no pruning) outside the 11 row. Cards of equal
# trick strength are interchangeable, so a player chooses among strengths (the first such card);
# the two scores tied by three tied tricks, (a, b) and (b, a), are iterated together to a fixed
# point.
# ---------------------------------------------------------------------------------------------

def truco_strength_tree(deck, vira, score, three_ties="nobody"):
    """Nested tree of one hand over every deal of ``deck`` (vira excluded) whose terminals carry
    ``points``; a player picks one card per trick strength; information sets name cards by the
    first card of the deck with the same strength."""
    from itertools import combinations

    def canon(card):
        return next(c for c in deck if truco_beats(c, card, vira) == 0)

    deals = [(h0, h1) for h0 in combinations(deck, 3)
             for h1 in combinations([c for c in deck if c not in h0], 3)]

    def expand(hands, actions):
        state = truco_replay(hands, vira, score, actions, three_ties)
        if state[0] == "end":
            return {"kind": "terminal", "points": state[1]}
        _, player, legal = state
        kept, seen = [], set()
        for a in legal:
            if a.startswith("play:"):
                if canon(a[5:]) in seen:
                    continue
                seen.add(canon(a[5:]))
            kept.append(a)
        key = (player, tuple(sorted(canon(c) for c in hands[player])),
               tuple("play:" + canon(a[5:]) if a.startswith("play:") else a for a in actions))
        return {"kind": "decision", "player": player, "key": key,
                "children": [expand(hands, actions + [a]) for a in kept]}

    return {"kind": "chance", "probs": [1 / len(deals)] * len(deals),
            "children": [expand([list(d[0]), list(d[1])], []) for d in deals]}


def truco_set_utilities(tree, utility):
    """Set ``utility[points]`` at every terminal of a ``truco_strength_tree``."""
    if tree["kind"] == "terminal":
        tree["utility"] = utility[tree["points"]]
    else:
        for c in tree["children"]:
            truco_set_utilities(c, utility)


def truco_grid_values(deck, min_score, three_ties="nobody", tol=1e-12):
    """W[(a, b)] for every role-ordered score with min(a, b) >= min_score (and the 11-row scores
    they lead to), by plain recursion from high scores to low."""
    trees = {}
    W = {}

    def tree(vira, score):
        at11 = (score[0] == 11) + (score[1] == 11)
        kind = (score[0] == 11, score[1] == 11) if at11 else "raises"
        if (vira, kind) not in trees:
            trees[(vira, kind)] = truco_strength_tree([c for c in deck if c != vira], vira, score,
                                                      three_ties)
        return trees[(vira, kind)]

    def after(a, b, pm, pp):
        if a + pm >= 12:
            return 1.0
        if b + pp >= 12:
            return 0.0
        return 1.0 - value(b + pp, a + pm)

    # one vira per rank, weighted by its count: the vira's rank is never the manilha's, so the cards
    # of its rank are commons that tie whatever their suits, and removing any one of them leaves
    # the same strengths to deal
    viras = {}
    for v in deck:
        viras.setdefault(v[0], [v, 0])[1] += 1

    def hand_value(a, b):
        total = 0.0
        for vira, count in viras.values():
            t = tree(vira, (a, b))
            truco_set_utilities(t, _Utility(lambda pm, pp: after(a, b, pm, pp)))
            total += truco_lp_value(t) * count / len(deck)
        return total

    def value(a, b):
        if (a, b) in W:
            return W[(a, b)]
        # W(a, b) is a fixed point through three tied tricks: (a, b) -> (b, a) -> (a, b). As a
        # function of a guess w for W(a, b), the hand values are piecewise linear, so the secant
        # method on g(w) = W(a, b) after one turn of the cycle - w lands on the fixed point in a few
        # steps (plain iteration needs dozens when ties are common, as in a two-rank deck)
        def g(w):
            W[(a, b)] = w
            if a != b:
                W[(b, a)] = hand_value(b, a)
            return hand_value(a, b) - w

        w0, g0 = 0.5, g(0.5)
        w1 = w0 + g0
        g1 = g(w1)
        while abs(g1) > tol:
            if g1 == g0:
                raise RuntimeError(f"secant stalled at score {a}-{b}")
            w0, g0, w1 = w1, g1, w1 - g1 * (w1 - w0) / (g1 - g0)
            g1 = g(w1)
        return W[(a, b)]

    for a in range(11, min_score - 1, -1):
        for b in range(11, min_score - 1, -1):
            value(a, b)
    return W


class _Utility(dict):
    """points -> utility, computed on first use."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def __missing__(self, key):
        self[key] = self.fn(*key)
        return self[key]
# Ludo race, second reference: written apart from race_moves / race_values above (no
# shared code): each player's pieces are an *ordered* tuple (piece identities kept), Jacobi value
# iteration from 0, both move rules. ``pass_by_overshoot`` True: any piece not at N may be picked,
# and one whose roll overshoots (overshoot "stay") stays where it is, which passes the turn; False:
# only pieces that can move may be picked, and the turn passes only when none can. A capture
# happens only on the cell where the moved piece ends (after its jumps), and sends every opponent
# piece there (not 0, N or a safe cell) back to 0.
# ---------------------------------------------------------------------------------------------

def ludo_step(board, cell, face):
    """(cell after the roll, moved?) for one piece not at N."""
    n = board["length"]
    t = cell + face
    if t > n:
        rule = board.get("overshoot", "stay")
        if rule == "stay":
            return cell, False
        t = n if rule == "finish" else n - (t - n)
    seen = 0
    jumps = board.get("jumps", {})
    while t in jumps and (seen == 0 or board.get("chain_jumps", False)):
        t = jumps[t]
        seen += 1
    return t, True


def ludo_race_options(board, own, opp, face, pass_by_overshoot):
    """[(own', opp', moved)] the mover may choose from after ``face`` (a pass keeps both)."""
    n = board["length"]
    safe = set(board.get("safe", ()))
    options = []
    for i, cell in enumerate(own):
        if cell == n:
            continue
        t, moved = ludo_step(board, cell, face)
        if not moved:
            if pass_by_overshoot:
                options.append((own, opp, False))
            continue
        new_own = own[:i] + (t,) + own[i + 1:]
        hit = t not in safe and 0 < t < n
        new_opp = tuple(0 if (hit and q == t) else q for q in opp)
        options.append((new_own, new_opp, True))
    return options or [(own, opp, False)]


def ludo_race_reference(board, pieces, pass_by_overshoot, tol=1e-13):
    """Win probability of the player to move under optimal play, {(own, opp): float} over ordered
    piece tuples of cells 0..N (games already won excluded), by Jacobi value iteration."""
    from itertools import product

    n = board["length"]
    again = board.get("roll_again_on")
    home = (n,) * pieces
    sides = [s for s in product(range(n + 1), repeat=pieces) if s != home]
    states = [(a, b) for a in sides for b in sides]
    faces = [(d, float(p)) for d, p in enumerate(board["die"], 1) if p > 0]
    table = {(s, d): ludo_race_options(board, s[0], s[1], d, pass_by_overshoot)
             for s in states for d, _ in faces}
    value = dict.fromkeys(states, 0.0)
    while True:
        new = {}
        for s in states:
            total = 0.0
            for d, p in faces:
                best = 0.0
                for own, opp, _ in table[s, d]:
                    if own == home:
                        v = 1.0
                    elif d == again:
                        v = value[own, opp]
                    else:
                        v = 1.0 - value[opp, own]
                    best = max(best, v)
                total += p * best
            new[s] = total
        delta = max(abs(new[s] - value[s]) for s in states)
        value = new
        if delta <= tol:
            return value


# ---------------------------------------------------------------------------------------------
# Truco: how much two solved subgames differ where play goes
#
# A recursive walk over every deal of a small deck with one vira, through ``truco_replay`` (the whole
# raise ladder), following a stored policy given as ``policy(player, hand, history)``: ``hand`` the
# sorted strength classes of the player's three cards, ``history`` the public history (strength
# classes played, "raise", "accept"; None before a hand-of-eleven decision), returning the action
# probabilities in the stored order (card classes ascending then raise; accept, fold, raise; play,
# fold) or None where the subgame has no information set. A missing raise slot is a raise the solved
# tree pruned: probability 0. Strength classes: the nine common ranks in order (0..8), then the
# manilhas by suit (9..12).
# ---------------------------------------------------------------------------------------------

def truco_strength(card, vira):
    """Strength class 0..12 of ``card`` under ``vira`` (strings)."""
    manilha = (TRUCO_ORDER.index(vira[0]) + 1) % 10
    rank = TRUCO_ORDER.index(card[0])
    if rank == manilha:
        return 9 + TRUCO_SUITS.index(card[1])
    return rank if rank < manilha else rank - 1


def truco_reach_by_infoset(deck, vira, score, policy, three_ties="nobody"):
    """{(player, hand, history): record} for every information set of the policy's subgame (the walk
    takes every branch, those of probability 0 too); a record holds ``reach`` (chance x both
    players), ``probs``, ``cards`` (cards played before it) and ``kind`` ("card", "card_or_raise",
    "answer", "eleven")."""
    from itertools import combinations

    cards = [c for c in deck if c != vira]
    deals = [(h0, h1) for h0 in combinations(cards, 3)
             for h1 in combinations([c for c in cards if c not in h0], 3)]
    out = {}

    def walk(hands, actions, history, reach):
        state = truco_replay(hands, vira, score, actions, three_ties)
        if state[0] == "end":
            return
        _, player, legal = state
        hand = tuple(sorted(truco_strength(c, vira) for c in hands[player]))
        classes = sorted({truco_strength(a[5:], vira) for a in legal if a.startswith("play:")})
        probs = policy(player, hand, None if history is None else tuple(history))
        if probs is None:  # no information set: one card class left and the raise pruned
            if "accept" in legal or "play_hand" in legal or len(classes) != 1:
                if reach > 0:
                    raise ValueError(f"no policy at a reached decision {player} {hand} {history}")
                return
            probs = [1.0]
        else:
            kind = ("eleven" if "play_hand" in legal else "answer" if "accept" in legal
                    else "card_or_raise" if len(probs) > len(classes) else "card")
            played = sum(1 for t in (history or []) if isinstance(t, int))
            rec = out.setdefault((player, hand, None if history is None else tuple(history)),
                                 dict(reach=0.0, probs=list(probs), cards=played, kind=kind))
            rec["reach"] += reach
        seen = set()
        for a in legal:
            if a.startswith("play:"):
                s = truco_strength(a[5:], vira)
                if s in seen:
                    continue  # one card per class: cards of one class are one action
                seen.add(s)
                slot, token = classes.index(s), s
            elif a == "fold":
                continue  # ends the hand: no decision after it
            elif a in ("play_hand", "accept"):
                slot, token = 0, a
            else:  # raise
                slot, token = (2 if "accept" in legal else len(classes)), "raise"
            q = probs[slot] if slot < len(probs) else 0.0  # every branch, to meet every set
            nxt = [] if a == "play_hand" else list(history) + [token]
            walk(hands, actions + [a], nxt, reach * q)

    at11 = (score[0] == 11) != (score[1] == 11)
    for h0, h1 in deals:
        walk([list(h0), list(h1)], [], None if at11 else [], 1.0 / len(deals))
    return out


def truco_compare_shares(weighed, other, threshold):
    """Shares of ``weighed``'s play (records of ``truco_reach_by_infoset``) where ``other``'s policy
    differs: the total variation distance, shorter action lists padded with zeros, above
    ``threshold``. Returns the whole hand's and per-bucket figures: {"all" | ("cards", k) |
    ("kind", name): (share_of_play, differ_share, differ_share_of_all, mean_tv, not_comparable_share)}."""
    total = sum(r["reach"] for r in weighed.values())
    buckets = {}
    for key, rec in weighed.items():
        o = other.get(key)
        if o is None:
            tv = None
        else:
            n = max(len(rec["probs"]), len(o["probs"]))
            p = list(rec["probs"]) + [0.0] * (n - len(rec["probs"]))
            q = list(o["probs"]) + [0.0] * (n - len(o["probs"]))
            tv = 0.5 * sum(abs(x - y) for x, y in zip(p, q))
        for b in ("all", ("cards", rec["cards"]), ("kind", rec["kind"])):
            acc = buckets.setdefault(b, [0.0, 0.0, 0.0, 0.0])  # mass, differ, comparable, tv mass
            acc[0] += rec["reach"]
            if tv is not None:
                acc[2] += rec["reach"]
                acc[3] += rec["reach"] * tv
                if tv > threshold:
                    acc[1] += rec["reach"]
    return {b: (m / total, d / m, d / total, t / c if c > 0 else None, (m - c) / m)
            for b, (m, d, c, t) in buckets.items() if m > 0}


TRUCO_GRID_DECK = ["7d", "7s", "7h", "7c", "Ad", "As", "Ah"]
TRUCO_GRID_SOURCE = (
    "tests/naive.py truco_grid_values(TRUCO_GRID_DECK, 0): every hand at every score of the 7-card "
    "deck solved by the sequence-form LP over the whole raise ladder (scipy HiGHS), the scores chained "
    "from 11-11 down, the three-tie cycles by the secant method to 1e-12; regenerate with `python "
    "tests/naive.py truco-grid > tests/truco_grid_7card.json` (34 minutes on one shared core, 2026-12-01)")


if __name__ == "__main__":
    import json
    import sys

    if sys.argv[1:] != ["truco-grid"]:
        sys.exit("usage: python tests/naive.py truco-grid > tests/truco_grid_7card.json")
    W = truco_grid_values(TRUCO_GRID_DECK, 0)
    json.dump({"source": TRUCO_GRID_SOURCE, "deck": TRUCO_GRID_DECK,
               "W": {f"{a}-{b}": v for (a, b), v in sorted(W.items())}}, sys.stdout, indent=1)
    print()
