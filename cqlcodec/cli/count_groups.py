"""``count --by host|range|partition``: the rows of a table per replica host, per
token range (the splits the scan reads) or per partition (the largest ``--top``).

Range and host counts come from the per-split ``count(*)`` of ``count`` itself: a host's
count is the sum of the splits it is a replica of (with a replication factor above 1 a
row counts once for each of its replicas). Partition counts come from
``SELECT key, count(*) ... GROUP BY key`` over the same splits, each on a replica.
"""

from __future__ import annotations

import heapq
import json
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["PartitionCounter", "by_host", "by_range", "render"]


def by_range(splits: Sequence[Any], counts: dict[int, int]) -> list[tuple[Any, int]]:
    """``((start, end), rows)`` per split, in token order."""
    return [((s.start, s.end), counts.get(i, 0)) for i, s in enumerate(splits)]


def by_host(splits: Sequence[Any], counts: dict[int, int]) -> list[tuple[Any, int]]:
    """``(address, rows)`` per replica host, most rows first."""
    hosts: dict[str, int] = {}
    for i, s in enumerate(splits):
        for address in s.replicas or ("?",):
            hosts[address] = hosts.get(address, 0) + counts.get(i, 0)
    return sorted(hosts.items(), key=lambda item: (-item[1], item[0]))


class PartitionCounter:
    """The row count of every partition of the splits it is given, keeping the ``top``
    largest (ties: the first seen)."""

    def __init__(self, session: Any, ref: Any, top: int, consistency_level: int) -> None:
        from cqlcodec.driver.scan import protect_name

        self.session = session
        self.key_names = list(ref.partition_key)
        key = ", ".join(protect_name(k) for k in self.key_names)
        self.statement = session.prepare(
            f"SELECT {key}, count(*) FROM {protect_name(ref.keyspace)}."
            f"{protect_name(ref.name)} WHERE token({key}) > ? AND token({key}) <= ? "
            f"GROUP BY {key}")
        self.statement.consistency_level = consistency_level
        self.statement.fetch_size = 5000
        self.top = top
        self._heap: list[tuple[int, int, tuple[Any, ...]]] = []
        self._seen = 0
        self._lock = threading.Lock()

    def count_split(self, split: Any, host: Any) -> int:
        """Counts the partitions of one split; returns its rows."""
        rows = 0
        width = len(self.key_names)
        for row in self.session.execute(self.statement, (split.start, split.end), host=host):
            n = int(row[width])
            rows += n
            with self._lock:
                self._seen += 1
                item = (n, -self._seen, tuple(row[:width]))
                if len(self._heap) < self.top:
                    heapq.heappush(self._heap, item)
                elif item > self._heap[0]:
                    heapq.heapreplace(self._heap, item)
        return rows

    def largest(self) -> list[tuple[Any, int]]:
        """``(key values, rows)`` of the largest partitions, most rows first."""
        return [(key, n) for n, _, key in sorted(self._heap, reverse=True)]


def render(by: str, groups: list[tuple[Any, int]], key_names: Sequence[str],
           as_json: bool) -> str:
    """The groups as text lines (the group, then its row count as the last number) or as
    one JSON document."""
    if as_json:
        if by == "host":
            data: list[dict[str, Any]] = [{"host": g, "rows": n} for g, n in groups]
        elif by == "range":
            data = [{"start": g[0], "end": g[1], "rows": n} for g, n in groups]
        else:
            data = [{"key": {k: _json_value(v) for k, v in zip(key_names, g)}, "rows": n}
                    for g, n in groups]
        return json.dumps({"by": by, "groups": data}, indent=1)
    lines = []
    for group, n in groups:
        if by == "host":
            label = str(group)
        elif by == "range":
            label = f"({group[0]}, {group[1]}]"
        else:
            label = " ".join(str(v) for v in group)
        lines.append(f"{label} {n}")
    return "\n".join(lines)


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    return str(value)
