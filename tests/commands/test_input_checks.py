"""Bad command-line input is refused before any work, with exit code 2 and a message naming the
value and what is allowed: 2048's --max-age (as the workflow's schema checks max_age) and --games,
Shut the Box's repeated tiles and null values, an advice --output that is the file it reads."""

import pytest

from strongsolve.cli import build_parser, main
from strongsolve.games.g2048.play import MAX_GAMES, check_games
from strongsolve.games.shutbox.saved import load_result, write_result

LUDO_BOARD = """length: 8
jumps: {}
chain_jumps: false
overshoot: stay
die: 2
safe: []
roll_again_on: null
"""


def refused(argv, capsys):
    """stderr of a command the CLI refuses with exit code 2 (argparse's or the handler's)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse refuses an option's value this way
        code = exit_.code
    assert code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("value", ["-5", "3", "0", "2", "7", "x"])
def test_2048_max_age_refused_as_the_schema_does(tmp_path, capsys, value):
    run = tmp_path / "run"
    err = refused(["2048", "solve", run, "--rows", 2, "--cols", 3, "--max-age", value], capsys)
    assert f"argument --max-age: {value!r} is not allowed; allowed: an even age >= 4" in err
    assert not run.exists()
    err = refused(["2048", "report", run, "--rows", 2, "--cols", 3, "--max-age", value], capsys)
    assert f"argument --max-age: {value!r} is not allowed" in err


def test_2048_max_age_an_even_age_from_4_is_taken():
    for value in (4, 6, 130):
        args = build_parser().parse_args(["2048", "solve", "d", "--rows", "2", "--cols", "3",
                                          "--max-age", str(value)])
        assert args.max_age == value


@pytest.mark.parametrize("value", ["10000000000000", str(MAX_GAMES + 1), "1", "0", "-3"])
def test_2048_play_games_bounded(tmp_path, capsys, value):
    err = refused(["2048", "play", tmp_path / "run", "--games", value], capsys)
    assert f"games = {int(value)} is not allowed; allowed: an integer from 2 to 10,000,000" in err
    assert "Traceback" not in err and "MemoryError" not in err


def test_2048_play_games_bound_in_the_api():
    assert check_games(MAX_GAMES) == MAX_GAMES
    with pytest.raises(ValueError, match="games = 10000001 is not allowed"):
        check_games(MAX_GAMES + 1)


@pytest.fixture
def standard_result(tmp_path):
    path = tmp_path / "standard.json"
    assert main(["shutbox", "--rule", "standard", "--cards", "4", "--faces", "3", "--policy",
                 "--output", str(path)]) == 0
    return path


def test_shutbox_advise_refuses_a_repeated_tile(standard_result, capsys):
    capsys.readouterr()
    err = refused(["shutbox", "advise", standard_result, "--open", "1 1 3", "--roll", "1 3"], capsys)
    assert "--open '1 1 3' names tile 1 more than once; each tile is open once" in err


def test_shutbox_advise_refuses_a_foreign_tile(standard_result, capsys):
    capsys.readouterr()
    err = refused(["shutbox", "advise", standard_result, "--open", "1 5", "--roll", "1 3"], capsys)
    assert "card 5 is outside 1..4" in err


def test_shutbox_null_probability_is_refused_not_printed_as_inf(standard_result, capsys):
    doc = load_result(standard_result)
    doc["policy"]["value_per_mask"][0b1011] = None  # tiles 1, 2, 4 open
    write_result(standard_result, doc)  # checksummed again: a null that passes the checksum
    capsys.readouterr()
    err = refused(["shutbox", "advise", standard_result, "--open", "1 2 3 4", "--roll", "1 2"],
                  capsys)
    assert f"{standard_result}: position 11 (mask of open tiles) has no max-shut value (null)" in err
    assert "inf" not in err


def test_shutbox_advise_output_is_not_its_input(standard_result, capsys):
    before = standard_result.read_bytes()
    capsys.readouterr()
    err = refused(["shutbox", "advise", standard_result, "--open", "1 2", "--roll", "1 2",
                   "--output", standard_result], capsys)
    assert f"--output {standard_result} is the result it reads" in err
    assert standard_result.read_bytes() == before


def test_ludo_advise_output_is_not_its_input(tmp_path, capsys):
    board = tmp_path / "board.yaml"
    board.write_text(LUDO_BOARD)
    npz = tmp_path / "r.npz"
    assert main(["ludo", "race", str(board), "--pieces", "1", "--policy-out", str(npz),
                 "--output", str(tmp_path / "r.json")]) == 0
    before = npz.read_bytes()
    capsys.readouterr()
    same = f"{tmp_path}/./r.npz"  # another spelling of the same file
    err = refused(["ludo", "advise", npz, "--position", "0/0", "--roll", 1, "--output", same], capsys)
    assert f"--output {same} is the race solution it reads" in err
    assert npz.read_bytes() == before
