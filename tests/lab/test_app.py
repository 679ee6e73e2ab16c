"""The lab in a real headless browser: every page, its controls, and its numbers against
the CLI's answer to the same query, on small results made by the CLI in a session fixture.

The browser is Debian's chromium driven by selenium through chromium-driver; where either is missing
the browser tests skip and say why. Set STRONGSOLVE_SCREENSHOTS=/tmp/lab-shots to save a screenshot of
each page there (docs/lab/ holds the default run's, made by docs/screenshots.py).
"""

import contextlib
import html
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from strongsolve import cli
from strongsolve.lab.app import create_app

from support.lab import cli_json, run_cli


def snapshot(root):
    """Every path under ``root`` with its size and modification time."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in Path(root).rglob("*")}


@pytest.fixture(scope="session")
def lab_url(lab_results):
    """Address of the lab over ``lab_results``, served from a thread for the session."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, create_app(lab_results), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _find_browser():
    """(chromium binary, chromedriver) or a reason why there is none."""
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        return None, ("no headless browser: install Debian's chromium and chromium-driver "
                      "(apt-get install -y chromium chromium-driver)")
    return (browser, driver), None


@pytest.fixture(scope="session")
def browser():
    """A headless chromium driven by selenium, or a skip naming what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    found, reason = _find_browser()
    if found is None:
        pytest.skip(reason)
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1100,1800"):
        options.add_argument(arg)
    from selenium.webdriver.chrome.service import Service
    driver = webdriver.Chrome(service=Service(found[1]), options=options)
    yield driver
    driver.quit()


def screenshot(driver, name):
    """Save the page as <STRONGSOLVE_SCREENSHOTS>/<name>.png when that variable is set."""
    folder = os.environ.get("STRONGSOLVE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        size = driver.get_window_size()
        driver.set_window_size(size["width"], 300)  # shrink first: the page's own height shows
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(size["width"], height + 220)  # the whole page, no blank below it
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))
        driver.set_window_size(size["width"], size["height"])


def by_id(driver, element_id):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.ID, element_id)


def errors_shown(driver):
    from selenium.webdriver.common.by import By
    return [e.text for e in driver.find_elements(By.CLASS_NAME, "error")]


def submit(driver, element_id):
    """Click a control that loads a new page and wait until the new page has replaced the old."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    old = driver.find_element(By.TAG_NAME, "html")
    by_id(driver, element_id).click()

    def replaced(driver):
        # the old page's element is gone: chromedriver says so by a stale-element error or, while
        # the old document is being torn down, by "Node with given id does not belong to the
        # document" (seen in CI); both mean the navigation happened
        try:
            old.is_enabled()
            return False
        except WebDriverException:
            return driver.execute_script("return document.readyState") == "complete"

    # generous: a first Ludo page compiles the race kernel
    WebDriverWait(driver, 90).until(replaced)


def fill(driver, element_id, text):
    field = by_id(driver, element_id)
    field.clear()
    field.send_keys(text)


def select(driver, element_id, text):
    from selenium.webdriver.support.ui import Select
    Select(by_id(driver, element_id)).select_by_visible_text(text)


def moves_shown(driver):
    """{move: (reward, afterstate value, total)} and the set of moves marked best, as shown."""
    from selenium.webdriver.common.by import By
    shown, best = {}, set()
    for row in by_id(driver, "moves").find_elements(By.CSS_SELECTOR, "tr[id^=move-]"):
        name = row.get_attribute("id")[5:]
        shown[name] = tuple(row.find_element(By.CLASS_NAME, c).text
                            for c in ("reward", "afterstate", "total"))
        if "best" in (row.get_attribute("class") or ""):
            best.add(name)
    return shown, best


def decimals_that_distinguish(columns):
    """Fewest decimals (1 to 10) at which values of a column more than 1e-9 apart print apart:
    the rounding the 2048 pages promise, written here independently of the lab."""
    for d in range(1, 11):
        if all(f"{a:.{d}f}" != f"{b:.{d}f}" for col in columns for a in col for b in col
               if abs(a - b) > 1e-9):
            return d
    return 10


def cli_moves(run_dir, board):
    """(query document, {move: (reward, afterstate value, total)} as the page should show them,
    set of tied best moves) from `strongsolve 2048 query --json`."""
    q = cli_json("2048", "query", run_dir, board, "--json")
    d = decimals_that_distinguish([[m["afterstate_value"] for m in q["moves"]],
                                   [m["total"] for m in q["moves"]]])
    top = max((m["total"] for m in q["moves"]), default=None)
    best = {m["move"] for m in q["moves"] if abs(m["total"] - top) <= 1e-9}
    q["decimals"] = d
    return q, {m["move"]: (f"{m['reward']:g}", f"{m['afterstate_value']:.{d}f}", f"{m['total']:.{d}f}")
               for m in q["moves"]}, best


# --- without a browser ------------------------------------------------------------------------


