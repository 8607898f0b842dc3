"""Differences kept on disk between a diff's phases, so that ``recheck``, ``fix`` and
``delete_extra`` hold a bounded number of them in memory however many the tables have.

A :class:`DifferenceSpill` holds up to a chunk of differences in memory; beyond that it
writes them all to an anonymous temporary file (gone when closed or when the process
ends) that only this process reads: each group added is one pickle of the differences'
fields as plain tuples (several times cheaper than JSON). They are read back in chunks
in the order added.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, Any

from cqlcodec.driver.diff_read import Difference

__all__ = ["CHUNK", "DifferenceSpill"]

CHUNK = 10_000  # differences rechecked, fixed or handed on at a time


class DifferenceSpill:
    """Differences kept in memory up to ``limit``, beyond it all of them in a temporary
    file (in ``directory``, else the system's temporary directory), and read back in
    chunks."""

    def __init__(self, directory: str | os.PathLike[str] | None = None,
                 limit: int = CHUNK) -> None:
        self._directory = directory
        self._limit = limit
        self._held: list[Difference] = []
        self._file: IO[bytes] | None = None
        self.count = 0

    @property
    def on_disk(self) -> bool:
        """Whether the differences went to the file."""
        return self._file is not None

    def add(self, differences: Iterable[Difference]) -> None:
        """Appends ``differences``."""
        found = list(differences)
        self.count += len(found)
        f = self._file
        if f is None:
            self._held.extend(found)
            if len(self._held) <= self._limit:
                return
            f = self._file = tempfile.TemporaryFile(dir=self._directory,
                                                    prefix="cqlcodec-diff-")
            found, self._held = self._held, []
        if found:
            f.seek(0, os.SEEK_END)  # after a read left part way
            pickle.dump([(d.kind, d.key, d.columns, d.token, d.partition) for d in found], f,
                        pickle.HIGHEST_PROTOCOL)

    def chunks(self, size: int = CHUNK) -> Iterator[list[Difference]]:
        """Every difference added so far, in the order added, in chunks of ``size`` or
        more: the differences of one token (added together, as a split's are) stay in one
        chunk, so a recheck or a fix reads each partition once."""
        chunk: list[Difference] = []
        for d in self._added():
            if len(chunk) >= size and d.token != chunk[-1].token:
                yield chunk
                chunk = []
            chunk.append(d)
        if chunk:
            yield chunk

    def _added(self) -> Iterator[Difference]:
        f = self._file
        if f is None:
            yield from self._held[:len(self._held)]
            return
        f.flush()
        at = 0
        end = f.seek(0, os.SEEK_END)
        while at < end:
            f.seek(at)  # where this read stands, whatever was added meanwhile
            group: list[Any] = pickle.load(f)
            at = f.tell()
            for kind, key, columns, token, partition in group:
                yield Difference(kind, key, columns, token, partition)

    def close(self) -> None:
        """Removes the file."""
        if self._file is not None:
            self._file.close()
        self._held = []

    def __enter__(self) -> DifferenceSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
