"""``python -m cqlcodec``: the command line lives in :mod:`cqlcodec.cli`."""

from __future__ import annotations

import os
import sys

# The commands use no linear algebra; numpy (imported by pyarrow) would otherwise start
# OpenBLAS's thread pool, whose idle threads spin for about 0.1 s of CPU per command.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Arrow's default allocator, mimalloc, keeps what each thread freed in that thread's heap:
# with a split per thread, an unload's peak memory was 150-200 MB from run to run (the
# system allocator's: 120-130 MB, the same for 200,000 and 1,000,000 rows; CPU alike).
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

from cqlcodec.cli.codec_commands import UsageError, parse_hex, parse_value
from cqlcodec.cli.main import build_parser, main

__all__ = ["UsageError", "build_parser", "main", "parse_hex", "parse_value"]

if __name__ == "__main__":
    sys.exit(main())
