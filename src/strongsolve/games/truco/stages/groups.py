"""Stage driver: solve the groups of the 11 row with discounted CFR, write them, summarise them.

Run as ``strongsolve truco solve-group``, ``row11-summary``, ``abstraction-sizes`` (one Snakemake
job per group, see workflow/rules/truco.smk). A group (subgames.py) holds the scores that depend on each
other through three tied tricks, for all nine vira classes; it is iterated to a fixed point of the
continuation values ``W`` of its own scores, warm-starting each subgame's CFR from the last round.

Why one module of more than 500 lines: the group's fixed point, the solve of one subgame (the
choice of CFR kernel or LP), its checkpoints and its record share the solver parameters
(:data:`DEFAULTS`) and the record's format; the score grid's tier driver (``stages/grid.py``)
reuses the same subgame solve, so the kernel is chosen in one place.
"""

import json
import multiprocessing
import os
import resource
import sys
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from ....kernels import forest_cfr, public_cfr
from ....kernels.cfr import evaluate, reach_probabilities, solve
from ....kernels.off_path import OFF_PATH_REACHES, forest_refiner, tabular_refiner
from ....kernels.options import njit
from ....kernels.sequence_lp import solve_lp
from ....progress import Task
from ....store.atomic import write_text_atomic
from .. import encoding as ab
from ..rules import N_STRENGTHS
from ..saved import GRID_DIR, group_dir, list_solved, read_subgame, subgame_name, write_group
from ..pruning import PRUNE_MODES, player_prune_is_lossless, raise_caps
from ..subgames import (eleven_player, group_dependencies, in_row11, raise_utility_table,
                        row11_groups, utility_table)
from ..forest import build_raise_forest
from ..public_tree import build_public_raise_tree
from ..tree_cache import cached_build
from ..tree import NOBODY, build_hand_tree

DEFAULTS = dict(target_nash_conv=1e-4, max_iterations=5000, check_every=10, fixed_point_tol=1e-5,
                max_fixed_point_rounds=8, three_ties="nobody", eleven_eleven="open", workers=1,
                prune="min", solver="auto", face_down=False)
ELEVEN_ELEVEN = ("open", "blind")  # the 11-11 hand: cards chosen, or played in random order
# CFR of the raise subgames: kernels/public_cfr.py (one pass over the public tree with ranges as
# vectors), kernels/forest_cfr.py (deal by deal, 4 bytes per node) or the TabularGame of
# kernels/cfr.py (about 122 bytes per node); the 11 row's small trees use the latter. "auto" takes
# the public tree (the forest above PUBLIC_MAX_CAP) from FOREST_MIN_DEALS deal pairs on (4.7x less
# CPU per iteration than the forest on a full-deck t1 subgame, bench/RECORD.md 2026-12-04): below,
# the tabular passes are faster (a 7-card deck's grid took 1.3-3x longer with the forest, measured
# 2026-12-01).
# "lp": the exact sequence-form LP (kernels/sequence_lp.py) on every subgame, 11 row included, for
# decks below FOREST_MIN_DEALS deal pairs, where the CFR's error would add up along the chain
SOLVERS = ("auto", "public", "forest", "tabular", "lp")
FOREST_MIN_DEALS = 1000
# "auto" takes the public tree up to this raise cap (tiers t1, t2) and the forest above: the public
# tree's arrays and build need more memory than the forest (full deck, vira class 0, 2026-12-04:
# t1 1.4 GiB build peak against 0.9, t2 4.2 GiB against 1.7); t3 and t4 are not measured yet
PUBLIC_MAX_CAP = 2


def group_scores(x):
    """Role-ordered scores of group ``x`` (0..11)."""
    for g in row11_groups():
        if str(min(g[0])) == str(x):
            return g
    raise ValueError(f"bad group {x!r}: allowed 0..11")


def continuation(results, x):
    """W for every score of group ``x``: its value averaged over the vira classes (FileNotFoundError
    if a subgame is missing)."""
    p = ab.vira_class_probabilities()
    W = {}
    for s in group_scores(x):
        W[s] = sum(p[c] * read_subgame(group_dir(results, x) / subgame_name(*s, c), arrays=False)[0]["value"]
                   for c in range(ab.N_VIRA_CLASSES))
    return W


def solve_group(x, results, params=None, log=print, capacities=ab.class_capacities):
    """Solve group ``x`` of the 11 row and write its subgames under ``results``.

    Parameters
    ----------
    x : int
        The group: 11 for 11-11, else the scores (11, x) and (x, 11).
    results : path
        Results root; the groups this one depends on must be there already.
    params : dict
        Overrides of ``DEFAULTS`` (target NashConv in match-win probability, iteration caps,
        fixed-point tolerance on W, the three-ties rule, the 11-11 play: "open" or "blind", and
        ``face_down``: cards may be played face down from trick 2 on, rules.py; a blind 11-11 hand
        has no choices, so the option does not apply to it).
    log : callable
        Receives one progress line per subgame solve and per fixed-point round.
    capacities : callable
        Vira class -> unseen cards per strength class; the real deck by default (tests pass
        smaller decks).

    Returns
    -------
    dict
        Per subgame ``(a, b, c)``: value, nash_conv, iterations, seconds.
    """
    prm = check_params(params)
    x = int(x)
    scores = group_scores(x)
    W = {}
    for dep in group_dependencies(x):
        W.update(continuation(results, dep))
    probs = ab.vira_class_probabilities()
    decks = {c: ab.deal_pairs(capacities(c)) for c in range(ab.N_VIRA_CLASSES)}
    out, resid = solve_scores(scores, W, decks, probs, prm, log, f"group {x}")
    write_group(group_dir(results, x), (
        (subgame_name(*s, c), r["arrays"],
         dict({k: v for k, v in r.items() if k != "arrays"}, score=list(s), vira_class=c,
              eleven=eleven_player(*s), fixed_point_residual=resid, params=prm))
        for (s, c), r in out.items()))
    return {(s[0], s[1], c): {k: r[k] for k in ("value", "nash_conv", "iterations", "seconds")}
            for (s, c), r in out.items()}