def test_without_a_browser_the_reason_names_the_packages(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    found, reason = _find_browser()
    assert found is None and "apt-get install -y chromium chromium-driver" in reason


def test_lab_command_prints_its_address_and_serves(lab_results):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "strongsolve", "lab", str(lab_results), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("strongsolve lab: serving") and "http://127.0.0.1:" in line, \
            line + proc.stderr.read()
        url = line.split(" at ")[1].split()[0]
        home = urllib.request.urlopen(url, timeout=30).read().decode()
        assert "2048_2x3</a> solved" in home and "27 of 1296 subgames solved" in home
        port = url.rstrip("/").rsplit(":", 1)[1]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):  # the port is taken
            assert cli.main(["lab", str(lab_results), "--port", port]) == 2
        assert f"cannot serve at 127.0.0.1:{port}" in err.getvalue() and "--port 0" in err.getvalue()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_missing_results_folder_names_the_commands(tmp_path):
    client = create_app(tmp_path / "nothing").test_client()
    home = html.unescape(client.get("/").get_data(as_text=True))
    assert "snakemake --cores all --config results=" in home and "games='[g2048]'" in home
    assert "0 of 1296 subgames solved" in home and "solve_row11: true" in home
    for page, game in (("/2048", "g2048"), ("/shutbox", "shutbox"), ("/ludo", "ludo")):
        text = html.unescape(client.get(page).get_data(as_text=True))
        assert f"games='[{game}]'" in text and "Traceback" not in text


def test_half_solved_2048_run_shows_the_command(tmp_path):
    run = tmp_path / "results" / "2048_2x3"
    assert run_cli("2048", "solve", run, "--rows", 2, "--cols", 3, "--max-age", 12)[0] == 0
    home = html.unescape(create_app(tmp_path / "results").test_client().get("/").get_data(as_text=True))
    assert "2048_2x3: not solved to the last age" in home
    assert "strongsolve 2048 solve" in home and "--rows 2 --cols 3" in home


def test_bad_input_is_named_and_nothing_is_written(lab_results):
    before = snapshot(lab_results)
    client = create_app(lab_results).test_client()
    cases = [
        ("/2048?run=2048_2x3&board=2 3 . / . . .", "tile '3' at row 1, column 2 is not allowed"),
        ("/2048?run=2048_2x3&board=2 2", "this run is 2x3"),
        ("/2048?run=2048_2x3&board=64 64 64 / 64 64 64", "is not in the solved layers"),
        ("/2048?run=2048_9x9", "no 2048 run named '2048_9x9'"),
        ("/2048?run=2048_2x3&board=. . . / . . .", "is empty: every position holds at least two"),
        ("/2048?run=2048_2x3&board=", "no board given"),
        ("/truco?score0=12&score1=3&dealer=0&vira=7c", "12-3: each side has 0..11 points"),
        ("/truco?score0=11&score1=11&dealer=1&vira=Xz", "vira: "),
        ("/truco?score0=11&score1=11&dealer=1&vira=2d&hand=Ac 2d 4s", "holds the vira"),
        ("/truco?score0=11&score1=11&dealer=1&vira=2d&hand=Zz 3h 4s", "Zz"),
        ("/truco?score0=11&score1=0&dealer=1&vira=2d&hand=Ac 3h 4s", "no solved subgame"),
        ("/truco?score0=5&score1=5&dealer=1&vira=2d&hand=Ac 3h 4s", "no player at 11"),
        ("/shutbox?file=shutbox_4/flip_one.json&tile=9&x=1&y=1", "tile '9' is not a tile"),
        ("/shutbox?file=shutbox_4/flip_one.json&tile=1&x=4&y=1", "roll '4' '1' is impossible"),
        ("/shutbox?file=shutbox_4/standard_5_max-shut.json&tile=1&tile=2&total=9",
         "roll total '9' is impossible"),
        ("/ludo?file=ludo_small/race_p2.json&own=0,3&opponent=0,0&roll=1", "cell 3 is not a cell a piece can rest on"),
        ("/ludo?file=ludo_small/race_p2.json&own=0,1&opponent=0,0&roll=5", "roll 5 is not a face of the die"),
        ("/ludo?file=ludo_small/race_p2.json&own=0&opponent=0,0&roll=1", "is not 2 cell number(s)"),
        ("/ludo?file=ludo_small/race_p2.json&own=4,4&opponent=4,10&roll=1",
         "position 4,4/4,10 is impossible: cell 4 holds pieces of both players"),
    ]
    for url, message in cases:
        response = client.get(url)
        text = html.unescape(response.get_data(as_text=True))
        assert response.status_code == 200 and 'class="error"' in text and message in text, (url, text)
    for url in ("/", "/2048?run=2048_2x3&board=2 . . / . . 4",
                "/2048/play?run=2048_2x3&seed=3&board=2 . . / . . 4&move=up",
                "/shutbox?tile=1&x=1&y=2", "/ludo?file=ludo_small/race_p2.json&own=0,4&opponent=5,0&roll=2",
                "/truco?score0=11&score1=11&dealer=1&vira=2d&hand=2s 7h 3c"):
        text = client.get(url).get_data(as_text=True)
        assert 'class="error"' not in text, (url, text)
    assert snapshot(lab_results) == before


# --- in the browser ---------------------------------------------------------------------------


def test_2048_board_by_clicks_equals_the_cli(browser, lab_url, lab_results):
    from selenium.webdriver.common.by import By

    run = lab_results / "2048_2x3"
    browser.get(f"{lab_url}/2048")
    by_id(browser, "cell-0-0").click()                 # 2
    for _ in range(2):
        by_id(browser, "cell-1-2").click()             # 2, then 4
    assert by_id(browser, "board-text").get_attribute("value") == "2 . . / . . 4"
    submit(browser, "query")
    shown, best = moves_shown(browser)
    q, want, want_best = cli_moves(run, "2 . . / . . 4")
    # up and down tie here (each 477.35..., on the 2x3 board)
    assert shown == want and best == want_best and q["best"] in best
    assert by_id(browser, "value").text == f"{q['value']:.{q['decimals']}f}"
    assert by_id(browser, "legend").text.startswith("reward: merge points")
    assert bool(browser.find_elements(By.ID, "tie")) == (len(want_best) > 1)
    screenshot(browser, "2048")


