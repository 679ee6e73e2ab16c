"""A damaged result never takes a lab page down: each page lists it as damaged, with the file and
the command that rebuilds it, and keeps serving every other result (Flask's test client, no
browser)."""

import html
import shutil

import pytest

from strongsolve.lab.app import create_app

# one damaged file of each kind the lab lists, relative to the results folder
TRUCO = "truco/row11/group_11/s11-11_v8.zarr/zarr.json"  # vira 2d is of class 8
LUDO = "ludo_small/race_p2_policy.npz"
SHUTBOX = "shutbox_4/flip_one.json"
G2048 = "2048_2x3/solution.json"

TRUCO_ARGS = "score0=11&score1=11&dealer=1&vira=2d"
ROUTES = (
    "/",
    "/2048", "/2048?run=2048_2x3", "/2048?run=2048_2x3&board=2 . . / . . 2",
    "/2048/play", "/2048/play?run=2048_2x3&seed=1", "/2048/play?run=2048_2x3&seed=1&move=left",
    "/shutbox", "/shutbox?file=shutbox_4/flip_one.json&tile=1&x=1&y=2",
    "/shutbox?file=shutbox_4/standard_5_max-shut.json&tile=1&tile=2&total=3",
    "/ludo", "/ludo?file=ludo_small/race_p2.json&own=0,0&opponent=0,0&roll=1",
    "/truco", f"/truco?{TRUCO_ARGS}", f"/truco?{TRUCO_ARGS}&hand=2s 7h 3c",
    f"/truco?{TRUCO_ARGS}&hand0=2s 7h 3c&hand1=2h 7s 3d",
    f"/truco/play?{TRUCO_ARGS}&you=0&seed=5&hand0=2s 7h 3c&hand1=2h 7s 3d",
)
# the page of each kind that must name its damaged file
PAGE = {TRUCO: "/truco", LUDO: "/ludo?file=ludo_small/race_p2.json", SHUTBOX: "/shutbox?file=shutbox_4/flip_one.json",
        G2048: "/2048"}
# what the home page shows of each kind while it is readable
LISTED = {TRUCO: "subgames solved", LUDO: 'href="/ludo?file=ludo_small/race_p2.json"',
          SHUTBOX: 'href="/shutbox?file=shutbox_4/flip_one.json"',
          G2048: 'href="/2048?run=2048_2x3"'}


def damage(path):
    """Garbage in place of JSON; a truncated archive in place of an .npz."""
    if path.suffix == ".npz":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_text("{not json")


@pytest.fixture
def copy_of_results(lab_results, tmp_path):
    """A private copy of the lab's results folder, free to damage."""
    return shutil.copytree(lab_results, tmp_path / "results")


def get(client, route):
    """(status, page text unescaped) of a route."""
    response = client.get(route)
    return response.status_code, html.unescape(response.get_data(as_text=True))


@pytest.mark.parametrize("kind", [TRUCO, LUDO, SHUTBOX, G2048], ids=["truco", "ludo", "shutbox", "2048"])
def test_one_damaged_file_is_named_and_the_rest_stays_served(copy_of_results, kind):
    damage(copy_of_results / kind)
    client = create_app(copy_of_results).test_client()
    for route in ROUTES:
        status, _ = get(client, route)
        assert status != 500, route
    status, home = get(client, "/")
    assert status == 200
    assert f"damaged: {copy_of_results / kind}" in home or (
        kind == G2048 and str(copy_of_results / kind) in home), home
    for other, shown in LISTED.items():
        if other != kind:
            assert shown in home, (other, home)
    status, page = get(client, PAGE[kind])
    assert status == 200 and str(copy_of_results / kind) in page, page
    # the message carries the command that rebuilds it
    assert "`" in page.split(str(copy_of_results / kind), 1)[1], page


def test_every_kind_damaged_at_once_no_route_answers_500(copy_of_results):
    for kind in PAGE:
        damage(copy_of_results / kind)
    client = create_app(copy_of_results).test_client()
    for route in ROUTES:
        status, _ = get(client, route)
        assert status != 500, route
    _, home = get(client, "/")
    for kind in PAGE:
        assert str(copy_of_results / kind) in home, kind
