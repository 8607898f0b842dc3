"""JSON state files that a killed process never leaves half written: the manifest of an
unload, the state of a copy. Written to a temporary file beside the target (its name
holds :data:`TEMP_MARK`), flushed to disk, then renamed over the target."""

from __future__ import annotations

import json
import os
from typing import Any, Final

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
