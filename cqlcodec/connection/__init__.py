"""cqlcodec's read path for the drivers' connections.

:class:`FrameReassembler` cuts protocol v3/v4 frames and v5 segments out of socket
chunks of any size; :func:`connection_class` makes a driver connection class (any
reactor) read through it.
"""

from __future__ import annotations

from cqlcodec.connection.reassembler import FrameReassembler, crc24

__all__ = ["FrameReassembler", "crc24"]
