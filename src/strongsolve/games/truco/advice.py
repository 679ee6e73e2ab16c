"""The answer of a solved Truco subgame at a decision, for physical cards: the equilibrium mix of
the player to act (the CLI's ``strongsolve truco policy`` and the lab's Truco pages both print
what these return). At a decision off the equilibrium path (one the player's own strategy does not
reach, e.g. after their own deviation) the stored policy is a best response to the opponent's
strategy (kernels/off_path.py), and the answer says so: ``off_path`` True, with
:data:`OFF_PATH_NOTE` for people.

- :func:`policy`: the hand's first decision (the play/fold decision of the player at 11, or
  mano's first card at 11-11);
- :func:`policy_line`: the decision after a line of play (cards, raises, answers).
"""

N_SUBGAMES = 144 * 9
"""Subgames of the whole score grid: 144 role-ordered scores x 9 vira classes."""

OFF_PATH_NOTE = "off the equilibrium path: best response to the opponent's strategy"
"""What the CLI and the lab print at a decision off the equilibrium path."""


def policy(score, dealer, vira, hand, results="results"):
    """The first decision of a solved subgame, for physical cards.

    Parameters
    ----------
    score : (int, int)
        Player 0's and player 1's points (0..11).
    dealer : int
        The dealing player (0 or 1); the other is mano.
    vira : str
        The turned card, e.g. ``"7c"``.
    hand : str
        The deciding player's three cards: the player at 11, or mano at 11-11.
    results : path
        Results directory holding ``truco/row11``.

    Returns
    -------
    dict
        ``actions``: list of {action, cards, probability}; ``value_player0``: player 0's match-win
        probability of the subgame (before the deal); the subgame's ``nash_conv`` and
        ``exploitability`` (match-win probability); the role-ordered score and vira class;
        ``off_path`` (bool): the decision is off the equilibrium path (module docstring).

    Raises
    ------
    ValueError
        Bad cards, a hand holding the vira, or a score outside the solved 11 row.
    FileNotFoundError
        If the subgame is not solved yet under ``results``.
    """
    import numpy as np

    from . import encoding as ab
    from . import rules as R
    from .saved import read_subgame, subgame_path
    from .subgames import eleven_player, in_row11

    mano = 1 - dealer
    a, b = score[mano], score[dealer]
    if not in_row11(a, b):
        raise ValueError(f"score {score[0]}-{score[1]} has no player at 11: only the 11 row is solved")
    vira_card = R.parse_card(vira)
    cards = R.parse_hand(hand)
    if vira_card in cards:
        raise ValueError(f"the hand {hand!r} holds the vira {vira!r}")
    vr = vira_card // R.N_SUITS
    c = ab.vira_class(vr)
    from .hints import row11_command

    try:
        attrs, data = read_subgame(subgame_path(results, a, b, c))
    except FileNotFoundError as err:
        raise FileNotFoundError(f"{err}: solve the 11 row with: {row11_command(results)}") from None
    e = eleven_player(a, b)
    if e < 0 and attrs.get("params", {}).get("eleven_eleven") == "blind":
        raise ValueError("the 11-11 hand was solved with blind play (eleven_eleven: blind, cards in "
                         f"random order): nobody decides anything; player 0 wins the match with "
                         f"probability {attrs['value'] if mano == 0 else 1.0 - attrs['value']:.9f}")
    role = e if e >= 0 else R.MANO
    abstract = ab.abstract_hand(cards, vr)
    hands = [tuple(int(t) for t in h) for h in data["hands"]]
    h = hands.index(abstract)
    n_h = len(hands)
    key = h * 2 + role if e >= 0 else 1 * 2 * n_h + h * 2 + role
    keys = data["infoset_key"]
    hit = np.flatnonzero(keys == key)
    if len(hit) != 1:
        raise ValueError(f"hand {hand!r} never reaches this decision in the stored tree")
    lo, hi = data["infoset_ptr"][hit[0]], data["infoset_ptr"][hit[0] + 1]
    probs = [float(p) for p in data["policy"][lo:hi]]
    off_path = bool(data["off_path"][hit[0]])
    if e >= 0:
        actions = [dict(action="play", cards=[], probability=probs[0]),
                   dict(action="fold", cards=[], probability=probs[1])]
    else:
        types = sorted(set(abstract))
        actions = [dict(action="lead", probability=p,
                        cards=[R.card_text(x) for x in cards if R.strength(x, vr) == t])
                   for t, p in zip(types, probs)]
    player = mano if role == R.MANO else dealer
    value0 = attrs["value"] if mano == 0 else 1.0 - attrs["value"]
    return dict(score=list(score), dealer=dealer, mano=mano, role_score=[a, b], vira=vira,
                vira_class=c, player=player, hand=[R.card_text(x) for x in cards],
                decision="hand_of_eleven" if e >= 0 else "first_card", actions=actions,
                off_path=off_path, value_player0=value0, nash_conv=attrs["nash_conv"],
                exploitability=attrs["exploitability"], iterations=attrs["iterations"])


