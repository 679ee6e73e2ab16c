"""A solved Shut the Box variant on disk, the one reader and writer of its result file: the JSON of
``strongsolve shutbox --output`` (with ``--policy``: the policy table and the value of every
position, ``value_per_mask``), written and verified through
:func:`strongsolve.store.checksums.write_json_checked` (a SHA-256 of the document).

Strict JSON has no infinity: an infinite value (a position whose objective cannot be met) is
written as ``null`` and read back as ``inf``.
"""

import math

from ...rerun import RECORD_KEY, job_record
from ...store.checksums import read_json_checked, write_json_checked
from .hints import result_hint, solve_command

VARIANT_KEYS = ("rule", "objective", "cards", "faces", "one_die")


def finite_or_none(value):
    """``value`` with every non-finite float (inf, NaN) replaced by None, in nested dicts and lists,
    so that it is written as strict JSON (``null``; Python's json writes ``Infinity``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def write_result(path, doc):
    """Write a result document (``finite_or_none`` of it) to ``path`` with its checksum, atomically;
    inside a workflow job with the run's command (``rerun``, for repair hints: hints.py).

    Raises
    ------
    StoreWriteError
        Disk full or directory not writable; nothing is left at ``path``.
    """
    record = job_record()  # the run's command, for the repair hints of a damaged copy (hints.py)
    write_json_checked(path, finite_or_none(dict(doc, **{RECORD_KEY: record}) if record else doc))


def load_result(path):
    """The verified result document of ``path`` (without its checksum).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    CorruptResultError
        Unreadable, without a checksum or not matching it (an edited value); the message names the
        command that writes it again.
    ValueError
        A verified document that is not a Shut the Box result.
    """
    doc = read_json_checked(path, result_hint)
    if doc.get("game") != "shutbox":
        raise ValueError(f"{path}: not a Shut the Box result")
    return doc


def load_values(path):
    """``(variant, value)`` of a result saved with its values (``--policy``): the variant's
    :data:`VARIANT_KEYS` and the value of every position (list of float, ``inf`` for null), as
    :func:`.advice.advise` reads them.

    Raises
    ------
    ValueError
        Missing, saved without its values, with a value per position missing, or a null value where
        the objective has no infinite value (``max-shut``, ``min-sum``); the message names the
        command that writes it again.
    CorruptResultError
        Damaged or edited (:func:`load_result`).
    """
    try:
        doc = load_result(path)
        variant = {k: doc[k] for k in VARIANT_KEYS}
        value = [math.inf if v is None else v for v in doc["policy"]["value_per_mask"]]
    except (FileNotFoundError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a Shut the Box solution with its values ({err}); "
                         f"write one with `{solve_command(path)}`") from None
    if len(value) != 1 << variant["cards"]:
        raise ValueError(f"{path}: {len(value)} values for {1 << variant['cards']} positions of "
                         f"{variant['cards']} cards; write it again with `{solve_command(path)}`")
    # only expected rolls are infinite (a goal the dice cannot reach); a null probability or sum
    # is no number at all, never to be shown as "inf"
    unset = [mask for mask, v in enumerate(value) if math.isinf(v)]
    if unset and variant["objective"] != "min-rolls":
        raise ValueError(f"{path}: position {unset[0]} (mask of open tiles) has no {variant['objective']}"
                         f" value (null); write it again with `{solve_command(path)}`")
    return variant, value