def check_params(params):
    """``DEFAULTS`` updated by ``params`` (ValueError naming an unknown key or a bad value)."""
    prm = dict(DEFAULTS, **(params or {}))
    unknown = set(prm) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown parameters {sorted(unknown)}; allowed {sorted(DEFAULTS)}")
    if prm["eleven_eleven"] not in ELEVEN_ELEVEN:
        raise ValueError(f"bad eleven_eleven {prm['eleven_eleven']!r}: allowed {ELEVEN_ELEVEN}")
    if prm["prune"] not in PRUNE_MODES:
        raise ValueError(f"bad prune {prm['prune']!r}: allowed {PRUNE_MODES}")
    if prm["solver"] not in SOLVERS:
        raise ValueError(f"bad solver {prm['solver']!r}: allowed {SOLVERS}")
    if prm["face_down"] is True and prm["solver"] == "forest":
        raise ValueError("face_down: true needs solver: public, auto or tabular (the per-deal "
                         "forest CFR, games/truco/forest.py, has no covered cards)")
    if not isinstance(prm["face_down"], bool):
        raise ValueError(f"bad face_down {prm['face_down']!r}: allowed true or false (rules.py: cards "
                         "played face down from the second trick on)")
    return prm


def hand_utility_table(a, b, W):
    """Mano's utility of each outcome code of the hand at (a, b): the 11-row table, or the table of a
    hand with raises (subgames.py)."""
    return utility_table(a, b, W) if in_row11(a, b) else raise_utility_table(a, b, W)


