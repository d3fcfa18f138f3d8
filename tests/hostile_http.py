"""HTTP receivers on 127.0.0.1 that answer the way an operator's worst endpoint does, for the sinks' tests: an
answer of 1 GiB (streamed, never held), an answer dripped one byte at a time, no answer at all.

    with HostileReceiver("drip", interval=0.2) as receiver:
        ... point a webhook sink at receiver.url ...
        receiver.requested.wait(10)    # a request arrived (its headers and body read)
        receiver.sent                  # answer bytes written so far
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Literal

Behaviour = Literal["huge", "drip", "hang"]
GIB = 1 << 30
_CHUNK = b"x" * (1 << 20)


class HostileReceiver:
    def __init__(self, behaviour: Behaviour, status: int = 200, interval: float = 1.0, size: int = GIB) -> None:
        self.behaviour, self.status, self.interval, self.size = behaviour, status, interval, size
        self.requested = threading.Event()  # a whole request arrived
        self.requests = 0
        self.sent = 0  # answer bytes written, over all connections
        self.closed_early = threading.Event()  # the client closed a connection before the whole answer
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._connections: list[socket.socket] = []
        self._accepting = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def __enter__(self) -> HostileReceiver:
        self._accepting.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(), which close() alone does not
        self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.close()
        self._accepting.join(timeout=5)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        try:
            if not _read_request(connection):
                return
            with self._lock:
                self.requests += 1
            self.requested.set()
            head = f"HTTP/1.1 {self.status} Answer\r\nContent-Length: {self.size}\r\n\r\n".encode()
            if self.behaviour == "hang":
                self._stop.wait()
            elif self.behaviour == "drip":
                for byte in head + b"x" * self.size:
                    if self._stop.wait(self.interval):
                        return
                    connection.sendall(bytes([byte]))
                    self._count(1)
            else:
                connection.sendall(head)
                left = self.size
                while left > 0 and not self._stop.is_set():
                    chunk = _CHUNK[: min(left, len(_CHUNK))]
                    connection.sendall(chunk)
                    self._count(len(chunk))
                    left -= len(chunk)
        except OSError:
            self.closed_early.set()

    def _count(self, nbytes: int) -> None:
        with self._lock:
            self.sent += nbytes


def _read_request(connection: socket.socket) -> bool:
    """Read one request's headers and its `Content-Length` body; False when the client went away first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            return False
        body += chunk
    return True


def peak_rss_mib(pid: int) -> float:
    """A process's peak resident memory so far (VmHWM), in MiB."""
    return _status_kib(pid, "VmHWM") / 1024


def rss_mib(pid: int) -> float:
    """A process's resident memory now (VmRSS), in MiB."""
    return _status_kib(pid, "VmRSS") / 1024


def _status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no {field}")


def wait_until(check: object, timeout: float, what: str) -> None:
    """Poll `check()` until true; fail naming `what` after `timeout` seconds."""
    assert callable(check)
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not within {timeout}s")
        time.sleep(0.02)