def policy_line(score, dealer, vira, hand, line, results="results", cache=None):
    """The equilibrium mix of the player to act after ``line`` in a solved subgame.

    Parameters
    ----------
    score, dealer, vira, results
        As in ``policy``.
    hand : str
        The cards of the player to act after the line (three, those they played included).
    line : str
        The play so far (games/truco/line.py), e.g. ``"7c Kd truco accept"``.

    Returns
    -------
    dict
        ``actions``: list of {action, cards, probability} in the order of the rules; ``player``
        to act; ``value_player0``; the subgame's ``nash_conv``, ``exploitability``, ``raise_caps``;
        ``pruned_raise``: True when the line's last raise is one the lossless pruning drops
        (games/truco/pruning.py), whose equilibrium answer is to accept; ``off_path``: True when
        the decision is off the equilibrium path (module docstring; False at a forced move).
    cache : dict, optional
        Filled with the subgame read (attributes, arrays, tree) and reused by later calls for the
        same subgame: the lab asks many lines of one subgame.

    Raises
    ------
    ValueError
        An illegal line (the token named), a hand that does not fit the line.
    FileNotFoundError
        The subgame is not solved under ``results``, with the command that solves it.
    """
    import numpy as np

    from . import encoding as ab
    from . import rules as R
    from .hints import row11_command, solve_command
    from .stages.grid import stored_path
    from .line import action_labels, check_hand, replay_line
    from .pruning import strip_pruned
    from .saved import read_subgame
    from .subgames import in_row11
    from .tree import HandTree

    mano = 1 - dealer
    a, b = score[mano], score[dealer]
    vira_card = R.parse_card(vira)
    cards = R.parse_hand(hand)
    # the line's own legality first (face-down tokens allowed until the subgame says otherwise)
    check_hand(replay_line(a, b, vira_card, line, face_down=True), cards, vira_card)
    vr = R.card_rank(vira_card)
    c = ab.vira_class(vr)
    path = stored_path(results, a, b, c)
    if path is None:
        cmd = row11_command(results) if in_row11(a, b) else solve_command(results, None, min(a, b))
        raise FileNotFoundError(f"no solved subgame for score {a}-{b} (mano-pé), vira class {c} "
                                f"under {results}: solve it with: {cmd}")
    raises = not in_row11(a, b)
    if cache is None or cache.get("path") != path:
        attrs, data = read_subgame(path)
        tree = HandTree(game=None, outcome=None, infoset_key=data["infoset_key"], hands=data["hands"],
                        n_types=R.N_STRENGTHS, eleven=attrs["eleven"], raises=raises,
                        face_down=bool(attrs.get("params", {}).get("face_down", False)))
        if cache is not None:
            cache.update(path=path, attrs=attrs, data=data, tree=tree)
    else:
        attrs, data, tree = cache["attrs"], cache["data"], cache["tree"]
    state = replay_line(a, b, vira_card, line, face_down=tree.face_down)
    if attrs.get("params", {}).get("eleven_eleven") == "blind" and (a, b) == (11, 11):
        raise ValueError("the 11-11 hand was solved with blind play: nobody decides anything")
    labels = action_labels(state, cards, vira_card)
    hands = [tuple(int(t) for t in h) for h in data["hands"]]
    if ab.abstract_hand(cards, vr) not in hands:  # a subgame solved on a small deck
        raise ValueError(f"hand {hand!r} is not among the {len(hands)} hands of the stored subgame "
                         f"{path}")
    h = hands.index(ab.abstract_hand(cards, vr))
    pruned = False
    off_path = False
    hist = None if state.eleven_pending else state.tokens
    if raises:
        hist, how = strip_pruned(state.tokens, np.arange(R.N_STRENGTHS), tuple(attrs["raise_caps"]))
        if how == "off":
            raise ValueError(f"line {line!r} raises after a raise the solved subgame prunes (it "
                             "cannot change the match); its equilibrium accepts such raises, so "
                             "no equilibrium play reaches this point")
        pruned = how == "answer"
    if pruned:
        probs = [1.0] + [0.0] * (len(labels) - 1)  # accept (pruning.py, step 3)
    else:
        try:
            i = tree.infoset_of(state.to_move, h, hist)
            probs = [float(p) for p in data["policy"][data["infoset_ptr"][i]:data["infoset_ptr"][i + 1]]]
            off_path = bool(data["off_path"][i])
        except KeyError:
            if len(labels) - (labels[-1][0].startswith("raise")) != 1:
                raise ValueError(f"hand {hand!r} never reaches this decision in the stored tree") from None
            probs = [1.0]  # one card type left and no raise kept: forced
        probs += [0.0] * (len(labels) - len(probs))  # a raise the pruning drops
    player = mano if state.to_move == R.MANO else dealer
    value0 = attrs["value"] if mano == 0 else 1.0 - attrs["value"]
    return dict(score=list(score), dealer=dealer, mano=mano, role_score=[a, b], vira=vira,
                vira_class=c, player=player, hand=[R.card_text(x) for x in cards], line=line,
                actions=[dict(action=lab, cards=cs, probability=p) for (lab, cs), p in zip(labels, probs)],
                pruned_raise=pruned, off_path=off_path, value_player0=value0, nash_conv=attrs["nash_conv"],
                exploitability=attrs["exploitability"], raise_caps=attrs.get("raise_caps"))


