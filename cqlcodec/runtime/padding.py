"""The padding budget: how many missing trailing tuple and UDT fields one message may fill.

Cassandra stores tuple and UDT values with fewer fields than their type (values
written before ``ALTER TYPE ... ADD``, tuples bound or written short) and returns
them as they are; the missing trailing fields decode as null. Any such value is
accepted, whatever it lacks. What is bounded is the total a single message (a
RESULT body, or one value given to ``deserialize``) may pad, because a hostile
server could otherwise declare types of thousands of fields and send a page of
8-byte values, each padded to thousands of nulls:

    budget = PADDING_FLOOR + PADDING_PER_BYTE * (size of the message in bytes)

A short value costs at least 8 bytes on the wire (its length and one field), so a
server reaches the budget only with a page in which the values lack more than
8 * PADDING_PER_BYTE = 512 fields each on average (and more than PADDING_FLOOR
in all): a type that had hundreds of fields added after every row of the page
was written. Both the row and the columnar decoders count the missing fields.

The budget is per thread: :func:`begin_message` sets it where decoding of a
message starts, :func:`spend_padding` draws from it.
"""

from __future__ import annotations

import threading
from typing import Final

from mypy_extensions import i64

from cqlcodec.runtime.wire import malformed

PADDING_PER_BYTE: Final = 64
"""Missing fields one message may pad per byte of its size (on top of ``PADDING_FLOOR``)."""

PADDING_FLOOR: Final = 1 << 16
"""Missing fields any message may pad, whatever its size."""

_state: Final = threading.local()


def begin_message(nbytes: i64) -> None:
    """Start the budget of a message of ``nbytes`` bytes in this thread."""
    _state.left = PADDING_FLOOR + PADDING_PER_BYTE * nbytes


def spend_padding(cql_name: str, pos: i64, missing: i64, total: i64, udt: bool) -> None:
    """Draw ``missing`` padded fields (a value of ``cql_name`` at ``pos`` ending after
    ``total - missing`` of its ``total`` fields) from this thread's budget; a DecodeError
    when the message has used it up."""
    left: i64 = getattr(_state, "left", PADDING_FLOOR)
    left -= missing
    _state.left = left
    if left < 0:
        what = "fields" if udt else "components"
        raise malformed(cql_name, pos,
                        f"the value ends after {total - missing} of {total} {what}, and the "
                        f"missing trailing fields of the message exceed its padding budget "
                        f"({PADDING_FLOOR} + {PADDING_PER_BYTE} per byte of the message)")