def solve_scores(scores, W, decks, probs, prm, log, label, spill_dir=None, accumulators=None,
                 tree_dir=None):
    """Solve scores that depend on each other (through three tied tricks) for every deck class.

    Parameters
    ----------
    scores : list of (int, int)
        Role-ordered scores of one group (subgames.py: (a, b) and (b, a), or one score).
    W : dict
        Continuation values of every score the group's hands lead to outside the group (mano's
        match-win probability before a hand, averaged over the vira); the group's own entries are
        iterated to a fixed point, starting from any entries given.
    decks : dict
        Class -> ``abstraction.deal_pairs`` of that class's unseen cards.
    probs : float array
        Probability of each class (indexed by the keys of ``decks``).
    prm : dict
        ``check_params`` output.
    log : callable
        One line per subgame solve and per fixed-point round.
    label : str
        Names the group in the log lines and errors.
    spill_dir : path or None
        A directory for the solved subgames' arrays between fixed-point rounds and for their
        checkpoints (``_spill``): a subgame of a round already there, solved for the same utility
        table and parameters, is read back, not solved again (a killed job's next run); None keeps
        them in memory.
    accumulators : dict or None
        ``(score, class) -> (regret, strat_sum, iterations, checks)`` a subgame's first round starts
        from (those a finished solve kept, ``saved.read_accumulators``: the solve continues where it
        stopped; arrays, or paths of .npy files opened as read-only memory maps); replaced in place
        by each subgame's accumulators at the end (memory maps of ``spill_dir`` with one).
    tree_dir : path or None
        A folder where each raise subgame's public tree and forest are kept for the other scores
        and rounds that share them (tree_cache.py; the caller removes it); None builds each
        solve's own.

    Returns
    -------
    (dict, float)
        Per ``(score, class)`` the record of ``_solve_one`` (value, nash_conv, exploitability,
        iterations, seconds, cpu_seconds, max_rss_mib, prune, arrays), and the fixed-point residual.

    Raises
    ------
    RuntimeError
        If the fixed point is not reached within ``max_fixed_point_rounds``.
    """
    W = dict(W)
    for (a, b) in scores:  # first guess: the neighbour one point up, else even
        W.setdefault((a, b), W.get((a, min(b + 1, 11)) if a == 11 else (min(a + 1, 11), b), 0.5))
    classes = sorted(decks)
    if spill_dir is not None:
        Path(spill_dir).mkdir(parents=True, exist_ok=True)
    accum = accumulators if accumulators is not None else {}
    out = {}
    # the first round's W is a guess (above), so that round is almost never the fixed point: its
    # solves are not refined off the path (the refinement is for the stored policy, and only the
    # last round's is stored); a first round that is the fixed point after all is followed by one
    # more, refined, at the same W
    refine = prm["max_fixed_point_rounds"] == 1
    pool = (ProcessPoolExecutor(prm["workers"], mp_context=multiprocessing.get_context("fork"))
            if prm["workers"] > 1 else None)
    try:
        for rnd in range(prm["max_fixed_point_rounds"]):
            # chains of one score's classes in turn, each warm-started from the last round's
            # accumulators or, in the first round, from the previous class's regrets; a score's
            # classes split into several chains when there are more workers than scores (a one-score
            # group would leave workers idle)
            jobs = [(s, {c: decks[c] for c in part}, hand_utility_table(*s, W), prm,
                     {c: _as_paths(accum.get((s, c))) for c in part}, rnd, spill_dir, refine,
                     tree_dir)
                    for s in scores for part in _split(classes, prm["workers"] // len(scores))]
            done = pool.map(_solve_chain, jobs) if pool else map(_solve_chain, jobs)
            for chain in done:
                for s, c, r, acc, resumed in _as_maps(chain):
                    accum[(s, c)] = acc
                    prev = out.get((s, c), {})
                    r["seconds"] += prev.get("seconds", 0.0)
                    r["cpu_seconds"] += prev.get("cpu_seconds", 0.0)
                    out[(s, c)] = r
                    log(f"{label} round {rnd} score {s[0]}-{s[1]} class {c}: value "
                        f"{r['value']:.9f} nash_conv {r['nash_conv']:.2e} iterations "
                        f"{r['iterations']} cpu {r['cpu_seconds']:.1f}s"
                        + (f" (resumed from {spill_dir})" if resumed else ""))
            A = {s: float(sum(probs[c] * out[(s, c)]["value"] for c in classes)) for s in scores}
            # a score's value moves with its partner's W through three ties only, with slope minus
            # the probability of three ties under the equilibrium (envelope theorem), so the values
            # are off by about N[s] |A - W| of the partner: the residual. W itself need only agree
            # with the values to the solve's own precision (the NashConv target): closer, the
            # rounds would chase the CFR noise of the values, which no value feels
            N = {s: float(sum(probs[c] * out[(s, c)]["p_nobody"] for c in classes)) for s in scores}
            resid = max(N[s] * abs(A[(s[1], s[0])] - W[(s[1], s[0])]) for s in scores)
            gap = max(abs(A[s] - W[s]) for s in scores)
            log(f"{label} round {rnd}: W {A}, fixed-point residual {resid:.2e} (W off by {gap:.2e})")
            if resid <= prm["fixed_point_tol"] and gap <= max(prm["fixed_point_tol"],
                                                              prm["target_nash_conv"]):
                if refine:
                    break
                refine = True
                continue
            refine = True
            # Newton step on the same slopes
            idx = {s: i for i, s in enumerate(scores)}
            M = np.eye(len(scores))
            rhs = np.zeros(len(scores))
            for s in scores:
                partner = (s[1], s[0])
                M[idx[s], idx[partner]] += N[s]
                rhs[idx[s]] = A[s] + N[s] * W[partner]
            W.update({s: float(v) for s, v in zip(scores, np.linalg.solve(M, rhs))})
        else:
            raise RuntimeError(f"{label}: no fixed point within {prm['max_fixed_point_rounds']} "
                               f"rounds (residual {resid:.2e})")
    finally:
        if pool:
            pool.shutdown()
    return out, resid


def transfer_regrets(src_key, src_ptr, src_regret, dst_key, dst_ptr):
    """Regrets of a solved tree carried to another tree by information-set key (zeros where the key
    is new). A key fixes the hand and the public history, hence the actions, so slot ranges match.
    Both key arrays are sorted (``np.unique`` order); a merge of the two needs no memory beyond the
    result (float64[dst_ptr[-1]]). The issue's advice, measured here: another vira class of the same
    score transfers well (about 10 DCFR iterations instead of 50 to NashConv 1e-4 on the full deck)."""
    out = np.zeros(int(dst_ptr[-1]))
    _transfer(np.asarray(src_key, np.int64), np.asarray(src_ptr, np.int64),
              np.asarray(src_regret, np.float64), np.asarray(dst_key, np.int64),
              np.asarray(dst_ptr, np.int64), out)
    return out


@njit
def _transfer(src_key, src_ptr, src_regret, dst_key, dst_ptr, out):
    j = 0
    for i in range(dst_key.shape[0]):
        while j < src_key.shape[0] and src_key[j] < dst_key[i]:
            j += 1
        if j < src_key.shape[0] and src_key[j] == dst_key[i]:
            for a in range(dst_ptr[i + 1] - dst_ptr[i]):
                out[dst_ptr[i] + a] = src_regret[src_ptr[j] + a]


def _split(items, parts):
    """``items`` in ``max(1, parts)`` contiguous runs of near-equal length (none empty)."""
    parts = max(1, min(parts, len(items)))
    return [items[i * len(items) // parts:(i + 1) * len(items) // parts] for i in range(parts)]


def _solve_chain(job):
    """Solve one score's subgames for the given vira classes in turn (a worker process runs a
    chain). With a spill directory, a subgame whose round is already there for the same utility
    table (a killed job's) is read back instead of solved again."""
    s, decks, table, prm, warm, rnd, spill_dir, refine, tree_dir = job
    out, prev = [], None
    for c in sorted(decks):
        rec = _spilled(spill_dir, s, c, rnd, table, prm) if spill_dir is not None else None
        resumed = rec is not None
        if not resumed:
            partial = Partial(spill_dir, s, c, rnd, table, prm) if spill_dir is not None else None
            rec = _solve_one(s, c, decks[c], table, prm, _as_maps(warm.get(c)), prev, rnd == 0,
                             partial, refine, tree_dir)
            if spill_dir is not None:
                rec = _spill(rec, spill_dir, rnd, prm)
                partial.remove()
        out.append(rec[:4] + (resumed,))
        prev = rec[4]
    return _as_paths(out)


def _map_leaves(obj, fn):
    """``obj`` (nested tuples, lists, dicts) with ``fn`` applied to every other value."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(_map_leaves(x, fn) for x in obj)
    if isinstance(obj, dict):
        return {k: _map_leaves(v, fn) for k, v in obj.items()}
    return fn(obj)


def _as_paths(obj):
    """``obj`` with each memory map of ``_spill`` replaced by its path: a memory map sent to or
    from a worker process would be pickled as a copy of its data (every spilled array of a group in
    the parent's memory at once), and unpickled without its file name."""
    return _map_leaves(obj, lambda a: Path(a.filename) if isinstance(a, np.memmap)
                       and a.filename is not None else a)


def _as_maps(obj):
    """The inverse of ``_as_paths``: each path opened as a read-only memory map."""
    return _map_leaves(obj, lambda a: np.load(a, mmap_mode="r") if isinstance(a, Path) else a)


def unmapped(a):
    """``a`` itself, or for a memory map of ``_spill`` its file read into memory: reading through
    the map would leave its pages resident in this process (counted in its peak memory) for as
    long as the map lives."""
    return np.load(a.filename) if isinstance(a, np.memmap) else a


def _spill(rec, spill_dir, rnd, prm):
    """``_solve_one``'s tuple with its arrays (policy, slot offsets, keys, hands, regrets, strategy
    sums) written to ``spill_dir`` as .npy files and read back as read-only memory maps: a tier job
    holds every subgame of a group until the group's fixed point, 24 bytes per slot and 16 per
    information set each, which would not fit in memory for the large tiers. The record (value,
    NashConv, iterations, seconds, utility table, ...) follows as JSON, last, so that a killed job's
    next run finds each finished subgame of the round whole (``_spilled``); every write is atomic.
    The previous round's arrays of the subgame, no longer needed, are removed."""
    s, c, record, (regret, strat_sum, iters), _ = rec
    stem = _spill_stem(s, c, rnd)
    arrays = dict(record["arrays"], regret=regret, strat_sum=strat_sum)
    for name, arr in arrays.items():
        path = Path(spill_dir) / f"{stem}_{name}.npy"
        tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
        with open(tmp, "wb") as fh:
            np.save(fh, np.ascontiguousarray(arr))
        os.replace(tmp, path)
    meta = {k: v for k, v in record.items() if k != "arrays"}
    meta.update(iters=int(iters), arrays=sorted(record["arrays"]), solved_with=_solved_with(prm))
    write_text_atomic(Path(spill_dir) / f"{stem}.json", json.dumps(meta, default=lambda v: v.item()))
    for old in Path(spill_dir).glob(f"{_spill_stem(s, c, rnd - 1)}_*.npy"):
        old.unlink()
    return _spilled(spill_dir, s, c, rnd, record["utility"], prm)


def _solved_with(prm):
    """The parameters a checkpoint must match (all but ``workers``, which changes no value), as
    they read back from JSON."""
    return json.loads(json.dumps({k: v for k, v in prm.items() if k != "workers"},
                                 default=lambda v: v.item()))


def _spill_stem(s, c, rnd):
    return f"s{s[0]}-{s[1]}_v{c}_r{rnd}"


def _spilled(spill_dir, s, c, rnd, table, prm):
    """``_solve_one``'s tuple for subgame (s, c) of round ``rnd`` as ``_spill`` left it in
    ``spill_dir``, its arrays as read-only memory maps (None for those of a round already
    followed by the next, which only that round needed), or None if the round is not there or was
    solved for another utility table (list or float array; a record's table is exact in JSON) or
    with other solver parameters ``prm``. A damaged one (unreadable record or arrays) is reported
    on stderr and its record removed: the subgame is then solved again, to the same result."""
    meta_path = Path(spill_dir) / f"{_spill_stem(s, c, rnd)}.json"
    if not meta_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text())
        if (meta.pop("solved_with") != _solved_with(prm)
                or meta["utility"] != [float(u) for u in table]
                or "off_path" not in meta["arrays"]):  # spilled before the off-path refinement
            return None
        maps = {}
        for name in meta["arrays"] + ["regret", "strat_sum"]:
            path = Path(spill_dir) / f"{_spill_stem(s, c, rnd)}_{name}.npy"
            maps[name] = np.load(path, mmap_mode="r") if path.exists() else None
    except DAMAGED_FILE_ERRORS as err:
        _report_damaged(meta_path, err)
        meta_path.unlink(missing_ok=True)  # the arrays it named are overwritten by the new solve
        return None
    iters = meta.pop("iters")
    record = dict(meta, arrays={k: maps[k] for k in meta["arrays"]})
    return (s, c, record, (maps["regret"], maps["strat_sum"], iters),
            (maps["infoset_key"], maps["infoset_ptr"], maps["regret"]))


DAMAGED_FILE_ERRORS = (OSError, ValueError, KeyError, TypeError, EOFError)
"""What reading a damaged checkpoint raises: a truncated JSON (JSONDecodeError, a ValueError), a
record missing a key or of another type, a truncated .npy (ValueError), an empty one (EOFError)."""


def _report_damaged(path, err):
    print(f"  ignoring the damaged checkpoint {path} ({type(err).__name__}: {err}); "
          "solving this subgame again", file=sys.stderr, flush=True)


CHECKPOINT_SECONDS = 600.0
"""A subgame being solved saves its CFR accumulators at most this often (wall seconds): a killed
job loses at most about this much of each subgame it was solving."""


class Partial:
    """The checkpoint of a subgame still being solved, in a group's spill folder (``_spill``):
    ``<stem>_partial.json`` (iterations, the iterations it started from, seconds and CPU seconds
    so far, utility table, parameters), written last and atomically, naming
    ``<stem>_partial_i<iterations>_{regret,strat_sum}.npy``. A solve warm-started from it continues
    exactly as the killed one would have (``kernels.cfr.solve``'s ``checkpoint``)."""

    def __init__(self, spill_dir, s, c, rnd, table, prm):
        self.dir, self.stem = Path(spill_dir), _spill_stem(s, c, rnd) + "_partial"
        self.table = [float(u) for u in table]
        self.solved_with = _solved_with(prm)
        self.last = time.perf_counter()

    def load(self):
        """(regret, strat_sum, iterations, start_iterations, seconds, cpu_seconds, checks) of a
        checkpoint left for the same utility table and parameters, or None (``checks``: the
        solver's check schedule so far, ``kernels.cfr.run_checked``; empty in a checkpoint written
        before the schedule was saved). A damaged checkpoint
        (unreadable record or arrays, arrays of unequal length) is reported on stderr and removed:
        the subgame is then solved from its start, to the same result."""
        meta_path = self.dir / f"{self.stem}.json"
        if not meta_path.exists():
            return None
        try:
            meta = json.loads(meta_path.read_text())
            if meta["solved_with"] != self.solved_with or meta["utility"] != self.table:
                return None
            regret, strat_sum = [np.load(self.dir / f"{self.stem}_i{meta['iters']}_{name}.npy")
                                 for name in ("regret", "strat_sum")]
            if regret.shape != strat_sum.shape or regret.ndim != 1:
                raise ValueError(f"arrays of shapes {regret.shape} and {strat_sum.shape}")
            return (regret, strat_sum, int(meta["iters"]), int(meta["start_iters"]),
                    float(meta["seconds"]), float(meta["cpu_seconds"]), meta.get("checks", []))
        except DAMAGED_FILE_ERRORS as err:
            _report_damaged(meta_path, err)
            self.remove()
            return None

    def saver(self, start_iters, t0, c0, seconds0=0.0, cpu0=0.0, every=None):
        """A ``checkpoint`` callback for the CFR solvers that saves at most once per ``every``
        seconds (``CHECKPOINT_SECONDS``); ``t0``, ``c0`` the wall and CPU clocks at the start of
        this solve, ``seconds0``, ``cpu0`` the time of the killed runs before it."""
        every = CHECKPOINT_SECONDS if every is None else every

        def checkpoint(regret, strat_sum, iterations, checks):
            if time.perf_counter() - self.last < every:
                return
            for name, arr in (("regret", regret), ("strat_sum", strat_sum)):
                path = self.dir / f"{self.stem}_i{iterations}_{name}.npy"
                tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
                with open(tmp, "wb") as fh:
                    np.save(fh, arr)
                os.replace(tmp, path)
            meta = dict(iters=int(iterations), start_iters=int(start_iters),
                        seconds=seconds0 + time.perf_counter() - t0,
                        cpu_seconds=cpu0 + time.process_time() - c0, utility=self.table,
                        solved_with=self.solved_with, checks=checks)
            write_text_atomic(self.dir / f"{self.stem}.json", json.dumps(meta))
            self.remove(keep=iterations)
            self.last = time.perf_counter()
        return checkpoint

    def remove(self, keep=None):
        """Remove the checkpoint's arrays (all, or all but those of iteration ``keep``), and with
        ``keep`` None its record too (the subgame is spilled whole)."""
        if keep is None:  # the record first: it must never name arrays already gone
            (self.dir / f"{self.stem}.json").unlink(missing_ok=True)
        for old in self.dir.glob(f"{self.stem}_i*_*.npy"):
            if keep is None or not old.name.startswith(f"{self.stem}_i{keep}_"):
                old.unlink()


def _progress_line(s, c, every=60.0, target=None):
    """A ``progress`` callback for the CFR solvers: the subgame's score, vira class, iterations,
    the NashConv of its last check and, from the second check on, an estimated time left to
    ``target``, as the process's status line at every call (:class:`strongsolve.progress.Task`,
    which shows it at most every 0.5 s on a terminal, 15 s on a pipe) and as a line on stdout (a
    workflow job's log) at most once per ``every`` seconds (a full-deck raise subgame runs for
    minutes). The estimate extends the last two checks' power law ``NashConv ~ t^-p`` (as
    ``kernels.cfr.next_check``) at this solve's seconds per iteration."""
    last = [0.0]
    first = []
    checks = []
    task = Task(f"truco score {s[0]}-{s[1]} vira class {c}")

    def progress(iterations, nash_conv, seconds):
        if not first:
            first.append(iterations)
        if nash_conv is not None and (not checks or checks[-1][1] != nash_conv):
            checks.append((iterations, nash_conv))  # a new check
        eta = _eta(checks, iterations, seconds, first[0], target)
        measured = "not checked yet" if nash_conv is None else f"{nash_conv:.2e} at the last check"
        task.update(f"iteration {iterations}, NashConv {measured}, after {seconds:.0f} s{eta}")
        if seconds - last[0] < every:
            return
        last[0] = seconds
        print(f"  score {s[0]}-{s[1]} vira class {c}: iteration {iterations}, nash_conv {measured}, "
              f"after {seconds:.0f} s{eta}", flush=True)
    return progress


def _eta(checks, iterations, seconds, first, target):
    """``", ETA <n> s"`` from the last two (iterations, NashConv) checks, or "" (see
    ``_progress_line``)."""
    if target is None or len(checks) < 2 or iterations <= first:
        return ""
    (t0, e0), (t1, e1) = checks[-2], checks[-1]
    if e1 <= target:
        return ", ETA 0 s"
    if not (0 < e1 < e0 and t1 > t0 > 0):
        return ""
    p = np.log(e0 / e1) / np.log(t1 / t0)
    left = max(0.0, t1 * (e1 / target) ** (1 / p) - iterations)
    per = seconds / (iterations - first + 1)  # the first step's iterations ran before the first call
    return f", ETA {left * per:.0f} s (NashConv ~ t^-{p:.2f})"


def _solve_one(s, c, deck, table, prm, own, neighbour, validate, partial=None, refine=True,
               tree_dir=None):
    """Solve subgame (score, class), warm-started from ``own`` (regret, strat_sum, iterations) of
    an earlier round, else from ``neighbour`` (infoset_key, infoset_ptr, regret) of another class;
    with a ``Partial``, from its checkpoint if a killed job left one, and saving one as it goes.
    Returns the score, the class, the record to store, the CFR accumulators for the next round and
    the transfer triple for the next class. Without ``refine`` the record keeps the solve's average
    strategy (``_unrefined``): a round that is not the last (``solve_scores``). A raise subgame's
    trees are read from or kept in ``tree_dir`` (``solve_scores``)."""
    hands, pairs, weights = deck
    t0, c0 = time.perf_counter(), time.process_time()
    start_iters = 0 if own is None else int(own[2])
    max_iterations = prm["max_iterations"]
    resume = partial.load() if partial is not None else None
    # a round's own accumulators solved the same tree with W a little off: their average strategy
    # is evaluated before iterating and kept if it meets the target (the 11 row's usually does);
    # not on a resume, whose checks continue the killed solve's schedule
    check_first = own is not None and resume is None
    if resume is not None:
        regret, strat_sum, iters, start_iters, seconds, cpu_seconds, checks = resume
        own, neighbour = (regret, strat_sum, iters, checks), None
        max_iterations -= iters - start_iters
        t0, c0 = t0 - seconds, c0 - cpu_seconds  # the killed job's time counts in the record
        print(f"  score {s[0]}-{s[1]} class {c}: continuing from the checkpoint at iteration {iters}",
              file=sys.stderr, flush=True)
    cfr = dict(max_iterations=max_iterations, check_first=check_first,
               checkpoint=partial.saver(start_iters, t0, c0) if partial is not None else None)
    if prm["solver"] == "lp" and len(pairs) >= FOREST_MIN_DEALS:
        raise ValueError(f"solver lp is the exact LP for small decks (below {FOREST_MIN_DEALS} deal "
                         f"pairs); score {s[0]}-{s[1]} class {c} has {len(pairs)}: use "
                         "truco.solver: auto")
    prune = None
    if in_row11(*s):
        blind = s == (11, 11) and prm["eleven_eleven"] == "blind"
        tree = build_hand_tree(np.arange(N_STRENGTHS), np.array(hands), pairs, weights,
                               eleven=eleven_player(*s), three_ties=prm["three_ties"],
                               blind=blind, face_down=prm["face_down"] and not blind)
    else:  # the per-player rule only where the table certifies it (pruning.py)
        prune = prm["prune"]
        if prune == "player" and not player_prune_is_lossless(table, *s):
            prune = "min"
        # the forest is built without covered cards (games/truco/forest.py): face-down trees take
        # the public tree, or with "auto" above PUBLIC_MAX_CAP the tabular solver (check_params
        # refuses solver "forest" with face_down)
        small_cap = max(raise_caps(*s, prune)) <= PUBLIC_MAX_CAP
        if prm["solver"] in ("forest", "public") or (
                prm["solver"] == "auto" and len(pairs) >= FOREST_MIN_DEALS
                and (small_cap or not prm["face_down"])):
            public = prm["solver"] == "public" or (prm["solver"] == "auto" and small_cap)
            return _solve_forest(s, c, deck, table, prm, own, neighbour, prune, t0, c0, cfr,
                                 public=public, refine=refine, tree_dir=tree_dir)
        tree = build_hand_tree(np.arange(N_STRENGTHS), np.array(hands), pairs, weights,
                               three_ties=prm["three_ties"], raises=True,
                               raise_caps=raise_caps(*s, prune), face_down=prm["face_down"])
    tree.set_utilities(table)
    warm = own
    if warm is None and neighbour is not None:
        warm = (transfer_regrets(*neighbour, tree.infoset_key, tree.game.infoset_ptr),
                np.zeros(int(tree.game.infoset_ptr[-1])), 0)
    if prm["solver"] == "lp":
        res = solve_lp(tree.game, validate=validate)
    else:
        res = solve(tree.game, target_nash_conv=prm["target_nash_conv"],
                    check_every=prm["check_every"], warm_start=warm, validate=validate,
                    progress=_progress_line(s, c, target=prm["target_nash_conv"]), **cfr)
    reach = reach_probabilities(tree.game, res.strategy)
    refined = (_off_path(s, c, res, tabular_refiner(tree.game, res.strategy),
                         lambda st: evaluate(tree.game, st), prm["target_nash_conv"])
               if refine else _unrefined(res, tree.game.n_infosets))
    return _record(s, c, table, prune, tree.raise_caps, tree.game.n_nodes, tree.game.n_infosets,
                   float(reach[tree.outcome == NOBODY].sum()), res, tree.game.infoset_ptr,
                   tree.infoset_key, tree.hands, t0, c0, refined, tree.face_down)


def _solve_forest(s, c, deck, table, prm, own, neighbour, prune, t0, c0, cfr, public=False,
                  refine=True, tree_dir=None):
    """``_solve_one`` for a raise subgame with kernels/forest_cfr.py, or with ``public``
    kernels/public_cfr.py (never the whole per-deal tree; both lay the action slots out by
    information-set key, so accumulators pass between them); ``cfr`` holds the solver's
    ``max_iterations`` and ``checkpoint``. The record's ``n_nodes`` counts the per-deal tree's
    nodes with either solver (``public_cfr.deal_node_count``), so CPU per node stays comparable.
    With ``face_down`` (the public tree only) the off-path refinement is skipped: it runs deal by
    deal on the forest, which has no covered cards; the stored policy is then the solve's average
    strategy (``off_path`` all False, ``off_path_sets`` 0, ``off_path_reach`` 0.0); so it is
    without ``refine``."""
    hands, pairs, weights = deck
    face_down = bool(prm["face_down"])  # only with public (_solve_one, check_params)
    options = dict(face_down=True) if face_down else {}
    build = build_public_raise_tree if public else build_raise_forest
    forest = cached_build(tree_dir, build, np.arange(N_STRENGTHS), np.array(hands), pairs,
                          weights, three_ties=prm["three_ties"],
                          raise_caps=raise_caps(*s, prune), **options)
    forest.set_utilities(table)
    if own is not None:
        warm = (unmapped(own[0]), unmapped(own[1]), *own[2:])
    elif neighbour is not None:
        src = [unmapped(a) for a in neighbour]
        warm = (transfer_regrets(*src, forest.infoset_key, forest.infoset_ptr),
                np.zeros(forest.n_slots), 0)
        del src  # before the solver's accumulators: the job's peak is one subgame's arrays
    else:
        warm = None
    res = (public_cfr if public else forest_cfr).solve(
        forest, target_nash_conv=prm["target_nash_conv"], check_every=prm["check_every"],
        warm_start=warm, overwrite_warm_start=True,
        progress=_progress_line(s, c, target=prm["target_nash_conv"]), **cfr)
    n_nodes = public_cfr.deal_node_count(forest) if public else forest.n_nodes
    if face_down or not refine:
        return _record(s, c, table, prune, forest.raise_caps, n_nodes, forest.n_infosets,
                       float(res.outcome_probabilities[NOBODY]), res, forest.infoset_ptr,
                       forest.infoset_key, forest.hands, t0, c0, _unrefined(res, forest.n_infosets),
                       face_down=face_down)
    if public:  # the refinement runs deal by deal: the forest of the same keys and slots, which
        # its builder takes from the public tree (one pass over the deals instead of three)
        keys, ptr = forest.infoset_key, forest.infoset_ptr
        del forest  # before the forest's arrays: the job's peak stays one tree's
        forest = cached_build(tree_dir, build_raise_forest, np.arange(N_STRENGTHS),
                              np.array(hands), pairs, weights, three_ties=prm["three_ties"],
                              raise_caps=raise_caps(*s, prune), infosets=(keys, ptr))
        forest.set_utilities(table)
    refined = _off_path(s, c, res, forest_refiner(forest, res.strategy),
                        lambda st: forest_cfr.evaluate(forest, st), prm["target_nash_conv"])
    return _record(s, c, table, prune, forest.raise_caps, n_nodes, forest.n_infosets,
                   float(res.outcome_probabilities[NOBODY]), res, forest.infoset_ptr,
                   forest.infoset_key, forest.hands, t0, c0, refined)


def _unrefined(res, n_infosets):
    """``_off_path``'s dict for a solve stored without the refinement: the average strategy,
    no information set off the path."""
    return dict(policy=res.strategy, off_path=np.zeros(n_infosets, bool), off_path_reach=0.0,
                off_path_unreached=False, off_path_sets=0, off_path_rungs=0, off_path_seconds=0.0,
                off_path_check_seconds=0.0, off_path_value=float(res.value),
                off_path_nash_conv=float(res.nash_conv))


LADDER = tuple((u, t) for u in (True, False) for t in OFF_PATH_REACHES)
"""The off-path refinement's rungs, (unreached, own-reach threshold), from the most sets refined:
the thresholds of ``OFF_PATH_REACHES`` from the largest with the sets the opponent never reaches
refined too, then the same thresholds without them (a pure best response there can invite the
opponent's deviation)."""


def _off_path(s, c, res, refine, evaluate_profile, target):
    """The policy to store: the solve's average strategy refined off the equilibrium path
    (kernels/off_path.py, ``refine(tau, unreached)``) at the first rung of ``LADDER`` whose refined
    profile keeps the value within ``target`` of the solve's and the NashConv at most the larger of
    the solve's and ``target``; and the record's entries of the refinement: ``off_path`` (bool[I]),
    ``off_path_reach`` (the threshold), ``off_path_unreached`` (bool: the sets the opponent never
    reaches refined), ``off_path_sets``, ``off_path_rungs`` (rungs tried), ``off_path_seconds``
    (the refinements), ``off_path_check_seconds`` (the refined profiles' evaluations),
    ``off_path_value`` and ``off_path_nash_conv`` (the refined profile's).

    Down each half of the ladder a rung refines a subset of the sets of the rung above it, so the
    check fails on the first rungs of a half and passes from some rung on; the first passing rung
    is found by bisection: the last rung of the first half tells whether that half has one, then
    each halving takes one refinement and one evaluation (at most 5 of the 18 rungs, against all
    of them in turn). The rung taken passes the check and the one above it fails.

    Raises
    ------
    RuntimeError
        If even the last rung (own reach 0, the sets the opponent never reaches left as solved)
        moves the value or raises the NashConv (rows the profile never reaches cannot: a fault of
        the refinement).
    """
    seconds = check = 0.0
    tried = {}

    def passes(i):
        nonlocal seconds, check
        if i not in tried:
            unreached, tau = LADDER[i]
            t = time.perf_counter()
            policy, off = refine(tau, unreached)
            seconds += time.perf_counter() - t
            t = time.perf_counter()
            ev = evaluate_profile(policy)
            check += time.perf_counter() - t
            # 1e-12: the public tree's solve is evaluated again on the forest, whose sums over
            # hands run in another order (kernels/public_cfr.py)
            ok = (abs(ev["value"] - res.value) <= target
                  and ev["nash_conv"] <= max(res.nash_conv, target) + 1e-12)
            tried[i] = (ok, policy, off, ev) if ok else (ok, None, None, ev)
        return tried[i][0]

    half = len(OFF_PATH_REACHES)
    lo, hi = (0, half - 1) if passes(half - 1) else (half, len(LADDER) - 1)
    while lo < hi:
        mid = (lo + hi) // 2
        if passes(mid):
            hi = mid
        else:
            lo = mid + 1
    if not passes(hi):
        ev = tried[hi][3]
        raise RuntimeError(f"score {s[0]}-{s[1]} class {c}: the off-path refinement moved the "
                           f"value from {res.value:.9f} to {ev['value']:.9f} and the NashConv from "
                           f"{res.nash_conv:.2e} to {ev['nash_conv']:.2e}, beyond the target "
                           f"{target:.1e}, even at own reach 0")  # the last rung: unreached False
    _, policy, off, ev = tried[hi]
    unreached, tau = LADDER[hi]
    return dict(policy=policy, off_path=off, off_path_reach=tau, off_path_unreached=unreached,
                off_path_sets=int(off.sum()), off_path_rungs=len(tried),
                off_path_seconds=seconds, off_path_check_seconds=check,
                off_path_value=float(ev["value"]), off_path_nash_conv=float(ev["nash_conv"]))


def _record(s, c, table, prune, caps, n_nodes, n_infosets, p_nobody, res, infoset_ptr,
            infoset_key, hands, t0, c0, refined, face_down=False):
    """The tuple ``_solve_one`` returns (its docstring); ``refined``: ``_off_path``'s dict."""
    record = dict(value=res.value, nash_conv=res.nash_conv, exploitability=res.exploitability,
                  iterations=res.iterations, seconds=time.perf_counter() - t0,
                  cpu_seconds=time.process_time() - c0, utility=table.tolist(),
                  n_nodes=n_nodes, p_nobody=p_nobody, n_infosets=n_infosets, prune=prune,
                  raise_caps=list(caps), face_down=face_down,
                  max_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  **{k: v for k, v in refined.items() if k.startswith("off_path_")},
                  arrays=dict(policy=refined["policy"], off_path=refined["off_path"],
                              infoset_ptr=infoset_ptr, infoset_key=infoset_key, hands=hands),
                  # (iterations, NashConv) of the solve's checks: the convergence, and what a
                  # continued solve schedules its checks from (saved.write_accumulators)
                  checks=[[int(t), float(e)] for t, e in getattr(res, "checks", [])])
    return (s, c, record, (res.regret, res.strat_sum, res.iterations),
            (infoset_key, infoset_ptr, res.regret))


def play_probabilities(path):
    """For a stored hand-of-eleven subgame: list of (hand types, physical weight, P(play))."""
    attrs, data = read_subgame(path)
    e = attrs["eleven"]
    if e < 0:
        raise ValueError(f"{path} has no hand-of-eleven decision")
    cap = ab.class_capacities(attrs["vira_class"])
    hands = [tuple(int(t) for t in h) for h in data["hands"]]
    order = np.argsort(data["infoset_key"])
    keys = data["infoset_key"][order]
    rows = []
    for i, h in enumerate(hands):
        key = i * 2 + e
        j = int(np.searchsorted(keys, key))
        if j < len(keys) and keys[j] == key:
            k = int(order[j])
            rows.append((h, ab.hand_weight(h, cap), float(data["policy"][data["infoset_ptr"][k]])))
    return rows


def summary_rows(results):
    """One dict per stored subgame, with the play rate of a hand of eleven (physical-hand weighted)."""
    rows = []
    for attrs in list_solved(results):
        a, b = attrs["score"]
        c = attrs["vira_class"]
        row = dict(mano=a, pe=b, vira_class=c, eleven=attrs["eleven"], value=attrs["value"],
                   nash_conv=attrs["nash_conv"], exploitability=attrs["exploitability"],
                   iterations=attrs["iterations"], seconds=attrs["seconds"],
                   cpu_seconds=attrs["cpu_seconds"], n_nodes=attrs["n_nodes"],
                   play_rate="", hands_mixed="")
        if attrs["eleven"] >= 0:
            pp = play_probabilities(Path(results).joinpath(*GRID_DIR, f"group_{min(a, b)}",
                                                            subgame_name(a, b, c)))
            total = sum(w for _, w, _ in pp)
            row["play_rate"] = sum(w * p for _, w, p in pp) / total
            row["hands_mixed"] = sum(1 for _, _, p in pp if 1e-3 < p < 1 - 1e-3)
        rows.append(row)
    return rows


def _csv(rows):
    if not rows:
        return ""
    cols = list(rows[0])
    return "\n".join([",".join(cols)] + [",".join(str(r[k]) for k in cols) for r in rows]) + "\n"


def write_summary(results, out):
    """Write the CSV of every stored subgame of the 11 row under ``results`` (:func:`summary_rows`)
    to ``out``, atomically."""
    write_text_atomic(out, _csv(summary_rows(results)))


def write_abstraction_sizes(out):
    """Write the CSV of the abstraction sizes per vira class (``abstraction.abstraction_sizes``)
    to ``out``, atomically."""
    write_text_atomic(out, _csv(ab.abstraction_sizes()))