def solved_grid(results="results"):
    """Every solved subgame under ``results`` (the 11 row's groups and the score grid) and the
    command that solves the next part of the grid.

    Returns
    -------
    dict
        ``solved`` (count), ``total`` (:data:`N_SUBGAMES` for the full deck; 144 per vira class
        of a small deck's root ``<results>/truco_deck_<cards>``), ``next_command`` (str, the run's
        command for this folder and its deck; None when all are solved) and ``subgames``: dicts ``mano``, ``pe``, ``vira_class``, ``value``,
        ``nash_conv``, ``exploitability``, ``iterations``, ``seconds``, by score then class.
    """
    from pathlib import Path

    from .hints import split_root
    from .stages.grid import GRID, small_deck
    from .saved import list_solved, read_subgame

    cards = split_root(results)[1]
    classes = len(small_deck(cards).classes) if cards else 9
    total = N_SUBGAMES // 9 * classes
    stored = {(r["score"][0], r["score"][1], r["vira_class"]): r for r in list_solved(results)}
    for p in sorted(Path(results).joinpath(*GRID).glob("s*_v*.zarr")):
        r = read_subgame(p, arrays=False)[0]
        stored.setdefault((r["score"][0], r["score"][1], r["vira_class"]), r)
    rows = [dict(mano=r["score"][0], pe=r["score"][1], vira_class=r["vira_class"], value=r["value"],
                 nash_conv=r["nash_conv"], exploitability=r["exploitability"],
                 iterations=r["iterations"], seconds=r["seconds"]) for r in stored.values()]
    rows.sort(key=lambda r: (r["mano"], r["pe"], r["vira_class"]))
    hint = next_solve_hint(results, [(r["mano"], r["pe"]) for r in rows])
    return dict(solved=len(rows), total=total, next_command=hint, subgames=rows)


def next_solve_hint(results, scores):
    """What to solve next under ``results`` (the full deck's root, or a small deck's
    ``truco_deck_<cards>`` folder), given the role-ordered ``scores`` of its stored subgames (one
    entry per subgame): a small deck's next region down from the lowest stored; for the full deck
    the 11 row while it is incomplete, then the region from min score 9 down (str); None when every
    subgame is solved."""
    from .hints import row11_command, solve_command, split_root
    from .stages.grid import small_deck

    cards = split_root(results)[1]
    classes = len(small_deck(cards).classes) if cards else 9
    if len(scores) >= N_SUBGAMES // 9 * classes:
        return None
    if cards:  # a small deck's grid grows by regions: the next one down from the lowest stored
        low = max(min((min(s) for s in scores), default=12) - 1, 0)
        return f"solve the scores with min(mano, pé) >= {low} with: " + solve_command(results, None, low)
    if sum(1 for a, b in scores if 11 in (a, b)) < 23 * classes:
        return f"solve the 11 row with: {row11_command(results)}"
    return "solve the scores with min(mano, pé) >= m (e.g. 9) with: " + solve_command(results, None, 9)


def advise_position(result, position):
    """The advice interface every game shares (``games.<game>.advice.advise_position``): a saved
    result and a position in, every choice with its value out.

    Parameters
    ----------
    result : str or Path
        The results directory holding the solved subgames.
    position : dict
        ``{"score": (points of player 0, of player 1), "dealer": 0 or 1, "vira": card, "hand":
        the acting player's cards, "line": the play so far (optional)}``, as :func:`policy_line`.

    Returns
    -------
    list of dict
        One per action of the decision: ``choice`` (the action, with its cards), ``value`` (its
        probability in the equilibrium mix: Truco's advice is a mixed strategy) and ``best``
        (True on the first action of highest probability).
    """
    out = policy_line(tuple(position["score"]), position["dealer"], position["vira"],
                      position["hand"], position.get("line") or "", result)
    choices = [{"choice": a["action"] + (" " + "/".join(a["cards"]) if a["cards"] else ""),
                "value": a["probability"], "best": False} for a in out["actions"]]
    best = max(range(len(choices)), key=lambda i: choices[i]["value"])
    choices[best]["best"] = True
    return choices
