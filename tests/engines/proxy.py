"""A TCP proxy on 127.0.0.1 for fault injection: forwards to the test server until
told to cut every connection and refuse new ones (then the driver sees connections
drop and reconnects fail, as with a node that went away)."""

from __future__ import annotations

import socket
import threading


class Proxy:
    """Forwards 127.0.0.1:``port`` to ``target``; :meth:`cut` breaks it for good."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.open = True
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        """Close every forwarded connection and refuse (accept, then close) new ones."""
        self.open = False
        with self.lock:
            found, self.sockets = self.sockets, []
        for s in found:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        """Stop listening and cut everything."""
        self.cut()
        self.listener.close()
