"""Plain-Python reference of Truco Paulista: a replay engine over physical cards, nested game
trees, the sequence-form LP, best responses, the score grid by DP, reach by information set."""

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
    "tests/naive/truco.py truco_grid_values(TRUCO_GRID_DECK, 0): every hand at every score of the 7-card "
    "deck solved by the sequence-form LP over the whole raise ladder (scipy HiGHS), the scores chained "
    "from 11-11 down, the three-tie cycles by the secant method to 1e-12; regenerate with `python "
    "tests/naive/truco.py truco-grid > tests/truco_grid_7card.json` (34 minutes on one shared core, 2026-12-01)")


if __name__ == "__main__":
    import json
    import sys

    if sys.argv[1:] != ["truco-grid"]:
        sys.exit("usage: python tests/naive/truco.py truco-grid > tests/truco_grid_7card.json")
    W = truco_grid_values(TRUCO_GRID_DECK, 0)
    json.dump({"source": TRUCO_GRID_SOURCE, "deck": TRUCO_GRID_DECK,
               "W": {f"{a}-{b}": v for (a, b), v in sorted(W.items())}}, sys.stdout, indent=1)
    print()


# ---------------------------------------------------------------------------------------------
# Off the equilibrium path (plain recursion on a nested tree, keys its information sets)
#
# An information set of player p is off the path when the product of p's own probabilities on the
# way to it is at most ``tau``. Beliefs there: its nodes with the fewest zero-probability opponent
# actions on the way, each weighted by chance times the opponent's positive probabilities. The best
# response from there: the most any continuation of p can get (max for player 0, min for 1 of
# player 0's utility) against the opponent's strategy, by enumerating p's pure continuations.
# ---------------------------------------------------------------------------------------------

def truco_off_path_beliefs(tree, strategy, player, tau, unreached=True, force=()):
    """{key: [(node, weight)]} of ``player``'s information sets off the path, their nodes with the
    beliefs' weights (nodes of weight 0 left out); ``strategy(key, n) -> probabilities``. A set is
    off the path when the player's own reach is at most ``tau``, or (``unreached``) no node of it
    has positive chance-and-opponent reach, or its key is in ``force``, or the player's previous
    set on the way is off the path."""
    nodes = {}  # key -> [(node, weight, deviations, chance x opponent reach)]
    own_of, parent_of = {}, {}

    def walk(node, own, weight, deviations, reach, last):
        if node["kind"] == "terminal":
            return
        if node["kind"] == "chance":
            for p, c in zip(node["probs"], node["children"]):
                walk(c, own, weight * p, deviations, reach * p, last)
            return
        probs = strategy(node["key"], len(node["children"]))
        if node["player"] == player:
            nodes.setdefault(node["key"], []).append((node, weight, deviations, reach))
            own_of[node["key"]], parent_of[node["key"]] = own, last
            for p, c in zip(probs, node["children"]):
                walk(c, own * p, weight, deviations, reach, node["key"])
        else:
            for p, c in zip(probs, node["children"]):
                walk(c, own, weight * p if p > 0 else weight, deviations + (p == 0), reach * p,
                     last)

    walk(tree, 1.0, 1.0, 0, 1.0, None)

    def is_off(key):
        parent = parent_of[key]
        return (key in force or own_of[key] <= tau
                or (unreached and all(r == 0 for *_, r in nodes[key]))
                or (parent is not None and is_off(parent)))

    out = {}
    for key, members in nodes.items():
        if not is_off(key):
            continue
        live = [(n, w, d) for n, w, d, _ in members if w > 0]
        fewest = min((d for _, _, d in live), default=0)
        out[key] = [(n, w) for n, w, d in live if d == fewest]
    return out


def truco_continuation_value(node, strategy):
    """Player 0's expected utility below ``node`` when both follow ``strategy``."""
    if node["kind"] == "terminal":
        return node["utility"]
    if node["kind"] == "chance":
        return sum(p * truco_continuation_value(c, strategy)
                   for p, c in zip(node["probs"], node["children"]))
    probs = strategy(node["key"], len(node["children"]))
    return sum(p * truco_continuation_value(c, strategy)
               for p, c in zip(probs, node["children"]) if p > 0)


def truco_best_continuation(members, strategy, player):
    """The best (max for player 0, min for 1) weighted average of player 0's utility that
    ``player`` can get from the nodes ``members`` [(node, weight)] of one information set on,
    against ``strategy`` of the other player: every pure continuation of ``player`` enumerated."""
    from itertools import product

    keys = []

    def collect(node):
        if node["kind"] == "terminal":
            return
        if node["kind"] == "decision" and node["player"] == player and node["key"] not in keys:
            keys.append(node["key"])
        for c in node["children"]:
            collect(c)

    for n, _ in members:
        collect(n)
    sizes = {}

    def size(node):
        if node["kind"] == "decision" and node["player"] == player:
            sizes[node["key"]] = len(node["children"])
        for c in node["children"] if node["kind"] != "terminal" else ():
            size(c)

    for n, _ in members:
        size(n)
    total = sum(w for _, w in members)
    best = None
    for choice in product(*[range(sizes[k]) for k in keys]):
        pick = dict(zip(keys, choice))

        def prof(key, n, pick=pick):
            if key in pick:
                return [1.0 if a == pick[key] else 0.0 for a in range(n)]
            return strategy(key, n)

        v = sum(w * truco_continuation_value(n, prof) for n, w in members) / total
        if best is None or (v > best if player == 0 else v < best):
            best = v
    return best
