"""The whole score grid of a Truco match by dynamic programming over the score.

A hand at role-ordered score (a, b) leads to the role-ordered score ``(b + pp, a + pm)`` of the
next hand (roles swap, the dealer rotates, the vira is redrawn), so mano's match-win probability
before a hand is ``W(a, b) = sum_c P(c) V(a, b, c)`` over the vira classes ``c`` (subgames.py).
Points only grow, so the scores are solved from high to low: first the 11 row (a player at 11, no
raises), then the scores outside it by tier of the pruned raise ladder (pruning.py: ``t1`` = min
score 9-10, ``t2`` = 6-8, ``t3`` = 3-5, ``t4`` = 0-2); a hand never lowers the minimum score, so a
tier only needs the tiers above it and itself. Within a tier the groups ``{(a, b), (b, a)}`` (tied
to each other by three tied tricks, which swap the roles and score nothing) are solved by
decreasing total a + b, each to a fixed point of its own W (``solve.solve_scores``).

A deck is the full 40-card deck (nine vira classes) or a small deck of explicit cards: the vira is
drawn uniformly from it and the other cards dealt; viras leaving the same unseen strength classes
form one class. Layout: ``<root>/truco/grid/s<a>-<b>_v<c>.zarr`` (store.py's format), one per
subgame, each written atomically as soon as its group is solved, so a killed job resumes at the
first group with a missing subgame. ``root`` is the results directory for the full deck (whose 11
row may also come from the row-11 workflow, ``truco/row11``) and ``results/truco_deck_<cards>``
for a small deck.

Run as ``strongsolve truco grid-tier --tier t1 ...`` (one Snakemake job per tier).

Why one module of more than 500 lines: the tier driver, its resume and tightening rules (which
stored subgames to keep, solve again, or continue from kept accumulators) and the grid's summary
read the same layout and the same checks; split, each half would import the other's internals.
"""

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ....store.atomic import write_text_atomic
from ....store.errors import CorruptResultError
from .. import encoding as ab
from .. import rules as R
from ..tiers import TIER_LOWEST_MIN, TIERS, score_tier, tier_csv  # noqa: F401 (the workflow's)
from .groups import check_params, hand_utility_table, solve_scores, unmapped
from ..hints import unsolved_command
from ..saved import (GRID_DIR, accumulators_path, read_accumulators, read_subgame, subgame_name,
                     subgame_path, write_accumulators, write_subgame)
from ..subgames import eleven_player, in_row11, row11_groups
from ..tree import outcome_points

GRID = ("truco", "grid")


@dataclass
class Deck:
    """A deck: its name, the probability and unseen strength-class capacities of each vira class,
    and its cards (None for the full deck)."""

    name: str
    probabilities: np.ndarray
    capacities: list
    cards: tuple = None

    @property
    def classes(self):
        return list(range(len(self.probabilities)))


def full_deck():
    """The 40-card deck and its nine vira classes (encoding.py)."""
    return Deck("full", ab.vira_class_probabilities(),
                [ab.class_capacities(c) for c in range(ab.N_VIRA_CLASSES)])


