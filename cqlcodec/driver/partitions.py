"""How the Dask and Ray sources turn a table's splits into partitions (tasks).

Partitions are sized by the splits' estimated rows, which come from the server's
``system.size_estimates``. Those estimates cover flushed data only and are refreshed
every few minutes, so a table loaded a moment ago has none (0 rows). Where the splits
carry no estimate at all, the partitions fall back to the splits themselves, and the
decision is logged (logger ``cqlcodec.driver``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from cqlcodec.driver.splits import TokenSplit

__all__ = ["estimates_usable", "even_groups", "fallback_split_count"]

_log: Final = logging.getLogger("cqlcodec.driver")
# partitions per worker when the estimates cannot size them: two, so that a worker
# finishing early takes over part of the work of a slower one
PARTITIONS_PER_WORKER: Final = 2


def estimates_usable(splits: Sequence[TokenSplit], table: str, engine: str) -> bool:
    """Whether the splits' estimated rows can size partitions: False (and logged) when
    the server estimated no row for the table, which is the case for a table loaded
    since the last refresh of ``system.size_estimates`` or never flushed."""
    if sum(s.estimated_rows for s in splits) > 0:
        return True
    _log.info("%s: no size estimates for %s yet (system.size_estimates gives 0 rows; the "
              "server refreshes them every few minutes, from flushed data only): one "
              "partition per split, %d partitions", engine, table, len(splits))
    return False


def fallback_split_count(default: int, workers: int) -> int:
    """How many splits to plan so that partitions of one split each give every worker
    at least :data:`PARTITIONS_PER_WORKER`: the planner's ``default`` or more."""
    return max(default, PARTITIONS_PER_WORKER * max(1, workers))


def even_groups(splits: Sequence[TokenSplit], count: int) -> list[tuple[TokenSplit, ...]]:
    """``splits`` in ``count`` contiguous runs of about the same number of splits (at
    most one run per split, at least one run)."""
    n = len(splits)
    wanted = max(1, min(count, n))
    return [tuple(splits[i * n // wanted:(i + 1) * n // wanted]) for i in range(wanted)]