def test_2048_moves_that_tie_are_named_as_ties(browser, lab_url, lab_results):
    # up and down of "2 . . / . . 4" have equal totals on the 2x3 board
    browser.get(f"{lab_url}/2048?run=2048_2x3&board=2 . . / . . 4")
    shown, best = moves_shown(browser)
    q, want, want_best = cli_moves(lab_results / "2048_2x3", "2 . . / . . 4")
    assert want_best == {"up", "down"} and shown == want and best == want_best
    top = want["up"][2]
    assert by_id(browser, "tie").text == f"up and down tie at {top}: each is optimal"
    assert by_id(browser, "move-up").text.startswith("up ← tie")


def test_2048_play_with_hints_tracks_the_optimal_score(browser, lab_url, lab_results):
    from selenium.webdriver.common.by import By

    run = lab_results / "2048_2x3"
    expected = json.loads((run / "solution.json").read_text())["expected_score"]
    browser.get(f"{lab_url}/2048/play?run=2048_2x3&seed=7")
    points = 0.0
    for _ in range(3):
        board = " / ".join(" ".join(td.text or "." for td in tr.find_elements(By.TAG_NAME, "td"))
                           for tr in by_id(browser, "board").find_elements(By.TAG_NAME, "tr"))
        q, want, want_best = cli_moves(run, board)
        shown, best = moves_shown(browser)
        assert shown == want and best == want_best
        assert by_id(browser, "projected").text == f"{points + q['value']:.6f}"
        assert by_id(browser, "optimal").text == f"{expected:.6f}"
        move = q["best"]
        points += next(m["reward"] for m in q["moves"] if m["move"] == move)
        submit(browser, f"play-{move}")
    assert float(by_id(browser, "points").text) == points
    submit(browser, "hints-toggle")
    assert not browser.find_elements(By.ID, "moves")


def test_2048_arrow_keys_play_the_moves(browser, lab_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    # "2 . . / . . 4": left is legal; after it the next board comes from the seed and the move count
    start = f"{lab_url}/2048/play?run=2048_2x3&seed=5&step=0&points=0&hints=1&board=2 . . / . . 4"
    browser.get(start + "&move=left")
    want = by_id(browser, "board").text
    browser.get(start)
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
    WebDriverWait(browser, 30).until(lambda d: "move 1." in d.find_element(By.TAG_NAME, "p").text)
    assert by_id(browser, "board").text == want
    # up changes nothing on "2 4 2 / . . .": its key is ignored, and the next key (down) plays
    start = f"{lab_url}/2048/play?run=2048_2x3&seed=5&step=0&points=0&hints=1&board=2 4 2 / . . ."
    browser.get(start + "&move=down")
    want = by_id(browser, "board").text
    browser.get(start)
    assert not browser.find_elements(By.ID, "play-up")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_UP)
    body.send_keys(Keys.ARROW_DOWN)
    WebDriverWait(browser, 30).until(lambda d: "move 1." in d.find_element(By.TAG_NAME, "p").text)
    assert by_id(browser, "board").text == want


def test_shutbox_choices_equal_the_cli(browser, lab_url, lab_results):
    from selenium.webdriver.common.by import By

    doc = cli_json("shutbox", "--cards", 4, "--faces", 3, "--policy", "--json")
    values = doc["policy"]["value_per_mask"]
    browser.get(f"{lab_url}/shutbox?file=shutbox_4/flip_one.json")
    for card in (1, 3):
        by_id(browser, f"tile-{card}").click()
    fill(browser, "x", "1")
    fill(browser, "y", "2")
    submit(browser, "go")
    mask = 0b0101
    # the page shows what `shutbox advise` prints: the expected rolls after this one
    want = {c: f"{values[mask ^ (1 << (c - 1))]:.10f}" for c in (1, 2, 3)}
    rows = browser.find_elements(By.CSS_SELECTOR, "#choices tr[id^=choice-]")
    assert {int(r.get_attribute("id")[7:]): r.find_element(By.CLASS_NAME, "value").text
            for r in rows} == want
    best = [int(r.get_attribute("id")[7:]) for r in rows if "best" in (r.get_attribute("class") or "")]
    assert best == [min(want, key=lambda c: float(want[c]))]
    screenshot(browser, "shutbox")

    std = cli_json("shutbox", "--rule", "standard", "--cards", 5, "--faces", 3, "--policy", "--json")
    browser.get(f"{lab_url}/shutbox?file=shutbox_4/standard_5_max-shut.json")
    fill(browser, "total", "5")
    submit(browser, "go")
    full = 0b11111
    subsets = {0b10000: None, 0b01001: None, 0b00110: None}  # {5}, {1, 4}, {2, 3}
    want = {s: f"{std['policy']['value_per_mask'][full ^ s]:.10f}" for s in subsets}
    rows = browser.find_elements(By.CSS_SELECTOR, "#choices tr[id^=choice-]")
    assert {int(r.get_attribute("id")[7:]): r.find_element(By.CLASS_NAME, "value").text
            for r in rows} == want
    best = [int(r.get_attribute("id")[7:]) for r in rows if "best" in (r.get_attribute("class") or "")]
    assert best == [std["policy"]["shut"][str(full)]["5"]]


