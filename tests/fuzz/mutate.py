"""Mutations of valid inputs: bit flips, truncation, length words set to hostile values.

Every mutation returns the new bytes and a short description for reports.
Length-word mutations aim at the :class:`~fuzz.refwire.Slot` positions the
generators recorded, with the values that break decoders: -3, -2, -1, 0,
off-by-one, 2**31-1 over a short buffer, the most negative int, and so on.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Sequence

from .refwire import Slot, uvint_bytes

INT_SPECIALS: tuple[int, ...] = (-3, -2, -1, 0, 1, 2, 3, 4, 0x7FFFFFFF, 0x7FFFFFFE, 0x7FFFFFF0,
                                 0x40000000, 0x10000, -0x80000000, -0x7FFFFFFF, 0xFFFF, 0x8000)
SHORT_SPECIALS: tuple[int, ...] = (0, 1, 2, 0xFFFF, 0xFFFE, 0x8000, 0x7FFF, 0x100)
UVINT_SPECIALS: tuple[bytes, ...] = (
    b"\xff" * 9, b"\xff\x7f" + b"\xff" * 7, b"\xff\x80" + b"\x00" * 7, b"\xfe" + b"\xff" * 7,
    b"\x80", b"\xc0", b"\xff", b"\x7f", b"\x00", b"\x80\x00", b"\xf0\x7f\xff\xff\xff",
    uvint_bytes(1 << 31), uvint_bytes((1 << 63) - 1), uvint_bytes(1 << 63),
)


def _word(data: bytes, slot: Slot) -> int:
    raw = data[slot.offset:slot.offset + slot.width]
    if slot.kind == "int" and len(raw) == 4:
        v: int = struct.unpack(">i", raw)[0]
        return v
    if slot.kind == "short" and len(raw) == 2:
        w: int = struct.unpack(">H", raw)[0]
        return w
    return 0


def set_slot(data: bytes, slot: Slot, rng: random.Random) -> tuple[bytes, str]:
    """Overwrite one length word/count/vint with a hostile value."""
    cur = _word(data, slot)
    if slot.kind == "int":
        choice = rng.choice(INT_SPECIALS + (cur + 1, cur - 1, cur * 2 + 1, len(data),
                                            len(data) - slot.offset - 4 + 1))
        choice = max(-0x80000000, min(0x7FFFFFFF, choice))
        new = struct.pack(">i", choice)
    elif slot.kind == "short":
        choice = rng.choice(SHORT_SPECIALS + ((cur + 1) & 0xFFFF, (cur - 1) & 0xFFFF))
        new = struct.pack(">H", choice)
    else:
        new = rng.choice(UVINT_SPECIALS)
        choice = -1
    out = data[:slot.offset] + new + data[slot.offset + slot.width:]
    return out, f"{slot.kind}@{slot.offset}={choice if choice != -1 else new.hex()}"


def truncate(data: bytes, at: int) -> tuple[bytes, str]:
    return data[:at], f"truncate@{at}"


def mutate(data: bytes, slots: Sequence[Slot], rng: random.Random,
           donors: Sequence[bytes] = ()) -> tuple[bytes, str]:
    """One random mutation (sometimes two stacked)."""
    out, desc = _one(data, slots, rng, donors)
    if rng.random() < 0.2:
        out2, desc2 = _one(out, [s for s in slots if s.offset + s.width <= len(out)], rng, donors)
        return out2, desc + "+" + desc2
    return out, desc


def _one(data: bytes, slots: Sequence[Slot], rng: random.Random,
         donors: Sequence[bytes]) -> tuple[bytes, str]:
    op = rng.random()
    n = len(data)
    if slots and op < 0.35:
        return set_slot(data, rng.choice(slots), rng)
    if op < 0.5:
        return truncate(data, rng.randrange(n + 1) if n else 0)
    if n and op < 0.65:
        buf = bytearray(data)
        flips = rng.choice([1, 1, 2, 4])
        where = []
        for _i in range(flips):
            i = rng.randrange(n)
            bit = rng.randrange(8)
            buf[i] ^= 1 << bit
            where.append(f"{i}.{bit}")
        return bytes(buf), "flip@" + ",".join(where)
    if n and op < 0.72:
        i = rng.randrange(n)
        v = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        return data[:i] + bytes([v]) + data[i + 1:], f"set@{i}={v}"
    if op < 0.79:
        i = rng.randrange(n + 1)
        ins = rng.randbytes(rng.choice([1, 2, 4, 7]))
        return data[:i] + ins + data[i:], f"insert@{i}:{ins.hex()}"
    if n and op < 0.86:
        i = rng.randrange(n)
        j = min(n, i + rng.choice([1, 2, 4, 9]))
        return data[:i] + data[j:], f"delete@{i}:{j}"
    if n and op < 0.9:
        i = rng.randrange(n)
        j = min(n, i + rng.randint(1, 16))
        return data[:j] + data[i:j] + data[j:], f"dup@{i}:{j}"
    if donors and op < 0.95:
        d = rng.choice(donors)
        i = rng.randrange(n + 1)
        k = rng.randrange(len(d) + 1)
        return data[:i] + d[k:], f"splice@{i}<-{k}"
    tail = rng.choice([b"\x00", b"\xff", b"\x00\x00\x00\x01", rng.randbytes(5)])
    return data + tail, f"append:{tail.hex()}"
