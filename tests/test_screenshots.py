"""docs/screenshots.py, the command that retakes the lab's screenshots: without the default run's
results it stops before starting a browser, naming the command that makes them."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "screenshots.py"


def script():
    spec = importlib.util.spec_from_file_location("screenshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_results_folder_names_make_run(tmp_path):
    with pytest.raises(SystemExit, match=r"results folder .*nothing does not exist; make it with `make run`"):
        script().main([str(tmp_path / "nothing"), "--out", str(tmp_path / "png")])
    assert not (tmp_path / "png").exists()


def test_an_empty_results_folder_names_what_is_missing(tmp_path):
    with pytest.raises(SystemExit, match="no 2048 run in the results folder; solve it first with `make run`"):
        script().main([str(tmp_path), "--out", str(tmp_path / "png")])
    assert not (tmp_path / "png").exists()


def test_the_makefile_runs_it():
    makefile = (SCRIPT.parents[1] / "Makefile").read_text()
    assert "screenshots: $(VENV)/.installed\n\t$(BIN)/python docs/screenshots.py $(RESULTS) --out docs/lab" in makefile
