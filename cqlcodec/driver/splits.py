"""Token-range splits of a whole table: the unit of work of :func:`cqlcodec.driver.scan_table`.

::

    from cqlcodec.driver import plan_splits

    splits = plan_splits(session, "ks.events")          # list[TokenSplit], sorted by start
    splits[0]  # TokenSplit(start=-9223372036854775808, end=..., replicas=('127.0.0.1',), ...)

The ring of the Murmur3 partitioner is ``(-2**63, 2**63 - 1]``: every row's token lies in
it, and the token ranges of the driver's token map, ``(previous token, token]`` with the
range that wraps around cut in two, cover it exactly once. :func:`plan_splits` cuts those
ranges into pieces sized by ``system.size_estimates`` (evenly by token width when the
server has no estimates yet), merges contiguous pieces that share their replicas while
they stay below the target size, and then proves that the result covers the ring with no
gap and no overlap before anything is read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra.cluster import Session

from cqlcodec.driver.estimates import RING_MAX, RING_MIN, DensityProfile, SizeEstimate
from cqlcodec.errors import CodecError
from cqlcodec.types.names import CqlNameError, cql_name, cql_table_name, split_table_name

__all__ = ["MAX_TOKEN", "MIN_TOKEN", "SplitPlanError", "TableRef", "TokenSplit", "check_coverage",
           "plan_splits", "replicas_of", "table_ref"]

MIN_TOKEN: Final = RING_MIN
"""The Murmur3 ring's minimum token: never a row's token, the exclusive start of the ring."""
MAX_TOKEN: Final = RING_MAX
"""The Murmur3 ring's maximum token, the inclusive end of the ring."""
MURMUR3: Final = "org.apache.cassandra.dht.Murmur3Partitioner"
SPLITS_PER_CORE: Final = 8


class SplitPlanError(CodecError):
    """The splits of a table cannot be planned: unknown keyspace or table, a partitioner
    other than Murmur3, no token map, or splits that do not cover the ring exactly once."""


@dataclass(frozen=True)
class TokenSplit:
    """The token range ``(start, end]`` of one table read; picklable and hashable.

    ``replicas`` are the addresses (host IPs as ``str``) of the nodes that own the range,
    the first the preferred coordinator; ``estimated_rows`` and ``estimated_bytes`` come
    from ``system.size_estimates`` (partitions and their mean size) or are an even share
    of the table's estimate (0 when the server has none).
    """

    start: int
    end: int
    replicas: tuple[str, ...] = ()
    estimated_rows: int = 0
    estimated_bytes: int = 0

    def __post_init__(self) -> None:
        if not MIN_TOKEN <= self.start < self.end <= MAX_TOKEN:
            raise SplitPlanError(f"a split is a token range (start, end] with "
                                 f"{MIN_TOKEN} <= start < end <= {MAX_TOKEN}, "
                                 f"got ({self.start}, {self.end}]")

    @property
    def width(self) -> int:
        """How many tokens the split holds (``end - start``)."""
        return self.end - self.start

    def __str__(self) -> str:
        return f"token range ({self.start}, {self.end}]"


@dataclass(frozen=True)
class TableRef:
    """A table that exists, as the driver's schema metadata knows it."""

    keyspace: str
    name: str
    metadata: Any  # cassandra.metadata.TableMetadata

    @property
    def partition_key(self) -> list[str]:
        """The partition key column names, in key order."""
        return [c.name for c in self.metadata.partition_key]

    @property
    def column_names(self) -> list[str]:
        """Every column name of the table, in the driver's order (keys first)."""
        return list(self.metadata.columns)

    def __str__(self) -> str:
        """``ks.table`` as CQL writes it (names that keep their case quoted), so that
        it names this table when given back."""
        return cql_table_name(self.keyspace, self.name)


def _split_name(table: str, session_keyspace: str | None) -> tuple[str, str]:
    try:
        return split_table_name(table, session_keyspace)
    except CqlNameError as exc:
        raise SplitPlanError(str(exc)) from None


