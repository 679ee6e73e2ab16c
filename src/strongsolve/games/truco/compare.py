"""How much the coordinates of a subgame matter: the share of real play where the equilibria of two
solved subgames differ, and where in the hand.

Real play is the equilibrium's own. An information set weighs its reach probability under the
subgame's stored average strategy: chance (the deal) times both players' actions, summed over the
information set's nodes (``kernels.cfr.reach_probabilities``), on the subgame's tree rebuilt from its
score, vira class and deck (``tree.build_hand_tree``, checked equal to the stored keys). The total
weight of a subgame is its expected number of decisions per hand; every share is a fraction of it.

Both weightings are reported, neither averaged away: ``first`` weighs the information sets of the
first subgame by their reach there, ``second`` those of the second subgame by their reach there
(they differ where the two equilibria steer play differently).

Matching: an information set is (player, hand as a multiset of strength classes, public history:
the strength classes played, with the raises and answers between them). The stored key holds an index
into the subgame's own ``hands`` array, which depends on the deck and the vira class, so hands are
matched through their classes. Strength classes are relative ranks (encoding.py: the nine common
ranks in order, then the four manilhas), so across vira classes a hand keeps its strengths, not its
face ranks. Histories are compared across kinds of tree too: a hand of eleven and a hand with raises
share the histories without raises. An information set with no counterpart in the other subgame (a
hand the other vira cannot deal, a history after a raise the other tier prunes, a decision the other
tree plays without a node because its raise is pruned) is "not comparable": its weight is reported
apart and it counts neither as differing nor as equal.

Difference: the total variation distance ``0.5 * sum_a |p(a) - q(a)|`` of the two action
distributions, the shorter padded with zeros (a history's action slots are its card classes in
ascending order then the raise; accept, fold, raise again; play, fold: a missing slot is a raise the
other tree does not allow). An information set differs when its distance exceeds ``threshold``.

Where in the hand: by the cards already played (0..5) and by the kind of decision (``KINDS``):
``card`` (play a card, no raise open), ``card_or_raise`` (play a card or raise), ``answer`` (accept,
fold or raise again), ``eleven`` (the player at 11 plays the hand of eleven or folds).
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...kernels.cfr import reach_probabilities
from . import encoding as ab
from . import rules as R
from .hints import unsolved_command
from .stages.grid import deck_root, stored_path, stored_subgames
from .pruning import tier as raise_tier
from .saved import read_subgame
from .subgames import check_score, eleven_player, in_row11
from .tree import ANSWERS, N_RAISE_CODES, RAISE_DIGITS, build_hand_tree

KINDS = ("card", "card_or_raise", "answer", "eleven")
MAX_CARDS = 2 * R.HAND_SIZE - 1  # cards played before a decision: 0..5
WIDTH = R.HAND_SIZE + 1  # most actions of a decision: three card classes and the raise


@dataclass
class InfosetTable:
    """What the comparison needs of a rebuilt tree, shared by every subgame of that tree (the hands
    11-x of one vira class share one tree, whatever x).

    Attributes
    ----------
    match : int64[I]
        Matching key of each information set: player, hand classes and public history in one integer
        (the same in any tree over the 13 strength classes).
    cards : int64[I]
        Cards played before the decision (0..5).
    kind : int64[I]
        Index into ``KINDS``.
    infoset_ptr : int64[I+1]
        Action slots of each information set.
    """

    match: np.ndarray
    cards: np.ndarray
    kind: np.ndarray
    infoset_ptr: np.ndarray


@dataclass
class SubgamePlay:
    """A solved subgame ready to compare: where its equilibrium goes and what it plays there.

    Attributes
    ----------
    score : (int, int)
        Role-ordered score (mano's, pé's points).
    vira_class : int
    deck : str
        The deck's name (``grid.Deck.name``).
    path : Path
        The stored subgame.
    table : InfosetTable
    reach : float64[I]
        Reach probability of each information set under the stored average strategy.
    policy : float64[M]
        The stored average strategy (slots of ``table.infoset_ptr``).
    """

    score: tuple
    vira_class: int
    deck: str
    path: Path
    table: InfosetTable
    reach: np.ndarray
    policy: np.ndarray

    @property
    def label(self):
        return f"{self.score[0]}-{self.score[1]} class {self.vira_class}"


def infoset_table(tree):
    """Matching keys, cards played and decision kinds of a built ``tree.HandTree``'s information sets.

    The key layout is tree.HandTree's (``hist * 2 * n_hands + hand * 2 + player``; with raises
    ``hist = code * N_RAISE_CODES + raise code``, one base-``RAISE_DIGITS`` digit per raise made, the
    last raise pending when its answer digit is 0). Whether a raise is open at a card decision is read
    off the tree: its last action leads to the opponent answering a raise.

    Returns
    -------
    InfosetTable
    """
    key = tree.infoset_key
    n_hands = len(tree.hands)
    player = key % 2
    hand = (key // 2) % n_hands
    hist = key // (2 * n_hands)
    code, rcode = np.divmod(hist, N_RAISE_CODES) if tree.raises else (hist, np.zeros_like(hist))
    base = tree.n_types + 1
    if len(code) and code.max() >= base ** (MAX_CARDS + 1):
        raise ValueError("a history longer than five cards: not a Truco hand's tree")
    cards = np.zeros(len(key), np.int64)
    c = code.copy()
    while np.any(c > 1):  # the code is a leading 1 followed by one digit per card played
        more = c > 1
        cards += more
        c = np.where(more, c // base, c)
    last = np.zeros_like(rcode)  # the digit of the last raise made (raises fill digits in order)
    r = rcode.copy()
    while np.any(r > 0):
        d = r % RAISE_DIGITS
        last = np.where(d > 0, d, last)
        r //= RAISE_DIGITS
    pending = (last > 0) & ((last - 1) % ANSWERS == 0)
    g = tree.game
    dec = np.flatnonzero(g.node_infoset >= 0)
    _, first = np.unique(g.node_infoset[dec], return_index=True)
    node = dec[first]  # one node of each information set, in information-set order
    last_child = g.child[g.child_ptr[node + 1] - 1]
    answered = g.node_infoset[last_child]
    raise_open = ~pending & (answered >= 0) & pending[np.maximum(answered, 0)]
    eleven = (code == 0) & (not tree.raises)
    kind = np.where(eleven, 3, np.where(pending, 2, np.where(raise_open, 1, 0)))
    h = tree.hands.astype(np.int64)
    hand_code = (h[:, 0] * base + h[:, 1]) * base + h[:, 2]
    match = ((code * N_RAISE_CODES + rcode) * base ** 3 + hand_code[hand]) * 2 + player
    return InfosetTable(match=match, cards=cards, kind=kind.astype(np.int64),
                        infoset_ptr=g.infoset_ptr.copy())


def load_play(results, deck, a, b, c, cache=None):
    """Read solved subgame (a, b, c) of ``deck`` under ``results``, rebuild its tree and weigh its
    information sets by their reach under the stored average strategy.

    Parameters
    ----------
    results : path
        The results directory (the deck's root is ``grid.deck_root(results, deck)``; the 11 row may be
        in the grid layout or the row-11 workflow's, ``grid.stored_path``).
    deck : grid.Deck
    a, b : int
        Role-ordered score: mano's and pé's points, 0..11.
    c : int
        Vira class of ``deck``.
    cache : dict or None
        Holds the last tree built and its ``InfosetTable``; a later call for a subgame of the same tree
        (same class, kind of hand, raise caps and rules) reuses them.

    Returns
    -------
    SubgamePlay

    Raises
    ------
    ValueError
        A bad score or vira class; a stored subgame of another deck; the 11-11 hand solved blind (no
        decisions); a stored tree that does not match the one rebuilt (the command that re-solves it).
    FileNotFoundError
        The subgame is not solved: the message names it and the command that solves it.
    """
    check_score(a, b)
    if c not in deck.classes:
        raise ValueError(f"bad vira class {c}: the {deck.name} deck has classes 0..{len(deck.classes) - 1}")
    root = deck_root(results, deck)
    path = stored_path(root, a, b, c)
    cmd = unsolved_command(results, deck, a, b)
    if path is None:
        raise FileNotFoundError(f"subgame {a}-{b} (mano-pé) vira class {c} of the {deck.name} deck is "
                                f"not solved under {root}: solve it with: {cmd}")
    attrs, data = read_subgame(path)
    if attrs.get("deck", "full") != deck.name:
        raise ValueError(f"{path} is a subgame of the deck {attrs.get('deck', 'full')}, not of the "
                         f"{deck.name} deck asked for")
    prm = attrs.get("params", {})
    if (a, b) == (11, 11) and prm.get("eleven_eleven") == "blind":
        raise ValueError(f"{path}: the 11-11 hand was solved with blind play (eleven_eleven: blind): "
                         "nobody decides anything, so there is no policy to compare")
    raises = not in_row11(a, b)
    caps = tuple(attrs["raise_caps"]) if raises else None
    spec = (deck.name, c, eleven_player(a, b), raises, caps, prm.get("three_ties", "nobody"))
    if cache is not None and cache.get("spec") == spec:
        tree, table = cache["tree"], cache["table"]
    else:
        if cache is not None:
            cache.clear()  # free the last tree before building the next
        hands, pairs, weights = ab.deal_pairs(deck.capacities[c])
        tree = build_hand_tree(np.arange(R.N_STRENGTHS), np.array(hands), pairs, weights,
                               eleven=spec[2], three_ties=spec[5], raises=raises, raise_caps=caps)
        table = infoset_table(tree)
        if cache is not None:
            cache.update(spec=spec, tree=tree, table=table)
    if not (np.array_equal(tree.infoset_key, data["infoset_key"])
            and np.array_equal(tree.game.infoset_ptr, data["infoset_ptr"])
            and np.array_equal(tree.hands, data["hands"])):
        raise ValueError(f"the tree rebuilt for {path} ({tree.game.n_infosets} information sets) does "
                         f"not match the stored one ({len(data['infoset_key'])}): it was solved with "
                         f"other rules or code; move it away and solve it again with: {cmd}")
    policy = np.asarray(data["policy"], np.float64)
    reach = reach_probabilities(tree.game, policy)
    dec = np.flatnonzero(tree.game.node_infoset >= 0)
    iset_reach = np.bincount(tree.game.node_infoset[dec], weights=reach[dec],
                             minlength=tree.game.n_infosets)
    return SubgamePlay(score=(a, b), vira_class=c, deck=deck.name, path=path, table=table,
                       reach=iset_reach, policy=policy)


def _padded(play):
    """float64[I, WIDTH]: each information set's action probabilities, zeros past its slots."""
    ptr = play.table.infoset_ptr
    n = np.diff(ptr)
    out = np.zeros((len(n), WIDTH))
    out[np.repeat(np.arange(len(n)), n), np.arange(int(ptr[-1])) - np.repeat(ptr[:-1], n)] = play.policy
    return out


def _distances(weighed, other):
    """Per information set of ``weighed``: whether ``other`` has it, and the TV distance there."""
    order = np.argsort(other.table.match, kind="stable")
    keys = other.table.match[order]
    found = np.zeros(len(weighed.table.match), bool)
    tv = np.zeros(len(weighed.table.match))
    if len(keys):
        j = np.minimum(np.searchsorted(keys, weighed.table.match), len(keys) - 1)
        found = keys[j] == weighed.table.match
        p, q = _padded(weighed), _padded(other)
        tv[found] = 0.5 * np.abs(p[found] - q[order[j[found]]]).sum(axis=1)
    return found, tv


def shares(weighed, other, threshold):
    """The shares of ``weighed``'s real play where ``other``'s policy differs (module docstring).

    Returns
    -------
    dict
        ``decisions_per_hand`` (the total reach weight), and for the whole hand and per bucket of
        ``by_cards_played`` (0..5) and ``by_kind`` (``KINDS``; buckets without weight left out):
        ``share_of_play`` (the bucket's weight over the total), ``differ_share`` (weight where the
        distance exceeds ``threshold``, over the bucket's), ``differ_share_of_all`` (the same over the
        total), ``mean_tv`` (weighted mean distance over the bucket's comparable weight; None if
        there is none), ``not_comparable_share`` (over the bucket's weight).
    """
    found, tv = _distances(weighed, other)
    r = weighed.reach
    total = float(r.sum())
    if total <= 0:
        raise ValueError(f"{weighed.path} has no decision with positive reach: nothing to compare")
    differ = found & (tv > threshold)

    def summary(mask):
        mass = float(r[mask].sum())
        comparable = float(r[mask & found].sum())
        return dict(share_of_play=mass / total,
                    differ_share=float(r[mask & differ].sum()) / mass,
                    differ_share_of_all=float(r[mask & differ].sum()) / total,
                    mean_tv=float((r * tv)[mask & found].sum()) / comparable if comparable > 0 else None,
                    not_comparable_share=float(r[mask & ~found].sum()) / mass)

    t = weighed.table
    out = dict(decisions_per_hand=total, **summary(np.ones(len(r), bool)))
    out["by_cards_played"] = [dict(cards=k, **summary(t.cards == k)) for k in range(MAX_CARDS + 1)
                              if r[t.cards == k].sum() > 0]
    out["by_kind"] = [dict(kind=name, **summary(t.kind == i)) for i, name in enumerate(KINDS)
                      if r[t.kind == i].sum() > 0]
    return out


def check_threshold(threshold):
    """ValueError unless 0 <= ``threshold`` < 1 (a TV distance is at most 1)."""
    if not 0 <= threshold < 1:
        raise ValueError(f"bad threshold {threshold}: a total variation distance threshold in [0, 1)")


def compare_plays(first, second, threshold=0.1):
    """Compare two loaded subgames (``load_play``) of one deck.

    Parameters
    ----------
    first, second : SubgamePlay
    threshold : float
        An information set differs when the TV distance of the two policies there exceeds it, 0 <= t < 1.

    Returns
    -------
    dict
        ``first``/``second`` (score, vira class, path), ``deck``, ``threshold`` and ``weights``:
        ``{"first": shares(first, second), "second": shares(second, first)}``.

    Raises
    ------
    ValueError
        On a threshold outside [0, 1) or subgames of different decks.
    """
    check_threshold(threshold)
    if first.deck != second.deck:
        raise ValueError(f"subgames of different decks: {first.label} of {first.deck} ({first.path}) "
                         f"and {second.label} of {second.deck} ({second.path}); compare two subgames "
                         "of one deck")
    desc = lambda p: dict(score=list(p.score), vira_class=p.vira_class, path=str(p.path))
    return dict(first=desc(first), second=desc(second), deck=first.deck, threshold=threshold,
                weights=dict(first=shares(first, second, threshold),
                             second=shares(second, first, threshold)))


def compare(results, deck, first, second, threshold=0.1):
    """``compare_plays`` of subgames ``first`` and ``second``, each (a, b, c), of ``deck`` under
    ``results`` (errors as in ``load_play`` and ``compare_plays``)."""
    check_threshold(threshold)
    cache = {}
    x = load_play(results, deck, *first, cache=cache)
    y = load_play(results, deck, *second, cache=cache)
    return compare_plays(x, y, threshold)


def neighbour_pairs(subgames):
    """Neighbouring pairs among ``subgames`` (a collection of (a, b, c)): ``("vira", (a, b, c),
    (a, b, c + 1))`` and ``("score", (a, b, c), (a, b + 1, c))`` / ``(a + 1, b, c)``, both ends in
    the collection."""
    have = set(subgames)
    out = []
    for a, b, c in sorted(have):
        for kind, other in (("vira", (a, b, c + 1)), ("score", (a, b + 1, c)), ("score", (a + 1, b, c))):
            if other in have:
                out.append((kind, (a, b, c), other))
    return out


def _tree_order(s):
    """Sort key putting the subgames of one tree next to each other (one build per tree)."""
    a, b, c = s
    return (c, in_row11(a, b), eleven_player(a, b), 0 if in_row11(a, b) else raise_tier(a, b), a, b)


def compare_neighbours(results, deck, threshold=0.1, log=None):
    """``compare_plays`` of every neighbouring pair (``neighbour_pairs``) of the subgames of ``deck``
    solved under ``results``.

    Subgames are loaded in tree order, each once, and dropped when their last pair is done, so memory
    holds about two vira classes of subgames and one tree.

    Parameters
    ----------
    results : path
    deck : grid.Deck
    threshold : float
    log : callable or None
        Receives one line per pair compared.

    Returns
    -------
    list of dict
        One per pair: ``pair`` ("vira" or "score") and the ``compare_plays`` record.

    Raises
    ------
    FileNotFoundError
        If no two neighbouring subgames are solved (with the command that solves a region).
    """
    check_threshold(threshold)
    solved = stored_subgames(deck_root(results, deck))
    pairs = neighbour_pairs(solved)
    if not pairs:
        raise FileNotFoundError(f"no two neighbouring subgames of the {deck.name} deck are solved "
                                f"under {results}: solve a region with: {unsolved_command(results, deck, 11, 10)}")
    left = {}
    for _, x, y in pairs:
        left[x] = left.get(x, 0) + 1
        left[y] = left.get(y, 0) + 1
    loaded, cache, done, rows = {}, {}, set(), []
    for s in sorted(left, key=_tree_order):
        loaded[s] = load_play(results, deck, *s, cache=cache)
        for i, (kind, x, y) in enumerate(pairs):
            if i in done or x not in loaded or y not in loaded:
                continue
            done.add(i)
            rows.append(dict(pair=kind, **compare_plays(loaded[x], loaded[y], threshold)))
            if log:
                w = rows[-1]["weights"]
                log(f"{kind} {loaded[x].label} vs {loaded[y].label}: differ "
                    f"{w['first']['differ_share']:.4f} / {w['second']['differ_share']:.4f}")
            for z in (x, y):
                left[z] -= 1
                if left[z] == 0:
                    del loaded[z]
    return rows


def neighbour_summary(rows):
    """Per pair kind ("vira", "score"): the number of pairs and the mean over pairs (both weightings
    pooled, each pair counted twice) of ``differ_share``, ``mean_tv``, ``not_comparable_share`` and,
    per cards played and per kind of decision, of ``share_of_play``, ``differ_share`` and
    ``differ_share_of_all`` (a bucket absent from a pair counts 0 of play and 0 differing; its
    ``differ_share`` is averaged over the pairs that have it); ``by_scores`` gives the first three per
    pair of scores (over the vira classes)."""
    out = {}
    mean = lambda vals: float(np.mean(vals)) if vals else None
    for kind in ("vira", "score"):
        ws = [r["weights"][w] for r in rows if r["pair"] == kind for w in ("first", "second")]
        if not ws:
            continue
        scores = []
        for f, s in sorted({(tuple(r["first"]["score"]), tuple(r["second"]["score"]))
                            for r in rows if r["pair"] == kind}):
            sw = [r["weights"][w] for r in rows if r["pair"] == kind and tuple(r["first"]["score"]) == f
                  and tuple(r["second"]["score"]) == s for w in ("first", "second")]
            scores.append(dict(first=list(f), second=list(s), pairs=len(sw) // 2,
                               differ_share=mean([w["differ_share"] for w in sw]),
                               max_differ_share=max(w["differ_share"] for w in sw),
                               mean_tv=mean([w["mean_tv"] for w in sw if w["mean_tv"] is not None]),
                               not_comparable_share=mean([w["not_comparable_share"] for w in sw])))
        def buckets(group, field, names):
            out = []
            for k in names:
                got = [next((d for d in w[group] if d[field] == k), None) for w in ws]
                if all(d is None for d in got):
                    continue
                out.append({field: k,
                            "share_of_play": mean([d["share_of_play"] if d else 0.0 for d in got]),
                            "differ_share": mean([d["differ_share"] for d in got if d]),
                            "differ_share_of_all": mean([d["differ_share_of_all"] if d else 0.0
                                                         for d in got])})
            return out

        out[kind] = dict(pairs=len(ws) // 2, differ_share=mean([w["differ_share"] for w in ws]),
                         mean_tv=mean([w["mean_tv"] for w in ws if w["mean_tv"] is not None]),
                         not_comparable_share=mean([w["not_comparable_share"] for w in ws]),
                         max_differ_share=max(w["differ_share"] for w in ws),
                         by_cards_played=buckets("by_cards_played", "cards", range(MAX_CARDS + 1)),
                         by_kind=buckets("by_kind", "kind", KINDS), by_scores=scores)
    return out
