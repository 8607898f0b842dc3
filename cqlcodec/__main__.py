"""``python -m cqlcodec``: the command line lives in :mod:`cqlcodec.cli`."""

from __future__ import annotations

import sys

from cqlcodec.cli.codec_commands import UsageError, parse_hex, parse_value
from cqlcodec.cli.main import build_parser, main

__all__ = ["UsageError", "build_parser", "main", "parse_hex", "parse_value"]

if __name__ == "__main__":
    sys.exit(main())
