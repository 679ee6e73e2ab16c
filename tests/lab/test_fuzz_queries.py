"""Every lab route fed a few hundred hostile strings in each query parameter answers a page, never
a 500: numbers are read as ASCII numbers in a range, names only among the listed results (Flask's
test client, no browser)."""

import html
import random

import pytest

from strongsolve.lab.app import create_app

TRUCO_BASE = dict(score0="11", score1="11", dealer="1", vira="2d")
# (test id, route, a valid query, the parameters to fuzz one at a time)
ROUTES = [
    ("home", "/", {}, ["x"]),
    ("2048", "/2048", {"run": "2048_2x3", "board": "2 . . / . . 2"}, ["run", "board"]),
    ("2048-play", "/2048/play", {"run": "2048_2x3", "seed": "1", "points": "8", "step": "2",
                                 "board": "2 . . / . . 2", "move": "left", "hints": "1"},
     ["run", "seed", "points", "step", "board", "move", "hints"]),
    ("shutbox-flip", "/shutbox", {"file": "shutbox_4/flip_one.json", "tile": "1", "x": "1", "y": "2"},
     ["file", "tile", "x", "y"]),
    ("shutbox-standard", "/shutbox",
     {"file": "shutbox_4/standard_5_max-shut.json", "tile": "1", "total": "3"}, ["tile", "total"]),
    ("ludo", "/ludo", {"file": "ludo_small/race_p2.json", "own": "0,0", "opponent": "0,0", "roll": "1"},
     ["file", "own", "opponent", "roll"]),
    ("truco-mix", "/truco", dict(TRUCO_BASE, hand="2s 7h 3c"),
     ["score0", "score1", "dealer", "vira", "hand"]),
    ("truco-line", "/truco", dict(TRUCO_BASE, hand0="2s 7h 3c", hand1="2h 7s 3d", line=""),
     ["hand0", "hand1", "line"]),
    ("truco-deal", "/truco", dict(TRUCO_BASE, deal="random", seed="3"), ["seed", "deal"]),
    ("truco-play", "/truco/play", dict(TRUCO_BASE, you="0", seed="5", hand0="2s 7h 3c",
                                       hand1="2h 7s 3d"),
     ["score0", "score1", "dealer", "you", "seed", "vira", "line", "hand0", "hand1"]),
]

HOSTILE = [
    "", " ", "0", "-0", "1", "-1", "+1", "2", "3", "11", "12", "-12", " 3 ", "1_0", "0x10", "1.5",
    "1e3", "1e300", "-1e300", "1e-300", "9" * 30, "9" * 400, "9" * 5000, "-" + "9" * 5000,
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e309",
    "²", "³", "٣", "१", "௫", "Ⅻ", "½", "¹²", "０", "1²", "٣,٣", "0,²", "²,0",
    "../", "../../etc/passwd", "..%2F..%2F", "/", "/etc/passwd", "shutbox_4/../shutbox_4/flip_one.json",
    "2048_2x3/..", ".", "..", "\\", "C:\\", "\x00", "a\x00b", "\n", "\t", "\r\n",
    "a" * 10000, "0," * 2000, "2 " * 3000, "<script>alert(1)</script>", "'", '"', "%", "%00", "{}",
    "[]", "null", "true", "None", "\u202e", "🙂", "\ufeff1", "𝟙", "0,0", "0,0,0", ",", ",,", "0,4",
    "4,0", "0,-1", "2 . . / . . 2", "2 4 8 / 16 32 64", "/ /", "4096 . . / . . .", "left", "up",
    "LEFT", "fold", "truco", "play", "accept", "2d", "7c", "Ac 3h 4s", "2s 7h 3c", "2s 2s 2s",
    "random", "1 2 3", "0 1",
]


def _random_strings(count, seed):
    """``count`` seeded strings over digits, signs, unicode digits, separators and letters."""
    rng = random.Random(seed)
    alphabet = "0123456789+-.,/ eE²٣१xn_a🙂\\%"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(count)]


STRINGS = HOSTILE + _random_strings(300 - len(HOSTILE), seed=44)


@pytest.fixture(scope="module")
def client(lab_results):
    return create_app(lab_results).test_client()


@pytest.mark.parametrize("route, base, fuzzed", [r[1:] for r in ROUTES], ids=[r[0] for r in ROUTES])
def test_no_query_string_answers_500(client, route, base, fuzzed):
    assert len(STRINGS) >= 300
    failures = []
    for name in fuzzed:
        for text in STRINGS:
            response = client.get(route, query_string=dict(base, **{name: text}))
            if response.status_code != 200:
                failures.append((name, text[:40], response.status_code))
    assert not failures, failures[:10]


@pytest.mark.parametrize("route, expected", [
    ("/shutbox?file=shutbox_4/standard_5_max-shut.json&tile=%C2%B2&total=8",
     "tile '²' is not a tile of this game; allowed: 1..5"),
    ("/shutbox?file=shutbox_4/standard_5_max-shut.json&tile=%D9%A3&total=3",
     "tile '٣' is not a tile of this game; allowed: 1..5"),
    ("/shutbox?file=shutbox_4/standard_5_max-shut.json&tile=1&total=%C2%B2",
     "roll total '²' is impossible here"),
    ("/shutbox?file=shutbox_4/flip_one.json&tile=1&x=%C2%B2&y=1",
     "roll '²' '1' is impossible; each die shows 1..3"),
    ("/ludo?file=ludo_small/race_p2.json&own=0,%C2%B2&opponent=0,0&roll=1", "mover's pieces '0,²' is not 2 cell number(s)"),
    ("/ludo?file=ludo_small/race_p2.json&own=0,0&opponent=0,0&roll=%D9%A3", "roll '٣' is not a die face"),
    ("/2048/play?run=2048_2x3&points=nan", "points 'nan' is not a decimal number from 0 to 1e+12"),
    ("/2048/play?run=2048_2x3&points=-1e300",
     "points '-1e300' is not a decimal number from 0 to 1e+12"),
    ("/2048/play?run=2048_2x3&seed=%D9%A3", "seed '٣' is not a whole number from 0 to"),
    ("/truco?score0=%C2%B2&score1=11&dealer=1&vira=2d",
     "player 0's score '²' is not a whole number"),
    ("/truco/play?score0=11&score1=11&dealer=%D9%A1&vira=2d",
     "dealer '١' is not a whole number from 0 to 1"),
])
def test_unicode_digits_and_non_finite_numbers_are_named(client, route, expected):
    response = client.get(route)
    assert response.status_code == 200
    assert expected in html.unescape(response.get_data(as_text=True))


def test_huge_input_is_cut_in_the_message(client):
    text = html.unescape(client.get("/2048/play", query_string={"run": "2048_2x3",
                                                                "seed": "9" * 5000}).get_data(as_text=True))
    assert "seed '" + "9" * 40 + "…' is not a whole number" in text
    assert "9" * 41 not in text