def small_deck(cards):
    """A deck of explicit cards (e.g. ``["7d", "7s", "Ad"...]``, at least 7 distinct): the vira is
    any of them with equal probability; viras leaving equal unseen capacities share a class
    (numbered in the order of ``cards``). ValueError on a bad card, a repeat or too few cards."""
    parsed = [R.parse_card(c) for c in cards]
    if len(set(parsed)) != len(parsed) or len(parsed) < 2 * R.HAND_SIZE + 1:
        raise ValueError(f"bad deck {list(cards)}: at least {2 * R.HAND_SIZE + 1} distinct cards")
    caps, probs = [], []
    for v in parsed:
        cap = ab.deck_capacities([c for c in parsed if c != v], v // R.N_SUITS)
        for i, known in enumerate(caps):
            if np.array_equal(known, cap):
                probs[i] += 1.0 / len(parsed)
                break
        else:
            caps.append(cap)
            probs.append(1.0 / len(parsed))
    name = "deck_" + "".join(R.card_text(c) for c in parsed)
    return Deck(name, np.array(probs), caps, tuple(R.card_text(c) for c in parsed))


def deck_from_config(value):
    """``"full"`` or a list of card texts (config key ``truco.deck``)."""
    return full_deck() if value in (None, "full") else small_deck(list(value))


def deck_root(results, deck):
    """The results root of a deck's grid: ``results`` for the full deck, a subfolder otherwise."""
    return Path(results) if deck.name == "full" else Path(results) / f"truco_{deck.name}"


def tier_inputs(grid_dir, tier, min_score, row11_dir=None):
    """What the job of ``tier`` needs: the summary of the tier above (its scores' continuation
    values) and, for the full deck (``row11_dir``: the 11 row's own jobs, ``<results>/truco/row11``),
    the 11-row groups its region's hands lead to (``row11_groups_read``), not the whole row."""
    i = TIERS.index(tier)
    if i == 0:
        return []
    above = [] if i == 1 and row11_dir is not None else [tier_csv(grid_dir, TIERS[i - 1], min_score)]
    groups = [] if row11_dir is None else row11_groups_read(tier, min_score)
    return above + [f"{row11_dir}/group_{x}" for x in groups]


def row11_groups_read(tier, min_score):
    """Names (``"0"`` .. ``"11"``, ascending) of the 11-row groups whose subgames the job of ``tier``
    reads for the region of scores with min(a, b) >= ``min_score``: the groups of the 11-row scores
    a hand of the region leads to (group x holds 11-x and x-11). The {1, 3} tier of the region
    min 9, for example, reads groups 9 and 10, whose own jobs need group 11 (``group_dependencies``)."""
    read = {min(t) for group in tier_groups(tier) if min(min(s) for s in group) >= min_score
            for s in group for t in successors(*s) if in_row11(*t)}
    return [str(x) for x in sorted(read)]


def grid_path(root, a, b, c):
    return Path(root).joinpath(*GRID, subgame_name(a, b, c))


def tier_groups(name):
    """Groups of scores of a tier in solving order (module docstring)."""
    if name not in TIERS:
        raise ValueError(f"bad tier {name!r}: allowed {TIERS}")
    if name == "row11":
        return row11_groups()
    pairs = [(a, b) for a in range(11) for b in range(a, 11) if score_tier(a, b) == name]
    pairs.sort(key=lambda s: (-(s[0] + s[1]), s[0]))
    return [[(a, b)] if a == b else [(a, b), (b, a)] for a, b in pairs]


def successors(a, b):
    """Role-ordered scores the next hand may start at after a hand at (a, b) (every outcome code of
    its tree; a side reaching 12 ends the match)."""
    pts = outcome_points(eleven_player(a, b)) if in_row11(a, b) else outcome_points(raises=True)
    return sorted({(b + int(pp), a + int(pm)) for pm, pp in pts
                   if a + pm < R.TARGET and b + pp < R.TARGET})


def stored_path(root, a, b, c):
    """Where subgame (a, b, c) is stored: the grid, or for the 11 row the row-11 workflow's layout;
    None if it is in neither."""
    for p in (grid_path(root, a, b, c), subgame_path(root, a, b, c) if in_row11(a, b) else None):
        if p is not None and (p / "zarr.json").exists():
            return p
    return None


def stored_subgames(root):
    """{(a, b, c): path} of every subgame stored under ``root`` (``deck_root``), in the grid or the
    row-11 layout (the grid's copy wins, as in ``stored_path``)."""
    found = {}
    for p in sorted(Path(root).joinpath(*GRID_DIR).glob("group_*/s*_v*.zarr")) + \
            sorted(Path(root).joinpath(*GRID).glob("s*_v*.zarr")):
        m = re.fullmatch(r"s(\d+)-(\d+)_v(\d+)\.zarr", p.name)
        if m and (p / "zarr.json").exists():
            found[tuple(int(x) for x in m.groups())] = p
    return found


def continuation_value(root, a, b, deck, results=None):
    """W(a, b): the stored values of (a, b) averaged over the vira classes.

    Raises
    ------
    FileNotFoundError
        Naming the missing subgame and the command that solves its tier.
    """
    total = 0.0
    for c, p in zip(deck.classes, deck.probabilities):
        path = stored_path(root, a, b, c)
        if path is None:
            cmd = unsolved_command(results or root, deck, a, b)
            raise FileNotFoundError(f"no solved subgame for score {a}-{b}, vira class {c} under "
                                    f"{root}: solve it with {cmd}")
        total += p * read_subgame(path, arrays=False)[0]["value"]
    return total


def solve_tier(name, results, params=None, deck=None, min_score=0, log=print,
               keep_accumulators=False):
    """Solve the groups of tier ``name`` with min(a, b) >= ``min_score`` a subgame of which is not
    stored yet for the target NashConv and the continuation values stored now (``_needs_solving``),
    and write each subgame of such a group (value, nash_conv, exploitability, iterations, seconds,
    cpu_seconds, max_rss_mib, the utility table and the policy).

    Parameters
    ----------
    name : str
        A tier of ``TIERS``.
    results : path
        The results directory (the deck's root is derived from it, ``deck_root``).
    params : dict
        Overrides of ``groups.DEFAULTS`` (the solve parameters, checked by ``groups.check_params``).
    deck : Deck or None
        The full deck by default.
    min_score : int
        Lower bound of the region (config ``truco.scores.min_score``).
    log : callable
    keep_accumulators : bool
        Keep each subgame's CFR accumulators beside it (``saved.write_accumulators``, 16 bytes per
        action slot), and continue from those kept when a subgame is solved again (a tighter
        target): the continued solve runs the iterations an unbroken one would.

    Returns
    -------
    list of dict
        One row per subgame of the tier in the region (stored before or now).

    Raises
    ------
    FileNotFoundError
        If a tier above this one is missing a subgame this one needs (with the command to run).
    """
    prm = check_params(params)
    deck = deck or full_deck()
    root = deck_root(results, deck)
    decks = {c: ab.deal_pairs(deck.capacities[c]) for c in deck.classes}
    rows = []
    grid_dir = Path(root).joinpath(*GRID)
    # a killed job's spill folders: of its unfinished group, to resume from; of the old temporary
    # kind (.spill-*), of no use (the tier jobs run one at a time per grid: each needs the last)
    for stale in grid_dir.glob(".spill-*"):
        log(f"tier {name}: removing {stale}, left by a killed job")
        shutil.rmtree(stale, ignore_errors=True)
    # the trees the tier's subgames share (tree_cache.py), kept for this call only: those a killed
    # job left may be of another version of the builders
    trees = grid_dir / ".trees"
    shutil.rmtree(trees, ignore_errors=True)
    try:
        for group in tier_groups(name):
            if min(min(s) for s in group) < min_score:
                continue
            label = f"tier {name} group {'/'.join(f'{a}-{b}' for a, b in group)}"
            # the LP solves a table exactly: a lost subgame solved again for the W its group's kept
            # tables say gives back the lost copy, and its partners stay; CFR's warm starts do not
            # repeat, so there the whole group is solved and written again
            exact = prm["solver"] == "lp"
            W = starting_values(root, group, deck, results, recover=exact)
            # every subgame readable: each checked against the W stored now too (else one of them is
            # missing or damaged, and the group solved anyway)
            whole = all(s in W for s in group)
            stale = [(s, c) for s in group for c in deck.classes
                     if _needs_solving(stored_path(root, *s, c), prm,
                                       *(_expected_utility(s, group, W) if whole else (None, None)),
                                       f"{label}: ", log)]
            # the group's scores move together (three ties swap the roles): one subgame solved again
            # moves the W its partners' tables were solved for, so the whole group is solved again;
            # the partners still right for the new W stay as stored (_to_write)
            missing = [(s, c) for s in group for c in deck.classes] if stale else []
            # each subgame of each fixed-point round waits there, arrays and record, until the
            # group is stored (solve._spill): a killed job's next run solves only the subgames not
            # there yet
            spill = grid_dir / f".group-{'_'.join(f'{a}-{b}' for a, b in group)}"
            if missing:
                if spill.exists():
                    log(f"{label}: resuming from {spill}, left by a killed job")
                keep = keep_accumulators and prm["solver"] != "lp"  # the LP has no regrets
                acc = _kept_accumulators(root, group, deck, prm, spill, label, log) if keep else {}
                out, resid = solve_scores(group, W, decks, deck.probabilities, prm, log, label,
                                          spill_dir=spill, accumulators=acc, tree_dir=trees)
                if exact:
                    missing = _to_write(root, group, deck, W, out, stale, prm, label, log)
                for s, c in missing:  # each subgame renamed into place on its own
                    r = out[(s, c)]
                    attrs = {k: v for k, v in r.items() if k != "arrays"}
                    attrs.update(score=list(s), vira_class=c, eleven=eleven_player(*s),
                                 fixed_point_residual=resid, params=prm, deck=deck.name)
                    path = grid_path(root, *s, c)
                    # first, so a kept file never outlives its subgame's solve unnoticed: one left
                    # from an older solve is refused on reading (its iterations differ)
                    if keep:
                        write_accumulators(path, unmapped(acc[(s, c)][0]), unmapped(acc[(s, c)][1]),
                                           r["iterations"], r["checks"])
                    else:
                        accumulators_path(path).unlink(missing_ok=True)
                    write_subgame(path, {k: unmapped(v) for k, v in r["arrays"].items()}, attrs)
                del out, acc
            else:
                log(f"tier {name}: group {group} already solved")
            if spill.exists():  # stored: the checkpoints are of no more use
                shutil.rmtree(spill, ignore_errors=True)
            for s in group:
                for c in deck.classes:
                    attrs = read_subgame(stored_path(root, *s, c), arrays=False)[0]
                    rows.append(dict(mano=s[0], pe=s[1], vira_class=c, tier=name,
                                     **{k: attrs.get(k, "") for k in (
                                         "value", "nash_conv", "exploitability", "iterations",
                                         "seconds", "cpu_seconds", "max_rss_mib", "n_nodes",
                                         "raise_caps")}))
    finally:
        shutil.rmtree(trees, ignore_errors=True)
    return rows


# parameters a kept solve may continue under: any but the target and the iteration budget (and
# the workers, which change no value)
_CONTINUABLE = ("target_nash_conv", "max_iterations", "workers")


def _kept_accumulators(root, group, deck, prm, spill, label, log):
    """``solve_scores``'s ``accumulators`` for a group solved again: of each stored subgame with
    accumulators kept (``saved.read_accumulators``) from a solve with the same parameters but the
    target and budget, the kept arrays copied into the spill folder as .npy files (each worker
    maps its own; the job never holds a group's accumulators at once). A damaged or stale file is
    reported and its subgame starts over as before."""
    same = lambda p: {k: v for k, v in p.items() if k not in _CONTINUABLE}
    start = {}
    for s in group:
        for c in deck.classes:
            path = grid_path(root, *s, c)
            if not accumulators_path(path).exists():
                continue
            try:
                attrs = read_subgame(path, arrays=False)[0]
                regret, strat_sum, iters, checks = read_accumulators(path)
            except (CorruptResultError, OSError, KeyError, ValueError) as err:
                log(f"{label}: not continuing {path.name} from its kept accumulators ({err})")
                continue
            if same(attrs.get("params", {})) != same(json.loads(json.dumps(prm))) \
                    or attrs["iterations"] != iters:
                log(f"{label}: not continuing {path.name} from its kept accumulators (kept for "
                    "other solver parameters, or by an older solve)")
                continue
            Path(spill).mkdir(parents=True, exist_ok=True)
            files = []
            for name, arr in (("regret", regret), ("strat_sum", strat_sum)):
                f = Path(spill) / f"{path.name.removesuffix('.zarr')}_kept_{name}.npy"
                tmp = f.with_name(f".{f.name}.tmp")
                with open(tmp, "wb") as fh:
                    np.save(fh, arr)
                tmp.replace(f)
                files.append(f)
            del regret, strat_sum
            start[(s, c)] = (files[0], files[1], iters, checks)
            log(f"{label}: {path.name} continues from its kept accumulators at iteration {iters} "
                f"(NashConv {attrs['nash_conv']:.2e})")
    return start


def _to_write(root, group, deck, W, out, stale, prm, label, log):
    """The subgames of a group solved again (``out``) to write: the ``stale`` ones (missing,
    damaged, or off the W stored before), and every other whose stored copy no longer passes
    :func:`_needs_solving` under the group's new fixed point (the new W of its scores, averaged from
    ``out``). A stored copy that does is kept, as a later run would keep it: repairing one damaged
    subgame rewrites that subgame, not its partners."""
    new_W = {**W, **{s: float(sum(p * out[(s, c)]["value"]
                                  for c, p in zip(deck.classes, deck.probabilities)))
                     for s in group}}
    keep = [(s, c) for s in group for c in deck.classes if (s, c) not in stale
            and not _needs_solving(stored_path(root, *s, c), prm,
                                   *_expected_utility(s, group, new_W), f"{label}: ", log)]
    if keep:
        log(f"{label}: keeping the stored "
            + ", ".join(f"{a}-{b} class {c}" for (a, b), c in keep)
            + ": each was solved for the new fixed point's W within its tolerance")
    return [(s, c) for s in group for c in deck.classes if (s, c) not in keep]


def starting_values(root, group, deck, results=None, recover=False):
    """The continuation values a group's solve starts from (``solve.solve_scores``'s ``W``): W of
    every score its hands lead to outside the group, and, for a score of the group whose subgames
    are all stored already (solved again at a tighter target), its stored W as the first guess of
    the fixed point, which then ends in one round when the stored values are close enough; else
    ``solve_scores`` guesses from the neighbouring score.

    Raises
    ------
    FileNotFoundError
        As ``continuation_value``, for a missing score outside the group.
    CorruptResultError
        As ``store.read_subgame``, for a damaged subgame outside the group (a damaged one of the
        group is solved again).
    """
    W = {t: continuation_value(root, *t, deck, results)
         for s in group for t in successors(*s) if t not in group}
    for s in group:
        if all(stored_path(root, *s, c) is not None for c in deck.classes):
            try:
                W[s] = continuation_value(root, *s, deck, results)
            except CorruptResultError:  # damaged: solved again, from the tables kept, or a guess
                pass
    if recover and not all(s in W for s in group):  # with the LP solver only (solve_tier)
        W.update(_solved_for(root, group, deck, W))
    return W


def _solved_for(root, group, deck, W):
    """The W of the group's scores its readable stored subgames were solved for, read back from
    their utility tables (each entry of a group score is linear in that score's W), when a subgame
    of the group is missing or damaged: the fixed point's last round solved every subgame of the
    group for that W, so solving the lost one again for it gives the copy that was lost, and the
    fixed point ends in that round. Only a W that gives back every table bit for bit is used;
    {} when none does (the fixed point then starts from a guess)."""
    found = {}
    tables = []
    for s in group:
        for c in deck.classes:
            path = stored_path(root, *s, c)
            try:
                attrs = read_subgame(path, arrays=False)[0] if path is not None else None
            except CorruptResultError:
                attrs = None
            if attrs is not None:
                tables.append((s, np.asarray(attrs["utility"], dtype=float)))
    for s, table in tables:
        zero = hand_utility_table(*s, {**W, **{t: 0.0 for t in group}})
        for t in group:
            if t in found:
                continue
            slope = hand_utility_table(*s, {**W, **{u: 0.0 for u in group}, t: 1.0}) - zero
            k = np.flatnonzero(slope)
            if k.size and table.shape == zero.shape:
                found[t] = float((table[k[0]] - zero[k[0]]) / slope[k[0]])
    if set(found) != set(group):
        return {}
    whole = {**W, **found}
    if all(np.array_equal(hand_utility_table(*s, whole), table) for s, table in tables):
        return found
    return {}


def _expected_utility(s, group, W):
    """The utility table (float64 array per outcome code) a subgame at score ``s`` of ``group``
    is solved for under the continuation values ``W`` (every score of the group among them), and
    a bool array: the entries that leave the group (the others hold the group's own W, which the
    fixed point moves)."""
    outside = hand_utility_table(*s, {**W, **{t: np.nan for t in group}})
    return hand_utility_table(*s, W), ~np.isnan(outside)


def _needs_solving(path, prm, table, leaves, prefix="", log=print):
    """Whether a subgame stored at ``path`` (None: not stored) must be solved for parameters
    ``prm`` and the utility table ``table`` (``_expected_utility``, with ``leaves``; None: not
    checked, the group is solved anyway): it is missing or damaged (``store.read_subgame``, every
    array verified); or
    stored at a NashConv above ``prm["target_nash_conv"]`` (a region solved to 1e-3 first, then
    asked for 1e-4); or solved for a table off ``table`` by more than 1e-12
    in an entry leaving its group (the scores it leads to were solved again since), or by more
    than the fixed point's tolerance (``solve.solve_scores``: max(fixed_point_tol,
    target_nash_conv)) in one of its group (a fixed point closed at a looser target). Such a
    subgame stays on disk, and is read as before, until its re-solved copy is renamed over it
    (``store.write_subgame``)."""
    if path is None:
        return True
    try:  # the arrays too: a corrupt policy chunk is damage the attributes do not show
        attrs = read_subgame(path)[0]
    except CorruptResultError as err:
        log(f"{prefix}{path.name} is damaged ({err}): solving it again (the damaged copy stays "
            "until replaced)")
        return True
    nash_conv = attrs["nash_conv"]
    if nash_conv > prm["target_nash_conv"]:
        log(f"{prefix}{path.name} is stored at NashConv {nash_conv:.2e}, above the target "
            f"{prm['target_nash_conv']:.1e}: solving it again (the stored copy stays until replaced)")
        return True
    if table is None:
        return False
    off = np.abs(np.asarray(attrs["utility"], dtype=float) - table)
    tol = np.where(leaves, 1e-12, max(prm["fixed_point_tol"], prm["target_nash_conv"]))
    if (off > tol).any():
        log(f"{prefix}{path.name} was solved for a utility table off the W stored now by up to "
            f"{off.max():.2e} (the scores it leads to were solved again since, or its group's fixed "
            "point closed at a looser target): solving it again (the stored copy stays until "
            "replaced)")
        return True
    return False


SUMMARY_COLUMNS = ["mano", "pe", "vira_class", "tier", "value", "nash_conv", "exploitability",
                   "iterations", "seconds", "cpu_seconds", "max_rss_mib", "n_nodes", "raise_caps"]


def _csv(rows, cols=SUMMARY_COLUMNS):
    fmt = lambda v: "/".join(map(str, v)) if isinstance(v, list) else str(v)
    return "\n".join([",".join(cols)] + [",".join(fmt(r[k]) for k in cols) for r in rows]) + "\n"


def grid_summary(results, deck=None, min_score=0):
    """Every stored subgame of the region min(a, b) >= ``min_score`` (the 11 row included), one row
    each, with the score's continuation value ``W`` (mano's match-win probability before the hand,
    averaged over the vira classes; the dealer's is 1 - W) where all its classes are stored.

    Returns
    -------
    list of dict
        Keys ``SUMMARY_COLUMNS`` and ``W`` ("" while a class of the score is missing), ordered by
        decreasing min score, then mano's and pé's points, then vira class.
    """
    deck = deck or full_deck()
    root = deck_root(results, deck)
    rows = []
    scores = [(a, b) for a in range(R.TARGET) for b in range(R.TARGET) if min(a, b) >= min_score]
    for a, b in sorted(scores, key=lambda s: (-min(s), s)):
        found = [(c, stored_path(root, a, b, c)) for c in deck.classes]
        found = [(c, read_subgame(p, arrays=False)[0]) for c, p in found if p is not None]
        W = (sum(p * attrs["value"] for p, (_, attrs) in zip(deck.probabilities, found))
             if len(found) == len(deck.classes) else "")
        for c, attrs in found:
            rows.append(dict(mano=a, pe=b, vira_class=c, tier=score_tier(a, b), W=W,
                             **{k: attrs.get(k, "") for k in SUMMARY_COLUMNS[4:]}))
    return rows


def write_grid_summary(results, out, deck=None, min_score=0):
    """Write the CSV of :func:`grid_summary` (columns ``SUMMARY_COLUMNS`` with ``W`` after the
    vira class) to ``out``, atomically."""
    rows = grid_summary(results, deck, min_score)
    write_text_atomic(out, _csv(rows, SUMMARY_COLUMNS[:4] + ["W"] + SUMMARY_COLUMNS[4:]))


def write_tier(tier, results, out, prm, deck=None, min_score=0, log=print, keep_accumulators=False):
    """Solve one tier of the score grid (:func:`solve_tier`) and write the CSV of its subgames
    (``SUMMARY_COLUMNS``) to ``out``, atomically, at the end."""
    write_text_atomic(out, _csv(solve_tier(tier, results, prm, deck, min_score, log=log,
                                           keep_accumulators=keep_accumulators)))