def table_ref(session: Session, table: str) -> TableRef:
    """The table ``table`` ("ks.table", or "table" in the session's keyspace; quoted names
    keep their case) from the driver's schema metadata (refreshed once if it is unknown);
    :class:`SplitPlanError` if the keyspace or the table does not exist."""
    keyspace, name = _split_name(table, session.keyspace)
    cluster = session.cluster
    for attempt in range(2):
        ks = cluster.metadata.keyspaces.get(keyspace)
        found = ks.tables.get(name) if ks is not None else None
        if found is not None:
            return TableRef(keyspace, name, found)
        if attempt == 0:
            try:
                cluster.refresh_schema_metadata()
            except Exception:  # noqa: BLE001 - an unreachable control connection: report the name
                break
    keyspaces = cluster.metadata.keyspaces
    if keyspaces.get(keyspace) is None:
        raise SplitPlanError(f"unknown keyspace {cql_name(keyspace)} (table {table!r})"
                             f"{_case_hint(keyspace, list(keyspaces))}")
    raise SplitPlanError(f"unknown table {cql_name(name)} in keyspace {cql_name(keyspace)}"
                         f"{_case_hint(name, list(keyspaces[keyspace].tables))}")


def _case_hint(name: str, known: list[str]) -> str:
    """``; did you mean "Name"`` for names that differ from ``name`` only in case (an
    unquoted name is folded to lower case: the quoted one keeps its case)."""
    alike = [cql_name(k) for k in known if k.lower() == name.lower() and k != name]
    return f"; did you mean {' or '.join(alike)} (quoted: it keeps its case)?" if alike else ""


def _token_map(session: Session) -> Any:
    metadata = session.cluster.metadata
    partitioner = metadata.partitioner
    if partitioner != MURMUR3:
        raise SplitPlanError(f"the cluster's partitioner is {partitioner}: only "
                             f"{MURMUR3} is supported for table scans")
    token_map = metadata.token_map
    if token_map is None or not token_map.ring:
        raise SplitPlanError("the driver has no token map (Cluster(token_metadata_enabled="
                             "False)?): cannot plan the splits of a table")
    return token_map


def replicas_of(session: Session, keyspace: str, end: int) -> list[Any]:
    """The driver ``Host`` objects that own token ``end`` in ``keyspace`` (the replicas
    of a split ending there), in the token map's order; ``[]`` if there is no token map."""
    token_map = session.cluster.metadata.token_map
    if token_map is None:
        return []
    return list(token_map.get_replicas(keyspace, token_map.token_class(end)))


def _address(host: Any) -> str:
    address = getattr(host, "address", None)
    return str(address if address is not None else host.endpoint)


def _ring_ranges(session: Session, keyspace: str) -> list[tuple[int, int, tuple[str, ...]]]:
    token_map = _token_map(session)
    tokens = sorted({int(t.value) for t in token_map.ring})
    bounds = [MIN_TOKEN, *tokens, MAX_TOKEN]
    ranges: list[tuple[int, int, tuple[str, ...]]] = []
    for start, end in zip(bounds, bounds[1:]):
        if start == end:
            continue
        owner = end if end != MAX_TOKEN or end in tokens else tokens[0]
        hosts = replicas_of(session, keyspace, owner)
        ranges.append((start, end, tuple(_address(h) for h in hosts)))
    return ranges


def _size_estimates(session: Session, ref: TableRef) -> DensityProfile:
    """The table's spread over the ring from the coordinator's ``system.size_estimates``
    (an even spread, no estimate, when it has none for the table)."""
    try:
        rows = list(session.execute(
            "SELECT range_start, range_end, partitions_count, mean_partition_size "
            "FROM system.size_estimates WHERE keyspace_name = %s AND table_name = %s",
            (ref.keyspace, ref.name)))
    except Exception:  # noqa: BLE001 - estimates are a hint: plan evenly without them
        rows = []
    return DensityProfile([SizeEstimate(int(r[0]), int(r[1]), int(r[2] or 0), int(r[3] or 0))
                           for r in rows])


