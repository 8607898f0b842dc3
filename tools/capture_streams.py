"""Record what a real server sends to the driver, for the reassembler's differential tests.

Connects with the driver's own connection class (recording every buffer its reactor
reads), runs a few queries whose responses make many frames per v5 segment and one
frame over several segments, and writes each protocol's busiest stream to
``tests/connection/streams/v<N>[-lz4].bin.gz`` (gzip) with ``.json`` beside it (the protocol, and
after how many frames the driver switched to v5 segments). Usage::

    python tools/capture_streams.py 127.0.0.1:9042 [--lz4]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

from cassandra.cluster import Cluster

OUT = Path(__file__).resolve().parent.parent / "tests" / "connection" / "streams"
BASE: Any = Cluster.connection_class


class _Tee:
    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._real = conn._io_buffer.io_buffer

    def write(self, data: bytes) -> int:
        self._conn.recorded.append(bytes(data))
        written: int = self._real.write(data)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class RecordingConnection(BASE):  # type: ignore[misc]
    """The driver's default connection, recording its incoming bytes."""

    opened: list[Any] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.recorded: list[bytes] = []
        self.frames = 0
        self.segments_after: int | None = None
        RecordingConnection.opened.append(self)
        super().__init__(*args, **kwargs)

    @property
    def _iobuf(self) -> Any:
        return _Tee(self)

    def process_msg(self, header: Any, body: Any) -> None:
        self.frames += 1
        super().process_msg(header, body)

    def _enable_checksumming(self) -> None:
        self.segments_after = self.frames
        super()._enable_checksumming()


def capture(host: str, port: int, protocol: int, lz4: bool) -> None:
    RecordingConnection.opened = []
    cluster = Cluster([host], port=port, protocol_version=protocol,
                      connection_class=RecordingConnection, compression="lz4" if lz4 else False)
    session = cluster.connect()
    session.execute("CREATE KEYSPACE IF NOT EXISTS capture WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS capture.blobs (k int PRIMARY KEY, v blob)")
    session.execute("TRUNCATE capture.blobs")
    for k, size in enumerate((600, 1300)):  # over 128 KiB: frames over 2 and 3 segments
        session.execute("INSERT INTO capture.blobs (k, v) VALUES (%s, %s)",
                        (k, bytes(range(256)) * size))
    session.execute("SELECT * FROM system_schema.columns")
    session.execute("SELECT * FROM capture.blobs")
    for _ in range(20):
        session.execute("SELECT release_version FROM system.local")
    cluster.shutdown()
    busiest = max(RecordingConnection.opened, key=lambda c: sum(map(len, c.recorded)))
    name = f"v{protocol}{'-lz4' if lz4 else ''}"
    stream = b"".join(busiest.recorded)
    (OUT / f"{name}.bin.gz").write_bytes(gzip.compress(stream, mtime=0))
    (OUT / f"{name}.json").write_text(json.dumps(
        {"protocol": protocol, "lz4": lz4, "segments_after_frames": busiest.segments_after,
         "frames": busiest.frames}) + "\n")
    print(name, len(stream), "bytes,", busiest.frames, "frames")


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("server", help="host:port")
    parser.add_argument("--lz4", action="store_true", help="also capture v5 with lz4")
    args = parser.parse_args()
    host, _, port = args.server.rpartition(":")
    OUT.mkdir(parents=True, exist_ok=True)
    capture(host, int(port), 4, False)
    capture(host, int(port), 5, False)
    if args.lz4:
        capture(host, int(port), 5, True)


if __name__ == "__main__":
    main()