def test_ludo_pieces_equal_the_cli(browser, lab_url, lab_results):
    from selenium.webdriver.common.by import By

    board = lab_results.parent / "small.yaml"
    doc = cli_json("ludo", "race", board, "--pieces", 2, "--position", "0,4/5,0", "--json")
    browser.get(f"{lab_url}/ludo?file=ludo_small/race_p2.json")
    fill(browser, "own", "0,4")
    fill(browser, "opponent", "5,0")
    for face in (1, 2):
        fill(browser, "roll", str(face))
        submit(browser, "go")
        want = next(m for m in doc["positions_queried"][0]["moves"] if m["face"] == face)
        rows = browser.find_elements(By.CSS_SELECTOR, "#choices tr[id^=piece-]")
        assert {r.get_attribute("id")[6:] for r in rows} == {"0", "4"}
        # no jump starts at 1, 2, 5 or 6 on this board: each piece lands face cells ahead
        assert {r.get_attribute("id")[6:]: r.find_element(By.CLASS_NAME, "lands").text
                for r in rows} == {"0": str(face), "4": str(4 + face)}
        best = [r for r in rows if "best" in (r.get_attribute("class") or "")]
        assert len(best) == 1 and best[0].get_attribute("id") == f"piece-{want['move_from']}"
        assert best[0].find_element(By.CLASS_NAME, "value").text == f"{want['win_probability']:.10f}"
        assert max(float(r.find_element(By.CLASS_NAME, "value").text) for r in rows) \
            == pytest.approx(want["win_probability"], abs=1e-10)
    screenshot(browser, "ludo")


def test_ludo_page_draws_the_board_its_pieces_and_each_moves_landing_cell(browser, lab_url,
                                                                           lab_results):
    """The small board of support/lab.py (cells 0..12, shortcut 3->7, trap 9->2, safe cell 5): the
    drawing holds its 13 cells, the jump and the trap, the safe cell, the four pieces of 0,1/5,0, and
    the landing cells of roll 2 that `strongsolve ludo advise` prints (1 + 2 = 3 flies to 7)."""
    from selenium.webdriver.common.by import By

    browser.get(f"{lab_url}/ludo?file=ludo_small/race_p2.json")
    fill(browser, "own", "0,1")
    fill(browser, "opponent", "5,0")
    fill(browser, "roll", "2")
    submit(browser, "go")
    assert errors_shown(browser) == []
    svg = by_id(browser, "board")
    assert svg.tag_name == "svg" and svg.is_displayed()

    def marks(css, attribute):
        return sorted(e.get_attribute(attribute) for e in svg.find_elements(By.CSS_SELECTOR, css))

    assert marks(".cell", "id") == sorted(f"cell-{c}" for c in range(13))
    assert marks(".jump.shortcut", "data-from") == ["3"] and marks(".jump.trap", "data-from") == ["9"]
    assert marks(".cell.safe", "id") == ["cell-5"]
    assert marks(".piece.own", "data-cell") == ["0", "1"]
    assert marks(".piece.opponent", "data-cell") == ["0", "5"]
    doc = cli_json("ludo", "advise", lab_results / "ludo_small" / "race_p2_policy.npz",
                   "--position", "0,1/5,0", "--roll", 2, "--json")
    moves = [c for c in doc["choices"] if c["move_from"] is not None]
    assert sorted(c["lands_on"] for c in moves) == [2, 7]
    assert marks(".landing", "data-cell") == sorted(str(c["lands_on"]) for c in moves)
    best = next(c for c in moves if c["best"])
    assert marks(".landing.best", "data-cell") == [str(best["lands_on"])]
    # the drawing's landing cells are the table's
    assert sorted(e.text for e in browser.find_elements(By.CSS_SELECTOR, "#choices td.lands")) == \
        marks(".landing", "data-cell")


def test_shutbox_switching_flip_one_to_standard_rebuilds_the_form(browser, lab_url, lab_results):
    from selenium.webdriver.common.by import By

    browser.get(f"{lab_url}/shutbox?file=shutbox_4/flip_one.json")
    by_id(browser, "tile-1").click()
    fill(browser, "x", "1")
    old = browser.find_element(By.TAG_NAME, "html")
    select(browser, "file", "shutbox_4/standard_5_max-shut.json")
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 30).until(lambda d: not _alive(old) and d.find_elements(By.ID, "total"))
    # the standard game's own form: five tiles, all open (ticked), a roll total, no dice fields
    assert [by_id(browser, f"tile-{t}").is_selected() for t in range(1, 6)] == [True] * 5
    assert not browser.find_elements(By.ID, "x")
    fill(browser, "total", "5")
    submit(browser, "go")
    assert errors_shown(browser) == []
    std = cli_json("shutbox", "--rule", "standard", "--cards", 5, "--faces", 3, "--policy", "--json")
    full = 0b11111
    rows = browser.find_elements(By.CSS_SELECTOR, "#choices tr[id^=choice-]")
    assert {int(r.get_attribute("id")[7:]): r.find_element(By.CLASS_NAME, "value").text for r in rows} \
        == {s: f"{std['policy']['value_per_mask'][full ^ s]:.10f}" for s in (0b10000, 0b01001, 0b00110)}


