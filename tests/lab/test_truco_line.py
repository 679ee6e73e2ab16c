"""The Truco tables' most likely actions (lab/truco_line.py): the highest probability of a mix,
every action that ties with it, nothing else."""

from strongsolve.lab.truco_line import most_likely, row_class


def mix(*probabilities):
    return [{"action": "play", "cards": [], "probability": p} for p in probabilities]


def test_the_highest_probability_is_the_most_likely_action():
    assert most_likely(mix(0.25, 0.5, 0.25)) == {1}
    assert most_likely(mix(1.0)) == {0}
    assert most_likely(mix(0.0, 1.0)) == {1}


def test_ties_are_all_marked():
    assert most_likely(mix(1 / 3, 1 / 3, 1 / 3)) == {0, 1, 2}
    assert most_likely(mix(0.4, 0.2, 0.4)) == {0, 2}
    # within 1e-9 is a tie (a CFR average strategy's rounding); 1e-6 apart is not
    assert most_likely(mix(0.5 - 4e-10, 0.5 + 4e-10)) == {0, 1}
    assert most_likely(mix(0.5 - 1e-6, 0.5 + 1e-6)) == {1}


def test_an_empty_mix_has_none():
    assert most_likely([]) == set()


def test_row_class_joins_the_marks_that_apply():
    assert row_class("chosen", "likely") == ' class="chosen likely"'
    assert row_class(False, "likely") == ' class="likely"'
    assert row_class(False, None) == ""
