"""The lab tests' shared results folder (built once per session, read only)."""

import pytest

from support.lab import build_lab_results


@pytest.fixture(scope="session")
def lab_results(tmp_path_factory):
    """A results folder with a 2x3 2048 run, two Shut the Box results, a Ludo race and the Truco
    subgames of the groups 11 and 10 on a tiny deck per vira class (:func:`build_lab_results`)."""
    return build_lab_results(tmp_path_factory.mktemp("lab") / "results")
