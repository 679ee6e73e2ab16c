"""The result JSON of ``strongsolve ludo race`` (``race_p<k>.json``, the workflow's race summary)
carries a SHA-256 of its document, verified by every reader (the lab, the run's answers, the
loader): an edited win probability is refused naming the file and the command that writes it
again, the run's own job when a workflow job wrote it."""

import html
import json

import pytest
import yaml

from strongsolve.cli import main
from strongsolve.games.ludo.saved import load_summary
from strongsolve.headline import ludo_lines
from strongsolve.lab.app import create_app
from strongsolve.rerun import RERUN_VARIABLE
from strongsolve.store.errors import CorruptResultError

BOARD = {"length": 5, "jumps": {3: 1}, "die": 3, "safe": [2]}  # tests/games/ludo/test_advice.py's


def solve_race(folder, board):
    race = folder / "race_p1.json"
    assert main(["ludo", "race", str(board), "--pieces", "1", "--policy-out",
                 str(folder / "race_p1_policy.npz"), "--output", str(race)]) == 0
    return race


def edit_win_probability(race, value=0.9999):
    doc = json.loads(race.read_text())
    assert doc["win_probability"] != value
    doc["win_probability"] = value
    race.write_text(json.dumps(doc, indent=1))


@pytest.fixture
def folders(tmp_path):
    """(results folder, race folder, board file) of a one-piece race on a five-cell board."""
    results = tmp_path / "results"
    folder = results / "ludo_tiny"
    folder.mkdir(parents=True)
    board = tmp_path / "tiny.yaml"
    board.write_text(yaml.safe_dump(BOARD))
    return results, folder, board


def test_an_edited_win_probability_is_refused_by_every_reader(folders, capsys):
    results, folder, board = folders
    race = solve_race(folder, board)
    capsys.readouterr()
    good = load_summary(race)
    assert good["game"] == "ludo-race" and "rerun" not in good  # made outside the workflow
    edit_win_probability(race)
    repair = (f"strongsolve ludo race {board} --pieces 1 --policy-out "
              f"{folder / 'race_p1_policy.npz'} --output {race}")
    want = (f"{race} does not match its checksum; it is damaged or was edited, so it is not used. "
            f"Rebuild it with `{repair}`")
    with pytest.raises(CorruptResultError) as err:
        load_summary(race)
    assert str(err.value) == want


def test_the_lab_and_the_answers_name_the_edited_race_and_its_repair(folders, capsys):
    results, folder, board = folders
    race = solve_race(folder, board)
    capsys.readouterr()
    edit_win_probability(race)
    with pytest.raises(CorruptResultError, match="does not match its checksum"):
        ludo_lines([race])
    client = create_app(results).test_client()
    for url in ("/", f"/ludo?file=ludo_tiny/race_p1.json"):
        reply = client.get(url)
        text = html.unescape(reply.get_data(as_text=True))
        assert reply.status_code == 200
        assert "0.9999" not in text
        assert f"{race} does not match its checksum" in text and "Rebuild it with `strongsolve ludo race" in text


def test_a_race_written_by_a_workflow_job_names_the_runs_job(folders, monkeypatch, capsys):
    """Inside a job the run's command is recorded with the JSON; read back outside the workflow,
    the repair is that command building the race's JSON by name and forcing it."""
    results, folder, board = folders
    command = "snakemake --cores all --config 'games=[ludo]' 'ludo={board: tiny.yaml, race_pieces: [1]}'"
    monkeypatch.setenv(RERUN_VARIABLE, command)
    race = solve_race(folder, board)
    monkeypatch.delenv(RERUN_VARIABLE)
    capsys.readouterr()
    assert load_summary(race)["rerun"] == {"command": command}
    edit_win_probability(race)
    monkeypatch.chdir(results.parent)
    target = "results/ludo_tiny/race_p1.json"
    want = (f"snakemake {target} --cores all --config 'games=[ludo]' "
            f"'ludo={{board: tiny.yaml, race_pieces: [1]}}' --forcerun {target}")
    with pytest.raises(CorruptResultError) as err:
        load_summary(race)
    assert str(err.value).endswith(f"Rebuild it with `{want}`")
    # a JSON cut short keeps no record: another result of its folder (the same run) gives it
    monkeypatch.setenv(RERUN_VARIABLE, command)
    assert main(["ludo", "rolls", str(board), "--output", str(folder / "rolls_board.json")]) == 0
    monkeypatch.delenv(RERUN_VARIABLE)
    race.write_text(race.read_text()[:40])
    with pytest.raises(CorruptResultError, match="cannot be read as JSON") as err:
        load_summary(race)
    assert str(err.value).endswith(f"Rebuild it with `{want}`")
