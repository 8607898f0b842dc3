"""CQL values as JSON and back, exactly: the value mapping of the ``jsonl`` format of
``cqlcodec unload`` / ``load`` (one JSON object per row, keys the column names).

=====================================  ============================================
CQL type                               JSON
=====================================  ============================================
null                                   ``null``
boolean                                ``true`` / ``false``
tinyint, smallint, int, bigint,        number (integer, every digit)
varint, counter
float, double                          number (shortest text that reads back to the
                                       same bits); ``"NaN"``, ``"Infinity"``,
                                       ``"-Infinity"``
decimal                                string, the exact decimal text (``"1.50"``)
text, varchar, ascii                   string
blob                                   string, ``"0x"`` and lowercase hex
uuid, timeuuid                         string, the standard form
inet                                   string (``"10.0.0.1"``, ``"::1"``)
timestamp                              string, ``"2024-05-17T10:00:00.123Z"`` (UTC,
                                       milliseconds); a year outside 0-9999 signed, as
                                       Java writes it (``"+15659-07-15T00:00:00.000Z"``,
                                       ``"-0768-02-04T00:00:00.000Z"``). Read: any form
                                       of :mod:`cqlcodec.driver.time_text` (without a
                                       zone, in the load's time zone)
date                                   string ``"2024-05-17"``; a year outside 0-9999
                                       signed (``"-0768-02-04"``). Read: also days
                                       since 1970-01-01 (a number), a datetime at
                                       midnight
time                                   string ``"10:00:00.000000123"`` (nanoseconds)
duration                               object ``{"months": m, "days": d,
                                       "nanoseconds": n}``
list, set, vector, tuple               array (a set in the server's order)
map                                    object when the key type is text, varchar or
                                       ascii; otherwise an array of ``[key, value]``
                                       pairs
user-defined type                      object, one key per field (``null`` fields
                                       included)
=====================================  ============================================
"""

from __future__ import annotations

import datetime
import ipaddress
import math
import uuid
from decimal import Decimal
from typing import Any, Final

from cqlcodec import kinds as K
from cqlcodec.driver.iso_text import date_text, timestamp_text
from cqlcodec.driver.time_text import UTC, date_days, timestamp_ms
from cqlcodec.types.model import CqlType
from cqlcodec.values import Date, Duration, Time

__all__ = ["from_json", "to_json"]

_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_DAY: Final = datetime.date(1970, 1, 1).toordinal()
_TEXT_KINDS: Final = (K.TEXT, K.ASCII)
_SPECIAL_FLOATS: Final = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_NS_PER_S: Final = 1_000_000_000
_ONE_MS: Final = datetime.timedelta(milliseconds=1)


def to_json(value: Any, t: CqlType) -> Any:
    """``value`` (as cqlcodec or the driver decodes it) of CQL type ``t`` as a value
    ``json.dumps`` writes (see the module docstring for the mapping)."""
    if value is None:
        return None
    t = t.unwrapped()
    kind = t.kind
    if kind in (K.LIST, K.SET, K.VECTOR):
        element = t.subtypes[0]
        return [to_json(v, element) for v in value]
    if kind == K.MAP:
        key_type, value_type = t.subtypes
        items = value.items() if hasattr(value, "items") else value
        if key_type.unwrapped().kind in _TEXT_KINDS:
            return {k: to_json(v, value_type) for k, v in items}
        return [[to_json(k, key_type), to_json(v, value_type)] for k, v in items]
    if kind == K.TUPLE:
        return [to_json(v, s) for v, s in zip(value, t.subtypes)]
    if kind == K.UDT:
        fields = value.items() if isinstance(value, dict) else zip(t.field_names, value)
        types = dict(t.fields)
        return {name: to_json(v, types[name]) for name, v in fields}
    return _scalar_to_json(value, kind)