def default_split_count(session: Session) -> int:
    """How many splits :func:`plan_splits` makes by default: 8 per core (the client's core
    count stands for each node's) times the nodes that are up."""
    hosts = [h for h in session.cluster.metadata.all_hosts() if h.is_up is not False]
    return SPLITS_PER_CORE * (os.cpu_count() or 1) * max(1, len(hosts))


def plan_splits(session: Session, table: str, splits: int | None = None) -> list[TokenSplit]:
    """The token-range splits of ``table`` ("ks.table", or "table" with the session's
    keyspace), sorted by start, covering the ring ``(-2**63, 2**63 - 1]`` exactly once.

    ``splits`` is the number of splits wanted (at least that many are made: a split never
    spans two replica sets, so there are more where the ring's owners change); by default
    :func:`default_split_count`. The ring is cut where the replicas change and at
    ``splits - 1`` points that give the pieces equal estimated partitions by the
    coordinator's ``system.size_estimates`` (equal token widths where it has no
    estimate, which Murmur3's even hashing makes equal sizes on average); contiguous
    ring ranges with the same replicas and no cut between them stay together.
    ``estimated_rows`` and ``estimated_bytes`` come from the same estimates (the ranges
    of other nodes at the mean density), 0 when the server has none for the table yet.
    Raises :class:`SplitPlanError` for an unknown keyspace or table, a partitioner other
    than Murmur3, or a plan that fails the coverage check.
    """
    if splits is not None and splits < 1:
        raise ValueError(f"splits must be at least 1, got {splits}")
    ref = table_ref(session, table)
    ranges = _ring_ranges(session, ref.keyspace)
    wanted = splits if splits is not None else default_split_count(session)
    profile = _size_estimates(session, ref)
    cuts = profile.cuts(wanted)
    cut_at = set(cuts)
    pieces: list[tuple[int, int, tuple[str, ...]]] = []

    def add(lo: int, hi: int, replicas: tuple[str, ...]) -> None:
        if pieces and pieces[-1][2] == replicas and pieces[-1][1] == lo and lo not in cut_at:
            pieces[-1] = (pieces[-1][0], hi, replicas)  # same replicas, no cut point: one split
        else:
            pieces.append((lo, hi, replicas))

    at = 0
    for start, end, replicas in ranges:
        while at < len(cuts) and cuts[at] <= start:
            at += 1
        lo = start
        while at < len(cuts) and cuts[at] < end:
            add(lo, cuts[at], replicas)
            lo = cuts[at]
            at += 1
        add(lo, end, replicas)
    plan: list[TokenSplit] = []
    for start, end, replicas in pieces:
        turn = len(plan) % len(replicas) if replicas else 0  # spread the preferred replica
        plan.append(TokenSplit(start, end, replicas[turn:] + replicas[:turn],
                               round(profile.rows(start, end)), round(profile.bytes(start, end))))
    check_coverage(plan)
    return plan


def check_coverage(splits: Sequence[TokenSplit], *, whole_ring: bool = True) -> None:
    """Prove that ``splits`` (sorted by start) do not overlap and, with ``whole_ring``,
    that they cover ``(-2**63, 2**63 - 1]`` with no gap; :class:`SplitPlanError` naming
    the first gap or overlap otherwise."""
    if not splits:
        raise SplitPlanError("no splits: the ring (-2**63, 2**63 - 1] is not covered")
    ordered = sorted(splits, key=lambda s: (s.start, s.end))
    if whole_ring and ordered[0].start != MIN_TOKEN:
        raise SplitPlanError(f"gap in the splits: ({MIN_TOKEN}, {ordered[0].start}] "
                             f"is in no split")
    for before, after in zip(ordered, ordered[1:]):
        if after.start < before.end:
            raise SplitPlanError(f"overlap in the splits: {before} and {after}")
        if whole_ring and after.start > before.end:
            raise SplitPlanError(f"gap in the splits: ({before.end}, {after.start}] is in no split")
    if whole_ring and ordered[-1].end != MAX_TOKEN:
        raise SplitPlanError(f"gap in the splits: ({ordered[-1].end}, {MAX_TOKEN}] is in no split")