def test_ludo_switching_one_piece_to_two_pieces_rebuilds_the_form(browser, lab_url, lab_results):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{lab_url}/ludo?file=ludo_small/race_p1.json")
    assert by_id(browser, "own").get_attribute("value") == "0"
    fill(browser, "own", "4")
    old = browser.find_element(By.TAG_NAME, "html")
    select(browser, "file", "ludo_small/race_p2.json")
    WebDriverWait(browser, 90).until(lambda d: not _alive(old) and d.find_elements(By.ID, "own"))
    assert by_id(browser, "own").get_attribute("value") == "0,0"
    assert by_id(browser, "opponent").get_attribute("value") == "0,0"
    fill(browser, "own", "0,4")
    fill(browser, "opponent", "5,0")
    fill(browser, "roll", "1")
    submit(browser, "go")
    assert errors_shown(browser) == []
    doc = cli_json("ludo", "race", lab_results.parent / "small.yaml", "--pieces", 2,
                   "--position", "0,4/5,0", "--json")
    want = next(m for m in doc["positions_queried"][0]["moves"] if m["face"] == 1)
    best = browser.find_elements(By.CSS_SELECTOR, "#choices tr.best")
    assert len(best) == 1 and best[0].get_attribute("id") == f"piece-{want['move_from']}"


def _alive(element):
    """True while ``element`` still belongs to the page shown (False once a new page replaced it)."""
    from selenium.common.exceptions import WebDriverException
    try:
        element.is_enabled()
        return True
    except WebDriverException:
        return False


def _mix(browser):
    from selenium.webdriver.common.by import By
    rows = browser.find_elements(By.CSS_SELECTOR, "#mix tr[id^=action-]")
    return [(r.find_element(By.CLASS_NAME, "label").text, r.find_element(By.CLASS_NAME, "prob").text)
            for r in rows]


