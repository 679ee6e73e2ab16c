"""The answer of a solved Shut the Box variant at a position and a roll: every legal choice with
its value (used by ``strongsolve shutbox advise`` and the lab's Shut the Box page)."""

from .rules import ONE_DIE_SUM, flip_cards


def advise(rule, objective, cards, one_die, value, open_cards, roll=None, total=None):
    """Every choice after a roll, valued from a solved variant's values (no re-solve).

    Parameters
    ----------
    rule, objective, cards, one_die
        The variant (module docstring).
    value : float64[2^n] or longer
        Value per mask as solved (``ShutboxSolution.value``; flip-one: mask of set cards,
        standard: mask of open tiles).
    open_cards : iterable of int
        flip-one: the cards not yet set; standard: the open tiles.
    roll : tuple of int
        The dice: two faces (x, y), or one face when ``one_die`` applies (open tiles summing to 6
        or less).
    total : int, optional
        Standard rule only, instead of ``roll``: the roll's total (the dice are not needed).

    Returns
    -------
    list of dict
        flip-one: ``flip`` (card, None for the pass) per card offered (order of
        :func:`flip_cards`); standard: ``shut`` (sorted tiles, empty when the game ends) per
        subset summing to the total, in decreasing mask order. Each with ``open_after`` (sorted)
        and ``value`` (expected rolls still to come, probability of shutting every tile, or
        expected open sum) and ``best`` (True on the first optimal choice).

    Raises
    ------
    ValueError
        A card outside 1..n, a finished game, or a roll of the wrong number of dice.
    """
    full = (1 << cards) - 1
    open_mask = 0
    for c in open_cards:
        if not 1 <= c <= cards:
            raise ValueError(f"card {c} is outside 1..{cards}")
        open_mask |= 1 << (c - 1)
    open_sum = sum(c + 1 for c in range(cards) if open_mask >> c & 1)
    dice = 1 if rule == "standard" and one_die and open_sum <= ONE_DIE_SUM else 2
    if total is not None and rule != "standard":
        raise ValueError("a roll total alone answers the standard rule only; give the dice")
    if total is None and len(roll) != dice:
        raise ValueError(f"this position rolls {dice} {'die' if dice == 1 else 'dice'}, got the "
                         f"roll {','.join(map(str, roll))}")

    def tiles(mask):
        return [c + 1 for c in range(cards) if mask >> c & 1]

    out = []
    if rule == "flip-one":
        if open_mask == 0:
            raise ValueError("every card is set: the game is over")
        mask = full ^ open_mask  # set cards
        for card in flip_cards(roll[0], roll[1], cards) or [None]:
            nxt = mask if card is None else mask ^ (1 << (card - 1))
            out.append({"flip": card, "open_after": tiles(full ^ nxt), "value": float(value[nxt])})
        pick = min
    else:
        if open_mask == 0:
            raise ValueError("every tile is shut: the game is over")
        total = sum(roll) if total is None else total
        for shut in range(open_mask, 0, -1):
            if shut & ~open_mask == 0 and sum(tiles(shut)) == total:
                out.append({"shut": tiles(shut), "open_after": tiles(open_mask ^ shut),
                            "value": float(value[open_mask ^ shut])})
        if not out:  # the game ends here
            final = 0.0 if objective == "max-shut" else float(open_sum)
            out.append({"shut": [], "open_after": tiles(open_mask), "value": final})
        pick = max if objective == "max-shut" else min
    best = pick(range(len(out)), key=lambda i: out[i]["value"])
    for i, choice in enumerate(out):
        choice["best"] = i == best
    return out


def advise_position(result, position):
    """The advice interface every game shares (``games.<game>.advice.advise_position``): a saved
    result and a position in, every choice with its value out.

    Parameters
    ----------
    result : str or Path
        A result file of ``strongsolve shutbox --policy --output`` (:mod:`.saved`).
    position : dict
        ``{"open": cards not yet set (flip-one) or open tiles (standard), "roll": (x, y)}``, or
        for the standard rule ``"total"`` instead of ``"roll"``.

    Returns
    -------
    list of dict
        As :func:`advise`, each with ``choice`` (``"flip c"``, ``"pass"``, ``"shut a b"``, ``"game
        over"``) and ``value`` (expected rolls still to come, probability of shutting every tile,
        or expected open sum) and ``best``.
    """
    from .saved import load_values

    variant, value = load_values(result)
    out = advise(variant["rule"], variant["objective"], variant["cards"], variant["one_die"], value,
                 position["open"], tuple(position.get("roll", ())), position.get("total"))
    for c in out:
        if "flip" in c:
            c["choice"] = "pass" if c["flip"] is None else f"flip {c['flip']}"
        else:
            c["choice"] = "shut " + " ".join(map(str, c["shut"])) if c["shut"] else "game over"
    return out
