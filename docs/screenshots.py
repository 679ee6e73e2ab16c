"""Retake the lab's screenshots (docs/lab/*.png) from the results of the default run.

    make run                # the default config: 2048 3x3, Shut the Box, Ludo classic60, Truco 11-11
    make screenshots        # serves the lab over results/ and rewrites docs/lab/*.png

or ``.venv/bin/python docs/screenshots.py RESULTS --out docs/lab``. The lab is served from a thread
over RESULTS (read only) and driven by Debian's headless chromium through selenium, the browser the
lab's tests use (``apt-get install -y chromium chromium-driver``). Each page is shot 1100 px wide
(the README's 2048 page 1000 px) and as tall as the page, then stored as a 256-colour PNG (Pillow),
which keeps every file well under 200 KB. Each file is written under a temporary name and renamed.
"""

import argparse
import io
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 1100  # px, the width of every page's shot but the README's
README_WIDTH = 1000  # px, the README's 2048 page (docs/lab/2048_make_run.png)
README_BOARD = "2 4 . / . 8 . / . . 2"  # the board the README's 2048 page shows
TRUCO = dict(score0=11, score1=11, dealer=1, vira="7c")  # the subgame the default run solves
LIMIT = 200_000  # bytes per PNG


def browser():
    """A headless chromium driven by selenium; SystemExit naming the packages when either is
    missing."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        sys.exit("no headless browser: install Debian's chromium and chromium-driver "
                 "(apt-get install -y chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--hide-scrollbars", f"--window-size={WIDTH},900"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


def serve(results):
    """(address, server) of the lab over ``results``, served from a daemon thread."""
    import logging

    from werkzeug.serving import make_server

    from strongsolve.lab.app import create_app

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request

    server = make_server("127.0.0.1", 0, create_app(results), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}", server


def click(driver, css):
    """Click the first element matching ``css`` and wait until the page it loads has replaced
    this one; False when nothing matches."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    found = driver.find_elements(By.CSS_SELECTOR, css)
    if not found:
        return False
    old = driver.find_element(By.TAG_NAME, "html")
    found[0].click()

    def replaced(driver):
        try:
            old.is_enabled()
            return False
        except WebDriverException:
            return driver.execute_script("return document.readyState") == "complete"

    WebDriverWait(driver, 120).until(replaced)
    return True


def shoot(driver, path, width=WIDTH):
    """Save the page as an optimised palette PNG at ``path``, ``width`` px wide and as tall as the
    page; returns its size in bytes."""
    from PIL import Image

    driver.set_window_size(width, 300)  # shrink first, so that the page's own height shows
    height = driver.execute_script("return document.documentElement.scrollHeight")
    # the window's height holds the browser's own frame too: add what the page does not get
    frame = driver.execute_script("return window.outerHeight - window.innerHeight")
    driver.set_window_size(width, height + frame + 16)
    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    image = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    tmp = path.with_name(path.name + ".tmp")
    image.save(tmp, format="PNG", optimize=True)
    tmp.replace(path)
    return path.stat().st_size


def pick(found, preferred, what, command):
    """The entry of ``found`` (names) equal to ``preferred``, else the first; SystemExit naming the
    command that makes one when there is none."""
    if not found:
        sys.exit(f"no {what} in the results folder; solve it first with `{command}`")
    return preferred if preferred in found else found[0]


def pages(results):
    """[(file name, URL path, [step, ...], width)]: what each screenshot shows, picked from what
    ``results`` holds (the default run's names first); a step is called with the driver after the
    page loads and returns False when there is nothing left to do (the game or the hand is over)."""
    from strongsolve.lab import g2048, ludo, shutbox

    make = f"make run` (or `snakemake --cores all --config results={results}"
    run = pick([p.name for p in g2048.run_dirs(results)], "2048_3x3", "2048 run", make)
    box = pick([f"{p.parent.name}/{p.name}" for p in shutbox.result_files(results)],
               "shutbox_12/flip_one.json", "Shut the Box result", make)
    race = pick([f"{p.parent.name}/{p.name}" for p in ludo.race_files(results)],
                "ludo_classic60/race_p2.json", "Ludo race", make)
    own, opp = ("8,15", "10,25") if race.endswith("race_p2.json") else ("8", "10")
    truco = urlencode(TRUCO)
    return [
        ("home.png", "/", [], WIDTH),
        ("2048_make_run.png", "/2048?" + urlencode(dict(run=run, board=README_BOARD)), [], README_WIDTH),
        # a game with hints: three moves, each the best one (its row's play button)
        ("2048.png", "/2048/play?" + urlencode(dict(run=run, seed=7)), [play_best] * 3, WIDTH),
        # cards 1 and 3 set, roll 3 and 5
        ("shutbox.png", "/shutbox?" + urlencode(dict(file=box, tile=[1, 3], x=3, y=5), doseq=True),
         [], WIDTH),
        ("ludo.png", "/ludo?" + urlencode(dict(file=race, own=own, opponent=opp, roll=5)), [], WIDTH),
        ("truco.png", "/truco?" + urlencode(dict(TRUCO, hand="Ac 3h 4s")), [], WIDTH),
        # a random deal (seed 3) played through three decisions, each the first card offered
        ("truco_line.png", f"/truco?{truco}&deal=random&seed=3", [clicks("#choices a.do")] * 3,
         WIDTH),
        # a whole hand as player 0, always the first action offered
        ("truco_play.png", f"/truco/play?{truco}&you=0&seed=3", [clicks("#your-turn a.do")] * 3,
         WIDTH),
    ]


def clicks(css):
    """A step that clicks the first element matching ``css`` (:func:`click`)."""
    return lambda driver: click(driver, css)


def play_best(driver):
    """On the 2048 play page, play the move marked best (its ``play-<move>`` button)."""
    from selenium.webdriver.common.by import By

    best = driver.find_elements(By.CSS_SELECTOR, "#moves tr.best")
    return bool(best) and click(driver, f"#play-{best[0].get_attribute('id')[5:]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="?", default=str(ROOT / "results"),
                        help="results folder of the default run (default: results/)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "lab"), help="folder of the PNGs")
    args = parser.parse_args(argv)
    results, out = Path(args.results), Path(args.out)
    if not results.is_dir():
        sys.exit(f"results folder {results} does not exist; make it with `make run` (or `snakemake "
                 f"--cores all --config results={results}`)")
    todo = pages(results)
    out.mkdir(parents=True, exist_ok=True)
    address, server = serve(results)
    driver = browser()
    too_big = []
    try:
        for name, path, steps, width in todo:
            driver.set_window_size(width, 900)
            driver.get(address + path)
            for step in steps:
                if not step(driver):
                    break  # the game or the hand is over
            errors = [e.text for e in driver.find_elements("css selector", ".error")]
            if errors:
                sys.exit(f"{name}: the page {path} shows an error: {errors[0]}")
            size = shoot(driver, out / name, width)
            too_big += [name] if size > LIMIT else []
            print(f"{out / name}: {size:,} bytes")
    finally:
        driver.quit()
        server.shutdown()
    if too_big:
        sys.exit(f"larger than {LIMIT:,} bytes: {', '.join(too_big)}")


if __name__ == "__main__":
    main()
