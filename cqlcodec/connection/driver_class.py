"""A driver connection class, of any reactor, that reads through cqlcodec's reassembler.

Every reactor of cassandra-driver and scylla-driver (libev, asyncio, asyncore, gevent,
eventlet, twisted; plain and TLS sockets) reads the same way: ``recv`` of
``in_buffer_size`` bytes until a short read, each buffer written to ``self._iobuf``,
then ``process_io_buffer()``. The class made here keeps the reactor's own reading,
error handling and closing, and changes these things:

* ``in_buffer_size`` is 64 KiB (the driver reads 4 KiB at a time);
* ``_iobuf`` is a :class:`~cqlcodec.connection.FrameReassembler`, which keeps the
  buffers as they arrived instead of copying them into a ``BytesIO``;
* ``process_io_buffer`` hands each whole frame to the driver's own ``process_msg``,
  and turns a broken stream into the driver's own exception on the driver's own
  path (``defunct``): ``CrcMismatchException`` for a bad checksum, ``ProtocolError``
  for a frame header the driver refuses;
* ``send_msg`` sends a prepared statement's EXECUTE with skip-metadata on protocol v5
  (:mod:`cqlcodec.connection.skip_metadata`);
* the frames of EXECUTE and QUERY requests (:mod:`cqlcodec.connection.request_writer`)
  and, on protocol v5, the outgoing segments (:mod:`cqlcodec.connection.segment_writer`)
  are built by compiled code, the same bytes as the driver's;
* over the driver's libev reactor, a small frame is written on the caller's thread when
  nothing else is queued or being written, and a request's timer wakes the loop only
  when it may be the next to end (:mod:`cqlcodec.connection.direct_write`).

Protocol v5 checksumming is switched on by the driver's own ``_enable_checksumming``
(after STARTUP), which also switches the reassembler to segments, with the driver's
segment decompressor when lz4 was negotiated (the driver's LZ4 codec through
:func:`~cqlcodec.connection.lz4_segments.inflate_lz4`, the same bytes without its copies).
"""

from __future__ import annotations

import threading
from typing import Any, Final

from cassandra import connection as driver_connection
from cassandra.cluster import Cluster
from cassandra.connection import (
    CrcMismatchException,
    ProtocolError,
    ProtocolVersion,
    _Frame,
)

from cqlcodec.connection.direct_write import direct_write_methods
from cqlcodec.connection.large_bodies import FILL_FROM
from cqlcodec.connection.lz4_segments import inflate_lz4, lz4_available
from cqlcodec.connection.reassembler import Decompress, FrameReassembler
from cqlcodec.connection.request_writer import request_encoder
from cqlcodec.connection.segment_writer import segment_writer
from cqlcodec.connection.skip_metadata import before_send
from cqlcodec.errors import FramingError
from cqlcodec.runtime.build import COMPILED

READ_SIZE: Final = 65536
# whether install() and Connect specs switch a cluster to the class when not told. The
# compiled build: yes. The interpreted build: yes too, because there it measured no
# slower than the driver's Cython-compiled read path on v4 and v5 (bench_server
# --only readpath; docs/guide/driver.md has the numbers). Both named for the record.
ON_BY_DEFAULT_COMPILED: Final = True
ON_BY_DEFAULT_INTERPRETED: Final = True
ON_BY_DEFAULT: Final = ON_BY_DEFAULT_COMPILED if COMPILED else ON_BY_DEFAULT_INTERPRETED

_classes: dict[type[Any], type[Any]] = {}
_classes_lock: Final = threading.Lock()


