"""JSON state files that a killed process never leaves half written: the manifest of an
unload, the state of a copy. Written to a temporary file beside the target (its name
holds :data:`TEMP_MARK`), flushed to disk, then renamed over the target.

:class:`SplitsState` is what both keep: a header saying what the work is, the planned
splits and, per split finished, what it gave."""

from __future__ import annotations

import json
import os
import threading
from typing import Any, ClassVar, Final

TEMP_MARK: Final = ".tmp-"


def read_json(path: str) -> Any:
    """The JSON document in ``path``; None when there is no such file (``OSError`` or
    ``ValueError`` when it cannot be read)."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path: str, data: Any) -> None:
    """Writes ``data`` to ``path`` atomically (a temporary file, fsync, rename)."""
    temp = f"{path}{TEMP_MARK}{os.getpid()}"
    with open(temp, "w", encoding="utf-8") as f:
        # json.dumps, not json.dump: only a one-shot encoding runs json's C encoder
        f.write(json.dumps(data, separators=(",", ":")))
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)


class SplitsState:
    """The state of a work done split by split, kept in the file :attr:`FILE_NAME` of
    ``directory``: ``header`` (what the work is, under the key :attr:`KIND`), the planned
    ``splits`` and ``done`` (split index as text -> what it gave). Subclasses name the
    file and the key."""

    FILE_NAME: ClassVar[str] = "_state.json"
    KIND: ClassVar[str] = "work"

    def __init__(self, directory: str, header: dict[str, Any], splits: list[Any],
                 done: dict[str, Any]) -> None:
        self.directory = directory
        self.header = header
        self.splits = splits
        self.done = done
        self._lock = threading.Lock()

    @property
    def path(self) -> str:
        """The state file's path."""
        return os.path.join(self.directory, self.FILE_NAME)

    @classmethod
    def read(cls, directory: str) -> dict[str, Any] | None:
        """The document in ``directory``'s state file (None when there is none)."""
        found = read_json(os.path.join(directory, cls.FILE_NAME))
        return None if found is None else dict(found)

    def finish(self, index: int, what: Any) -> None:
        """Records split ``index`` as finished, having given ``what``, and saves."""
        with self._lock:
            self.done[str(index)] = what
            self.save()

    def save(self) -> None:
        """Writes the state file atomically."""
        write_json(self.path, {self.KIND: self.header, "splits": self.splits_document(),
                               "done": self.done})

    def splits_document(self) -> list[Any]:
        """The splits as JSON values (as they are, by default)."""
        return list(self.splits)
