import pytest

from strongsolve.games.ludo.stages import values as ludo_values


@pytest.fixture
def one_thread():
    # the values do not depend on the thread count (tested in test_values.py); one thread spares
    # small races a barrier per level on a machine whose cores other jobs hold
    before = ludo_values.set_threads(None)
    ludo_values.set_threads(1)
    yield
    ludo_values.set_threads(before)