def _scalar_to_json(value: Any, kind: int) -> Any:
    if isinstance(value, bool):  # before int: a compiled int check would make it 1
        return value
    if isinstance(value, int) and kind not in (K.TIMESTAMP, K.DATE, K.TIME):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex()
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return timestamp_text((value - _EPOCH) // _ONE_MS)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, Date):
        return date_text(value.days)
    if isinstance(value, int) and kind == K.TIMESTAMP:
        return timestamp_text(value)
    if isinstance(value, int) and kind == K.TIME:  # nanoseconds (read from Arrow)
        return str(Time(value))
    if isinstance(value, Time):
        return str(value)
    if isinstance(value, datetime.time):
        return f"{value.strftime('%H:%M:%S')}.{value.microsecond * 1000:09d}"
    if isinstance(value, Duration):
        return {"months": value.months, "days": value.days, "nanoseconds": value.nanoseconds}
    if hasattr(value, "months") and hasattr(value, "nanoseconds"):  # the driver's Duration
        return {"months": value.months, "days": value.days, "nanoseconds": value.nanoseconds}
    if hasattr(value, "nanosecond_time"):  # the driver's util.Time
        return str(Time(int(value.nanosecond_time)))
    if hasattr(value, "days_from_epoch"):  # the driver's util.Date
        return _scalar_to_json(_date_of_days(int(value.days_from_epoch)), kind)
    if isinstance(value, int):  # timestamps, dates, times as raw numbers
        return value
    return str(value)  # decimal, uuid, inet, text


def _date_of_days(days: int) -> Any:
    try:
        return datetime.date.fromordinal(_EPOCH_DAY + days)
    except (ValueError, OverflowError):
        return Date(days)


def from_json(obj: Any, t: CqlType, time_zone: datetime.tzinfo = UTC) -> Any:
    """The value to bind for CQL type ``t`` from its JSON form ``obj`` (the inverse of
    :func:`to_json`); timestamps written without a zone are wall times in
    ``time_zone``. ``ValueError`` for a value of the wrong shape
    (:class:`~cqlcodec.driver.time_text.TimeTextError` for a timestamp or date)."""
    if obj is None:
        return None
    t = t.unwrapped()
    kind = t.kind
    if kind in (K.LIST, K.SET, K.VECTOR):
        element = t.subtypes[0]
        return [from_json(v, element, time_zone) for v in _array(obj, t)]
    if kind == K.MAP:
        key_type, value_type = t.subtypes
        items = obj.items() if isinstance(obj, dict) else _array(obj, t)
        return {_hashable(from_json(k, key_type, time_zone)): from_json(v, value_type, time_zone)
                for k, v in items}
    if kind == K.TUPLE:
        return tuple(from_json(v, s, time_zone) for v, s in zip(_array(obj, t), t.subtypes))
    if kind == K.UDT:
        if not isinstance(obj, dict):
            raise ValueError(f"expected a JSON object for {t.cql_name}, got {obj!r}")
        types = dict(t.fields)
        unknown = [k for k in obj if k not in types]
        if unknown:
            raise ValueError(f"{t.cql_name} has no field(s) {', '.join(unknown)}")
        return {name: from_json(v, types[name], time_zone) for name, v in obj.items()}
    return _scalar_from_json(obj, kind, t, time_zone)


def _array(obj: Any, t: CqlType) -> list[Any]:
    if not isinstance(obj, list):
        raise ValueError(f"expected a JSON array for {t.cql_name}, got {obj!r}")
    return obj


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(value.items())
    return value


def _scalar_from_json(obj: Any, kind: int, t: CqlType, time_zone: datetime.tzinfo) -> Any:
    if kind in (K.FLOAT, K.DOUBLE) and isinstance(obj, str):
        if obj not in _SPECIAL_FLOATS:
            raise ValueError(f"{obj!r} is no {t.cql_name}")
        return _SPECIAL_FLOATS[obj]
    if kind == K.DECIMAL:
        return Decimal(str(obj))
    if kind == K.BLOB:
        text = str(obj)
        return bytes.fromhex(text[2:] if text[:2].lower() == "0x" else text)
    if kind in (K.UUID, K.TIMEUUID):
        return uuid.UUID(str(obj))
    if kind == K.INET:
        return ipaddress.ip_address(str(obj))
    if kind == K.TIMESTAMP:
        return obj if isinstance(obj, int) else timestamp_ms(str(obj), time_zone)
    if kind == K.DATE:
        return Date(obj if isinstance(obj, int) else date_days(str(obj)))
    if kind == K.TIME:
        if isinstance(obj, int):
            return Time(obj)
        return Time(_nanoseconds_of(str(obj)))
    if kind == K.DURATION:
        if not isinstance(obj, dict):
            raise ValueError(f"expected an object with months, days, nanoseconds, got {obj!r}")
        return Duration(int(obj.get("months", 0)), int(obj.get("days", 0)),
                        int(obj.get("nanoseconds", 0)))
    return obj


def _nanoseconds_of(text: str) -> int:
    clock, _, fraction = text.partition(".")
    hours, minutes, seconds = (int(p) for p in clock.split(":"))
    nanos = int((fraction + "000000000")[:9]) if fraction else 0
    return ((hours * 60 + minutes) * 60 + seconds) * _NS_PER_S + nanos
