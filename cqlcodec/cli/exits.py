"""The exit statuses of ``python -m cqlcodec`` (scripts may rely on them)."""

from __future__ import annotations

from typing import Final

OK: Final = 0
"""Everything was done."""
FAILED: Final = 1
"""The command ran but did not finish its work: rows not written (load), a split that
could not be read (unload, count). What was done is kept (unload: use ``--resume``)."""
USAGE: Final = 2
"""Bad command line or bad value input (also every value-command error)."""
BAD_INPUT: Final = 3
"""Bad table input: unknown keyspace, table or column, a file that cannot be read, a
value that does not fit its column, an output directory that holds another unload."""
CONNECTION: Final = 4
"""No connection: no host reachable, authentication refused, SSL failure."""
MISSING_DEPENDENCY: Final = 5
"""An optional dependency is missing (pyarrow, a driver): the message says what to install."""
INTERRUPTED: Final = 130
"""Interrupted (Ctrl-C)."""
BROKEN_PIPE: Final = 141
"""stdout was closed by its reader (``| head``): 128 + SIGPIPE, as the shell reports a
tool that SIGPIPE ended; no summary line (the rows not read were not delivered)."""

DESCRIPTION: Final = """\
exit statuses: 0 done; 1 not all done (rows not written, a split failed: see the
message; unload --resume and copy --state DIR --resume continue); 2 bad command
line; 3 bad input (unknown keyspace/table/column, unreadable file, a value that does
not fit); 4 cannot connect or authenticate; 5 a missing optional dependency; 130
interrupted; 141 stdout closed by its reader (| head)."""