def test_truco_atlas_vira_2_and_3_show_one_mix_with_their_own_cards(browser, lab_url, lab_results):
    from selenium.webdriver.common.by import By

    mixes = []
    for vira, hand in (("2d", "2s 7h 3c"), ("3d", "3s Qh 4c")):  # one abstract hand, class 8
        browser.get(f"{lab_url}/truco")
        fill(browser, "score0", "11")
        fill(browser, "score1", "11")
        select(browser, "dealer", "1")
        select(browser, "vira", vira)
        fill(browser, "hand", hand)
        submit(browser, "go")
        assert not errors_shown(browser)
        assert by_id(browser, "vira-class").text == "8"
        out = cli_json("truco", "policy", "--score", "11-11", "--dealer", 1, "--vira", vira,
                       "--hand", hand, "--results", lab_results, "--json")
        want = [(f"lead {'/'.join(a['cards'])}", f"{a['probability']:.6f}") for a in out["actions"]]
        assert _mix(browser) == want
        assert by_id(browser, "value0").text == f"{out['value_player0']:.6f}"
        mixes.append(_mix(browser))
    assert [p for _, p in mixes[0]] == [p for _, p in mixes[1]]
    assert [c for c, _ in mixes[0]] == ["lead 7h", "lead 2s", "lead 3c"]
    assert [c for c, _ in mixes[1]] != [c for c, _ in mixes[0]]
    grid = cli_json("truco", "grid", "--results", lab_results, "--json")
    solved = browser.find_elements(By.CSS_SELECTOR, "#grid span.solved")
    assert sorted(s.get_attribute("id") for s in solved) == sorted(
        f"sg-{r['mano']}-{r['pe']}-{r['vira_class']}" for r in grid["subgames"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#grid span")) == 1296
    class8 = [r for r in grid["subgames"] if r["vira_class"] == 8]
    assert class8  # the heat map of the chosen class shows its solved values
    for r in class8:
        assert by_id(browser, f"v-{r['mano']}-{r['pe']}").text == f"{r['value']:.4f}"
    assert by_id(browser, "v-11-11").text == f"{out['value_player0']:.4f}"  # dealer 1: mano is 0
    assert by_id(browser, "v-0-0").text == ""
    screenshot(browser, "truco")


def test_truco_dealer_flips_the_role_ordered_score(browser, lab_url):
    for dealer, role in (("0", "8-11"), ("1", "11-8")):
        browser.get(f"{lab_url}/truco")
        fill(browser, "score0", "11")
        fill(browser, "score1", "8")
        select(browser, "dealer", dealer)
        submit(browser, "go")
        assert by_id(browser, "role-score").text == role


def test_bad_input_in_the_browser(browser, lab_url):
    browser.get(f"{lab_url}/truco")
    fill(browser, "score0", "12")
    submit(browser, "go")
    assert any("12-11" in e and "0..11" in e for e in errors_shown(browser))
    browser.get(f"{lab_url}/2048")
    fill(browser, "board-text", "2 3 . / . . .")
    submit(browser, "query")
    assert any("tile '3'" in e for e in errors_shown(browser))
    browser.get(lab_url)
    screenshot(browser, "home")


def test_truco_line_of_play_by_clicks_equals_the_cli(browser, lab_url, lab_results):
    """Click through a whole 11-11 hand on the tiny deck of vira class 8 (2s 2h 2c 7d 7s 3d 3c):
    every decision's mix equals `strongsolve truco policy --line ... --json` for the player to act."""
    from selenium.webdriver.common.by import By

    hands = {0: "2s 7h 3c", 1: "2h 7s 3d"}
    browser.get(f"{lab_url}/truco")
    fill(browser, "score0", "11")
    fill(browser, "score1", "11")
    select(browser, "dealer", "1")
    select(browser, "vira", "2d")
    fill(browser, "hand0", hands[0])
    fill(browser, "hand1", hands[1])
    submit(browser, "line-go")
    line = ["7h", "2h", "7s", "3c", "2s", "3d"]  # player 1 takes trick 1 with 2h and leads trick 2
    players = [0, 1, 1, 0, 0, 1]
    for k, card in enumerate(line):
        assert not errors_shown(browser)
        out = cli_json("truco", "policy", "--score", "11-11", "--dealer", 1, "--vira", "2d",
                       "--hand", hands[players[k]], "--line", " ".join(line[:k]),
                       "--results", lab_results, "--json")
        assert out["player"] == players[k]
        rows = by_id(browser, f"mix-{k}").find_elements(By.CSS_SELECTOR, "tr[id^=step-]")
        shown = [(r.find_element(By.CLASS_NAME, "label").text,
                  r.find_element(By.CLASS_NAME, "prob").text) for r in rows]
        assert shown == [(f"{a['action']} {'/'.join(a['cards'])}", f"{a['probability']:.6f}")
                         for a in out["actions"]]
        assert by_id(browser, "line-value0").text == f"{out['value_player0']:.6f}"
        submit(browser, f"do-{card}")
        chosen = by_id(browser, f"mix-{k}").find_elements(By.CSS_SELECTOR, "tr.chosen")
        assert [r.find_element(By.CLASS_NAME, "label").text for r in chosen] == \
            [f"play {'/'.join(a['cards'])}" for a in out["actions"] if card in a["cards"]]
    # player 1 takes tricks 1 and 3; a hand at 11-11 is worth 1 point
    assert by_id(browser, "line-end").text == ("the hand is over: its last trick is played; "
                                                "player 1 wins the hand and scores 1 point(s).")
    assert not browser.find_elements(By.ID, "choices")
    screenshot(browser, "truco_line")


def test_truco_play_is_offered_only_where_solved_and_a_missing_subgame_names_one_command(
        lab_results):
    client = create_app(lab_results).test_client()
    solved = client.get("/truco?score0=11&score1=11&dealer=1&vira=2d").get_data(as_text=True)
    unsolved = client.get("/truco?score0=5&score1=5&dealer=1&vira=2d").get_data(as_text=True)
    assert 'id="play-link"' in solved and "is not solved" in unsolved and 'id="play-link"' not in unsolved
    text = html.unescape(client.get("/truco?score0=11&score1=0&dealer=1&vira=2d&hand=Ac 3h 4s")
                         .get_data(as_text=True))
    error = text.split('<div class="error">')[1].split("</div>")[0]
    assert "no solved subgame" in error and error.count("snakemake --cores all") == 1, error


def test_truco_line_ended_by_a_fold_names_the_winner_and_points(lab_results):
    client = create_app(lab_results).test_client()
    # 11-10 with player 1 dealing: player 0 is mano at 11 and folds the hand of eleven
    text = html.unescape(client.get("/truco?score0=11&score1=10&dealer=1&vira=2d&hand0=2s 7h 3c"
                                    "&hand1=2h 7s 3d&line=fold").get_data(as_text=True))
    assert ("player 0 folds: the hand is over; player 1 wins the hand and scores 1 point(s)."
            in text), text


def test_truco_random_deal_is_seeded_and_legal(lab_results):
    from strongsolve.games.truco import rules as R
    from strongsolve.lab.truco_line import check_deal, random_deal

    for seed in range(20):
        deal = random_deal("7c", seed)
        assert deal == random_deal("7c", seed)
        cards = [c for h in check_deal(*deal, "7c") for c in h]  # raises on a vira or a repeat
        assert len(set(cards)) == 6 and R.parse_card("7c") not in cards
    client = create_app(lab_results).test_client()
    text = html.unescape(client.get("/truco?score0=11&score1=11&dealer=1&vira=7c&deal=random&seed=3")
                         .get_data(as_text=True))
    h0, h1 = random_deal("7c", 3)
    assert f"player 0 holds {h0}, player 1 holds {h1}" in text
    for url, message in (("hand0=2s 7h 3c&hand1=2s 7s 3d", "both hands hold 2s"),
                         ("hand0=2s 7h 2d&hand1=2h 7s 3d", "player 0's hand '2s 7h 2d' holds the vira"),
                         ("hand0=2s 7h 3c&hand1=2h 7s 3d&line=7h 2c", "player 1 play 2c, which is not"),
                         ("hand0=2s 7h 3c&hand1=2h 7s 3d&line=7h truco", "may not raise")):
        text = html.unescape(client.get(f"/truco?score0=11&score1=11&dealer=1&vira=2d&{url}")
                             .get_data(as_text=True))
        assert 'class="error"' in text and message in text, (url, text)


def _likely_rows(text, table_id):
    """{row id: True when marked most likely} of the table ``table_id`` of a page's HTML."""
    import re

    table = text.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    rows = re.finditer(r'<tr id="([^"]+)"(?: class="([^"]*)")?>', table)
    return {m[1]: "likely" in (m[2] or "").split() for m in rows}


def _cli_likely(out, prefix):
    """The same map from the CLI's mix: every action within 1e-9 of the highest probability."""
    top = max(a["probability"] for a in out["actions"])
    return {f"{prefix}{i}": top - a["probability"] <= 1e-9 for i, a in enumerate(out["actions"])}


def test_truco_tables_highlight_the_most_likely_action(lab_results):
    """The atlas mix, every table of a line of play and the decisions after a played hand mark the
    actions of highest probability in the CLI's mix (all of them when they tie)."""
    client = create_app(lab_results).test_client()
    hands = {0: "2s 7h 3c", 1: "2h 7s 3d"}
    base = "score0=11&score1=11&dealer=1&vira=2d"

    def cli(hand, line):
        return cli_json("truco", "policy", "--score", "11-11", "--dealer", 1, "--vira", "2d", "--hand",
                        hand, "--line", line, "--results", lab_results, "--json")

    text = client.get(f"/truco?{base}&hand={hands[0]}").get_data(as_text=True)
    want = _cli_likely(cli(hands[0], ""), "action-")
    assert _likely_rows(text, "mix") == want and any(want.values())
    line = ["7h", "2h", "7s", "3c", "2s", "3d"]  # player 1 takes trick 1 with 2h and leads trick 2
    players = [0, 1, 1, 0, 0, 1]
    text = client.get(f"/truco?{base}&hand0={hands[0]}&hand1={hands[1]}&line={' '.join(line)}"
                      ).get_data(as_text=True)
    for k in range(len(line)):
        want = _cli_likely(cli(hands[players[k]], " ".join(line[:k])), f"step-{k}-")
        assert _likely_rows(text, f"mix-{k}") == want, k
    text = client.get(f"/truco/play?{base}&you=0&seed=1&hand0={hands[0]}&hand1={hands[1]}"
                      f"&line={' '.join(line)}").get_data(as_text=True)
    assert 'id="hand-over"' in text
    for k in (0, 3, 4):  # player 0's decisions
        assert _likely_rows(text, f"dec-{k}") == _cli_likely(cli(hands[0], " ".join(line[:k])),
                                                             f"dec-{k}-"), k
    assert "the most likely action" in html.unescape(text)


def _naive_value(lab_results, hands, line, memo):
    """Mano's (player 0's, dealer 1) match-win probability after ``line`` (cards) of the 11-11 hand,
    vira 2d, both following the CLI's mixes: tricks resolved by the rules module, the leaves
    scored by the subgame's stored utility table."""
    from strongsolve.games.truco import rules as R
    from strongsolve.games.truco.stages.grid import stored_path
    from strongsolve.games.truco.saved import read_subgame

    key = " ".join(line)
    if key in memo:
        return memo[key]
    vr = R.card_rank(R.parse_card("2d"))
    leader, results, owner = R.MANO, [], {}
    for p in (0, 1):
        for c in R.parse_hand(hands[p]):
            owner[R.card_text(c)] = p  # player 0 is mano
    for i in range(0, len(line) - 1, 2):
        res = R.trick_result(R.parse_card(line[i]), R.parse_card(line[i + 1]), leader, vr)
        results.append(res)
        leader = R.next_leader(res, leader)
    w = R.hand_winner(results) if len(line) % 2 == 0 and results else None
    if w is not None:
        utility = read_subgame(stored_path(lab_results, 11, 11, 8), arrays=False)[0]["utility"]
        memo[key] = utility[3 if w < 0 else 1 + w]  # NOBODY, MANO_WINS, PE_WINS
        return memo[key]
    mover = leader if len(line) % 2 == 0 else 1 - owner[line[-1]]
    out = cli_json("truco", "policy", "--score", "11-11", "--dealer", 1, "--vira", "2d", "--hand",
                   hands[mover], "--line", key, "--results", lab_results, "--json")
    memo[key] = sum(a["probability"] * _naive_value(lab_results, hands, line + [a["cards"][0]], memo)
                    for a in out["actions"] if a["probability"] > 0)
    return memo[key]


def test_truco_play_a_hand_values_each_choice_like_a_brute_force(browser, lab_url, lab_results):
    """Play the 11-11 hand on the tiny deck as player 0 (mano), always the last action offered: the
    bot's cards are drawn from the CLI's mix by random.Random("<seed>:<decision>"), and after the
    hand each of the user's actions is valued as a brute force over the CLI's mixes."""
    import random

    from selenium.webdriver.common.by import By

    hands = {0: "2s 7h 3c", 1: "2h 7s 3d"}
    seed = 11
    browser.get(f"{lab_url}/truco/play?score0=11&score1=11&dealer=1&vira=2d&you=0&seed={seed}"
                f"&hand0={hands[0]}&hand1={hands[1]}")
    for _ in range(3):
        if browser.find_elements(By.ID, "hand-over"):
            break
        links = browser.find_elements(By.CSS_SELECTOR, "#your-turn a.do")
        submit(browser, links[-1].get_attribute("id"))
    assert not errors_shown(browser)
    line = by_id(browser, "play-line").text.split()
    memo = {}
    for k, card in enumerate(line):
        mover = 0 if card in hands[0].split() else 1
        out = cli_json("truco", "policy", "--score", "11-11", "--dealer", 1, "--vira", "2d", "--hand",
                       hands[mover], "--line", " ".join(line[:k]), "--results", lab_results, "--json")
        if mover == 1:  # the bot's draw
            u = random.Random(f"{seed}:{k}").random()
            acts = [a for a in out["actions"] if a["probability"] > 0]
            cum = [sum(a["probability"] for a in acts[:i + 1]) for i in range(len(acts))]
            assert card == acts[next((i for i, c in enumerate(cum) if u < c), len(acts) - 1)]["cards"][0]
            continue
        rows = by_id(browser, f"dec-{k}").find_elements(By.CSS_SELECTOR, "tr[id^=dec-]")
        want = [(f"{a['action']} {'/'.join(a['cards'])}", f"{a['probability']:.6f}",
                 f"{_naive_value(lab_results, hands, line[:k] + [a['cards'][0]], memo):.6f}")
                for a in out["actions"]]
        assert [tuple(r.find_element(By.CLASS_NAME, c).text for c in ("label", "prob", "value"))
                for r in rows] == want
    final = _naive_value(lab_results, hands, line, memo)
    assert by_id(browser, "result-value").text == f"{final:.6f}"
    screenshot(browser, "truco_play")


def test_truco_hand_of_eleven_play_or_fold_in_the_line_and_in_play(browser, lab_url, lab_results):
    """At 11-10 (player 0 at 11 and mano) the line starts with the hand-of-eleven decision, whose mix
    is the CLI's; a fold ends the line; in play, the fold is valued by the stored utility of FOLD."""
    from selenium.webdriver.common.by import By

    from strongsolve.games.truco.stages.grid import stored_path
    from strongsolve.games.truco.saved import read_subgame

    args = "score0=11&score1=10&dealer=1&vira=2d&hand0=2s 7h 3c&hand1=2h 7s 3d"
    browser.get(f"{lab_url}/truco?{args}")
    out = cli_json("truco", "policy", "--score", "11-10", "--dealer", 1, "--vira", "2d", "--hand",
                   "2s 7h 3c", "--line", "", "--results", lab_results, "--json")
    rows = by_id(browser, "mix-0").find_elements(By.CSS_SELECTOR, "tr[id^=step-]")
    assert [(r.find_element(By.CLASS_NAME, "label").text, r.find_element(By.CLASS_NAME, "prob").text)
            for r in rows] == [(a["action"], f"{a['probability']:.6f}") for a in out["actions"]]
    assert [a["action"] for a in out["actions"]] == ["play", "fold"]
    submit(browser, "do-fold")
    assert "player 0 folds" in by_id(browser, "line-end").text
    browser.get(f"{lab_url}/truco/play?{args}&you=0&seed=5")
    submit(browser, "act-fold")
    fold = read_subgame(stored_path(lab_results, 11, 10, 8), arrays=False)[0]["utility"][0]  # FOLD
    assert by_id(browser, "result-value").text == f"{fold:.6f}"
    rows = by_id(browser, "dec-0").find_elements(By.CSS_SELECTOR, "tr[id^=dec-]")
    assert rows[1].find_element(By.CLASS_NAME, "value").text == f"{fold:.6f}"
    assert [r.find_element(By.CLASS_NAME, "prob").text for r in rows] == \
        [f"{a['probability']:.6f}" for a in out["actions"]]


def test_subgames_of_the_score_grid_are_listed_as_solved(lab_results, tmp_path):
    """The grid's tier jobs store their subgames under truco/grid (not the 11 row's group folders):
    the home page and the atlas count them, each with its exploitability."""
    from strongsolve.games.truco.saved import read_subgame, write_subgame

    results = tmp_path / "results"
    row11 = sorted((lab_results / "truco" / "row11" / "group_10").glob("s*.zarr"))
    for p in row11:
        attrs, arrays = read_subgame(p)
        attrs = {k: v for k, v in attrs.items() if k not in ("arrays", "checksum")}
        write_subgame(results / "truco" / "grid" / p.name, arrays, attrs)
    client = create_app(results).test_client()
    home = html.unescape(client.get("/").get_data(as_text=True))
    assert f"{len(row11)} of 1296 subgames solved" in home
    atlas = html.unescape(client.get("/truco").get_data(as_text=True))
    first = read_subgame(results / "truco" / "grid" / row11[0].name, arrays=False)[0]
    a, b, c = *first["score"], first["vira_class"]
    assert f"{a}-{b} class {c}: value {first['value']:.6f}, exploitability " \
           f"{first['exploitability']:.1e}" in atlas


def test_truco_fold_at_eleven_eleven_is_refused_by_play_and_line(lab_results):
    """At 11-11 the page offers no fold (no raises, no hand of eleven): one typed into the URL is
    refused with a message naming the line, in play and in the line view, never accepted."""
    client = create_app(lab_results).test_client()
    deal = "dealer=1&vira=2d&hand0=2s 7h 3c&hand1=2h 7s 3d"
    for path in ("/truco/play", "/truco"):
        for line in ("fold", "7h fold"):
            reply = client.get(f"{path}?score0=11&score1=11&{deal}&you=0&seed=1&line={line}")
            text = html.unescape(reply.get_data(as_text=True))
            assert reply.status_code == 200
            error = text.split('<div class="error">')[1].split("</div>")[0]
            assert f"illegal fold at the end of line '{line}' at score 11-11" in error, error
            assert "folds" not in text and 'id="hand-over"' not in text
