"""Numbers typed into the lab's forms, read strictly: ASCII digits only, within a stated range.

Python's ``int`` and ``str.isdigit`` take far more than a user means by a number (``'²'.isdigit()``
is true, ``int('٣')`` is 3, ``float('nan')`` is a float), so every page reads its numbers here and
shows the message of the ValueError, which names the value and the allowed range.
"""

import math
import re

SEED_LIMIT = 2 ** 63 - 1  # the largest seed a page takes (and the bound of any count it reads)

_WHOLE = re.compile(r"[+-]?[0-9]{1,30}")
_DECIMAL = re.compile(r"[+-]?([0-9]{1,30}(\.[0-9]{0,30})?|\.[0-9]{1,30})([eE][+-]?[0-9]{1,3})?")


def whole_number(text, what, low, high):
    """The whole number written in ``text``.

    Parameters
    ----------
    text : str
        Optional sign and ASCII digits (surrounding spaces ignored).
    what : str
        The quantity's name, for the message.
    low, high : int
        The allowed range, both included.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Not a whole number of ASCII digits or outside ``low..high``; the message names ``text``,
        ``what`` and the range.
    """
    text = str(text).strip()
    if not _WHOLE.fullmatch(text) or not low <= int(text) <= high:
        raise ValueError(f"{what} {shown(text)} is not a whole number from {low} to {high}")
    return int(text)


def decimal_number(text, what, low, high):
    """The finite decimal number written in ``text`` (``nan`` and ``inf`` refused).

    Parameters
    ----------
    text : str
        Optional sign, ASCII digits, one decimal point and an optional exponent (``1e+06``, as
        ``format(x, "g")`` writes it; surrounding spaces ignored).
    what : str
        The quantity's name, for the message.
    low, high : float
        The allowed range, both included.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Not such a number or outside ``low..high``; the message names ``text``, ``what`` and the
        range.
    """
    text = str(text).strip()
    if not _DECIMAL.fullmatch(text) or not (math.isfinite(float(text)) and low <= float(text) <= high):
        raise ValueError(f"{what} {shown(text)} is not a decimal number from {low:g} to {high:g}")
    return float(text)


def shown(text, limit=40):
    """``text`` quoted for a message, cut to ``limit`` characters so that a huge input does not fill the page."""
    return repr(text if len(text) <= limit else text[:limit] + "…")
