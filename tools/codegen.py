"""The command line shared by the code generators (tools/gen_*.py).

``write_or_check(argv, target, text, script)``: without ``--check`` write ``text`` to
``target`` if it differs; with ``--check`` write nothing and return 1 (naming the
script to run) when the checked-in file is not ``text``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def write_or_check(argv: list[str] | None, target: Path, text: str, script: str,
                   description: str) -> int:
    """Exit status of a generator run (see the module docstring)."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=description)
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 if the file is not what this script makes")
    args = parser.parse_args(argv)
    current = target.read_text() if target.exists() else ""
    if args.check:
        if current != text:
            print(f"{target} is out of date: run python tools/{script}", file=sys.stderr)
            return 1
        return 0
    if current != text:
        target.write_text(text)
    return 0
