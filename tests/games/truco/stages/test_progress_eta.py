"""The per-subgame progress line of a raise solve: score, vira class, iteration, NashConv and the
time left estimated from the last two checks' power law."""

import io

from strongsolve.games.truco.stages.groups import _eta, _progress_line


def test_eta_extends_the_last_two_checks():
    # NashConv 8e-3 at 10 and 2e-3 at 40: p = log(4) / log(4) = 1, so 1e-3 at 80 iterations;
    # 40 iterations left at 2 s per iteration (80 s for the 40 since iteration 1)
    text = _eta([(10, 8e-3), (40, 2e-3)], 40, 80.0, 1, 1e-3)
    assert text == ", ETA 80 s (NashConv ~ t^-1.00)"
    assert _eta([(10, 8e-3)], 10, 5.0, 1, 1e-3) == ""  # one check: no law yet
    assert _eta([(10, 8e-3), (40, 9e-4)], 40, 5.0, 1, 1e-3) == ", ETA 0 s"
    assert _eta([(10, 8e-3), (40, 9e-3)], 40, 5.0, 1, 1e-3) == ""  # not falling
    assert _eta([(10, 8e-3), (40, 2e-3)], 40, 5.0, 1, None) == ""


def test_progress_line_names_score_vira_iteration_nash_conv_and_eta(capsys, monkeypatch):
    # on stdout (a workflow job's log); the status line goes to the process's reporter (on a pipe
    # at most every 15 s: none here)
    from strongsolve import progress as status

    shown = io.StringIO()
    monkeypatch.setattr(status, "_REPORTER", status.Reporter(stream=shown, live=False))
    progress = _progress_line((10, 9), 4, every=0.0, target=1e-3)
    progress(10, None, 20.0)
    progress(10, 8e-3, 20.0)
    progress(40, 2e-3, 80.0)
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert captured.err == "" and shown.getvalue() == ""
    assert lines[0] == "  score 10-9 vira class 4: iteration 10, nash_conv not checked yet, after 20 s"
    assert lines[2] == ("  score 10-9 vira class 4: iteration 40, nash_conv 2.00e-03 at the last check, "
                      f"after 80 s, ETA {40 * 80 / 31:.0f} s (NashConv ~ t^-1.00)")
