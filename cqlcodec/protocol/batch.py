"""Rows bound to one prepared statement, grouped and encoded as the statements of BATCH bodies.

A BATCH body is ``[byte] type``, ``[short] n``, n statements, then the consistency and
flags. A prepared statement in it is ``[byte] 1``, ``[short bytes] id`` and the values
block of :meth:`~cqlcodec.protocol.prepared.Bound.values_block`.
:func:`batch_statements` writes ``[short] n`` and the statements of many rows in one
call; grouping rows (by the ring range that owns them, or by partition) and cutting the
groups into batches of a bounded size are here too, so that a bulk write costs Python
work per batch, not per row.
"""

from __future__ import annotations

from typing import Callable, Final

from cqlcodec.errors import BindValueError
from cqlcodec.protocol.prepared import Bound
from cqlcodec.runtime.buffers import BytesWriter

__all__ = ["NO_KEY", "batch_statements", "key_slots", "plan_batches", "ring_slots",
           "value_bytes"]

NO_KEY: Final = -1
"""The slot of a row that has no routing key (a null partition-key value)."""
MAX_STATEMENTS: Final = 0xFFFF


def batch_statements(query_id: bytes, bounds: list[Bound]) -> bytes:
    """``[short] n`` and the n statements of a BATCH body: prepared statement
    ``query_id`` with the values of each of the n ``bounds``."""
    n = len(bounds)
    if n > MAX_STATEMENTS:
        raise BindValueError(f"{n} statements cannot be sent in one batch (max 65535)")
    id_size = len(query_id)
    if id_size > 0xFFFF:
        raise BindValueError(f"a statement id of {id_size} bytes is too long (max 65535)")
    head = BytesWriter()
    head.append(1)
    head.append((id_size >> 8) & 0xFF)
    head.append(id_size & 0xFF)
    head.write(query_id)
    statement = head.getvalue()
    w = BytesWriter()
    w.append((n >> 8) & 0xFF)
    w.append(n & 0xFF)
    for b in bounds:
        w.write(statement)
        w.write(b.values_block())
    return w.getvalue()


def ring_slots(bounds: list[Bound], token_of: Callable[[bytes], int], ring: list[int],
               owner_of_range: list[int]) -> list[int]:
    """For each row, the owner of its token: ``owner_of_range[j]`` for the first ``j``
    with ``token <= ring[j]`` (``ring`` sorted; a token past the last one wraps to range
    0), :data:`NO_KEY` for a row without a routing key. ``token_of`` hashes a routing
    key to its token (the driver's partitioner)."""
    out: list[int] = []
    size = len(ring)
    for b in bounds:
        key = _key_of(b)
        if key is None or size == 0:
            out.append(NO_KEY)
            continue
        token = token_of(key)
        lo = 0
        hi = size
        while lo < hi:
            mid = (lo + hi) >> 1
            if ring[mid] < token:
                lo = mid + 1
            else:
                hi = mid
        out.append(owner_of_range[lo if lo < size else 0])
    return out


def key_slots(bounds: list[Bound]) -> list[int]:
    """For each row, a number shared by the rows of the same partition (same routing
    key), :data:`NO_KEY` for a row without a routing key."""
    seen: dict[bytes, int] = {}
    out: list[int] = []
    for b in bounds:
        key = _key_of(b)
        if key is None:
            out.append(NO_KEY)
            continue
        slot = seen.get(key)
        if slot is None:
            slot = len(seen)
            seen[key] = slot
        out.append(slot)
    return out


def _key_of(b: Bound) -> bytes | None:
    """The row's routing key; None when it has none (no key columns, or a null one)."""
    try:
        return b.routing_key
    except BindValueError:
        return None


def value_bytes(bounds: list[Bound]) -> list[int]:
    """For each row, the bytes of its non-null values; -1 for a row holding an unset value."""
    out: list[int] = []
    for b in bounds:
        total = 0
        for v in b.values:
            if isinstance(v, bytes):
                total += len(v)
            elif v is not None:
                total = -1
                break
        out.append(total)
    return out


def plan_batches(slots: list[int], sizes: list[int], budget: int) -> list[list[int]]:
    """The rows (indices) of each slot, in the order slots first appear, cut into batches
    whose ``sizes`` add up to at most ``budget`` (a larger row goes alone) and of at most
    65,535 rows; rows of slot :data:`NO_KEY` are left out."""
    groups: dict[int, list[int]] = {}
    order: list[int] = []
    for i in range(len(slots)):
        slot = slots[i]
        if slot == NO_KEY:
            continue
        members = groups.get(slot)
        if members is None:
            members = []
            groups[slot] = members
            order.append(slot)
        members.append(i)
    batches: list[list[int]] = []
    for slot in order:
        current: list[int] = []
        used = 0
        for i in groups[slot]:
            size = sizes[i]
            if current and (used + size > budget or len(current) >= MAX_STATEMENTS):
                batches.append(current)
                current = []
                used = 0
            current.append(i)
            used += size
        if current:
            batches.append(current)
    return batches
