"""The answers a workflow run prints on the terminal when it ends.

Snakemake's ``onsuccess`` handler (Snakefile) calls :func:`headline` with the result files of the
games of the run; each game's lines are built from the documents its jobs wrote (``solution.json`` or
``summary.csv`` of a 2048 run, the JSON of ``strongsolve shutbox`` and ``strongsolve ludo``, the CSV
of the Truco jobs). Files that do not exist (a run asked for a subset of targets) are left out.
"""

import csv
import json
from pathlib import Path

from .games.g2048.stages.report import read_solution, read_summary
from .store.errors import CorruptLayerError
from .games.g2048.hints import rerun_command


class ResultReadError(ValueError):
    """A result file exists but cannot be read; the message names the file and the repair."""


def read_result(path):
    """One result document: a JSON file as a dict, a CSV file as a list of dicts (one per row).

    Parameters
    ----------
    path : str or Path

    Raises
    ------
    ResultReadError
        If the file is not valid JSON / CSV; the message names the file and the command that
        rebuilds it (its job, forced to run again).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".csv":
            return list(csv.DictReader(text.splitlines()))
        return json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, csv.Error) as err:
        raise ResultReadError(f"cannot read {path}: {err}; rebuild it with "
                              f"`{rerun_command(path)}`") from None


def _documents(paths):
    """``(path, read_result(path))`` for each of ``paths`` that is a file, in order: the files of
    targets a run did not ask for do not exist and are left out. ResultReadError as
    :func:`read_result`."""
    for path in map(Path, paths):
        if path.is_file():
            yield path, read_result(path)


def _verified(paths, load):
    """``(path, load(path))`` for each of ``paths`` that is a file: a game's loader, which verifies
    the file's checksum (CorruptResultError naming the file and the command that rebuilds it).
    Any other ValueError of the loader becomes a :class:`ResultReadError`."""
    for path in map(Path, paths):
        if path.is_file():
            try:
                yield path, load(path)
            except ResultReadError:
                raise
            except ValueError as err:
                raise ResultReadError(str(err)) from None


def g2048_lines(run_dir):
    """The 2048 headline of a run directory.

    Parameters
    ----------
    run_dir : str or Path
        ``results/<run>/`` of a 2048 run.

    Returns
    -------
    list of str
        From ``solution.json``: the expected score in points from a random start (or, for a
        reach-a-tile run, the probability of making the target tile) and the canonical counts; else
        from ``summary.csv`` the counts of a forward-only run; empty when neither file exists.

    Raises
    ------
    CorruptResultError
        If the file is damaged or edited (it fails its checksum: report.read_solution).
    """
    run_dir = Path(run_dir)
    solution, summary = run_dir / "solution.json", run_dir / "summary.csv"
    if solution.is_file():
        doc = read_solution(run_dir)
        name = f"2048 {doc['rows']}x{doc['cols']} (p2 {doc['p2']:g})"
        if doc["objective"] == "reach_tile":
            answer = (f"probability of making the {doc['target_tile']} tile from a random start "
                      f"{doc['reach_probability']!r}")
        else:
            answer = f"expected score from a random start {doc['expected_score']!r} points"
        return [f"{name}: {answer}",
                f"  {doc['num_states']:,} states, {doc['num_afterstates']:,} afterstates, "
                f"{doc['num_terminal_states']:,} terminal states, last age {doc['max_age']} "
                f"({solution})"]
    if summary.is_file():
        rows = read_summary(run_dir)
        states = sum(r["states"] for r in rows)
        afterstates = sum(r["afterstates"] for r in rows)
        last = max((r["age"] for r in rows), default=0)
        return [f"{run_dir.name}: forward pass to age {last} (no values: forward-only run)",
                f"  {states:,} states, {afterstates:,} afterstates ({summary})"]
    return []


SHUTBOX_ANSWERS = {"min-rolls": "expected rolls to set every card",
                   "max-shut": "probability of shutting every tile",
                   "min-sum": "expected open sum at the end"}


def shutbox_lines(paths):
    """Shut the Box answers.

    Parameters
    ----------
    paths : iterable of str or Path
        Result files of ``strongsolve shutbox --output``; those that do not exist are skipped.

    Returns
    -------
    list of str
        One line per file: expected rolls (flip-one), probability of shutting every tile (max-shut)
        or expected open sum in points (min-sum), from the start.

    Raises
    ------
    ResultReadError
        If a file is not valid JSON.
    """
    from .games.shutbox.saved import load_result

    lines = []
    for path, doc in _verified(paths, load_result):
        pieces = "cards" if doc["rule"] == "flip-one" else "tiles"
        one_die = ", one-die rule" if doc["one_die"] else ""
        lines.append(f"Shut the Box {doc['rule']}, {doc['cards']} {pieces}, two {doc['faces']}-sided "
                     f"dice{one_die}: {SHUTBOX_ANSWERS[doc['objective']]} {doc['value']:.12g} "
                     f"({path})")
    return lines


def ludo_lines(paths):
    """Ludo answers.

    Parameters
    ----------
    paths : iterable of str or Path
        Result files of ``strongsolve ludo rolls|race --output``: ``rolls_<die>.json`` (``board``
        is the board's own die) and ``race_p<pieces>.json``; those that do not exist are skipped.

    Returns
    -------
    list of str
        One line per file: the expected rolls of one piece from cell 0 (or that the goal is
        unreachable), or the first player's win probability under optimal play by both.

    Raises
    ------
    ResultReadError
        If a file is not valid JSON.
    """
    from .games.ludo.saved import load_summary

    lines = []
    for path, doc in _verified(paths, load_summary):
        board = Path(doc["board_file"]).stem
        if doc["game"] == "ludo":
            die = path.stem.removeprefix("rolls_")
            die = "the board's die" if die == "board" else f"die {die!r}"
            rolls = doc["expected_rolls"]  # the string "inf" when the goal is unreachable
            rolls = f"{rolls:.10g}" if isinstance(rolls, (int, float)) else f"{rolls} (goal unreachable)"
            lines.append(f"Ludo {board}, one piece, {die}: expected rolls {rolls} ({path})")
        else:
            lines.append(f"Ludo {board}, race of {doc['pieces']} piece(s) each: the first player wins "
                         f"with probability {doc['win_probability']:.10f} under optimal play ({path})")
    return lines


def truco_group_line(group_dir):
    """The line of one solved group of the 11 row (``row11/group_<x>``, a directory of subgames):
    for the 11-11 hand, mano's match-win probability averaged over the vira (the classes weighted
    by their probability) and the largest exploitability; else the number of subgames.

    Raises
    ------
    CorruptResultError
        If a stored subgame's attributes do not match their checksum (the message names the file).
    """
    from .games.truco.stages.groups import continuation
    from .games.truco.saved import read_subgame

    subgames = [read_subgame(p, arrays=False)[0] for p in sorted(Path(group_dir).glob("s*_v*.zarr"))]
    if group_dir.name != "group_11":
        x = group_dir.name.removeprefix("group_")
        return f"Truco: hands of eleven 11-{x} and {x}-11, {len(subgames)} subgames solved ({group_dir})"
    value = continuation(group_dir.parents[2], 11)[(11, 11)]  # <results>/truco/row11/group_11
    worst = max(r["exploitability"] for r in subgames)
    return (f"Truco: the 11-11 hand solved for its {len(subgames)} vira classes; mano wins the match "
            f"with probability {value:.6f} (averaged over the vira), exploitability at most "
            f"{worst:.1e} ({group_dir})")


def truco_lines(paths):
    """Truco results: one line per existing file of ``paths`` (``abstraction_sizes.csv``: its vira
    classes; ``row11_summary.csv``: its solved subgames; ``grid/<tier>_min<m>.csv``: the subgames of
    a tier of the score grid and their largest NashConv; a ``row11/group_<x>`` directory:
    :func:`truco_group_line`), naming the file.

    Raises
    ------
    ResultReadError
        If a file is not valid CSV.
    """
    lines = []
    for p in map(Path, paths):
        if not p.exists():
            continue
        if p.is_dir():
            lines.append(truco_group_line(p))
            continue
        rows = read_result(p)
        if p.name == "abstraction_sizes.csv":
            lines.append(f"Truco: abstraction sizes of {len(rows)} vira classes ({p})")
        elif p.name == "row11_summary.csv":
            lines.append(f"Truco: {len(rows)} subgames of the 11 row solved ({p})")
        else:
            worst = max((float(r["nash_conv"]) for r in rows if r.get("nash_conv")), default=0.0)
            if p.name == "grid_summary.csv":  # every stored subgame of the region, W per score
                scores = {(r["mano"], r["pe"]) for r in rows if r.get("W")}
                lines.append(f"Truco: {len(rows)} subgames of the grid solved, W known at "
                             f"{len(scores)} scores, NashConv at most {worst:.2g} ({p})")
                continue
            tier, _, low = p.stem.partition("_min")  # a tier of the grid: <tier>_min<m>.csv
            lines.append(f"Truco: grid tier {tier}, scores with min >= {low}: {len(rows)} subgames "
                         f"solved, NashConv at most {worst:.2g} ({p})")
    return lines


def headline(games, g2048_dir=None, shutbox=(), ludo=(), truco=()):
    """The lines printed at the end of a workflow run, for the games of the run only.

    Parameters
    ----------
    games : list of str
        ``config["games"]`` (``g2048``, ``shutbox``, ``ludo``, ``truco``).
    g2048_dir : str or Path, optional
        The 2048 run directory.
    shutbox, ludo, truco : iterable of str or Path
        The result files of each game (the workflow's targets); missing ones are skipped.

    Returns
    -------
    str
        The text, ending in a newline; empty when no result file exists. A file that cannot be read
        gives its line as the :class:`ResultReadError` message instead of stopping the others.
    """
    makers = {"g2048": lambda: g2048_lines(g2048_dir) if g2048_dir else [],
              "shutbox": lambda: shutbox_lines(shutbox), "ludo": lambda: ludo_lines(ludo),
              "truco": lambda: truco_lines(truco)}
    lines = []
    for game in games:
        try:
            lines += makers[game]()
        except (ResultReadError, CorruptLayerError) as err:  # a damaged file: say which, and still print the others
            lines.append(str(err))
    if not lines:
        return ""
    return "\n".join(["", "strongsolve: the answers of this run", *lines]) + "\n"
