"""``dask.scheduler_address`` answered within a bound by a clear error, whatever listens there (issue 16).

Servers on 127.0.0.1 only: one that answers with HTTP (dask read its first 8 bytes as a frame
length and tried to allocate 3 EiB), one that accepts and says nothing (dask waited for its
handshake forever), a closed port (refused), and a real dask scheduler (connects).
"""

import socket
import threading
import time

import pytest

from strongsolve.parallel import client_for

KEY = ("check dask.scheduler_address in the config (the stage's --scheduler-address; null runs the "
       "chunks on threads in each job)")


@pytest.fixture
def server():
    """A function (reply bytes or None) -> address of a TCP server on 127.0.0.1 that accepts every
    connection and sends ``reply`` (None: nothing), closed after the test."""
    listeners, stop = [], threading.Event()

    def start(reply):
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(0.1)
        listeners.append(listener)
        held = []

        def serve():
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except (TimeoutError, OSError):
                    continue
                held.append(conn)
                if reply:
                    conn.sendall(reply)
            for conn in held:
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
        return f"tcp://127.0.0.1:{listener.getsockname()[1]}"

    yield start
    stop.set()
    time.sleep(0.2)
    for listener in listeners:
        listener.close()


def test_http_server_is_not_a_dask_scheduler(server):
    address = server(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    t = time.monotonic()
    with pytest.raises(OSError) as info:
        client_for(address, answer_seconds=10)
    assert time.monotonic() - t < 10
    message = str(info.value)
    assert message.startswith(f"{address!r} answered, but not as a dask scheduler (its reply is not "
                              "dask's protocol: ")
    assert message.endswith(KEY)


def test_silent_server_is_answered_within_the_bound(server):
    address = server(None)
    t = time.monotonic()
    with pytest.raises(OSError) as info:
        client_for(address, answer_seconds=3)
    assert time.monotonic() - t < 4
    assert str(info.value) == (f"{address!r} accepts connections but gave no dask handshake within "
                               f"3 s: it is not a dask scheduler (or not a responsive one); {KEY}")


def test_refused_and_malformed_addresses():
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]  # closed on leaving: nothing listens there any more
    t = time.monotonic()
    with pytest.raises(OSError) as info:
        client_for(f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - t < 5
    assert str(info.value) == (f"no dask scheduler answers at 'tcp://127.0.0.1:{port}' ([Errno 111] "
                               f"Connection refused); {KEY}")
    with pytest.raises(OSError, match=r"^'tcp://127\.0\.0\.1' is not a dask scheduler address \(missing port"):
        client_for("tcp://127.0.0.1")
    with pytest.raises(OSError, match=r"^'foo://bar' is not a dask scheduler address \(unknown address scheme 'foo'"):
        client_for("foo://bar")
    assert client_for(None) is None and client_for("") is None


def test_a_real_scheduler_connects():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol="tcp://", host="127.0.0.1", dashboard_address=None) as cluster:
        client = client_for(cluster.scheduler_address)
        try:
            assert client.submit(sum, [1, 2, 3]).result(timeout=30) == 6
        finally:
            client.close()
