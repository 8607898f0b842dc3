"""A fault-injecting TCP proxy for the tests: between a driver and a real server on
127.0.0.1, it forwards bytes both ways and, once armed, cuts connections (a TCP reset on
both sides) after a random number of bytes from the server, as a network or a
coordinator that dies mid-response would. :meth:`FaultProxy.outage` makes the host
unreachable for some seconds (every connection cut, new ones refused with a reset or
accepted and never answered), as a node that restarts or a network partition would;
``latency`` slows every response down (so that a fault lands mid-scan).

::

    with FaultProxy(("127.0.0.1", 9042), seed=3) as proxy:
        cluster = Cluster(["127.0.0.1"], port=proxy.port)
        ...
        proxy.arm(cuts=5, min_bytes=2_000, max_bytes=40_000)   # from now on
        ...
        assert proxy.cuts == 5
        proxy.outage(5.0).join()        # 5 s unreachable, then back

Everything is bounded: at most ``cuts`` cuts per arming, sockets time out, and the
threads are daemons that end with :meth:`close`.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
import time
from types import TracebackType

_CHUNK = 65536
_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a RST


class FaultProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target``; cuts connections when armed."""

    def __init__(self, target: tuple[str, int], seed: int, timeout: float = 60.0) -> None:
        self.target = target
        self.timeout = timeout
        self.cuts = 0
        self.connections = 0
        self.refused = 0  # connections refused or blackholed during outages
        self.outage_cuts = 0  # connections cut when outages began
        self.latency = 0.0  # seconds before each chunk of server bytes is forwarded
        self._down = False
        self._blackhole = False
        self._held: list[socket.socket] = []
        self._pairs: set[_Pair] = set()
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._budget = 0
        self._min = self._max = 0
        self._closed = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, name="faultproxy", daemon=True)
        self._thread.start()

    def arm(self, cuts: int, min_bytes: int, max_bytes: int) -> None:
        """From now on, cut up to ``cuts`` connections, each after a random number of
        server bytes in ``[min_bytes, max_bytes]`` counted from this moment."""
        with self._lock:
            self._budget = cuts
            self._min, self._max = min_bytes, max_bytes
            self.cuts = 0

    def outage(self, seconds: float, blackhole: bool = False) -> threading.Thread:
        """Make the host unreachable for ``seconds`` from now: every open connection is
        cut (a reset) and new ones are refused (accepted, then reset) or, with
        ``blackhole``, accepted and never answered until the end. Returns the thread
        that ends the outage (``join()`` it to wait)."""
        with self._lock:
            self._down = True
            self._blackhole = blackhole
            pairs = list(self._pairs)
            self.outage_cuts += len(pairs)
        for pair in pairs:
            pair._end(reset=True)
        ender = threading.Timer(seconds, self.restore)
        ender.daemon = True
        ender.start()
        return ender

    def cut_all(self) -> int:
        """Cut every open connection now (a reset), and let new ones through; returns
        how many were cut."""
        with self._lock:
            pairs = list(self._pairs)
        for pair in pairs:
            pair._end(reset=True)
        return len(pairs)

    def restore(self) -> None:
        """End an outage: connections are accepted and forwarded again."""
        with self._lock:
            self._down = False
            held, self._held = self._held, []
        for s in held:
            _close(s, reset=True)

    @property
    def down(self) -> bool:
        """Whether an outage is on."""
        return self._down

    def _next_limit(self) -> int | None:
        with self._lock:
            if self._budget <= 0:
                return None
            return self._random.randint(self._min, self._max)

    def _take_cut(self) -> bool:
        with self._lock:
            if self._budget <= 0:
                return False
            self._budget -= 1
            self.cuts += 1
            return True

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                down, blackhole = self._down, self._blackhole
                if down:
                    self.refused += 1
                    if blackhole:
                        self._held.append(client)
            if down:
                if not blackhole:
                    _close(client, reset=True)
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            self.connections += 1
            for s in (client, server):
                s.settimeout(self.timeout)
                with self._lock:
                    self._sockets.add(s)
            pair = _Pair(self, client, server)
            with self._lock:
                self._pairs.add(pair)
            threading.Thread(target=pair.upstream, daemon=True).start()
            threading.Thread(target=pair.downstream, daemon=True).start()

    def _forget(self, pair: _Pair, *sockets: socket.socket) -> None:
        with self._lock:
            self._pairs.discard(pair)
            for s in sockets:
                self._sockets.discard(s)

    def close(self) -> None:
        """Stop accepting and close every connection."""
        self._closed.set()
        self._listener.close()
        self.restore()
        with self._lock:
            open_sockets = list(self._sockets)
            self._sockets.clear()
        for s in open_sockets:
            _close(s, reset=False)
        self._thread.join(timeout=5)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _close(s: socket.socket, reset: bool) -> None:
    # shutdown first: close() alone leaves a socket that another thread is blocked
    # reading open until that read returns, which on an idle connection is never
    try:
        if reset:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
        s.shutdown(socket.SHUT_RD if reset else socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


class _Pair:
    """One proxied connection: client -> server as is, server -> client counted and cut."""

    def __init__(self, proxy: FaultProxy, client: socket.socket, server: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.server = server
        self.done = threading.Event()

    def _end(self, reset: bool) -> None:
        if not self.done.is_set():
            self.done.set()
            _close(self.client, reset)
            _close(self.server, reset)
            self.proxy._forget(self, self.client, self.server)

    def upstream(self) -> None:
        try:
            while not self.done.is_set():
                data = self.client.recv(_CHUNK)
                if not data:
                    break
                self.server.sendall(data)
        except OSError:
            pass
        self._end(reset=False)

    def downstream(self) -> None:
        sent = 0
        limit: int | None = None
        armed_at = -1
        try:
            while not self.done.is_set():
                data = self.server.recv(_CHUNK)
                if not data:
                    break
                if self.proxy.latency:
                    time.sleep(self.proxy.latency)
                if self.done.is_set():
                    break
                if limit is None and self.proxy._budget > 0:
                    limit = self.proxy._next_limit()
                    armed_at = sent
                if limit is not None and sent + len(data) - armed_at >= limit:
                    if self.proxy._take_cut():
                        keep = max(0, limit - (sent - armed_at))
                        self.client.sendall(data[:keep])  # part of a frame, then the cut
                        self._end(reset=True)
                        return
                    limit = None
                self.client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        self._end(reset=False)
