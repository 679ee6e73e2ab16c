"""Progress lines written in batches (strongsolve.progress)."""

import io

import pytest

from strongsolve.progress import Progress


class CountingStream(io.StringIO):
    def __init__(self):
        super().__init__()
        self.writes = 0

    def write(self, text):
        self.writes += 1
        return super().write(text)


def test_lines_wait_for_the_interval_then_go_in_one_write():
    log = CountingStream()
    with Progress(log, interval=3600) as progress:
        for k in range(5):
            progress.line(f"age {k}")
        assert log.getvalue() == "" and log.writes == 0
    assert log.getvalue() == "".join(f"age {k}\n" for k in range(5)) and log.writes == 1


def test_a_zero_interval_writes_every_line_at_once():
    log = CountingStream()
    progress = Progress(log, interval=0)
    progress.line("first")
    assert log.getvalue() == "first\n"
    progress.line("second")
    assert log.getvalue() == "first\nsecond\n" and log.writes == 2


def test_lines_gathered_before_a_failure_are_written():
    log = CountingStream()
    with pytest.raises(RuntimeError):
        with Progress(log, interval=3600) as progress:
            progress.line("age 4: computed")
            raise RuntimeError("disk full")
    assert log.getvalue() == "age 4: computed\n"