class _ReadPath:
    """The methods a cqlcodec connection class puts in front of its reactor's."""

    in_buffer_size = READ_SIZE
    fill_bodies_from = FILL_FROM

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # before the reactor's __init__: its loop may read as soon as the socket is open
        self._reassembler = FrameReassembler(ProtocolVersion.SUPPORTED_VERSIONS,
                                             self.fill_bodies_from)
        super().__init__(*args, **kwargs)

    @property
    def _iobuf(self: Any) -> FrameReassembler:
        reassembler: FrameReassembler = self._reassembler
        return reassembler

    def _enable_checksumming(self: Any) -> None:
        reactor: Any = super()
        reactor._enable_checksumming()
        codec = self._segment_codec
        self._reassembler.enable_segments(segment_decompressor(codec))
        self._segment_codec = segment_writer(codec)

    def send_msg(self: Any, msg: Any, request_id: int, cb: Any, *args: Any,
                 **kwargs: Any) -> Any:
        # the driver's ResponseFuture names the list its answer is decoded with
        result_metadata = kwargs.get("result_metadata", args[2] if len(args) > 2 else None)
        if result_metadata:
            decoder = kwargs.get("decoder", args[1] if len(args) > 1 else None)
            before_send(msg, decoder, result_metadata, self.protocol_version)
        encoder = kwargs.get("encoder")
        if encoder is not None:
            kwargs["encoder"] = request_encoder(encoder)
        reactor: Any = super()
        return reactor.send_msg(msg, request_id, cb, *args, **kwargs)

    def process_io_buffer(self: Any) -> None:
        reassembler: FrameReassembler = self._reassembler
        try:
            while reassembler.next_frame():
                size = reassembler.header_size
                frame = _Frame(reassembler.version, reassembler.flags, reassembler.stream,
                               reassembler.opcode, size, size + len(reassembler.body))
                body = reassembler.body
                reassembler.body = b""
                self.process_msg(frame, body)
        except FramingError as exc:
            reassembler.clear()
            if exc.checksum:
                self.defunct(CrcMismatchException(str(exc), self.endpoint))
            else:
                self.defunct(ProtocolError(str(exc)))


def segment_decompressor(codec: Any) -> Decompress | None:
    """How the reassembler inflates the segments of the driver's segment ``codec``:
    None when they are not compressed; the driver's LZ4 codec's work done by
    :func:`~cqlcodec.connection.lz4_segments.inflate_lz4` (the same bytes, without
    its copies); any other codec's own ``decompress``."""
    if not codec.compression:
        return None
    if codec is getattr(driver_connection, "segment_codec_lz4", None) and lz4_available():
        return inflate_lz4
    decompress: Decompress = codec.decompress
    return decompress


def _default_base() -> type[Any]:
    base: type[Any] = Cluster.connection_class
    return base


def connection_class(base: type[Any] | None = None) -> type[Any]:
    """The connection class that reads ``base``'s sockets through cqlcodec.

    ``base`` is a driver connection class (``LibevConnection``,
    ``AsyncioConnection``, ``AsyncoreConnection``, ...); by default the one a new
    ``Cluster`` would use. The class keeps ``base``'s reactor and behaves as it does
    (events, heartbeats, stream ids, compression, errors), reading 64 KiB at a time
    and cutting frames and protocol v5 segments with cqlcodec's reassembler. One
    class is made per base and reused; a cqlcodec class given as ``base`` is
    returned as it is. Use it as ``Cluster(connection_class=connection_class())``.
    """
    if base is None:
        base = _default_base()
    if issubclass(base, _ReadPath):
        return base
    with _classes_lock:
        made = _classes.get(base)
        if made is None:
            name = f"Cqlcodec{base.__name__}"
            made = type(name, (_ReadPath, base), {"__module__": __name__,
                                                   "__qualname__": name,
                                                   "__doc__": f"{base.__name__} reading "
                                                   "through cqlcodec's reassembler.",
                                                   **direct_write_methods(base)})
            _classes[base] = made
        return made


def is_cqlcodec_class(cls: type[Any]) -> bool:
    """Whether ``cls`` is a connection class made by :func:`connection_class`."""
    return isinstance(cls, type) and issubclass(cls, _ReadPath)
